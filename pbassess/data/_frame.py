"""Tables (pandas DataFrames, dicts of columns) in pbassess's CSV form turned into datasets.

The CSV form: ``item_id``; optional ``label``; either ``p_<class>`` probability columns (full
form) or ``predicted`` + ``confidence`` (top-1 form), never both; every other column is an
attribute column.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pbassess.constants import SUM_TOLERANCE
from pbassess.data._build import probs_dataset, top1_dataset
from pbassess.errors import DataError

__all__ = ["RESERVED_COLUMNS", "check_columns", "frame_dataset", "table_form"]

#: Columns of the CSV form that are not attributes.
RESERVED_COLUMNS = ("item_id", "label", "predicted", "confidence")


def _listing(cols: Sequence[Any]) -> str:
    shown = ", ".join(map(str, cols[:12]))
    return shown + (", ..." if len(cols) > 12 else "")


def check_columns(cols: Sequence[Any], where: str = "") -> None:
    """Refuse duplicated column names and ``p_`` columns without a class name."""
    prefix = f"{where}: " if where else ""
    seen: set[str] = set()
    for c in map(str, cols):
        if c in seen:
            raise DataError(f"{prefix}column {c!r} appears more than once in the header")
        seen.add(c)
        if c.strip() == "p_":
            raise DataError(f"{prefix}probability column {c!r} has no class name after 'p_'")


def table_form(cols: Sequence[Any], where: str = "") -> str:
    """``"probs"`` or ``"top1"`` from the column names of a table in the CSV form.

    Examples
    --------
    >>> table_form(["item_id", "p_a", "p_b"]), table_form(["predicted", "confidence", "site"])
    ('probs', 'top1')
    """
    prefix = f"{where}: " if where else ""
    names = [str(c) for c in cols]
    has_probs = any(c.startswith("p_") for c in names)
    top1 = [c for c in ("predicted", "confidence") if c in names]
    if has_probs and top1:
        raise DataError(f"{prefix}the table has both p_<class> columns (full probabilities) and {' and '.join(top1)} "
                        "(top-1 form): keep one form")
    if len(top1) == 1:
        other = ({"predicted", "confidence"} - set(top1)).pop()
        raise DataError(f"{prefix}the table has a {top1[0]!r} column but no {other!r} column (the top-1 form of "
                        "Predictions needs both)")
    if top1:
        return "top1"
    if not has_probs:
        raise DataError(f"{prefix}no probability columns: name them p_<class>, or give predicted and confidence "
                        f"columns (columns: {_listing(names)})")
    return "probs"


def _is_arrow(frame: Any) -> bool:
    import pyarrow as pa

    return isinstance(frame, pa.Table)


def _column_names(frame: Any) -> list[Any]:
    return list(frame.column_names) if _is_arrow(frame) else list(frame.columns)


def _numeric_columns(frame: Any, columns: Sequence[Any], what: str) -> np.ndarray:
    import pandas as pd

    if _is_arrow(frame):
        import pyarrow as pa

        out = np.empty((frame.num_rows, len(columns)), dtype=float)
        for j, c in enumerate(columns):
            col = frame[c]
            if not (pa.types.is_floating(col.type) or pa.types.is_integer(col.type)):
                raise DataError(f"{what} column {str(c)!r} holds {col.type} values, not numbers")
            out[:, j] = col.to_numpy()
        return out
    for c in columns:
        col = frame[c]
        if pd.api.types.is_bool_dtype(col.dtype) or not pd.api.types.is_numeric_dtype(col.dtype):
            parsed = pd.to_numeric(col, errors="coerce") if not pd.api.types.is_bool_dtype(col.dtype) else None
            bad = np.ones(len(col), bool) if parsed is None else np.asarray(parsed.isna() & ~col.isna())
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                raise DataError(f"{what} column {str(c)!r}: row {row} has {col.iloc[row]!r}, not a number")
    try:
        return frame[list(columns)].to_numpy(dtype=float, na_value=np.nan)
    except (TypeError, ValueError) as exc:  # pragma: no cover - caught column by column above
        raise DataError(f"{what} columns hold non-numeric values ({exc})") from None


def frame_dataset(frame: Any, *, label: str | None = "label", prob_columns: Sequence[str] | None = None,
                  predicted: str | None = None, confidence: str | None = None, item_id: str | None = "item_id",
                  group_columns: Sequence[str] | None = None, classes: Sequence[Any] | None = None,
                  normalize: bool = False, tolerance: float = SUM_TOLERANCE, name: str = "classifier") -> Any:
    """Dataset of a DataFrame in either form (see :meth:`Predictions.from_dataframe`)."""
    cols = _column_names(frame)
    check_columns(cols)
    if len(frame) == 0:
        raise DataError("the pool is empty: the table has no rows")
    if label is not None and label not in cols:
        if label != "label":
            raise DataError(f"label column {label!r} not found (columns: {_listing(cols)})")
        label = None
    labels = None if label is None else frame[label]
    ids = frame[item_id] if item_id is not None and item_id in cols else None
    groups = {}
    for g in group_columns or []:
        if g not in cols:
            raise DataError(f"group column {g!r} not found (columns: {_listing(cols)})")
        groups[g] = frame[g]
    if predicted is not None or confidence is not None:
        for what, col in (("predicted", predicted), ("confidence", confidence)):
            if col is None or col not in cols:
                raise DataError(f"{what} column {col!r} not found (columns: {_listing(cols)})")
        conf = _numeric_columns(frame, [confidence], "confidence")[:, 0]
        return top1_dataset(frame[predicted], conf, labels, classes=classes, item_ids=ids, groups=groups, name=name)
    if prob_columns is None:
        prob_columns = [c for c in cols if str(c).startswith("p_")]
        if not prob_columns:
            raise DataError("no probability columns: name them with prob_columns=[...] or prefix them with 'p_'")
        if classes is None:
            classes = [str(c)[2:] for c in prob_columns]
    missing = [c for c in prob_columns if c not in cols]
    if missing:
        raise DataError(f"probability column {missing[0]!r} not found")
    values = _numeric_columns(frame, prob_columns, "probability")
    return probs_dataset(values, labels, classes=classes or [str(c) for c in prob_columns], item_ids=ids,
                         groups=groups, normalize=normalize, tolerance=tolerance, name=name)


def csv_form_dataset(frame: Any, *, normalize: bool = False, classes: Sequence[Any] | None = None,
                     name: str = "classifier", where: str = "") -> Any:
    """Dataset of a table in the CSV form: the form is detected, other columns become attributes."""
    cols = [str(c) for c in _column_names(frame)]
    check_columns(cols, where)
    form = table_form(cols, where)
    groups = [c for c in cols if c not in RESERVED_COLUMNS and not c.startswith("p_")]
    return frame_dataset(frame, label="label", item_id="item_id", group_columns=groups, classes=classes,
                         predicted="predicted" if form == "top1" else None,
                         confidence="confidence" if form == "top1" else None, normalize=normalize, name=name)
