"""The metric registry: one entry per metric, read by every assessment.

A :class:`Metric` says which per-item statistic it averages (a name in the counting layer's
table, :mod:`pbassess.counting.item_stats`, or a function registered there under the metric's
name), how the per-cell counts reduce to the sufficient statistics of its posterior family,
which region keys that reduction needs, its direction and whether it needs labels or full
probability vectors. Families and their sufficient statistics (variables of the Dataset a
reduction returns):

``"beta-binomial"``          ``successes``, ``trials``           Beta posterior of a rate
``"dirichlet-multinomial"``  ``counts`` (last dim ``category``)   Dirichlet posterior of shares
``"bayesian-bootstrap"``     ``n``, ``total``, ``sq_total``       posterior of a mean (Rubin)
``"binned-calibration"``     ``trials``, ``successes``,           Beta posterior of each confidence
                             ``score_sum`` (last dim ``bin``)     bin's accuracy -> the ECE

Reductions (``Metric.reduction``, a name below or a function of the count Dataset):

``"mean"``           the per-item statistic over the cell's items (labeled items when the
                     statistic needs labels, else all items)
``"per-true-class"`` one-vs-rest over true classes: correct / labeled per true class (TPR)
``"per-predicted-class"`` correct / labeled per predicted class (precision)
``"false-positive"`` per class c: items predicted c among labeled items whose class is not c
``"confusion-rows"`` Dirichlet over the true class within each predicted class
``"true-class-shares"`` Dirichlet over the true classes (prevalence)
``"confidence-bins"`` labeled items, correct items and summed confidence per confidence bin

Which tools compute a metric is the registry's to say too (``Metric.used_by``): ``"compare"``
(group and model comparisons, :mod:`pbassess.assess.compare` and ``pbassess compare --metric``)
and ``"shift"`` (the shift table's posteriors, :mod:`pbassess.shift`); :func:`metrics_used_by`
lists them, so no tool keeps its own list of metric names.

One-vs-rest reductions return a dim ``class``. Adding a metric is one :func:`register_metric`
call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from pbassess.counting import ItemStatistic, get_item_statistic, register_item_statistic
from pbassess.errors import ConfigError

__all__ = ["FAMILIES", "REDUCTIONS", "TOOLS", "Metric", "get_metric", "list_metrics", "metrics_used_by",
           "register_metric"]

FAMILIES = ("beta-binomial", "dirichlet-multinomial", "bayesian-bootstrap", "binned-calibration")
#: The tools that read metric names from the registry (``Metric.used_by``).
TOOLS = ("compare", "shift")
DIRECTIONS = ("higher", "lower", "zero", "none")


@dataclass(frozen=True)
class Metric:
    """One metric: its per-item statistic, reduction, posterior family and direction.

    Parameters
    ----------
    name : str
        Identifier (``get_metric(name)``).
    per_item : str, callable or None
        Name of a per-item statistic of the counting layer, or ``func(items) -> values``
        (registered there under the metric's name), or ``None`` when the reduction reads only
        counts (confusion-based metrics).
    reduction : str or callable
        A name in :data:`REDUCTIONS` or ``func(counts, metric) -> xarray.Dataset`` of the
        family's sufficient statistics.
    family : {"beta-binomial", "dirichlet-multinomial", "bayesian-bootstrap"}
    direction : {"higher", "lower", "zero", "none"}
        Which way is better ("zero": closest to zero; "none": descriptive).
    needs_labels : bool
    needs_probs : bool
    count_by : tuple of str
        Region keys the reduction needs beyond the caller's ``by``.
    bound : float
        Bound on ``|per-item value|`` for a callable ``per_item`` (see ItemStatistic).
    description : str
    used_by : tuple of str
        The tools in :data:`TOOLS` that compute this metric (``"compare"``, ``"shift"``).

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.counting import count_cells
    >>> top1 = Metric("top1", per_item="correct", reduction="mean", family="beta-binomial",
    ...               direction="higher", needs_labels=True)
    >>> p = Predictions.from_top1(["a", "a", "b", "b"], [0.9, 0.8, 0.7, 0.6], ["a", "b", "b", None])
    >>> s = top1.sufficient_statistics(count_cells(p, item_stats=["correct"]))
    >>> s["successes"].values.tolist(), s["trials"].values.tolist()  # per predicted class
    ([1, 1], [2, 1])
    """

    name: str
    per_item: Any
    reduction: Any
    family: str
    direction: str
    needs_labels: bool
    needs_probs: bool = False
    count_by: tuple[str, ...] = ()
    bound: float = 1024.0
    description: str = ""
    used_by: tuple[str, ...] = ()

    @property
    def item_statistic(self) -> ItemStatistic | None:
        """The counting layer's per-item statistic of this metric (``None`` for count-only metrics)."""
        return None if self.per_item is None else get_item_statistic(self.per_item)

    def sufficient_statistics(self, counts: Any) -> Any:
        """Reduce a ``count_cells`` Dataset to this family's sufficient statistics."""
        reduce = REDUCTIONS[self.reduction] if isinstance(self.reduction, str) else self.reduction
        return reduce(counts, self)


# ------------------------------------------------------------------ reductions
def _mean(counts: Any, metric: Metric) -> Any:
    import xarray as xr

    stat = metric.item_statistic
    n = counts["n"] if stat.needs_labels else counts["n_pool"]
    total = counts[f"{stat.name}_sum"]
    if metric.family == "beta-binomial":
        return xr.Dataset({"successes": np.rint(total).astype(np.int64), "trials": n})
    return xr.Dataset({"n": n, "total": total, "sq_total": counts[f"{stat.name}_sq_sum"]})


def _per_class(dim: str) -> Callable[[Any, Metric], Any]:
    def reduce(counts: Any, metric: Metric) -> Any:
        import xarray as xr

        out = xr.Dataset({"successes": counts["correct"], "trials": counts["n"]})
        return out.rename({dim: "class"})

    return reduce


def _false_positive(counts: Any, metric: Metric) -> Any:
    import xarray as xr

    n = counts["n"]
    k = n.sizes["true"]
    diagonal = xr.DataArray(np.eye(k, dtype=bool), dims=("predicted", "true"))
    predicted_as = n.where(~diagonal, 0).sum("true")          # predicted c, true class not c
    negatives = n.sum(("predicted", "true")) - n.sum("predicted").rename({"true": "predicted"})
    out = xr.Dataset({"successes": predicted_as, "trials": negatives})
    return out.rename({"predicted": "class"})


def _confusion_rows(counts: Any, metric: Metric) -> Any:
    import xarray as xr

    return xr.Dataset({"counts": counts["n"].rename({"true": "category"})})


def _true_shares(counts: Any, metric: Metric) -> Any:
    import xarray as xr

    return xr.Dataset({"counts": counts["n"].rename({"true": "category"})})


def _confidence_bins(counts: Any, metric: Metric) -> Any:
    import xarray as xr

    return xr.Dataset({"trials": counts["n"], "successes": counts["correct"], "score_sum": counts["score_sum"]})


REDUCTIONS: dict[str, Callable[[Any, Metric], Any]] = {
    "mean": _mean,
    "per-true-class": _per_class("true"),
    "per-predicted-class": _per_class("predicted"),
    "false-positive": _false_positive,
    "confusion-rows": _confusion_rows,
    "true-class-shares": _true_shares,
    "confidence-bins": _confidence_bins,
}

_REDUCTION_KEYS = {"per-true-class": ("true",), "per-predicted-class": ("predicted",),
                   "false-positive": ("predicted", "true"), "confusion-rows": ("predicted", "true"),
                   "true-class-shares": ("true",), "confidence-bins": ("bin",)}

_METRICS: dict[str, Metric] = {}


def register_metric(metric: Metric, *, overwrite: bool = False) -> Metric:
    """Add a metric to the registry (and its per-item function to the counting layer).

    Parameters
    ----------
    metric : Metric
    overwrite : bool
        Replace a metric of the same name (else that is an error).

    Returns
    -------
    Metric
        ``metric`` itself.

    Examples
    --------
    >>> m = register_metric(Metric("overconfidence", lambda it: np.maximum(it["confidence"] - it["correct"], 0),
    ...                            "mean", "bayesian-bootstrap", "lower", needs_labels=True, bound=1.0),
    ...                     overwrite=True)
    >>> get_metric("overconfidence").item_statistic.needs_labels
    True
    """
    if metric.family not in FAMILIES:
        raise ConfigError(f"unknown posterior family {metric.family!r} (choose {', '.join(FAMILIES)})")
    unknown = [t for t in metric.used_by if t not in TOOLS]
    if unknown:
        raise ConfigError(f"unknown tool {unknown[0]!r} in used_by (choose from {', '.join(TOOLS)})")
    if metric.direction not in DIRECTIONS:
        raise ConfigError(f"unknown direction {metric.direction!r} (choose {', '.join(DIRECTIONS)})")
    if isinstance(metric.reduction, str) and metric.reduction not in REDUCTIONS:
        raise ConfigError(f"unknown reduction {metric.reduction!r} (choose {', '.join(REDUCTIONS)})")
    if metric.name in _METRICS and not overwrite and _METRICS[metric.name] != metric:
        raise ConfigError(f"a metric named {metric.name!r} is already registered")
    if callable(metric.per_item):
        register_item_statistic(ItemStatistic(metric.name, metric.per_item, metric.needs_labels, metric.needs_probs,
                                              metric.bound, metric.description), overwrite=overwrite)
        metric = replace(metric, per_item=metric.name)
    elif metric.per_item is not None:
        get_item_statistic(metric.per_item)  # raises for an unknown name
    if isinstance(metric.reduction, str) and not metric.count_by:
        metric = replace(metric, count_by=_REDUCTION_KEYS.get(metric.reduction, ()))
    _METRICS[metric.name] = metric
    return metric


def get_metric(name: str | Metric) -> Metric:
    """The registered metric called ``name`` (a Metric is returned as is).

    Parameters
    ----------
    name : str or Metric
        A registered name (:func:`list_metrics`), or a Metric.

    Returns
    -------
    Metric

    Examples
    --------
    >>> m = get_metric("nll")
    >>> m.family, m.direction, m.needs_probs
    ('bayesian-bootstrap', 'lower', True)
    """
    if isinstance(name, Metric):
        return name
    try:
        return _METRICS[str(name).replace("-", "_")]
    except KeyError:
        raise ConfigError(f"unknown metric {name!r} (available: {', '.join(sorted(_METRICS))})") from None


def list_metrics(family: str | None = None) -> list[str]:
    """Names of the registered metrics, optionally of one posterior family.

    Parameters
    ----------
    family : {"beta-binomial", "dirichlet-multinomial", "bayesian-bootstrap", "binned-calibration"}, optional
        Only the metrics of this posterior family.

    Returns
    -------
    list of str

    Examples
    --------
    >>> list_metrics("beta-binomial")
    ['accuracy', 'error_rate', 'fpr', 'precision', 'tpr']
    """
    return sorted(m.name for m in _METRICS.values() if family is None or m.family == family)


def metrics_used_by(tool: str) -> tuple[str, ...]:
    """The metrics a tool computes, in registration order (its ``--metric`` choices).

    Parameters
    ----------
    tool : {"compare", "shift"}

    Returns
    -------
    tuple of str

    Examples
    --------
    >>> metrics_used_by("compare")
    ('accuracy', 'tpr', 'fpr', 'calibration_bias', 'ece')
    >>> metrics_used_by("shift")
    ('accuracy', 'nll', 'brier', 'ece')
    """
    if tool not in TOOLS:
        raise ConfigError(f"unknown tool {tool!r} (choose from {', '.join(TOOLS)})")
    return tuple(m.name for m in _METRICS.values() if tool in m.used_by)


_BUILTIN = (
    Metric("accuracy", "correct", "mean", "beta-binomial", "higher", True,
           description="share of labeled items whose top-1 prediction is right", used_by=("compare", "shift")),
    Metric("error_rate", "error", "mean", "beta-binomial", "lower", True,
           description="share of labeled items whose top-1 prediction is wrong"),
    Metric("tpr", "correct", "per-true-class", "beta-binomial", "higher", True,
           description="true-positive rate (recall) of each class, one vs rest", used_by=("compare",)),
    Metric("fpr", None, "false-positive", "beta-binomial", "lower", True,
           description="false-positive rate of each class: predicted c among items not of class c",
           used_by=("compare",)),
    Metric("precision", "correct", "per-predicted-class", "beta-binomial", "higher", True,
           description="share of items predicted as each class that belong to it"),
    Metric("calibration_bias", "calibration_bias", "mean", "bayesian-bootstrap", "zero", True,
           description="mean confidence minus accuracy (positive = over-confident)", used_by=("compare",)),
    Metric("nll", "nll", "mean", "bayesian-bootstrap", "lower", True, needs_probs=True,
           description="mean negative log-likelihood of the true class (probabilities floored at 1e-8)",
           used_by=("shift",)),
    Metric("brier", "brier", "mean", "bayesian-bootstrap", "lower", True, needs_probs=True,
           description="mean Brier score: sum of squared differences to the one-hot label", used_by=("shift",)),
    Metric("entropy", "entropy", "mean", "bayesian-bootstrap", "none", False, needs_probs=True,
           description="mean predictive entropy (nats)"),
    Metric("confidence", "confidence", "mean", "bayesian-bootstrap", "none", False,
           description="mean probability of the predicted class"),
    Metric("confusion", None, "confusion-rows", "dirichlet-multinomial", "none", True,
           description="distribution of the true class within each predicted class"),
    Metric("class_prevalence", None, "true-class-shares", "dirichlet-multinomial", "none", True,
           description="distribution of the true classes among labeled items"),
    Metric("ece", None, "confidence-bins", "binned-calibration", "lower", True,
           description="expected calibration error: bin-weighted |accuracy - mean confidence| over confidence bins",
           used_by=("compare", "shift")),
)

for _metric in _BUILTIN:
    register_metric(_metric)
