"""The shift table: every shift metric per (level, model), with posteriors, as xarray.

:func:`shift_table` splits a prediction set into shift levels (the values of an attribute
column, ``by``) and models (the values of a model column such as ``method``, or the entries of
a dict ``{name: Predictions}``), sets the out-of-distribution (OOD) items aside, and returns a
:class:`ShiftResult`: a result like every other (``summary()``, ``sentence()``, ``to_json()``,
``save``/``pbassess.load_result``) that also behaves like the :class:`xarray.Dataset` it wraps
(:attr:`ShiftResult.table`), with dims ``level`` and ``model`` (plus ``threshold``,
``confidence_bin`` and ``entropy_bin`` for the curves and histograms, ``draw`` for the posterior
draws).
:func:`shift_records` turns it into the list of JSON objects ``pbassess shift`` prints, and
:func:`worsening` gives P(metric worsens from level to level).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.constants import CI_PROB, DEFAULT_BINS, DEFAULT_N_DRAWS
from pbassess.counting import assign_bins, cell_counts
from pbassess.errors import ConfigError, DataError
from pbassess.metrics.posterior import ece_draws
from pbassess.metrics.registry import get_metric, metrics_used_by
from pbassess.shift import metrics as M
from pbassess.shift import posterior as P
from pbassess.shift.records import SCALARS, shift_records, table_of  # noqa: F401  (SCALARS: older imports)
from pbassess.shift.result import ShiftResult

__all__ = ["HIST_EDGES_CONFIDENCE", "ShiftResult", "find_ood", "histogram_sets", "pool_levels", "shift_records",
           "shift_table", "split_models", "worsening"]

#: Edges of the confidence histograms (20 bins over [0, 1]).
HIST_EDGES_CONFIDENCE = np.linspace(0.0, 1.0, 21)

ALL_LEVEL = "all"



def _as_predictions(preds: Any):
    try:
        from pbassess.data import as_predictions
    except ImportError:  # the DATA helper's converter is not there yet
        return preds
    return as_predictions(preds)


def find_ood(preds, ood: Any = "auto") -> tuple[str, str] | None:
    """The (column, value) marking OOD items: given as ``"column=value"``, a pair, or "auto".

    ``"auto"`` picks the first attribute column holding the value ``"ood"``; ``None`` or
    ``"none"`` means no OOD set.

    Parameters
    ----------
    preds : Predictions
    ood : str, (str, str) or None
        ``"column=value"``, ``(column, value)``, ``"auto"``, or ``None`` / ``"none"``.

    Returns
    -------
    (str, str) or None
        The OOD column and value, or ``None`` when there is no OOD set.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_probs([[0.9, 0.1], [0.5, 0.5]], [0, None], groups={"set": ["test", "ood"]})
    >>> find_ood(p), find_ood(p, "set=test"), find_ood(p, None)
    (('set', 'ood'), ('set', 'test'), None)
    """
    if ood is None or (isinstance(ood, str) and ood.lower() == "none"):
        return None
    if isinstance(ood, str) and ood != "auto":
        column, sep, value = ood.partition("=")
        if not sep:
            raise ConfigError(f"--ood takes COLUMN=VALUE (e.g. corruption=ood), got {ood!r}")
        ood = (column, value)
    if isinstance(ood, tuple):
        column, value = ood
        if column not in preds.groups:
            raise DataError(f"OOD column {column!r} not found (attribute columns: {', '.join(preds.groups) or 'none'})")
        if not np.any(preds.group(column).astype(str) == str(value)):
            raise DataError(f"no item has {column} = {value!r}, so there is no OOD set")
        return str(column), str(value)
    for column, values in preds.groups.items():
        if np.any(np.asarray(values).astype(str) == "ood"):
            return column, "ood"
    return None


def split_models(preds, model_column: str | None = "auto", models: Any = None) -> dict[str, Any]:
    """``{model name: Predictions}`` from a dict, a model column, or the set itself.

    ``model_column="auto"`` uses ``method`` or ``model`` when such an attribute column exists;
    ``models`` keeps (and orders) a subset of the names.

    Parameters
    ----------
    preds : Predictions or dict of str to Predictions
    model_column : str or None
        The attribute column naming each item's model; ``"auto"``: ``method`` or ``model`` when
        present; ``None``: one model.
    models : sequence of str, optional
        The models to keep, in this order.

    Returns
    -------
    dict of str to Predictions

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_probs([[0.9, 0.1], [0.4, 0.6]], [0, 1], groups={"method": ["a", "b"]})
    >>> {k: v.n_items for k, v in split_models(p).items()}
    {'a': 1, 'b': 1}
    """
    if isinstance(preds, dict):
        table = {str(k): _as_predictions(v) for k, v in preds.items()}
    else:
        preds = _as_predictions(preds)
        if model_column == "auto":
            model_column = next((c for c in ("method", "model") if c in preds.groups), None)
        if model_column is None:
            table = {preds.name: preds}
        else:
            if model_column not in preds.groups:
                raise DataError(f"model column {model_column!r} not found (attribute columns: "
                                f"{', '.join(preds.groups) or 'none'})")
            values = preds.group(model_column).astype(str)
            table = {name: preds.subset(values == name) for name in dict.fromkeys(values.tolist())}
    if models:
        missing = [m for m in models if m not in table]
        if missing:
            raise DataError(f"model {missing[0]!r} not found (have {', '.join(table)})")
        table = {m: table[m] for m in models}
    return table


def _sort_key(part: str) -> tuple:
    try:
        return (0, float(part), part)
    except ValueError:
        return (1, 0.0, part)


def _histogram(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Counts per bin, values outside the edges left out (``numpy.histogram``'s counts)."""
    return cell_counts(assign_bins(values, edges, clip=False), edges.size - 1)


