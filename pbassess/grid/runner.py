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

Faults (issue 23):

* one grid at a time per ``OUT``: an exclusive lock on ``OUT/.pbassess-grid.lock`` (a second
  ``pbassess grid`` on the same folder is refused in one line while the first runs);
* the merged store is written beside the old one (``OUT/.grid.zarr.*.tmp``) and swapped in by
  one atomic rename (``renameat2(RENAME_EXCHANGE)`` on Linux; elsewhere two renames, undone at
  the next start if a kill falls between them), so a kill at any point leaves a readable
  ``grid.zarr`` (the old or the new);
* temporary folders left by killed runs (``OUT/.grid.zarr.*.tmp``, ``OUT/cells/.<cell>.*.tmp``)
  are removed at the start, under the lock;
* only what pbassess wrote is ever deleted: every merged store carries the list of its files
  (attribute ``pbassess_written`` of ``grid.zarr/zarr.json``); a ``grid.zarr`` without it, or holding other files,
  is refused, not replaced, and so is a cell folder that is not a finished cell.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
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

    Parameters
    ----------
    cells : sequence of cells
    out : str or pathlib.Path
        The grid's output folder.

    Returns
    -------
    list of cells

    Examples
    --------
    >>> import tempfile
    >>> from pbassess.grid.cells import Cell
    >>> done_cells([Cell(dataset="d", target="least-accurate", strategy="ts", prior="uniform")], tempfile.mkdtemp())
    []
    """
    base = Path(out)
    return [c for c in cells if (_cell_path(base, c) / "zarr.json").exists() or (_cell_path(base, c) / ".zgroup").exists()]


#: The lock file of an output folder (held by the grid running on it).
LOCK_NAME = ".pbassess-grid.lock"
#: The attribute of a merged store listing the files pbassess wrote into it (its proof of ownership).
WRITTEN_NAME = "pbassess_written"
_STORE = "grid.zarr"


@contextlib.contextmanager
def grid_lock(out: Path) -> Iterator[None]:
    """Hold the exclusive lock of the output folder ``out``, or refuse in one line when another grid holds it.

    Examples
    --------
    >>> folder = Path(tempfile.mkdtemp())
    >>> with grid_lock(folder):
    ...     with grid_lock(folder):
    ...         pass
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: another pbassess grid is running on --out ... (it holds .../.pbassess-grid.lock): wait for it to finish or choose another --out
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - no advisory locks (Windows): run unguarded
        yield
        return
    fd = os.open(out / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConfigError(f"another pbassess grid is running on --out {out} (it holds {out / LOCK_NAME}): wait "
                              "for it to finish or choose another --out") from None
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _files(folder: Path) -> list[str]:
    """Every file below ``folder`` (relative POSIX paths, sorted)."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if not p.is_dir())


def _check_ours(store: Path) -> None:
    """Refuse (one line, nothing deleted) a merged store that pbassess did not write or that holds other files."""
    if not store.exists():
        return
    advice = "move it away or choose another --out; nothing was deleted"
    if not store.is_dir():
        raise ConfigError(f"{store} is not a grid store written by pbassess (it is a file): {advice}")
    try:
        written = set(json.loads((store / "zarr.json").read_text())["attributes"][WRITTEN_NAME])
    except (OSError, ValueError, KeyError, TypeError):
        raise ConfigError(f"{store} was not written by pbassess grid (its zarr.json has no {WRITTEN_NAME} "
                          f"attribute): {advice}") from None
    others = [f for f in _files(store) if f not in written]
    if others:
        raise ConfigError(f"{store} holds {len(others)} file(s) pbassess did not write (e.g. {others[0]}): {advice}")


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one atomic step (Linux ``renameat2(RENAME_EXCHANGE)``); False where it is not available."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):  # pragma: no cover - an old C library
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):  # a file system without the exchange
        return False
    raise OSError(code, os.strerror(code), str(b))


def _replace_store(new: Path, target: Path) -> Path | None:
    """Put the store ``new`` at ``target`` atomically; the old store's new place (to delete), or None."""
    if not target.exists():
        os.replace(new, target)
        return None
    if _exchange(new, target):
        return new  # the old store now sits where the new one was written
    # two renames: a kill between them leaves the old store at .grid.zarr.old.*.tmp, put back at the next start
    old = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{_STORE}.old.", suffix=".tmp")) / _STORE
    os.replace(target, old)
    os.replace(new, target)
    return old


def _recover_and_clean(base: Path) -> None:
    """At the start (under the lock): put back a store a kill left aside, remove temporaries of killed runs."""
    target = base / _STORE
    aside = sorted(base.glob(f".{_STORE}.old.*.tmp/{_STORE}"))
    if not target.exists() and aside:
        os.replace(aside[-1], target)
    for tmp in [*base.glob(f".{_STORE}.*.tmp"), *(base / "cells").glob(".*.tmp")]:
        if tmp.is_dir() and not tmp.is_symlink():
            shutil.rmtree(tmp, ignore_errors=True)


_ZARR_FILE = re.compile(r"zarr\.json|\.z(group|attrs|array|metadata)|[0-9]+(\.[0-9]+)*")


def _zarr_files_only(folder: Path) -> bool:
    """True when ``folder`` (a cell folder) holds only the metadata and chunk files of a Zarr store.

    Examples
    --------
    >>> folder = Path(tempfile.mkdtemp())
    >>> (folder / "c").mkdir(); _ = (folder / "c" / "0").write_bytes(b""); _ = (folder / "zarr.json").write_text("{}")
    >>> _zarr_files_only(folder)
    True
    >>> _ = (folder / "notes.txt").write_text("mine"); _zarr_files_only(folder)
    False
    """
    return folder.is_dir() and not folder.is_symlink() and all(
        _ZARR_FILE.fullmatch(p.name) for p in folder.rglob("*") if not p.is_dir())


def _write_cell(out: Path, cell: Any, ds: xr.Dataset) -> None:
    """Write one cell atomically: to a temporary folder, then renamed into place."""
    final = _cell_path(out, cell)
    final.parent.mkdir(parents=True, exist_ok=True)
    if final.exists() and not _zarr_files_only(final):  # a damaged cell is redone; anything else is kept
        raise ConfigError(f"{final} is in the way of a cell and holds files pbassess does not write: move it away "
                          "and run the grid again; nothing was deleted")
    tmp = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{cell.key}.", suffix=".tmp"))
    try:
        ds.to_zarr(tmp / "data.zarr", mode="w", consolidated=False)
        if final.exists():  # a damaged cell (e.g. its zarr.json lost): moved aside into the temporary folder
            os.replace(final, tmp / "damaged.zarr")
        os.replace(tmp / "data.zarr", final)
        from pbassess._atomic import fsync_directory

        fsync_directory(final.parent)
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

    Parameters
    ----------
    scheduler : str or None
        ``"process"`` (in this process), ``"local"`` or ``"local:N"`` (a LocalCluster of N
        workers), a scheduler address (``tcp://host:8786``), or ``None``.

    Returns
    -------
    (client, close)
        The client (``None``: run in process) and a function closing it.

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
    base = _out_folder(out)
    with grid_lock(base):
        _recover_and_clean(base)
        _check_ours(base / _STORE)  # before any work: a store pbassess did not write is refused, not replaced
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
        _write_store(merged, base)
    return merged


def _out_folder(out: str | Path) -> Path:
    base = Path(out)
    if base.exists() and not base.is_dir():
        raise ConfigError(f"--out {base} is a file, not a folder: give a new or an existing folder")
    try:
        base.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        from pbassess._atomic import os_failure

        raise ConfigError(f"--out {base}: could not create the folder: {os_failure(exc)}") from None
    return base


def _write_store(merged: xr.Dataset, base: Path) -> None:
    """Write the merged store beside the old one, list its files inside it, and swap it in atomically."""
    from pbassess._atomic import atomic_write_bytes, fsync_directory

    target = base / _STORE
    work = Path(tempfile.mkdtemp(dir=base, prefix=f".{_STORE}.", suffix=".tmp"))
    try:
        new = work / _STORE
        merged.to_zarr(new, mode="w", consolidated=False, zarr_format=3)
        meta = json.loads((new / "zarr.json").read_text())
        meta.setdefault("attributes", {})[WRITTEN_NAME] = _files(new)
        atomic_write_bytes(new / "zarr.json", json.dumps(meta, indent=2))
        _check_ours(target)  # again just before replacing it
        old = _replace_store(new, target)
        fsync_directory(base)
        if old is not None:
            shutil.rmtree(old.parent if old.parent != work else old, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
