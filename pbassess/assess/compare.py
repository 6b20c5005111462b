"""Posterior comparisons of a metric between groups, or between models on the same items.

Metrics (per group, or per model):

* ``accuracy``: P(prediction correct), Beta-binomial on the labeled items;
* ``tpr``: P(predict positive | truly positive), Beta-binomial on labeled positives (binary);
* ``fpr``: P(predict positive | truly negative), Beta-binomial on labeled negatives (binary);
* ``calibration-bias``: mean confidence of the group's pool (labeled or not) minus accuracy
  (positive = over-confident);
* ``ece``: expected calibration error from a Beta posterior per equal-width confidence bin,
  weighted by the pool's bin shares (as :func:`pbassess.stats.ece_from_draws`).

For two groups the difference ``a - b`` is summarised by its posterior mean and HDI, by
``P(a - b > 0)`` and by the ROPE probabilities ``[P(d < -r), P(-r <= d <= r), P(d > r)]`` for a
user-given region of practical equivalence ``r``; for many groups every pair is compared.

Groups are disjoint sets of items, so their posteriors are independent
(:class:`~pbassess.pymc_models.accuracy.GroupComparisonSpec`). Two *models* scored on the same
items are not: their errors are correlated, and comparing independent Beta posteriors would
overstate the uncertainty of the difference. :func:`compare_models` therefore uses a **paired
model** (:class:`~pbassess.pymc_models.comparison.PairedComparisonSpec`): per labeled item the
joint outcome of the M models (for two: both right, only A right, only B right, both wrong) is
one draw of a categorical distribution with probabilities ``pi ~ Dirichlet(pc / 2**M, ...)``
(pc = pseudocount, so each model's marginal prior is the project's uniform Beta(pc/2, pc/2) and
each pair's four outcomes are Dirichlet(pc/4 x 4)); the posterior is Dirichlet(pc / 2**M +
counts) and ``acc_A - acc_B = pi(only A right) - pi(only B right)``. TPR and FPR are paired the
same way on the labeled positives / negatives with "predicts positive" as the outcome. ECE
differences between models use independent per-model bin posteriors (the bins differ between
models).

Both functions go through :func:`pbassess.inference.fit`: the default inference is the exact
conjugate one (Beta and Dirichlet draws, no MCMC), ``inference="nuts"`` samples the same model
with NUTS; ``draws`` is posterior draws per chain in both (4 chains). Every result is the fit
layer's DataTree (per-item log-likelihood, prior, log prior, observed and constant data;
diagnostics for NUTS) and ``result.loo()`` is the exact leave-one-item-out ELPD.

ROPE statistics live in :mod:`pbassess.assess.rope`; :func:`simulate_rope_labeling`
(:mod:`pbassess.assess.rope_labeling`) measures how many labels a two-group comparison needs before
its ROPE decision matches the full-data decision, when labels are acquired at random or
actively (label the group whose next label is expected to move the ROPE probabilities most).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from pbassess.assess._common import as_pool, check_options
from pbassess.assess.rope import (
    DECISIONS,
    check_rope,
    rope_decision,
    rope_probabilities,
    rope_probabilities_beta,
)
from pbassess.assess.rope_labeling import (
    RopeLabelingSimulation,
    active_rope_scores,
    simulate_rope_labeling,
)
from pbassess.constants import CI_PROB, DEFAULT_BINS, DEFAULT_PSEUDOCOUNT
from pbassess.counting.core import cell_counts
from pbassess.errors import ConfigError, DataError
from pbassess.inference import fit
from pbassess.metrics.registry import metrics_used_by
from pbassess.pymc_models.accuracy import BetaBernoulliSpec, GroupComparisonSpec
from pbassess.pymc_models.comparison import MAX_MODELS, PairedComparisonSpec, joint_outcome_index
from pbassess.pymc_models.priors import is_pymc_prior
from pbassess.results.compare import ComparisonResult
from pbassess.stats import as_generator, bin_edges

__all__ = [
    "DECISIONS", "METRICS", "ComparisonResult", "RopeLabelingSimulation", "active_rope_scores", "compare_groups",
    "compare_models", "rope_decision", "rope_probabilities", "rope_probabilities_beta", "simulate_rope_labeling",
]

#: The metrics a comparison computes, as the metric registry lists them (``Metric.used_by``), spelled with
#: hyphens as on the command line.
METRICS = tuple(name.replace("_", "-") for name in metrics_used_by("compare"))
_ALIASES = {"bias": "calibration-bias", "calibration_bias": "calibration-bias", "acc": "accuracy"}
#: The joint outcomes of a pair of models, in the order of ``counts["joint"]``.
OUTCOMES = ("both", "only_a", "only_b", "neither")


def _metric_name(metric: str) -> str:
    m = _ALIASES.get(str(metric).lower(), str(metric).lower())
    if m not in METRICS:
        raise ConfigError(f"unknown metric {metric!r} (choose from {', '.join(METRICS)})")
    return m


# ---------------------------------------------------------------------------- counts
def pair_list(names: Sequence[str]) -> list[tuple[int, int]]:
    """Every pair (i, j), i < j."""
    return list(itertools.combinations(range(len(names)), 2))


def beta_prior_params(prior: str, pseudocount: float, mean: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Beta(pc/2, pc/2) (uniform) or Beta(pc s, pc (1 - s)) (informed, s clipped to [0.001, 0.999])."""
    pc = float(pseudocount)
    if not np.isfinite(pc) or pc <= 0:
        raise ConfigError(f"the pseudocount must be positive, got {pseudocount}")
    if prior == "uniform":
        return np.full(mean.shape, pc / 2), np.full(mean.shape, pc / 2)
    if prior == "informed":
        s = np.clip(mean, 1e-3, 1 - 1e-3)
        return pc * s, pc * (1 - s)
    raise ConfigError(f"unknown prior {prior!r} (choose 'uniform' or 'informed')")


