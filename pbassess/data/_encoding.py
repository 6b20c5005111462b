"""Vectorised encoding of class names, item ids and attribute columns.

Every column is first factorised (pyarrow dictionary encoding, pandas categorical codes or
:func:`pandas.factorize`), so the Python-level rules below run once per *distinct* value,
never once per row: a pool of 10^7 items with 100 classes costs one hash pass per column.

Rules for a value meeting a list of class names:

* a value equal to a class name (after ``str``) is that class, so classes called ``nan``,
  ``NA`` or ``None`` stay classes;
* an integer (or an integral float such as ``1.0``, or its text ``"1.0"``) is the class of that
  name when the names are numbers, otherwise the class at that index;
* ``None``, NaN, ``""``, ``-1`` and the texts ``nan``, ``NA``, ``N/A``, ``None``, ``null``, ``-``,
  ``?`` mark a missing value (an unlabeled item) unless they name a class;
* booleans are refused unless the classes are named ``True``/``False``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from pbassess.constants import UNLABELED
from pbassess.errors import DataError

__all__ = ["INTEGER_TEXT", "MISSING_TEXT", "NULL_NUMBER_TEXT", "as_attribute", "as_class_names", "as_item_ids",
           "encode_classes", "factorize", "first_duplicate", "infer_classes", "sort_class_names", "typed_text_attribute"]

#: Texts that mark a missing label when no class carries that name.
MISSING_TEXT = frozenset({"", "nan", "NaN", "NAN", "na", "NA", "N/A", "n/a", "None", "none", "null", "NULL", "-", "?"})

#: The text of an integer written without leading zeros (``"-12"``, ``"0"``; not ``"007"`` nor ``"1.0"``).
INTEGER_TEXT = re.compile(r"^-?(0|[1-9][0-9]*)$")
_FLOAT_INT_TEXT = re.compile(r"^-?(0|[1-9][0-9]*)\.0*$")
_MISSING = object()


def factorize(values: Any) -> tuple[np.ndarray, list[Any]]:
    """Integer codes (-1 where missing) and the list of distinct values of a column.

    Examples
    --------
    >>> codes, uniques = factorize(["b", "a", None, "b"])
    >>> codes.tolist(), uniques
    ([0, 1, -1, 0], ['b', 'a'])
    """
    import pandas as pd

    try:
        import pyarrow as pa
    except ImportError:  # pragma: no cover - pyarrow is a dependency
        pa = None
    if pa is not None and isinstance(values, (pa.Array, pa.ChunkedArray)):
        return _factorize_arrow(values)
    if isinstance(values, pd.Series):
        values = values.array
    if isinstance(values, pd.Categorical):
        return np.asarray(values.codes, dtype=np.int64), list(values.categories)
    if not isinstance(values, (np.ndarray, pd.api.extensions.ExtensionArray)):
        values = np.asarray(values, dtype=object) if not np.isscalar(values) else np.asarray([values], dtype=object)
    if isinstance(values, np.ndarray) and values.ndim != 1:
        values = values.ravel()
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    return np.asarray(codes, dtype=np.int64), list(np.asarray(uniques, dtype=object))


def _factorize_arrow(values: Any) -> tuple[np.ndarray, list[Any]]:
    """Dictionary codes of a pyarrow (chunked) array, chunk by chunk after unifying the dictionaries."""
    import pyarrow as pa

    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    if not chunks:
        return np.empty(0, dtype=np.int64), []
    if not pa.types.is_dictionary(chunks[0].type):
        chunks = pa.chunked_array(chunks, type=chunks[0].type).dictionary_encode().chunks
    chunked = pa.chunked_array(chunks).unify_dictionaries()
    codes = np.empty(len(chunked), dtype=np.int64)
    start = 0
    for chunk in chunked.chunks:
        indices = chunk.indices
        part = indices.fill_null(-1) if indices.null_count else indices
        codes[start:start + len(chunk)] = part.to_numpy(zero_copy_only=False)
        start += len(chunk)
    return codes, chunked.chunks[0].dictionary.to_pylist() if chunked.num_chunks else []


def _is_nan(value: Any) -> bool:
    return isinstance(value, (float, np.floating)) and math.isnan(value)


def _as_int(value: Any) -> int | None:
    """The integer a value stands for (3, 3.0, "3", "3.0"), else None. Booleans are not integers."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return int(value) if math.isfinite(value) and float(value).is_integer() else None
    if isinstance(value, str):
        text = value.strip()
        if INTEGER_TEXT.match(text) or _FLOAT_INT_TEXT.match(text):
            return int(text.split(".")[0])
    return None


