"""Classical and prediction-powered (PPI++) confidence intervals for a mean (plain NumPy).

* :func:`classical_interval`: the mean of the labeled values with a Wald (CLT) interval, or
  for 0/1 values the Wilson score interval or the exact Clopper-Pearson (Beta) interval.
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
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

from pbassess.constants import CI_PROB
from pbassess.errors import ConfigError, DataError

__all__ = ["CLASSICAL_KINDS", "classical_interval", "ppi_lambda", "ppi_mean_interval"]

#: Interval kinds of :func:`classical_interval`.
CLASSICAL_KINDS: tuple[str, ...] = ("wald", "wilson", "beta")


def _z(ci_prob: float) -> float:
    if not 0 < ci_prob < 1:
        raise ConfigError(f"the interval's coverage must be in (0, 1), got {ci_prob}")
    return float(stats.norm.ppf(0.5 + ci_prob / 2))


def classical_interval(values: Any, ci_prob: float = CI_PROB, kind: str = "wald") -> tuple[float, float, float]:
    """Mean of labeled values and its classical confidence interval.

    Parameters
    ----------
    values : array_like
        The observed per-item statistic of the labeled items.
    ci_prob : float
        Coverage of the interval.
    kind : {"wald", "wilson", "beta"}
        Wald (normal approximation, population standard deviation as in ``ppi_py.classical_mean_ci``),
        Wilson score, or Clopper-Pearson (exact Beta quantiles); the last two need 0/1 values.

    Returns
    -------
    (mean, lower, upper) : tuple of float
        NaN when there is no labeled value.

    Examples
    --------
    >>> m, lo, hi = classical_interval([1, 1, 0, 1], kind="wilson")
    >>> round(m, 2), round(lo, 3), round(hi, 3)
    (0.75, 0.301, 0.954)
    """
    if kind not in CLASSICAL_KINDS:
        raise ConfigError(f"unknown interval kind {kind!r} (choose from {', '.join(CLASSICAL_KINDS)})")
    y = np.asarray(values, dtype=float).ravel()
    n = y.size
    z = _z(ci_prob)
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    mean = float(y.mean())
    if kind == "wald":
        half = z * float(y.std()) / np.sqrt(n)
        return mean, mean - half, mean + half
    if not np.all((y == 0) | (y == 1)):
        raise DataError(f"the {kind} interval needs 0/1 values (e.g. accuracy); use kind='wald'")
    k = float(y.sum())
    if kind == "wilson":
        centre = (k + z**2 / 2) / (n + z**2)
        half = z * np.sqrt(n) / (n + z**2) * np.sqrt(mean * (1 - mean) + z**2 / (4 * n))
        return mean, float(centre - half), float(centre + half)
    tail = (1 - ci_prob) / 2
    lo = 0.0 if k == 0 else float(stats.beta.ppf(tail, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1 - tail, k + 1, n - k))
    return mean, lo, hi


def ppi_lambda(y: Any, f_labeled: Any, f_unlabeled: Any) -> float:
    """The power-tuning weight of PPI++ for a mean, clipped to [0, 1].

    ``lam = Cov_n(Y, f) / ((1 + n / N) Var_{ddof=1}(f over labeled and unlabeled))``, the
    minimiser of the estimator's asymptotic variance (PPI++, Angelopoulos et al. 2023).

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
                      lam: float | None = None) -> tuple[float, float, float, float]:
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

    Returns
    -------
    (mean, lower, upper, lam) : tuple of float
        NaN estimates when fewer than two items are labeled or none is unlabeled.

    Examples
    --------
    >>> y = [1, 1, 0, 1, 1, 0, 1, 1]
    >>> f = [.9, .8, .4, .9, .7, .5, .95, .85]
    >>> m, lo, hi, lam = ppi_mean_interval(y, f, [.9, .6, .8, .7, .95, .5] * 20)
    >>> lo < m < hi and 0 <= lam <= 1
    True
    """
    yv = np.asarray(y, dtype=float).ravel()
    f = np.asarray(f_labeled, dtype=float).ravel()
    fu = np.asarray(f_unlabeled, dtype=float).ravel()
    if f.shape != yv.shape:
        raise DataError(f"{yv.size} labeled values but {f.size} predictions for them")
    z = _z(ci_prob)
    n, big_n = yv.size, fu.size
    if n < 2 or big_n < 1:
        return float("nan"), float("nan"), float("nan"), float("nan")
    if lam is None:
        lam = ppi_lambda(yv, f, fu)
    lam = float(lam)
    mean = float(lam * fu.mean() + np.mean(yv - lam * f))
    se = float(np.sqrt(np.var(lam * fu) / big_n + np.var(yv - lam * f) / n))
    return mean, mean - z * se, mean + z * se, lam
