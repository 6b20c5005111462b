"""The one adapter from a pool of predictions to the item arrays counting reads.

Counting works on the variables of ``Predictions.dataset`` (dims ``item`` and ``class``:
``predicted`` int codes, ``confidence``, ``label`` int codes with -1 for unlabeled, optional
``probs``, and the attribute columns listed in ``attrs["attributes"]``). A Predictions object
without ``.dataset`` (older releases) is read through its NumPy attributes, and an
``xarray.Dataset`` of that layout is accepted directly. Arrays stay NumPy or dask as given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pbassess.errors import DataError

__all__ = ["ItemArrays", "item_arrays"]

_CORE = ("predicted", "confidence", "label", "probs")


@dataclass(frozen=True)
class ItemArrays:
    """Per-item arrays (NumPy or dask) and the class names of one pool.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> items = item_arrays(Predictions.from_top1(["a", "b"], [0.9, 0.6], ["a", None]))
    >>> isinstance(items, ItemArrays), items.classes, sorted(items.arrays)[:3]
    (True, ('a', 'b'), ['confidence', 'label', 'predicted'])
    """

    arrays: dict[str, Any]
    classes: tuple[str, ...]
    attributes: tuple[str, ...]
    is_lazy: bool

    @property
    def has_probs(self) -> bool:
        return "probs" in self.arrays

    def attribute(self, column: str) -> Any:
        if column not in self.attributes:
            have = ", ".join(self.attributes) or "none"
            raise DataError(f"attribute column {column!r} not found (available: {have})")
        return self.arrays[column]


def _is_dask(arr: Any) -> bool:
    return type(arr).__module__.startswith("dask")


def _from_dataset(ds: Any, classes: tuple[str, ...] | None) -> ItemArrays:
    missing = [v for v in ("predicted", "confidence", "label") if v not in ds.variables]
    if missing:
        raise DataError(f"the predictions dataset lacks the variable {missing[0]!r}")
    if classes is None:
        if "class" not in ds.coords:
            raise DataError("the predictions dataset has no 'class' coordinate naming the classes")
        classes = tuple(str(c) for c in ds["class"].values)
    attributes = tuple(ds.attrs.get("attributes", ()))
    if not attributes:
        attributes = tuple(str(v) for v in ds.data_vars if v not in _CORE and ds[v].dims == ("item",))
    arrays = {v: ds[v].data for v in _CORE if v in ds.variables}
    if "probs" in arrays and ds["probs"].dims != ("item", "class"):
        arrays["probs"] = ds["probs"].transpose("item", "class").data
    for col in attributes:
        arrays[col] = ds[col].data
    return ItemArrays(arrays, classes, attributes, any(_is_dask(a) for a in arrays.values()))


def item_arrays(preds: Any) -> ItemArrays:
    """The item arrays of ``preds`` (a Predictions, anything ``as_predictions`` accepts, or a Dataset).

    Examples
    --------
    >>> from pbassess import Predictions
    >>> items = item_arrays(Predictions.from_top1(["a", "b"], [0.9, 0.6], ["a", None]))
    >>> items.arrays["label"].tolist(), items.classes, items.is_lazy
    ([0, -1], ('a', 'b'), False)
    """
    import xarray as xr

    if isinstance(preds, xr.Dataset):
        return _from_dataset(preds, None)
    if not hasattr(preds, "classes"):
        try:
            from pbassess.data import as_predictions
        except ImportError:
            raise DataError(f"cannot count items of a {type(preds).__name__}; pass Predictions") from None
        preds = as_predictions(preds)
    classes = tuple(preds.classes)
    dataset = getattr(preds, "dataset", None)
    if dataset is not None:
        return _from_dataset(dataset, classes)
    arrays: dict[str, Any] = {
        "predicted": np.asarray(preds.predicted),
        "confidence": np.asarray(preds.confidence),
        "label": np.asarray(preds.labels),
    }
    if preds.probs is not None:
        arrays["probs"] = np.asarray(preds.probs)
    groups = dict(getattr(preds, "groups", {}) or {})
    for col, values in groups.items():
        arrays[col] = np.asarray(values)
    return ItemArrays(arrays, classes, tuple(groups), False)