def _level_order(values: np.ndarray) -> list[str]:
    """Distinct levels, numbers numerically; ``a/b`` levels part by part."""
    return sorted(set(values.tolist()), key=lambda v: tuple(_sort_key(x) for x in str(v).split("/")))


def _level_metrics(p, labeled: np.ndarray, ood_conf: np.ndarray | None, ood_ent: np.ndarray | None,
                   bins: Any, thresholds: np.ndarray, entropy_edges: np.ndarray) -> dict[str, Any]:
    """Point values, curves, histograms and ECE bin counts of one (level, model) subset."""
    from pbassess.stats.counts import bin_edges, binned_counts

    probs = np.asarray(p.probs, dtype=float)
    conf_all = probs.max(axis=1)
    ent_all = M.predictive_entropy(probs)
    out: dict[str, Any] = {"n_items": probs.shape[0], "n": int(labeled.sum()), "confidence": conf_all.mean(),
                           "entropy": ent_all.mean()}
    out["confidence_count"] = _histogram(conf_all, HIST_EDGES_CONFIDENCE)
    out["entropy_count"] = _histogram(ent_all, entropy_edges)
    if ood_conf is not None and probs.shape[0]:
        out["auroc_ood"] = M.ood_auroc(conf_all, ood_conf)
        out["auroc_ood_entropy"] = M.ood_auroc(-ent_all, -ood_ent)
    if out["n"] == 0:
        return out
    pl, y = probs[labeled], np.asarray(p.labels)[labeled]
    stats = M.per_item_stats(pl, y)
    decomposition = M.brier_decomposition(pl, y)
    out.update(accuracy=stats["correct"].mean(), nll=stats["nll"].mean(), brier=decomposition["brier"],
               brier_reliability=decomposition["reliability"], brier_resolution=decomposition["resolution"],
               brier_uncertainty=decomposition["uncertainty"], brier_cross=decomposition["cross"],
               ece=M.expected_calibration_error(stats["confidence"], stats["correct"], bins))
    out["accuracy_at_confidence"], out["count_at_confidence"] = M.accuracy_vs_confidence(
        stats["confidence"], stats["correct"], thresholds)
    counts = binned_counts(stats["confidence"], stats["correct"], bin_edges(bins=bins))
    out.update(ece_bin_n=counts["n"], ece_bin_correct=counts["correct"], ece_bin_score_sum=counts["score_sum"])
    out["_items"] = stats
    return out


