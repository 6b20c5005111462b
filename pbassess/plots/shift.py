"""Figures of a shift table (:func:`pbassess.shift.table.shift_table`), after Ovadia et al. (2019).

* :func:`plot_shift_boxes`: a metric per intensity, one box per model over the corruption
  types (their Fig. 2);
* :func:`plot_confidence_curves`: accuracy and count of the items above each confidence
  threshold (their Fig. 3), from :func:`pbassess.shift.table.pool_levels`;
* :func:`plot_histograms`: entropy or confidence histograms of in-distribution, shifted and
  OOD sets (their Fig. 4), from :func:`pbassess.shift.table.histogram_sets`;
* :func:`plot_level_posteriors`: posterior mean and HDI of a metric per level and model.

Plots only draw: every number comes from the table. Legends sit outside the data area.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.errors import ConfigError
from pbassess.plots._common import figure_and_axes

__all__ = ["plot_confidence_curves", "plot_histograms", "plot_level_posteriors", "plot_shift_boxes"]

LABELS = {"accuracy": "accuracy", "nll": "NLL", "brier": "Brier score", "ece": "ECE", "entropy": "entropy",
          "auroc_ood": "OOD AUROC (confidence)"}


def _legend_outside(ax: Any, **kw: Any) -> None:
    """A legend to the right of the axes, never over the data."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, frameon=False, **kw)


def _check_metric(ds: Any, metric: str) -> None:
    if metric not in ds:
        raise ConfigError(f"the shift table has no {metric!r} (have {', '.join(sorted(LABELS))})")


def plot_shift_boxes(ds: Any, metric: str = "accuracy", *, group: str = "intensity", ax: Any = None):
    """Box plots of ``metric`` per value of ``group``: one box per model over the other levels.

    With a table of ``by=("corruption", "intensity")`` each box spans the corruption types at
    one intensity (Ovadia et al., Fig. 2).

    Parameters
    ----------
    ds : xarray.Dataset
        A shift table whose ``level`` carries the coordinate ``group``.
    metric : str
        A (level, model) variable: accuracy, nll, brier, ece, entropy, auroc_ood, ...
    group : str
        Level coordinate giving the x positions.

    Returns
    -------
    matplotlib.figure.Figure or matplotlib.axes.Axes

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> ds = xr.Dataset({"accuracy": (("level", "model"), np.array([[0.9, 0.8], [0.7, 0.6], [0.5, 0.4]]))},
    ...                 coords={"level": ["a/1", "b/1", "none/0"], "model": ["m1", "m2"],
    ...                         "intensity": ("level", ["1", "1", "0"])})
    >>> fig = plot_shift_boxes(ds)
    >>> [t.get_text() for t in fig.axes[0].get_xticklabels()]
    ['0', '1']
    """
    _check_metric(ds, metric)
    if group not in ds.coords:
        raise ConfigError(f"the shift table's levels have no {group!r} coordinate (use by=(..., {group!r}))")
    fig, ax, created = figure_and_axes(ax, (7.5, 4.0), layout="constrained")
    values = ds[group].values.astype(str)
    groups = sorted(set(values.tolist()), key=lambda v: (0, float(v)) if v.replace(".", "", 1).isdigit() else (1, v))
    models = ds["model"].values.tolist()
    width = 0.8 / len(models)
    colors = [f"C{i}" for i in range(len(models))]
    for j, model in enumerate(models):
        data = [ds[metric].sel(model=model).values[values == g] for g in groups]
        data = [d[np.isfinite(d)] for d in data]
        pos = np.arange(len(groups)) + (j - (len(models) - 1) / 2) * width
        ax.boxplot(data, positions=pos, widths=width * 0.85, patch_artist=True, manage_ticks=False,
                   boxprops={"facecolor": colors[j], "alpha": 0.7}, medianprops={"color": "black"},
                   flierprops={"marker": ".", "markersize": 3})
        ax.plot([], [], "s", color=colors[j], alpha=0.7, label=model)
    ax.set_xticks(np.arange(len(groups)), groups)
    ax.set_xlabel(group)
    ax.set_ylabel(LABELS.get(metric, metric))
    _legend_outside(ax, title="model")
    if created:
        ax.set_title(f"{LABELS.get(metric, metric)} under shift")
        return fig
    return ax


