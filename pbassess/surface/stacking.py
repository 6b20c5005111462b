"""Stacking the confidence-anchored surface with the label-free confidence (issue 21).

The anchored surface (:func:`pbassess.pymc_models.surface.anchored_model`) contains the
calibrated confidence as a limit (identity map, every residual scale zero), but a posterior never
sits exactly there: with few labels its calibration map and residuals move by their sampling noise,
and on a surface where the confidence is right (ACS employment at 500 labels) that noise costs 14%
of macro MSE against simply averaging the confidence. Whether the labels show the confidence wrong
is a question of predictive performance on the labeled items, so this module answers it the way
Bayesian workflow does (Yao, Vehtari, Simpson & Gelman 2018, *Using stacking to average Bayesian
predictive distributions*): each labeled item's PSIS-LOO predictive density under the anchored
fit against its exact predictive density under the confidence (p = the item's confidence), and the
stacking weights of the two models. The stacked surface is their mixture: a fraction ``weight`` of
the posterior draws of every arm's accuracy is its mean confidence.

Stacking alone weighs the two models by their point estimates of predictive performance, and with
few labels those are mostly noise: on ACS at 500 labels the anchored fit predicted the labels better
than the confidence by at most 0.7 (standard errors 0.5-2.1) on every seed, yet took stacking
weights up to 0.75, and the stacked surface lost 22-30% of worst-50 MSE against the confidence. So
the fit is stacked in only when its ELPD gain over the confidence exceeds ``min_elpd_gain``
(default 4), and otherwise the surface stays on the confidence (weight 1). Four is the bound below
which a LOO ELPD difference is small and its normal approximation poorly calibrated (Sivula,
Magnusson, Matamoros & Vehtari, *Uncertainty in Bayesian leave-one-out cross-validation based model
comparison*, arXiv:2008.10296; Vehtari's cross-validation FAQ): a parsimony rule that keeps the
simpler model, the one without parameters, unless the labels show it wrong. ``min_elpd_gain=0``
leaves the confidence whenever the fit predicts the labels better at all; with
``combination="stack"``, ``min_elpd_gain=-inf`` is plain stacking (in ``--json`` a bound of -inf is
``null``).

Above the bound the labels have shown the confidence wrong, and the surface is then the anchored fit
alone (``combination="select"``, the default since 2026-11-29): the fit nests the confidence (identity
map, every residual scale zero), so its posterior already holds every configuration near the
confidence that the labels allow, and mixing the rejected confidence back in is a hedge for single
items that moves every arm toward it. Stacking weighs the models by their predictions of items; the
surface reports arms. On ``digits-shift`` (the confidence 0.18 too high) stacking still gave it weights
of 0.04-0.07, which moved every environment by ~0.01 toward it: macro MSE 0.00029 stacked against
0.00023 for the fit alone; on the miscalibrated surface 0.00062 against 0.00057, the fit alone better
or equal on every seed on macro, worst-50 and rare-50 MSE (docs/surfaces.md). ``combination="stack"``
keeps the stacking weights above the bound (with ``min_elpd_gain=-inf``, plain stacking).

The confidence model has no parameters, so taken alone its draws would carry no spread, and a
surface kept on the confidence would report intervals of zero width: the labels giving no reason to
move off the confidence is not a measurement of the confidence's own error. So the draws that go to
the confidence carry the anchored fit's own spread (:func:`confidence_with_fit_spread`): each arm's
fit draws on the logit scale, moved so that their mean is the arm's mean confidence. The mean is the
confidence's, the uncertainty is what the labels leave about the arm under the anchored model. On ACS
(5 seeds at 500, 2,000 and 10,000 labels, every stack kept on the confidence) the 94% intervals of
the pool's own accuracy (the arm's draws with its unlabeled items' outcomes drawn from them,
:func:`pbassess.surface.evaluate.interval_coverage`) covered 93-97% of the 296 scored arms, the
anchored fit's 93-98%, and zero-width draws of the confidence 83-85% (docs/surfaces.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pbassess.errors import ConfigError
from pbassess.inference import pareto_smoothed_loo, psis_relative_efficiency

__all__ = ["COMBINATIONS", "MIN_ELPD_GAIN", "ConfidenceComparison", "check_combination", "check_min_elpd_gain",
           "compare_with_confidence",
           "confidence_items", "confidence_with_fit_spread", "distinct_item_loo", "stack_accuracy_draws",
           "stacking_weights"]

# The LOO ELPD gain over the confidence that the anchored fit must exceed to be stacked in (module docstring).
MIN_ELPD_GAIN = 4.0
#: What the surface is once the fit's gain exceeds the bound: the fit alone ("select", the default) or the
#: stacked mixture ("stack"); below the bound it is the confidence either way (module docstring).
COMBINATIONS = ("select", "stack")


def stacking_weights(pointwise: Any) -> np.ndarray:
    """Stacking weights of K models from their pointwise log predictive densities (items x K).

    Maximises sum_i log sum_k w_k exp(lpd_ik) over the simplex, the objective of
    ``arviz_stats.compare(method="stacking")``; it takes the densities themselves, so a model
    without posterior draws (a fixed predictive distribution, whose PSIS-LOO ArviZ cannot compute)
    can be stacked too.

    Parameters
    ----------
    pointwise : array_like, shape (n_items, K)
        Leave-one-out (or exact) log predictive density of every item under every model.

    Returns
    -------
    numpy.ndarray, shape (K,)
        Non-negative weights summing to 1.

    Examples
    --------
    >>> lpd = np.log([[0.9, 0.5], [0.5, 0.9]])  # each model predicts one item better: equal weights
    >>> stacking_weights(lpd).round(3).tolist()
    [0.5, 0.5]
    >>> stacking_weights(np.log([[0.9, 0.5], [0.8, 0.6]])).round(3).tolist()  # one model better on every item
    [1.0, 0.0]
    """
    from scipy.optimize import minimize

    lpd = np.asarray(pointwise, dtype=float)
    if lpd.ndim != 2 or lpd.shape[0] == 0 or not np.all(np.isfinite(lpd)):
        raise ConfigError("stacking needs a finite (items x models) array of log predictive densities")
    k = lpd.shape[1]
    if k == 1:
        return np.ones(1)
    dens = np.exp(lpd - lpd.max(axis=1, keepdims=True))  # a per-item constant does not move the optimum

    def objective(v: np.ndarray) -> tuple[float, np.ndarray]:  # w = softmax(v): the simplex without constraints
        w = np.exp(v - v.max())
        w /= w.sum()
        mix = dens @ w
        grad_w = -(dens / mix[:, None]).sum(axis=0)
        return -np.log(mix).sum(), w * (grad_w - w @ grad_w)

    best = minimize(objective, np.zeros(k), jac=True, method="L-BFGS-B", options={"maxiter": 500, "gtol": 1e-10})
    w = np.exp(best.x - best.x.max())
    w /= w.sum()
    w[w < 1e-6] = 0.0  # softmax cannot reach a corner: round what is numerically there
    return w / w.sum()


@dataclass(frozen=True)
class ConfidenceComparison:
    """The anchored surface against the label-free confidence on the labeled items.

    ``elpd_diff``: the anchored fit's PSIS-LOO expected log predictive density minus the
    confidence's exact one (positive: the labels show the confidence wrong somewhere), with its
    standard error ``elpd_diff_se`` (sqrt(n) times the sd of the pointwise differences);
    ``weight``: the confidence's weight in the surface; ``stacking_weight``: its stacking weight;
    ``combination``: what ``weight`` is when ``elpd_diff`` exceeds ``min_elpd_gain`` (0 under
    ``"select"``, the stacking weight under ``"stack"``; below the bound it is 1 either way);
    ``n_items``; ``max_pareto_k`` of the LOO.

    Examples
    --------
    >>> c = ConfidenceComparison(weight=1.0, elpd_diff=-1.2, elpd_diff_se=0.9, n_items=500, max_pareto_k=0.4,
    ...                          stacking_weight=0.8, min_elpd_gain=4.0)
    >>> c.as_dict()["confidence_weight"], c.kept_confidence, c.as_dict()["confidence_combination"]
    (1.0, True, 'select')
    """

    weight: float
    elpd_diff: float
    elpd_diff_se: float
    n_items: int
    max_pareto_k: float
    stacking_weight: float | None = None
    min_elpd_gain: float = float("-inf")
    combination: str = "select"

    @property
    def kept_confidence(self) -> bool:
        """True when the fit's ELPD gain did not exceed ``min_elpd_gain``, so the surface is the confidence."""
        return not self.elpd_diff > self.min_elpd_gain

    def as_dict(self) -> dict[str, float | int | str]:
        """The comparison under the names the surface diagnostics and JSON use."""
        stacking = self.weight if self.stacking_weight is None else self.stacking_weight
        return {"confidence_weight": self.weight, "confidence_stacking_weight": stacking,
                "confidence_combination": self.combination, "min_elpd_gain": self.min_elpd_gain,
                "elpd_diff_vs_confidence": self.elpd_diff, "elpd_diff_vs_confidence_se": self.elpd_diff_se,
                "stacking_items": self.n_items, "stacking_max_pareto_k": self.max_pareto_k}


