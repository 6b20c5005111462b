"""Surface cells: one accuracy-surface estimator fitted on a random label subset, scored against the truth.

A table of kind ``surface`` (``benchmarks/grids/surface_smoke.toml``)::

    [[experiment]]
    kind = "surface"
    datasets = ["acs-employment"]          # registered names or files with attribute columns
    attributes = ["SEX", "DIS", "NATIVITY"]
    estimators = ["confidence", "beta-i", "additive", "additive+conf", "additive(advi)"]
    budgets = [500, 2000]                  # labels kept (the others are hidden)
    seeds = [0]
    draws = 500                            # NUTS / ADVI settings
    tune = 500
    chains = 2
    min_support = 50                       # arms scored: at least this many pool items

Estimator names: one of :data:`pbassess.surface.ESTIMATORS` or ``confidence`` (the label-free
baseline: each arm's mean confidence), optionally followed by ``+conf`` (the model's
confidence as a covariate) and ``(nuts)`` / ``(advi)`` / ``(conjugate)`` (the inference) - the
names ``benchmarks/surface.py`` prints. The truth is each arm's accuracy from all labels; a
cell keeps ``budget`` random labels (:func:`pbassess.surface.hide_labels` with the cell's seed),
fits the estimator with the same seed and scores it (:func:`pbassess.surface.evaluate.surface_errors`).
"""

from __future__ import annotations

import functools
import json
import time
import warnings
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import xarray as xr

from pbassess.errors import ConfigError
from pbassess.grid.tables import expand_table, positive_int, settings_hash
from pbassess.pymc_models.surface import LOOSE_ANCHORED_OPTIONS

__all__ = ["LOOSE_ANCHORED_OPTIONS", "SYNTHETIC", "SurfaceCell", "merge_surface_cells", "parse_estimator",
           "run_surface_cell", "surface_cells", "surface_rows"]


_LIST_KEYS = {"datasets": "dataset", "estimators": "estimator", "budgets": "budget", "seeds": "seed"}
_SCALAR_KEYS = {"attributes": tuple, "draws": int, "tune": int, "chains": int, "min_support": float}
#: Data set name of a synthetic pool with a known surface: ``synthetic-surface:N:K:SEED``.
SYNTHETIC = "synthetic-surface"
_ERRORS = ("macro_mse", "macro_mse_corrected", "worst_mse", "worst_mse_corrected", "micro_mse",
           "micro_mse_corrected", "rare_mse", "rare_mse_corrected")


def parse_estimator(name: str) -> tuple[str | None, dict[str, Any]]:
    """``(estimator, options)`` of an estimator name such as ``additive+conf`` or ``additive(advi)``.

    ``confidence`` (the label-free baseline) gives ``(None, {})``. ``+conf`` and ``+anchor`` anchor the
    estimator at the calibrated confidence (``covariate="confidence"``; ``anchored`` is ``additive+conf``),
    ``+linconf`` takes the mean confidence as a linear covariate (``covariate="confidence-linear"``);
    ``anchored-indicator`` is the anchored model with its residual coded by indicators
    (``model_options={"coding": "indicator"}``); ``anchored-loose`` that design with residual scales twice
    the defaults (``main_scale=0.1, interaction_scale=0.05``); ``anchored+stack`` (and
    ``anchored-loose+stack``) the anchored model stacked with the label-free confidence
    (``stack_confidence=True``, :func:`pbassess.surface.fit_surface`'s default for the anchored model on a
    pool); without ``+stack`` the anchored rows are the anchored posterior alone (``stack_confidence=False``),
    so that a table shows both.

    Examples
    --------
    >>> parse_estimator("additive+conf(advi)"), parse_estimator("beta-i"), parse_estimator("confidence")
    (('additive', {'covariate': 'confidence', 'inference': 'advi', 'stack_confidence': False}), ('beta-i', {}), (None, {}))
    >>> parse_estimator("anchored"), parse_estimator("additive+linconf")
    (('additive', {'covariate': 'confidence', 'stack_confidence': False}), ('additive', {'covariate': 'confidence-linear'}))
    >>> parse_estimator("anchored-indicator")
    ('additive', {'covariate': 'confidence', 'model_options': {'coding': 'indicator'}, 'stack_confidence': False})
    >>> parse_estimator("anchored+stack")
    ('additive', {'covariate': 'confidence', 'stack_confidence': True})
    >>> parse_estimator("anchored-loose+stack")[1]["model_options"] == LOOSE_ANCHORED_OPTIONS
    True
    """
    from pbassess.surface.fit import ESTIMATORS, INFERENCES

    base, options = name, {}
    if base.endswith(")") and "(" in base:
        base, inference = base[:-1].split("(", 1)
        if inference not in INFERENCES:
            raise ConfigError(f"estimator {name!r}: unknown inference {inference!r} (choose from {', '.join(INFERENCES)})")
        options["inference"] = inference
    if base.startswith("anchored") and base.endswith("+stack"):  # stacked with the label-free confidence
        base, options = base.removesuffix("+stack"), {"stack_confidence": True, **options}
    if base == "anchored-indicator":  # the anchored model with a coefficient per level and per pair cell
        base, options = "additive+conf", {"model_options": {"coding": "indicator"}, **options}
    if base == "anchored-loose":  # the indicator design with residual scales twice the defaults
        base, options = "additive+conf", {"model_options": dict(LOOSE_ANCHORED_OPTIONS), **options}
    if base == "anchored":
        base = "additive+conf"
    for suffix, covariate in (("+conf", "confidence"), ("+anchor", "confidence"), ("+linconf", "confidence-linear")):
        if base.endswith(suffix):
            base = base.removesuffix(suffix)
            options = {"covariate": covariate, **options}
            break
    if base == "confidence" and not options:
        return None, {}
    if base == "additive" and options.get("covariate") == "confidence":  # the anchored posterior alone unless +stack
        options = {**options, "stack_confidence": options.get("stack_confidence", False)}
    if base not in ESTIMATORS:
        raise ConfigError(f"unknown surface estimator {name!r} (choose from confidence, {', '.join(ESTIMATORS)}, "
                          "anchored, anchored-indicator or anchored-loose, each optionally with +stack; any with +conf, "
                          "+anchor or +linconf and (nuts|advi|conjugate))")
    return base, options


