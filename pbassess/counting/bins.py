"""Confidence bins: resolving edges, assigning items, and equal-mass edges from a streaming sketch.

Bins follow one rule everywhere: bin ``b`` holds ``edges[b] <= s < edges[b+1]``; a score of
exactly 1 (or above the last edge) lands in the last bin and a score below the first edge in
the first.

Equal-mass edges of data larger than memory come from a fine histogram sketch
(:func:`equal_mass_edges`): one streaming pass counts the scores in ``resolution`` equal-width
cells of [0, 1] (exact integer counts, chunk by chunk), and each quantile is read off the
cumulative counts by linear interpolation inside the cell that holds it. **Error bound:** the
edge for probability ``q`` lies in the same sketch cell as the order statistic
``x_(floor(q (N - 1)))`` (numpy's ``method="lower"`` quantile), so it is within
``1 / resolution`` of it (1.5e-5 at the default 2**16), and the number of items on the wrong
side of the edge, compared with that order statistic, is at most the count of that one cell.
Numpy and dask inputs give the same edges (the histogram counts are integers). With ``exact=True`` a second pass
reads only the scores that fall in the sketch cells holding the wanted order statistics and
returns exactly the in-memory edges ``np.unique([0, *np.quantile(scores, q), 1])``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from pbassess.constants import DEFAULT_BINS
from pbassess.counting.equal_width import is_equal_width, truncation_exceptions
from pbassess.counting.kernels import NUMBA_MIN_ITEMS, equal_width_bins
from pbassess.errors import ConfigError

__all__ = ["DEFAULT_SKETCH_RESOLUTION", "TOP_LABEL_NUMBA_MIN", "assign_bins", "bin_counts", "class_bin_counts", "equal_mass_edges",
           "resolve_bin_edges", "top_label"]

#: Cells of the fine histogram behind :func:`equal_mass_edges`.
DEFAULT_SKETCH_RESOLUTION: int = 1 << 16


def resolve_bin_edges(bin_edges: Any = None) -> np.ndarray:
    """Validated bin edges: ``None`` (the default number of equal-width bins), an int, or edges.

    Parameters
    ----------
    bin_edges : None, int or array_like
        ``None``: the default number of equal-width bins; an int: that many; or increasing edges.

    Returns
    -------
    ndarray of float

    Examples
    --------
    >>> resolve_bin_edges(4).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    >>> len(resolve_bin_edges()) - 1
    10
    """
    if bin_edges is None:
        bin_edges = DEFAULT_BINS
    if np.ndim(bin_edges) == 0:
        try:
            n_bins = int(bin_edges)
        except (TypeError, ValueError):
            raise ConfigError(f"bins must be a number of bins or a list of edges, got {bin_edges!r}") from None
        if n_bins < 1 or n_bins != bin_edges:
            raise ConfigError(f"the number of bins must be a positive integer, got {bin_edges!r}")
        return np.linspace(0.0, 1.0, n_bins + 1)
    edges = np.asarray(bin_edges, dtype=float).ravel()
    if edges.size < 2 or not np.all(np.diff(edges) > 0):
        raise ConfigError("bin edges must be strictly increasing with at least two values")
    if edges[0] > 0 or edges[-1] < 1:
        raise ConfigError(f"bin edges must cover [0, 1], got [{edges[0]:g}, {edges[-1]:g}]")
    return edges


def assign_bins(scores: Any, edges: Any, *, clip: bool = True) -> np.ndarray:
    """Bin index of each score (int64), by the rule in the module docstring.

    This is the project's one bin rule: counting, the calibration metrics (convention
    ``"left"``), :func:`pbassess.stats.bin_index` and the histograms of the shift tables all
    call it.

    Parameters
    ----------
    scores : array_like of float, any shape
    edges : array_like of float, shape (B + 1,)
        Increasing bin edges.
    clip : bool, default True
        ``True``: a score below the first edge lands in the first bin and one above the last
        edge (or NaN) in the last. ``False``: such scores get ``-1`` (no bin), so that
        ``cell_counts(assign_bins(x, e, clip=False), len(e) - 1)`` equals
        ``numpy.histogram(x, e)[0]``.

    Returns
    -------
    ndarray of int64
        Same shape as ``scores``.

    Examples
    --------
    >>> assign_bins(np.array([0.0, 0.25, 0.5, 0.99, 1.0]), np.array([0.0, 0.5, 1.0])).tolist()
    [0, 0, 1, 1, 1]
    >>> assign_bins([-0.1, 0.5, 2.0, float("nan")], [0.0, 1.0, 2.0], clip=False).tolist()
    [-1, 0, 1, -1]
    """
    scores = np.asarray(scores, dtype=float)
    edges = np.asarray(edges, dtype=float)
    n_bins = edges.size - 1
    if n_bins >= 1 and scores.ndim and is_equal_width(edges):
        idx = _equal_width_bins(scores, n_bins)
        if not clip:
            idx[~((scores >= 0.0) & (scores <= 1.0))] = -1     # outside, or NaN
        return idx
    if not clip:
        idx = np.searchsorted(edges, scores, side="right").astype(np.int64, copy=False) - 1
        idx[scores == edges[-1]] = n_bins - 1
        idx[~((scores >= edges[0]) & (scores <= edges[-1]))] = -1     # outside, or NaN
        return idx
    idx = np.searchsorted(edges, scores, side="right") - 1
    return np.clip(idx, 0, n_bins - 1).astype(np.int64, copy=False)


def _equal_width_bins(scores: np.ndarray, n_bins: int) -> np.ndarray:
    """The bin rule for ``linspace(0, 1, B + 1)`` edges by multiply-and-truncate, clipped (NaN in the last bin).

    ``trunc(s * B)`` after clamping the product into ``[0, B - 1]`` (``fmin``/``fmax`` send NaN
    and +inf to the last bin like the searchsorted rule, and a score of 1 to the last bin: the
    last edge is closed); for the ``B`` whose products round across an edge
    (:func:`~pbassess.counting.equal_width.truncation_exceptions`), two table look-ups move those scores by one bin.
    """
    if scores.size >= NUMBA_MIN_ITEMS:
        return equal_width_bins(scores, n_bins, truncation_exceptions(n_bins))
    t = np.multiply(scores, float(n_bins))
    np.fmin(t, n_bins - 1, out=t)
    np.fmax(t, 0.0, out=t)
    idx = t.astype(np.int64)
    tables = truncation_exceptions(n_bins)
    if tables is not None:
        lower, upper = tables
        up = scores >= upper[idx]
        down = scores < lower[idx]
        idx += up
        idx -= down
    return idx


def sketch_counts(scores: np.ndarray, resolution: int) -> np.ndarray:
    """Counts of scores in ``resolution`` equal-width cells of [0, 1] (1.0 in the last cell)."""
    return np.bincount(_cells_of(scores, resolution), minlength=resolution).astype(np.int64)


def edges_from_sketch(counts: np.ndarray, n_bins: int) -> np.ndarray:
    """Equal-mass edges from histogram counts (see the module docstring for the error bound)."""
    resolution = counts.size
    total = int(counts.sum())
    if total == 0:
        raise ConfigError("equal-mass bins need at least one score")
    cum = np.concatenate([[0], np.cumsum(counts)])
    # Rank of the q-quantile as in numpy's default (linear) method: q * (N - 1) items below it.
    targets = np.linspace(0, 1, n_bins + 1)[1:-1] * (total - 1)
    cell = np.clip(np.searchsorted(cum, targets, side="right") - 1, 0, resolution - 1)
    inside = (targets - cum[cell]) / np.maximum(counts[cell], 1)
    inner = (cell + np.clip(inside, 0.0, 1.0)) / resolution
    return np.unique(np.concatenate([[0.0], inner, [1.0]]))


def _cells_of(scores: np.ndarray, resolution: int) -> np.ndarray:
    return np.clip((np.asarray(scores, dtype=np.float64) * resolution).astype(np.int64), 0, resolution - 1)


def _exact_ranks(total: int, n_bins: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Order-statistic ranks and weights of numpy's default (linear) quantiles, as numpy computes them."""
    q = np.linspace(0, 1, n_bins + 1)[1:-1]
    virtual = (total - 1) * q
    lower = np.floor(virtual)
    gamma = virtual - lower
    lower = np.clip(lower.astype(np.int64), 0, total - 1)
    upper = np.clip(lower + 1, 0, total - 1)
    return lower, upper, gamma


