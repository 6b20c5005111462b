"""Experiment grids described in a small TOML file, expanded into independent cells.

A grid file holds one or more ``[[experiment]]`` tables; each is a Cartesian product of its
list-valued keys, and the grid is the union of those products::

    # benchmarks/grids/smoke.toml
    [[experiment]]
    kind = "active"                      # the default: active-assessment simulation
    datasets = ["digits-logreg"]
    targets = ["least-accurate"]
    top_m = [1]
    strategies = ["random-item", "ts"]
    priors = ["uniform", "informed"]
    seeds = [0]
    runs = 20
    log_every = 20

Scalar keys (``runs``, ``log_every``, ``pseudocount``, ``budget``, ``bins``, ``batch_size``)
apply to every cell of their table. A cell is one (kind, dataset, target, top_m, strategy, prior,
seed) with those settings; it is the unit a worker computes and the unit a resumed grid skips.

Every table has a ``kind`` (default ``"active"``, or the ``kind`` of an optional ``[grid]``
table, which sets it for every table of the file). The kinds and their keys are registered in
:data:`pbassess.grid.kinds.KINDS`: ``active`` (this module's :class:`Cell`), ``estimation``
(:class:`pbassess.grid.estimation_cells.EstimationCell`) and ``surface``
(:class:`pbassess.grid.surface_cells.SurfaceCell`). A grid holds cells of one kind.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pbassess.constants import DEFAULT_BINS, DEFAULT_PSEUDOCOUNT
from pbassess.errors import ConfigError

__all__ = ["Cell", "cells_from_config", "expand_table", "load_grid", "settings_hash"]

_LIST_KEYS = {"datasets": "dataset", "targets": "target", "top_m": "top_m", "strategies": "strategy",
              "priors": "prior", "seeds": "seed"}
_SCALAR_KEYS = {"runs": int, "log_every": int, "pseudocount": float, "budget": int, "bins": int,
                "batch_size": int}
_ACTIVE_DEFAULTS = {"targets": ["least-accurate"], "top_m": [1], "priors": ["uniform"], "seeds": [0]}


def settings_hash(settings: dict[str, Any]) -> str:
    """Eight hex digits identifying a cell's settings (part of its key: changed settings make a new cell).

    Examples
    --------
    >>> settings_hash({"runs": 100}) == settings_hash({"runs": 100}) != settings_hash({"runs": 50})
    True
    """
    return hashlib.sha1(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:8]


@dataclass(frozen=True)
class Cell:
    """One independent unit of a grid (see the module docstring).

    Examples
    --------
    >>> c = Cell(dataset="digits-logreg", target="least-accurate", strategy="ts", prior="uniform")
    >>> c.key
    'active__digits-logreg__least-accurate__m1__ts__uniform__s0__9c000100'
    """

    dataset: str
    target: str
    strategy: str
    prior: str
    kind: str = "active"
    top_m: int = 1
    seed: int = 0
    runs: int = 100
    log_every: int = 100
    pseudocount: float = DEFAULT_PSEUDOCOUNT
    budget: int | None = None
    bins: int = DEFAULT_BINS
    batch_size: int = 1
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def key(self) -> str:
        """A file-name-safe identifier: the cell's factors joined by ``__`` and a hash of every setting
        (so a resumed grid recomputes a cell whose runs, budget, pseudocount, ... changed)."""
        parts = (self.kind, self.dataset, self.target, f"m{self.top_m}", self.strategy, self.prior, f"s{self.seed}",
                 settings_hash(self.settings()))
        return "__".join(str(p).replace("/", "_").replace(" ", "_") for p in parts)

    def settings(self) -> dict[str, Any]:
        """The cell as a JSON-able dict (stored beside its result)."""
        return {k: v for k, v in asdict(self).items() if k != "extra"}


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


def active_cells(table: dict[str, Any], index: int) -> list[Cell]:
    """The active-assessment cells of one ``[[experiment]]`` table (see the module docstring)."""
    cells = []
    for settings in expand_table(table, index, _LIST_KEYS, _SCALAR_KEYS, _ACTIVE_DEFAULTS, ("datasets", "strategies")):
        settings["top_m"] = _positive_int(settings["top_m"], "top_m", index)
        settings["seed"] = _positive_int(settings["seed"], "seeds", index, allow_zero=True)
        cells.append(Cell(**{k: (str(v) if k in ("dataset", "target", "strategy", "prior") else v)
                             for k, v in settings.items()}))
    return cells


def cells_from_config(config: dict[str, Any]) -> list[Any]:
    """Expand a parsed grid (a dict with an ``experiment`` list) into its cells, in file order.

    Duplicate cells (the same factors in two tables) are kept once.

    Examples
    --------
    >>> cfg = {"experiment": [{"datasets": ["d"], "targets": "least-accurate",
    ...                        "strategies": ["ts", "random-item"], "priors": ["uniform"], "runs": 5}]}
    >>> [c.strategy for c in cells_from_config(cfg)], cells_from_config(cfg)[0].runs
    (['ts', 'random-item'], 5)
    >>> cfg = {"grid": {"kind": "estimation"}, "experiment": [{"datasets": "digits-logreg", "labels": [50, 100]}]}
    >>> [c.key.split("__")[:3] for c in cells_from_config(cfg)]
    [['estimation', 'digits-logreg', 'n50'], ['estimation', 'digits-logreg', 'n100']]
    """
    from pbassess.grid.kinds import KINDS

    header = config.get("grid", {})
    if not isinstance(header, dict) or set(header) - {"kind"}:
        raise ConfigError("the [grid] table takes one key, kind")
    tables = config.get("experiment")
    if not isinstance(tables, list) or not tables:
        raise ConfigError("a grid needs at least one [[experiment]] table")
    cells: dict[str, Any] = {}
    for i, table in enumerate(tables, start=1):
        if not isinstance(table, dict):
            raise ConfigError(f"grid experiment {i} is not a table")
        kind = table.get("kind", header.get("kind", "active"))
        if kind not in KINDS:
            raise ConfigError(f"grid experiment {i}: unknown kind {kind!r} (choose from {', '.join(KINDS)})")
        for cell in KINDS[kind].expand(table, i):
            cells.setdefault(cell.key, cell)
    return list(cells.values())


def _positive_int(value: Any, key: str, table: int, allow_zero: bool = False) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < (0 if allow_zero else 1):
        raise ConfigError(f"grid experiment {table}: {key} must hold {'non-negative' if allow_zero else 'positive'} "
                          f"integers, got {value!r}")
    return int(value)


def load_grid(path: str | Path) -> list[Any]:
    """Read a grid TOML file and expand it into cells.

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "g.toml")
    >>> _ = open(path, "w").write('[[experiment]]\\ndatasets = ["digits-logreg"]\\nstrategies = ["ts"]\\n')
    >>> [c.key for c in load_grid(path)]
    ['active__digits-logreg__least-accurate__m1__ts__uniform__s0__9c000100']
    """
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"grid file not found: {p}")
    try:
        config = tomllib.loads(p.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: not a valid TOML file ({exc})") from None
    return cells_from_config(config)