@dataclass(frozen=True)
class SurfaceCell:
    """One estimator fitted on ``budget`` random labels of a pool (see the module docstring).

    Parameters
    ----------
    dataset : str
        A registered prediction set.
    attributes : tuple of str
        The attribute columns defining the arms.
    estimator : str
        A surface estimator (``+conf``: with the confidence covariate).
    budget : int
        Labels kept (the others are hidden).
    seed : int
    draws, tune, chains : int
        NUTS settings.
    min_support : float
        Arms scored: at least this many pool items.
    kind : str
        Always ``"surface"``.

    Examples
    --------
    >>> c = SurfaceCell("acs-employment", ("SEX", "DIS"), "additive+conf", budget=500)
    >>> c.key.split("__")[:5]
    ['surface', 'acs-employment', 'SEX-DIS', 'additive+conf', 'b500']
    """

    dataset: str
    attributes: tuple[str, ...]
    estimator: str
    budget: int
    seed: int = 0
    draws: int = 500
    tune: int = 500
    chains: int = 2
    min_support: float = 50.0
    kind: str = "surface"

    def __post_init__(self) -> None:
        # one spelling per setting, so that the same cell built in code or read from TOML has one key
        object.__setattr__(self, "attributes", tuple(str(a) for a in self.attributes))
        object.__setattr__(self, "min_support", float(self.min_support))

    @property
    def key(self) -> str:
        """A file-name-safe identifier: kind, data set, attributes, estimator, budget, seed, settings hash."""
        parts = [self.kind, self.dataset, "-".join(self.attributes), self.estimator, f"b{self.budget}",
                 f"s{self.seed}", settings_hash(self.settings())]
        return "__".join(str(p).replace("/", "_").replace(" ", "_").replace("(", "_").replace(")", "").replace(":", "-")
                         for p in parts)

    def settings(self) -> dict[str, Any]:
        """The cell as a JSON-able dict (stored beside its result)."""
        out = asdict(self)
        out["attributes"] = list(self.attributes)
        return out


def surface_cells(table: dict[str, Any], index: int) -> list[SurfaceCell]:
    """The cells of one ``[[experiment]]`` table of kind ``surface`` (see the module docstring).

    Examples
    --------
    >>> t = {"datasets": "acs-employment", "attributes": ["SEX"], "estimators": ["beta-i", "additive"],
    ...      "budgets": 500, "chains": 1}
    >>> [(c.estimator, c.chains) for c in surface_cells(t, 1)]
    [('beta-i', 1), ('additive', 1)]
    """
    cells = []
    for s in expand_table(table, index, _LIST_KEYS, _SCALAR_KEYS, {"seeds": [0]},
                          ("datasets", "attributes", "estimators", "budgets")):
        parse_estimator(str(s["estimator"]))
        _synthetic_sizes(str(s["dataset"]))  # a synthetic pool too large for memory is refused before any cell runs
        cells.append(SurfaceCell(
            dataset=str(s["dataset"]), attributes=s["attributes"], estimator=str(s["estimator"]),
            budget=positive_int(s["budget"], "budgets", index), seed=positive_int(s["seed"], "seeds", index, True),
            **{k: positive_int(s[k], k, index) for k in ("draws", "tune", "chains") if k in s},
            **({"min_support": s["min_support"]} if "min_support" in s else {})))
    return cells


