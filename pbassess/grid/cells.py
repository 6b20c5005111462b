"""Computing one active-assessment grid cell, and summarising finished cells into one Dataset.

:func:`run_active_cell` is what a worker runs: it loads the cell's data set (once per process), runs
the active-assessment simulation for the cell's single strategy and prior with the cell's seed,
and returns a small :class:`xarray.Dataset` (dims ``run``, ``step``). Because every run derives
from the seed and its run index alone (:func:`pbassess.active.engine.run_engine`), a cell gives
the same numbers whether it runs alone, beside other cells, in this process or on a worker.
"""

from __future__ import annotations

import functools
import json
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import xarray as xr

from pbassess.constants import DEFAULT_BINS, DEFAULT_PSEUDOCOUNT
from pbassess.grid.tables import expand_table, positive_int, settings_hash

__all__ = ["FRACTION_GRID", "Cell", "active_cells", "active_rows", "load_dataset", "run_active_cell",
           "summarise_cells"]

#: Pool fractions at which merged grids report each cell's run-averaged MRR curve.
FRACTION_GRID: np.ndarray = np.linspace(0.0, 1.0, 101)


_LIST_KEYS = {"datasets": "dataset", "targets": "target", "top_m": "top_m", "strategies": "strategy",
              "priors": "prior", "seeds": "seed"}
_SCALAR_KEYS = {"runs": int, "log_every": int, "pseudocount": float, "budget": int, "bins": int,
                "batch_size": int}
_ACTIVE_DEFAULTS = {"targets": ["least-accurate"], "top_m": [1], "priors": ["uniform"], "seeds": [0]}



@dataclass(frozen=True)
class Cell:
    """One independent unit of a grid of kind ``active``: one strategy and prior on one data set.

    Parameters
    ----------
    dataset : str
        A registered prediction set.
    target : str
        The active-assessment target (``least-accurate``, ...).
    strategy, prior : str
        The strategy and prior of the runs.
    kind : str
        Always ``"active"``.
    top_m : int
        Size of the target set.
    seed : int
    runs : int
        Replicate runs.
    log_every : int
        Labels between logged steps.
    pseudocount : float
    budget : int, optional
        Labels per run (default the whole pool).
    bins : int
        Confidence bins (calibration targets).
    batch_size : int
        Labels chosen per step.
    extra : dict
        Further options (not part of the cell's key).

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


def active_cells(table: dict[str, Any], index: int) -> list[Cell]:
    """The active-assessment cells of one ``[[experiment]]`` table (see :mod:`pbassess.grid.config`).

    Examples
    --------
    >>> cells = active_cells({"datasets": "digits-logreg", "strategies": ["ts", "random-item"], "runs": 5}, 1)
    >>> [(c.strategy, c.runs) for c in cells]
    [('ts', 5), ('random-item', 5)]
    """
    cells = []
    for settings in expand_table(table, index, _LIST_KEYS, _SCALAR_KEYS, _ACTIVE_DEFAULTS, ("datasets", "strategies")):
        settings["top_m"] = positive_int(settings["top_m"], "top_m", index)
        settings["seed"] = positive_int(settings["seed"], "seeds", index, allow_zero=True)
        cells.append(Cell(**{k: (str(v) if k in ("dataset", "target", "strategy", "prior") else v)
                             for k, v in settings.items()}))
    return cells



@functools.lru_cache(maxsize=8)
def load_dataset(dataset: str):
    """The cell's prediction set: a registered name or a file path (cached per process).

    Examples
    --------
    >>> load_dataset("digits-logreg").n_classes
    10
    """
    from pathlib import Path

    from pbassess.data import load_data, read_predictions

    if Path(dataset).exists():
        return read_predictions(dataset)
    return load_data(dataset)


def _as_dataset(result: Any) -> xr.Dataset:
    """The simulation's Dataset, whether ``simulate`` returned it or a result object around it."""
    if isinstance(result, xr.Dataset):
        return result
    for attr in ("dataset", "ds", "data"):
        value = getattr(result, attr, None)
        if isinstance(value, xr.Dataset):
            return value
    raise TypeError(f"cannot read a Dataset from {type(result).__name__}")


def run_active_cell(cell: Cell) -> xr.Dataset:
    """Compute one cell: R runs of one strategy with one prior on one data set.

    Parameters
    ----------
    cell : Cell

    Returns
    -------
    xarray.Dataset
        ``mrr``, ``success``, ``error`` with dims ``(run, step)``, coordinates ``labels`` and
        ``fraction`` on ``step``, and attributes ``cell`` (the settings as JSON), ``n_items``,
        ``seconds`` (wall time of the cell including data loading) and ``true_top``.

    Examples
    --------
    >>> ds = run_active_cell(Cell(dataset="digits-logreg", target="least-accurate", strategy="ts",
    ...                    prior="uniform", runs=3, log_every=100))
    >>> dict(ds["mrr"].sizes)
    {'run': 3, 'step': 8}
    """
    from pbassess.active.experiment import simulate
    from pbassess.active.strategies import StrategyOptions

    start = time.perf_counter()
    pred = load_dataset(cell.dataset)
    result = simulate(pred, cell.target, [cell.strategy], [cell.prior], pseudocount=cell.pseudocount,
                      top_m=cell.top_m, runs=cell.runs, log_every=cell.log_every, budget=cell.budget,
                      seed=cell.seed, bins=cell.bins, options=StrategyOptions(batch_size=cell.batch_size))
    full = _as_dataset(result)
    ds = full[["mrr", "success", "error"]].isel(strategy=0, prior=0, drop=True)
    ds = ds.drop_vars([v for v in ("class",) if v in ds.coords])
    ds.attrs = {
        "cell": json.dumps(cell.settings()),
        "n_items": int(full.attrs["n_items"]),
        "true_top": str(full.attrs.get("true_top", "")),
        "seconds": float(time.perf_counter() - start),
        "run_seconds": float(full["seconds"].values.ravel()[0]),
    }
    return ds


