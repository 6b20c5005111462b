"""Per-item statistics and the regions they are averaged over (the estimation layer's counting).

A metric that is the mean of a per-item statistic has two faces for estimation with few
labels: the **observed** value of the statistic on a labeled item (it needs the true label)
and the model's **predicted** value of the same statistic (its expectation under the model's
own probabilities, which needs no label). Prediction-powered inference uses the predicted
values of all items to shrink the variance of the mean of the observed ones; the Bayesian
estimate uses them (through the mean confidence) as the centre of its prior.

==========  ===================================================  ===============================
metric      observed on a labeled item                           predicted by the model
==========  ===================================================  ===============================
accuracy    1 if the prediction is right, else 0                 the top-1 confidence c
error       1 - correct                                          1 - c
brier       top-1 form: (c - correct)^2; full probabilities:     c (1 - c), resp. 1 - sum_k p_k^2
            sum_k (p_k - [y = k])^2
nll         -log p_y (full probabilities only)                   the entropy -sum_k p_k log p_k
==========  ===================================================  ===============================

:func:`item_statistic` resolves a name, a :class:`MeanEstimand`, a callable (observed values
only) or, when COUNT's registry :mod:`pbassess.metrics` exists, a registered metric name.
:func:`region_codes` is the single place that turns ``by=`` into integer region codes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from pbassess.data.predictions import Predictions
from pbassess.errors import ConfigError, DataError

__all__ = ["BUILTIN_STATISTICS", "MeanEstimand", "item_statistic", "region_codes"]

_EPS = 1e-12


@dataclass(frozen=True)
class MeanEstimand:
    """What :func:`~pbassess.estimation.estimate` estimates: the mean of a per-item statistic, with its two faces.

    The statistic's **observed** value on a labeled item and the model's **predicted** value of
    it on every item (the pair prediction-powered inference needs). Not the counting layer's
    :class:`pbassess.counting.ItemStatistic`, a per-item function summed per cell; this one
    was also called ``ItemStatistic`` before.

    Parameters
    ----------
    name, observed, predicted, bounded
        The attributes below.

    Attributes
    ----------
    name : str
    observed : callable
        ``observed(preds, index) -> ndarray``: the statistic of the items ``index`` (all labeled).
    predicted : callable or None
        ``predicted(preds) -> ndarray``: the model's own expectation of the statistic for every
        item (no labels needed); ``None`` when the model offers none (then only the classical
        interval is available).
    bounded : bool
        Whether the statistic is 0/1 valued (Wilson, Clopper-Pearson and the Beta-binomial
        Bayesian estimate apply).

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_top1(["a", "b"], [0.9, 0.6], ["a", "a"])
    >>> stat = item_statistic("accuracy")
    >>> stat.observed(p, np.arange(2)).tolist(), stat.predicted(p).tolist()
    ([1.0, 0.0], [0.9, 0.6])
    """

    name: str
    observed: Callable[[Predictions, np.ndarray], np.ndarray]
    predicted: Callable[[Predictions], np.ndarray] | None = None
    bounded: bool = False


def _correct(p: Predictions, idx: np.ndarray) -> np.ndarray:
    return (p.labels[idx] == p.predicted[idx]).astype(float)


def _brier_observed(p: Predictions, idx: np.ndarray) -> np.ndarray:
    if p.probs is None:
        return (np.asarray(p.confidence)[idx] - _correct(p, idx)) ** 2
    probs = np.asarray(p.probs)[idx]
    onehot = np.zeros_like(probs)
    onehot[np.arange(idx.size), p.labels[idx]] = 1.0
    return ((probs - onehot) ** 2).sum(axis=1)


def _brier_predicted(p: Predictions) -> np.ndarray:
    if p.probs is None:
        c = np.asarray(p.confidence, dtype=float)
        return c * (1.0 - c)
    probs = np.asarray(p.probs, dtype=float)
    return 1.0 - (probs**2).sum(axis=1)


def _nll_observed(p: Predictions, idx: np.ndarray) -> np.ndarray:
    p.require_probs("the nll metric")
    return -np.log(np.clip(np.asarray(p.probs)[idx, p.labels[idx]], _EPS, 1.0))


def _nll_predicted(p: Predictions) -> np.ndarray:
    p.require_probs("the nll metric")
    probs = np.clip(np.asarray(p.probs, dtype=float), _EPS, 1.0)
    return -(probs * np.log(probs)).sum(axis=1)


#: Statistics known without the metric registry.
BUILTIN_STATISTICS: dict[str, MeanEstimand] = {
    "accuracy": MeanEstimand("accuracy", _correct, lambda p: np.asarray(p.confidence, dtype=float), bounded=True),
    "error": MeanEstimand("error", lambda p, i: 1.0 - _correct(p, i),
                           lambda p: 1.0 - np.asarray(p.confidence, dtype=float), bounded=True),
    "brier": MeanEstimand("brier", _brier_observed, _brier_predicted),
    "nll": MeanEstimand("nll", _nll_observed, _nll_predicted),
}


def _item_dict(p: Predictions, idx: np.ndarray) -> dict[str, np.ndarray]:
    """The counting layer's item block (see :mod:`pbassess.counting.item_stats`) for items ``idx``."""
    block = {"predicted": p.predicted[idx], "confidence": np.asarray(p.confidence, dtype=float)[idx],
             "label": p.labels[idx], "correct": (p.labels[idx] == p.predicted[idx])}
    if p.probs is not None:
        block["probs"] = np.asarray(p.probs, dtype=float)[idx]
    return block