def _exact_edges(counts: np.ndarray, n_bins: int, gather: Any) -> np.ndarray:
    """Edges equal to ``np.unique([0, np.quantile(scores, q), 1])`` from the sketch and a second pass."""
    total = int(counts.sum())
    lower, upper, gamma = _exact_ranks(total, n_bins)
    cum = np.concatenate([[0], np.cumsum(counts)])
    ranks = np.concatenate([lower, upper])
    cells = np.searchsorted(cum, ranks, side="right") - 1
    wanted = np.unique(cells)
    values = np.sort(gather(wanted))                      # the scores in those few cells only
    before = np.concatenate([[0], np.cumsum(counts[wanted])])[np.searchsorted(wanted, cells)]
    picked = values[ranks - cum[cells] + before]
    a, b = picked[: lower.size], picked[lower.size:]
    diff = b - a
    inner = np.where(gamma >= 0.5, b - diff * (1 - gamma), a + diff * gamma)   # numpy's _lerp
    return np.unique(np.concatenate([[0.0], inner, [1.0]]))


def equal_mass_edges(preds: Any, n_bins: int = DEFAULT_BINS, *, resolution: int = DEFAULT_SKETCH_RESOLUTION,
                     labeled_only: bool = False, exact: bool = False, client: Any = None) -> np.ndarray:
    """Equal-mass (quantile) confidence bin edges, streaming over numpy- or dask-backed data.

    Parameters
    ----------
    preds : Predictions or xarray.Dataset
        The pool (anything :func:`~pbassess.counting.count_cells` accepts).
    n_bins : int
        Number of bins; fewer are returned when quantiles coincide.
    resolution : int
        Cells of the histogram sketch; each edge is within ``1 / resolution`` of the empirical
        quantile ``numpy.quantile(scores, q, method="lower")``.
    labeled_only : bool
        Use only labeled items' scores.
    exact : bool
        Make a second pass that reads only the scores in the sketch cells holding the quantiles,
        and return exactly the edges of the in-memory rule
        ``np.unique([0, *np.quantile(scores, q), 1])`` (numpy's default linear quantiles).
    client : dask.distributed.Client, optional
        Where dask-backed data is computed (see :mod:`pbassess.scale`).

    Returns
    -------
    ndarray
        Increasing edges from 0 to 1.

    Examples
    --------
    >>> import numpy as np
    >>> from pbassess import Predictions
    >>> conf = np.random.default_rng(0).uniform(0.5, 1.0, 10_000)
    >>> p = Predictions.from_top1(np.zeros(10_000, int), conf, classes=["a", "b"])
    >>> e = equal_mass_edges(p, 4)
    >>> bool(np.all(np.abs(e[1:-1] - np.quantile(conf, [0.25, 0.5, 0.75], method="lower")) <= 2.0**-16))
    True
    >>> equal_mass_edges(p, 4, exact=True)[1:-1].tolist() == np.quantile(conf, [0.25, 0.5, 0.75]).tolist()
    True
    """
    from pbassess.counting.items import item_arrays

    if int(n_bins) < 1:
        raise ConfigError(f"the number of bins must be at least 1, got {n_bins}")
    if int(resolution) < 2:
        raise ConfigError(f"the sketch resolution must be at least 2, got {resolution}")
    items = item_arrays(preds)
    conf = items.arrays["confidence"]
    if labeled_only:
        conf = conf[items.arrays["label"] >= 0]
    if items.is_lazy:
        import dask.array as da

        from pbassess.scale import compute

        conf = da.asarray(conf)
        parts = conf.map_blocks(lambda blk: sketch_counts(blk, resolution)[None, :], dtype=np.int64,
                                chunks=((1,) * conf.numblocks[0], (resolution,)), new_axis=1)
        (counts,) = compute(parts.sum(axis=0), client=client)

        def gather(cells: np.ndarray) -> np.ndarray:
            kept = conf.map_blocks(lambda blk: blk[np.isin(_cells_of(blk, resolution), cells)], dtype=np.float64,
                                   chunks=((np.nan,) * conf.numblocks[0],))
            return np.asarray(compute(kept, client=client)[0])
    else:
        conf = np.asarray(conf, dtype=np.float64)
        counts = sketch_counts(conf, resolution)

        def gather(cells: np.ndarray) -> np.ndarray:
            return conf[np.isin(_cells_of(conf, resolution), cells)]
    counts = np.asarray(counts)
    if int(counts.sum()) == 0:
        raise ConfigError("equal-mass bins need at least one score")
    if exact:
        return _exact_edges(counts, int(n_bins), gather)
    return edges_from_sketch(counts, int(n_bins))


