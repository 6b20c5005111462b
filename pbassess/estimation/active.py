"""Active estimation: label where the model is unsure, weight by the inverse labeling probability.

Active statistical inference (Zrnic and Candes, 2024) for the mean of a per-item statistic Y
with a model prediction f of it (for accuracy: Y = correct, f = the confidence c):

* **Labeling rule.** Items are visited in a random order in ``batches``; before each batch the
  remaining label budget is spread over the remaining items with probabilities
  ``pi_i proportional to (1 - eta) u_i / mean(u) + eta``, ``u_i = sqrt(c_i (1 - c_i))`` - the
  standard deviation of Y - f when the model is calibrated, which is the variance-optimal
  rule of the paper - mixed with a uniform share ``eta`` so that no pi is tiny. Item i is
  labeled when an independent uniform falls below pi_i (Poisson sampling). The pi of a batch
  depend on the labels spent so far (adaptive), but each is fixed before its item's coin is
  tossed, which is all the estimator needs.
* **Estimator.** ``theta = mean_i [lam f_i + (Y_i - lam f_i) xi_i / pi_i]`` over the N items of a
  region (xi_i = 1 when labeled): unbiased for every lam; lam is power-tuned to the value that
  minimises the empirical variance of the terms (clipped to [0, 1]); the interval is
  ``theta +- z sd(terms) / sqrt(N)`` (martingale CLT), which stays valid under the adaptive
  rule. The same estimator with pi = n / N and lam = 0 is the classical mean of a uniform sample.
* **Skewness correction** (default). With few labels and a rare outcome (errors of an accurate
  model) the terms are strongly skewed - a few labeled errors carry large negative weights - and
  the symmetric interval misses mostly on one side (the estimate is too high when few errors
  were drawn): coverage 0.87 on SVHN at n = 100 (accuracy 0.97), which neither a t quantile, the
  Horvitz-Thompson variance nor a bootstrap over the labels changes (all 0.87-0.88, 1,000 draws).
  Johnson's (1978) modified t, ``(d + m3 / (6 s^2 N) + m3 d^2 / (3 s^4)) / (s / sqrt(N))`` with
  ``d = theta_hat - theta`` and ``m3`` the terms' third central moment, removes the skewness term
  of the statistic's Edgeworth expansion; inverting it gives an asymmetric interval (0.94 on
  SVHN at n = 100, unchanged where the terms are near-symmetric).
* **Boundary** (default, 0/1 statistics). With fewer than
  :data:`~pbassess.estimation.frequentist.BOUNDARY_COUNT` labeled errors (or successes) even the
  corrected interval fails: at accuracy 0.99 with 20 labels most draws label no error, the terms
  vary only through the predictions, and the 90% interval covered 0.32 (0.63 at 0.995 with 50
  labels; ``benchmarks/coverage.py``). There the interval is the hull of the corrected one and
  the Clopper-Pearson interval at the Kish effective sample size (Korn and Graubard, 1998, for
  proportions from weighted samples with few events): ``n_eff = (sum w)^2 / sum w^2`` over the
  labeled items' weights ``w = 1 / pi``, ``k_eff = n_eff * p_w`` with ``p_w`` the weighted
  (Hajek) proportion of the labels, Beta quantiles at non-integer counts.
* No interval of width zero: where the terms do not vary the bounds are NaN; 0/1 intervals are
  clipped to [0, 1].
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

from pbassess.constants import CI_PROB
from pbassess.errors import ConfigError, DataError
from pbassess.estimation.frequentist import BOUNDARY_COUNT
from pbassess.stats.sampling import as_generator

__all__ = [
    "active_sample", "chunk_probabilities", "effective_clopper_pearson", "inclusion_probabilities", "ipw_mean_interval",
    "simulate_estimation",
    "skew_corrected_interval", "tail_statistics", "uncertainty_weights",
]

#: Default share of the uniform component of the labeling rule.
DEFAULT_UNIFORM_SHARE = 0.2


def uncertainty_weights(confidence: Any, uniform_share: float = DEFAULT_UNIFORM_SHARE) -> np.ndarray:
    """Relative labeling weights ``(1 - eta) u / mean(u) + eta`` with ``u = sqrt(c (1 - c))`` (mean 1).

    Parameters
    ----------
    confidence : array_like, shape (N,)
    uniform_share : float
        ``eta`` in [0, 1].

    Returns
    -------
    ndarray, shape (N,)

    Examples
    --------
    >>> uncertainty_weights([0.5, 0.9, 1.0], uniform_share=0.0).round(3).tolist()
    [1.875, 1.125, 0.0]
    """
    if not 0.0 <= float(uniform_share) <= 1.0:
        raise ConfigError(f"uniform_share must lie in [0, 1], got {uniform_share}")
    c = np.clip(np.asarray(confidence, dtype=float), 0.0, 1.0)
    u = np.sqrt(c * (1.0 - c))
    mean_u = u.mean()
    if mean_u <= 0:
        return np.ones_like(u)
    return (1.0 - uniform_share) * u / mean_u + uniform_share


def inclusion_probabilities(weights: Any, budget: float) -> np.ndarray:
    """Probabilities ``pi_i = min(1, t w_i)`` with ``sum pi = budget`` (capped mass re-spread).

    Examples
    --------
    >>> inclusion_probabilities([1, 1, 8], 2).round(3).tolist()
    [0.5, 0.5, 1.0]
    """
    w = np.asarray(weights, dtype=float)
    if (w < 0).any():
        raise ConfigError("labeling weights must be non-negative")
    budget = float(budget)
    if budget >= np.count_nonzero(w > 0):
        return (w > 0).astype(float)
    pi = np.zeros_like(w)
    free = w > 0
    left = budget
    for _ in range(w.size + 1):
        scale = left / w[free].sum()
        pi[free] = scale * w[free]
        over = free & (pi >= 1.0)
        if not over.any():
            break
        pi[over] = 1.0
        free &= ~over
        left = budget - np.count_nonzero(pi >= 1.0)
    return np.clip(pi, 0.0, 1.0)


def tail_statistics(w_seq: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sum, maximum and count of positive weights of every tail ``w_seq[i:]`` (weights in visiting order).

    Examples
    --------
    >>> [t.tolist() for t in tail_statistics(np.array([1.0, 0.0, 2.0]))]
    [[3.0, 2.0, 2.0], [2.0, 2.0, 2.0], [2, 1, 1]]
    """
    tail_sum = np.cumsum(w_seq[::-1])[::-1]
    tail_max = np.maximum.accumulate(w_seq[::-1])[::-1]
    tail_pos = np.cumsum((w_seq > 0)[::-1])[::-1]
    return tail_sum, tail_max, tail_pos