def _select(cells: xr.Dataset, dim: str, names: Sequence[str]) -> xr.Dataset:
    index = {str(v): i for i, v in enumerate(cells[dim].to_numpy().tolist())}
    missing = [g for g in names if g not in index]
    if missing:
        raise DataError(f"group column {dim!r} has no value {missing[0]!r} (values: {', '.join(list(index)[:8])})")
    return cells.isel({dim: [index[g] for g in names]})


def group_names(preds: Any, by: str) -> list[str]:
    """The distinct values of group column ``by`` (sorted, as text)."""
    from pbassess.counting import count_cells

    if by not in preds.groups:
        preds.group(by)  # the data layer's one-line error for an unknown column
    return [str(v) for v in count_cells(preds, (by,))[by].to_numpy().tolist()]


def group_cells(preds: Any, by: str, names: Sequence[str], metric: str) -> dict[str, np.ndarray]:
    """Trials ``n``, successes ``k``, prior mean, pool size and mean confidence per group (count_cells only)."""
    from pbassess.counting import count_cells

    pool = _select(count_cells(preds, (by,)), by, names)
    n_items = pool["n_pool"].to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = np.where(n_items > 0, pool["score_sum_pool"].to_numpy() / np.maximum(n_items, 1), 0.5)
    out = {"n_items": n_items, "mean_conf": mean_conf}
    if metric in ("accuracy", "calibration-bias"):
        return {**out, "n": pool["n"].to_numpy(), "k": pool["correct"].to_numpy(), "prior_mean": mean_conf}
    if preds.n_classes != 2:
        raise DataError(f"TPR/FPR need a binary classifier, but {preds.name!r} has {preds.n_classes} classes")
    truth = _select(count_cells(preds, (by, "true")), by, names)
    by_pred = _select(count_cells(preds, (by, "predicted")), by, names)
    ssp, npl = by_pred["score_sum_pool"].to_numpy(), by_pred["n_pool"].to_numpy()
    # s = P(positive) per item: the confidence when predicted positive, 1 - confidence otherwise.
    pos_score, neg_score = ssp[:, 1], npl[:, 0] - ssp[:, 0]
    if metric == "tpr":
        n, k = truth["n"].to_numpy()[:, 1], truth["correct"].to_numpy()[:, 1]
        num, den = pos_score, pos_score + neg_score
    else:
        n = truth["n"].to_numpy()[:, 0]
        k = n - truth["correct"].to_numpy()[:, 0]
        num, den = npl[:, 1] - ssp[:, 1], (npl[:, 1] - ssp[:, 1]) + ssp[:, 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        prior_mean = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.5)
    return {**out, "n": n, "k": k, "prior_mean": prior_mean}


