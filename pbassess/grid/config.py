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
:data:`pbassess.grid.kinds.KINDS`: ``active`` (:class:`pbassess.grid.cells.Cell`), ``estimation``
(:class:`pbassess.grid.estimation_cells.EstimationCell`) and ``surface``
(:class:`pbassess.grid.surface_cells.SurfaceCell`). A grid holds cells of one kind.

Paths inside a grid file (a data set given as a file, a cost-matrix file) are relative to the
grid file, not to the working directory (:func:`resolve_paths`).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pbassess.errors import ConfigError
from pbassess.grid.kinds import KINDS

__all__ = ["cells_from_config", "load_grid"]


def cells_from_config(config: dict[str, Any]) -> list[Any]:
    """Expand a parsed grid (a dict with an ``experiment`` list) into its cells, in file order.

    Duplicate cells (the same factors in two tables) are kept once.

    Parameters
    ----------
    config : dict
        A parsed grid (with an ``experiment`` list of tables).

    Returns
    -------
    list of cells

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


def load_grid(path: str | Path) -> list[Any]:
    """Read a grid TOML file and expand it into cells.

    Parameters
    ----------
    path : str or pathlib.Path
        A grid TOML file.

    Returns
    -------
    list of cells

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
    try:
        return cells_from_config(resolve_paths(config, p.parent))
    except ConfigError as exc:  # name the file as well as the experiment table and the key
        if str(exc).startswith(str(p)):
            raise
        raise ConfigError(f"{p}: {exc}") from None


#: Keys of an ``[[experiment]]`` table whose values may name files (then relative to the grid file).
PATH_KEYS: tuple[str, ...] = ("datasets", "cost_matrix")


def resolve_paths(config: dict[str, Any], base: str | Path) -> dict[str, Any]:
    """The parsed grid with relative file paths in :data:`PATH_KEYS` made relative to ``base`` (the grid file's folder).

    A value is taken as a path when it is not a registered data set name and names an existing
    file or folder relative to ``base``; registered names, synthetic pools and absolute paths are
    left as they are. So a grid runs the same from any working directory.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "pool.csv").write_text("x")
    >>> cfg = resolve_paths({"experiment": [{"datasets": ["pool.csv", "digits-logreg"]}]}, d)
    >>> [pathlib.Path(v).name if "/" in v else v for v in cfg["experiment"][0]["datasets"]]
    ['pool.csv', 'digits-logreg']
    >>> pathlib.Path(cfg["experiment"][0]["datasets"][0]).is_absolute()
    True
    """
    from pbassess.data import registry

    base = Path(base)
    try:
        names = {c.name for c in registry.list_models()}
    except Exception:  # noqa: BLE001 - without a registry every existing relative file is a path
        names = set()

    def fix(value: Any) -> Any:
        if not isinstance(value, str) or value in names or Path(value).is_absolute():
            return value
        candidate = base / value
        return str(candidate.resolve()) if candidate.exists() else value

    tables = config.get("experiment")
    if not isinstance(tables, list):
        return config
    out = dict(config)
    out["experiment"] = [
        {k: ([fix(v) for v in val] if isinstance(val, list) else fix(val)) if k in PATH_KEYS else val
         for k, val in table.items()} if isinstance(table, dict) else table
        for table in tables
    ]
    return out
