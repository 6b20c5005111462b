"""Experiment grids (strategies x priors x data sets x targets x seeds) run in process or on dask.

:func:`load_grid` reads a TOML grid file into :class:`Cell` objects, :func:`run_grid` computes the
cells not yet stored (locally, on a :class:`dask.distributed.LocalCluster`, or on a remote
scheduler) and merges them into one :class:`xarray.Dataset` saved as Zarr. The command line is
``pbassess grid CONFIG.toml [--scheduler ADDRESS] [--out DIR]``.
"""

from pbassess.grid.cells import run_cell, summarise_cells
from pbassess.grid.config import Cell, cells_from_config, load_grid
from pbassess.grid.runner import SCHEDULER_ENV, done_cells, open_client, run_grid

__all__ = ["SCHEDULER_ENV", "Cell", "cells_from_config", "done_cells", "load_grid", "open_client", "run_cell",
           "run_grid", "summarise_cells"]