def plot_confidence_curves(pooled: Any, *, axes: Any = None):
    """Accuracy and number of items with confidence >= t, one line per model (Fig. 3).

    Parameters
    ----------
    pooled : xarray.Dataset
        :func:`pbassess.shift.table.pool_levels` of a table (or a table at one level).
    axes : pair of Axes, optional

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> t = np.round(np.arange(10) / 10, 1)
    >>> pooled = xr.Dataset({"accuracy_at_confidence": (("model", "threshold"), np.ones((2, 10))),
    ...                      "count_at_confidence": (("model", "threshold"), np.full((2, 10), 5.0))},
    ...                     coords={"model": ["a", "b"], "threshold": t})
    >>> fig = plot_confidence_curves(pooled)
    >>> [len(a.get_lines()) for a in fig.axes]
    [2, 2]
    """
    import matplotlib.pyplot as plt

    created = axes is None
    if created:
        fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.6), layout="constrained")
    else:
        fig = axes[0].figure
    t = pooled["threshold"].values
    for j, model in enumerate(pooled["model"].values.tolist()):
        axes[0].plot(t, pooled["accuracy_at_confidence"].sel(model=model).values, "o-", color=f"C{j}", label=model)
        axes[1].plot(t, pooled["count_at_confidence"].sel(model=model).values, "o-", color=f"C{j}", label=model)
    axes[0].set_xlabel(r"confidence threshold $\tau$")
    axes[0].set_ylabel(r"accuracy on items with confidence $\geq \tau$")
    axes[1].set_xlabel(r"confidence threshold $\tau$")
    axes[1].set_ylabel(r"items with confidence $\geq \tau$")
    _legend_outside(axes[1], title="model")
    return fig if created else axes


def plot_histograms(shares: Any, *, axes: Any = None):
    """Histograms (share of items per bin) of entropy or confidence, one panel per model (Fig. 4).

    Parameters
    ----------
    shares : xarray.DataArray (set, model, <kind>_bin)
        :func:`pbassess.shift.table.histogram_sets`.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> h = xr.DataArray(np.full((2, 1, 4), 0.25), dims=("set", "model", "entropy_bin"),
    ...                  coords={"set": ["test", "OOD"], "model": ["m"], "entropy_bin": [0.1, 0.3, 0.5, 0.7]})
    >>> fig = plot_histograms(h)
    >>> len(fig.axes[0].patches), fig.axes[0].get_xlabel()
    (2, 'entropy (nats)')
    """
    import matplotlib.pyplot as plt

    bin_dim = next(d for d in shares.dims if d.endswith("_bin"))
    kind = bin_dim[: -len("_bin")]
    centres = shares[bin_dim].values
    half = (centres[1] - centres[0]) / 2 if centres.size > 1 else 0.05
    edges = np.r_[centres - half, centres[-1] + half]
    models = shares["model"].values.tolist()
    created = axes is None
    if created:
        fig, axes = plt.subplots(1, len(models), figsize=(3.0 * len(models) + 1.5, 3.2), sharey=True,
                                 layout="constrained", squeeze=False)
        axes = axes[0]
    else:
        fig = axes[0].figure
    for ax, model in zip(axes, models, strict=True):
        for i, label in enumerate(shares["set"].values.tolist()):
            ax.stairs(shares.sel(set=label, model=model).values, edges, color=f"C{i}", linewidth=1.6, label=label)
        ax.set_title(str(model))
        ax.set_xlabel("entropy (nats)" if kind == "entropy" else "confidence")
    axes[0].set_ylabel("share of items")
    _legend_outside(axes[-1])
    return fig if created else axes


def plot_level_posteriors(ds: Any, metric: str = "ece", *, ax: Any = None):
    """Posterior mean and HDI of ``metric`` per level, one line per model.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> ds = xr.Dataset({"ece_mean": (("level", "model"), [[0.1], [0.2]]),
    ...                  "ece_hdi": (("level", "model", "hdi"), [[[0.05, 0.15]], [[0.1, 0.3]]])},
    ...                 coords={"level": ["0", "1"], "model": ["m"]})
    >>> ax = plot_level_posteriors(ds).axes[0]
    >>> len(ax.collections), len(ax.get_lines())
    (1, 1)
    """
    if f"{metric}_hdi" not in ds:
        raise ConfigError(f"the shift table has no posterior of {metric!r} (compute it with draws > 0)")
    fig, ax, created = figure_and_axes(ax, (7.0, 3.6), layout="constrained")
    levels = ds["level"].values.tolist()
    x = np.arange(len(levels))
    models = ds["model"].values.tolist()
    offset = 0.6 / max(len(models), 1)
    for j, model in enumerate(models):
        mean = ds[f"{metric}_mean"].sel(model=model).values
        hdi = ds[f"{metric}_hdi"].sel(model=model).values
        xs = x + (j - (len(models) - 1) / 2) * offset
        ax.vlines(xs, hdi[:, 0], hdi[:, 1], color=f"C{j}", linewidth=2)
        ax.plot(xs, mean, "o-", color=f"C{j}", label=model, markersize=4)
    ax.set_xticks(x, levels, rotation=45 if len(levels) > 8 else 0, ha="right" if len(levels) > 8 else "center")
    ax.set_xlabel(ds.attrs.get("by") or "level")
    ax.set_ylabel(f"{LABELS.get(metric, metric)} (posterior mean, {ds.attrs.get('ci_prob', 0.95):.0%} HDI)")
    _legend_outside(ax, title="model")
    if created:
        return fig
    return ax