# ---------------------------------------------------------------------------- groups
def compare_groups(
    preds: Any,
    by: str,
    *,
    metric: str = "accuracy",
    rope: float = 0.0,
    groups: Sequence[str] | None = None,
    prior: str = "uniform",
    pseudocount: float = DEFAULT_PSEUDOCOUNT,
    bins: int = DEFAULT_BINS,
    ci_prob: float = CI_PROB,
    seed: Any = None,
    inference: str | None = None,
    sample_kwargs: Mapping[str, Any] | None = None,
    draws: int | None = None,
) -> ComparisonResult:
    r"""Posterior of a metric per group and of the difference between every pair of groups.

    Parameters
    ----------
    preds : Predictions, pandas.DataFrame or arrays
        The pool (anything :func:`pbassess.data.as_predictions` accepts); labeled items inform the
        metric, all items the pool weights (ECE) and mean confidence (calibration bias).
    by : str
        The group column (e.g. ``"sex"``).
    metric : {"accuracy", "tpr", "fpr", "calibration-bias", "ece"}
    rope : float, default 0
        Half-width r of the region of practical equivalence of the difference.
    groups : sequence of str, optional
        The groups to compare, in this order (default: all values, sorted).
    prior : {"uniform", "informed"}, callable or dict
        Beta(pc/2, pc/2), or Beta(pc s, pc (1 - s)) with s the group's score-implied metric; or a
        user's PyMC prior of the per-group rate (dims ``cell``; see
        :mod:`pbassess.pymc_models.priors`), which needs ``inference="nuts"``.
    pseudocount : float
        Prior strength pc.
    bins : int
        Equal-width confidence bins for ``ece``.
    ci_prob : float
        Credible mass of the HDIs.
    seed : int or Generator, optional
        Every random draw derives from it.
    inference : {"conjugate", "nuts"}
        Exact Beta draws (default) or NUTS on the same model (:func:`pbassess.inference.fit`).
    sample_kwargs : dict, optional
        ``pm.sample`` options for NUTS (see :func:`pbassess.inference.merge_sample_kwargs`).
    draws : int, optional
        Posterior draws per chain (4 chains), in both inferences (default 1000).

    Returns
    -------
    ComparisonResult

    Notes
    -----
    Group :math:`g` has :math:`y_g` successes of the metric in :math:`n_g` trials (correct labeled
    items for accuracy, true positives among the positives for ``tpr``, ...):

    .. math::

       \theta_g \sim \mathrm{Beta}(\alpha_g, \beta_g), \qquad
       y_g \mid \theta_g \sim \mathrm{Binomial}(n_g, \theta_g), \qquad
       \Delta_{ab} = \theta_a - \theta_b,

    and each pair reports
    :math:`\big(P(\Delta_{ab} < -r),\; P(\lvert\Delta_{ab}\rvert \le r),\; P(\Delta_{ab} > r)\big)`
    for the ROPE half-width :math:`r` (``rope``). ``prior="uniform"`` sets
    :math:`\alpha_g = \beta_g = c/2`. For ``calibration-bias`` the compared value is
    :math:`\bar s_g - \theta_g` (:math:`\bar s_g` the group's mean confidence, :math:`\theta_g`
    its accuracy); for ``ece`` it is :math:`\sum_b w_{gb} \lvert \theta_{gb} - s_{gb} \rvert`
    over the group's confidence bins, as in :func:`assess_calibration`.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_binary_scores([0.9, 0.8, 0.2, 0.7, 0.1, 0.6], [1, 1, 0, 0, 0, 1],
    ...                                    groups={"sex": ["F", "F", "F", "M", "M", "M"]})
    >>> r = compare_groups(p, "sex", rope=0.05, seed=0)
    >>> out = r.to_json()
    >>> out["groups"], out["pairs"][0]["a"], len(out["pairs"][0]["rope"])
    (['F', 'M'], 'F', 3)
    """
    metric = _metric_name(metric)
    rope = check_rope(rope)
    inference, n_draws, ci_prob, kwargs = check_options(inference, draws, ci_prob, sample_kwargs)
    preds = as_pool(preds)
    rng = as_generator(seed)
    present = group_names(preds, by)
    names = [str(g) for g in groups] if groups is not None else present
    missing = [g for g in names if g not in present]
    if missing:
        raise DataError(f"group column {by!r} has no value {missing[0]!r} (values: {', '.join(present[:8])})")
    if len(names) < 2:
        raise DataError(f"group column {by!r} needs at least two groups to compare, got {len(names)}")
    if preds.n_labeled == 0:
        raise DataError("the comparison needs labels, but no item is labeled")
    cells = group_cells(preds, by, names, "accuracy" if metric == "ece" else metric)
    user_prior = prior if is_pymc_prior(prior) else None
    if user_prior is not None and (inference != "nuts" or metric == "ece"):
        raise ConfigError("a PyMC prior (callable or dict) needs inference='nuts' and a rate metric (not ece)")
    pairs = pair_list(names)
    if metric == "ece":
        spec, n, k = _group_ece_spec(preds, by, names, bins, prior, pseudocount, pairs)
    else:
        n, k = cells["n"], cells["k"]
        alpha, beta = beta_prior_params("uniform" if user_prior else prior, pseudocount, cells["prior_mean"])
        rates = BetaBernoulliSpec(n, k, alpha, beta, dim="cell", coords=names, user_prior=user_prior,
                                  observations=_group_observations(preds, by, names, metric))
        spec = GroupComparisonSpec(rates, names, pairs,
                                   offset=cells["mean_conf"] if metric == "calibration-bias" else None)
    fitted = fit(spec, inference=inference, draws=n_draws, seed=rng, sample_kwargs=kwargs)
    return _result_from_fit(
        fitted, spec, {"n": n, "successes": k, "n_items": cells["n_items"]}, metric=metric, rope=rope,
        prior={"kind": "pymc" if user_prior else prior, "pseudocount": pseudocount},
        data_summary={**preds.describe(), "by": by}, ci_prob=ci_prob,
        options={"by": by, "mode": "groups", "bins": bins, "draws": n_draws},
    )


