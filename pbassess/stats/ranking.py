"""Rankings from posterior draws: ranks, P(worst/best), P(in the worst m), top-m sets."""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.counting.core import cell_counts

__all__ = ["prob_extreme", "prob_in_extreme_m", "rank_draws"]


def rank_draws(draws: Any, *, lowest_first: bool = True) -> np.ndarray:
    """Rank of each region in each draw (1 = lowest value when ``lowest_first``).

    Parameters
    ----------
    draws : array_like, shape (..., K)
        Posterior draws of a metric per region (last axis).

    Returns
    -------
    ndarray of int, same shape, values 1..K.

    Examples
    --------
    >>> rank_draws([[0.9, 0.1, 0.5]]).tolist()
    [[3, 1, 2]]
    """
    d = np.asarray(draws, dtype=float)
    order = np.argsort(d if lowest_first else -d, axis=-1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, d.shape[-1] + 1).reshape((1,) * (d.ndim - 1) + (-1,)), axis=-1)
    return ranks


def prob_extreme(draws: Any, *, lowest: bool = True, valid: Any = None) -> np.ndarray:
    """Posterior probability that each region has the lowest (or highest) value.

    Parameters
    ----------
    draws : array_like, shape (n_draws, K)
    lowest : bool
        Lowest (e.g. least accurate) or highest (e.g. highest cost).
    valid : array_like of bool, shape (K,), optional
        Regions allowed to win (e.g. classes that are ever predicted); others get 0.

    Examples
    --------
    >>> prob_extreme([[0.1, 0.5], [0.6, 0.2], [0.3, 0.4]]).tolist()
    [0.6666666666666666, 0.3333333333333333]
    """
    d = np.array(draws, dtype=float)
    if valid is not None:
        ok = np.asarray(valid, dtype=bool)
        if not ok.any():
            return np.zeros(d.shape[1])
        d[:, ~ok] = np.inf if lowest else -np.inf
    winner = d.argmin(axis=1) if lowest else d.argmax(axis=1)
    return cell_counts(winner, d.shape[1]) / d.shape[0]


def prob_in_extreme_m(draws: Any, m: int, *, lowest: bool = True, valid: Any = None) -> np.ndarray:
    """Posterior probability that each region is among the m lowest (or highest).

    Regions outside ``valid`` (if given) are never counted among the m.

    Examples
    --------
    >>> prob_in_extreme_m([[0.1, 0.5, 0.3], [0.6, 0.2, 0.1]], 2).tolist()
    [0.5, 0.5, 1.0]
    """
    d = np.array(draws, dtype=float)
    if valid is not None:
        ok = np.asarray(valid, dtype=bool)
        d[:, ~ok] = np.inf if lowest else -np.inf
        return np.where(ok, (rank_draws(d, lowest_first=lowest) <= m).mean(axis=0), 0.0)
    return (rank_draws(d, lowest_first=lowest) <= m).mean(axis=0)