def bin_counts(index: Any, n_bins: int, *weights: Any) -> tuple[np.ndarray, ...]:
    """Items per bin (int64), then the sum of each of ``weights`` per bin (float64), for valid bin indices.

    For indices that are all in ``0..n_bins-1`` (what :func:`assign_bins` returns with
    ``clip=True``): plain bincounts, without the validity mask and batching of
    :func:`~pbassess.counting.cell_counts` (the same numbers, summed in the same item order).

    Parameters
    ----------
    index : array_like of int, shape (N,)
        Bin of each item, every one in ``0..n_bins-1``.
    n_bins : int
    *weights : array_like of float, shape (N,)
        Values to sum per bin.

    Returns
    -------
    tuple of ndarray, each shape (n_bins,)
        The counts, then one sum per weight.

    Examples
    --------
    >>> n, s = bin_counts([0, 2, 2], 3, [0.5, 1.0, 2.0])
    >>> n.tolist(), s.tolist()
    ([1, 0, 2], [0.5, 0.0, 3.0])
    """
    idx = np.asarray(index, dtype=np.int64).ravel()
    n_bins = int(n_bins)
    counts = np.bincount(idx, minlength=n_bins).astype(np.int64, copy=False)
    sums = tuple(np.bincount(idx, weights=np.asarray(w, dtype=float).ravel(), minlength=n_bins) for w in weights)
    return (counts, *sums)