def _group_observations(preds: Any, by: str, names: Sequence[str], metric: str, *, bins: np.ndarray | None = None):
    """Each labeled item's cell (its group, or group x bin) and success for ``metric``, or None (lazy pool)."""
    from pbassess.counting import assign_bins
    from pbassess.inference import Observations

    def cells(p: Any):
        index = {name: i for i, name in enumerate(names)}
        cell = np.array([index.get(str(v), -1) for v in p.group(by)], dtype=np.int64)
        if bins is not None:
            cell = np.where(cell >= 0, cell * (bins.size - 1) + assign_bins(p.confidence, bins), -1)
        if metric in ("tpr", "fpr"):  # trials: the labeled positives (TPR) or negatives (FPR)
            cell = np.where(p.labels == (1 if metric == "tpr" else 0), cell, -1)
            return cell, p.predicted == 1
        return cell, p.correct

    return Observations.of_pool(preds, cells)


def _group_ece_spec(preds: Any, by: str, names: Sequence[str], bins: int, prior: str, pseudocount: float,
                    pairs: list[tuple[int, int]]):
    """The ECE comparison: Beta cells per group x bin, each group's ECE derived from its cells."""
    from pbassess.counting import count_cells

    edges = bin_edges(bins=bins)
    table = count_cells(preds, (by, "bin"), bin_edges=edges)
    index = {str(v): i for i, v in enumerate(table[by].to_numpy().tolist())}
    table = table.isel({by: [index[g] for g in names]})
    n, k = table["n"].to_numpy(), table["correct"].to_numpy()
    pool, ssum = table["n_pool"].to_numpy(), table["score_sum_pool"].to_numpy()
    centre = (edges[:-1] + edges[1:]) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(pool > 0, ssum / np.maximum(pool, 1), centre)
    weights = pool / np.maximum(pool.sum(axis=1, keepdims=True), 1)
    alpha, beta = beta_prior_params(prior, pseudocount, score.ravel())
    labels = [f"{g} bin {b}" for g in names for b in range(edges.size - 1)]
    cells = BetaBernoulliSpec(n.ravel(), k.ravel(), alpha, beta, dim="cell", coords=labels,
                              observations=_group_observations(preds, by, names, "ece", bins=edges))
    return GroupComparisonSpec(cells, names, pairs, ece={"weight": weights, "score": score}), n.sum(axis=1), k.sum(axis=1)


