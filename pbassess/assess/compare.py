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

Groups are disjoint sets of items, so their posteriors are independent. Two *models* scored
on the same items are not: their errors are correlated, and comparing independent Beta
posteriors would overstate the uncertainty of the difference. :func:`compare_models` therefore
uses a **paired model**: per labeled item the joint outcome (both right, only A right, only B
right, both wrong) is one draw of a categorical distribution with probabilities
``pi ~ Dirichlet(pc/4, pc/4, pc/4, pc/4)`` (pc = pseudocount, so each model's marginal prior is
the project's uniform Beta(pc/2, pc/2)); the posterior is Dirichlet(pc/4 + counts) and
``acc_A - acc_B = pi_onlyA - pi_onlyB``. TPR and FPR are paired the same way on the labeled
positives / negatives with "predicts positive" as the outcome. ECE differences between models
use independent per-model bin posteriors (the bins differ between models).

The default engine is the exact conjugate one (Beta and Dirichlet draws, no MCMC);
``engine="mcmc"`` samples the same models with NUTS.

:func:`simulate_rope_labeling` measures how many labels a two-group comparison needs before
its ROPE decision matches the full-data decision, when labels are acquired at random or
actively (label the group whose next label is expected to move the ROPE probabilities most).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import xarray as xr
from scipy import special

from pbassess.constants import CI_PROB, DEFAULT_BINS, DEFAULT_DRAWS, DEFAULT_PSEUDOCOUNT
from pbassess.errors import ConfigError, DataError
from pbassess.results import AssessmentResult
from pbassess.stats import (
    as_generator,
    beta_draws,
    bin_edges,
    bin_index,
    dirichlet_draws,
    ece_from_draws,
    hdi_from_draws,
)

__all__ = [
    "METRICS",
    "ComparisonResult",
    "RopeLabelingSimulation",
    "compare_groups",
    "compare_models",
    "fairness_comparisons",
    "fairness_table",
    "rope_decision",
    "rope_probabilities",
    "rope_probabilities_beta",
    "score_columns",
    "simulate_rope_labeling",
]

METRICS = ("accuracy", "tpr", "fpr", "calibration-bias", "ece")
_ALIASES = {"bias": "calibration-bias", "calibration_bias": "calibration-bias", "acc": "accuracy"}
OUTCOMES = ("both", "only_a", "only_b", "neither")
DECISIONS = ("below", "inside", "above")


def _metric_name(metric: str) -> str:
    m = _ALIASES.get(str(metric).lower(), str(metric).lower())
    if m not in METRICS:
        raise ConfigError(f"unknown metric {metric!r} (choose from {', '.join(METRICS)})")
    return m


def _check_rope(rope: float) -> float:
    r = float(rope)
    if not np.isfinite(r) or r < 0:
        raise ConfigError(f"--rope must be a non-negative number, got {rope}")
    return r


# ---------------------------------------------------------------------------- ROPE helpers
def rope_probabilities(diff_draws: Any, rope: float) -> np.ndarray:
    """``[P(d < -r), P(-r <= d <= r), P(d > r)]`` from draws of a difference (last axis: draws).

    Examples
    --------
    >>> rope_probabilities([-0.3, -0.01, 0.0, 0.02, 0.5], 0.05).round(3).tolist()
    [0.2, 0.6, 0.2]
    """
    d = np.asarray(diff_draws, dtype=float)
    r = _check_rope(rope)
    below = (d < -r).mean(axis=-1)
    above = (d > r).mean(axis=-1)
    return np.stack([below, 1.0 - below - above, above], axis=-1)


def rope_probabilities_beta(alpha_a: Any, beta_a: Any, alpha_b: Any, beta_b: Any, rope: float,
                            n_grid: int = 801) -> np.ndarray:
    """ROPE probabilities of ``theta_a - theta_b`` for independent Betas, by quadrature.

    ``P(d < -r) = E_b[F_a(theta_b - r)]`` and ``P(d > r) = 1 - E_b[F_a(theta_b + r)]``; the
    expectation over Beta(alpha_b, beta_b) is a weighted sum over ``n_grid`` points spanning
    its mean +- 12 sd (clipped to [0, 1]) with normalised density weights. Broadcasts over the
    parameters; returns shape (..., 3).

    Examples
    --------
    >>> p = rope_probabilities_beta(50, 50, 50, 50, 0.0)
    >>> bool(abs(p[0] - 0.5) < 1e-3 and abs(p[2] - 0.5) < 1e-3)
    True
    """
    r = _check_rope(rope)
    a1, b1, a2, b2 = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (alpha_a, beta_a, alpha_b, beta_b)))
    mean, var = _beta_moments(a2, b2)
    sd = np.sqrt(var)[..., None]
    t = np.linspace(-12.0, 12.0, n_grid)
    lo = np.maximum(mean[..., None] - 12 * sd, 0.0)
    hi = np.minimum(mean[..., None] + 12 * sd, 1.0)
    y = lo + (hi - lo) * (t + 12.0) / 24.0
    yc = np.clip(y, 1e-300, 1 - 1e-16)
    logpdf = ((a2[..., None] - 1) * np.log(yc) + (b2[..., None] - 1) * np.log1p(-yc)
              - special.betaln(a2, b2)[..., None])
    w = np.exp(logpdf - logpdf.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    below = (w * special.betainc(a1[..., None], b1[..., None], np.clip(y - r, 0.0, 1.0))).sum(axis=-1)
    above = 1.0 - (w * special.betainc(a1[..., None], b1[..., None], np.clip(y + r, 0.0, 1.0))).sum(axis=-1)
    below = np.clip(below, 0.0, 1.0)
    above = np.clip(above, 0.0, 1.0)
    return np.stack([below, np.clip(1.0 - below - above, 0.0, 1.0), above], axis=-1)


def rope_decision(probabilities: Any, threshold: float = 0.95) -> np.ndarray:
    """Decision code per row of ROPE probabilities: 0 below, 1 inside, 2 above, -1 undecided.

    A region is decided when its posterior probability reaches ``threshold``.

    Examples
    --------
    >>> rope_decision([[0.97, 0.03, 0.0], [0.2, 0.5, 0.3]]).tolist()
    [0, -1]
    """
    p = np.asarray(probabilities, dtype=float)
    best = p.argmax(axis=-1)
    return np.where(np.take_along_axis(p, best[..., None], axis=-1)[..., 0] >= threshold, best, -1)


def _decision_name(code: int) -> str:
    return "undecided" if code < 0 else DECISIONS[code]


# ---------------------------------------------------------------------------- counts per metric
def _positive_score(pred: Any) -> np.ndarray:
    if pred.n_classes != 2:
        raise DataError(f"TPR/FPR need a binary classifier, but {pred.name!r} has {pred.n_classes} classes")
    if pred.probs is not None:
        return np.asarray(pred.probs[:, 1], dtype=float)
    return np.where(pred.predicted == 1, pred.confidence, 1 - pred.confidence)


def _beta_cell(pred: Any, mask: np.ndarray, metric: str) -> tuple[int, int, float]:
    """(trials, successes, prior mean) of a Beta-binomial metric on the items in ``mask``."""
    lab = pred.labeled & mask
    if metric in ("accuracy", "calibration-bias"):
        sel = lab
        success = pred.correct
        conf = np.asarray(pred.confidence, dtype=float)[mask]
        prior_mean = float(conf.mean()) if conf.size else 0.5
    else:
        s = _positive_score(pred)
        positive = pred.predicted == 1
        truth = 1 if metric == "tpr" else 0
        sel = lab & (pred.labels == truth)
        success = positive
        w = s[mask] if metric == "tpr" else 1 - s[mask]
        prior_mean = float((w * positive[mask]).sum() / w.sum()) if w.sum() > 0 else 0.5
    return int(sel.sum()), int(success[sel].sum()), prior_mean


def _beta_prior(prior: str, pseudocount: float, mean: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    pc = float(pseudocount)
    if not np.isfinite(pc) or pc <= 0:
        raise ConfigError(f"the pseudocount must be positive, got {pseudocount}")
    if prior == "uniform":
        return np.full(mean.shape, pc / 2), np.full(mean.shape, pc / 2)
    if prior == "informed":
        s = np.clip(mean, 1e-3, 1 - 1e-3)
        return pc * s, pc * (1 - s)
    raise ConfigError(f"unknown prior {prior!r} (choose 'uniform' or 'informed')")


def _draw_betas(alpha: np.ndarray, beta: np.ndarray, n: np.ndarray, k: np.ndarray, engine: str,
                n_draws: int, rng: np.random.Generator, sampler: dict[str, Any]) -> np.ndarray:
    """Posterior draws (chain, draw, cell) of independent Beta-binomial cells."""
    if engine == "conjugate":
        return beta_draws(alpha + k, beta + n - k, n_draws, seed=rng)[None]
    import pymc as pm

    from pbassess.hierarchical.models import sample_model

    with pm.Model() as model:
        theta = pm.Beta("theta", alpha, beta, shape=alpha.size)
        pm.Binomial("k", n=n, p=theta, observed=k)
    idata = sample_model(model, seed=rng, log_likelihood=False, **sampler)
    return idata["posterior"]["theta"].transpose("chain", "draw", ...).to_numpy()


def _draw_dirichlets(alpha: np.ndarray, counts: np.ndarray, engine: str, n_draws: int,
                     rng: np.random.Generator, sampler: dict[str, Any]) -> np.ndarray:
    """Posterior draws (chain, draw, pair, 4) of independent Dirichlet-multinomial pairs."""
    if engine == "conjugate":
        return dirichlet_draws(alpha + counts, n_draws, seed=rng)[None]
    import pymc as pm

    from pbassess.hierarchical.models import sample_model

    with pm.Model() as model:
        pi = pm.Dirichlet("pi", a=alpha, shape=alpha.shape)
        pm.Multinomial("joint", n=counts.sum(axis=1), p=pi, observed=counts)
    idata = sample_model(model, seed=rng, log_likelihood=False, **sampler)
    return idata["posterior"]["pi"].transpose("chain", "draw", ...).to_numpy()


def _ece_draws(pred: Any, masks: list[np.ndarray], bins: int, prior: str, pseudocount: float, engine: str,
               n_draws: int, rng: np.random.Generator, sampler: dict[str, Any]):
    """ECE draws (chain, draw, group) and per-group labeled counts."""
    edges = bin_edges(bins=bins)
    n_bins = edges.size - 1
    conf = np.asarray(pred.confidence, dtype=float)
    b = bin_index(conf, edges)
    n_all, k_all, weights, scores, mean_conf = [], [], [], [], []
    for mask in masks:
        lab = mask & pred.labeled
        n = np.bincount(b[lab], minlength=n_bins)
        k = np.bincount(b[lab], weights=pred.correct[lab], minlength=n_bins).astype(np.int64)
        pool = np.bincount(b[mask], minlength=n_bins)
        ssum = np.bincount(b[mask], weights=conf[mask], minlength=n_bins)
        with np.errstate(invalid="ignore", divide="ignore"):
            score = np.where(pool > 0, ssum / np.maximum(pool, 1), (edges[:-1] + edges[1:]) / 2)
        n_all.append(n)
        k_all.append(k)
        weights.append(pool / max(pool.sum(), 1))
        scores.append(score)
        mean_conf.append(score)
    n_arr, k_arr = np.array(n_all), np.array(k_all)
    alpha, beta = _beta_prior(prior, pseudocount, np.array(mean_conf).ravel())
    theta = _draw_betas(alpha, beta, n_arr.ravel(), k_arr.ravel(), engine, n_draws, rng, sampler)
    theta = theta.reshape(theta.shape[:2] + n_arr.shape)
    ece = ece_from_draws(theta, np.array(weights), np.array(scores))
    return ece, n_arr.sum(axis=1), k_arr.sum(axis=1)


# ---------------------------------------------------------------------------- result
class ComparisonResult(AssessmentResult):
    """Posterior of a metric per group (or model) and of every pairwise difference.

    Posterior variables: ``value`` (chain, draw, group) and ``difference`` (chain, draw, pair),
    with pair coordinates ``pair_a`` and ``pair_b`` (the difference is ``a - b``).
    """

    metric = "compare"

    @property
    def groups(self) -> list[str]:
        return [str(g) for g in self.posterior["group"].to_numpy()]

    @property
    def rope(self) -> float:
        return float(self.options.get("rope", 0.0))

    @property
    def compared_metric(self) -> str:
        return str(self.options.get("metric", "accuracy"))

    def _pairs(self) -> list[tuple[str, str]]:
        return list(zip(self.posterior["pair_a"].to_numpy().astype(str).tolist(),
                        self.posterior["pair_b"].to_numpy().astype(str).tolist(), strict=True))

    def group_summary(self):
        """One row per group: mean, HDI, labeled trials and successes, pool size."""
        import pandas as pd

        d = self.draws("value")
        hdi = hdi_from_draws(d, self.ci_prob, axis=0)
        return pd.DataFrame({
            "group": self.groups, "mean": d.mean(axis=0), "hdi_low": hdi[:, 0], "hdi_high": hdi[:, 1],
            "n": self.counts["n"].to_numpy(), "successes": self.counts["successes"].to_numpy(),
            "n_items": self.counts["n_items"].to_numpy(),
        })

    def pairs_summary(self):
        """One row per pair: difference mean, HDI, P(d > 0) and the ROPE probabilities."""
        import pandas as pd

        if "pair" not in self.posterior.dims or self.posterior.sizes["pair"] == 0:
            return pd.DataFrame(columns=["a", "b", "diff_mean", "hdi_low", "hdi_high", "p_greater",
                                         "p_below", "p_inside", "p_above"])
        d = self.draws("difference")
        hdi = hdi_from_draws(d, self.ci_prob, axis=0)
        rope = rope_probabilities(d.T, self.rope)
        pairs = self._pairs()
        return pd.DataFrame({
            "a": [a for a, _ in pairs], "b": [b for _, b in pairs], "diff_mean": d.mean(axis=0),
            "hdi_low": hdi[:, 0], "hdi_high": hdi[:, 1], "p_greater": (d > 0).mean(axis=0),
            "p_below": rope[:, 0], "p_inside": rope[:, 1], "p_above": rope[:, 2],
        })

    def summary(self):
        """The group table (see :meth:`group_summary`); ``attrs["pairs"]`` holds :meth:`pairs_summary`."""
        table = self.group_summary()
        table.attrs["pairs"] = self.pairs_summary()
        table.attrs["metric"] = self.compared_metric
        table.attrs["rope"] = self.rope
        table.attrs["diagnostics"] = self.diagnostics
        return table

    def sentence(self) -> str:
        groups = self.group_summary()
        pairs = self.pairs_summary()
        pct = int(round(self.ci_prob * 100))
        what = self.compared_metric
        parts = ", ".join(f"{g} {m:.3f}" for g, m in zip(groups["group"], groups["mean"], strict=True))
        text = f"{what} by {self.options.get('by', 'group')}: {parts}"
        if len(pairs):
            row = pairs.iloc[int(np.argmax(np.abs(pairs["diff_mean"].to_numpy())))]
            text += (f"; {'largest difference ' if len(pairs) > 1 else ''}{row['a']} - {row['b']} = "
                     f"{row['diff_mean']:+.3f} ({pct}% HDI {row['hdi_low']:+.3f} to {row['hdi_high']:+.3f}), "
                     f"P(> 0) = {row['p_greater']:.2f}, P(inside +-{self.rope:g}) = {row['p_inside']:.2f}")
        return text + "."

    def to_json(self) -> dict[str, Any]:
        """The CLI contract: ``{"groups", "mean", "hdi", "pairs": [{"a", "b", "diff_mean",
        "p_greater", "rope": [below, inside, above]}]}``."""
        groups = self.group_summary()
        pairs = self.pairs_summary()
        return {
            "groups": groups["group"].tolist(),
            "mean": groups["mean"].tolist(),
            "hdi": groups[["hdi_low", "hdi_high"]].to_numpy().tolist(),
            "pairs": [
                {"a": row.a, "b": row.b, "diff_mean": float(row.diff_mean), "p_greater": float(row.p_greater),
                 "rope": [float(row.p_below), float(row.p_inside), float(row.p_above)]}
                for row in pairs.itertuples()
            ],
        }

    def plot(self, **kwargs: Any):
        """Metric per group and differences per pair with the ROPE band."""
        from pbassess.plots.compare import plot_comparison

        return plot_comparison(self, **kwargs)


def _pair_list(names: Sequence[str]) -> list[tuple[int, int]]:
    return list(itertools.combinations(range(len(names)), 2))


def _build_result(values: np.ndarray, diffs: np.ndarray, names: list[str], pairs: list[tuple[int, int]],
                  counts: dict[str, Any], *, metric: str, rope: float, prior: dict[str, Any],
                  data_summary: dict[str, Any], engine: str, ci_prob: float, options: dict[str, Any],
                  extra_counts: dict[str, Any] | None = None) -> ComparisonResult:
    pair_labels = [f"{names[i]} - {names[j]}" for i, j in pairs]
    posterior = xr.Dataset(
        {"value": (("chain", "draw", "group"), values), "difference": (("chain", "draw", "pair"), diffs)},
        coords={"group": names, "pair": pair_labels, "pair_a": ("pair", [names[i] for i, _ in pairs]),
                "pair_b": ("pair", [names[j] for _, j in pairs]),
                "chain": np.arange(values.shape[0]), "draw": np.arange(values.shape[1])},
    )
    count_ds = xr.Dataset({k: ("group", np.asarray(v)) for k, v in counts.items()}, coords={"group": names})
    for key, (dims, arr, coords) in (extra_counts or {}).items():
        count_ds[key] = xr.DataArray(arr, dims=dims, coords=coords)
    return ComparisonResult(
        posterior, count_ds, prior=prior, data_summary=data_summary, engine=engine, ci_prob=ci_prob,
        options={"metric": metric, "rope": rope, **options},
    )


def _check_engine(engine: str) -> str:
    if engine not in ("conjugate", "mcmc"):
        raise ConfigError(f"unknown engine {engine!r} (choose 'conjugate' or 'mcmc')")
    return engine


# ---------------------------------------------------------------------------- groups
def compare_groups(
    predictions: Any,
    by: str,
    *,
    metric: str = "accuracy",
    rope: float = 0.0,
    groups: Sequence[str] | None = None,
    prior: str = "uniform",
    pseudocount: float = DEFAULT_PSEUDOCOUNT,
    bins: int = DEFAULT_BINS,
    draws: int = DEFAULT_DRAWS,
    engine: str = "conjugate",
    ci_prob: float = CI_PROB,
    seed: Any = None,
    **sampler: Any,
) -> ComparisonResult:
    """Posterior of a metric per group and of the difference between every pair of groups.

    Parameters
    ----------
    predictions : Predictions
        The pool; labeled items inform the metric, all items the pool weights (ECE) and mean
        confidence (calibration bias).
    by : str
        The group column (e.g. ``"sex"``).
    metric : {"accuracy", "tpr", "fpr", "calibration-bias", "ece"}
    rope : float, default 0
        Half-width r of the region of practical equivalence of the difference.
    groups : sequence of str, optional
        The groups to compare, in this order (default: all values, sorted).
    prior : {"uniform", "informed"}
        Beta(pc/2, pc/2), or Beta(pc s, pc (1 - s)) with s the group's score-implied metric.
    pseudocount : float
        Prior strength pc.
    bins : int
        Equal-width confidence bins for ``ece``.
    draws : int
        Exact posterior draws of the conjugate engine.
    engine : {"conjugate", "mcmc"}
        Exact Beta draws (default) or NUTS on the same model.
    ci_prob : float
    seed : int or Generator, optional
    **sampler
        NUTS settings for ``engine="mcmc"`` (see :func:`pbassess.hierarchical.models.sample_model`).

    Returns
    -------
    ComparisonResult

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
    rope = _check_rope(rope)
    _check_engine(engine)
    rng = as_generator(seed)
    values_all = predictions.group(by)
    present = sorted(set(values_all.tolist()))
    names = [str(g) for g in groups] if groups is not None else present
    missing = [g for g in names if g not in present]
    if missing:
        raise DataError(f"group column {by!r} has no value {missing[0]!r} (values: {', '.join(present[:8])})")
    if len(names) < 2:
        raise DataError(f"group column {by!r} needs at least two groups to compare, got {len(names)}")
    masks = [values_all == g for g in names]
    if metric in ("tpr", "fpr"):
        _positive_score(predictions)
    n_items = np.array([int(m.sum()) for m in masks])
    if metric == "ece":
        values, n, k = _ece_draws(predictions, masks, bins, prior, pseudocount, engine, draws, rng, sampler)
    else:
        cells = [_beta_cell(predictions, m, metric) for m in masks]
        n = np.array([c[0] for c in cells])
        k = np.array([c[1] for c in cells])
        alpha, beta = _beta_prior(prior, pseudocount, np.array([c[2] for c in cells]))
        values = _draw_betas(alpha, beta, n, k, engine, draws, rng, sampler)
        if metric == "calibration-bias":
            conf = np.asarray(predictions.confidence, dtype=float)
            values = np.array([conf[m].mean() for m in masks]) - values
    pairs = _pair_list(names)
    diffs = np.stack([values[..., i] - values[..., j] for i, j in pairs], axis=-1)
    if predictions.n_labeled == 0:
        raise DataError("the comparison needs labels, but no item is labeled")
    return _build_result(
        values, diffs, names, pairs, {"n": n, "successes": k, "n_items": n_items}, metric=metric, rope=rope,
        prior={"kind": prior, "pseudocount": pseudocount}, data_summary={**predictions.describe(), "by": by},
        engine=engine if engine == "conjugate" else "mcmc", ci_prob=ci_prob,
        options={"by": by, "mode": "groups", "bins": bins},
    )


# ---------------------------------------------------------------------------- models
def _paired_indicators(pred: Any, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """(relevant labeled items mask, per-item success indicator) of one model."""
    if metric in ("accuracy", "calibration-bias", "ece"):
        return pred.labeled, pred.correct
    truth = 1 if metric == "tpr" else 0
    _positive_score(pred)
    return pred.labeled & (pred.labels == truth), pred.predicted == 1


def compare_models(
    models: Mapping[str, Any] | Sequence[Any],
    *,
    metric: str = "accuracy",
    rope: float = 0.0,
    mask: Any = None,
    pseudocount: float = DEFAULT_PSEUDOCOUNT,
    bins: int = DEFAULT_BINS,
    draws: int = DEFAULT_DRAWS,
    engine: str = "conjugate",
    ci_prob: float = CI_PROB,
    seed: Any = None,
    **sampler: Any,
) -> ComparisonResult:
    """Compare models scored on the same items, with the paired Dirichlet-multinomial model.

    Parameters
    ----------
    models : mapping of name to Predictions, or sequence of Predictions
        Two or more prediction sets with the same item ids and labels (e.g. two ``score_*``
        columns of one file).
    metric : {"accuracy", "tpr", "fpr", "calibration-bias", "ece"}
    rope : float
        ROPE half-width of the differences.
    mask : array of bool, optional
        Restrict to these items (e.g. one group).
    pseudocount : float
        Dirichlet(pc/4 x 4) prior on the joint outcome (uniform Beta(pc/2, pc/2) marginals).

    Returns
    -------
    ComparisonResult
        Groups are the model names; ``counts["joint"]`` holds the (pair, outcome) counts.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> y = [1, 1, 0, 0, 1, 0]
    >>> a = Predictions.from_binary_scores([0.9, 0.8, 0.2, 0.3, 0.7, 0.1], y)
    >>> b = Predictions.from_binary_scores([0.9, 0.4, 0.6, 0.3, 0.7, 0.1], y)
    >>> r = compare_models({"A": a, "B": b}, seed=0)
    >>> r.counts["joint"].sel(pair="A - B").to_numpy().tolist()
    [4, 2, 0, 0]
    """
    metric = _metric_name(metric)
    rope = _check_rope(rope)
    _check_engine(engine)
    rng = as_generator(seed)
    if not isinstance(models, Mapping):
        models = {getattr(p, "name", f"model{i}"): p for i, p in enumerate(models)}
    names = [str(n) for n in models]
    preds = list(models.values())
    if len(preds) < 2:
        raise DataError(f"comparing models needs at least two, got {len(preds)}")
    if len(set(names)) != len(names):
        raise DataError("model names must be unique")
    ref = preds[0]
    for name, p in zip(names[1:], preds[1:], strict=True):
        if p.n_items != ref.n_items or not np.array_equal(p.item_ids, ref.item_ids):
            raise DataError(f"model {name!r} is not scored on the same items as {names[0]!r} (item ids differ)")
        if not np.array_equal(p.labels, ref.labels):
            raise DataError(f"model {name!r} has different labels from {names[0]!r} on the same items")
    sel = np.ones(ref.n_items, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    if sel.shape != (ref.n_items,):
        raise DataError(f"mask has shape {sel.shape} for {ref.n_items} items")
    pc = float(pseudocount)
    if not pc > 0:
        raise ConfigError(f"the pseudocount must be positive, got {pseudocount}")
    n_items = np.full(len(names), int(sel.sum()))
    pairs = _pair_list(names)
    if metric == "ece":
        ece = [_ece_draws(p, [sel], bins, "uniform", pc, engine, draws, rng, sampler) for p in preds]
        values = np.concatenate([e[0] for e in ece], axis=-1)
        n = np.array([int(e[1][0]) for e in ece])
        k = np.array([int(e[2][0]) for e in ece])
        diffs = np.stack([values[..., i] - values[..., j] for i, j in pairs], axis=-1)
        joint = None
    else:
        relevant, success = zip(*(_paired_indicators(p, metric) for p in preds), strict=True)
        rel = relevant[0] & sel
        n = np.full(len(names), int(rel.sum()))
        k = np.array([int(s[rel].sum()) for s in success])
        joint = np.array([[int((success[i][rel] & success[j][rel]).sum()), int((success[i][rel] & ~success[j][rel]).sum()),
                           int((~success[i][rel] & success[j][rel]).sum()), int((~success[i][rel] & ~success[j][rel]).sum())]
                          for i, j in pairs])
        alpha = np.full((len(pairs), 4), pc / 4)
        pi = _draw_dirichlets(alpha, joint, engine, draws, rng, sampler)
        diffs = pi[..., 1] - pi[..., 2]
        values = _draw_betas(np.full(len(names), pc / 2), np.full(len(names), pc / 2), n, k, engine, draws,
                             rng, sampler)
        if values.shape[:2] != diffs.shape[:2]:
            raise DataError("internal: draw shapes differ between marginals and pairs")
        if metric == "calibration-bias":
            mean_conf = np.array([np.asarray(p.confidence, dtype=float)[sel].mean() for p in preds])
            values = mean_conf - values
            diffs = np.stack([np.full(diffs.shape[:2], mean_conf[i] - mean_conf[j]) for i, j in pairs], axis=-1) - diffs
    extra = None
    if joint is not None:
        labels = [f"{names[i]} - {names[j]}" for i, j in pairs]
        extra = {"joint": (("pair", "outcome"), joint, {"pair": labels, "outcome": list(OUTCOMES)})}
    return _build_result(
        values, diffs, names, pairs, {"n": n, "successes": k, "n_items": n_items}, metric=metric, rope=rope,
        prior={"kind": "uniform", "pseudocount": pc, "paired": "Dirichlet(pc/4 x 4) on the joint outcome"},
        data_summary={**ref.describe(), "models": names}, engine=engine if engine == "conjugate" else "mcmc",
        ci_prob=ci_prob, options={"by": "model", "mode": "models", "bins": bins}, extra_counts=extra,
    )


# ---------------------------------------------------------------------------- fairness data
def score_columns(data: Any) -> list[str]:
    """The ``score_*`` classifier columns of a registered binary-score set or CSV file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "s.csv"
    >>> _ = f.write_text(",sex,y,score_LR,score_NB\\n0,F,1,0.9,0.8\\n")
    >>> score_columns(f)
    ['score_LR', 'score_NB']
    """
    import os
    from pathlib import Path

    import pandas as pd

    from pbassess.data.registry import _cards, resolve_path

    name = os.fspath(data)
    path = resolve_path(name) if name in _cards() else Path(name)
    if not path.exists():
        raise DataError(f"{name!r} is neither a file nor a registered data set")
    try:
        cols = pd.read_csv(path, nrows=0).columns
    except (ValueError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot read the CSV header ({exc})") from None
    return [str(c) for c in cols if str(c).startswith("score_")]


def fairness_comparisons(
    data: Any,
    by: str,
    *,
    models: Sequence[str] | None = None,
    metric: str = "accuracy",
    rope: float = 0.02,
    groups: Sequence[str] | None = None,
    seed: Any = 0,
    **options: Any,
) -> dict[str, ComparisonResult]:
    """Group comparison of every classifier of a fairness data set (one result per classifier).

    Examples
    --------
    >>> # res = fairness_comparisons("adult-sex", "sex"); fairness_table(res)
    """
    from pbassess.data.registry import load_data

    rng = as_generator(seed)
    cols = list(models) if models is not None else score_columns(data)
    out = {}
    for col in cols:
        col = col if col.startswith("score_") else f"score_{col}"
        pred = load_data(data, model=col)
        out[col[6:]] = compare_groups(pred, by, metric=metric, rope=rope, groups=groups, seed=rng, **options)
    return out


def fairness_table(comparisons: Mapping[str, ComparisonResult]):
    """One row per classifier and pair of groups: metric per group with HDI, the difference
    with HDI, P(d > 0), the ROPE probabilities and the plain labeled rates (direct counts).

    Examples
    --------
    >>> # fairness_table(fairness_comparisons("adult-sex", "sex"))
    """
    import pandas as pd

    rows = []
    for clf, res in comparisons.items():
        g = res.group_summary().set_index("group")
        for pair in res.pairs_summary().itertuples():
            a, b = g.loc[pair.a], g.loc[pair.b]
            rows.append({
                "classifier": clf, "metric": res.compared_metric, "a": pair.a, "b": pair.b,
                "mean_a": a["mean"], "hdi_a": (a["hdi_low"], a["hdi_high"]), "n_a": int(a["n"]),
                "mean_b": b["mean"], "hdi_b": (b["hdi_low"], b["hdi_high"]), "n_b": int(b["n"]),
                "raw_a": a["successes"] / a["n"] if a["n"] else np.nan,
                "raw_b": b["successes"] / b["n"] if b["n"] else np.nan,
                "diff_mean": pair.diff_mean, "diff_hdi": (pair.hdi_low, pair.hdi_high),
                "p_greater": pair.p_greater, "rope": res.rope, "p_below": pair.p_below,
                "p_inside": pair.p_inside, "p_above": pair.p_above,
            })
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------- active labeling
@dataclass
class RopeLabelingSimulation:
    """How many labels a two-group ROPE comparison needs, random vs active acquisition.

    Attributes
    ----------
    groups : tuple of str
        The two groups (difference ``a - b``).
    checkpoints : ndarray of int
        Label budgets at which the decision was evaluated.
    match_rate : dict of str to ndarray
        Per strategy, the fraction of runs whose ROPE decision equals the full-data decision
        at each checkpoint.
    labels_needed : dict of str to int or None
        Per strategy, the first checkpoint from which the match rate stays >= ``target``.
    full_decision : str
        ``below``/``inside``/``above``/``undecided`` with all labels.
    full_probabilities : ndarray, shape (3,)
        ROPE probabilities with all labels.
    group_share : dict of str to ndarray
        Per strategy, the mean share of labels taken from group ``a`` at each checkpoint.
    """

    groups: tuple[str, str]
    rope: float
    threshold: float
    target: float
    checkpoints: np.ndarray
    match_rate: dict[str, np.ndarray]
    labels_needed: dict[str, int | None]
    full_decision: str
    full_probabilities: np.ndarray
    n_runs: int
    n_items: int
    group_sizes: tuple[int, int]
    group_share: dict[str, np.ndarray] = field(default_factory=dict)
    name: str = ""

    def summary(self):
        """One row per strategy: labels needed, as a share of the pool, final match rate."""
        import pandas as pd

        return pd.DataFrame([
            {"strategy": s, "labels_needed": self.labels_needed[s],
             "share_of_pool": (self.labels_needed[s] / self.n_items) if self.labels_needed[s] else np.nan,
             "match_rate_at_end": float(self.match_rate[s][-1])}
            for s in self.match_rate
        ])

    def sentence(self) -> str:
        parts = ", ".join(f"{s}: {v if v is not None else 'not reached'}" for s, v in self.labels_needed.items())
        return (f"Labels needed until the ROPE decision ({self.full_decision}, r={self.rope:g}) of "
                f"{self.groups[0]} - {self.groups[1]} matches the full-data one in >= {self.target:.0%} of "
                f"{self.n_runs} runs: {parts} (pool {self.n_items}).")

    def plot(self, **kwargs: Any):
        from pbassess.plots.compare import plot_labeling_curves

        return plot_labeling_curves(self, **kwargs)


def _normal_rope(m: np.ndarray, v: np.ndarray, r: float) -> np.ndarray:
    sd = np.sqrt(np.maximum(v, 1e-300))
    below = special.ndtr((-r - m) / sd)
    above = special.ndtr((m - r) / sd)
    return np.stack([below, 1 - below - above, above], axis=-1)


def _beta_moments(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = a + b
    return a / s, a * b / (s * s * (s + 1))


def active_rope_scores(alpha: np.ndarray, beta: np.ndarray, rope: float) -> np.ndarray:
    """Expected change of the ROPE probabilities from one more label of each group.

    ``alpha``/``beta`` have shape (runs, 2); returns (runs, 2): for group g,
    ``sum_y P(y) * || pi(after y) - pi(now) ||_1`` under a normal approximation of the
    difference of the two Beta posteriors (a cheap one-step look-ahead).

    Examples
    --------
    >>> s = active_rope_scores(np.array([[5.0, 500.0]]), np.array([[5.0, 500.0]]), 0.05)
    >>> bool(s[0, 0] > s[0, 1])
    True
    """
    m, v = _beta_moments(alpha, beta)
    now = _normal_rope(m[:, 0] - m[:, 1], v[:, 0] + v[:, 1], rope)
    scores = np.zeros(alpha.shape)
    for g in (0, 1):
        sign = 1.0 if g == 0 else -1.0
        p_correct = m[:, g]
        total = np.zeros(alpha.shape[0])
        for y, p_y in ((1, p_correct), (0, 1 - p_correct)):
            a2 = alpha[:, g] + y
            b2 = beta[:, g] + (1 - y)
            m2, v2 = _beta_moments(a2, b2)
            other = 1 - g
            diff = sign * (m2 - m[:, other])
            after = _normal_rope(diff, v2 + v[:, other], rope)
            total += p_y * np.abs(after - now).sum(axis=-1)
        scores[:, g] = total
    return scores


def simulate_rope_labeling(
    predictions: Any,
    by: str,
    *,
    groups: Sequence[str] | None = None,
    rope: float = 0.02,
    threshold: float = 0.95,
    target: float = 0.95,
    n_runs: int = 20,
    checkpoints: Any = None,
    max_labels: int | None = None,
    strategies: Sequence[str] = ("random", "active"),
    pseudocount: float = DEFAULT_PSEUDOCOUNT,
    seed: Any = None,
) -> RopeLabelingSimulation:
    """Labels needed by random vs active acquisition until the ROPE decision is the full-data one.

    The pool is the labeled items of two groups; their labels are hidden and revealed one at a
    time. The accuracy of each group has a uniform Beta(pc/2, pc/2) prior. At each checkpoint
    the ROPE probabilities of ``acc_a - acc_b`` are computed exactly (quadrature,
    :func:`rope_probabilities_beta`) and the decision is the region with probability >=
    ``threshold`` (else ``undecided``). A run *matches* when its decision equals the decision
    with all labels. ``labels_needed`` is the first checkpoint from which at least ``target``
    of the runs match at every later checkpoint.

    Strategies: ``random`` labels items uniformly at random from the pool; ``active`` labels,
    at each step, an item (at random) of the group whose next label is expected to change the
    ROPE probabilities most (:func:`active_rope_scores`) — i.e. it labels where the ROPE
    decision is most likely to change.

    Returns
    -------
    RopeLabelingSimulation

    Examples
    --------
    >>> import numpy as np
    >>> from pbassess import Predictions
    >>> rng = np.random.default_rng(0)
    >>> g = np.repeat(["a", "b"], [300, 100])
    >>> correct = rng.random(400) < np.where(g == "a", 0.9, 0.6)
    >>> p = Predictions.from_top1(np.where(correct, "x", "y"), np.full(400, 0.8), np.full(400, "x"),
    ...                           classes=["x", "y"], groups={"g": g})
    >>> sim = simulate_rope_labeling(p, "g", rope=0.05, n_runs=10, seed=1)
    >>> sim.full_decision, sim.labels_needed["active"] <= sim.labels_needed["random"]
    ('above', True)
    """
    rope = _check_rope(rope)
    if not 0.5 < threshold < 1:
        raise ConfigError(f"threshold must be in (0.5, 1), got {threshold}")
    if not 0 < target <= 1:
        raise ConfigError(f"target must be in (0, 1], got {target}")
    for s in strategies:
        if s not in ("random", "active"):
            raise ConfigError(f"unknown strategy {s!r} (choose 'random' or 'active')")
    rng = as_generator(seed)
    values = predictions.group(by)
    present = sorted(set(values[predictions.labeled].tolist()))
    names = [str(g) for g in groups] if groups is not None else present
    if len(names) != 2:
        raise DataError(f"the labeling simulation compares exactly two groups of {by!r}; pass groups=[a, b] "
                        f"(labeled groups: {', '.join(present[:8])})")
    for gname in names:
        if gname not in present:
            raise DataError(f"group {gname!r} of {by!r} has no labeled items")
    outcome = [predictions.correct[(values == gname) & predictions.labeled].astype(np.int64) for gname in names]
    sizes = np.array([o.size for o in outcome])
    n_pool = int(sizes.sum())
    pc = float(pseudocount)
    a0 = b0 = pc / 2
    full = rope_probabilities_beta(a0 + outcome[0].sum(), b0 + sizes[0] - outcome[0].sum(),
                                   a0 + outcome[1].sum(), b0 + sizes[1] - outcome[1].sum(), rope)
    full_code = int(rope_decision(full, threshold))
    max_labels = n_pool if max_labels is None else min(int(max_labels), n_pool)
    if checkpoints is None:
        checkpoints = np.unique(np.geomspace(10, max_labels, 30).astype(int))
    checkpoints = np.unique(np.clip(np.asarray(checkpoints, dtype=int), 1, max_labels))
    R = int(n_runs)
    match: dict[str, np.ndarray] = {}
    share: dict[str, np.ndarray] = {}
    for strategy in strategies:
        succ = np.zeros((R, checkpoints.size, 2))
        taken = np.zeros((R, checkpoints.size, 2))
        # Per run, each group's outcomes in a random order.
        orders = [np.stack([rng.permutation(o) for _ in range(R)]) for o in outcome]
        if strategy == "random":
            group_seq = np.stack([rng.permutation(np.repeat([0, 1], sizes)) for _ in range(R)])
            for gi in (0, 1):
                is_g = group_seq == gi
                pos = np.cumsum(is_g, axis=1)  # labels of group gi taken after each step
                cum_out = np.concatenate([np.zeros((R, 1)), np.cumsum(orders[gi], axis=1)], axis=1)
                cnt = pos[:, checkpoints - 1]
                taken[:, :, gi] = cnt
                succ[:, :, gi] = np.take_along_axis(cum_out, cnt, axis=1)
        else:
            alpha = np.full((R, 2), a0)
            beta_ = np.full((R, 2), b0)
            used = np.zeros((R, 2), dtype=np.int64)
            ck = 0
            rows = np.arange(R)
            for step in range(1, max_labels + 1):
                scores = active_rope_scores(alpha, beta_, rope)
                # tie-break (saturated probabilities): the group with fewer labels per item
                scores = scores + 1e-12 * (sizes - used) / sizes
                scores[used >= sizes] = -np.inf
                pick = scores.argmax(axis=1)
                y = np.where(pick == 0, orders[0][rows, np.minimum(used[:, 0], sizes[0] - 1)],
                             orders[1][rows, np.minimum(used[:, 1], sizes[1] - 1)])
                alpha[rows, pick] += y
                beta_[rows, pick] += 1 - y
                used[rows, pick] += 1
                while ck < checkpoints.size and checkpoints[ck] == step:
                    taken[:, ck] = used
                    succ[:, ck] = alpha - a0
                    ck += 1
                if ck >= checkpoints.size:
                    break
        probs = rope_probabilities_beta(a0 + succ[..., 0], b0 + taken[..., 0] - succ[..., 0],
                                        a0 + succ[..., 1], b0 + taken[..., 1] - succ[..., 1], rope)
        match[strategy] = (rope_decision(probs, threshold) == full_code).mean(axis=0)
        share[strategy] = (taken[..., 0] / np.maximum(taken.sum(axis=-1), 1)).mean(axis=0)
    needed: dict[str, int | None] = {}
    for strategy, rate in match.items():
        ok = rate >= target
        tail_ok = np.flip(np.cumprod(np.flip(ok)).astype(bool))
        needed[strategy] = int(checkpoints[np.argmax(tail_ok)]) if tail_ok.any() else None
    return RopeLabelingSimulation(
        groups=(names[0], names[1]), rope=rope, threshold=threshold, target=target, checkpoints=checkpoints,
        match_rate=match, labels_needed=needed, full_decision=_decision_name(full_code), full_probabilities=full,
        n_runs=R, n_items=n_pool, group_sizes=(int(sizes[0]), int(sizes[1])), group_share=share,
        name=getattr(predictions, "name", ""),
    )