def confidence_items(arms: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The labeled items stacking compares on: (arm, logit confidence, right), or a one-line error.

    Examples
    --------
    >>> from pbassess.surface import ArmCounts
    >>> confidence_items(ArmCounts.from_arrays([2], [1]))  # counts given directly: no items
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: stacking with the confidence needs the labeled items' own confidences (fit the surface on a pool, not on arm counts)
    """
    from pbassess.pymc_models.surface import anchored_items

    items = anchored_items(arms)
    if items is None:
        raise ConfigError("stacking with the confidence needs the labeled items' own confidences "
                          "(fit the surface on a pool, not on arm counts)")
    return items


def compare_with_confidence(idata: Any, arms: Any, *, min_elpd_gain: float = MIN_ELPD_GAIN,
                            combination: str = "select") -> ConfidenceComparison:
    """PSIS-LOO of an anchored surface fit against the confidence's exact log predictive density, and
    the confidence's weight in the surface.

    Parameters
    ----------
    idata : xarray.DataTree
        The fit's DataTree, its ``log_likelihood`` with one value per labeled item (a fit of
        ``estimator="additive", covariate="confidence"`` on a pool).
    arms : ArmCounts
        The fitted arms, carrying their labeled items' confidences.
    min_elpd_gain : float
        The ELPD gain of the fit over the confidence below which (inclusive) the surface stays on the
        confidence (weight 1). Default 4 (see the module docstring).
    combination : {"select", "stack"}
        The confidence's weight above the bound: 0, the fit alone (``"select"``, the default), or its
        stacking weight (``"stack"``; with ``min_elpd_gain=-inf``, plain stacking).

    Returns
    -------
    ConfidenceComparison

    Examples
    --------
    >>> import warnings
    >>> from pbassess.surface import count_arms, fit_surface, hide_labels
    >>> from pbassess.surface.synthetic import miscalibrated_surface
    >>> s = miscalibrated_surface(3000, 2, seed=0, n_rules=0)  # a calibrated confidence
    >>> kept = hide_labels(s.preds, 100, seed=0)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     r = fit_surface(kept, list(s.attributes), estimator="additive", covariate="confidence", seed=0,
    ...                     draws=200, sample_kwargs={"tune": 200})
    >>> c = compare_with_confidence(r.idata, r.arms)
    >>> c.n_items, 0.0 <= c.stacking_weight <= 1.0
    (100, True)
    >>> c.weight == (1.0 if c.elpd_diff <= 4 else 0.0)
    True
    """
    min_elpd_gain = check_min_elpd_gain(min_elpd_gain)
    combination = check_combination(combination)
    _, logit_conf, right = confidence_items(arms)
    try:
        anchored, pareto_k = distinct_item_loo(idata)
    except ConfigError as exc:  # e.g. too few draws: say what to change
        raise ConfigError(f"stacking with the confidence: {exc} (take more draws, or do not stack: "
                          "stack_confidence=False, --no-stack-confidence)") from None
    if anchored.size != right.size:
        raise ConfigError(f"the fit's log-likelihood has {anchored.size} values for {right.size} labeled items")
    confidence = -np.logaddexp(0.0, -(2.0 * right - 1.0) * logit_conf)  # log p(right | confidence), exactly
    diff = anchored - confidence
    stacking = float(stacking_weights(np.column_stack([confidence, anchored]))[0])
    gain = float(diff.sum())
    above = stacking if combination == "stack" else 0.0
    return ConfidenceComparison(weight=above if gain > min_elpd_gain else 1.0, elpd_diff=gain,
                                elpd_diff_se=float(np.sqrt(diff.size) * diff.std()), n_items=int(diff.size),
                                max_pareto_k=float(np.nanmax(pareto_k)),
                                stacking_weight=stacking, min_elpd_gain=min_elpd_gain, combination=combination)


def distinct_item_loo(idata: Any) -> tuple[np.ndarray, np.ndarray]:
    """Each labeled item's PSIS-LOO ELPD and Pareto k, smoothing each distinct log-likelihood once.

    Items of one arm with one confidence and one outcome have the same log-likelihood in every
    draw, so the same leave-one-out density: PSIS runs on the distinct columns only and its results
    are copied to their items (on ACS 10,000 random labels have ~6,900 distinct columns). With the
    posterior's relative efficiency (:func:`~pbassess.inference.psis_relative_efficiency`) all
    columns are smoothed at once (:func:`~pbassess.inference.pareto_smoothed_loo`: 0.3 s against
    ``az.loo``'s 3 s for 1,700 columns); without it, by ``az.loo``. The figures equal
    ``az.loo(idata, pointwise=True)``'s item by item (a test checks it).

    Parameters
    ----------
    idata : xarray.DataTree
        With one ``log_likelihood`` variable (chain, draw, item) and a ``posterior``.

    Returns
    -------
    elpd_i, pareto_k : numpy.ndarray, shape (n_items,)

    Examples
    --------
    >>> import xarray as xr
    >>> rng = np.random.default_rng(0)
    >>> p = rng.beta(8, 2, size=(2, 300))
    >>> ll = np.stack([np.log(p), np.log(p), np.log1p(-p)], axis=-1)  # two items alike, one not
    >>> tree = xr.DataTree.from_dict({"posterior": xr.Dataset({"p": (("chain", "draw"), p)}),
    ...     "log_likelihood": xr.Dataset({"correct": (("chain", "draw", "item"), ll)})})
    >>> elpd, k = distinct_item_loo(tree)
    >>> bool(elpd[0] == elpd[1] != elpd[2]), elpd.shape
    (True, (3,))
    """
    import arviz as az
    import xarray as xr

    log_lik = idata["log_likelihood"].to_dataset()
    if len(log_lik.data_vars) != 1:
        raise ConfigError(f"one log-likelihood variable is needed, got {sorted(map(str, log_lik.data_vars))}")
    values = next(iter(log_lik.data_vars.values()))
    (item_dim,) = [d for d in values.dims if d not in ("chain", "draw")]
    columns = np.ascontiguousarray(values.transpose(item_dim, "chain", "draw").to_numpy()).reshape(
        values.sizes[item_dim], -1)
    first, inverse = _distinct_rows(columns)
    reff = psis_relative_efficiency(idata)
    if reff is not None:  # one relative efficiency: every column's smoothing at once
        elpd, pareto_k = pareto_smoothed_loo(columns[first].T, reff)
        return elpd[inverse], pareto_k[inverse]
    tree = xr.DataTree.from_dict({"posterior": idata["posterior"].to_dataset(),
                                  "log_likelihood": log_lik.isel({item_dim: first})})
    loo = az.loo(tree, pointwise=True)
    elpd = np.asarray(loo.elpd_i, dtype=float).ravel()[inverse]
    pareto_k = np.asarray(loo.pareto_k, dtype=float).ravel()[inverse]
    return elpd, pareto_k


def _distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first row of each distinct value (ascending) and every row's group, by a 128-bit digest of its
    bytes, each row checked equal to its group's first (``np.unique(axis=0)`` sorts: 2.4 s for 10,000 x 3,000)."""
    import hashlib

    groups: dict[bytes, int] = {}
    first: list[int] = []
    inverse = np.empty(rows.shape[0], dtype=np.intp)
    for i, row in enumerate(rows):
        key = hashlib.blake2b(row.data, digest_size=16).digest()
        group = groups.setdefault(key, len(first))
        if group == len(first):
            first.append(i)
        elif not np.array_equal(row, rows[first[group]]):  # a digest collision: keep the row on its own
            group = len(first)
            first.append(i)
        inverse[i] = group
    return np.asarray(first, dtype=np.intp), inverse


def check_min_elpd_gain(value: Any) -> float:
    """``value`` as a float that is not NaN and not +inf (the ELPD-gain bound of stacking), or a one-line error.

    Examples
    --------
    >>> check_min_elpd_gain(4), check_min_elpd_gain(float("-inf"))
    (4.0, -inf)
    >>> check_min_elpd_gain("many")
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: min_elpd_gain must be a number (4 by default; -inf for plain stacking), got 'many'
    """
    try:
        gain = float(value)
    except (TypeError, ValueError):
        gain = float("nan")
    if np.isnan(gain) or gain == float("inf") or isinstance(value, bool):
        raise ConfigError(f"min_elpd_gain must be a number (4 by default; -inf for plain stacking), got {value!r}")
    return gain


def check_combination(value: Any) -> str:
    """``value`` if it is one of :data:`COMBINATIONS` (what the surface is above the ELPD-gain bound), else a one-line error.

    Examples
    --------
    >>> check_combination("stack")
    'stack'
    >>> check_combination("mix")
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: confidence_combination is 'select' (the fit alone once the labels show the confidence wrong; the default) or 'stack' (the stacking weights), got 'mix'
    """
    if not isinstance(value, str) or value not in COMBINATIONS:
        raise ConfigError("confidence_combination is 'select' (the fit alone once the labels show the confidence "
                          f"wrong; the default) or 'stack' (the stacking weights), got {value!r}")
    return value


def confidence_with_fit_spread(draws: Any, confidence: Any, *, iterations: int = 30) -> np.ndarray:
    """Each arm's posterior draws moved on the logit scale so that their mean is the arm's confidence.

    The draws of the confidence model in the stacked surface: the confidence's mean and the fit's
    uncertainty about the arm (:mod:`pbassess.surface.stacking`). Arm a's draws x become
    sigmoid(logit x - median(logit x) + d_a), with d_a solved by Newton's method so that their mean
    is the confidence (clipped to [1e-6, 1 - 1e-6], as the anchored model clips it). An arm whose
    draws are all equal gets the confidence itself.

    Parameters
    ----------
    draws : array_like, shape (S, A)
        Posterior draws of the arms' accuracies, in (0, 1).
    confidence : array_like, shape (A,)
        The arms' mean confidences (finite).
    iterations : int
        Newton steps at most (they stop when every mean is within 1e-12 of its confidence).

    Returns
    -------
    numpy.ndarray, shape (S, A)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> fit = 1 / (1 + np.exp(-rng.normal([0.0, 2.0], 0.3, size=(4000, 2))))  # arms near 0.5 and 0.88
    >>> moved = confidence_with_fit_spread(fit, [0.6, 0.95])
    >>> moved.mean(0).round(10).tolist()
    [0.6, 0.95]
    >>> logit = lambda p: np.log(p / (1 - p))
    >>> np.allclose(logit(moved).std(0), logit(fit).std(0))  # the fit's spread on the logit scale
    True
    """
    from scipy.special import expit, logit

    x = np.asarray(draws, dtype=float)
    target = np.clip(np.asarray(confidence, dtype=float), 1e-6, 1.0 - 1e-6)
    if x.ndim != 2 or target.shape != (x.shape[1],) or not np.all(np.isfinite(target)):
        raise ConfigError(f"draws (S, A) and A finite confidences are needed, got {x.shape} and {target.shape}")
    z = logit(np.clip(x, 1e-12, 1.0 - 1e-12))
    z -= np.median(z, axis=0)
    shift = logit(target)
    p = np.empty_like(z)  # one working array, filled in place (ACS: 3,000 x 2,554 draws, 5 steps)
    for _ in range(iterations):  # the mean of sigmoid(z + shift) rises with the shift: Newton converges
        expit(np.add(z, shift, out=p), out=p)
        mean = p.mean(axis=0)
        gap = mean - target
        if np.all(np.abs(gap) < 1e-12):
            return p
        slope = mean - np.einsum("ij,ij->j", p, p) / p.shape[0]  # the mean of p (1 - p)
        shift -= gap / np.maximum(slope, 1e-300)
    return expit(np.add(z, shift, out=p), out=p)


def stack_accuracy_draws(idata: Any, confidence: Any, weight: float) -> Any:
    """A copy of ``idata`` whose ``accuracy`` draws are the stacked mixture: a fraction ``weight`` of
    them replaced by the confidence model's draws.

    The confidence model's draws of an arm are the fit's, moved on the logit scale so that their mean is the
    arm's mean ``confidence`` (:func:`confidence_with_fit_spread`): the confidence's estimate with
    the uncertainty the labels leave, not an interval of zero width. The draws replaced are spread
    evenly over the chains and draws (deterministic: the same fit gives the same stacked surface);
    arms whose confidence is unknown (NaN) keep the fit's draws. Every other group and variable is
    the fit's own.

    Parameters
    ----------
    idata : xarray.DataTree
        With ``accuracy`` (chain, draw, arm) in its posterior.
    confidence : array_like, shape (A,)
    weight : float
        The confidence's stacking weight (:func:`compare_with_confidence`).

    Returns
    -------
    xarray.DataTree

    Examples
    --------
    >>> import xarray as xr
    >>> post = xr.Dataset({"accuracy": (("chain", "draw", "arm"), np.full((2, 5, 2), 0.5))})
    >>> tree = stack_accuracy_draws(xr.DataTree.from_dict({"posterior": post}), [0.9, np.nan], 0.4)
    >>> tree["posterior"]["accuracy"].mean(("chain", "draw")).values.round(2).tolist()  # 0.4 x 0.9 + 0.6 x 0.5
    [0.66, 0.5]
    """
    import xarray as xr

    if not 0.0 <= weight <= 1.0:
        raise ConfigError(f"a stacking weight is in [0, 1], got {weight}")
    tree = idata.copy()
    post = tree["posterior"].to_dataset()
    accuracy = post["accuracy"]
    n_total = accuracy.sizes["chain"] * accuracy.sizes["draw"]
    flat = accuracy.to_numpy().reshape(n_total, -1)
    n_replaced = int(round(weight * n_total))
    conf = np.asarray(confidence, dtype=float)
    known = np.flatnonzero(np.isfinite(conf))
    if n_replaced == n_total and known.size == conf.size:  # every draw the confidence's (ACS): no copy to mix into
        flat = confidence_with_fit_spread(flat, conf)
    elif n_replaced:
        picked = np.floor(np.arange(n_replaced) * (n_total / n_replaced)).astype(int)
        moved = confidence_with_fit_spread(flat[:, known], conf[known])
        flat = flat.copy()
        flat[np.ix_(picked, known)] = moved[picked]
    post["accuracy"] = accuracy.copy(data=flat.reshape(accuracy.shape))
    tree["posterior"] = xr.DataTree(post)
    return tree