def _result_from_fit(fitted: Any, spec: Any, counts: dict[str, Any], *, metric: str, rope: float,
                     prior: dict[str, Any], data_summary: dict[str, Any], ci_prob: float,
                     options: dict[str, Any], extra: Mapping[str, xr.DataArray] | None = None) -> ComparisonResult:
    """A ComparisonResult over the fit layer's DataTree (its ``value`` and ``difference``, pair labels added)."""
    names, pairs = spec.groups, spec.pairs
    posterior = fitted.idata["posterior"].to_dataset()[["value", "difference"]]
    count_ds = xr.Dataset({key: ("group", np.asarray(v)) for key, v in counts.items()}, coords={"group": names})
    # which groups each pair compares (kept beside the counts: non-index coordinates on the posterior
    # would stop az.summary from stacking its variables)
    count_ds["pair_a"] = xr.DataArray([names[i] for i, _ in pairs], dims="pair", coords={"pair": spec.pair_labels})
    count_ds["pair_b"] = xr.DataArray([names[j] for _, j in pairs], dims="pair", coords={"pair": spec.pair_labels})
    for key, value in (extra or {}).items():
        count_ds[key] = value
    return ComparisonResult(posterior, count_ds, prior=prior, data_summary=data_summary, inference=fitted.inference,
                            ci_prob=ci_prob, idata=fitted.idata, diagnostics=fitted.diagnostics,
                            options={"metric": metric, "rope": rope, **options}, model=fitted.sampled_model)


