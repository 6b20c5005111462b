"""Pools larger than memory: Parquet, Zarr and large CSV read lazily into dask-backed Predictions.

Parquet (one file or a folder of files) and CSV use the columns of the CSV form: ``item_id``
(optional), ``label`` (optional; null, NaN, empty or -1 = unlabeled), either ``p_<class>``
probability columns or ``predicted`` + ``confidence``, and any attribute columns. Class codes
may be integers (0..K-1) or names. A Zarr store holds the layout of ``Predictions.dataset``
(as written by :func:`write_zarr`).

Nothing is read up front except Parquet footers (row counts, schema, column statistics) and,
for a CSV file, one pass that counts lines; a top-1 pool with class *names* and no
``classes=`` needs one more pass over its ``predicted`` and ``label`` columns to learn the
class names. Each chunk (a group of Parquet row groups, or a range of CSV lines) becomes one
dask task per column, so counting (:func:`pbassess.counting.count_cells`) reads only the
columns it needs, chunk by chunk, on the scheduler chosen by :mod:`pbassess.scale`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from pbassess.constants import SUM_TOLERANCE
from pbassess.data._lazy_sources import TARGET_CHUNK_VALUES, CsvSource, ParquetSource
from pbassess.errors import DataError

__all__ = ["read_lazy_predictions", "write_zarr"]


def _layout(path: Path, format: str | None) -> str:
    if format is not None:
        if format not in ("parquet", "zarr", "csv"):
            raise DataError(f"unknown lazy format {format!r} (choose parquet, zarr or csv)")
        return format
    suffix = path.suffix.lower()
    if suffix == ".zarr" or (path.is_dir() and any((path / m).exists() for m in (".zgroup", "zarr.json"))):
        return "zarr"
    if suffix in (".parquet", ".pq") or path.is_dir():
        return "parquet"
    if suffix in (".csv", ".gz") or ".csv" in path.name:
        return "csv"
    raise DataError(f"{path}: cannot tell its format; name it .parquet, .zarr or .csv, or pass format=")


def _column_names(path: Path, layout: str) -> list[str]:
    if layout == "csv":
        import csv

        with open(path, newline="") as fh:
            return next(csv.reader(fh), [])
    import pyarrow.parquet as pq

    first = path if path.is_file() else next(iter(sorted(p for p in path.rglob("*.parquet"))), None)
    if first is None:
        first = next(iter(sorted(p for p in path.rglob("*.pq"))), None)
    if first is None:
        raise DataError(f"{path}: the folder holds no .parquet files")
    return list(pq.read_schema(first).names)


# ------------------------------------------------------------------ per-chunk readers (run in tasks)
def _int_codes(column: Any, what: str, allow_missing: bool) -> np.ndarray:
    import pyarrow as pa
    import pyarrow.compute as pc

    if column.null_count and not allow_missing:
        raise DataError(f"{what}: a value is missing in a chunk of {len(column)} rows")
    if pa.types.is_floating(column.type):
        values = column.to_numpy(zero_copy_only=False)
        missing = np.isnan(values)
        if not np.array_equal(values[~missing], np.floor(values[~missing])):
            raise DataError(f"{what}: holds non-integer numbers; give class indices or names")
        if missing.any() and not allow_missing:
            raise DataError(f"{what}: a value is missing")
        return np.where(missing, -1, values).astype(np.int64)
    return pc.fill_null(column, -1).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)


def _read_codes(source: Any, chunk: int, col: str, classes: tuple[str, ...], fast: bool, what: str,
                allow_missing: bool) -> np.ndarray:
    import pyarrow as pa

    from pbassess.data._encoding import encode_classes

    column = source.read(chunk, [col]).column(0).combine_chunks()
    if fast and (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)):
        return _int_codes(column, what, allow_missing)
    return encode_classes(column, classes, what, allow_missing=allow_missing)


def _read_float(source: Any, chunk: int, col: str) -> np.ndarray:
    return source.read(chunk, [col]).column(0).to_numpy().astype(np.float64, copy=False)


def _read_probs(source: Any, chunk: int, cols: list[str], normalize: bool) -> np.ndarray:
    table = source.read(chunk, cols)
    out = np.empty((table.num_rows, len(cols)), dtype=np.float64)
    for j, col in enumerate(cols):
        out[:, j] = table.column(col).to_numpy()
    if normalize:
        sums = out.sum(axis=1, keepdims=True)
        if (sums <= 0).any():
            raise DataError("probabilities: a row sums to zero and cannot be normalized")
        out /= sums
    return out


def _read_attribute(source: Any, chunk: int, col: str, dtype: Any) -> np.ndarray:
    from pbassess.data._encoding import as_attribute

    column = source.read(chunk, [col]).column(0)
    values = as_attribute(column, len(column), col)
    if np.dtype(dtype).kind in "iu" and values.dtype.kind == "f":
        if np.isnan(values).any():
            raise DataError(f"attribute column {col!r}: an integer column has missing values in a later chunk")
        values = values.astype(np.int64)
    return values.astype(dtype, copy=False)


def _read_ids(source: Any, chunk: int, col: str, dtype: Any) -> np.ndarray:
    values = source.read(chunk, [col]).column(0).to_numpy(zero_copy_only=False)
    return values.astype(np.int64) if np.dtype(dtype).kind == "i" else np.asarray([str(v) for v in values], dtype=object)


# ------------------------------------------------------------------ assembling dask arrays
def _stack(source: Any, func: Any, args: tuple, dtype: Any, key: str, width: int | None = None) -> Any:
    import dask
    import dask.array as da
    from dask.base import tokenize

    files = getattr(source, "files", None) or (source.file,)
    stamps = [(f, os.stat(f).st_mtime_ns, os.stat(f).st_size) for f in files]  # a rewritten file gets new keys
    token = tokenize(stamps, key, args)
    parts = []
    for i, (rows, *_) in enumerate(source.chunks):
        task = dask.delayed(func, pure=True)(source, i, *args, dask_key_name=f"pbassess-read-{key}-{token}-{i}")
        shape = (rows,) if width is None else (rows, width)
        parts.append(da.from_delayed(task, shape=shape, dtype=dtype))
    return da.concatenate(parts, axis=0)


def _arrow_dtype(field: Any) -> Any:
    import pyarrow as pa

    t = field.type.value_type if pa.types.is_dictionary(field.type) else field.type
    if pa.types.is_boolean(t):
        return np.dtype(bool)
    if pa.types.is_integer(t):
        return np.dtype(np.int64)
    if pa.types.is_floating(t):
        return np.dtype(np.float64)
    return np.dtype(object)


def _is_numeric(field: Any) -> bool:
    import pyarrow as pa

    return pa.types.is_integer(field.type) or pa.types.is_floating(field.type)


def _top1_classes(source: Any, classes: Any, names: list[str], client: Any) -> tuple[tuple[str, ...], bool]:
    """Class names of a top-1 pool and whether the code columns hold class indices directly."""
    from pbassess.data._encoding import _INT_TEXT, as_class_names, infer_classes

    code_cols = [c for c in ("predicted", "label") if c in names]
    numeric = all(_is_numeric(source.schema.field(c)) for c in code_cols)
    if classes is not None:
        names_ = as_class_names(list(classes), None)
        indices = all(_INT_TEXT.match(c) and int(c) == i for i, c in enumerate(names_))
        return names_, numeric and (indices or not any(_INT_TEXT.match(c) for c in names_))
    import dask

    from pbassess.scale import compute

    if numeric:
        top = [source.column_max(c) for c in code_cols]
        if any(t is None for t in top):
            maxima = [_stack(source, _read_codes, (c, (), True, c, c == "label"), np.int64, f"max-{c}").max()
                      for c in code_cols]
            top = [int(m) for m in compute(*maxima, client=client)]
        k = int(max(top)) + 1
        return tuple(str(i) for i in range(max(k, 2))), True

    def uniques(chunk: int, col: str) -> list[Any]:
        return source.read(chunk, [col]).column(0).unique().to_pylist()

    found = compute(*[dask.delayed(uniques)(i, c) for c in code_cols for i in range(len(source.chunks))],
                    client=client)
    per_col = {c: [v for part in found[j * len(source.chunks):(j + 1) * len(source.chunks)] for v in part]
               for j, c in enumerate(code_cols)}
    return infer_classes(sorted(set(per_col["predicted"]), key=str), sorted(set(per_col.get("label", [])), key=str)), False


def _source_dataset(path: Path, layout: str, *, classes: Any, normalize: bool, name: str,
                    rows_per_chunk: int | None, client: Any) -> Any:
    import xarray as xr

    from pbassess.data._frame import RESERVED_COLUMNS, check_columns, table_form

    names = _column_names(path, layout)
    check_columns(names, str(path))
    form = table_form(names, str(path))
    prob_cols = [c for c in names if c.startswith("p_")]
    width = len(prob_cols) if form == "probs" else 4
    rows = int(rows_per_chunk) if rows_per_chunk else max(1, TARGET_CHUNK_VALUES // max(width, 4))
    source = ParquetSource.open(path, rows) if layout == "parquet" else CsvSource.open(path, rows)
    data: dict[str, Any] = {}
    if form == "probs":
        from pbassess.data._encoding import _INT_TEXT, as_class_names

        class_names = as_class_names(list(classes) if classes is not None else [c[2:] for c in prob_cols], None)
        if len(class_names) != len(prob_cols):
            raise DataError(f"{len(class_names)} class names given for {len(prob_cols)} probability columns")
        probs = _stack(source, _read_probs, (prob_cols, normalize), np.float64, "probs", width=len(prob_cols))
        data["probs"] = (("item", "class"), probs)
        data["predicted"] = ("item", probs.argmax(axis=1).astype(np.int64))
        data["confidence"] = ("item", probs.max(axis=1))
        fast = all(_INT_TEXT.match(c) and int(c) == i for i, c in enumerate(class_names)) or not any(
            _INT_TEXT.match(c) for c in class_names)
    else:
        class_names, fast = _top1_classes(source, classes, names, client)
        data["predicted"] = ("item", _stack(source, _read_codes, ("predicted", class_names, fast, "predicted", False),
                                            np.int64, "predicted"))
        data["confidence"] = ("item", _stack(source, _read_float, ("confidence",), np.float64, "confidence"))
    if "label" in names:
        data["label"] = ("item", _stack(source, _read_codes, ("label", class_names, fast, "labels", True),
                                        np.int64, "label"))
    attributes = [c for c in names if c not in RESERVED_COLUMNS and not c.startswith("p_")]
    for col in attributes:
        dtype = _arrow_dtype(source.schema.field(col))
        data[col] = ("item", _stack(source, _read_attribute, (col, dtype), dtype, f"attr-{col}"))
    coords: dict[str, Any] = {"class": np.asarray(class_names, dtype=object)}
    if "item_id" in names:
        dtype = np.dtype(np.int64) if source.schema.field("item_id").type.id in _INT_TYPE_IDS else np.dtype(object)
        coords["item_id"] = ("item", _stack(source, _read_ids, ("item_id", dtype), dtype, "item_id"))
    return xr.Dataset(data, coords=coords, attrs={"name": name, "attributes": attributes})


_INT_TYPE_IDS = frozenset(range(2, 10))  # pyarrow type ids of (u)int8..64


def _zarr_dataset(path: Path, name: str) -> Any:
    import warnings

    import xarray as xr

    try:
        with warnings.catch_warnings():  # stores without consolidated metadata open fine, only slower
            warnings.simplefilter("ignore", RuntimeWarning)
            ds = xr.open_zarr(path)
    except (OSError, ValueError, KeyError) as exc:
        raise DataError(f"{path}: not a readable Zarr store ({exc})") from None
    if "predicted" not in ds.data_vars:
        raise DataError(f"{path}: the Zarr store has no 'predicted' variable (write it with pbassess.data.lazy.write_zarr)")
    if "label" in ds.data_vars and ds["label"].dtype.kind == "f":
        ds["label"] = ds["label"].fillna(-1).astype(np.int64)
    for var in ("class", "item_id"):
        if var in ds.coords and ds[var].dtype.kind == "U":
            ds = ds.assign_coords({var: (ds[var].dims, ds[var].values.astype(object))})
    ds.attrs = {**ds.attrs, "name": ds.attrs.get("name", name)}
    if isinstance(ds.attrs.get("attributes"), str):
        ds.attrs["attributes"] = [ds.attrs["attributes"]]
    return ds


def read_lazy_predictions(path: Any, *, classes: Any = None, normalize: bool = False, name: str | None = None,
                          format: str | None = None, rows_per_chunk: int | None = None,
                          tolerance: float = SUM_TOLERANCE, client: Any = None) -> Any:
    """Read a Parquet file or folder, a Zarr store or a large CSV file as dask-backed Predictions.

    Parameters
    ----------
    path : str or Path
        ``*.parquet`` / ``*.pq`` file, a folder of them, a ``*.zarr`` store or a ``*.csv`` file.
    classes : sequence, optional
        Class names; needed only to name integer codes, or to skip the pass that finds the
        names of a top-1 pool with text class names.
    normalize : bool
        Rescale probability rows to sum to one.
    name : str, optional
        Display name (default: the file or folder name).
    format : {"parquet", "zarr", "csv"}, optional
        Override the detection from the suffix.
    rows_per_chunk : int, optional
        Rows per dask chunk (default: about 2**24 values per chunk; Parquet chunks are whole
        row groups).
    tolerance : float
        Allowed deviation of a probability row sum from one (checked chunk by chunk).
    client : distributed.Client or str, optional
        Where the passes made while opening run (see :mod:`pbassess.scale`).

    Returns
    -------
    Predictions
        With ``is_lazy`` True: values are read and validated chunk by chunk when computed.

    Examples
    --------
    >>> import tempfile, pathlib, pandas as pd
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "pool.parquet"
    >>> pd.DataFrame({"predicted": [0, 1, 1], "confidence": [0.9, 0.8, 0.6],
    ...               "label": [0, None, 0], "site": ["a", "b", "a"]}).to_parquet(f)
    >>> p = read_lazy_predictions(f, classes=["cat", "dog"])
    >>> p.is_lazy, p.n_items, p.classes, p.labels.tolist()
    (True, 3, ('cat', 'dog'), [0, -1, 0])
    """
    from pbassess.data.predictions import Predictions

    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: no such file or folder")
    layout = _layout(path, format)
    label = name or path.name.split(".")[0]
    if layout == "zarr":
        ds = _zarr_dataset(path, label)
    else:
        ds = _source_dataset(path, layout, classes=classes, normalize=normalize, name=label,
                             rows_per_chunk=rows_per_chunk, client=client)
    return Predictions.from_dataset(ds, name=name, tolerance=tolerance)


def write_zarr(preds: Any, path: Any, *, rows_per_chunk: int = 1 << 20) -> Path:
    """Write a pool to a Zarr store that :func:`read_lazy_predictions` reads back lazily.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from pbassess import Predictions
    >>> p = Predictions.from_top1(["a", "b"], [0.9, 0.7], ["a", None])
    >>> store = write_zarr(p, pathlib.Path(tempfile.mkdtemp()) / "pool.zarr")
    >>> q = read_lazy_predictions(store)
    >>> q.is_lazy, q.classes, q.labels.tolist()
    (True, ('a', 'b'), [0, -1])
    """
    path = Path(path)
    ds = preds.dataset.copy()
    ds = ds.assign_coords({"class": ds["class"].values.astype(str)})
    if "item_id" in ds.coords and ds["item_id"].dtype.kind == "O":
        ds = ds.assign_coords(item_id=("item", np.asarray(ds["item_id"].values, dtype=str)))
    for col in ds.attrs.get("attributes", []):
        if ds[col].dtype.kind == "O":
            ds[col] = ds[col].astype(str)
    ds = ds.chunk({"item": int(rows_per_chunk)})
    ds.attrs = {k: v for k, v in ds.attrs.items() if v is not None}
    ds.to_zarr(path, mode="w", consolidated=False)
    return path