def _posterior_draws(cell: dict[str, Any], n_draws: int, rng: np.random.Generator) -> dict:
    """Posterior draws of accuracy, NLL, Brier and ECE of one (level, model) subset."""
    stats = cell["_items"]
    n = stats["correct"].size
    acc = P.accuracy_draws(stats["correct"].sum(), n, n_draws, seed=rng)[:, 0]
    # The metric registry's Bayesian bootstrap when present: the same Dirichlet(1) weights as ours, switching to
    # the normal approximation with the exact moments when n * draws > 2e7 (large pools such as ACS).
    try:
        from pbassess.metrics import bayesian_bootstrap

        boot = np.column_stack([bayesian_bootstrap(stats[key], n_draws=n_draws, seed=rng, method="auto")
                                for key in ("nll", "brier")])
    except ImportError:
        boot = P.bayesian_bootstrap_mean(np.column_stack([stats["nll"], stats["brier"]]), n_draws, seed=rng)
    ece = ece_draws(cell["ece_bin_n"], cell["ece_bin_correct"], cell["ece_bin_score_sum"], n_draws, seed=rng)
    return {"accuracy": acc, "nll": boot[:, 0], "brier": boot[:, 1], "ece": ece}


def shift_table(preds: Any, *, by: str | None = None, model_column: str | None = "auto", models: Any = None,
                ood: Any = "auto", bins: Any = DEFAULT_BINS, thresholds: Any = M.CONFIDENCE_THRESHOLDS,
                ci_prob: float = CI_PROB, n_draws: int = DEFAULT_N_DRAWS, seed: Any = None):
    """Shift metrics with posteriors per (level, model).

    Parameters
    ----------
    preds : Predictions or dict of Predictions
        Full probability vectors are required (``preds.probs``).
    by : str or sequence of str, optional
        Attribute column whose values are the shift levels; without it the set is one level
        (``"all"``). Several columns (e.g. ``("corruption", "intensity")``) make levels
        ``"<a>/<b>"`` with one coordinate per column on ``level`` (values must not contain
        ``/``). Numbers sort numerically.
    model_column : str or "auto" or None
        Attribute column naming the model of each row (``"auto"``: ``method`` or ``model`` if
        present); ignored for a dict.
    models : sequence of str, optional
        Keep only these models, in this order.
    ood : "auto", "COLUMN=VALUE", (column, value) or None
        The OOD items, excluded from the levels and used for ``auroc_ood``.
    bins : int or edges
        Calibration bins of the ECE.
    n_draws : int
        Monte Carlo posterior draws per (level, model); 0 skips the posteriors.

    Returns
    -------
    ShiftResult
        Behaves like (and wraps, as ``.table``) an :class:`xarray.Dataset` with dims ``level``,
        ``model``, ``threshold``, ``confidence_bin``, ``entropy_bin``, ``draw``
        and ``hdi`` (lower, upper); variables named as in :data:`SCALARS`, the curves, the
        histograms (``ood_confidence_count`` etc. for the OOD set), the ECE's bin counts
        ``ece_bin_n``, ``ece_bin_correct``, ``ece_bin_score_sum`` (dim ``ece_bin``),
        ``<metric>_draws``, ``<metric>_mean`` and ``<metric>_hdi``.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> rng = np.random.default_rng(0)
    >>> probs = rng.dirichlet(np.ones(3), size=60)
    >>> labels = [int(np.argmax(q)) for q in probs]
    >>> p = Predictions.from_probs(probs, labels, groups={"sev": ["1", "2"] * 30})
    >>> ds = shift_table(p, by="sev", n_draws=200, seed=0)
    >>> ds["accuracy"].sizes["level"], float(ds["accuracy"].sel(level="1").item())
    (2, 1.0)
    """

    from pbassess.stats.sampling import as_generator

    if isinstance(n_draws, bool) or not isinstance(n_draws, (int, np.integer)) or n_draws < 0:
        raise ConfigError(f"n_draws must be a whole number >= 0, got {n_draws!r}")
    rng = as_generator(seed)
    table = split_models(preds, model_column, models)
    thresholds = np.asarray(thresholds, dtype=float)
    entropy_edges = np.linspace(0.0, np.log(next(iter(table.values())).n_classes), 21)
    split = {}
    for name, p in table.items():
        if p.probs is None:
            raise DataError(f"model {name!r}: shift metrics need full probability vectors (p_<class> columns)")
        marker = find_ood(p, ood)
        is_ood = np.zeros(p.n_items, bool) if marker is None else p.group(marker[0]).astype(str) == marker[1]
        if marker is not None and p.n_items and is_ood.all():
            whose = "" if len(table) == 1 else f" of model {name!r}"
            raise DataError(f"--ood {marker[0]}={marker[1]} marks every item{whose} ({p.n_items}) as out of "
                            "distribution: no in-distribution items are left for the metrics (choose another "
                            "COLUMN=VALUE, or --ood none)")
        level_of = np.full(p.n_items, ALL_LEVEL, dtype=object) if by is None else _by_column(p, by)
        split[name] = (is_ood, level_of)
    levels = _level_order(np.concatenate([lv[~o] for o, lv in split.values()]))
    options = {"bins": bins, "thresholds": thresholds, "entropy_edges": entropy_edges, "draws": int(n_draws), "rng": rng}
    per_model = {name: _model_rows(p, *split[name], levels, **options) for name, p in table.items()}
    ds = _assemble(per_model, levels, thresholds, entropy_edges, n_draws, ci_prob, by, ood, bins)
    if by is not None and not isinstance(by, str):
        parts = [lv.split("/") for lv in levels]
        for i, column in enumerate(by):
            ds = ds.assign_coords({column: ("level", [pt[i] for pt in parts])})
    return ShiftResult(ds)


