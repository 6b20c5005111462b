"""Posteriors of the shift metrics per level, and the probability that a metric worsens.

* Accuracy: conjugate Beta-binomial, ``Beta(a + k, b + n - k)`` (uniform prior by default).
* NLL, Brier score, entropy: the Bayesian bootstrap (Rubin 1981): the mean under Dirichlet(1,
  ..., 1) weights over the level's items, i.e. the posterior of the mean of a statistic under
  a Dirichlet process with vanishing concentration on the observed items.
* ECE: each confidence bin's accuracy ``theta_b ~ Beta(pc * s_b + k_b, pc * (1 - s_b) + n_b -
  k_b)`` (the informed prior of ``assess_calibration``, centred at the bin's mean confidence
  ``s_b``), and ``ECE = sum_b (n_b / N) |theta_b - s_b|`` per draw.

Levels are independent a posteriori, so draws of different levels are independent and
``P(metric at level i+1 > metric at level i)`` and ``P(monotone)`` are Monte Carlo averages of
indicators over the joint draws (:func:`prob_worsens`). A hierarchical alternative that pools
accuracy across levels lives in :mod:`pbassess.shift.hierarchical`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.errors import ConfigError
from pbassess.stats.sampling import as_generator

__all__ = ["accuracy_draws", "bayesian_bootstrap_mean", "prob_worsens"]


def accuracy_draws(correct: Any, n: Any, n_draws: int, seed: Any = None,
                   prior: tuple[float, float] = (1.0, 1.0)) -> np.ndarray:
    """Draws of each level's accuracy from its conjugate Beta posterior.

    Parameters
    ----------
    correct, n : array_like, shape (L,)
        Correct and labeled items per level.
    prior : (a, b)
        Beta prior (default uniform).

    Returns
    -------
    ndarray, shape (n_draws, L)

    Examples
    --------
    >>> d = accuracy_draws([90], [100], 20000, seed=0)
    >>> bool(abs(d.mean() - 91 / 102) < 0.002)
    True
    """
    from pbassess.stats.sampling import beta_draws

    k = np.atleast_1d(np.asarray(correct, dtype=float))
    m = np.atleast_1d(np.asarray(n, dtype=float))
    if (k < 0).any() or (k > m).any():
        raise ConfigError("correct counts must lie between 0 and the number of labeled items")
    return beta_draws(prior[0] + k, prior[1] + m - k, n_draws, seed=seed)


def bayesian_bootstrap_mean(values: Any, n_draws: int, seed: Any = None) -> np.ndarray:
    """Bayesian-bootstrap draws of the mean of ``values``: ``sum_i w_i x_i``, w ~ Dirichlet(1).

    The draws have mean ``mean(x)`` and variance ``var_pop(x) / (N + 1)`` (population
    variance), the closed form the tests check. ``values`` of shape (N, S) gives draws of S
    means under the same weights, shape (n_draws, S) (joint draws of e.g. NLL and Brier).

    Parameters
    ----------
    values : array_like, shape (N,) or (N, S)
        Per-item values.
    n_draws : int
    seed : int or numpy.random.Generator, optional

    Returns
    -------
    ndarray, shape (n_draws,) or (n_draws, S)

    Examples
    --------
    >>> d = bayesian_bootstrap_mean([0.0, 1.0], 40000, seed=1)
    >>> bool(abs(d.mean() - 0.5) < 0.01), bool(abs(d.var() - 0.25 / 3) < 0.005)
    (True, True)
    """
    x = np.asarray(values, dtype=float)
    flat = x.ndim == 1
    x = x.reshape(x.shape[0], -1)
    if x.shape[0] == 0:
        out = np.full((int(n_draws), x.shape[1]), np.nan)
        return out[:, 0] if flat else out
    rng = as_generator(seed)
    out = np.empty((int(n_draws), x.shape[1]))
    chunk = max(1, 2_000_000 // x.shape[0])  # keep the weight matrix near 16 MB
    for start in range(0, int(n_draws), chunk):
        stop = min(int(n_draws), start + chunk)
        w = rng.standard_exponential((stop - start, x.shape[0]))  # Gamma(1) / sum = Dirichlet(1)
        out[start:stop] = (w @ x) / w.sum(axis=1)[:, None]
    return out[:, 0] if flat else out


def prob_worsens(draws: Any, *, higher_is_worse: bool = True) -> dict[str, Any]:
    """Probability that a metric worsens from each level to the next, and monotonically.

    Parameters
    ----------
    draws : array_like, shape (n_draws, L)
        Joint posterior draws of the metric at L ordered levels.
    higher_is_worse : bool
        True for NLL, Brier, ECE; False for accuracy.

    Returns
    -------
    dict with ``step`` (ndarray (L - 1,): P(level i+1 worse than level i)) and ``monotone``
    (P(every step worsens)), plus ``first_to_last`` (P(last level worse than the first)).

    Examples
    --------
    >>> d = np.array([[0.1, 0.2, 0.3], [0.1, 0.3, 0.2]])
    >>> r = prob_worsens(d)
    >>> r["step"].tolist(), r["monotone"], r["first_to_last"]
    ([1.0, 0.5], 0.5, 1.0)
    """
    d = np.asarray(draws, dtype=float)
    if d.ndim != 2 or d.shape[1] < 2:
        raise ConfigError(f"need draws of at least two levels, shape (n_draws, L); got {d.shape}")
    diff = np.diff(d, axis=1) if higher_is_worse else -np.diff(d, axis=1)
    worse = diff > 0
    last = d[:, -1] - d[:, 0] if higher_is_worse else d[:, 0] - d[:, -1]
    return {"step": worse.mean(axis=0), "monotone": float(worse.all(axis=1).mean()),
            "first_to_last": float((last > 0).mean())}
