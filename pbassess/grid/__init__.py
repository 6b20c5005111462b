"""Experiment grids run in process or on dask: active assessment, estimation and surface cells.

:func:`load_grid` reads a TOML grid file into :class:`Cell` objects, :func:`run_grid` computes the
cells not yet stored (locally, on a :class:`dask.distributed.LocalCluster`, or on a remote
scheduler) and merges them into one :class:`xarray.Dataset` saved as Zarr. The command line is
``pbassess grid CONFIG.toml [--scheduler ADDRESS] [--out DIR]``.
"""

from pbassess.grid.cells import Cell, run_active_cell, summarise_cells
from pbassess.grid.config import cells_from_config, load_grid
from pbassess.grid.estimation_cells import EstimationCell, merge_estimation_cells
from pbassess.grid.kinds import KINDS, CellKind, merge_cells, run_cell
from pbassess.grid.runner import SCHEDULER_ENV, done_cells, open_client, run_grid
from pbassess.grid.surface_cells import SurfaceCell, merge_surface_cells

__all__ = ["KINDS", "SCHEDULER_ENV", "Cell", "CellKind", "EstimationCell", "SurfaceCell", "cells_from_config",
           "done_cells", "load_grid", "merge_cells", "merge_estimation_cells", "merge_surface_cells", "open_client",
           "run_active_cell", "run_cell", "run_grid", "summarise_cells"]
