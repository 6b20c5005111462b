"""Turning result dictionaries into plain JSON values (lowest layer: numpy only)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["to_jsonable"]


def to_jsonable(obj: Any) -> Any:
    """A copy of ``obj`` made of plain JSON values: NaN and infinities become ``None``.

    Dict keys become strings, tuples and arrays become lists and numpy scalars Python scalars.

    Examples
    --------
    >>> to_jsonable({1: np.array([0.5, np.nan]), "n": np.int64(3)})
    {'1': [0.5, None], 'n': 3}
    """
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        return to_jsonable(obj.item())
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    return obj
