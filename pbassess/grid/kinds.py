"""The registry of cell kinds: how a kind's TOML table becomes cells, how a cell runs, how cells merge.

* ``active`` (the default): :class:`pbassess.grid.cells.Cell`, merged by
  :func:`pbassess.grid.cells.summarise_cells`;
* ``estimation``: :class:`pbassess.grid.estimation_cells.EstimationCell`, merged by
  :func:`pbassess.grid.estimation_cells.merge_estimation_cells`;
* ``surface``: :class:`pbassess.grid.surface_cells.SurfaceCell`, merged by
  :func:`pbassess.grid.surface_cells.merge_surface_cells`.

A new kind adds one :class:`CellKind` to :data:`KINDS`; the runner, resuming and the TOML
reader need nothing else. Every cell has ``kind``, ``key`` (unique, file-name-safe) and
``settings()`` (JSON-able); its run function returns a small :class:`xarray.Dataset` holding its
settings as JSON in ``attrs["cell"]``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import xarray as xr

from pbassess.errors import ConfigError
from pbassess.grid.cells import active_cells, active_rows, run_active_cell, summarise_cells
from pbassess.grid.estimation_cells import (
    estimation_cells,
    estimation_cost,
    estimation_rows,
    merge_estimation_cells,
    run_estimation_cell,
)
from pbassess.grid.surface_cells import (
    merge_surface_cells,
    run_surface_cell,
    surface_cells,
    surface_cost,
    surface_rows,
)

__all__ = ["KINDS", "CellKind", "kind_of", "merge_cells", "run_cell"]


@dataclass(frozen=True)
class CellKind:
    """What the grid needs to know about one kind of cell.

    Parameters
    ----------
    expand, run, merge, cost, rows : callable
        The attributes below.

    Attributes
    ----------
    expand : callable
        ``expand(table, index) -> list of cells``: one ``[[experiment]]`` table of this kind.
    run : callable
        ``run(cell) -> xarray.Dataset``: what a worker computes (module-level, so it pickles).
    merge : callable
        ``merge({key: dataset}) -> xarray.Dataset`` with a ``cell`` dimension.
    cost : callable
        ``cost(cell, pool_sizes) -> float``: a rough cost, to start the longest cells first.
    rows : callable
        ``rows(merged) -> list of dict``: the merged Dataset as JSON-able rows (``pbassess grid``).

    Examples
    --------
    >>> sorted(KINDS), KINDS["surface"].run.__name__
    (['active', 'estimation', 'surface'], 'run_surface_cell')
    """

    expand: Callable[[dict[str, Any], int], list[Any]]
    run: Callable[[Any], xr.Dataset]
    merge: Callable[[dict[str, xr.Dataset]], xr.Dataset]
    cost: Callable[[Any, dict[str, int]], float]
    rows: Callable[[xr.Dataset], list[dict[str, Any]]]


def _active_cost(cell: Any, sizes: dict[str, int]) -> float:
    n_items = sizes.get(cell.dataset, 10_000)
    labels = n_items if cell.budget is None else min(cell.budget, n_items)
    return float(cell.runs) * labels * (3.0 if cell.target == "most-miscalibrated" else 1.0)


#: Every kind of cell by name.
KINDS: dict[str, CellKind] = {
    "active": CellKind(active_cells, run_active_cell, summarise_cells, _active_cost, active_rows),
    "estimation": CellKind(estimation_cells, run_estimation_cell, merge_estimation_cells, estimation_cost,
                           estimation_rows),
    "surface": CellKind(surface_cells, run_surface_cell, merge_surface_cells, surface_cost, surface_rows),
}


def kind_of(cell: Any) -> CellKind:
    """The registered kind of a cell.

    Examples
    --------
    >>> from pbassess.grid.cells import Cell
    >>> kind_of(Cell(dataset="d", target="least-accurate", strategy="ts", prior="uniform")) is KINDS["active"]
    True
    """
    kind = getattr(cell, "kind", None)
    if kind not in KINDS:
        raise ConfigError(f"unknown cell kind {kind!r} (choose from {', '.join(KINDS)})")
    return KINDS[kind]


def run_cell(cell: Any) -> xr.Dataset:
    """Compute one cell of any kind (what a dask worker runs).

    Parameters
    ----------
    cell : Cell, EstimationCell or SurfaceCell

    Returns
    -------
    xarray.Dataset

    Examples
    --------
    >>> from pbassess.grid.estimation_cells import EstimationCell
    >>> ds = run_cell(EstimationCell("digits-logreg", labels=50, methods=("classical",), runs=2))
    >>> dict(ds["upper"].sizes)
    {'method': 1, 'run': 2}
    """
    return kind_of(cell).run(cell)


def merge_cells(kind: str, results: dict[str, xr.Dataset]) -> xr.Dataset:
    """Merge finished cells of one kind into one Dataset with a ``cell`` dimension.

    Parameters
    ----------
    kind : str
        The cells' kind (:data:`KINDS`).
    results : dict of str to xarray.Dataset
        Finished cells by key.

    Returns
    -------
    xarray.Dataset

    Examples
    --------
    >>> from pbassess.grid.estimation_cells import EstimationCell
    >>> c = EstimationCell("digits-logreg", labels=50, methods=("classical",), runs=2)
    >>> merge_cells("estimation", {c.key: run_cell(c)}).sizes["cell"]
    1
    """
    if kind not in KINDS:
        raise ConfigError(f"unknown cell kind {kind!r} (choose from {', '.join(KINDS)})")
    return KINDS[kind].merge(results)
