"""Running a grid in this process or on a dask cluster, resumably, into one Zarr store.

Layout of the output folder::

    OUT/cells/<cell key>.zarr   one finished cell each (written atomically: a resumed grid skips them)
    OUT/grid.zarr               every finished cell merged (the merge function of the cells' kind,
                                :data:`pbassess.grid.kinds.KINDS`)

Where the cells run:

* ``scheduler=None`` (and no ``PBASSESS_DASK_SCHEDULER`` in the environment): one after the other in
  this process;
* ``"local"`` or ``"local:N"``: a :class:`dask.distributed.LocalCluster` of N worker processes
  (default 2), one thread each, each with its own PyTensor compile directory and numba limited to
  one thread (so N workers use N cores, as the single process does with its N numba threads);
* any other string: the address of a running scheduler (``tcp://host:8786``), e.g. one started with
  ``dask scheduler`` and ``dask worker tcp://host:8786 --nworkers 2 --nthreads 1``.

Workers compute and return the small per-cell Datasets; only this process writes to ``OUT``, so
a remote cluster needs no shared file system.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import xarray as xr

from pbassess.errors import ConfigError
from pbassess.grid.kinds import kind_of, merge_cells, run_cell

__all__ = ["SCHEDULER_ENV", "done_cells", "open_client", "run_grid"]

#: Environment variable naming the default scheduler of grids (``local``, ``local:N`` or an address).
SCHEDULER_ENV = "PBASSESS_DASK_SCHEDULER"

_WORKER_ENV = {"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _cell_path(out: Path, cell: Any) -> Path:
    return out / "cells" / f"{cell.key}.zarr"


def done_cells(cells: Sequence[Any], out: str | Path) -> list[Any]:
    """The cells whose results are already stored under ``out`` (a resumed grid skips them).

    Examples
    --------
    >>> import tempfile
    >>> from pbassess.grid.cells import Cell
    >>> done_cells([Cell(dataset="d", target="least-accurate", strategy="ts", prior="uniform")], tempfile.mkdtemp())
    []
    """
    base = Path(out)
    return [c for c in cells if (_cell_path(base, c) / "zarr.json").exists() or (_cell_path(base, c) / ".zgroup").exists()]


def _write_cell(out: Path, cell: Any, ds: xr.Dataset) -> None:
    """Write one cell atomically: to a temporary folder, then renamed into place."""
    final = _cell_path(out, cell)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{cell.key}.", suffix=".tmp"))
    try:
        ds.to_zarr(tmp / "data.zarr", mode="w", consolidated=False)
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp / "data.zarr", final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _read_cell(out: Path, cell: Any) -> xr.Dataset:
    return xr.open_zarr(_cell_path(out, cell), consolidated=False).load()


def _compile_dir_plugin() -> Any:
    """A worker plugin giving each worker a PyTensor compile directory of its own (set before PyTensor loads)."""
    from distributed.diagnostics.plugin import WorkerPlugin

    class PerWorkerCompileDir(WorkerPlugin):
        name = "pbassess-compiledir"

        def setup(self, worker: Any) -> None:
            # by worker name (0, 1, ... on a LocalCluster): a restarted cluster finds its compiled modules again
            safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in str(worker.name or worker.id))
            base = Path(tempfile.gettempdir()) / "pbassess-pytensor" / safe
            base.mkdir(parents=True, exist_ok=True)
            # PyTensor reads its flags once, on import: workers start fresh processes, and pbassess imports
            # PyTensor only inside the functions that build models, so this runs before it
            if "pytensor" in sys.modules:
                import warnings

                warnings.warn("PyTensor was imported before the worker's compile folder was set; it keeps "
                              "the shared one", RuntimeWarning, stacklevel=1)
            flags = [f for f in os.environ.get("PYTENSOR_FLAGS", "").split(",") if f and
                     not f.startswith("base_compiledir=")]
            os.environ["PYTENSOR_FLAGS"] = ",".join([*flags, f"base_compiledir={base}"])

    return PerWorkerCompileDir()


def open_client(scheduler: str | None) -> tuple[Any, Callable[[], None]] | tuple[None, Callable[[], None]]:
    """A dask.distributed Client for ``scheduler`` (see the module docstring) and a function closing it.

    ``None`` reads :data:`SCHEDULER_ENV`; without it, returns ``(None, noop)`` (run in process).

    Examples
    --------
    >>> client, close = open_client("process")  # "local:2" would start two worker processes
    >>> client is None, close()
    (True, None)
    >>> open_client("local:0")
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: scheduler 'local:0': at least one worker is needed
    """
    scheduler = scheduler or os.environ.get(SCHEDULER_ENV) or None
    if scheduler is None or scheduler in ("none", "process"):
        return None, lambda: None
    from dask.distributed import Client, LocalCluster

    if scheduler == "local" or scheduler.startswith("local:"):
        try:
            n_workers = int(scheduler.split(":", 1)[1]) if ":" in scheduler else 2
        except ValueError:
            raise ConfigError(f"scheduler {scheduler!r}: expected 'local' or 'local:N' with N workers") from None
        if n_workers < 1:
            raise ConfigError(f"scheduler {scheduler!r}: at least one worker is needed")
        import warnings

        with warnings.catch_warnings():  # the scheduler's health endpoint moves off a busy port 8787 by itself
            warnings.filterwarnings("ignore", message="Port 8787 is already in use")
            cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None,
                                   env=dict(_WORKER_ENV))
        client = Client(cluster, set_as_default=False)  # the caller submits to it; dask.compute elsewhere stays local
        client.register_plugin(_compile_dir_plugin())

        def close() -> None:
            client.close()
            cluster.close()

        return client, close
    try:
        client = Client(scheduler, timeout="20s", set_as_default=False)
    except OSError as exc:
        raise ConfigError(f"cannot reach the dask scheduler at {scheduler!r}: {exc}") from None
    client.register_plugin(_compile_dir_plugin())
    return client, client.close


def _pool_sizes() -> dict[str, int]:
    """Items per registered data set, from the cards (no data is read)."""
    from pbassess.data.registry import list_models

    sizes = {}
    for card in list_models():
        n_items = (card.extra or {}).get("n_items")
        if isinstance(n_items, int):
            sizes[card.name] = n_items
    return sizes


def _progress_bar(total: int, enabled: bool | None):
    from tqdm.auto import tqdm

    from pbassess.inference.sampling import progress_wanted

    show = progress_wanted() if enabled is None else bool(enabled)
    return tqdm(total=total, disable=not show, unit="cell", file=sys.stderr)


def _compute(todo: list[Any], base: Path, client: Any, bar: Any,
             on_cell: Callable[[Any, xr.Dataset], None] | None) -> None:
    """Run the missing cells (in process when ``client`` is None) and store each as it finishes."""
    def store(cell: Any, ds: xr.Dataset) -> None:
        _write_cell(base, cell, ds)
        bar.update(1)
        if on_cell:
            on_cell(cell, ds)

    if client is None:
        for cell in todo:
            store(cell, run_cell(cell))
        return
    from dask.distributed import as_completed

    sizes = _pool_sizes()
    # longest cells first, so that no worker is left alone with a long cell at the end
    ordered = sorted(todo, key=lambda c: -kind_of(c).cost(c, sizes))
    futures = {client.submit(run_cell, cell, pure=False, key=f"pbassess-cell-{cell.key}",
                             priority=len(ordered) - i): cell
               for i, cell in enumerate(ordered)}
    with client.as_current():  # as_completed finds the client it waits on as the current one
        for future in as_completed(futures):
            store(futures[future], future.result())


def run_grid(cells: Sequence[Any], out: str | Path, *, scheduler: str | None = None, client: Any = None,
             progress: bool | None = None, on_cell: Callable[[Any, xr.Dataset], None] | None = None) -> xr.Dataset:
    """Compute every cell not yet stored under ``out`` and return the merged Dataset.

    Parameters
    ----------
    cells : sequence of cells of one kind
        From :func:`pbassess.grid.load_grid` or :func:`pbassess.grid.cells_from_config`, or built
        directly (:class:`~pbassess.grid.Cell`, :class:`~pbassess.grid.EstimationCell`,
        :class:`~pbassess.grid.SurfaceCell`).
    out : path
        Output folder (created); finished cells found there are skipped.
    scheduler : str, optional
        ``None`` (in process, or :data:`SCHEDULER_ENV`), ``"local"``, ``"local:N"`` or an address.
    client : dask.distributed.Client, optional
        An existing client (overrides ``scheduler``).
    progress : bool, optional
        Show a progress bar on stderr (default: when stderr is a terminal).
    on_cell : callable, optional
        Called as ``on_cell(cell, dataset)`` when a cell finishes.

    Returns
    -------
    xarray.Dataset
        The merged grid (also written to ``out/grid.zarr``), with a ``cell`` dimension, in the
        order of ``cells``; see the merge function of the cells' kind (:mod:`pbassess.grid.kinds`).

    Examples
    --------
    >>> import tempfile
    >>> from pbassess.grid.cells import Cell
    >>> cells = [Cell(dataset="digits-logreg", target="least-accurate", strategy=s, prior="uniform", runs=2)
    ...          for s in ("ts", "random-item")]
    >>> merged = run_grid(cells, tempfile.mkdtemp())
    >>> merged.sizes["cell"]
    2
    """
    if not cells:
        raise ConfigError("the grid has no cells")
    kinds = sorted({getattr(c, "kind", None) or "?" for c in cells})
    if len(kinds) > 1:
        raise ConfigError(f"a grid holds cells of one kind, found {' and '.join(kinds)}: put them in separate grids")
    for cell in cells:
        kind_of(cell)
    base = Path(out)
    base.mkdir(parents=True, exist_ok=True)
    finished = {c.key for c in done_cells(cells, base)}
    todo = [c for c in cells if c.key not in finished]
    close: Callable[[], None] = lambda: None  # noqa: E731
    if client is None and todo:
        client, close = open_client(scheduler)
    bar = _progress_bar(len(todo), progress)
    try:
        _compute(todo, base, client, bar, on_cell)
    finally:
        bar.close()
        close()
    merged = merge_cells(kinds[0], {c.key: _read_cell(base, c) for c in cells})
    target = base / "grid.zarr"
    tmp = base / ".grid.zarr.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    merged.to_zarr(tmp, mode="w", consolidated=False)
    shutil.rmtree(target, ignore_errors=True)
    os.replace(tmp, target)
    return merged
