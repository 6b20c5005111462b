"""Calibration bins: edges, the bin of each score under a named convention, per-bin sums.

Plain NumPy (layer 2). Peers disagree on which bin a score lying exactly on an edge falls in,
and that alone moves the maximum calibration error of a real model by 0.0007 (CIFAR-100
ResNet-110, 10 bins: MCE 0.2096 in netcal, 0.2089 in torchmetrics). Each convention is named:

``"left"`` (pbassess's default, numpy's ``histogram`` rule)
    Bin b holds ``edges[b] <= s < edges[b + 1]``; the last bin also holds ``s == edges[-1]``:
    the project's one bin rule, :func:`pbassess.counting.assign_bins`.
    Edges are float64 (``numpy.linspace(0, 1, B + 1)``), so an edge written 0.7 is stored as
    0.7000000000000001 and a score of exactly 0.7 falls in the bin *below* it.
``"right"`` (scikit-learn's ``calibration_curve``)
    Bin b holds ``edges[b] < s <= edges[b + 1]``; the first bin also holds ``s == edges[0]``.
``"netcal"`` (netcal ``ECE``/``MCE``/``ACE``: ``scipy.stats.binned_statistic_dd`` over
    ``numpy.linspace`` edges)
    ``"left"`` after clipping scores to ``[eps, 1 - eps]`` (float64 machine epsilon); bins with
    fewer than ``sample_threshold = 1`` items are left out of every metric (MCE and ACE included).
``"torchmetrics"`` (``binary_calibration_error`` / ``multiclass_calibration_error``:
    ``torch.bucketize(conf, linspace, right=True) - 1`` in float32)
    Scores and edges are rounded to float32 before binning, bin b holds
    ``edges[b] <= s < edges[b + 1]`` exactly as written (float32 ``0.7 == linspace[7]``, so a
    score of 0.7 falls in the bin *above*), and scores equal to 1 form an extra bin of their
    own. Empty bins count as gap 0 (they never change ECE or MCE).

Equal-mass edges are the pool's score quantiles (:func:`equal_mass_edges`); the adaptive
calibration error instead splits the sorted scores into ranges of equal count
(:func:`equal_count_bins`, Nixon et al. 2019).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pbassess.counting import assign_bins as bin_rule
from pbassess.counting.bins import bin_counts
from pbassess.errors import ConfigError

__all__ = [
    "CONVENTIONS", "BinSums", "assign_bins", "bin_sums", "equal_count_bins", "equal_mass_edges",
    "equal_width_edges", "resolve_edges",
]

#: Bin-edge conventions understood by :func:`assign_bins` (see the module docstring).
CONVENTIONS = ("left", "right", "netcal", "torchmetrics")

_NETCAL_EPS = float(np.finfo(float).eps)


def equal_width_edges(n_bins: int) -> np.ndarray:
    """``n_bins`` equal-width bins over [0, 1] (float64 ``numpy.linspace``).

    Parameters
    ----------
    n_bins : int

    Returns
    -------
    ndarray, shape (n_bins + 1,)

    Examples
    --------
    >>> equal_width_edges(4).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise ConfigError(f"bins must be a positive whole number, got {n_bins!r}")
    return np.linspace(0.0, 1.0, int(n_bins) + 1)


def equal_mass_edges(scores: Any, n_bins: int) -> np.ndarray:
    """Equal-mass edges: 0, the ``b / n_bins`` quantiles of ``scores``, 1 (ties merge edges).

    Parameters
    ----------
    scores : array_like, shape (N,)
        Scores in [0, 1].
    n_bins : int

    Returns
    -------
    ndarray
        Increasing edges from 0 to 1 (fewer than ``n_bins + 1`` when ties merge quantiles).

    Examples
    --------
    >>> equal_mass_edges([0.1, 0.2, 0.8, 0.9], 2).tolist()
    [0.0, 0.5, 1.0]
    """
    equal_width_edges(n_bins)
    s = np.asarray(scores, dtype=float).ravel()
    if s.size == 0:
        raise ConfigError("equal-mass bins need at least one score")
    inner = np.quantile(s, np.linspace(0.0, 1.0, int(n_bins) + 1)[1:-1])
    return np.unique(np.concatenate([[0.0], inner, [1.0]]))


def resolve_edges(scores: Any, bins: Any = 10, binning: str = "uniform") -> np.ndarray:
    """Edges from a number of bins (``binning`` "uniform" or "quantile") or explicit edges.

    Examples
    --------
    >>> resolve_edges(None, [0, 0.5, 0.9, 1]).tolist()
    [0.0, 0.5, 0.9, 1.0]
    """
    if np.ndim(bins) == 0:
        if binning == "uniform":
            return equal_width_edges(bins)
        if binning == "quantile":
            return equal_mass_edges(scores, bins)
        raise ConfigError(f"unknown binning {binning!r} (choose 'uniform' or 'quantile')")
    try:
        edges = np.asarray(bins, dtype=float)
    except (TypeError, ValueError):
        raise ConfigError("bins: explicit edges must be numbers") from None
    if edges.ndim != 1 or edges.size < 2 or not np.all(np.isfinite(edges)) or np.any(np.diff(edges) <= 0):
        raise ConfigError("bins: explicit edges must be a strictly increasing list of at least two numbers")
    if edges[0] > 0 or edges[-1] < 1:
        raise ConfigError(f"bins: explicit edges must cover [0, 1], got [{edges[0]:g}, {edges[-1]:g}]")
    return edges


