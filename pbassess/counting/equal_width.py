"""The equal-width bin edges ``linspace(0, 1, B + 1)`` and where multiply-and-truncate misses them.

Shared by the NumPy bin rule (:mod:`pbassess.counting.bins`) and the compiled counting loop
(:mod:`pbassess.counting.kernels`), so that both put every score in the same bin.

Examples
--------
>>> is_equal_width(np.linspace(0, 1, 11)), is_equal_width(np.array([0.0, 0.3, 1.0]))
(True, False)
>>> truncation_exceptions(15) is None     # every product lands on its edge
True
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = ["is_equal_width", "linspace_edges", "truncation_exceptions"]


def is_equal_width(edges: np.ndarray) -> bool:
    """Whether ``edges`` are exactly ``numpy.linspace(0, 1, B + 1)`` (the edges of ``B`` equal-width bins).

    Examples
    --------
    >>> is_equal_width(np.linspace(0, 1, 16)), is_equal_width(np.array([0.0, 0.5, 0.9, 1.0]))
    (True, False)
    """
    n_bins = edges.size - 1
    return bool(edges[0] == 0.0 and edges[-1] == 1.0 and np.array_equal(edges, linspace_edges(n_bins)))


@lru_cache(maxsize=256)
def linspace_edges(n_bins: int) -> np.ndarray:
    """The read-only edges ``numpy.linspace(0, 1, n_bins + 1)``, made once per ``n_bins``.

    Examples
    --------
    >>> linspace_edges(4).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    edges.flags.writeable = False
    return edges


@lru_cache(maxsize=256)
def truncation_exceptions(n_bins: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Where ``trunc(s * B)`` (float64) and the bin rule disagree for ``linspace(0, 1, B + 1)`` edges.

    ``fl(s * B)`` is non-decreasing in ``s``, so ``trunc(fl(s * B))`` is a step function with
    one step at each interior edge, like the rule; the two differ only between the point
    ``t_k`` where the product first reaches ``k`` and the edge ``e_k = linspace[k]`` (a few
    ulp apart, found here by stepping with ``nextafter``). Returns ``None`` when every step
    lands on its edge (e.g. ``B`` = 2, 3, 15, 30), else the tables ``lower[b]`` (``-inf`` for
    ``b = 0``) and ``upper[b]`` (NaN for the last bin: no score moves past it) that :func:`pbassess.counting.bins.assign_bins`
    compares against to move a truncated index by one.

    Examples
    --------
    >>> truncation_exceptions(15) is None             # every product lands on its edge
    True
    >>> lower, upper = truncation_exceptions(10)      # 0.3 * 10 = 2.9999999999999996: some do not
    >>> float(lower[0]), float(upper[-1]), float(upper[2])
    (-inf, nan, 0.30000000000000004)
    """
    edges = linspace_edges(n_bins)
    scale = float(n_bins)
    exact = True
    for k in range(1, n_bins):
        x = edges[k]
        while np.floor(x * scale) >= k:
            x = np.nextafter(x, -np.inf)
        while np.floor(x * scale) < k:
            x = np.nextafter(x, np.inf)
        if x != edges[k]:
            exact = False
            break
    if exact:
        return None
    lower = edges[:-1].copy()
    lower[0] = -np.inf
    upper = edges[1:].copy()
    upper[-1] = np.nan   # nothing (not even +inf) moves up from the last bin
    return lower, upper