def _model_rows(p, is_ood: np.ndarray, level_of: np.ndarray, levels: list[str], *, bins: Any,
                thresholds: np.ndarray, entropy_edges: np.ndarray, draws: int, rng: np.random.Generator):
    """``({level: metrics}, OOD histograms)`` of one model."""
    ood_conf = ood_ent = None
    ood_out: dict[str, Any] = {}
    if is_ood.any():
        q = np.asarray(p.probs)[is_ood]
        ood_conf, ood_ent = q.max(axis=1), M.predictive_entropy(q)
        ood_out = {"ood_confidence_count": _histogram(ood_conf, HIST_EDGES_CONFIDENCE),
                   "ood_entropy_count": _histogram(ood_ent, entropy_edges), "n_ood": int(is_ood.sum())}
    rows = {}
    for level in levels:
        mask = (level_of == level) & ~is_ood
        if not mask.any():  # this model has no item at this level
            rows[level] = {"n_items": 0, "n": 0}
            continue
        sub = p.subset(mask)
        rows[level] = _level_metrics(sub, np.asarray(sub.labeled), ood_conf, ood_ent, bins, thresholds, entropy_edges)
        if draws and rows[level]["n"]:
            rows[level]["_draws"] = _posterior_draws(rows[level], draws, rng)
    return rows, ood_out


def _by_column(p, by: Any) -> np.ndarray:
    columns = [by] if isinstance(by, str) else list(by)
    for column in columns:
        if column not in p.groups:
            raise DataError(f"--by column {column!r} not found (attribute columns: {', '.join(p.groups) or 'none'})")
    values = [p.group(c).astype(str) for c in columns]
    if len(values) == 1:
        return values[0].astype(object)
    return np.array(["/".join(parts) for parts in zip(*values, strict=True)], dtype=object)