def _synthetic_sizes(dataset: str) -> tuple[int, int, int] | None:
    """``(N, K, SEED)`` of ``synthetic-surface:N:K:SEED`` (None for another data set), checked to fit in memory.

    Examples
    --------
    >>> _synthetic_sizes("synthetic-surface:2000:3:0"), _synthetic_sizes("acs-employment")
    ((2000, 3, 0), None)
    >>> _synthetic_sizes("synthetic-surface:100000000:12:0")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: data set 'synthetic-surface:100000000:12:0' (100,000,000 items, 12 attributes) needs about ... GiB (limit ...): use fewer items N ...
    """
    if not (dataset.startswith(SYNTHETIC + ":") or dataset == SYNTHETIC):
        return None
    from pbassess.inference.memory import check_memory

    parts = dataset.split(":")[1:]
    try:
        if len(parts) > 3:
            raise ValueError
        n_items, n_attributes, seed = (int(x) for x in [*parts, *["20000", "8", "0"][len(parts):]])
    except ValueError:
        raise ConfigError(f"data set {dataset!r}: expected {SYNTHETIC}:N:K:SEED with integers") from None
    if n_items < 1 or n_attributes < 1 or n_attributes > 40:
        raise ConfigError(f"data set {dataset!r}: N must be at least 1 and K between 1 and 40")
    # per item: K latent normals, K int64 attributes and their group copies, ~15 float columns, an id string;
    # per arm (2^K): its attribute values and accuracy
    need = n_items * (24.0 * n_attributes + 200.0) + (2.0**n_attributes) * (n_attributes + 4) * 8.0
    check_memory(need, f"data set {dataset!r} ({n_items:,} items, {n_attributes} attributes)",
                 f"use fewer items N or attributes K in {SYNTHETIC}:N:K:SEED")
    return n_items, n_attributes, seed


@functools.lru_cache(maxsize=4)
def _pool(dataset: str):
    """A registered data set, a file, or ``synthetic-surface:N:K:SEED`` (N items, K binary attributes a0..)."""
    sizes = _synthetic_sizes(dataset)
    if sizes is not None:
        from pbassess.surface.synthetic import synthetic_surface

        n_items, n_attributes, seed = sizes
        return synthetic_surface(n_items, n_attributes, seed=seed).preds
    from pbassess.grid.cells import load_dataset

    return load_dataset(dataset)


@functools.lru_cache(maxsize=4)
def _full_arms(dataset: str, attributes: tuple[str, ...]):
    from pbassess.surface import count_arms

    return count_arms(_pool(dataset), attributes)


def run_surface_cell(cell: SurfaceCell) -> xr.Dataset:
    """Compute one surface cell: the errors of the estimate, its fit time and MCMC diagnostics.

    Returns
    -------
    xarray.Dataset
        ``mean`` (the estimate), ``labels`` (kept labels) and ``pool`` (pool items) per ``arm``;
        attributes ``cell`` (settings as JSON), the errors of
        :func:`~pbassess.surface.evaluate.surface_errors`, ``seconds`` (the fit), ``max_rhat``
        (NaN without MCMC) and ``divergences``.

    Examples
    --------
    >>> ds = run_surface_cell(SurfaceCell("synthetic-surface:3000:4:0", ("a0", "a1", "a2", "a3"), "beta-i",
    ...                                   budget=300, min_support=20))
    >>> ds.sizes["arm"], bool(0 < ds.attrs["macro_mse"] < 0.05), ds.attrs["divergences"]
    (15, True, 0)
    """
    from pbassess.surface import count_arms, fit_surface, hide_labels
    from pbassess.surface.evaluate import surface_errors, truth_from_pool

    preds = _pool(cell.dataset)
    full = _full_arms(cell.dataset, cell.attributes)
    truth = truth_from_pool(full)
    arms = count_arms(hide_labels(preds, cell.budget, seed=cell.seed), cell.attributes)
    estimator, options = parse_estimator(cell.estimator)
    start = time.perf_counter()
    diag: dict[str, Any] = {}
    if estimator is None:
        mean = arms.confidence
    else:
        sample_kwargs = {"draws": cell.draws, "tune": cell.tune, "chains": cell.chains}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = fit_surface(arms, estimator=estimator, seed=cell.seed, sample_kwargs=sample_kwargs, **options)
        mean, diag = fit.mean, fit.diagnostics or {}
    seconds = time.perf_counter() - start
    errors = surface_errors(mean, truth, full.n, min_support=cell.min_support)
    rhat = diag.get("max_rhat")
    return xr.Dataset(
        {"mean": ("arm", np.asarray(mean, float)), "labels": ("arm", np.asarray(arms.n, float)),
         "pool": ("arm", np.asarray(full.pool_n, float))},
        attrs={"cell": json.dumps(cell.settings()), **{k: float(errors[k]) for k in _ERRORS},
               "n_arms_scored": int(errors["n_arms_scored"]), "seconds": float(seconds),
               "max_rhat": float("nan") if rhat is None else float(rhat),
               "divergences": int(diag.get("divergences") or 0)},
    )


