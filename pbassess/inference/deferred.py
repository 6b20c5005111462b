"""Groups of a fit's DataTree whose values are computed on first read (the ``prior`` and ``log_prior`` groups).

A conjugate fit of 10^6 labeled items spends most of its time on what only PSIS-LOO checks,
prior-sensitivity (``az.psense``) and saving read: the prior draws (Beta draws with small
shapes, the slowest NumPy draws), the free variables of those draws and the log prior density
at every posterior draw. :func:`deferred_dataset` builds such a group with its variables,
dims, shapes and coordinates known at once and its values computed, once, when any of them is
first read -- the way xarray reads a netCDF file lazily (a
:class:`xarray.backends.BackendArray` behind a lazily indexed, memory-cached variable). Anything
that reads values (``.values``, ``.to_numpy()``, ArviZ, ``to_netcdf``, ``==``) gets exactly the
numbers an eager computation gives.

The prior draws come from a copy of the fit's random generator taken right after the posterior
draws, so they are the draws an eager fit makes; :func:`pbassess.inference.fit` defers them only
when that generator is private to the fit (a seed that is ``None``, an integer or a
``SeedSequence``), so a caller's Generator still ends where an eager fit leaves it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import xarray as xr
from xarray.backends import BackendArray
from xarray.core import indexing

__all__ = ["Deferred", "deferred_dataset"]


class Deferred:
    """A computation of named ``(dims, array)`` values, run once on first use (thread-safe).

    Pickling (or deep-copying) computes the values and keeps them, so a copy never needs the
    computation's closure.

    Examples
    --------
    >>> calls = []
    >>> d = Deferred(lambda: calls.append(1) or {"x": (("a",), np.arange(3.0))})
    >>> d.values()["x"][1].tolist(), d.values()["x"][1].sum(), len(calls)
    ([0.0, 1.0, 2.0], np.float64(3.0), 1)
    """

    def __init__(self, compute: Callable[[], Mapping[str, tuple[tuple[str, ...], np.ndarray]]]) -> None:
        self._compute: Callable[[], Mapping[str, Any]] | None = compute
        self._values: dict[str, tuple[tuple[str, ...], np.ndarray]] | None = None
        self._lock = threading.Lock()

    def values(self) -> dict[str, tuple[tuple[str, ...], np.ndarray]]:
        if self._values is None:
            with self._lock:
                if self._values is None:
                    out = self._compute()
                    self._values = {name: (tuple(dims), np.ascontiguousarray(arr)) for name, (dims, arr) in out.items()}
                    self._compute = None
        return self._values

    def __getstate__(self) -> dict[str, Any]:
        return {"values": self.values()}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._compute, self._values, self._lock = None, state["values"], threading.Lock()


class _DeferredArray(BackendArray):
    """One variable of a :class:`Deferred` computation, as xarray's backends present a variable on disk."""

    def __init__(self, source: Deferred, name: str, shape: tuple[int, ...], dtype: np.dtype) -> None:
        self.source, self.name, self.shape, self.dtype = source, name, tuple(shape), np.dtype(dtype)

    def __getitem__(self, key: Any) -> np.ndarray:
        return indexing.explicit_indexing_adapter(key, self.shape, indexing.IndexingSupport.BASIC, self._raw)

    def _raw(self, key: tuple) -> np.ndarray:
        return self.source.values()[self.name][1][key]


def deferred_dataset(source: Deferred, layout: Mapping[str, tuple[tuple[str, ...], tuple[int, ...], Any]],
                     coords: Mapping[str, Any]) -> xr.Dataset:
    """A Dataset whose variables ``layout`` (name -> dims, shape, dtype) read their values from ``source``.

    Parameters
    ----------
    source : Deferred
        Computes every variable (name -> (dims, array of that shape and dtype)).
    layout : mapping
        Each variable's dims, shape and dtype, known without computing.
    coords : mapping
        Coordinates; those of the variables' dims are kept.

    Returns
    -------
    xarray.Dataset

    Examples
    --------
    >>> d = Deferred(lambda: {"x": (("chain", "draw"), np.ones((2, 3)))})
    >>> ds = deferred_dataset(d, {"x": (("chain", "draw"), (2, 3), float)}, {"chain": [0, 1], "draw": [0, 1, 2]})
    >>> d._values is None, float(ds["x"].sum()), d._values is None
    (True, 6.0, False)
    """
    variables = {}
    for name, (dims, shape, dtype) in layout.items():
        lazy = indexing.LazilyIndexedArray(_DeferredArray(source, name, shape, dtype))
        variables[name] = xr.Variable(dims, indexing.MemoryCachedArray(indexing.CopyOnWriteArray(lazy)))
    used = {d for dims, _, _ in layout.values() for d in dims}
    return xr.Dataset(variables, coords={k: v for k, v in coords.items() if k in used})
