"""Classical and prediction-powered (PPI++) confidence intervals for a mean (plain NumPy).

* :func:`classical_interval`: the mean of the labeled values with a Wald (CLT) interval, or
  for 0/1 values the Wilson score, Agresti-Coull or exact Clopper-Pearson (Beta) interval.
  The default (``kind="auto"``) is Clopper-Pearson for 0/1 values and Wald otherwise.
* :func:`ppi_mean_interval`: the PPI++ estimator of Angelopoulos, Duchi and Zrnic (2023),
  ``lam * mean(f(unlabeled)) + mean(Y - lam * f(labeled))``, with the power-tuning
  ``lam = Cov_n(Y, f) / ((1 + n / N) Var(f))`` clipped to [0, 1] and the CLT interval with
  standard error ``sqrt(Var(lam f_unlabeled) / N + Var(Y - lam f) / n)``. ``lam = 0`` is the
  classical estimate; ``lam = 1`` is plain PPI. The numbers equal
  ``ppi_py.ppi_mean_pointestimate`` / ``ppi_py.ppi_mean_ci`` (``lam=None``) on the same inputs
  (tested), including their conventions (population variances, ``ddof = 1`` in the tuning
  denominator over labeled and unlabeled predictions together).

Both estimate the mean of a super-population from which the items were drawn; used on the
items of one pool they are (slightly) conservative for the pool's own mean.

**At the boundary** (accuracy near 1, few labels) the CLT intervals fail: with every label
correct the Wald and PPI++ standard errors are 0, and at accuracy 0.995 with 200 labels the
90% Wald interval has width 0 in 37% of label draws and covers 0.63. Hence the defaults:

* classical, 0/1 values: Clopper-Pearson, whose coverage is at least nominal for every true
  proportion and n. Exact binomial coverage of 90% intervals, minimum over p in [0.5, 1): Wilson
  0.80 (n = 20, 50, 200; at p = 0.989-0.999), Agresti-Coull 0.87 (n = 20, 50), Clopper-Pearson
  0.90; on the grid of ``benchmarks/coverage.py`` Wilson covers 0.83 at p = 0.99, n = 20.
* PPI++, 0/1 values (``kind="auto"``): the PPI++ CLT interval (identical to ``ppi_py``) when the
  labels hold at least :data:`BOUNDARY_COUNT` successes and as many failures; otherwise the hull of
  the PPI++ interval and the Clopper-Pearson interval of the labels. The CLT for the rectifier
  ``Y - lam f`` needs both outcomes well represented; with few of the rare outcome the
  rectifier is a handful of large jumps and its variance estimate is degenerate (0 when every
  label is correct, where the power-tuned ``lam`` is 0 too). The hull keeps the PPI++ point
  estimate and is never narrower than the exact interval of the labels alone, so its coverage
  is at least Clopper-Pearson's there; in the interior nothing changes.
* No interval of zero width is reported: a Wald or PPI++ CLT interval whose standard error is
  0 (every labeled value equal, or one labeled item) is "not available" (NaN bounds), as is any
  interval from no labels. Intervals of 0/1 values (and their estimates) are clipped to [0, 1].
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

from pbassess.constants import CI_PROB
from pbassess.counting import cell_counts
from pbassess.errors import ConfigError, DataError

__all__ = ["BOUNDARY_COUNT", "CLASSICAL_KINDS", "PPI_KINDS", "classical_interval", "classical_intervals", "ppi_lambda",
           "ppi_mean_interval", "ppi_mean_intervals"]

#: Interval kinds of :func:`classical_interval` (``"beta"`` is the old name of ``"exact"``).
CLASSICAL_KINDS: tuple[str, ...] = ("auto", "wald", "wilson", "agresti-coull", "exact", "beta")

#: Interval kinds of :func:`ppi_mean_interval`: ``auto`` (boundary-aware) or ``wald`` (``ppi_py``'s).
PPI_KINDS: tuple[str, ...] = ("auto", "wald")

#: Fewest labeled successes and failures for which the PPI++ CLT interval is used unchanged.
BOUNDARY_COUNT = 10

_NAN3 = (float("nan"), float("nan"), float("nan"))


def _is_binary(y: np.ndarray) -> bool:
    return bool(np.all((y == 0) | (y == 1)))


def _checked(mean: float, lower: float, upper: float, clip: bool) -> tuple[float, float, float]:
    """The interval, clipped to [0, 1] for 0/1 values; NaN bounds where it has no width.

    A zero-width interval from finitely many labels is never right, so none leaves this module.
    """
    if clip:   # a proportion's estimate and bounds lie in [0, 1] (PPI++ can step outside by a hair)
        mean = min(max(float(mean), 0.0), 1.0)
        lower, upper = max(float(lower), 0.0), min(float(upper), 1.0)
    if not upper > lower:  # zero width (or NaN): the method gives no interval here
        return float(mean), float("nan"), float("nan")
    assert upper > lower, "a zero-width interval must never be reported"
    return float(mean), float(lower), float(upper)


def _z(ci_prob: float) -> float:
    if not 0 < ci_prob < 1:
        raise ConfigError(f"the interval's coverage must be in (0, 1), got {ci_prob}")
    return float(stats.norm.ppf(0.5 + ci_prob / 2))


def classical_interval(values: Any, ci_prob: float = CI_PROB, kind: str = "auto") -> tuple[float, float, float]:
    """Mean of labeled values and its classical confidence interval.

    Parameters
    ----------
    values : array_like
        The observed per-item statistic of the labeled items.
    ci_prob : float
        Coverage of the interval.
    kind : {"auto", "wald", "wilson", "agresti-coull", "exact", "beta"}
        ``wald``: normal approximation, population standard deviation as in
        ``ppi_py.classical_mean_ci``; ``wilson``: Wilson score; ``agresti-coull``: Wald around the
        Wilson centre; ``exact`` (old name ``beta``): Clopper-Pearson. The last three need 0/1
        values. ``auto`` (default) is ``exact`` for 0/1 values and ``wald`` otherwise.

    Returns
    -------
    (mean, lower, upper) : tuple of float
        The mean is NaN without labeled values; the bounds are NaN when the method gives no
        interval (no labels; a Wald interval of values that are all equal, e.g. one item or
        every label correct) - never an interval of width 0. Intervals of 0/1 values are
        clipped to [0, 1].

    Examples
    --------
    >>> m, lo, hi = classical_interval([1, 1, 0, 1], kind="wilson")
    >>> round(m, 2), round(lo, 3), round(hi, 3)
    (0.75, 0.301, 0.954)
    >>> classical_interval([1] * 200, 0.9, kind="wald")      # every label correct: no Wald interval
    (1.0, nan, nan)
    >>> m, lo, hi = classical_interval([1] * 200, 0.9)       # Clopper-Pearson: [0.985, 1]
    >>> round(lo, 3), hi
    (0.985, 1.0)
    """
    if kind not in CLASSICAL_KINDS:
        raise ConfigError(f"unknown interval kind {kind!r} (choose from {', '.join(CLASSICAL_KINDS)})")
    y = np.asarray(values, dtype=float).ravel()
    n = y.size
    z = _z(ci_prob)
    if n == 0:
        return _NAN3
    mean = float(y.mean())
    binary = _is_binary(y)
    if kind == "auto":
        kind = "exact" if binary else "wald"
    if kind == "wald":
        half = z * float(y.std()) / np.sqrt(n)
        return _checked(mean, mean - half, mean + half, clip=binary)
    if not binary:
        raise DataError(f"the {kind} interval needs 0/1 values (e.g. accuracy); use kind='wald'")
    k = float(y.sum())
    if kind == "wilson":
        centre = (k + z**2 / 2) / (n + z**2)
        half = z * np.sqrt(n) / (n + z**2) * np.sqrt(mean * (1 - mean) + z**2 / (4 * n))
        lo, hi = centre - half, centre + half
        # at k = 0 or n the bound is exactly 0 or 1 (rounding could leave it a hair inside)
        return _checked(mean, 0.0 if k == 0 else lo, 1.0 if k == n else hi, clip=True)
    if kind == "agresti-coull":
        n_t = n + z**2
        p_t = (k + z**2 / 2) / n_t
        half = z * np.sqrt(p_t * (1 - p_t) / n_t)
        return _checked(mean, p_t - half, p_t + half, clip=True)
    tail = (1 - ci_prob) / 2
    lo = 0.0 if k == 0 else float(stats.beta.ppf(tail, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1 - tail, k + 1, n - k))
    return _checked(mean, lo, hi, clip=True)


def ppi_lambda(y: Any, f_labeled: Any, f_unlabeled: Any) -> float:
    """The power-tuning weight of PPI++ for a mean, clipped to [0, 1].

    ``lam = Cov_n(Y, f) / ((1 + n / N) Var_{ddof=1}(f over labeled and unlabeled))``, the
    minimiser of the estimator's asymptotic variance (PPI++, Angelopoulos et al. 2023).

    Parameters
    ----------
    y : array_like, shape (n,)
        Observed statistic on the labeled items.
    f_labeled : array_like, shape (n,)
        The model's predicted statistic on the same items.
    f_unlabeled : array_like, shape (N,)
        The model's predicted statistic on the unlabeled items.

    Returns
    -------
    float
        In [0, 1]; 0 with fewer than two labels or no unlabeled item.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> f = rng.random(50); y = (rng.random(50) < f).astype(float)
    >>> 0 <= ppi_lambda(y, f, rng.random(500)) <= 1
    True
    """
    y = np.asarray(y, dtype=float).ravel()
    f = np.asarray(f_labeled, dtype=float).ravel()
    fu = np.asarray(f_unlabeled, dtype=float).ravel()
    n, big_n = y.size, fu.size
    if n < 2 or big_n < 1:
        return 0.0
    cov = float(np.mean((y - y.mean()) * (f - f.mean())))
    var_f = float(np.var(np.concatenate([f, fu]), ddof=1))
    if var_f <= 0:
        return 0.0
    return float(np.clip(cov / ((1 + n / big_n) * var_f), 0.0, 1.0))


def ppi_mean_interval(y: Any, f_labeled: Any, f_unlabeled: Any, ci_prob: float = CI_PROB,
                      lam: float | None = None, kind: str = "auto") -> tuple[float, float, float, float]:
    """PPI++ estimate of a mean and its confidence interval.

    Parameters
    ----------
    y : array_like, shape (n,)
        Observed statistic on the labeled items.
    f_labeled : array_like, shape (n,)
        The model's predicted statistic on the same labeled items.
    f_unlabeled : array_like, shape (N,)
        The model's predicted statistic on the unlabeled items.
    ci_prob : float
        Coverage of the interval (``ppi_py``'s ``alpha = 1 - ci_prob``).
    lam : float, optional
        Weight of the predictions; ``None`` tunes it (:func:`ppi_lambda`).
    kind : {"auto", "wald"}
        ``wald``: the PPI++ CLT interval, equal to ``ppi_py.ppi_mean_ci``. ``auto`` (default): the
        same, except for 0/1 values with fewer than :data:`BOUNDARY_COUNT` labeled successes or
        failures, where it is the hull of that interval and the Clopper-Pearson interval of the
        labels (module docstring); 0/1 intervals are clipped to [0, 1].

    Returns
    -------
    (mean, lower, upper, lam) : tuple of float
        NaN estimates when fewer than two items are labeled or none is unlabeled; NaN bounds
        where the interval would have width 0 (``kind="wald"`` with a zero standard error).

    Examples
    --------
    >>> y = [1, 1, 0, 1, 1, 0, 1, 1]
    >>> f = [.9, .8, .4, .9, .7, .5, .95, .85]
    >>> m, lo, hi, lam = ppi_mean_interval(y, f, [.9, .6, .8, .7, .95, .5] * 20)
    >>> lo < m < hi and 0 <= lam <= 1
    True
    >>> m, lo, hi, lam = ppi_mean_interval([1] * 200, [.99] * 200, [.99] * 5000, 0.9)   # all correct
    >>> lam, round(lo, 3), hi                                  # lam = 0: the exact interval of the labels
    (0.0, 0.985, 1.0)
    """
    yv = np.asarray(y, dtype=float).ravel()
    f = np.asarray(f_labeled, dtype=float).ravel()
    fu = np.asarray(f_unlabeled, dtype=float).ravel()
    if f.shape != yv.shape:
        raise DataError(f"{yv.size} labeled values but {f.size} predictions for them")
    if kind not in PPI_KINDS:
        raise ConfigError(f"unknown PPI++ interval kind {kind!r} (choose from {', '.join(PPI_KINDS)})")
    z = _z(ci_prob)
    n, big_n = yv.size, fu.size
    if n < 2 or big_n < 1:
        return float("nan"), float("nan"), float("nan"), float("nan")
    if lam is None:
        lam = ppi_lambda(yv, f, fu)
    lam = float(lam)
    mean = float(lam * fu.mean() + np.mean(yv - lam * f))
    se = float(np.sqrt(np.var(lam * fu) / big_n + np.var(yv - lam * f) / n))
    lo, hi = mean - z * se, mean + z * se
    binary = _is_binary(yv)
    k = float(yv.sum())
    if kind == "auto" and binary and min(k, n - k) < BOUNDARY_COUNT:
        _, e_lo, e_hi = classical_interval(yv, ci_prob, "exact")
        lo, hi = min(lo, e_lo), max(hi, e_hi)
    return (*_checked(mean, lo, hi, clip=binary), lam)


# ----------------------------------------------------------------------------- many groups at once
def _group_mean_var(values: np.ndarray, codes: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Count, mean and population variance (two-pass, as ``np.var``) of ``values`` per group code."""
    count = cell_counts(codes, n_groups).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = cell_counts(codes, n_groups, weights=values) / count
        dev = values - mean[codes]
        var = cell_counts(codes, n_groups, weights=dev * dev) / count
    return count, mean, var


def _checked_many(mean: np.ndarray, lower: np.ndarray, upper: np.ndarray, clip: np.ndarray):
    """:func:`_checked` of arrays: 0/1 groups clipped to [0, 1], NaN bounds where the width is not positive."""
    mean = np.where(clip, np.clip(mean, 0.0, 1.0), mean)
    lower = np.where(clip, np.maximum(lower, 0.0), lower)
    upper = np.where(clip, np.minimum(upper, 1.0), upper)
    bad = ~(upper > lower)
    return mean, np.where(bad, np.nan, lower), np.where(bad, np.nan, upper)


def _exact_bounds(k: np.ndarray, n: np.ndarray, ci_prob: float) -> tuple[np.ndarray, np.ndarray]:
    tail = (1 - ci_prob) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(k == 0, 0.0, stats.beta.ppf(tail, np.maximum(k, 1e-300), n - k + 1))
        hi = np.where(k == n, 1.0, stats.beta.ppf(1 - tail, k + 1, np.maximum(n - k, 1e-300)))
    return lo, hi


def classical_intervals(values: Any, codes: Any, n_groups: int, ci_prob: float = CI_PROB,
                        kind: str = "auto") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`classical_interval` of every group at once (``estimate --by`` over thousands of groups).

    Parameters
    ----------
    values : array_like, shape (n,)
        The labeled items' statistic.
    codes : array_like of int, shape (n,)
        Each labeled item's group, in ``0..n_groups-1``.
    n_groups : int
    ci_prob, kind
        As in :func:`classical_interval` (``auto`` decides per group, as it would group by group).

    Returns
    -------
    (mean, lower, upper) : arrays of shape (n_groups,)
        The numbers of :func:`classical_interval` on each group's values (to rounding; tested).

    Examples
    --------
    >>> m, lo, hi = classical_intervals([1, 1, 0, 1, 1, 1], [0, 0, 0, 0, 1, 1], 3, 0.9)
    >>> m.round(3).tolist(), lo.round(3).tolist()[:2], hi.round(3).tolist()[:2]
    ([0.75, 1.0, nan], [0.249, 0.224], [0.987, 1.0])
    >>> [round(v, 3) for v in classical_interval([1, 1, 0, 1], 0.9)]
    [0.75, 0.249, 0.987]
    """
    if kind not in CLASSICAL_KINDS:
        raise ConfigError(f"unknown interval kind {kind!r} (choose from {', '.join(CLASSICAL_KINDS)})")
    y = np.asarray(values, dtype=float).ravel()
    g = np.asarray(codes, dtype=np.int64).ravel()
    z = _z(ci_prob)
    n, mean, var = _group_mean_var(y, g, n_groups)
    binary = cell_counts(g, n_groups, weights=((y != 0) & (y != 1)).astype(float)) == 0
    k = cell_counts(g, n_groups, weights=np.asarray(y, dtype=float))
    empty = n == 0
    if kind in ("wilson", "agresti-coull", "exact", "beta") and not binary[~empty].all():
        raise DataError(f"the {kind} interval needs 0/1 values (e.g. accuracy); use kind='wald'")
    with np.errstate(invalid="ignore", divide="ignore"):
        half = z * np.sqrt(var) / np.sqrt(n)
        wald = (mean - half, mean + half)
        if kind == "wilson":
            centre = (k + z**2 / 2) / (n + z**2)
            w = z * np.sqrt(n) / (n + z**2) * np.sqrt(mean * (1 - mean) + z**2 / (4 * n))
            bounds = (np.where(k == 0, 0.0, centre - w), np.where(k == n, 1.0, centre + w))
        elif kind == "agresti-coull":
            n_t = n + z**2
            p_t = (k + z**2 / 2) / n_t
            w = z * np.sqrt(p_t * (1 - p_t) / n_t)
            bounds = (p_t - w, p_t + w)
        elif kind in ("exact", "beta"):
            bounds = _exact_bounds(k, n, ci_prob)
        elif kind == "wald":
            bounds = wald
        else:                                           # auto: exact for 0/1 groups, Wald otherwise
            e_lo, e_hi = _exact_bounds(k, n, ci_prob)
            bounds = (np.where(binary, e_lo, wald[0]), np.where(binary, e_hi, wald[1]))
    clip = binary if kind in ("auto", "wald") else np.ones(n_groups, dtype=bool)
    mean, lo, hi = _checked_many(mean, bounds[0], bounds[1], clip)
    return np.where(empty, np.nan, mean), np.where(empty, np.nan, lo), np.where(empty, np.nan, hi)


def ppi_mean_intervals(y: Any, f_labeled: Any, codes_labeled: Any, f_unlabeled: Any, codes_unlabeled: Any,
                       n_groups: int, ci_prob: float = CI_PROB, kind: str = "auto"
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`ppi_mean_interval` (power-tuned lambda) of every group at once.

    Groups with fewer than two labeled items or no unlabeled one get NaN, as there.

    Returns
    -------
    (mean, lower, upper, lam) : arrays of shape (n_groups,)
        The numbers of :func:`ppi_mean_interval` on each group's items (to rounding; tested).

    Examples
    --------
    >>> y = np.array([1, 1, 0, 1, 1, 0, 1, 1.0]); f = np.array([.9, .8, .4, .9, .7, .5, .95, .85])
    >>> fu = np.array([.9, .6, .8, .7, .95, .5] * 20)
    >>> many = ppi_mean_intervals(y, f, np.zeros(8, int), fu, np.zeros(120, int), 1, 0.9)
    >>> one = ppi_mean_interval(y, f, fu, 0.9)
    >>> bool(np.allclose([v[0] for v in many], one))
    True
    """
    if kind not in PPI_KINDS:
        raise ConfigError(f"unknown PPI++ interval kind {kind!r} (choose from {', '.join(PPI_KINDS)})")
    yv = np.asarray(y, dtype=float).ravel()
    f = np.asarray(f_labeled, dtype=float).ravel()
    fu = np.asarray(f_unlabeled, dtype=float).ravel()
    gl = np.asarray(codes_labeled, dtype=np.int64).ravel()
    gu = np.asarray(codes_unlabeled, dtype=np.int64).ravel()
    z = _z(ci_prob)
    n, y_mean, _ = _group_mean_var(yv, gl, n_groups)
    big_n, fu_mean, _ = _group_mean_var(fu, gu, n_groups)
    _, f_mean, _ = _group_mean_var(f, gl, n_groups)
    ok = (n >= 2) & (big_n >= 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = cell_counts(gl, n_groups, weights=(yv - y_mean[gl]) * (f - f_mean[gl])) / n
        both = np.concatenate([f, fu])
        gb = np.concatenate([gl, gu])
        total, both_mean, _ = _group_mean_var(both, gb, n_groups)
        var_f = cell_counts(gb, n_groups, weights=(both - both_mean[gb]) ** 2) / (total - 1)
        lam = np.where(var_f > 0, np.clip(cov / ((1 + n / big_n) * var_f), 0.0, 1.0), 0.0)
        rect = yv - lam[gl] * f
        _, rect_mean, rect_var = _group_mean_var(rect, gl, n_groups)
        _, _, fu_var = _group_mean_var(lam[gu] * fu, gu, n_groups)
        mean = lam * fu_mean + rect_mean
        se = np.sqrt(fu_var / big_n + rect_var / n)
    lo, hi = mean - z * se, mean + z * se
    binary = cell_counts(gl, n_groups, weights=((yv != 0) & (yv != 1)).astype(float)) == 0
    k = cell_counts(gl, n_groups, weights=np.asarray(yv, dtype=float))
    if kind == "auto":
        hull = binary & (np.minimum(k, n - k) < BOUNDARY_COUNT)
        e_lo, e_hi = _exact_bounds(k, n, ci_prob)
        lo = np.where(hull, np.minimum(lo, e_lo), lo)
        hi = np.where(hull, np.maximum(hi, e_hi), hi)
    mean, lo, hi = _checked_many(mean, lo, hi, binary)
    nan = np.full(n_groups, np.nan)
    return (np.where(ok, mean, nan), np.where(ok, lo, nan), np.where(ok, hi, nan), np.where(ok, lam, nan))