def _assemble(per_model, levels, thresholds, entropy_edges, draws, ci_prob, by, ood, bins):
    import xarray as xr

    from pbassess.stats.counts import bin_edges
    from pbassess.stats.intervals import hdi_from_draws

    ece_edges = bin_edges(bins=bins)

    models = list(per_model)
    shape = (len(levels), len(models))

    def grid(key, extra=0):
        out = np.full(shape + ((extra,) if extra else ()), np.nan)
        for j, m in enumerate(models):
            for i, lv in enumerate(levels):
                if key in per_model[m][0][lv]:
                    out[i, j] = per_model[m][0][lv][key]
        return out

    ds = xr.Dataset(coords={"level": levels, "model": models, "threshold": thresholds,
                            "confidence_bin": (HIST_EDGES_CONFIDENCE[:-1] + HIST_EDGES_CONFIDENCE[1:]) / 2,
                            "entropy_bin": (entropy_edges[:-1] + entropy_edges[1:]) / 2, "hdi": ["lower", "upper"],
                            "ece_bin": np.arange(ece_edges.size - 1),
                            "ece_bin_lower": ("ece_bin", ece_edges[:-1]), "ece_bin_upper": ("ece_bin", ece_edges[1:])})
    for key in SCALARS:
        ds[key] = (("level", "model"), grid(key))
    for key, dim, size in (("accuracy_at_confidence", "threshold", thresholds.size),
                           ("count_at_confidence", "threshold", thresholds.size),
                           ("confidence_count", "confidence_bin", HIST_EDGES_CONFIDENCE.size - 1),
                           ("entropy_count", "entropy_bin", entropy_edges.size - 1),
                           ("ece_bin_n", "ece_bin", ece_edges.size - 1),
                           ("ece_bin_correct", "ece_bin", ece_edges.size - 1),
                           ("ece_bin_score_sum", "ece_bin", ece_edges.size - 1)):
        ds[key] = (("level", "model", dim), grid(key, size))
    for key, dim in (("ood_confidence_count", "confidence_bin"), ("ood_entropy_count", "entropy_bin")):
        if all(key in per_model[m][1] for m in models):
            ds[key] = (("model", dim), np.stack([per_model[m][1][key] for m in models]))
    if draws:
        for metric in metrics_used_by("shift"):
            d = np.full(shape + (int(draws),), np.nan)
            for j, m in enumerate(models):
                for i, lv in enumerate(levels):
                    if "_draws" in per_model[m][0][lv]:
                        d[i, j] = per_model[m][0][lv]["_draws"][metric]
            ds[f"{metric}_draws"] = (("level", "model", "draw"), d)
            ds[f"{metric}_hdi"] = (("level", "model", "hdi"), hdi_from_draws(d, ci_prob, axis=-1))
            ds[f"{metric}_mean"] = (("level", "model"), d.mean(axis=-1))
        _exact_accuracy_hdi(ds, ci_prob)
    for key in ("confidence", "entropy"):
        counts = ds[f"{key}_count"]
        ds[f"{key}_share"] = counts / counts.sum(dim=f"{key}_bin").where(lambda c: c > 0)
        if f"ood_{key}_count" in ds:
            ood_counts = ds[f"ood_{key}_count"]
            ds[f"ood_{key}_share"] = ood_counts / ood_counts.sum(dim=f"{key}_bin")
    ds.attrs.update(by=by if isinstance(by, str) else ",".join(by or ()), ci_prob=ci_prob, ood=str(ood), n_ood=int(max(
        [per_model[m][1].get("n_ood", 0) for m in models])), draws=int(draws))
    return ds


def _exact_accuracy_hdi(ds, ci_prob: float) -> None:
    """Replace the Monte Carlo accuracy HDI by the exact Beta HDI (uniform prior)."""
    from pbassess.stats.beta import beta_hdi

    n = np.nan_to_num(ds["n"].values)
    k = np.nan_to_num(ds["accuracy"].values) * n
    exact = beta_hdi(1.0 + np.rint(k), 1.0 + n - np.rint(k), ci_prob)
    exact[n == 0] = np.nan
    ds["accuracy_hdi"].values[...] = exact
    ds["accuracy_mean"].values[...] = np.where(n > 0, (1.0 + np.rint(k)) / (2.0 + n), np.nan)