def class_bin_counts(probs: Any, labels: Any, edges: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One-vs-rest bin counts of every probability column at once (classwise calibration metrics).

    Column ``j`` of ``probs`` is binned by :func:`assign_bins` (the one bin rule) and counted
    against the event ``labels == j``, for all columns in one pass over the ``(N, K)`` matrix
    (no column copies): the same numbers, summed in the same order, as binning each column on
    its own.

    Parameters
    ----------
    probs : array_like of float, shape (N, K)
        Probability vectors.
    labels : array_like of int, shape (N,)
        Class index (``0..K-1``) of each item.
    edges : array_like of float, shape (B + 1,)
        Bin edges shared by every column.

    Returns
    -------
    n : ndarray of int64, shape (K, B)
        Items per (column, bin).
    positives : ndarray of float64, shape (K, B)
        Items of class ``j`` per (column ``j``, bin).
    score_sum : ndarray of float64, shape (K, B)
        Sum of ``probs[:, j]`` per (column ``j``, bin).

    Examples
    --------
    >>> n, pos, ssum = class_bin_counts([[0.8, 0.2], [0.6, 0.4], [0.3, 0.7]], [0, 1, 1], [0.0, 0.5, 1.0])
    >>> n.tolist(), pos.tolist(), ssum.round(2).tolist()
    ([[1, 2], [2, 1]], [[0.0, 1.0], [1.0, 1.0]], [[0.3, 1.4], [0.6, 0.7]])
    """
    p = np.asarray(probs, dtype=float)
    y = np.asarray(labels, dtype=np.int64).ravel()
    e = np.asarray(edges, dtype=float)
    if p.ndim != 2 or p.shape[0] != y.size:
        raise ValueError(f"probs must be (N, K) with N = len(labels), got {p.shape} and {y.size} labels")
    n_items, n_classes = p.shape
    n_bins = e.size - 1
    cells = n_classes * n_bins
    idx = assign_bins(p, e)                                 # (N, K), every column binned in one pass
    rows = np.arange(n_items)
    code_pos = y * n_bins + idx[rows, y]                    # the one positive column of each item
    idx += np.arange(n_classes, dtype=np.int64) * n_bins     # (column, bin) code, in place
    # Fortran-order ravel: column by column, so each cell sums its items in item order, as a
    # per-column bincount would.
    codes = idx.ravel(order="F")
    n = np.bincount(codes, minlength=cells).astype(np.int64, copy=False)
    score_sum = np.bincount(codes, weights=p.ravel(order="F"), minlength=cells)
    positives = np.bincount(code_pos, minlength=cells).astype(float)
    return n.reshape(n_classes, n_bins), positives.reshape(n_classes, n_bins), score_sum.reshape(n_classes, n_bins)


#: Below this many probabilities, :func:`top_label` uses NumPy (no numba import or compile).
TOP_LABEL_NUMBA_MIN = 1 << 17


def top_label(probs: Any) -> tuple[np.ndarray, np.ndarray]:
    """Predicted class and confidence of each probability vector, in one fused pass.

    Equal to ``(probs.argmax(axis=1), probs.max(axis=1))`` (first maximum on ties; a NaN
    wins, as in NumPy), computed by one multithreaded numba loop over the rows for large
    inputs (at least :data:`TOP_LABEL_NUMBA_MIN` probabilities; NumPy below).

    Parameters
    ----------
    probs : array_like of float, shape (N, K)

    Returns
    -------
    predicted : ndarray of int64, shape (N,)
    confidence : ndarray of float64, shape (N,)

    Examples
    --------
    >>> predicted, confidence = top_label([[0.1, 0.7, 0.2], [0.5, 0.5, 0.0]])
    >>> predicted.tolist(), confidence.tolist()
    ([1, 0], [0.7, 0.5])
    """
    p = np.asarray(probs, dtype=float)
    if p.ndim != 2 or p.shape[1] == 0:
        raise ValueError(f"probs must be (N, K) with K >= 1, got shape {p.shape}")
    if p.size < TOP_LABEL_NUMBA_MIN:
        return p.argmax(axis=1).astype(np.int64, copy=False), p.max(axis=1)
    predicted = np.empty(p.shape[0], dtype=np.int64)
    confidence = np.empty(p.shape[0], dtype=np.float64)
    _top_label_kernel()(np.ascontiguousarray(p), predicted, confidence)
    return predicted, confidence


@lru_cache(maxsize=1)
def _top_label_kernel():
    """The numba kernel of :func:`top_label` (numba is imported on first use only; cached on disk)."""
    import numba as nb

    @nb.njit(parallel=True, cache=True, nogil=True)
    def kernel(p, predicted, confidence):  # pragma: no cover - compiled
        n, k = p.shape
        for i in nb.prange(n):
            best = p[i, 0]
            arg = 0
            if best == best:
                for j in range(1, k):
                    v = p[i, j]
                    if v != v:          # NaN: the maximum, as in numpy
                        best = v
                        arg = j
                        break
                    if v > best:
                        best = v
                        arg = j
            predicted[i] = arg
            confidence[i] = best

    return kernel
