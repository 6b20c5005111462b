"""Experiment grids described in a small TOML file, expanded into independent cells.

A grid file holds one or more ``[[experiment]]`` tables; each is a Cartesian product of its
list-valued keys, and the grid is the union of those products::

    # benchmarks/grids/smoke.toml
    [[experiment]]
    kind = "active"                      # the only kind today: active-assessment simulation
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
"""

from __future__ import annotations

import itertools
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pbassess.constants import DEFAULT_BINS, DEFAULT_PSEUDOCOUNT
from pbassess.errors import ConfigError

__all__ = ["Cell", "cells_from_config", "load_grid"]

_LIST_KEYS = {"datasets": "dataset", "targets": "target", "top_m": "top_m", "strategies": "strategy",
              "priors": "prior", "seeds": "seed"}
_SCALAR_KEYS = {"runs": int, "log_every": int, "pseudocount": float, "budget": int, "bins": int,
                "batch_size": int}
_KINDS = ("active",)


@dataclass(frozen=True)
class Cell:
    """One independent unit of a grid (see the module docstring).

    Examples
    --------
    >>> c = Cell(dataset="digits-logreg", target="least-accurate", strategy="ts", prior="uniform")
    >>> c.key
    'active__digits-logreg__least-accurate__m1__ts__uniform__s0'
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
        """A file-name-safe identifier: the cell's factors joined by ``__``."""
        parts = (self.kind, self.dataset, self.target, f"m{self.top_m}", self.strategy, self.prior, f"s{self.seed}")
        return "__".join(str(p).replace("/", "_").replace(" ", "_") for p in parts)

    def settings(self) -> dict[str, Any]:
        """The cell as a JSON-able dict (stored beside its result)."""
        return {k: v for k, v in asdict(self).items() if k != "extra"}


def _as_list(value: Any, key: str, table: int) -> list[Any]:
    values = value if isinstance(value, list) else [value]
    if not values:
        raise ConfigError(f"grid experiment {table}: {key!r} is an empty list")
    return values


def cells_from_config(config: dict[str, Any]) -> list[Cell]:
    """Expand a parsed grid (a dict with an ``experiment`` list) into its cells, in file order.

    Duplicate cells (the same factors in two tables) are kept once.

    Examples
    --------
    >>> cfg = {"experiment": [{"datasets": ["d"], "targets": "least-accurate",
    ...                        "strategies": ["ts", "random-item"], "priors": ["uniform"], "runs": 5}]}
    >>> [c.strategy for c in cells_from_config(cfg)], cells_from_config(cfg)[0].runs
    (['ts', 'random-item'], 5)
    """
    tables = config.get("experiment")
    if not isinstance(tables, list) or not tables:
        raise ConfigError("a grid needs at least one [[experiment]] table")
    cells: dict[str, Cell] = {}
    for i, table in enumerate(tables, start=1):
        if not isinstance(table, dict):
            raise ConfigError(f"grid experiment {i} is not a table")
        unknown = set(table) - set(_LIST_KEYS) - set(_SCALAR_KEYS) - {"kind"}
        if unknown:
            raise ConfigError(f"grid experiment {i}: unknown key {sorted(unknown)[0]!r} "
                              f"(known: kind, {', '.join(sorted([*_LIST_KEYS, *_SCALAR_KEYS]))})")
        kind = table.get("kind", "active")
        if kind not in _KINDS:
            raise ConfigError(f"grid experiment {i}: unknown kind {kind!r} (choose from {', '.join(_KINDS)})")
        for required in ("datasets", "strategies"):
            if required not in table:
                raise ConfigError(f"grid experiment {i}: {required!r} is missing")
        scalars: dict[str, Any] = {}
        for key, cast in _SCALAR_KEYS.items():
            if key in table:
                value = table[key]
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise ConfigError(f"grid experiment {i}: {key} must be a number, got {value!r}")
                scalars[key] = cast(value)
        lists = {field_: _as_list(table.get(key, _default(key)), key, i) for key, field_ in _LIST_KEYS.items()}
        for combo in itertools.product(*lists.values()):
            factors = dict(zip(lists.keys(), combo, strict=True))
            factors["top_m"] = _positive_int(factors["top_m"], "top_m", i)
            factors["seed"] = _positive_int(factors["seed"], "seeds", i, allow_zero=True)
            cell = Cell(kind=kind, **{k: (str(v) if k in ("dataset", "target", "strategy", "prior") else v)
                                      for k, v in factors.items()}, **scalars)
            cells.setdefault(cell.key, cell)
    return list(cells.values())


def _default(key: str) -> Any:
    return {"targets": ["least-accurate"], "top_m": [1], "priors": ["uniform"], "seeds": [0]}.get(key)


def _positive_int(value: Any, key: str, table: int, allow_zero: bool = False) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < (0 if allow_zero else 1):
        raise ConfigError(f"grid experiment {table}: {key} must hold {'non-negative' if allow_zero else 'positive'} "
                          f"integers, got {value!r}")
    return int(value)


def load_grid(path: str | Path) -> list[Cell]:
    """Read a grid TOML file and expand it into cells.

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "g.toml")
    >>> _ = open(path, "w").write('[[experiment]]\\ndatasets = ["digits-logreg"]\\nstrategies = ["ts"]\\n')
    >>> [c.key for c in load_grid(path)]
    ['active__digits-logreg__least-accurate__m1__ts__uniform__s0']
    """
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"grid file not found: {p}")
    try:
        config = tomllib.loads(p.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: not a valid TOML file ({exc})") from None
    return cells_from_config(config)
