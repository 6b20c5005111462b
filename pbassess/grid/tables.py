"""Expanding one ``[[experiment]]`` table of a grid file into cell settings (shared by every cell kind).

The grid file format is described in :mod:`pbassess.grid.config`; the kinds in
:mod:`pbassess.grid.kinds`. This module knows neither: it only checks and expands tables.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from typing import Any

from pbassess.errors import ConfigError

__all__ = ["expand_table", "positive_int", "settings_hash"]


def settings_hash(settings: dict[str, Any]) -> str:
    """Eight hex digits identifying a cell's settings (part of its key: changed settings make a new cell).

    Examples
    --------
    >>> settings_hash({"runs": 100}) == settings_hash({"runs": 100}) != settings_hash({"runs": 50})
    True
    """
    return hashlib.sha1(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:8]


def _as_list(value: Any, key: str, table: int) -> list[Any]:
    values = value if isinstance(value, list) else [value]
    if not values:
        raise ConfigError(f"grid experiment {table}: {key!r} is an empty list")
    return values


def _scalar(value: Any, key: str, cast: Any, table: int) -> Any:
    """A scalar setting: a number (``int``/``float``), a string (``str``) or a list of strings (``tuple``)."""
    if cast is str:
        if not isinstance(value, str):
            raise ConfigError(f"grid experiment {table}: {key} must be a string, got {value!r}")
        return value
    if cast is tuple:
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"grid experiment {table}: {key} must be a non-empty list of strings, got {value!r}")
        return tuple(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"grid experiment {table}: {key} must be a number, got {value!r}")
    if cast is int:  # counts (runs, budget, bins, draws, ...): never truncated (runs = 2.7 is not 2)
        if not float(value).is_integer() or value < 1:
            raise ConfigError(f"grid experiment {table}: {key} must be a positive integer, got {value!r}")
        return int(value)
    if not math.isfinite(value):
        raise ConfigError(f"grid experiment {table}: {key} must be a finite number, got {value!r}")
    return cast(value)


def expand_table(table: dict[str, Any], index: int, list_keys: dict[str, str], scalar_keys: dict[str, Any],
                 defaults: dict[str, list[Any]], required: tuple[str, ...]) -> list[dict[str, Any]]:
    """The settings of every cell of one ``[[experiment]]`` table (a helper of every cell kind).

    Parameters
    ----------
    table : dict
        The parsed table (its ``kind`` key is ignored here).
    index : int
        The table's position in the file (1-based, for messages).
    list_keys : dict
        TOML key -> cell field of the factors (a scalar value counts as a list of one).
    scalar_keys : dict
        TOML key -> ``int``, ``float``, ``str`` or ``tuple`` (a list of strings) for the settings.
    defaults : dict
        Values of the factors left out of the table (a factor without default is required).
    required : tuple of str
        Keys the table must have.

    Examples
    --------
    >>> expand_table({"datasets": ["a", "b"], "runs": 3}, 1, {"datasets": "dataset", "seeds": "seed"},
    ...              {"runs": int}, {"seeds": [0]}, ("datasets",))
    [{'dataset': 'a', 'seed': 0, 'runs': 3}, {'dataset': 'b', 'seed': 0, 'runs': 3}]
    """
    known = set(list_keys) | set(scalar_keys) | {"kind"}
    unknown = set(table) - known
    if unknown:
        raise ConfigError(f"grid experiment {index}: unknown key {sorted(unknown)[0]!r} "
                          f"(known: {', '.join(sorted(known))})")
    for key in (*required, *(k for k in list_keys if k not in defaults)):
        if key not in table:
            raise ConfigError(f"grid experiment {index}: {key!r} is missing")
    scalars = {key: _scalar(table[key], key, cast, index) for key, cast in scalar_keys.items() if key in table}
    lists = {field_: _as_list(table.get(key, defaults.get(key)), key, index) for key, field_ in list_keys.items()}
    return [{**dict(zip(lists, combo, strict=True)), **scalars} for combo in itertools.product(*lists.values())]


def positive_int(value: Any, key: str, table: int, allow_zero: bool = False) -> int:
    """A positive (or, with ``allow_zero``, non-negative) integer setting of table ``table``.

    Examples
    --------
    >>> positive_int(3, "runs", 1), positive_int(0, "seeds", 1, allow_zero=True)
    (3, 0)
    >>> positive_int(0, "runs", 2)
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: grid experiment 2: runs must hold positive integers, got 0
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < (0 if allow_zero else 1):
        raise ConfigError(f"grid experiment {table}: {key} must hold {'non-negative' if allow_zero else 'positive'} "
                          f"integers, got {value!r}")
    return int(value)