# ---------------------------------------------------------------------------- models
def _paired_indicators(pred: Any, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """(relevant labeled items mask, per-item success indicator) of one model."""
    if metric in ("accuracy", "calibration-bias", "ece"):
        return np.asarray(pred.labeled, dtype=bool), np.asarray(pred.correct, dtype=bool)
    truth = 1 if metric == "tpr" else 0
    if pred.n_classes != 2:
        raise DataError(f"TPR/FPR need a binary classifier, but {pred.name!r} has {pred.n_classes} classes")
    return np.asarray(pred.labeled & (pred.labels == truth), dtype=bool), np.asarray(pred.predicted == 1, dtype=bool)


def _check_same_items(names: list[str], preds: list[Any]) -> None:
    if len(preds) < 2:
        raise DataError(f"comparing models needs at least two, got {len(preds)}")
    if len(preds) > MAX_MODELS:
        raise ConfigError(f"the paired model compares at most {MAX_MODELS} models at once ({2**MAX_MODELS:,} joint "
                          f"outcomes), got {len(preds)}: compare fewer models at a time")
    if len(set(names)) != len(names):
        raise DataError("model names must be unique")
    ref = preds[0]
    for name, p in zip(names[1:], preds[1:], strict=True):
        if p.n_items != ref.n_items or not np.array_equal(p.item_ids, ref.item_ids):
            raise DataError(f"model {name!r} is not scored on the same items as {names[0]!r} (item ids differ)")
        if not np.array_equal(p.labels, ref.labels):
            raise DataError(f"model {name!r} has different labels from {names[0]!r} on the same items")


def _item_ids(pred: Any) -> np.ndarray:
    try:
        return np.asarray(pred.item_ids)
    except KeyError:
        return np.arange(pred.n_items)


def _paired_spec(preds: list[Any], sel: np.ndarray, metric: str, pc: float, names: list[str],
                 pairs: list[tuple[int, int]]):
    """The paired Dirichlet-categorical spec over the joint outcomes, and its counts."""
    from pbassess.inference import Observations

    relevant, success = zip(*(_paired_indicators(p, metric) for p in preds), strict=True)
    rel = relevant[0] & sel
    s = np.stack([x[rel] for x in success])  # (model, item)
    outcome = joint_outcome_index(s)
    counts = cell_counts(outcome, 2 ** len(names))
    offset = None
    if metric == "calibration-bias":
        offset = np.array([np.asarray(p.confidence, dtype=float)[sel].mean() for p in preds])
    observations = Observations.of(np.zeros(outcome.size, dtype=np.int64), outcome, _item_ids(preds[0])[rel])
    spec = PairedComparisonSpec(counts, pc / counts.size, names, pairs, offset=offset, observations=observations)
    n = np.full(len(names), int(rel.sum()))
    k = s.sum(axis=1)
    joint = np.array([[int((s[i] & s[j]).sum()), int((s[i] & ~s[j]).sum()), int((~s[i] & s[j]).sum()),
                       int((~s[i] & ~s[j]).sum())] for i, j in pairs], dtype=np.int64).reshape(len(pairs), 4)
    return spec, n, k, joint


def _model_ece_spec(preds: list[Any], sel: np.ndarray, bins: int, pc: float, names: list[str],
                    pairs: list[tuple[int, int]]):
    """The ECE comparison of models: independent Beta cells per model x bin (each model's bins hold other items)."""
    from pbassess.counting import assign_bins, count_cells
    from pbassess.inference import Observations

    edges = bin_edges(bins=bins)
    tables = [count_cells(p if sel.all() else p.subset(sel), ("bin",), bin_edges=edges) for p in preds]
    n, k, pool, ssum = (np.stack([t[var].to_numpy() for t in tables])
                        for var in ("n", "correct", "n_pool", "score_sum_pool"))
    centre = (edges[:-1] + edges[1:]) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(pool > 0, ssum / np.maximum(pool, 1), centre)
    weights = pool / np.maximum(pool.sum(axis=1, keepdims=True), 1)
    n_bins = edges.size - 1
    # one observation per (model, labeled item): the item's bin under that model and whether it was right
    cell, outcome, item = [], [], []
    ids = _item_ids(preds[0])
    for m, p in enumerate(preds):
        keep = np.asarray(p.labeled, dtype=bool) & sel
        cell.append(m * n_bins + assign_bins(np.asarray(p.confidence, dtype=float)[keep], edges))
        outcome.append(np.asarray(p.correct, dtype=bool)[keep])
        item.append(np.array([f"{names[m]}/{v}" for v in ids[keep]], dtype=object))
    observations = Observations.of(np.concatenate(cell), np.concatenate(outcome), np.concatenate(item))
    labels = [f"{g} bin {b}" for g in names for b in range(n_bins)]
    cells = BetaBernoulliSpec(n.ravel(), k.ravel(), pc / 2, pc / 2, dim="cell", coords=labels,
                              observations=observations)
    spec = GroupComparisonSpec(cells, names, pairs, ece={"weight": weights, "score": score})
    return spec, n.sum(axis=1), k.sum(axis=1)


def compare_models(
    preds: Mapping[str, Any] | Sequence[Any],
    *,
    metric: str = "accuracy",
    rope: float = 0.0,
    mask: Any = None,
    pseudocount: float = DEFAULT_PSEUDOCOUNT,
    bins: int = DEFAULT_BINS,
    ci_prob: float = CI_PROB,
    seed: Any = None,
    inference: str | None = None,
    sample_kwargs: Mapping[str, Any] | None = None,
    draws: int | None = None,
) -> ComparisonResult:
    r"""Compare models scored on the same items, with the paired Dirichlet-categorical model.

    Each labeled item's joint outcome (which of the M models got it right) is one categorical
    draw from ``pi ~ Dirichlet(pc / 2**M, ...)``
    (:class:`~pbassess.pymc_models.comparison.PairedComparisonSpec`); each model's rate and every
    pairwise difference are derived from ``pi``, so correlated errors are accounted for.

    Parameters
    ----------
    preds : mapping of name to Predictions, or sequence of Predictions
        Two to twelve prediction sets with the same item ids and labels (e.g. two ``score_*``
        columns of one file; anything :func:`pbassess.data.as_predictions` accepts).
    metric : {"accuracy", "tpr", "fpr", "calibration-bias", "ece"}
        ``ece`` compares independent per-model bin posteriors (not paired).
    rope : float
        ROPE half-width of the differences.
    mask : array of bool, optional
        Restrict to these items (e.g. one group).
    pseudocount : float
        Dirichlet(pc / 2**M) prior on the joint outcome: uniform Beta(pc/2, pc/2) marginals and
        Dirichlet(pc/4 x 4) on each pair's outcomes.
    bins, ci_prob, seed, sample_kwargs, draws
        As in :func:`compare_groups`.
    inference : {"conjugate", "nuts"}
        Exact Dirichlet draws (default) or NUTS on the same model (:func:`pbassess.inference.fit`).

    Returns
    -------
    ComparisonResult
        Groups are the model names; ``counts["joint"]`` holds the (pair, outcome) counts
        (outcomes both, only_a, only_b, neither); ``result.loo()`` is the exact LOO.

    Notes
    -----
    Each labeled item has a joint outcome :math:`o \in \{0, 1\}^M` (which of the :math:`M` models
    got it right); :math:`y_o` items have outcome :math:`o` out of :math:`n`:

    .. math::

       \pi \sim \mathrm{Dirichlet}\big(c / 2^M, \dots, c / 2^M\big), \qquad
       y \mid \pi \sim \mathrm{Multinomial}(n, \pi), \qquad
       \pi \mid y \sim \mathrm{Dirichlet}(c / 2^M + y),

       \theta_m = \sum_{o:\, o_m = 1} \pi_o, \qquad
       \Delta_{ab} = \theta_a - \theta_b = \pi(\text{only } a \text{ right}) - \pi(\text{only } b \text{ right}),

    so each model's rate is a priori :math:`\mathrm{Beta}(c/2, c/2)` and the items both models get
    right (or wrong) cancel from the difference.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> y = [1, 1, 0, 0, 1, 0]
    >>> a = Predictions.from_binary_scores([0.9, 0.8, 0.2, 0.3, 0.7, 0.1], y)
    >>> b = Predictions.from_binary_scores([0.9, 0.4, 0.6, 0.3, 0.7, 0.1], y)
    >>> r = compare_models({"A": a, "B": b}, seed=0)
    >>> r.counts["joint"].sel(pair="A - B").to_numpy().tolist()
    [4, 2, 0, 0]
    >>> r.loo().n_data_points  # one joint outcome per labeled item
    6
    """
    metric = _metric_name(metric)
    rope = check_rope(rope)
    inference, n_draws, ci_prob, kwargs = check_options(inference, draws, ci_prob, sample_kwargs)
    rng = as_generator(seed)
    models = preds if isinstance(preds, Mapping) else {getattr(p, "name", f"model{i}"): p for i, p in enumerate(preds)}
    names = [str(n) for n in models]
    pools = [as_pool(p) for p in models.values()]
    _check_same_items(names, pools)
    ref = pools[0]
    sel = np.ones(ref.n_items, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    if sel.shape != (ref.n_items,):
        raise DataError(f"mask has shape {sel.shape} for {ref.n_items} items")
    pc = float(pseudocount)
    if not np.isfinite(pc) or pc <= 0:
        raise ConfigError(f"the pseudocount must be positive, got {pseudocount}")
    pairs = pair_list(names)
    extra = {}
    if metric == "ece":
        spec, n, k = _model_ece_spec(pools, sel, bins, pc, names, pairs)
        paired = "no: independent Beta(pc/2, pc/2) per model x bin"
    else:
        spec, n, k, joint = _paired_spec(pools, sel, metric, pc, names, pairs)
        paired = f"Dirichlet(pc/{2 ** len(names)} x {2 ** len(names)}) on the joint outcome"
        labels = [f"{names[i]} - {names[j]}" for i, j in pairs]
        extra = {"joint": xr.DataArray(joint, dims=("pair", "outcome"), coords={"pair": labels, "outcome": list(OUTCOMES)}),
                 # the items of the paired fit: one joint outcome (and one log-likelihood value) each
                 "n_labeled": xr.DataArray(int(n[0]))}
    fitted = fit(spec, inference=inference, draws=n_draws, seed=rng, sample_kwargs=kwargs)
    return _result_from_fit(
        fitted, spec, {"n": n, "successes": k, "n_items": np.full(len(names), int(sel.sum()))}, metric=metric,
        rope=rope, prior={"kind": "uniform", "pseudocount": pc, "paired": paired},
        data_summary={**ref.describe(), "models": names}, ci_prob=ci_prob,
        options={"by": "model", "mode": "models", "bins": bins, "draws": n_draws}, extra=extra,
    )
