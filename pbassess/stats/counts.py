"""Sufficient statistics: per-class, per-region and per-bin counts, and confusion counts.

Plain NumPy functions; every assessment reduces its labeled items to these counts, so the
cost of the posterior never grows with the number of items. They check their arguments and
count with the NumPy counting core (:func:`pbassess.counting.cell_counts`, bins by
:func:`pbassess.counting.assign_bins`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.counting.bins import assign_bins
from pbassess.counting.core import cell_codes, cell_counts
from pbassess.errors import ConfigError

__all__ = ["bin_edges", "bin_index", "binned_counts", "confusion_counts", "region_counts"]


def region_counts(region: Any, correct: Any, n_regions: int, weights: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Number of items and of correct items in each region (class, group, bin, ...).

    Parameters
    ----------
    region : array_like of int, shape (N,)
        Region index of each labeled item, in ``0..n_regions-1``.
    correct : array_like of bool, shape (N,)
        Whether each item's prediction is correct.
    n_regions : int

    Returns
    -------
    n, k : ndarray of int, shape (n_regions,)
        Items and correct items per region.

    Examples
    --------
    >>> n, k = region_counts([0, 0, 1, 2], [True, False, True, True], 3)
    >>> n.tolist(), k.tolist()
    ([2, 1, 1], [1, 1, 1])
    """
    r = np.asarray(region, dtype=np.int64).ravel()
    c = np.asarray(correct, dtype=bool).ravel()
    if r.shape != c.shape:
        raise ConfigError(f"region and correct have different lengths ({r.size} and {c.size})")
    if r.size and (r.min() < 0 or r.max() >= n_regions):
        raise ConfigError(f"region indices must lie in 0..{n_regions - 1}")
    return cell_counts(r, n_regions), cell_counts(r, n_regions, c)


def bin_edges(scores: Any = None, bins: int | Any = 10, strategy: str = "uniform") -> np.ndarray:
    """Calibration bin edges over [0, 1].

    Parameters
    ----------
    scores : array_like, optional
        The scores, needed for ``strategy="quantile"`` (equal-mass bins).
    bins : int or array_like
        Number of bins, or the edges themselves (increasing, from 0 to 1).
    strategy : {"uniform", "quantile"}
        Equal-width or equal-mass bins.

    Examples
    --------
    >>> bin_edges(bins=4).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    >>> bin_edges([0.1, 0.2, 0.9, 0.95], bins=2, strategy="quantile").tolist()
    [0.0, 0.55, 1.0]
    """
    if np.ndim(bins) == 1:
        edges = np.asarray(bins, dtype=float)
        if edges.size < 2 or not np.all(np.diff(edges) > 0):
            raise ConfigError("bin edges must be strictly increasing with at least two values")
        if edges[0] > 0 or edges[-1] < 1:
            raise ConfigError(f"bin edges must cover [0, 1], got [{edges[0]:g}, {edges[-1]:g}]")
        return edges
    n_bins = int(bins)
    if n_bins < 1:
        raise ConfigError(f"the number of bins must be at least 1, got {bins}")
    if strategy == "uniform":
        return np.linspace(0.0, 1.0, n_bins + 1)
    if strategy == "quantile":
        if scores is None:
            raise ConfigError("equal-mass bins need the scores")
        s = np.asarray(scores, dtype=float).ravel()
        if s.size == 0:
            raise ConfigError("equal-mass bins need at least one score")
        inner = np.quantile(s, np.linspace(0, 1, n_bins + 1)[1:-1])
        edges = np.unique(np.concatenate([[0.0], inner, [1.0]]))
        return edges
    raise ConfigError(f"unknown binning strategy {strategy!r} (choose 'uniform' or 'quantile')")


def bin_index(scores: Any, edges: Any) -> np.ndarray:
    """Bin of each score: ``edges[b] <= s < edges[b+1]``; a score of 1 lands in the last bin.

    Scores of exactly 0 land in the first bin and scores of exactly 1 in the last.

    Examples
    --------
    >>> bin_index([0.0, 0.25, 0.99, 1.0], [0.0, 0.5, 1.0]).tolist()
    [0, 0, 1, 1]
    """
    return assign_bins(scores, edges)


def binned_counts(scores: Any, correct: Any, edges: Any) -> dict[str, np.ndarray]:
    """Per-bin counts of items and correct items, and the sum of scores.

    Returns
    -------
    dict with ``n``, ``correct`` (int arrays) and ``score_sum`` (float array), one per bin.

    Examples
    --------
    >>> c = binned_counts([0.1, 0.7, 0.8], [False, True, False], [0, 0.5, 1])
    >>> c["n"].tolist(), c["correct"].tolist(), c["score_sum"].round(2).tolist()
    ([1, 2], [0, 1], [0.1, 1.5])
    """
    s = np.asarray(scores, dtype=float).ravel()
    idx = bin_index(s, edges)
    n_bins = np.asarray(edges).size - 1
    n, k = region_counts(idx, correct, n_bins)
    return {"n": n, "correct": k, "score_sum": cell_counts(idx, n_bins, s)}


def confusion_counts(predicted: Any, labels: Any, n_classes: int) -> np.ndarray:
    """Counts of (predicted class, true class) pairs: rows predicted, columns true.

    Examples
    --------
    >>> confusion_counts([0, 0, 1], [0, 1, 1], 2).tolist()
    [[1, 1], [0, 1]]
    """
    p = np.asarray(predicted, dtype=np.int64).ravel()
    y = np.asarray(labels, dtype=np.int64).ravel()
    if p.shape != y.shape:
        raise ConfigError(f"predicted and labels have different lengths ({p.size} and {y.size})")
    if y.size and (y.min() < 0 or y.max() >= n_classes or p.min() < 0 or p.max() >= n_classes):
        raise ConfigError(f"class indices must lie in 0..{n_classes - 1}")
    return cell_counts(cell_codes([p, y], [n_classes, n_classes]), n_classes * n_classes).reshape(n_classes, n_classes)