def merge_surface_cells(results: dict[str, xr.Dataset]) -> xr.Dataset:
    """Merge finished surface cells into one Dataset with a ``cell`` dimension.

    Per cell: the errors (``macro_mse`` ... ``rare_mse_corrected``), ``n_arms_scored``,
    ``seconds``, ``max_rhat``, ``divergences``; per cell and arm: ``arm_mean``, ``arm_labels``,
    ``arm_pool`` (NaN-padded to the largest arm count when cells differ in their arms). The
    settings (dataset, attributes joined by ``,``, estimator, budget, seed, draws, tune, chains)
    are coordinates on ``cell``.

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
    >>> cells = [SurfaceCell("synthetic-surface:2000:3:0", ("a0", "a1", "a2"), e, budget=200, min_support=10)
    ...          for e in ("confidence", "beta-i")]
    >>> m = merge_surface_cells({c.key: run_surface_cell(c) for c in cells})
    >>> m["estimator"].values.tolist(), m["arm_mean"].shape
    (['confidence', 'beta-i'], (2, 8))
    """
    keys = list(results)
    n_arms = max(results[k].sizes["arm"] for k in keys)
    arm_vars = {"arm_mean": "mean", "arm_labels": "labels", "arm_pool": "pool"}
    arrays = {name: np.full((len(keys), n_arms), np.nan) for name in arm_vars}
    scalars: dict[str, list[float]] = {k: [] for k in (*_ERRORS, "n_arms_scored", "seconds", "max_rhat", "divergences")}
    factors: dict[str, list[Any]] = {k: [] for k in ("kind", "dataset", "attributes", "estimator", "budget", "seed",
                                                     "draws", "tune", "chains")}
    for i, key in enumerate(keys):
        ds = results[key]
        settings = json.loads(ds.attrs["cell"])
        for name, var in arm_vars.items():
            arrays[name][i, : ds.sizes["arm"]] = ds[var].values
        for name in scalars:
            scalars[name].append(ds.attrs[name])
        for name in factors:
            factors[name].append(",".join(settings[name]) if name == "attributes" else settings[name])
    coords: dict[str, Any] = {"cell": keys, "arm": np.arange(n_arms)}
    coords.update({name: ("cell", np.asarray(v)) for name, v in factors.items()})
    data = {name: (("cell", "arm"), a) for name, a in arrays.items()}
    data.update({name: ("cell", np.asarray(v, dtype=float if name not in ("n_arms_scored", "divergences") else int))
                 for name, v in scalars.items()})
    return xr.Dataset(data, coords=coords)


def surface_cost(cell: SurfaceCell, sizes: dict[str, int]) -> float:
    """A rough cost: MCMC cells by their draws, conjugate and baseline cells next to nothing."""
    estimator, options = parse_estimator(cell.estimator)
    if estimator is None or estimator in ("beta-i", "cpredictor") and "inference" not in options:
        return 1.0
    gp = 4.0 if "gp" in estimator else 1.0
    return gp * cell.chains * (cell.draws + cell.tune) * (0.2 if options.get("inference") == "advi" else 1.0)


def surface_rows(merged: xr.Dataset) -> list[dict[str, Any]]:
    """One JSON-able dict per cell of a merged surface grid (settings, errors, time, diagnostics).

    Examples
    --------
    >>> c = SurfaceCell("synthetic-surface:2000:3:0", ("a0", "a1", "a2"), "beta-i", budget=200, min_support=10)
    >>> row = surface_rows(merge_surface_cells({c.key: run_surface_cell(c)}))[0]
    >>> row["estimator"], row["budget"], row["n_arms_scored"] > 0
    ('beta-i', 200, True)
    """
    rows = []
    for i, key in enumerate(merged["cell"].values):
        sel = merged.isel(cell=i)
        rhat = float(sel["max_rhat"].values)
        rows.append({"key": str(key), "dataset": str(sel["dataset"].values), "estimator": str(sel["estimator"].values),
                     "budget": int(sel["budget"].values), "seed": int(sel["seed"].values),
                     **{e: float(sel[e].values) for e in _ERRORS}, "n_arms_scored": int(sel["n_arms_scored"].values),
                     "seconds": float(sel["seconds"].values), "max_rhat": rhat if np.isfinite(rhat) else None,
                     "divergences": int(sel["divergences"].values)})
    return rows