#: The model's own expectation of the counting layer's per-item statistics that have one.
_PREDICTED_OF = {"correct": "accuracy", "error": "error", "brier": "brier", "nll": "nll"}


def _from_registry(name: str) -> MeanEstimand | None:
    """A registered metric of :mod:`pbassess.metrics` (COUNT) that is the mean of a per-item statistic."""
    try:
        from pbassess.metrics import get_metric
    except ImportError:
        return None
    try:
        metric = get_metric(name)
    except Exception:  # noqa: BLE001 - an unknown name is reported by the caller
        return None
    stat = getattr(metric, "item_statistic", None)
    if stat is None or metric.reduction != "mean":
        raise ConfigError(f"metric {name!r} is not the mean of a per-item statistic; estimation needs one")
    if not stat.needs_labels:
        raise ConfigError(f"metric {name!r} needs no labels; its value is known from the predictions alone")
    twin = _PREDICTED_OF.get(stat.name)
    predicted = BUILTIN_STATISTICS[twin].predicted if twin else None
    return MeanEstimand(name, lambda p, idx: np.asarray(stat.func(_item_dict(p, idx)), dtype=float), predicted,
                         bounded=metric.family == "beta-binomial")


def item_statistic(metric: Any) -> MeanEstimand:
    """Resolve ``metric`` (a name, a :class:`MeanEstimand` or a callable) to the estimand.

    A plain callable ``f(preds, index) -> values`` gives the observed statistic only.

    Parameters
    ----------
    metric : str, MeanEstimand or callable
        ``accuracy``, ``error``, ``brier``, ``nll``, a registered name, an estimand, or
        ``f(preds, index) -> values``.

    Returns
    -------
    MeanEstimand

    Examples
    --------
    >>> item_statistic("brier").name
    'brier'
    >>> item_statistic(lambda p, i: np.ones(len(i))).predicted is None
    True
    """
    if isinstance(metric, MeanEstimand):
        return metric
    if callable(metric):
        return MeanEstimand(getattr(metric, "__name__", "custom"), metric)
    name = str(metric)
    if name in BUILTIN_STATISTICS:
        return BUILTIN_STATISTICS[name]
    found = _from_registry(name)
    if found is None:
        raise ConfigError(f"unknown metric {name!r} for estimation (choose from {', '.join(BUILTIN_STATISTICS)} "
                          "or a registered per-item metric)")
    return found


def region_codes(preds: Predictions, by: str | None) -> tuple[np.ndarray, list[str]]:
    """Integer region code per item and the region names, for ``by`` = None, ``"predicted"`` or a column.

    Parameters
    ----------
    preds : Predictions
    by : str or None
        ``None`` (one region: the whole pool), ``"predicted"`` or a group column.

    Returns
    -------
    codes : ndarray of int, shape (N,)
    names : list of str

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_top1(["a", "b", "a"], [0.9, 0.6, 0.7], groups={"sex": ["f", "m", "m"]})
    >>> codes, names = region_codes(p, "sex")
    >>> codes.tolist(), names
    ([0, 1, 1], ['f', 'm'])
    >>> region_codes(p, "predicted")[1]
    ['a', 'b']
    """
    if by is None or by == "all":
        return np.zeros(preds.n_items, dtype=np.int64), ["all"]
    if by == "predicted":
        used = np.unique(preds.predicted)
        codes = np.searchsorted(used, preds.predicted)
        return codes.astype(np.int64), [preds.classes[k] for k in used]
    if by == "true":
        raise ConfigError("estimation regions must be known without labels: use 'predicted' or a group column")
    values = np.asarray(preds.group(by)).astype(str)
    names, codes = np.unique(values, return_inverse=True)
    if names.size == 0:
        raise DataError(f"group column {by!r} is empty")
    return codes.astype(np.int64), [str(n) for n in names]