def chunk_probabilities(w_seq: np.ndarray, tails: tuple[np.ndarray, np.ndarray, np.ndarray], start: int,
                        stop: int, left: float) -> np.ndarray:
    """Inclusion probabilities of the items ``w_seq[start:stop]`` when ``left`` labels remain for the
    tail ``w_seq[start:]``: ``inclusion_probabilities(w_seq[start:], left)[: stop - start]``, computed
    from the tail sums (``left * w / sum``) whenever no probability reaches 1.

    The one computation shared by :func:`active_sample` and the labeling session, so both record
    the same probabilities to the last bit.

    Examples
    --------
    >>> w = np.array([1.0, 2.0, 3.0, 4.0])
    >>> chunk_probabilities(w, tail_statistics(w), 1, 3, 1.8).round(3).tolist()
    [0.4, 0.6]
    """
    tail_sum, tail_max, tail_pos = tails
    if left <= 0:
        return np.zeros(stop - start)
    if left < tail_pos[start] and left * tail_max[start] < tail_sum[start]:
        return (left / tail_sum[start]) * w_seq[start:stop]
    return inclusion_probabilities(w_seq[start:], left)[: stop - start]


def active_sample(confidence: Any, budget: int, *, uniform_share: float = DEFAULT_UNIFORM_SHARE,
                  batches: int = 10, seed: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Choose items to label by the adaptive uncertainty rule (see the module docstring).

    Parameters
    ----------
    confidence : array_like, shape (N,)
        The model's confidence on every pool item.
    budget : int
        Expected number of labels.
    uniform_share : float
        The uniform share ``eta`` mixed into the weights.
    batches : int
        Batches of the random visiting order (probabilities are recomputed before each).
    seed : int or numpy.random.Generator, optional

    Returns
    -------
    (labeled, pi) : (ndarray of bool, ndarray of float), shape (N,)
        Which items were labeled and the probability each had when its coin was tossed.

    Examples
    --------
    >>> conf = np.linspace(0.5, 1.0, 1000)
    >>> labeled, pi = active_sample(conf, 100, seed=0)
    >>> bool(70 < labeled.sum() < 130), bool(pi[conf < 0.6].mean() > pi[conf > 0.95].mean())
    (True, True)
    """
    rng = as_generator(seed)
    conf = np.asarray(confidence, dtype=float)
    n_items = conf.size
    if not 1 <= int(budget) <= n_items:
        raise ConfigError(f"the label budget must be between 1 and the pool size {n_items}, got {budget}")
    if int(batches) < 1:
        raise ConfigError(f"batches must be a positive integer, got {batches}")
    w = uncertainty_weights(conf, uniform_share)
    order = rng.permutation(n_items)
    labeled = np.zeros(n_items, dtype=bool)
    pi = np.zeros(n_items)
    spent = 0
    floor = 0.25 * float(budget) / n_items
    pos = 0
    w_seq = w[order]
    tails = tail_statistics(w_seq)
    for chunk in np.array_split(order, int(batches)):
        start = pos
        pos += chunk.size
        left = max(float(budget) - spent, 0.0)
        probs = chunk_probabilities(w_seq, tails, start, pos, left)
        # a floor keeps every weight 1 / pi bounded (and the estimator unbiased) even if a
        # batch overspends; it costs at most a quarter of the budget in expectation
        probs = np.maximum(probs, floor)
        pi[chunk] = probs
        hits = rng.random(chunk.size) < probs
        labeled[chunk] = hits
        spent += int(hits.sum())
    return labeled, pi


def ipw_mean_interval(y: Any, f: Any, pi: Any, labeled: Any, ci_prob: float = CI_PROB,
                      lam: float | None = None, skew_correction: bool = True,
                      boundary: bool = True) -> tuple[float, float, float, float]:
    """Inverse-probability-weighted (active) estimate of a mean and its CLT interval.

    Parameters
    ----------
    y : array_like, shape (N,)
        Observed statistic (ignored where not labeled; NaN allowed there).
    f : array_like, shape (N,)
        The model's prediction of the statistic for every item.
    pi : array_like, shape (N,)
        Labeling probability of every item (positive).
    labeled : array_like of bool, shape (N,)
    ci_prob : float
    lam : float, optional
        Weight of the predictions; ``None`` tunes it.
    skew_correction : bool
        Johnson's skewness-corrected interval (module docstring); ``False`` gives the symmetric
        CLT interval ``mean +- z sd / sqrt(N)``.
    boundary : bool
        For 0/1 statistics with few labeled errors or successes, the hull with the
        effective-sample-size Clopper-Pearson interval (module docstring); ``False`` gives the
        interval of ``skew_correction`` alone (the behaviour before 0.x).

    Returns
    -------
    (mean, lower, upper, lam) : tuple of float
        NaN bounds where the interval would have width 0; 0/1 intervals lie in [0, 1].

    Examples
    --------
    >>> rng = np.random.default_rng(3)
    >>> f = rng.uniform(0.5, 1, 5000); y = (rng.random(5000) < f).astype(float)
    >>> pi = np.full(5000, 0.1); xi = rng.random(5000) < pi
    >>> m, lo, hi, lam = ipw_mean_interval(y, f, pi, xi)
    >>> bool(lo < y.mean() < hi), lam > 0.5
    (True, True)
    >>> y1 = np.ones(5000); m, lo, hi, _ = ipw_mean_interval(y1, f, pi, xi, 0.9)   # no labeled error
    >>> hi, bool(0.9 < lo < 0.999)
    (1.0, True)
    """
    fv = np.asarray(f, dtype=float).ravel()
    p = np.asarray(pi, dtype=float).ravel()
    xi = np.asarray(labeled, dtype=bool).ravel()
    yv = np.where(xi, np.asarray(y, dtype=float).ravel(), 0.0)
    if not (fv.size == p.size == xi.size == yv.size):
        raise DataError("y, f, pi and labeled must have one value per item")
    if (p[xi] <= 0).any() or (p > 1).any():
        raise DataError("labeling probabilities must lie in (0, 1] for labeled items")
    if not 0 < ci_prob < 1:
        raise ConfigError(f"the interval's coverage must be in (0, 1), got {ci_prob}")
    n_items = fv.size
    if n_items < 2 or xi.sum() < 2:
        return float("nan"), float("nan"), float("nan"), float("nan")
    ratio = np.where(xi, 1.0 / np.where(xi, p, 1.0), 0.0)
    a = yv * ratio
    b = fv * (1.0 - ratio)
    if lam is None:
        var_b = float(np.var(b))
        lam = 0.0 if var_b <= 0 else float(np.clip(-np.mean((a - a.mean()) * (b - b.mean())) / var_b, 0.0, 1.0))
    terms = a + float(lam) * b
    mean = float(terms.mean())
    z = float(stats.norm.ppf(0.5 + ci_prob / 2))
    if skew_correction:
        lower, upper = skew_corrected_interval(terms, z)
    else:
        half = z * float(terms.std()) / np.sqrt(n_items)
        lower, upper = mean - half, mean + half
    y_lab = yv[xi]
    binary = bool(np.all((y_lab == 0) | (y_lab == 1)))
    k = float(y_lab.sum())
    if boundary and binary and min(k, y_lab.size - k) < BOUNDARY_COUNT:
        e_lo, e_hi = effective_clopper_pearson(y_lab, ratio[xi], ci_prob)
        lower, upper = min(lower, e_lo), max(upper, e_hi)
    if binary:
        lower, upper = max(lower, 0.0), min(upper, 1.0)
    if not upper > lower:          # the method gives no interval here: say so, never width 0
        return mean, float("nan"), float("nan"), float(lam)
    return mean, float(lower), float(upper), float(lam)


def effective_clopper_pearson(y: Any, weights: Any, ci_prob: float = CI_PROB) -> tuple[float, float]:
    """Clopper-Pearson interval of a weighted 0/1 sample at its Kish effective size (Korn and Graubard, 1998).

    ``n_eff = (sum w)^2 / sum w^2``, ``k_eff = n_eff * sum(w y) / sum(w)``; the bounds are the
    Beta quantiles of the exact interval at these (non-integer) counts, 0 and 1 at ``k_eff = 0``
    and ``n_eff``. Equal weights give the ordinary Clopper-Pearson interval.

    Examples
    --------
    >>> lo, hi = effective_clopper_pearson([1] * 19 + [0], np.ones(20), 0.95)   # = Clopper-Pearson 19/20
    >>> round(lo, 4), round(hi, 4)
    (0.7513, 0.9987)
    >>> effective_clopper_pearson([1, 1, 1], [1.0, 2.0, 3.0], 0.9)[1]
    1.0
    """
    yv = np.asarray(y, dtype=float).ravel()
    w = np.asarray(weights, dtype=float).ravel()
    if yv.size == 0 or w.sum() <= 0:
        return float("nan"), float("nan")
    n_eff = float(w.sum() ** 2 / np.sum(w**2))
    p_w = float(np.sum(w * yv) / w.sum())
    k_eff = n_eff * p_w
    tail = (1 - ci_prob) / 2
    lo = 0.0 if p_w <= 0 else float(stats.beta.ppf(tail, k_eff, n_eff - k_eff + 1))
    hi = 1.0 if p_w >= 1 else float(stats.beta.ppf(1 - tail, k_eff + 1, n_eff - k_eff))
    return lo, hi


def skew_corrected_interval(values: Any, z: float) -> tuple[float, float]:
    """Interval for a mean from Johnson's (1978) skewness-corrected t statistic.

    ``t1 = (d + m3 / (6 s^2 n) + m3 d^2 / (3 s^4)) / (s / sqrt(n))`` with ``d = mean - mu``,
    ``s^2`` and ``m3`` the second and third central moments of ``values``; the interval is the set
    of mu with ``|t1| <= z``, solved as a quadratic in d (the root that tends to the Wald one as
    ``m3 -> 0``; where the quadratic never reaches ``z`` its turning point is the end).

    Examples
    --------
    >>> lo, hi = skew_corrected_interval([1.0, 2.0, 3.0, 4.0], 1.96)        # symmetric values: Wald
    >>> round(lo, 4), round(hi, 4)
    (1.4043, 3.5957)
    >>> lo, hi = skew_corrected_interval([0.0] * 18 + [5.0, 9.0], 1.96)     # right-skewed: longer upper side
    >>> bool(hi - 0.7 > 0.7 - lo)
    True
    """
    x = np.asarray(values, dtype=float).ravel()
    n = x.size
    mean = float(x.mean())
    dev = x - mean
    var = float(np.mean(dev**2))
    if n < 2 or var <= 0:
        return mean, mean
    m3 = float(np.mean(dev**3))
    shift = m3 / (6 * var * n)
    curve = m3 / (3 * var**2)
    ends = []
    for target in (-z * np.sqrt(var / n), z * np.sqrt(var / n)):
        if abs(curve * target) < 1e-12:
            d = target - shift
        else:
            disc = 1.0 - 4.0 * curve * (shift - target)
            d = (-1.0 + np.sqrt(disc)) / (2.0 * curve) if disc > 0 else -1.0 / (2.0 * curve)
        ends.append(mean - d)
    return float(min(ends)), float(max(ends))


def simulate_estimation(preds: Any, budgets: Any = (100, 200, 500, 1000), *,
                        strategies: Any = ("random-item", "uncertainty"), runs: int = 100,
                        ci_prob: float = CI_PROB, uniform_share: float = DEFAULT_UNIFORM_SHARE, seed: Any = 0):
    """Replay estimation of the pool's accuracy on a fully labeled pool (target ``estimation``).

    ``random-item``: n items drawn uniformly, the classical interval (Clopper-Pearson for 0/1
    values, :func:`~pbassess.estimation.frequentist.classical_interval`); ``uncertainty``: the
    adaptive uncertainty rule with n labels in expectation and :func:`ipw_mean_interval`.
    The truth is the pool's accuracy.

    Parameters
    ----------
    preds : Predictions
        A fully labeled pool.
    budgets : sequence of int
        Label budgets.
    strategies : sequence of {"random-item", "uncertainty"}
    runs : int
        Replications per strategy and budget.
    ci_prob : float
        Coverage of the intervals.
    uniform_share : float
        The uniform share of the uncertainty rule.
    seed : int or numpy.random.Generator

    Returns
    -------
    xarray.Dataset
        ``estimate``, ``lower``, ``upper``, ``labels`` (strategy, budget, run) and per
        (strategy, budget) ``coverage`` and ``width``; attribute ``truth``.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.uniform(0.5, 1, 2000)
    >>> p = Predictions.from_top1(np.zeros(2000, int), conf, np.where(rng.random(2000) < conf, 0, 1),
    ...                           classes=["a", "b"])
    >>> ds = simulate_estimation(p, [100], runs=20, seed=1)
    >>> dict(ds["estimate"].sizes), bool((ds["coverage"] > 0.7).all())
    ({'strategy': 2, 'budget': 1, 'run': 20}, True)
    """
    import xarray as xr

    from pbassess.estimation.frequentist import classical_interval

    names = [s.strip() for s in strategies.split(",")] if isinstance(strategies, str) else list(strategies)
    for s in names:
        if s not in ("random-item", "uncertainty"):
            raise ConfigError(f"strategy {s!r} does not estimate (target 'estimation' takes random-item, uncertainty)")
    if preds.n_labeled != preds.n_items:
        raise DataError(f"simulation needs the true label of every item; {preds.n_items - preds.n_labeled} are unlabeled")
    sizes = [int(b) for b in np.atleast_1d(budgets)]
    conf = np.asarray(preds.confidence, dtype=float)
    y = preds.correct.astype(float)
    out = np.full((4, len(names), len(sizes), int(runs)), np.nan)
    root = np.random.SeedSequence(None if seed is None else int(seed) if not isinstance(seed, np.random.Generator)
                                  else int(seed.integers(2**32)))
    for bi, n in enumerate(sizes):
        for r, child in enumerate(root.spawn(int(runs))):
            rng = np.random.default_rng(child)
            for si, s in enumerate(names):
                if s == "random-item":
                    idx = rng.choice(y.size, n, replace=False)
                    out[:3, si, bi, r] = classical_interval(y[idx], ci_prob)
                    out[3, si, bi, r] = n
                else:
                    chosen, pi = active_sample(conf, n, uniform_share=uniform_share, seed=rng)
                    out[:3, si, bi, r] = ipw_mean_interval(y, conf, pi, chosen, ci_prob)[:3]
                    out[3, si, bi, r] = chosen.sum()
    dims = ("strategy", "budget", "run")
    ds = xr.Dataset({k: (dims, out[i]) for i, k in enumerate(("estimate", "lower", "upper", "labels"))},
                    coords={"strategy": names, "budget": sizes, "run": np.arange(int(runs))},
                    attrs={"truth": float(y.mean()), "target": "estimation", "ci_prob": float(ci_prob)})
    ds["coverage"] = ((ds["lower"] <= ds.attrs["truth"]) & (ds.attrs["truth"] <= ds["upper"])).mean("run")
    ds["width"] = (ds["upper"] - ds["lower"]).mean("run")
    return ds