def _name_of(value: Any, known: set[str] | None, *, allow_missing: bool) -> Any:
    """The class name a raw value stands for when the classes are being inferred (or _MISSING)."""
    if value is None or _is_nan(value):
        return _MISSING
    if isinstance(value, (bool, np.bool_)):
        raise DataError(f"the value {bool(value)!r} is a boolean, not a class: use class names or integer classes")
    text = str(value)
    if known is not None and text in known:
        return text
    as_int = _as_int(value)
    if as_int is not None:
        if allow_missing and as_int == -1 and (known is None or "-1" not in known):
            return _MISSING
        return str(as_int)
    if allow_missing and text.strip() in MISSING_TEXT:
        return _MISSING
    return text


def sort_class_names(names: Sequence[str]) -> list[str]:
    """Integers first in numeric order, then the other names alphabetically.

    Examples
    --------
    >>> sort_class_names(["10", "b", "2", "a"])
    ['2', '10', 'a', 'b']
    """
    def key(c: str):
        return (0, int(c), "") if INTEGER_TEXT.match(c) else (1, 0, c)

    return sorted(names, key=key)


def infer_classes(predicted_uniques: Sequence[Any], label_uniques: Sequence[Any] = ()) -> tuple[str, ...]:
    """Class names from the distinct predicted values and the distinct labels.

    Every predicted value is a class (so a predicted ``NA`` is a class named ``NA``); a label
    adds a class unless it marks a missing value.

    Examples
    --------
    >>> infer_classes(["dog", "cat"], ["cat", "NA", None, "bird"])
    ('bird', 'cat', 'dog')
    >>> infer_classes(["NA", "cat"], ["NA"])
    ('NA', 'cat')
    """
    names: set[str] = set()
    for v in predicted_uniques:
        name = _name_of(v, None, allow_missing=False)
        if name is _MISSING:
            continue
        names.add(name)
    for v in label_uniques:
        name = _name_of(v, names, allow_missing=True)
        if name is not _MISSING:
            names.add(name)
    return tuple(sort_class_names(list(names)))


def as_class_names(classes: Sequence[Any] | None, n_classes: int | None) -> tuple[str, ...]:
    """Validated class names: unique, non-empty, as strings."""
    if classes is None:
        if n_classes is None:
            raise DataError("class names are missing: pass classes=[...]")
        return tuple(str(k) for k in range(n_classes))
    names = tuple(str(c) for c in classes)
    if len(set(names)) != len(names):
        seen: set[str] = set()
        dup = next(c for c in names if c in seen or seen.add(c))
        raise DataError(f"class names must be unique: {dup!r} appears twice")
    if any(not c.strip() for c in names):
        raise DataError(f"class {names.index(next(c for c in names if not c.strip()))} has an empty name")
    return names


def _code_of(value: Any, index: dict[str, int], numeric_names: bool, allow_missing: bool) -> int | None:
    """Class index of one distinct value, UNLABELED for a missing one, None when it matches no class."""
    if value is None or _is_nan(value):
        return UNLABELED if allow_missing else None
    if isinstance(value, (bool, np.bool_)):
        return index.get(str(bool(value)))
    text = str(value)
    if text in index:
        return index[text]
    as_int = _as_int(value)
    if as_int is not None:
        if str(as_int) in index:
            return index[str(as_int)]
        if allow_missing and as_int == -1:
            return UNLABELED
        if not numeric_names and not isinstance(value, str) and 0 <= as_int < len(index):
            return as_int
        return None
    if allow_missing and text.strip() in MISSING_TEXT:
        return UNLABELED
    return None