def assign_bins(scores: Any, edges: Any, convention: str = "left") -> tuple[np.ndarray, int]:
    """Bin index of each score under ``convention``, and the number of bins.

    The number of bins is ``len(edges) - 1``, plus one for ``"torchmetrics"`` (its extra bin of
    scores equal to 1).

    Parameters
    ----------
    scores : array_like, shape (N,)
        Scores in [0, 1].
    edges : array_like
        Increasing bin edges covering [0, 1].
    convention : {"left", "right", "netcal", "torchmetrics"}
        Which bin a score on an edge falls in (see the module docstring).

    Returns
    -------
    index : ndarray of int, shape (N,)
        Bin of each score.
    n_bins : int

    Examples
    --------
    >>> e = equal_width_edges(10)
    >>> [int(assign_bins([0.7], e, c)[0][0]) for c in ("left", "right", "netcal", "torchmetrics")]
    [6, 6, 6, 7]
    >>> assign_bins([0.0, 1.0], e, "torchmetrics")[0].tolist()
    [0, 10]
    """
    if convention not in CONVENTIONS:
        raise ConfigError(f"unknown bin convention {convention!r} (choose one of {', '.join(CONVENTIONS)})")
    e = np.asarray(edges, dtype=float)
    s = np.asarray(scores, dtype=float)
    n_bins = e.size - 1
    if convention == "torchmetrics":
        e32, s32 = e.astype(np.float32), s.astype(np.float32)
        idx = np.searchsorted(e32, s32, side="right") - 1
        return np.clip(idx, 0, n_bins), n_bins + 1
    if convention == "netcal":
        s = np.clip(s, _NETCAL_EPS, 1.0 - _NETCAL_EPS)
    if convention == "right":
        return np.clip(np.searchsorted(e, s, side="left") - 1, 0, n_bins - 1), n_bins
    return bin_rule(s, e), n_bins      # "left" (and "netcal" after clipping): the project's one bin rule


@dataclass(frozen=True)
class BinSums:
    """Per-bin sufficient statistics of (score, outcome) pairs.

    ``n`` items, ``outcome_sum`` (correct items, or positives), ``score_sum``; ``edges`` the
    bin edges and ``index`` each item's bin.

    Examples
    --------
    >>> b = bin_sums([0.1, 0.7, 0.8], [0, 1, 0], [0, 0.5, 1])
    >>> isinstance(b, BinSums), b.weight.round(3).tolist(), b.accuracy.tolist()
    (True, [0.333, 0.667], [0.0, 0.5])
    """

    n: np.ndarray
    outcome_sum: np.ndarray
    score_sum: np.ndarray
    edges: np.ndarray
    index: np.ndarray

    @property
    def weight(self) -> np.ndarray:
        """Share of the items in each bin."""
        total = self.n.sum()
        return self.n / total if total else np.zeros(self.n.shape)

    @property
    def occupied(self) -> np.ndarray:
        return self.n > 0

    @property
    def accuracy(self) -> np.ndarray:
        """Mean outcome per bin (NaN where empty)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.n > 0, self.outcome_sum / np.maximum(self.n, 1), np.nan)

    @property
    def confidence(self) -> np.ndarray:
        """Mean score per bin (NaN where empty)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.n > 0, self.score_sum / np.maximum(self.n, 1), np.nan)


def bin_sums(scores: Any, outcomes: Any, edges: Any, convention: str = "left") -> BinSums:
    """Counts, outcome sums and score sums per bin.

    Parameters
    ----------
    scores : array_like, shape (N,)
        Predicted probabilities in [0, 1].
    outcomes : array_like, shape (N,)
        1 where the event happened (correct prediction, positive class), else 0.
    edges : array_like
    convention : str
        See the module docstring.

    Returns
    -------
    BinSums
        ``n``, ``outcome_sum`` and ``score_sum`` per bin, with ``edges`` and each item's ``index``.

    Examples
    --------
    >>> b = bin_sums([0.1, 0.7, 0.8], [0, 1, 0], [0, 0.5, 1])
    >>> b.n.tolist(), b.outcome_sum.tolist(), b.score_sum.round(2).tolist()
    ([1, 2], [0.0, 1.0], [0.1, 1.5])
    """
    s = np.asarray(scores, dtype=float).ravel()
    y = np.asarray(outcomes, dtype=float).ravel()
    if s.shape != y.shape:
        raise ConfigError(f"scores and outcomes have different lengths ({s.size} and {y.size})")
    if s.size and not (s.min() >= 0 and s.max() <= 1):  # NaN fails both comparisons, +-inf one
        raise ConfigError("scores must be probabilities in [0, 1]")
    idx, n_bins = assign_bins(s, edges, convention)
    if convention == "torchmetrics":
        s = s.astype(np.float32).astype(float)
    # every convention puts each score in one of its n_bins bins: counted without a validity mask
    n, outcome_sum, score_sum = bin_counts(idx, n_bins, y, s)
    return BinSums(n=n, outcome_sum=outcome_sum, score_sum=score_sum, edges=np.asarray(edges, dtype=float), index=idx)


def equal_count_bins(scores: Any, n_bins: int) -> np.ndarray:
    """Bin index of each score when the sorted scores are split into ``n_bins`` equal-count ranges.

    The adaptive binning of Nixon et al. (2019): ``numpy.array_split`` of the stable sort, so
    range sizes differ by at most one item (tied scores may straddle two ranges).

    Examples
    --------
    >>> equal_count_bins([0.9, 0.1, 0.5, 0.3], 2).tolist()
    [1, 0, 1, 0]
    """
    equal_width_edges(n_bins)
    s = np.asarray(scores, dtype=float).ravel()
    order = np.argsort(s, kind="stable")
    idx = np.empty(s.size, dtype=np.int64)
    for b, part in enumerate(np.array_split(order, min(int(n_bins), max(s.size, 1)))):
        idx[part] = b
    return idx
