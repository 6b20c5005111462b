"""Reading a cost matrix from a file: ``.csv`` / text (optionally with class names), ``.npy``, ``.json``.

Split from :mod:`pbassess.stats.cost` (which re-exports :func:`read_cost_matrix_file` and
is where :func:`~pbassess.stats.cost.resolve_cost_matrix` calls it). Every problem is one
:class:`~pbassess.errors.ConfigError` line naming the row and column.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pbassess.errors import ConfigError

__all__ = ["read_cost_matrix_file"]


def read_cost_matrix_file(path: Any, classes: Sequence[str]) -> np.ndarray:
    """A (K, K) cost matrix from a ``.csv`` / text, ``.npy`` or ``.json`` file, validated.

    A CSV holds K rows of K numbers separated by commas (or blanks for other text files),
    optionally with a header row of class names and a first column of class names; named
    rows and columns are put in the order of ``classes``. A cell is a number when it parses
    as one, so ``nan`` or ``inf`` cells are reported as such with their row and column,
    never mistaken for a header.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "cost.csv"
    >>> _ = f.write_text(",b,a\\nb,0,5\\na,1,0\\n")
    >>> read_cost_matrix_file(f, ["a", "b"]).tolist()
    [[0.0, 1.0], [5.0, 0.0]]
    >>> _ = f.write_text("0,nan\\n1,0\\n")
    >>> read_cost_matrix_file(f, ["a", "b"])
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: cost matrix file ...cost.csv: row 1, column 2 is nan: costs must be finite numbers
    """
    import json
    from pathlib import Path

    path = Path(path)
    names = [str(c) for c in classes]
    where = f"cost matrix file {path}"
    if not path.is_file():
        raise ConfigError(f"{where}: not found")
    try:
        if path.suffix.lower() == ".npy":
            raw = np.load(path, allow_pickle=False)
            return _checked_table(np.asarray(raw, dtype=object).tolist() if raw.ndim == 2 else raw, names, where)
        text = path.read_text(encoding="utf-8-sig")
        if path.suffix.lower() == ".json":
            raw = json.loads(text)
            return _checked_table(raw["cost"] if isinstance(raw, dict) else raw, names, where)
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{where} cannot be read: {' '.join(str(exc).split())}") from None
    delimiter = "," if path.suffix.lower() == ".csv" or "," in text else None
    rows = [[cell.strip() for cell in (line.split(delimiter) if delimiter else line.split())]
            for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if not rows:
        raise ConfigError(f"{where} is empty")
    return _named_table(rows, names, where)


def _is_number(cell: Any) -> bool:
    try:
        float(cell)
    except (TypeError, ValueError):
        return False
    return True


def _named_table(rows: list[list[str]], names: list[str], where: str) -> np.ndarray:
    """Strip an optional header row / name column, then order named rows and columns like ``names``."""
    col_names = row_names = None
    if len(rows) > 1 and not all(_is_number(c) for c in rows[0][1:]):
        col_names = rows[0]
        rows = rows[1:]
    if rows and not all(_is_number(r[0]) for r in rows if r):
        row_names = [r[0] for r in rows]
        rows = [r[1:] for r in rows]
        if col_names is not None and len(col_names) == len(rows[0]) + 1:
            col_names = col_names[1:]
    matrix = _checked_table(rows, names, where)
    order = {c: i for i, c in enumerate(names)}
    for what, found in (("row", row_names), ("column", col_names)):
        if found is None:
            continue
        unknown = [n for n in found if n not in order]
        if unknown or len(set(found)) != len(names):
            bad = repr(unknown[0]) if unknown else "a repeated name"
            raise ConfigError(f"{where}: {what} name {bad} is not one of the classes (each class must appear once)")
        index = [order[n] for n in found]
        fixed = np.empty_like(matrix)
        if what == "row":
            fixed[index] = matrix
        else:
            fixed[:, index] = matrix
        matrix = fixed
    return matrix


def _checked_table(rows: Any, names: list[str], where: str) -> np.ndarray:
    """Rows of cells -> a validated (K, K) float array; every problem named by row and column (1-based)."""
    k = len(names)
    try:
        rows = [list(r) for r in rows]
    except TypeError:
        raise ConfigError(f"{where}: expected rows of numbers") from None
    widths = {len(r) for r in rows}
    if len(rows) != k or widths != {k}:
        shape = f"{len(rows)} x {max(widths) if widths else 0}" if len(widths) <= 1 else (
            f"{len(rows)} rows of {min(widths)} to {max(widths)} cells")
        raise ConfigError(f"{where} is {shape}, expected {k} x {k} for the {k} classes")
    out = np.empty((k, k))
    for i, row in enumerate(rows):
        for j, cell in enumerate(row):
            if isinstance(cell, str) and not cell.strip():
                raise ConfigError(f"{where}: row {i + 1}, column {j + 1} is empty: every cost must be a number")
            if isinstance(cell, bool) or not _is_number(cell):
                raise ConfigError(f"{where}: row {i + 1}, column {j + 1} is {str(cell)!r}, not a number")
            value = float(cell)
            if not np.isfinite(value):
                raise ConfigError(f"{where}: row {i + 1}, column {j + 1} is {value}: costs must be finite numbers")
            if value < 0:
                raise ConfigError(f"{where}: row {i + 1}, column {j + 1} is {value:g}: costs must be non-negative")
            out[i, j] = value
    return out