def encode_classes(values: Any, classes: Sequence[str], what: str, *, allow_missing: bool,
                   codes_uniques: tuple[np.ndarray, list[Any]] | None = None) -> np.ndarray:
    """Class indices (int64) of a column of names or indices; missing -> -1 when allowed.

    Examples
    --------
    >>> encode_classes(["b", None, "a", "NA"], ("a", "b"), "labels", allow_missing=True).tolist()
    [1, -1, 0, -1]
    >>> encode_classes(["1.0", "0", -1], ("0", "1"), "labels", allow_missing=True).tolist()
    [1, 0, -1]
    """
    codes, uniques = codes_uniques if codes_uniques is not None else factorize(values)
    index = {c: i for i, c in enumerate(classes)}
    numeric_names = any(INTEGER_TEXT.match(c) for c in classes)
    lut = np.empty(len(uniques) + 1, dtype=np.int64)
    lut[-1] = UNLABELED  # the missing sentinel -1 reads the last entry
    for j, value in enumerate(uniques):
        code = _code_of(value, index, numeric_names, allow_missing)
        if code is None or (code == UNLABELED and not allow_missing):
            row = int(np.flatnonzero(codes == j)[0])
            if isinstance(value, (bool, np.bool_)):
                raise DataError(f"{what}: row {row} is the boolean {bool(value)!r}; give class names or integer "
                                "class indices (a boolean is not a class)")
            if code == UNLABELED:
                raise DataError(f"{what}: row {row} is missing")
            shown = ", ".join(classes[:6]) + (", ..." if len(classes) > 6 else "")
            raise DataError(f"{what}: row {row} has {value!r}, which is not one of the {len(classes)} classes ({shown})")
        lut[j] = code
    if not allow_missing and (codes < 0).any():
        raise DataError(f"{what}: row {int(np.flatnonzero(codes < 0)[0])} is missing")
    return lut[codes]


def first_duplicate(ids: np.ndarray) -> tuple[Any, int]:
    """The first id that repeats an earlier one, and how many times it occurs.

    Examples
    --------
    >>> first_duplicate(np.array([3, 1, 3, 2, 1, 3]))
    (3, 3)
    """
    import pandas as pd

    index = pd.Index(ids)
    dup = index[index.duplicated()][0]
    count = int((index == dup).sum())
    return (dup.item() if isinstance(dup, np.generic) else dup), count


def as_item_ids(values: Any, n: int) -> np.ndarray:
    """Unique item ids: int64 when every id is an integer (text without leading zeros), else str.

    Examples
    --------
    >>> as_item_ids(["7", "8"], 2).tolist(), as_item_ids(["007", "8"], 2).tolist()
    ([7, 8], ['007', '8'])
    """
    import pandas as pd

    if values is None:
        return np.arange(n, dtype=np.int64)
    ids = _plain_ids(values)
    if ids.shape != (n,):
        raise DataError(f"item_ids has {ids.shape[0] if ids.ndim == 1 else ids.shape} values for {n} items")
    if ids.dtype.kind in "iu":
        ids = ids.astype(np.int64, copy=False)
        if n > 1 and not (ids[1:] > ids[:-1]).all() and not pd.Index(ids).is_unique:
            dup, count = first_duplicate(ids)
            raise DataError(f"item ids must be unique: {dup!r} appears {count} times")
        return ids
    if not pd.Index(ids).is_unique:
        dup, count = first_duplicate(ids)
        raise DataError(f"item ids must be unique: {dup!r} appears {count} times")
    return ids


