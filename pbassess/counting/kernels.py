"""One fused pass of the counting kernel over large in-memory blocks (numba, compiled on first use).

The NumPy kernel of :mod:`pbassess.counting.cells` reads a block of items several times: the
correctness and the labeled subset, the two fixed-point limbs of every score
(:func:`pbassess.counting.exact_sums.split_limbs`), the bin of every score
(:func:`pbassess.counting.bins.assign_bins`), the flat cell code, then seven ``bincount`` calls.
For the tables every assessment of a pool's top-1 predictions needs (keys ``predicted`` and
``bin``, in either order, or none; no per-item statistics), :func:`count_predicted_bins` does all
of this in one loop over the items and adds straight into the int64 table.

**The same numbers.** Every table entry is an integer (an item count or a sum of integer
limbs), so the order of the additions cannot matter: the loop computes each item's bin and
limbs with the same float64 operations as the NumPy kernel (multiply by ``B`` and truncate with
the same corrections, or a binary search of the edges; ``floor`` and round-half-even ``rint``
of the scaled score) and returns the same table to the last bit. Items the NumPy kernel would
refuse (a class code out of range, a NaN or infinite score, a score above 1 in magnitude) make
the loop stop and report, and the caller reruns the NumPy kernel for its one-line error.

NumPy is used below :data:`NUMBA_MIN_ITEMS` items, so small pools never import numba.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from pbassess.counting.equal_width import is_equal_width, truncation_exceptions
from pbassess.counting.exact_sums import LIMB_BITS

__all__ = ["NUMBA_MIN_ITEMS", "count_predicted_bins", "equal_width_bins"]

#: Blocks of at least this many items are counted by the fused numba loop (NumPy below: no numba import).
NUMBA_MIN_ITEMS: int = 1 << 17

#: Ways of binning a score in the loop.
BIN_NONE, BIN_EQUAL_WIDTH, BIN_SEARCH = 0, 1, 2


def count_predicted_bins(predicted: np.ndarray, confidence: np.ndarray, label: np.ndarray, n_classes: int,
                         edges: np.ndarray | None, stride_predicted: int, stride_bin: int, labeled_only: bool,
                         total: np.ndarray) -> bool:
    """Add the first seven rows of the counting table of one block to ``total``; False if an item is invalid.

    Parameters
    ----------
    predicted, label : ndarray of int64, shape (N,)
        Predicted class and true class (``-1``: unlabeled) of each item.
    confidence : ndarray of float64, shape (N,)
    n_classes : int
    edges : ndarray or None
        Bin edges (None: no ``bin`` key).
    stride_predicted, stride_bin : int
        Multipliers of the predicted class and of the bin in the flat cell code (0 when the key
        is absent).
    labeled_only : bool
        Count only labeled items (the pool rows then equal the labeled rows).
    total : ndarray of int64, shape (>= 7, cells)
        Rows ``n_pool``, score limbs of the pool (2), ``n``, ``correct``, score limbs of the
        labeled items (2), added to in place.

    Returns
    -------
    bool
        True when every item was valid and counted; False (with ``total`` partly updated) at
        the first invalid one, for the caller to redo the block with NumPy.

    Examples
    --------
    >>> total = np.zeros((7, 2), dtype=np.int64)
    >>> count_predicted_bins(np.array([0, 1, 1]), np.array([0.5, 0.75, 1.0]), np.array([0, 0, -1]), 2, None,
    ...                      1, 0, False, total)
    True
    >>> total[[0, 3, 4]].tolist()
    [[1, 2], [1, 1], [1, 0]]
    """
    mode, lower, upper, e = BIN_NONE, np.empty(0), np.empty(0), np.empty(0)
    n_bins = 1
    if edges is not None:
        e = np.ascontiguousarray(edges, dtype=np.float64)
        n_bins = e.size - 1
        if is_equal_width(e):
            mode = BIN_EQUAL_WIDTH
            tables = truncation_exceptions(n_bins)
            if tables is not None:
                lower, upper = tables
        else:
            mode = BIN_SEARCH
    return bool(_kernel()(predicted, confidence, label, int(n_classes), mode, e, n_bins, lower, upper,
                          int(stride_predicted), int(stride_bin), bool(labeled_only), total))


@lru_cache(maxsize=1)
def _kernel():
    """The compiled loop (numba is imported on first use only; cached on disk)."""
    import numba as nb

    scale = 2.0 ** LIMB_BITS

    @nb.njit(cache=True, nogil=True)
    def kernel(predicted, confidence, label, n_classes, mode, edges, n_bins, lower, upper, stride_p, stride_b,
               labeled_only, total):  # pragma: no cover - compiled
        last = n_bins - 1
        has_tables = lower.size > 0
        for i in range(predicted.size):
            p = predicted[i]
            y = label[i]
            s = confidence[i]
            if p < 0 or p >= n_classes or y < -1 or y >= n_classes:
                return False
            if not (s >= -1.0 and s <= 1.0):    # NaN, infinite or above the bound 2**0
                return False
            if labeled_only and y < 0:
                continue
            b = 0
            if mode == 1:                        # equal width: multiply and truncate, as _equal_width_bins
                t = s * n_bins
                if not (t <= last):
                    t = float(last)
                if t < 0.0:
                    t = 0.0
                b = int(t)
                if has_tables:
                    if s >= upper[b]:
                        b += 1
                    elif s < lower[b]:
                        b -= 1
            elif mode == 2:                      # searchsorted(edges, s, side="right") - 1, clipped
                lo_i, hi_i = 0, edges.size
                while lo_i < hi_i:
                    mid = (lo_i + hi_i) >> 1
                    if edges[mid] <= s:
                        lo_i = mid + 1
                    else:
                        hi_i = mid
                b = min(max(lo_i - 1, 0), last)
            code = p * stride_p + b * stride_b
            scaled = s * scale
            hi = np.floor(scaled)
            lo = np.rint((scaled - hi) * scale)
            h, lw = np.int64(hi), np.int64(lo)
            total[0, code] += 1
            total[1, code] += h
            total[2, code] += lw
            if y >= 0:
                total[3, code] += 1
                if y == p:
                    total[4, code] += 1
                total[5, code] += h
                total[6, code] += lw
        return True

    return kernel


def equal_width_bins(scores: np.ndarray, n_bins: int, tables: tuple[np.ndarray, np.ndarray] | None) -> np.ndarray:
    """:func:`pbassess.counting.bins.assign_bins`'s equal-width rule in one compiled loop (the same bins, int64, same shape).

    Examples
    --------
    >>> equal_width_bins(np.array([0.0, 0.5, 1.0, np.nan]), 2, None).tolist()
    [0, 1, 1, 1]
    """
    flat = np.ascontiguousarray(scores, dtype=np.float64).ravel()
    lower, upper = tables if tables is not None else (np.empty(0), np.empty(0))
    out = np.empty(flat.size, dtype=np.int64)
    _bins_kernel()(flat, int(n_bins), lower, upper, out)
    return out.reshape(np.shape(scores))


@lru_cache(maxsize=1)
def _bins_kernel():
    import numba as nb

    @nb.njit(cache=True, nogil=True)
    def kernel(scores, n_bins, lower, upper, out):  # pragma: no cover - compiled
        last = n_bins - 1
        has_tables = lower.size > 0
        for i in range(scores.size):
            s = scores[i]
            t = s * n_bins
            if not (t <= last):                  # fmin: NaN and values above go to the last bin
                t = float(last)
            if t < 0.0:
                t = 0.0
            b = int(t)
            if has_tables:
                if s >= upper[b]:
                    b += 1
                elif s < lower[b]:
                    b -= 1
            out[i] = b

    return kernel
