"""Validation of the :class:`xarray.Dataset` behind :class:`~pbassess.data.Predictions`.

Layout (the contract with the counting layer and the lazy readers)::

    dims    item (N), class (K >= 2)
    coords  class   (class,)  the K class names (str, unique, non-empty)
            item_id (item,)   item ids, int64 or str (optional: 0..N-1 when absent)
    vars    predicted  (item,)        int class index 0..K-1
            confidence (item,)        float, probability of the predicted class, in [0, 1]
            label      (item,)        int class index, -1 = unlabeled (optional: all -1)
            probs      (item, class)  float, rows sum to 1 (optional: top-1 form without it)
            <attribute> (item,)       one per attribute column, keeping its dtype
    attrs   name (str), attributes (list of the attribute variable names),
            optional threshold (float) and ties ("negative"/"positive") of binary scores

Numpy-backed datasets are checked at once. For dask-backed ones only the structure (dims,
dtypes, class names) is checked eagerly; the value checks are attached to each variable
chunk by chunk (``map_blocks``), so they run, with global row numbers, whenever a chunk is
computed, and raise the same one-line :class:`~pbassess.errors.DataError`. Uniqueness of
item ids is not checked here for dask-backed datasets: the lazy readers check it when they
open a source, streaming (:func:`pbassess.data.lazy.check_unique_ids`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.constants import SUM_TOLERANCE, UNLABELED
from pbassess.errors import DataError

__all__ = ["RESERVED", "check_dataset"]

#: Names an attribute column cannot take.
RESERVED = frozenset({"predicted", "confidence", "label", "labels", "probs", "item", "item_id", "class"})


def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask.reshape(mask.shape[0], -1).any(axis=1))[0])


def _is_dask(var: Any) -> bool:
    return getattr(var, "chunks", None) is not None


# ------------------------------------------------------------------ value checks (one block)
def check_predicted(pred: np.ndarray, k: int, offset: int = 0) -> None:
    bad = (pred < 0) | (pred >= k)
    if bad.any():
        row = _first(bad)
        raise DataError(f"predicted: row {row + offset} has class index {pred[row]} outside 0..{k - 1}")


def check_labels(lab: np.ndarray, k: int, offset: int = 0) -> None:
    bad = (lab < UNLABELED) | (lab >= k)
    if bad.any():
        row = _first(bad)
        raise DataError(f"labels: row {row + offset} has class index {lab[row]} outside 0..{k - 1} (-1 = unlabeled)")


def check_confidence(conf: np.ndarray, k: int, top1_bound: bool, tolerance: float, offset: int = 0) -> None:
    finite = np.isfinite(conf)
    if not finite.all():
        raise DataError(f"confidence: row {_first(~finite) + offset} is NaN or infinite")
    bad = (conf < 0) | (conf > 1)
    if bad.any():
        row = _first(bad)
        raise DataError(f"confidence: row {row + offset} is {float(conf[row])!r}, outside [0, 1]")
    if top1_bound:
        low = conf < 1.0 / k - tolerance
        if low.any():
            row = _first(low)
            raise DataError(f"confidence: row {row + offset} is {float(conf[row]):g}, below 1/K = {1 / k:.4g}: the "
                            f"probability of the top class among {k} cannot be smaller")


def check_probs(p: np.ndarray, tolerance: float, offset: int = 0) -> None:
    finite = np.isfinite(p)
    if not finite.all():
        raise DataError(f"probabilities: row {_first(~finite) + offset} contains NaN or infinity")
    if (p < 0).any():
        row = _first(p < 0)
        raise DataError(f"probabilities: row {row + offset} has a negative value ({p[row].min():g})")
    sums = p.sum(axis=1)
    off = np.abs(sums - 1) > tolerance
    if off.any():
        row = _first(off)
        raise DataError(
            f"probabilities: row {row + offset} sums to {sums[row]:.6g}, not 1 (tolerance {tolerance:g}; pass "
            "normalize=True, or --normalize on the command line, to rescale)")


def check_agreement(pred: np.ndarray, conf: np.ndarray, p: np.ndarray, classes: tuple[str, ...],
                    threshold: float | None, ties: str, tolerance: float, offset: int = 0) -> None:
    """Predicted class, its confidence and the probability vectors must tell one story."""
    chosen = np.take_along_axis(p, pred[:, None].astype(np.intp), axis=1)[:, 0]
    if threshold is None:
        best = p.max(axis=1)
        bad = chosen < best - tolerance
        if bad.any():
            row = _first(bad)
            top = int(p[row].argmax())
            raise DataError(f"predicted: row {row + offset} is class {classes[pred[row]]!r} but its probabilities "
                            f"favour {classes[top]!r} ({p[row, top]:.4g} > {chosen[row]:.4g})")
    else:
        score = p[:, 1]
        expected = (score >= threshold) if ties == "positive" else (score > threshold)
        bad = expected.astype(pred.dtype) != pred
        if bad.any():
            row = _first(bad)
            raise DataError(f"predicted: row {row + offset} is class {classes[pred[row]]!r} but score "
                            f"{score[row]:.4g} with threshold {threshold:g} gives {classes[int(expected[row])]!r}")
    bad = np.abs(conf - chosen) > tolerance
    if bad.any():
        row = _first(bad)
        raise DataError(f"confidence: row {row + offset} is {float(conf[row]):.4g} but the probability of its "
                        f"predicted class is {chosen[row]:.4g}")


# ------------------------------------------------------------------ structure
def _require_int(ds: Any, var: str, what: str) -> None:
    kind = ds[var].dtype.kind
    if kind not in "iu":
        raise DataError(f"{what} must hold integer class indices, got {ds[var].dtype} values "
                        "(use from_top1 / as_predictions for class names)")


def _attribute_names(ds: Any) -> list[str]:
    core = {"predicted", "confidence", "label", "probs"}
    listed = ds.attrs.get("attributes")
    names = [str(v) for v in ds.data_vars if v not in core] if listed is None else [str(a) for a in listed]
    for col in names:
        if col in RESERVED:
            raise DataError(f"attribute column {col!r} clashes with a reserved name ({', '.join(sorted(RESERVED))})")
        if col not in ds.data_vars:
            raise DataError(f"attribute column {col!r} is listed in attrs['attributes'] but is not a variable")
        if ds[col].dims != ("item",):
            raise DataError(f"attribute column {col!r} has dims {ds[col].dims}, expected ('item',)")
    for v in ds.data_vars:
        if v not in core and v not in names:
            raise DataError(f"variable {v!r} is neither a prediction variable nor a listed attribute column")
    return names


def _structure(ds: Any) -> Any:
    import xarray as xr

    if not isinstance(ds, xr.Dataset):
        raise DataError(f"expected an xarray.Dataset, got {type(ds).__name__}")
    for var in ("predicted", "confidence"):
        if var not in ds.data_vars:
            raise DataError(f"the dataset has no {var!r} variable (variables: {', '.join(map(str, ds.data_vars))})")
        if ds[var].dims != ("item",):
            raise DataError(f"{var} must have dims ('item',), got {ds[var].dims}")
    if ds.sizes["item"] == 0:
        raise DataError("the pool is empty: no items were given")
    if "class" not in ds.coords:
        raise DataError("the dataset has no 'class' coordinate naming the classes")
    from pbassess.data._encoding import as_class_names

    names = as_class_names([str(c) for c in ds["class"].values.tolist()], None)
    if len(names) < 2:
        raise DataError(f"need at least two classes, got {len(names)} ({', '.join(names)})")
    ds = ds.assign_coords({"class": np.asarray(names, dtype=object)})
    _require_int(ds, "predicted", "predicted")
    if ds["confidence"].dtype.kind not in "fiu":
        raise DataError(f"confidence must be numbers, got {ds['confidence'].dtype} values")
    if ds["confidence"].dtype.kind != "f":
        ds["confidence"] = ds["confidence"].astype(float)
    lazy = _is_dask(ds["predicted"].variable)
    if "label" not in ds.data_vars:
        ds["label"] = ds["predicted"] * 0 + UNLABELED
    if ds["label"].dims != ("item",):
        raise DataError(f"label must have dims ('item',), got {ds['label'].dims}")
    _require_int(ds, "label", "labels")
    if "probs" in ds.data_vars:
        if ds["probs"].dims != ("item", "class"):
            raise DataError(f"probs must have dims ('item', 'class'), got {ds['probs'].dims}")
        if ds["probs"].dtype.kind not in "fiu":
            raise DataError(f"probabilities must be numbers, got {ds['probs'].dtype} values")
        if ds["probs"].dtype.kind != "f":
            ds["probs"] = ds["probs"].astype(float)
    if "item_id" in ds.data_vars:
        ds = ds.set_coords("item_id")
    if "item_id" not in ds.coords and "item" in ds.coords:
        ds = ds.assign_coords(item_id=("item", ds["item"].values)).drop_vars("item")
    attributes = _attribute_names(ds)
    if "item_id" not in ds.coords:
        if lazy:
            import dask.array as da

            ids = da.arange(ds.sizes["item"], chunks=ds["predicted"].data.chunks, dtype=np.int64)
        else:
            ids = np.arange(ds.sizes["item"], dtype=np.int64)
        ds = ds.assign_coords(item_id=("item", ids))
    elif ds["item_id"].dims != ("item",):
        raise DataError(f"item_id must have dims ('item',), got {ds['item_id'].dims}")
    elif ds["item_id"].dtype.kind in "USb":
        ds = ds.assign_coords(item_id=("item", ds["item_id"].values.astype(str).astype(object)))
    ds.attrs = {**ds.attrs, "attributes": attributes, "name": str(ds.attrs.get("name", "classifier"))}
    return ds


def _threshold(ds: Any) -> tuple[float | None, str]:
    t = ds.attrs.get("threshold")
    return (None if t is None else float(t)), str(ds.attrs.get("ties", "negative"))


def _check_eager(ds: Any, tolerance: float, top1_bound: bool) -> None:
    import pandas as pd

    classes = tuple(ds["class"].values.tolist())
    k = len(classes)
    pred = ds["predicted"].values
    check_predicted(pred, k)
    check_labels(ds["label"].values, k)
    threshold, ties = _threshold(ds)
    has_probs = "probs" in ds.data_vars
    conf = ds["confidence"].values
    check_confidence(conf, k, top1_bound and not has_probs and threshold is None, tolerance)
    if has_probs:
        p = ds["probs"].values
        check_probs(p, tolerance)
        check_agreement(pred, conf, p, classes, threshold, ties, tolerance)
    ids = ds["item_id"].values
    if ids.dtype.kind in "iu" and (ids.shape[0] < 2 or (ids[1:] > ids[:-1]).all()):
        return
    if not pd.Index(ids).is_unique:
        from pbassess.data._encoding import first_duplicate

        dup, count = first_duplicate(ids)
        raise DataError(f"item ids must be unique: {dup!r} appears {count} times")


def _offset(block_info: dict | None) -> int:
    if not block_info or 0 not in block_info:
        return 0
    return int(block_info[0]["array-location"][0][0])


def _attach_lazy_checks(ds: Any, tolerance: float, top1_bound: bool) -> Any:
    """Wrap each dask-backed variable so that its values are checked chunk by chunk."""
    import dask.array as da

    ds = ds.unify_chunks()
    classes = tuple(ds["class"].values.tolist())
    k = len(classes)
    threshold, ties = _threshold(ds)
    has_probs = "probs" in ds.data_vars
    if has_probs and _is_dask(ds["probs"].variable):
        ds["probs"] = ds["probs"].chunk({"class": -1})

    def wrap(var: str, check) -> None:
        if not _is_dask(ds[var].variable):
            check(ds[var].values, None)
            return
        data = ds[var].data

        def run(block, block_info=None):
            check(block, block_info)
            return block

        ds[var] = (ds[var].dims, da.map_blocks(run, data, dtype=data.dtype, meta=np.array((), dtype=data.dtype)),
                   ds[var].attrs)

    wrap("label", lambda b, info: check_labels(b, k, _offset(info)))
    wrap("confidence", lambda b, info: check_confidence(b, k, top1_bound and not has_probs and threshold is None,
                                                        tolerance,
                                                        _offset(info)))
    if has_probs:
        wrap("probs", lambda b, info: check_probs(b, tolerance, _offset(info)))
    pred = ds["predicted"].data
    if has_probs and _is_dask(ds["predicted"].variable):
        conf, probs = da.asarray(ds["confidence"].data), da.asarray(ds["probs"].data)

        def run_all(p_block, c_block, probs_block, block_info=None):
            offset = _offset(block_info)
            p_block, c_block = p_block[:, 0], c_block[:, 0]  # 1-D inputs were given a class axis to align
            check_predicted(p_block, k, offset)
            check_agreement(p_block, c_block, probs_block, classes, threshold, ties, tolerance, offset)
            return p_block

        checked = da.map_blocks(run_all, pred[:, None], conf.rechunk(pred.chunks)[:, None],
                                probs.rechunk((pred.chunks[0], -1)), dtype=pred.dtype,
                                meta=np.array((), dtype=pred.dtype), drop_axis=1, chunks=pred.chunks)
        ds["predicted"] = (("item",), checked)
    else:
        wrap("predicted", lambda b, info: check_predicted(b, k, _offset(info)))
    return ds


def check_dataset(ds: Any, *, tolerance: float = SUM_TOLERANCE, top1_bound: bool = False) -> Any:
    """Validate a predictions dataset; returns it normalised (defaults filled in).

    Raises :class:`~pbassess.errors.DataError` with one line naming the variable and row at
    fault. Dask-backed variables are checked lazily, chunk by chunk (see the module docstring).
    With ``top1_bound`` a top-1 confidence below 1/K - tolerance is refused too (the raw
    constructor does this; ``from_top1`` accepts scores that are not probabilities).

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> ds = xr.Dataset({"predicted": ("item", np.array([0, 1])), "confidence": ("item", [0.9, 0.7])},
    ...                 coords={"class": ["a", "b"]})
    >>> sorted(check_dataset(ds).data_vars)
    ['confidence', 'label', 'predicted']
    >>> check_dataset(ds.assign(confidence=("item", [0.9, 0.2])), top1_bound=True)
    Traceback (most recent call last):
    ...
    pbassess.errors.DataError: confidence: row 1 is 0.2, below 1/K = 0.5: the probability of the top class among 2 cannot be smaller
    """
    ds = _structure(ds.copy())
    lazy = any(_is_dask(ds[v].variable) for v in ("predicted", "confidence", "label", "probs") if v in ds.data_vars)
    if lazy:
        return _attach_lazy_checks(ds, tolerance, top1_bound)
    _check_eager(ds, tolerance, top1_bound)
    return ds