def _plain_ids(values: Any) -> np.ndarray:
    """Ids as an int64 array or an object array of str (missing ids refused)."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(values, pd.Series):
        values = values.array
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, pa.Array):
        if values.null_count:
            raise DataError(f"item_ids: row {int(np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False))[0])} is missing")
        if pa.types.is_integer(values.type):
            return values.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
        text = values.cast(pa.string())
        empty = pc.equal(pc.binary_length(text), 0)
        if pc.any(empty).as_py():
            raise DataError(f"item_ids: row {int(np.flatnonzero(empty.to_numpy(zero_copy_only=False))[0])} is missing")
        as_int = _canonical_integers(text)
        if as_int is not None:
            return as_int
        return np.asarray(text.to_numpy(zero_copy_only=False), dtype=object)
    arr = np.asarray(values) if not isinstance(values, pd.api.extensions.ExtensionArray) else values
    if isinstance(arr, np.ndarray) and arr.dtype.kind in "iu":
        return arr.ravel()
    if isinstance(arr, np.ndarray) and arr.dtype.kind == "f":
        if not np.isfinite(arr).all():
            raise DataError(f"item_ids: row {int(np.flatnonzero(~np.isfinite(arr))[0])} is missing")
        if (arr == np.round(arr)).all():
            return arr.astype(np.int64)
        return arr.astype(str).astype(object)
    arr = pd.array(np.asarray(arr, dtype=object).ravel() if isinstance(arr, np.ndarray) else arr)
    missing = np.asarray(pd.isna(arr))
    if missing.any():
        raise DataError(f"item_ids: row {int(np.flatnonzero(missing)[0])} is missing")
    kind = pd.api.types.infer_dtype(arr, skipna=False)
    if kind == "integer":
        return np.asarray(arr, dtype=np.int64)
    if kind == "string":
        return _plain_ids(pa.array(np.asarray(arr, dtype=object), type=pa.string()))
    return np.asarray([str(v) for v in np.asarray(arr, dtype=object)], dtype=object)


def _canonical_integers(text: Any) -> np.ndarray | None:
    """int64 values of a pyarrow string array when every entry is an integer written without
    leading zeros, spaces or a plus sign (so that ``str(int(id)) == id``); else None."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        values = pc.cast(text, pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    padded = pc.and_(pc.starts_with(text, "0"), pc.greater(pc.binary_length(text), 1))
    signed = pc.or_(pc.starts_with(text, "+"), pc.starts_with(text, "-0"))
    if pc.any(pc.or_(padded, signed)).as_py():
        return None
    return values.to_numpy()


def as_attribute(values: Any, n: int, column: str) -> np.ndarray:
    """An attribute column keeping its type: bool, int64, float64, or str (object) for text/categories.

    Missing text becomes ``"nan"`` (a group of its own); numbers keep NaN.

    Examples
    --------
    >>> as_attribute([1, 2, 2], 3, "n").dtype.kind, as_attribute(["a", None], 2, "s").tolist()
    ('i', ['a', 'nan'])
    """
    import pandas as pd
    import pyarrow as pa

    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        values = values.to_pandas()
    if isinstance(values, pd.Series):
        values = values.array
    if isinstance(values, pd.Categorical):
        values = np.asarray(values, dtype=object)
    arr = values if isinstance(values, pd.api.extensions.ExtensionArray) else np.asarray(values)
    if np.ndim(arr) != 1 or len(arr) != n:
        raise DataError(f"attribute column {column!r} has {np.shape(arr)} values for {n} items")
    if isinstance(arr, np.ndarray) and arr.dtype.kind in "biuf":
        return arr.astype(np.int64, copy=False) if arr.dtype.kind in "iu" else arr
    kind = pd.api.types.infer_dtype(arr, skipna=True)
    missing = np.asarray(pd.isna(arr))
    if kind in ("integer", "floating", "mixed-integer-float", "integer-na") and len(arr):
        out = np.asarray(pd.array(arr).to_numpy(dtype=float, na_value=np.nan), dtype=float)
        if kind in ("integer", "integer-na") and not missing.any():
            return out.astype(np.int64)
        return out
    if kind == "boolean" and not missing.any():
        return np.asarray(arr, dtype=bool)
    out = np.asarray(arr, dtype=object).copy()
    if missing.any():
        out[missing] = "nan"
    if kind != "string":
        out = np.asarray([str(v) for v in out], dtype=object)
    return out