def _curve_on_grid(mrr: np.ndarray, fraction: np.ndarray) -> np.ndarray:
    """Run-averaged MRR at the fractions of :data:`FRACTION_GRID` (step-wise: last log point at or below)."""
    mean = mrr.mean(axis=0)
    idx = np.searchsorted(fraction, FRACTION_GRID + 1e-12, side="right") - 1
    return np.where(idx >= 0, mean[np.clip(idx, 0, None)], np.nan)


def summarise_cells(results: dict[str, xr.Dataset], threshold: float = 0.99) -> xr.Dataset:
    """Merge finished cells into one Dataset with a ``cell`` dimension.

    Variables: ``labels_to_mrr`` (fraction of the pool at which the run-averaged MRR first
    reaches ``threshold``; NaN if never) with its 90% confidence interval over runs
    (:func:`pbassess.active.evaluation.labels_to_mrr_interval`)
    (``labels_to_mrr_low``/``_high``), ``final_mrr``, ``seconds`` and ``mrr_curve`` (``cell``,
    ``fraction``). Each factor of the cell (dataset, target, top_m, strategy, prior, seed, runs)
    is a coordinate on ``cell``, so ``ds.where(ds.strategy == "ts", drop=True)`` selects.

    Parameters
    ----------
    results : dict of str to xarray.Dataset
        Finished active cells by key.
    threshold : float
        The MRR to reach.

    Returns
    -------
    xarray.Dataset
        With a ``cell`` dimension (see above).

    Examples
    --------
    >>> c = Cell(dataset="digits-logreg", target="least-accurate", strategy="ts", prior="uniform", runs=2)
    >>> s = summarise_cells({c.key: run_active_cell(c)})
    >>> s.sizes["cell"], str(s["strategy"].values[0])
    (1, 'ts')
    """
    from pbassess.active.evaluation import labels_to_mrr, labels_to_mrr_interval

    keys = list(results)
    rows: dict[str, list[Any]] = {name: [] for name in ("labels_to_mrr", "low", "high", "final", "seconds", "curve")}
    factors: dict[str, list[Any]] = {name: [] for name in ("kind", "dataset", "target", "top_m", "strategy", "prior",
                                                           "seed", "runs")}
    for key in keys:
        ds = results[key]
        settings = json.loads(ds.attrs["cell"])
        mrr = np.asarray(ds["mrr"].values, dtype=float)
        labels = np.asarray(ds["labels"].values)
        n_items = int(ds.attrs["n_items"])
        rows["labels_to_mrr"].append(labels_to_mrr(mrr, labels, n_items, threshold))
        low, high = labels_to_mrr_interval(mrr, labels, n_items, threshold, n_boot=200)
        rows["low"].append(low)
        rows["high"].append(high)
        rows["final"].append(float(mrr[:, -1].mean()))
        rows["seconds"].append(float(ds.attrs["seconds"]))
        rows["curve"].append(_curve_on_grid(mrr, labels / n_items))
        for name in factors:
            factors[name].append(settings[name])
    coords: dict[str, Any] = {"cell": keys, "fraction": FRACTION_GRID}
    coords.update({name: ("cell", np.asarray(values)) for name, values in factors.items()})
    return xr.Dataset(
        {
            "labels_to_mrr": ("cell", np.asarray(rows["labels_to_mrr"], dtype=float)),
            "labels_to_mrr_low": ("cell", np.asarray(rows["low"], dtype=float)),
            "labels_to_mrr_high": ("cell", np.asarray(rows["high"], dtype=float)),
            "final_mrr": ("cell", np.asarray(rows["final"], dtype=float)),
            "seconds": ("cell", np.asarray(rows["seconds"], dtype=float)),
            "mrr_curve": (("cell", "fraction"), np.asarray(rows["curve"], dtype=float).reshape(len(keys), -1)),
        },
        coords=coords,
        attrs={"threshold": threshold},
    )


def active_rows(merged: xr.Dataset) -> list[dict[str, Any]]:
    """One JSON-able dict per cell of a merged active grid (what ``pbassess grid --json`` prints).

    Examples
    --------
    >>> c = Cell(dataset="digits-logreg", target="least-accurate", strategy="ts", prior="uniform", runs=2)
    >>> row = active_rows(summarise_cells({c.key: run_active_cell(c)}))[0]
    >>> row["strategy"], row["final_mrr"]
    ('ts', 1.0)
    """
    rows = []
    for i, key in enumerate(merged["cell"].values):
        sel = merged.isel(cell=i)
        rows.append({
            "key": str(key), "dataset": str(sel["dataset"].values), "target": str(sel["target"].values),
            "top_m": int(sel["top_m"].values), "strategy": str(sel["strategy"].values),
            "prior": str(sel["prior"].values), "seed": int(sel["seed"].values), "runs": int(sel["runs"].values),
            "labels_to_mrr": float(sel["labels_to_mrr"].values),
            "labels_to_mrr_interval": [float(sel["labels_to_mrr_low"].values), float(sel["labels_to_mrr_high"].values)],
            "final_mrr": float(sel["final_mrr"].values), "seconds": float(sel["seconds"].values),
        })
    return rows
