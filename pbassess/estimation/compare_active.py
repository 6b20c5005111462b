"""Active comparison of groups: label where the ROPE decision is most likely to move.

For G groups with Beta posteriors of a rate (accuracy, or any registered Beta-binomial metric:
error rate, TPR, FPR, precision, ...), every pair (i, j) has three decision probabilities about
the difference d = theta_i - theta_j and a region of practical equivalence (ROPE) of half-width r::

    P(|d| < r) (equivalent),  P(d >= r) (i better),  P(d <= -r) (j better).

A decision is taken when one of them exceeds ``decide_at`` (0.95). Where should the next
labels go? For each group g, :func:`label_value` looks ``lookahead`` labels ahead: the
outcomes y = 0..L of g's next L labels (Beta-binomial predictive), the updated decision
probabilities of every pair involving g, and the expected L1 change of those probabilities,
counting only pairs not yet decided. The group with the largest expected change is where
the decisions are most likely to move; a group whose comparisons are all settled scores 0.
Monte Carlo draws use common random numbers (the same uniforms through each Beta's quantile
function), so the scores are smooth in the counts and the expected updated probability equals
the current one (the martingale property; tested).
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np
from scipy import special

from pbassess.errors import ConfigError
from pbassess.stats.betabinom import beta_binomial_log_marginal
from pbassess.stats.sampling import as_generator

__all__ = ["decision_probabilities", "label_value", "next_group"]


def _draws(a: np.ndarray, b: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    return special.betaincinv(a, b, uniforms)


def decision_probabilities(draws: np.ndarray, rope: float) -> dict[tuple[int, int], np.ndarray]:
    """P(equivalent), P(i better), P(j better) of every pair from draws (S, G).

    Parameters
    ----------
    draws : ndarray, shape (S, G)
        Posterior draws of each group's metric.
    rope : float
        Half-width of the region of practical equivalence.

    Returns
    -------
    dict of (int, int) to ndarray
        For each pair ``(i, j)``: ``[P(|d| < rope), P(d >= rope), P(d <= -rope)]`` with
        ``d = draw_i - draw_j``.

    Examples
    --------
    >>> d = np.array([[0.80, 0.50], [0.81, 0.52], [0.79, 0.49]])
    >>> decision_probabilities(d, 0.05)[(0, 1)].tolist()
    [0.0, 1.0, 0.0]
    """
    out = {}
    for i, j in combinations(range(draws.shape[1]), 2):
        d = draws[:, i] - draws[:, j]
        out[(i, j)] = np.array([np.mean(np.abs(d) < rope), np.mean(d >= rope), np.mean(d <= -rope)])
    return out


def label_value(successes: Any, trials: Any, *, rope: float = 0.02, prior: tuple[float, float] = (1.0, 1.0),
                lookahead: int = 10, decide_at: float = 0.95, draws: int = 4000, seed: Any = None) -> np.ndarray:
    """Expected change of the undecided pairs' decision probabilities from ``lookahead`` labels in each group.

    Parameters
    ----------
    successes, trials : array_like, shape (G,)
        Labeled counts per group.
    rope : float
        Half-width of the region of practical equivalence.
    prior : (float, float)
        Beta prior of every group.
    lookahead : int
        Labels imagined in the group (1 asks "one more label"; more sees further).
    decide_at : float
        A pair is decided when one of its three probabilities exceeds this.
    draws : int
        Monte Carlo draws.
    seed : int or Generator, optional

    Returns
    -------
    ndarray, shape (G,)

    Examples
    --------
    >>> v = label_value([90, 50, 52], [100, 100, 100], rope=0.05, seed=0)
    >>> int(np.argmax(v)) in (1, 2), bool(v[0] < v[1])   # 0 is clearly better; 1 vs 2 undecided
    (True, True)
    """
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    if k.shape != n.shape or k.ndim != 1 or k.size < 2:
        raise ConfigError("label_value needs counts of at least two groups (same shape)")
    if (k < 0).any() or (k > n).any():
        raise ConfigError("each group needs 0 <= successes <= trials")
    if not rope > 0:
        raise ConfigError(f"the ROPE half-width must be positive, got {rope}")
    a, b = prior[0] + k, prior[1] + n - k
    u = as_generator(seed).random((int(draws), k.size))
    base = _draws(a, b, u)
    now = decision_probabilities(base, rope)
    open_pairs = {pair for pair, p in now.items() if p.max() < decide_at}
    values = np.zeros(k.size)
    ys = np.arange(int(lookahead) + 1)
    for g in range(k.size):
        pairs = [pair for pair in open_pairs if g in pair]
        if not pairs:
            continue
        # Beta-binomial predictive of y successes in the next L labels of group g
        log_pred = beta_binomial_log_marginal(ys, lookahead, a[g], b[g])
        weights = np.exp(log_pred)
        for y, w in zip(ys, weights, strict=True):
            moved = base.copy()
            moved[:, g] = _draws(a[g] + y, b[g] + lookahead - y, u[:, g])
            for i, j in pairs:
                d = moved[:, i] - moved[:, j]
                p_new = np.array([np.mean(np.abs(d) < rope), np.mean(d >= rope), np.mean(d <= -rope)])
                values[g] += w * np.abs(p_new - now[(i, j)]).sum()
    return values


def next_group(successes: Any, trials: Any, available: Any = None, **kwargs: Any) -> int:
    """The group to label next (largest :func:`label_value` among groups with unlabeled items).

    Parameters
    ----------
    successes, trials : array_like, shape (G,)
        Labeled counts per group.
    available : array_like of bool, shape (G,), optional
        Groups that still have unlabeled items (default all).
    **kwargs
        Passed to :func:`label_value`.

    Returns
    -------
    int
        The group's index (ties: the least labeled group).

    Examples
    --------
    >>> next_group([90, 50, 52], [100, 100, 100], rope=0.05, seed=0) in (1, 2)
    True
    """
    values = label_value(successes, trials, **kwargs)
    if available is not None:
        values = np.where(np.asarray(available, dtype=bool), values, -np.inf)
    if not np.isfinite(values).any():
        raise ConfigError("no group has unlabeled items left")
    best = np.flatnonzero(values == values.max())
    n = np.asarray(trials, dtype=float)
    return int(best[np.argmin(n[best])])  # ties (e.g. all decided): the least labeled group
