"""Estimation cells: interval coverage and width of the estimation methods on one pool and label count.

A table of kind ``estimation`` (``benchmarks/grids/estimation_smoke.toml``)::

    [[experiment]]
    kind = "estimation"
    datasets = ["digits-logreg"]          # registered names or files, every item labeled
    subsets = ["year=2018"]               # optional: one group value ("column=value") per pool
    model = "score_LR"                    # optional: the model column of a multi-model set
    labels = [100, 200]                   # labels drawn per run
    seeds = [0]
    methods = ["classical", "ppi", "bayes", "active"]   # default: all
    runs = 100

A cell runs :func:`pbassess.estimation.experiment.pool_intervals` (every run draws from its own
seeded stream, so a cell gives the same intervals in any process); the merged Dataset holds
each method's coverage, mean width and effective labels (:func:`~pbassess.estimation.experiment.interval_summary`).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import xarray as xr

from pbassess.estimation.experiment import METHODS, PoolSpec, check_methods, interval_summary
from pbassess.grid.tables import expand_table, positive_int, settings_hash

__all__ = ["EstimationCell", "estimation_cells", "estimation_rows", "merge_estimation_cells", "run_estimation_cell"]

_LIST_KEYS = {"datasets": "dataset", "subsets": "subset", "labels": "labels", "seeds": "seed"}
_SCALAR_KEYS = {"model": str, "methods": tuple, "runs": int}
_DEFAULTS = {"subsets": [""], "seeds": [0]}


@dataclass(frozen=True)
class EstimationCell:
    """``runs`` label draws of ``labels`` items from one pool, intervals of each method.

    Parameters
    ----------
    dataset : str
        A registered prediction set.
    labels : int
        Labels drawn in each run.
    model : str, optional
        The model column of a multi-model set.
    subset : str, optional
        ``"column=value"``: one group of the pool.
    methods : tuple of str
        Estimation methods compared.
    runs : int
        Replicate label draws.
    seed : int
    kind : str
        Always ``"estimation"``.

    Examples
    --------
    >>> c = EstimationCell("digits-logreg", labels=100, runs=5)
    >>> c.key.split("__")[:4], c.pool.name
    (['estimation', 'digits-logreg', 'n100', 's0'], 'digits-logreg')
    """

    dataset: str
    labels: int
    model: str | None = None
    subset: str | None = None
    methods: tuple[str, ...] = METHODS
    runs: int = 100
    seed: int = 0
    kind: str = "estimation"

    def __post_init__(self) -> None:
        # one spelling per setting, so that the same cell built in code or read from TOML has one key
        object.__setattr__(self, "methods", tuple(str(m) for m in self.methods))
        object.__setattr__(self, "model", self.model or None)
        object.__setattr__(self, "subset", self.subset or None)

    @property
    def pool(self) -> PoolSpec:
        """The pool the cell draws labels from."""
        return PoolSpec(self.dataset, self.model, self.subset)

    @property
    def key(self) -> str:
        """A file-name-safe identifier: kind, pool, labels, seed and a hash of every setting."""
        parts = [self.kind, self.dataset, self.model, self.subset, f"n{self.labels}", f"s{self.seed}",
                 settings_hash(self.settings())]
        return "__".join(str(p).replace("/", "_").replace(" ", "_").replace("=", "-") for p in parts if p)

    def settings(self) -> dict[str, Any]:
        """The cell as a JSON-able dict (stored beside its result)."""
        out = asdict(self)
        out["methods"] = list(self.methods)
        return out


def estimation_cells(table: dict[str, Any], index: int) -> list[EstimationCell]:
    """The cells of one ``[[experiment]]`` table of kind ``estimation`` (see the module docstring).

    Examples
    --------
    >>> [c.labels for c in estimation_cells({"datasets": "digits-logreg", "labels": [50, 100]}, 1)]
    [50, 100]
    """
    cells = []
    for s in expand_table(table, index, _LIST_KEYS, _SCALAR_KEYS, _DEFAULTS, ("datasets", "labels")):
        cells.append(EstimationCell(
            dataset=str(s["dataset"]), labels=positive_int(s["labels"], "labels", index),
            model=s.get("model") or None, subset=str(s["subset"]) or None,
            methods=check_methods(s.get("methods", METHODS)), runs=positive_int(s.get("runs", 100), "runs", index),
            seed=positive_int(s["seed"], "seeds", index, allow_zero=True)))
    return cells


def run_estimation_cell(cell: EstimationCell) -> xr.Dataset:
    """Compute one estimation cell: ``lower`` and ``upper`` (method, run) and the pool's truth.

    Examples
    --------
    >>> ds = run_estimation_cell(EstimationCell("digits-logreg", labels=100, methods=("classical",), runs=4))
    >>> dict(ds["lower"].sizes), ds.attrs["n_items"]
    ({'method': 1, 'run': 4}, 899)
    """
    from pbassess.estimation.experiment import load_pool, pool_intervals

    start = time.perf_counter()
    conf, correct = load_pool(cell.pool)
    intervals = pool_intervals(conf, correct, cell.labels, cell.runs, cell.seed, cell.methods)
    bounds = np.stack([intervals[m] for m in intervals])  # (method, run, 2)
    return xr.Dataset(
        {"lower": (("method", "run"), bounds[..., 0]), "upper": (("method", "run"), bounds[..., 1])},
        coords={"method": list(intervals)},
        attrs={"cell": json.dumps(cell.settings()), "pool": cell.pool.name, "n_items": int(conf.size),
               "truth": float(correct.mean()), "seconds": float(time.perf_counter() - start)},
    )


def merge_estimation_cells(results: dict[str, xr.Dataset]) -> xr.Dataset:
    """Merge finished estimation cells: ``width``, ``coverage``, ``effective_labels`` (cell, method).

    Also ``truth`` (the pool's accuracy), ``n_items`` and ``seconds`` per cell; the cell's settings
    (dataset, model, subset, pool, labels, seed, runs) are coordinates on ``cell``. A method a cell
    did not run is NaN. Select a method with ``ds.sel({"method": "ppi"})`` (``sel(method=...)``
    is xarray's own keyword).

    Parameters
    ----------
    results : dict of str to xarray.Dataset
        Finished cells by key.

    Returns
    -------
    xarray.Dataset
        With a ``cell`` dimension.

    Examples
    --------
    >>> c = EstimationCell("digits-logreg", labels=100, methods=("classical", "ppi"), runs=4)
    >>> m = merge_estimation_cells({c.key: run_estimation_cell(c)})
    >>> dict(m["width"].sizes), float(m["effective_labels"].sel({"method": "classical"})[0])
    ({'cell': 1, 'method': 4}, 100.0)
    """
    keys = list(results)
    stats = ("width", "coverage", "effective_labels")
    values = {s: np.full((len(keys), len(METHODS)), np.nan) for s in stats}
    factors: dict[str, list[Any]] = {k: [] for k in ("kind", "dataset", "model", "subset", "pool", "labels", "seed",
                                                     "runs")}
    per_cell: dict[str, list[float]] = {"truth": [], "n_items": [], "seconds": []}
    for i, key in enumerate(keys):
        ds = results[key]
        settings = json.loads(ds.attrs["cell"])
        intervals = {str(m): np.column_stack([ds["lower"].values[j], ds["upper"].values[j]])
                     for j, m in enumerate(ds["method"].values)}
        summary = interval_summary(intervals, float(ds.attrs["truth"]), int(settings["labels"]))
        for j, method in enumerate(METHODS):
            for s in stats:
                if method in summary:
                    values[s][i, j] = summary[method][s]
        for name in factors:
            value = ds.attrs["pool"] if name == "pool" else settings[name]
            factors[name].append("" if value is None else value)
        for name in per_cell:
            per_cell[name].append(float(ds.attrs[name]))
    coords: dict[str, Any] = {"cell": keys, "method": list(METHODS)}
    coords.update({name: ("cell", np.asarray(v)) for name, v in factors.items()})
    data = {s: (("cell", "method"), values[s]) for s in stats}
    data.update({name: ("cell", np.asarray(v)) for name, v in per_cell.items()})
    return xr.Dataset(data, coords=coords)


def estimation_cost(cell: EstimationCell, sizes: dict[str, int]) -> float:
    """A rough cost (runs x pool items: every run touches the whole pool) to start long cells first."""
    return float(cell.runs) * sizes.get(cell.dataset, 10_000) * (1 + ("bayes" in cell.methods))


def estimation_rows(merged: xr.Dataset) -> list[dict[str, Any]]:
    """One JSON-able dict per cell and method of a merged estimation grid (methods a cell ran).

    Examples
    --------
    >>> c = EstimationCell("digits-logreg", labels=100, methods=("classical",), runs=4)
    >>> [(r["method"], r["effective_labels"]) for r in estimation_rows(merge_estimation_cells({c.key: run_estimation_cell(c)}))]
    [('classical', 100.0)]
    """
    rows = []
    for i, key in enumerate(merged["cell"].values):
        sel = merged.isel(cell=i)
        for j, method in enumerate(merged["method"].values):
            if np.isnan(sel["width"].values[j]):
                continue
            rows.append({"key": str(key), "pool": str(sel["pool"].values), "n_items": int(sel["n_items"].values),
                         "truth": float(sel["truth"].values), "labels": int(sel["labels"].values),
                         "seed": int(sel["seed"].values), "runs": int(sel["runs"].values), "method": str(method),
                         **{s: float(sel[s].values[j]) for s in ("width", "coverage", "effective_labels")},
                         "seconds": float(sel["seconds"].values)})
    return rows
