"""Label input of a labeling session: rows from a mapping, DataFrame, CSV file or pairs, checked into new entries.

:func:`label_rows` reads the user's labels as ``(item_id, label, where)`` rows (``where``
names the row or file line for error messages); :func:`new_label_entries` checks them against
the pool and the labels so far, all or nothing, and returns the state entries to append.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from pbassess.active.session.state import one_line
from pbassess.errors import DataError

__all__ = ["label_rows", "new_label_entries"]


def _normalise_label(value: str, class_index: Mapping[str, int]) -> str | None:
    """A label as a class name: the name itself, or an integer spelled "3.0" for class "3"; None if neither."""
    if value in class_index:
        return value
    try:
        as_float = float(value)
    except ValueError:
        return None
    if as_float.is_integer() and str(int(as_float)) in class_index:
        return str(int(as_float))
    return None


def new_label_entries(rows: list[tuple[str, str, str]], current: Mapping[str, str], index: Mapping[str, int],
                       classes: tuple[str, ...], *, relabel: bool) -> tuple[list[list[str]], dict, dict[str, int]]:
    """Validate label rows against the pool and the labels so far, all or nothing.

    Returns the new entries ``[item, label, ""]`` (time filled in when written), the items seen
    (item -> (label, where)) and the counts ``added``, ``relabeled``, ``unchanged``; raises one
    DataError line on the first bad row.

    Examples
    --------
    >>> rows = [("0", "1.0", "row 0"), ("1", "a", "row 1")]
    >>> entries, seen, counts = new_label_entries(rows, {"0": "a"}, {"0": 0, "1": 1}, ("a", "1"), relabel=True)
    >>> entries, counts
    ([['0', '1', ''], ['1', 'a', '']], {'added': 1, 'relabeled': 1, 'unchanged': 0})
    >>> new_label_entries([("9", "a", "row 0")], {}, {"0": 0}, ("a",), relabel=False)
    Traceback (most recent call last):
    ...
    pbassess.errors.DataError: row 0: unknown item id '9' (not in the pool of 1 items)
    """
    class_index = {c: i for i, c in enumerate(classes)}
    seen: dict[str, tuple[str, str]] = {}
    new_entries: list[list[str]] = []
    counts = {"added": 0, "relabeled": 0, "unchanged": 0}
    shown = ", ".join(classes[:6]) + (", ..." if len(classes) > 6 else "")
    for item, raw_label, where in rows:
        if item not in index:
            raise DataError(f"{where}: unknown item id {item!r} (not in the pool of {len(index)} items)")
        label = _normalise_label(raw_label, class_index)
        if label is None:
            if raw_label == "":
                raise DataError(f"{where}: item {item!r} has an empty label (remove the row to skip the item)")
            raise DataError(f"{where}: label {raw_label!r} of item {item!r} is not one of the "
                            f"{len(classes)} classes ({shown})")
        if item in seen:
            if seen[item][0] != label:
                raise DataError(f"item {item!r} is given twice with different labels: {seen[item][0]!r} "
                                f"({seen[item][1]}) and {label!r} ({where})")
            counts["unchanged"] += 1
            continue
        seen[item] = (label, where)
        before = current.get(item)
        if before == label:
            counts["unchanged"] += 1
            continue
        if before is not None and not relabel:
            raise DataError(f"item {item!r} ({where}) is already labeled {before!r}; pass relabel=True "
                            f"(--relabel) to change it to {label!r}")
        counts["relabeled" if before is not None else "added"] += 1
        new_entries.append([item, label, ""])
    return new_entries, seen, counts


def _text(value: Any) -> str:
    """A cell as text: missing -> "", 3.0 -> "3", surrounding blanks stripped."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value).strip()


def label_rows(labels: Any) -> list[tuple[str, str, str]]:
    """(item_id, label, where) triples from a mapping, DataFrame, CSV path or pairs.

    Examples
    --------
    >>> label_rows({"i1": "cat", "i2": 3.0})
    [('i1', 'cat', 'row 0'), ('i2', '3', 'row 1')]
    >>> label_rows([("i1", "cat")])
    [('i1', 'cat', 'row 0')]
    """
    import pandas as pd

    if isinstance(labels, (str, os.PathLike)):
        path = Path(labels)
        if not path.exists():
            raise DataError(f"labels file not found: {path}")
        try:
            frame = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
            raise DataError(f"labels file {path} cannot be read as CSV: {one_line(exc)}") from None
        frame.columns = [str(c).strip() for c in frame.columns]
        return _frame_rows(frame, f"labels file {path}", line_offset=2)
    if isinstance(labels, pd.DataFrame):
        return _frame_rows(labels, "labels", line_offset=None)
    if isinstance(labels, Mapping):
        return [(_text(k), _text(v), f"row {r}") for r, (k, v) in enumerate(labels.items())]
    try:
        pairs = list(labels)
    except TypeError:
        raise DataError(f"labels must be a mapping, a DataFrame, a CSV path or (item_id, label) pairs, "
                        f"not {type(labels).__name__}") from None
    rows = []
    for r, pair in enumerate(pairs):
        if isinstance(pair, (str, bytes)) or len(pair) != 2:
            raise DataError(f"labels row {r} is not an (item_id, label) pair")
        rows.append((_text(pair[0]), _text(pair[1]), f"row {r}"))
    return rows


def _frame_rows(frame: Any, what: str, line_offset: int | None) -> list[tuple[str, str, str]]:
    cols = [str(c) for c in frame.columns]
    for need in ("item_id", "label"):
        if need not in cols:
            raise DataError(f"{what} has no {need!r} column (columns: {', '.join(cols) or 'none'})")

    where = (lambda r: f"line {r + line_offset}") if line_offset is not None else (lambda r: f"row {r}")
    return [(_text(i), _text(v), where(r)) for r, (i, v) in enumerate(zip(frame["item_id"], frame["label"], strict=True))]
