"""The NumPy counting core: cell codes and (weighted) counts per cell, batched over leading dims.

Every count of items into cells in pbassess goes through these three functions (the xarray /
dask face is :func:`pbassess.counting.count_cells`, whose chunk kernel uses them too):

* :func:`cell_codes` -- one flat cell code per item from several integer keys (row-major, like
  :func:`numpy.ravel_multi_index`), ``-1`` where any key is missing (negative) or out of range;
* :func:`cell_counts` -- the number (or the sum of ``weights``) of items per cell, for codes of
  any shape ``(..., N)`` (leading dims are batches: runs, draws, seeds), ignoring codes ``< 0``;
* :func:`cell_totals` -- several weighted sums over the same codes at once.

Like arviz-stats' ``base/array.py``, these depend on NumPy only and never see xarray.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["cell_codes", "cell_counts", "cell_totals"]


def cell_codes(keys: Sequence[Any], sizes: Sequence[int]) -> np.ndarray:
    """One flat cell code per item from integer keys (row-major), ``-1`` where a key is invalid.

    Parameters
    ----------
    keys : sequence of array_like of int, each shape (..., N)
        One integer code per item for each key (e.g. predicted class, bin, group); a negative
        code means "no cell" (an unlabeled item's true class, a missing attribute).
    sizes : sequence of int
        The number of levels of each key.

    Returns
    -------
    numpy.ndarray of int64, shape (..., N)
        ``sum_j key_j * prod(sizes[j+1:])``, or ``-1`` when any key is negative or ``>= size``.

    Examples
    --------
    >>> cell_codes([[0, 1, 1, -1], [2, 0, 1, 0]], [2, 3]).tolist()
    [2, 3, 4, -1]
    """
    if len(keys) != len(sizes):
        raise ValueError(f"{len(keys)} keys for {len(sizes)} sizes")
    if not keys:
        raise ValueError("cell_codes needs at least one key")
    code = np.zeros(np.shape(keys[0]), dtype=np.int64)
    bad = np.zeros(code.shape, dtype=bool)
    for key, size in zip(keys, sizes, strict=True):
        k = np.asarray(key, dtype=np.int64)
        bad |= (k < 0) | (k >= int(size))
        code = code * int(size) + k
    code[bad] = -1
    return code


def cell_counts(codes: Any, n_cells: int, weights: Any = None) -> np.ndarray:
    """Items (or the sum of ``weights``) per cell, batched over the leading dims of ``codes``.

    Parameters
    ----------
    codes : array_like of int, shape (..., N)
        Cell code of each item; codes ``< 0`` (or ``>= n_cells``) belong to no cell.
    n_cells : int
        The number of cells.
    weights : array_like of float, shape broadcastable to ``codes``, optional
        A weight per item (default 1: counts).

    Returns
    -------
    numpy.ndarray, shape (..., n_cells)
        int64 counts without weights; float64 sums with weights (integer-valued boolean or
        integer weights come back as int64).

    Examples
    --------
    >>> cell_counts([0, 2, 2, -1], 3).tolist()
    [1, 0, 2]
    >>> cell_counts([[0, 1], [1, 1]], 2, weights=[[1.0, 0.5], [2.0, 1.0]]).tolist()
    [[1.0, 0.5], [0.0, 3.0]]
    >>> cell_counts(np.zeros((2, 0), dtype=int), 3).tolist()    # no items: zero counts
    [[0, 0, 0], [0, 0, 0]]
    """
    c = np.asarray(codes, dtype=np.int64)
    n_cells = int(n_cells)
    integer = weights is None or np.asarray(weights).dtype.kind in "biu"
    w = None if weights is None else np.broadcast_to(np.asarray(weights), c.shape)
    lead = c.shape[:-1] if c.ndim else ()
    # rows spelled out (not -1), so that no items at all still give zero counts per batch row
    flat = c.reshape(math.prod(lead), c.shape[-1] if c.ndim else 1)
    rows = flat.shape[0]
    valid = (flat >= 0) & (flat < n_cells)
    # Offset each batch row into its own block of cells, then one bincount for all rows.
    offset = flat + (np.arange(rows, dtype=np.int64) * n_cells)[:, None]
    idx = offset[valid]
    if w is None:
        out = np.bincount(idx, minlength=rows * n_cells)
    else:
        wf = w.reshape(flat.shape)[valid]
        out = np.bincount(idx, weights=wf.astype(float), minlength=rows * n_cells)
        if integer:
            out = np.rint(out).astype(np.int64)
    return out.reshape(*lead, n_cells)


def cell_totals(codes: Any, n_cells: int, weights: dict[str, Any]) -> dict[str, np.ndarray]:
    """``{"n": counts, name: sum of weights per cell, ...}`` over the same codes.

    Parameters
    ----------
    codes : array_like of int, shape (..., N)
        Cell code of each item (codes < 0 belong to no cell).
    n_cells : int
    weights : dict of str to array_like
        Per-item weights to sum per cell, by name.

    Returns
    -------
    dict of str to ndarray, shape (..., n_cells)
        ``n`` (items per cell) and one sum per weight.

    Examples
    --------
    >>> t = cell_totals([0, 1, 1], 2, {"correct": [True, False, True]})
    >>> t["n"].tolist(), t["correct"].tolist()
    ([1, 2], [1, 1])
    """
    out = {"n": cell_counts(codes, n_cells)}
    for name, w in weights.items():
        out[name] = cell_counts(codes, n_cells, w)
    return out
