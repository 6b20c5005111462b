"""Small text helpers shared by the result classes (percentages, ties, dims)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import xarray as xr

__all__ = ["names_phrase", "percent", "plural", "region_dim_names", "tied_leaders"]

#: Two probabilities closer than this count as tied in sentences (Monte Carlo noise of 4000 draws).
TIE_TOLERANCE: float = 0.02


def percent(prob: float) -> str:
    """``0.95`` -> ``"95%"``, ``0.875`` -> ``"87.5%"``."""
    return f"{100 * prob:.10g}%"


def region_dim_names(ds: xr.Dataset, var: str) -> list[str]:
    """The non-sample dims of ``var``."""
    return [d for d in ds[var].dims if d not in ("chain", "draw")]


def tied_leaders(probability: Any, valid: Any = None, *, tolerance: float = TIE_TOLERANCE) -> np.ndarray:
    """Indices of the regions whose probability is within ``tolerance`` of the largest one.

    Examples
    --------
    >>> tied_leaders([0.33, 0.34, 0.33, 0.0]).tolist()
    [0, 1, 2]
    >>> tied_leaders([0.9, 0.1]).tolist()
    [0]
    """
    p = np.asarray(probability, dtype=float)
    ok = np.ones(p.shape, dtype=bool) if valid is None else np.asarray(valid, dtype=bool)
    if not ok.any():
        return np.array([], dtype=int)
    best = p[ok].max()
    return np.flatnonzero(ok & (p >= best - tolerance) & (p > 0))


def names_phrase(names: Sequence[Any], limit: int = 5) -> str:
    """``'a', 'b' and 'c'`` (at most ``limit`` names, then ``and N others``).

    Examples
    --------
    >>> names_phrase(["a", "b", "c"]), names_phrase(list("abcdefg"), limit=2)
    ("'a', 'b' and 'c'", "'a', 'b' and 5 others")
    """
    quoted = [repr(str(n)) for n in names]
    if len(quoted) <= 1:
        return "".join(quoted)
    if len(quoted) > limit:
        return f"{', '.join(quoted[:limit])} and {len(quoted) - limit} others"
    return f"{', '.join(quoted[:-1])} and {quoted[-1]}"


def plural(noun: str) -> str:
    """English plural of a region noun.

    Examples
    --------
    >>> plural("predicted class"), plural("sex group")
    ('predicted classes', 'sex groups')
    """
    return noun + ("es" if noun.endswith(("s", "x", "sh", "ch")) else "s")
