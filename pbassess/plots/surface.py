"""Figures of accuracy surfaces: heatmap over two attributes, worst arms as a forest, MSE curves.

They only draw: the numbers come from :meth:`SurfaceResult.marginal`,
:meth:`SurfaceResult.worst_arms` and the curves of :func:`pbassess.surface.explore.explore_surface`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from pbassess.errors import ConfigError
from pbassess.plots._common import figure_and_axes, forest_axes, text_colour_on

__all__ = ["plot_mse_curves", "plot_surface_heatmap", "plot_worst_arms"]


def plot_surface_heatmap(result: Any, x: str | None = None, y: str | None = None, *, ax: Any = None,
                         cmap: str = "viridis", annotate: bool = True):
    """Heatmap of the posterior mean accuracy over attributes ``x`` and ``y`` (others pool-weighted).

    Each cell is written with its value in black or white, whichever contrasts more with the
    cell's colour (so values stay legible on the light end of the colour map).

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> from pbassess.surface import ArmCounts, fit_surface
    >>> a = ArmCounts.from_arrays([5, 5, 5, 5], [4, 3, 5, 1], values=[[0, 0], [0, 1], [1, 0], [1, 1]],
    ...                           attributes=("sex", "dis"))
    >>> fig = plot_surface_heatmap(fit_surface(a, estimator="beta-i"))
    >>> len(fig.axes[0].images), len(fig.axes[0].texts)
    (1, 4)
    """
    attrs = list(result.arms.attributes)
    if len(attrs) < 2:
        raise ConfigError("a heatmap needs a surface over at least two attributes")
    x, y = x or attrs[0], y or attrs[1]
    table = result.marginal(x, y)
    fig, ax, created = figure_and_axes(ax, (2.4 + 0.6 * table.sizes[y], 1.2 + 0.5 * table.sizes[x]),
                                       layout="constrained")
    image = ax.imshow(table.values, cmap=cmap, vmin=np.nanmin(table.values), vmax=np.nanmax(table.values),
                      aspect="auto")
    ax.set_yticks(range(table.sizes[x]), [str(v) for v in table[x].values])
    ax.set_xticks(range(table.sizes[y]), [str(v) for v in table[y].values])
    ax.set_ylabel(x)
    ax.set_xlabel(y)
    ax.set_title(f"{result.estimator}: posterior mean accuracy")
    if annotate:
        for i in range(table.sizes[x]):
            for j in range(table.sizes[y]):
                v = table.values[i, j]
                if np.isfinite(v):
                    ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=8,
                            color=text_colour_on(image.cmap(image.norm(v))))
    fig.colorbar(image, ax=ax, label="accuracy")
    return fig if created else ax


def plot_worst_arms(result: Any, k: int = 10, *, min_pool: float = 0.0, ax: Any = None):
    """Forest of the ``k`` arms with the lowest posterior mean: mean and HDI, labelled by arm values.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> from pbassess.surface import ArmCounts, fit_surface
    >>> r = fit_surface(ArmCounts.from_arrays([5, 9, 30], [4, 3, 25]), estimator="beta-i")
    >>> ax = plot_worst_arms(r, 2).axes[0]
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['arm=1 (n=9)', 'arm=0 (n=5)']
    """
    if k < 1:
        raise ConfigError(f"k must be positive, got {k}")
    rows = result.worst_arms(k, min_pool=min_pool)
    fig, ax, created = forest_axes(ax, len(rows))
    pos = np.arange(len(rows))[::-1]
    lo, hi, mean = rows["hdi_lower"].to_numpy(), rows["hdi_upper"].to_numpy(), rows["mean"].to_numpy()
    ax.hlines(pos, lo, hi, color="C0", lw=2)
    ax.plot(mean, pos, "o", color="C0")
    values = result.arms.values[rows.index.to_numpy()]
    labels = [", ".join(f"{a}={v}" for a, v in zip(result.arms.attributes, vals, strict=False)) + f" (n={n:.0f})"
              for vals, n in zip(values, rows["n"].to_numpy(), strict=False)]
    ax.set_yticks(pos, labels)
    ax.set_xlabel(f"accuracy ({result.ci_prob:.0%} HDI)")
    ax.set_title(f"{len(rows)} least accurate arms ({result.estimator})")
    return fig if created else ax


def _band(values: np.ndarray, mean: np.ndarray, band: str) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper edge of a band over the seeds (rows) of ``values``."""
    if band == "range":
        return np.nanmin(values, axis=0), np.nanmax(values, axis=0)
    if band == "quantiles":
        return np.nanquantile(values, 0.1, axis=0), np.nanquantile(values, 0.9, axis=0)
    count = np.sum(np.isfinite(values), axis=0)
    se = np.nanstd(values, axis=0, ddof=1) / np.sqrt(np.maximum(count, 1)) if values.shape[0] > 1 else 0.0 * mean
    se = np.where(count > 1, se, 0.0)
    return np.maximum(mean - 2 * se, np.finfo(float).tiny), mean + 2 * se


def plot_mse_curves(curves: Mapping[str, Any], metric: str = "macro_mse", *, ax: Any = None, log: bool = True,
                    band: str = "range"):
    """MSE over labels per method: mean over seeds with a band over the seeds.

    ``curves`` maps a method name to the Dataset of :func:`~pbassess.surface.explore.explore_surface`.
    ``band``: ``"range"`` (lowest to highest seed), ``"quantiles"`` (10th to 90th percentile of
    the seeds) or ``"se"`` (mean +- 2 standard errors over seeds: for comparing the methods' means).

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import xarray as xr
    >>> ds = xr.Dataset({"macro_mse": (("seed", "round"), [[0.1, 0.05], [0.2, 0.07]]),
    ...                  "n_labels": (("seed", "round"), [[10, 20], [10, 20]])})
    >>> ax = plot_mse_curves({"random": ds}).axes[0]
    >>> len(ax.lines), len(ax.collections), ax.get_legend().get_texts()[0].get_text()
    (1, 1, 'random')
    """
    if not curves:
        raise ConfigError("no curves to plot")
    if band not in ("range", "quantiles", "se"):
        raise ConfigError(f"unknown band {band!r} (choose range, quantiles or se)")
    fig, ax, created = figure_and_axes(ax, (6.0, 4.0))
    for i, (name, ds) in enumerate(curves.items()):
        if metric not in ds:
            raise ConfigError(f"the curves of {name!r} have no {metric!r}")
        values = np.asarray(ds[metric].values, float)
        labels = np.asarray(ds["n_labels"].values, float)
        labels = np.where(labels < 0, np.nan, labels)
        x = np.nanmean(labels, axis=0)
        mean = np.nanmean(values, axis=0)
        ax.plot(x, mean, color=f"C{i}", label=name)
        lo, hi = _band(values, mean, band)
        ax.fill_between(x, lo, hi, color=f"C{i}", alpha=0.2)
    if log:
        ax.set_yscale("log")
    ax.set_xlabel("labels")
    ax.set_ylabel(metric.replace("_", " "))
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)  # off the data
    return fig if created else ax