#: Texts a CSV reader takes for a missing number (pyarrow's defaults).
NULL_NUMBER_TEXT = ("", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                    "N/A", "NA", "NULL", "NaN", "n/a", "nan", "null")
_TRUE_TEXT, _FALSE_TEXT = ("true", "True", "TRUE"), ("false", "False", "FALSE")
_PADDED_NUMBER = re.compile(r"^[+-]?0[0-9]")
_SIGNED_INT_TEXT = re.compile(r"^[+-]?(0|[1-9][0-9]*)$")


def typed_text_attribute(column: Any) -> Any:
    """A text attribute column of a CSV file, typed only where typing keeps every value's identity.

    The column becomes integers when every value is an integer written plainly (no leading zero
    or plus sign), numbers when every value is a number and no two texts stand for the same
    number (``"1"`` and ``"1.0"``, ``"1.5"`` and ``"1.50"``) and none has a leading zero,
    booleans for ``true``/``false`` texts; otherwise it stays text, so ``"01"``, ``"1"`` and
    ``"1.0"`` remain three groups. Empty cells and the usual missing-number texts (``NA``,
    ``nan``, ...) are missing in a numeric column; in a text column they stay as written.

    Examples
    --------
    >>> import pyarrow as pa
    >>> typed_text_attribute(pa.chunked_array([["01", "1", "1.0"]])).to_pylist()
    ['01', '1', '1.0']
    >>> typed_text_attribute(pa.chunked_array([["3", "", "12"]])).to_pylist()
    [3, None, 12]
    >>> typed_text_attribute(pa.chunked_array([["0.5", "2", "NA"]])).to_pylist()
    [0.5, 2.0, None]
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(column, pa.Array):
        column = pa.chunked_array([column])
    text = column.cast(pa.string()) if pa.types.is_dictionary(column.type) else column
    if not (pa.types.is_string(text.type) or pa.types.is_large_string(text.type)):
        return column
    # every rule below runs on the distinct texts, vectorised
    uniques = pc.unique(text)
    uniques = uniques.filter(pc.is_valid(uniques))
    markers = pa.array(list(NULL_NUMBER_TEXT), type=uniques.type)
    present = uniques.filter(pc.invert(pc.is_in(uniques, value_set=markers)))
    if len(present) == 0:
        return column
    if pc.all(pc.is_in(present, value_set=pa.array(_TRUE_TEXT + _FALSE_TEXT, type=uniques.type))).as_py():
        if len(present) == len(uniques):
            return pc.is_in(text, value_set=pa.array(_TRUE_TEXT, type=uniques.type))
        return column
    trimmed = pc.utf8_trim_whitespace(present)
    if pc.any(pc.match_substring_regex(trimmed, _PADDED_NUMBER.pattern)).as_py():
        return column
    integers = pc.all(pc.match_substring_regex(trimmed, _SIGNED_INT_TEXT.pattern)).as_py()
    try:
        numbers = pc.cast(pc.replace_substring_regex(trimmed, r"^\+", ""), pa.int64() if integers else pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # text, or integers beyond int64
        return column
    if len(pc.unique(numbers)) != len(present):  # two texts of one number ("1" and "1.0"): keep the texts
        return column
    missing = pc.is_in(text, value_set=markers)
    cleaned = pc.if_else(missing, pa.scalar(None, text.type), text)
    cleaned = pc.replace_substring_regex(pc.utf8_trim_whitespace(cleaned), r"^\+", "")
    return pc.cast(cleaned, pa.int64() if integers else pa.float64())
