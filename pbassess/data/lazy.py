"""Pools larger than memory: Parquet, Zarr and large CSV read lazily into dask-backed Predictions.

Parquet (one file or a folder of files) and CSV use the columns of the CSV form: ``item_id``
(optional), ``label`` (optional; null, NaN, empty or -1 = unlabeled), either ``p_<class>``
probability columns or ``predicted`` + ``confidence``, and any attribute columns. Class codes
may be integers (0..K-1) or names. A Zarr store holds the layout of ``Predictions.dataset``
(as written by :func:`write_zarr`).

Opening reads only Parquet footers (row counts, schema, column statistics), the metadata and
the list of chunk files of a Zarr store, or, for a CSV file, one pass that counts lines; plus,
when the pool has an ``item_id`` column, one streaming pass over that column alone to check the
ids are unique across all parts (:func:`check_unique_ids`, bounded memory). A top-1 pool with
class *names* and no ``classes=`` needs one more pass over its ``predicted`` and ``label``
columns to learn the class names. Each chunk (a group of Parquet row groups, a range of CSV
lines, or Zarr chunks) becomes one dask task per column, so counting
(:func:`pbassess.counting.count_cells`) reads only the columns it needs, chunk by chunk, on the
scheduler chosen by :mod:`pbassess.scale`.

What is checked, so that a damaged source never reads as a different pool:

* Parquet folders: files and folders whose name starts with ``.`` or ``_`` (``.ipynb_checkpoints/``,
  ``_SUCCESS``) are skipped, as pyarrow does; every part must hold the same column names (in any
  order) with types of one kind; the rows read must match the footers' row counts.
* Zarr stores: every chunk file of every array must be present (a missing chunk would read as
  the fill value: zeros for labels and predictions), the arrays must agree on the number of items,
  and every folder of the store must be an array or a group.
* Every pyarrow, zarr or codec error (truncated file, damaged page, bad decompression) becomes one
  :class:`~pbassess.errors.DataError` line naming the file or chunk file at fault.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from pbassess.constants import SUM_TOLERANCE
from pbassess.data._lazy_sources import TARGET_CHUNK_VALUES, CsvSource, ParquetSource, first_line
from pbassess.errors import DataError

__all__ = ["check_unique_ids", "read_lazy_predictions", "write_zarr"]


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
    from pbassess.data._lazy_sources import parquet_files, read_parquet_footer

    return list(read_parquet_footer(parquet_files(path)[0])[1].names)


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


def _numbers(column: Any, col: str) -> np.ndarray:
    """float64 values of a numeric Arrow column (missing -> NaN); text or other types refused."""
    import pyarrow as pa

    t = column.type.value_type if pa.types.is_dictionary(column.type) else column.type
    if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_null(t)):
        raise DataError(f"column {col!r} holds {t} values, not numbers")
    if pa.types.is_dictionary(column.type):
        column = column.cast(t)
    return column.to_numpy(zero_copy_only=False).astype(np.float64, copy=False)


def _read_float(source: Any, chunk: int, col: str) -> np.ndarray:
    return _numbers(source.read(chunk, [col]).column(0), col)


def _read_probs(source: Any, chunk: int, cols: list[str], normalize: bool) -> np.ndarray:
    table = source.read(chunk, cols)
    out = np.empty((table.num_rows, len(cols)), dtype=np.float64)
    for j, col in enumerate(cols):
        out[:, j] = _numbers(table.column(col), col)
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


def _guarded(func: Any, source: Any, chunk: int, *args: Any) -> Any:
    """Run a per-chunk reader; any error becomes one DataError line naming the file."""
    where = source.where(chunk)
    try:
        return func(source, chunk, *args)
    except DataError as exc:
        message = " ".join(str(exc).split())
        if where in message:
            raise
        raise DataError(f"{where}: {message}") from None
    except MemoryError:
        raise
    except Exception as exc:  # pyarrow, codec and conversion errors of a damaged or unexpected chunk
        raise DataError(f"{where}: cannot be read ({first_line(exc)})") from None


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
        task = dask.delayed(_guarded, pure=True)(func, source, i, *args,
                                                 dask_key_name=f"pbassess-read-{key}-{token}-{i}")
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
    from pbassess.data._encoding import INTEGER_TEXT, as_class_names, infer_classes

    code_cols = [c for c in ("predicted", "label") if c in names]
    numeric = all(_is_numeric(source.schema.field(c)) for c in code_cols)
    if classes is not None:
        names_ = as_class_names(list(classes), None)
        indices = all(INTEGER_TEXT.match(c) and int(c) == i for i, c in enumerate(names_))
        return names_, numeric and (indices or not any(INTEGER_TEXT.match(c) for c in names_))
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

    found = compute(*[dask.delayed(_guarded)(lambda _s, i, c: uniques(i, c), source, i, c)
                      for c in code_cols for i in range(len(source.chunks))],
                    client=client)
    per_col = {c: [v for part in found[j * len(source.chunks):(j + 1) * len(source.chunks)] for v in part]
               for j, c in enumerate(code_cols)}
    return infer_classes(sorted(set(per_col["predicted"]), key=str), sorted(set(per_col.get("label", [])), key=str)), False


def _source_dataset(path: Path, layout: str, *, classes: Any, normalize: bool, name: str,
                    rows_per_chunk: int | None, client: Any) -> tuple[Any, Any]:
    """The dataset of a Parquet or CSV source, and ``where(row)`` naming the file of a row."""
    import xarray as xr

    from pbassess.data._frame import RESERVED_COLUMNS, check_columns, table_form

    names = _column_names(path, layout)
    check_columns(names, str(path))
    form = table_form(names, str(path))
    prob_cols = [c for c in names if c.startswith("p_")]
    width = len(prob_cols) if form == "probs" else 4
    rows = int(rows_per_chunk) if rows_per_chunk else max(1, TARGET_CHUNK_VALUES // max(width, 4))
    source = ParquetSource.open(path, rows) if layout == "parquet" else CsvSource.open(path, rows)
    for col in prob_cols if form == "probs" else ["confidence"]:
        if not (_is_numeric(source.schema.field(col)) or str(source.schema.field(col).type) == "null"):
            raise DataError(f"{path}: column {col!r} holds {source.schema.field(col).type} values, not numbers")
    data: dict[str, Any] = {}
    if form == "probs":
        from pbassess.data._encoding import INTEGER_TEXT, as_class_names

        class_names = as_class_names(list(classes) if classes is not None else [c[2:] for c in prob_cols], None)
        if len(class_names) != len(prob_cols):
            raise DataError(f"{len(class_names)} class names given for {len(prob_cols)} probability columns")
        probs = _stack(source, _read_probs, (prob_cols, normalize), np.float64, "probs", width=len(prob_cols))
        data["probs"] = (("item", "class"), probs)
        data["predicted"] = ("item", probs.argmax(axis=1).astype(np.int64))
        data["confidence"] = ("item", probs.max(axis=1))
        fast = all(INTEGER_TEXT.match(c) and int(c) == i for i, c in enumerate(class_names)) or not any(
            INTEGER_TEXT.match(c) for c in class_names)
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
    starts = np.cumsum([rows for rows, *_ in source.chunks])
    return (xr.Dataset(data, coords=coords, attrs={"name": name, "attributes": attributes}),
            lambda row: source.where(int(np.searchsorted(starts, row, side="right"))))


_INT_TYPE_IDS = frozenset(range(2, 10))  # pyarrow type ids of (u)int8..64


# ------------------------------------------------------------------ Zarr stores
class _ZarrBlocks:
    """One variable of a Zarr store, read a block at a time; any read error names the chunk file.

    ``variable`` is the lazily indexed (decoded, uncached) xarray variable; ``files`` maps chunk
    grid coordinates to the file holding them (checked present when the store is opened).
    """

    def __init__(self, variable: Any, name: str, unit: tuple[int, ...], files: dict[tuple[int, ...], str]):
        self.variable, self.name, self.unit, self.files = variable, name, unit, files
        self.shape, self.dtype, self.ndim = variable.shape, variable.dtype, variable.ndim

    def _read(self, key: tuple) -> np.ndarray:
        return np.asarray(self.variable[key].values)

    def __getitem__(self, key: tuple) -> np.ndarray:
        key = key if isinstance(key, tuple) else (key,)
        try:
            return self._read(key)
        except MemoryError:
            raise
        except Exception as exc:
            raise self._pinpoint(key, exc) from None

    def _pinpoint(self, key: tuple, exc: Exception) -> DataError:
        """The error of the first chunk of ``key`` that cannot be read (each chunk read alone)."""
        import itertools

        ranges = []
        for sl, size, unit in zip(key, self.shape, self.unit, strict=False):
            start, stop, _ = sl.indices(size) if isinstance(sl, slice) else (int(sl), int(sl) + 1, 1)
            ranges.append(range(start // unit, -(-stop // unit)))
        for coords in itertools.product(*ranges):
            part = tuple(slice(c * u, min((c + 1) * u, n)) for c, u, n in zip(coords, self.unit, self.shape, strict=False))
            try:
                self._read(part)
            except MemoryError:
                raise
            except Exception as inner:
                file = self.files.get(coords, f"chunk {coords}")
                return DataError(f"{file}: chunk {coords} of array {self.name!r} cannot be read ({first_line(inner)})")
        return DataError(f"array {self.name!r}: cannot be read ({first_line(exc)})")


def _zarr_layout(path: Path) -> dict[str, tuple[tuple[int, ...], tuple[int, ...], tuple[str, ...] | None, dict]]:
    """Per array: shape, storage unit (chunk or shard), dimension names and its chunk files.

    Reads only metadata and lists the chunk files: every chunk of every array must be stored, and
    the arrays must agree on the length of each dimension.
    """
    import itertools
    import warnings

    import zarr

    try:
        with warnings.catch_warnings():  # hidden files and damaged folders are reported below, in one line
            warnings.filterwarnings("ignore", message=".*not recognized as a component")
            group = zarr.open_group(str(path), mode="r")
            arrays = dict(group.arrays())
            groups = {name for name, _ in group.groups()}
    except MemoryError:
        raise
    except Exception as exc:
        raise _bad_metadata(path) or DataError(f"{path}: not a readable Zarr store ({first_line(exc)})") from None
    for entry in sorted(os.scandir(path), key=lambda e: e.name):
        if entry.is_dir() and not entry.name.startswith((".", "_")) and entry.name not in set(arrays) | groups:
            raise DataError(f"{path / entry.name}: a folder of the store without array metadata (zarr.json or "
                            ".zarray): the array is damaged")
    layout: dict[str, Any] = {}
    sizes: dict[str, dict[str, int]] = {}
    for name, arr in sorted(arrays.items()):
        try:
            shape = tuple(int(n) for n in arr.shape)
            unit = tuple(int(n) for n in (arr.shards or arr.chunks))
            dims = getattr(arr.metadata, "dimension_names", None) or arr.attrs.get("_ARRAY_DIMENSIONS")
            encode = arr.metadata.encode_chunk_key
        except MemoryError:
            raise
        except Exception as exc:
            raise DataError(f"{path / name}: unreadable array metadata ({first_line(exc)})") from None
        folder = path / arr.path if getattr(arr, "path", "") else path / name
        files: dict[tuple[int, ...], str] = {}
        grid = [-(-n // u) for n, u in zip(shape, unit, strict=True)]
        for coords in itertools.product(*(range(g) for g in grid)):
            file = folder / encode(coords)
            if not file.is_file():
                raise DataError(f"{file}: chunk {coords} of array {name!r} is missing: the store is incomplete (every "
                                "chunk must be stored; write stores with pbassess.data.lazy.write_zarr or "
                                "to_zarr(..., write_empty_chunks=True))")
            files[coords] = str(file)
        dims = tuple(str(d) for d in dims) if dims else None
        layout[name] = (shape, unit, dims, files)
        for dim, n in zip(dims or (), shape, strict=False):
            sizes.setdefault(dim, {})[name] = n
    for dim, by_array in sizes.items():
        if len(set(by_array.values())) > 1:
            shown = ", ".join(f"{a} has {n}" for a, n in by_array.items())
            what = "items" if dim == "item" else f"entries along {dim!r}"
            raise DataError(f"{path}: the arrays disagree on the number of {what} ({shown})")
    return layout


def _bad_metadata(path: Path) -> DataError | None:
    """The error of the first metadata file of a store that is not JSON (None when all parse)."""
    import json

    names = ("zarr.json", ".zgroup", ".zarray", ".zattrs")
    for file in [path / n for n in names] + sorted(p / n for p in path.iterdir() if p.is_dir() for n in names):
        if file.is_file():
            try:
                json.loads(file.read_bytes())
            except (ValueError, UnicodeDecodeError) as exc:
                return DataError(f"{file}: the metadata of the Zarr store is damaged ({first_line(exc)})")
    return None


def _zarr_dataset(path: Path, name: str, rows_per_chunk: int | None = None) -> tuple[Any, Any]:
    """The dataset of a complete Zarr store, and ``where(row)`` naming the item-id chunk file of a row."""
    import warnings

    import dask.array as da
    import xarray as xr
    from dask.base import tokenize

    if not path.is_dir():
        raise DataError(f"{path}: a Zarr store must be a folder")
    layout = _zarr_layout(path)
    try:
        with warnings.catch_warnings():  # stores without consolidated metadata open fine, only slower
            warnings.simplefilter("ignore", RuntimeWarning)
            warnings.filterwarnings("ignore", message=".*not recognized as a component")
            ds = xr.open_dataset(path, engine="zarr", chunks=None, cache=False)
    except MemoryError:
        raise
    except Exception as exc:
        raise DataError(f"{path}: not a readable Zarr store ({first_line(exc)})") from None
    if "predicted" not in ds.data_vars:
        raise DataError(f"{path}: the Zarr store has no 'predicted' variable (write it with pbassess.data.lazy.write_zarr)")
    stamps = sorted((f, os.stat(f).st_mtime_ns, os.stat(f).st_size) for _, _, _, files in layout.values()
                    for f in files.values())
    token = tokenize(str(path), stamps)

    def lazy(var_name: str) -> Any:
        var = ds[var_name].variable
        shape, unit, _, files = layout[var_name]
        rows = rows_per_chunk or max(1, TARGET_CHUNK_VALUES // max(4, int(np.prod(shape[1:], dtype=np.int64))))
        chunks = tuple(max(u, rows // u * u) if axis == 0 else u for axis, u in enumerate(unit)) if unit else ()
        reader = _ZarrBlocks(var, var_name, unit, files)
        return da.from_array(reader, chunks=chunks, name=f"pbassess-zarr-{var_name}-{token}", asarray=False,
                             meta=np.empty((0,) * var.ndim, dtype=var.dtype))

    data_vars = {v: xr.Variable(ds[v].dims, lazy(v), ds[v].attrs) for v in ds.data_vars}
    coords: dict[str, Any] = {}
    for c in ds.coords:
        if c in ds.indexes:
            try:
                coords[c] = ds[c].variable.load()
            except MemoryError:
                raise
            except Exception as exc:
                raise DataError(f"{path / str(c)}: coordinate {c!r} cannot be read ({first_line(exc)})") from None
        else:
            coords[c] = xr.Variable(ds[c].dims, lazy(c), ds[c].attrs)
    ds = xr.Dataset(data_vars, coords=coords, attrs=ds.attrs)
    if "label" in ds.data_vars and ds["label"].dtype.kind == "f":
        ds["label"] = ds["label"].fillna(-1).astype(np.int64)
    for var in ("class", "item_id"):
        if var in ds.coords and ds[var].dtype.kind in "UST":
            if var in ds.indexes:
                ds = ds.assign_coords({var: (ds[var].dims, ds[var].values.astype(str).astype(object))})
            else:
                text = ds[var].data.map_blocks(lambda b: b.astype(str).astype(object), dtype=object,
                                               meta=np.empty((0,), dtype=object))
                ds = ds.assign_coords({var: (ds[var].dims, text)})
    ds.attrs = {**ds.attrs, "name": ds.attrs.get("name", name)}
    if isinstance(ds.attrs.get("attributes"), str):
        ds.attrs["attributes"] = [ds.attrs["attributes"]]
    return ds, _chunk_places(ds, layout.get("item_id"))


def _chunk_places(ds: Any, item_ids: Any) -> Any:
    """``where(row)`` for the item ids of a Zarr store: the chunk file holding a row."""
    if item_ids is None or "item_id" not in ds.coords:
        return lambda row: "the store"
    unit, files = item_ids[1][0], item_ids[3]
    return lambda row: files[(int(row) // unit,)]


# ------------------------------------------------------------------ item ids unique across chunks
#: Item ids hashed per pass of the uniqueness check (8 bytes each, plus the sort): bounds its memory.
IDS_PER_PASS: int = 1 << 24


def _hash_ids(block: np.ndarray) -> np.ndarray:
    import pandas as pd

    values = block if block.dtype.kind in "iu" else np.asarray([str(v) for v in block], dtype=object)
    return pd.util.hash_array(values, categorize=False).astype(np.uint64, copy=False)


def check_unique_ids(ids: Any, where: Any, *, ids_per_pass: int | None = None) -> None:
    """Refuse a repeated item id in a dask array of ids, streaming over its blocks.

    Each pass reads the id blocks once and keeps the 64-bit hashes of one hash partition
    (``ids_per_pass`` ids at most, on average), so memory stays bounded whatever the pool size;
    equal hashes are confirmed against the ids themselves. Ids that increase from row to row (the
    usual layout) are known unique after the first pass.

    Parameters
    ----------
    ids : dask.array.Array
        One-dimensional item ids (integers or text).
    where : callable
        ``where(row)``: the file a row comes from, named in the error.
    ids_per_pass : int, optional
        Ids kept in memory per pass (default :data:`IDS_PER_PASS`).

    Raises
    ------
    DataError
        One line naming the first repeated id, how often it appears and the files holding it.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> check_unique_ids(da.from_array(np.array([3, 1, 2]), chunks=2), lambda row: "a.parquet")
    >>> check_unique_ids(da.from_array(np.array(["x", "y", "x"], dtype=object), chunks=2),
    ...                  lambda row: f"part-{row // 2}.parquet")
    Traceback (most recent call last):
    ...
    pbassess.errors.DataError: item ids must be unique: 'x' appears 2 times (in part-0.parquet and part-1.parquet)
    """
    import dask

    n = int(ids.shape[0])
    per_pass = int(ids_per_pass or IDS_PER_PASS)
    passes = max(1, -(-n // per_pass))
    starts = np.concatenate([[0], np.cumsum(ids.chunks[0])])
    nblocks = ids.numblocks[0]
    batch = 8
    increasing, last = True, None
    for p in range(passes):
        hashes, positions = [], []
        for first in range(0, nblocks, batch):
            blocks = dask.compute(*[ids.blocks[b] for b in range(first, min(first + batch, nblocks))])
            for b, block in enumerate(blocks, start=first):
                block = np.asarray(block)
                if p == 0 and increasing and block.shape[0]:  # sorted ids (the usual case) are unique at once
                    try:
                        increasing = bool((block[1:] > block[:-1]).all()) and (last is None or block[0] > last)
                    except TypeError:  # ids of mixed types
                        increasing = False
                    last = block[-1]
                h = _hash_ids(block)
                keep = np.flatnonzero(h % np.uint64(passes) == p) if passes > 1 else np.arange(h.shape[0])
                hashes.append(h[keep])
                positions.append(keep + starts[b])
        if increasing:
            return
        h = np.concatenate(hashes)
        pos = np.concatenate(positions)
        order = np.argsort(h, kind="stable")
        h, pos = h[order], pos[order]
        equal = np.flatnonzero(h[1:] == h[:-1])
        if equal.size == 0:
            continue
        _confirm_duplicates(ids, h, pos, np.unique(h[equal]), starts, where)


def _confirm_duplicates(ids: Any, h: np.ndarray, pos: np.ndarray, suspects: np.ndarray, starts: np.ndarray,
                        where: Any) -> None:
    from collections import defaultdict

    rows = np.sort(pos[np.isin(h, suspects)])
    blocks = np.searchsorted(starts, rows, side="right") - 1
    found: dict[Any, list[int]] = defaultdict(list)
    for b in np.unique(blocks):
        block = np.asarray(ids.blocks[int(b)].compute())
        for row in rows[blocks == b]:
            value = block[row - starts[b]]
            found[value.item() if isinstance(value, np.generic) else value].append(int(row))
    for value, at_rows in found.items():
        if len(at_rows) > 1:
            files = list(dict.fromkeys(where(row) for row in at_rows))
            in_blocks = at_rows
            place = f"in {files[0]}" if len(files) == 1 else f"in {files[0]} and {files[1]}"
            raise DataError(f"item ids must be unique: {value!r} appears {len(in_blocks)} times ({place})")


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
        ds, where = _zarr_dataset(path, label, rows_per_chunk)
    else:
        ds, where = _source_dataset(path, layout, classes=classes, normalize=normalize, name=label,
                                    rows_per_chunk=rows_per_chunk, client=client)
    if "item_id" in ds.coords and getattr(ds["item_id"].data, "chunks", None) is not None:
        check_unique_ids(ds["item_id"].data, where)
    return Predictions.from_dataset(ds, name=name, tolerance=tolerance)


def write_zarr(preds: Any, path: Any, *, rows_per_chunk: int = 1 << 20) -> Path:
    """Write a pool to a Zarr store that :func:`read_lazy_predictions` reads back lazily.

    Every chunk is stored, even one equal to the fill value, so that a missing chunk file is
    recognised as damage when the store is read.

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
    ds.to_zarr(path, mode="w", consolidated=False, write_empty_chunks=True)  # a missing chunk file is then damage
    return path