def worsening(ds, metric: str = "ece", *, levels: Any = None) -> Any:
    """P(metric worsens from each level to the next) and P(monotone), per model.

    Uses the joint posterior draws in ``ds`` (levels are independent a posteriori).

    Parameters
    ----------
    ds : xarray.Dataset or ShiftTableResult
        A :func:`shift_table` computed with posterior draws.
    metric : str
        A metric with draws in the table (``ece``, ``accuracy``, ...).
    levels : sequence, optional
        The levels to compare, in order (default all).

    Returns
    -------
    xarray.Dataset with ``p_step`` (model, step) and ``p_monotone``, ``p_first_to_last`` (model).

    Examples
    --------
    >>> from pbassess import Predictions
    >>> rng = np.random.default_rng(1)
    >>> probs = np.tile([[0.9, 0.1]], (400, 1))
    >>> labels = np.r_[np.zeros(180), rng.random(20) < 0.5, np.zeros(100), np.ones(100)].astype(int)
    >>> p = Predictions.from_probs(probs, labels, groups={"sev": ["1"] * 200 + ["2"] * 200})
    >>> w = worsening(shift_table(p, by="sev", n_draws=2000, seed=0), "accuracy")
    >>> bool(w["p_monotone"].item() > 0.99)
    True
    """
    ds = table_of(ds)
    import xarray as xr

    if f"{metric}_draws" not in ds:
        raise ConfigError(f"no posterior draws of {metric!r} in the table (compute it with draws > 0)")
    sub = ds[f"{metric}_draws"]
    if levels is not None:
        sub = sub.sel(level=list(levels))
    names = sub["level"].values.tolist()
    steps = [f"{a}->{b}" for a, b in zip(names[:-1], names[1:], strict=True)]
    step, mono, last = [], [], []
    for model in sub["model"].values.tolist():
        r = P.prob_worsens(sub.sel(model=model).values.T, higher_is_worse=get_metric(metric).direction != "higher")
        step.append(r["step"])
        mono.append(r["monotone"])
        last.append(r["first_to_last"])
    return xr.Dataset({"p_step": (("model", "step"), np.array(step)), "p_monotone": ("model", mono),
                       "p_first_to_last": ("model", last)},
                      coords={"model": sub["model"].values, "step": steps}, attrs={"metric": metric})


def pool_levels(ds, levels: Any = None):
    """Curves and histograms of several levels pooled (items of all of them together).

    Returns
    -------
    xarray.Dataset (model, threshold / bins): ``count_at_confidence``, ``accuracy_at_confidence``
    (the count-weighted accuracy), ``confidence_count``/``entropy_count`` and their shares.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_probs([[0.9, 0.1], [0.4, 0.6], [0.8, 0.2]], [0, 0, 0], groups={"s": ["1", "2", "2"]})
    >>> pooled = pool_levels(shift_table(p, by="s", n_draws=0))
    >>> pooled["count_at_confidence"].sel(threshold=0.5).values.tolist()
    [3.0]
    >>> round(float(pooled["accuracy_at_confidence"].sel(threshold=0.0).item()), 4)
    0.6667
    """
    ds = table_of(ds)
    sub = ds if levels is None else ds.sel(level=list(levels))
    count = sub["count_at_confidence"].fillna(0)
    hits = (sub["accuracy_at_confidence"].fillna(0) * count).sum("level")
    total = count.sum("level")
    out = sub[["confidence_count", "entropy_count"]].sum("level")
    out["count_at_confidence"] = total
    out["accuracy_at_confidence"] = (hits / total).where(total > 0)
    for key in ("confidence", "entropy"):
        out[f"{key}_share"] = out[f"{key}_count"] / out[f"{key}_count"].sum(f"{key}_bin")
    return out


def histogram_sets(ds, sets: dict[str, Any], kind: str = "entropy", *, ood_label: str | None = "OOD"):
    """Shares of items per histogram bin for named groups of levels (and the OOD set).

    Parameters
    ----------
    sets : dict
        ``{label: list of levels}``, e.g. ``{"test": ["0"], "shifted": ["1", ..., "5"]}``.
    kind : {"entropy", "confidence"}
    ood_label : str or None
        Label of the OOD set (added when the table has one).

    Returns
    -------
    xarray.DataArray (set, model, <kind>_bin)

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_probs([[0.9, 0.1], [0.5, 0.5]], [0, None], groups={"s": ["test", "ood"]})
    >>> h = histogram_sets(shift_table(p, by="s", n_draws=0), {"test": ["test"]}, "confidence")
    >>> h["set"].values.tolist(), float(h.sel(set="OOD").sum())
    (['test', 'OOD'], 1.0)
    """
    ds = table_of(ds)
    import xarray as xr

    if kind not in ("entropy", "confidence"):
        raise ConfigError(f"kind must be 'entropy' or 'confidence', got {kind!r}")
    shares = [pool_levels(ds, levels)[f"{kind}_share"] for levels in sets.values()]
    labels = list(sets)
    if ood_label is not None and f"ood_{kind}_share" in ds:
        shares.append(ds[f"ood_{kind}_share"])
        labels.append(ood_label)
    return xr.concat(shares, dim="set").assign_coords(set=labels)
