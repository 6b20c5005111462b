"""Plots of active-assessment experiments (the result of :func:`pbassess.active.experiment.simulate`).

Drawing never computes statistics beyond run averages and their standard errors: each function
takes the :class:`~pbassess.active.result.SimulationResult` and returns a matplotlib Figure; the
labels-to-MRR values and intervals come from ``result.summary()``.

* :func:`plot_mrr`: run-averaged MRR against the fraction of the pool labeled, one line per
  (strategy, prior), with a band of +-2 standard errors of the run average.
* :func:`plot_success`: the success rate (share of runs whose estimated top-m set is right).
* :func:`plot_label_efficiency`: the labels-to-MRR table as a horizontal bar chart.
* :func:`plot_active`: the three side by side.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.errors import ConfigError
from pbassess.plots._common import figure_and_axes

__all__ = ["plot_active", "plot_label_efficiency", "plot_mrr", "plot_success"]


def _combos(ds):
    for s in ds["strategy"].values:
        for p in ds["prior"].values:
            label = str(s) if ds.sizes["prior"] == 1 else f"{s} ({p})"
            yield str(s), str(p), label


def _title(ds) -> str:
    m = int(ds.attrs.get("top_m", 1))
    what = f"{ds.attrs.get('direction', '')} {ds.attrs.get('metric', '')}".strip()
    top = "class" if m == 1 else f"{m} classes"
    return f"{ds.attrs.get('name', '')}: {what} {top}".strip(": ")


def _dataset(ds):
    return getattr(ds, "dataset", ds)


def _curve_axes(ds, var: str, ylabel: str, ax=None, band: bool = True):
    ds = _dataset(ds)
    fig, ax, _ = figure_and_axes(ax, (5.5, 3.6))
    x = ds["fraction"].values
    for s, p, label in _combos(ds):
        values = ds[var].sel(strategy=s, prior=p).values.astype(float)
        mean = values.mean(axis=0)
        (line,) = ax.plot(x, mean, label=label, lw=1.5)
        if band and values.shape[0] > 1:
            se = values.std(axis=0, ddof=1) / np.sqrt(values.shape[0])
            ax.fill_between(x, np.clip(mean - 2 * se, 0, 1), np.clip(mean + 2 * se, 0, 1), color=line.get_color(),
                            alpha=0.2, lw=0)
    ax.set_xlabel("fraction of the pool labeled")
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 1.02)
    ax.set_xlim(0, x[-1])
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)  # off the data
    ax.set_title(_title(ds), fontsize=9)
    return fig, ax


def plot_mrr(ds: Any, ax=None):
    """Run-averaged MRR curves with +-2 SE bands.

    Parameters
    ----------
    ds : SimulationResult or xarray.Dataset
        A result of :func:`pbassess.active.simulate` (or its ``dataset``).
    ax : matplotlib.axes.Axes, optional
        Draw into this Axes.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.active.experiment import simulate
    >>> p = Predictions.from_top1([0, 0, 1, 1], [0.9, 0.8, 0.7, 0.6], [0, 1, 1, 1], classes=["a", "b"])
    >>> fig = plot_mrr(simulate(p, strategies="ts", runs=3, log_every=1))
    >>> fig.axes[0].get_ylabel()
    'MRR (run average)'
    """
    fig, _ = _curve_axes(ds, "mrr", "MRR (run average)", ax=ax)
    return fig


def plot_success(ds: Any, ax=None):
    """Success-rate curves (share of runs whose estimated top-m set is the true one).

    Parameters
    ----------
    ds : SimulationResult or xarray.Dataset
        A result of :func:`pbassess.active.simulate` (or its ``dataset``).
    ax : matplotlib.axes.Axes, optional
        Draw into this Axes.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.active.experiment import simulate
    >>> p = Predictions.from_top1([0, 0, 1, 1], [0.9, 0.8, 0.7, 0.6], [0, 1, 1, 1], classes=["a", "b"])
    >>> plot_success(simulate(p, strategies="ts", runs=3, log_every=1)).axes[0].get_ylabel()
    'success rate'
    """
    fig, _ = _curve_axes(ds, "success", "success rate", ax=ax, band=False)
    return fig


def plot_label_efficiency(result: Any, threshold: float = 0.99, ax=None):
    """Bar chart of the fraction of the pool needed until the run-averaged MRR reaches ``threshold``.

    Combinations that never reach it are drawn at 1 and hatched. The values and their intervals
    are read from ``result.summary(threshold)`` (this function only draws).

    Parameters
    ----------
    result : SimulationResult
        A result of :func:`pbassess.active.simulate`.
    threshold : float
        The MRR to reach.
    ax : matplotlib.axes.Axes, optional
        Draw into this Axes.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.active.experiment import simulate
    >>> p = Predictions.from_top1([0, 0, 1, 1], [0.9, 0.8, 0.7, 0.6], [0, 1, 1, 1], classes=["a", "b"])
    >>> len(plot_label_efficiency(simulate(p, strategies="ts,random-item", runs=3, log_every=1)).axes)
    1
    """
    table = result.summary(threshold) if hasattr(result, "summary") else None
    if table is None:
        raise ConfigError("plot_label_efficiency needs the SimulationResult that simulate() returns "
                          "(it reads the labels-to-MRR table from result.summary())")
    ds = _dataset(result)
    fig, ax, _ = figure_and_axes(ax, (4.5, 0.45 * ds.sizes["strategy"] * ds.sizes["prior"] + 1.2))
    single_prior = ds.sizes["prior"] == 1
    labels = [str(r.strategy) if single_prior else f"{r.strategy} ({r.prior})" for r in table.itertuples()]
    values = table["labels_to_mrr"].to_numpy(dtype=float)
    intervals = table[["labels_to_mrr_low", "labels_to_mrr_high"]].to_numpy(dtype=float)
    y = np.arange(len(labels))
    vals = np.array(values)
    never = np.isnan(vals)
    # the bars take the colours of the curves of plot_mrr / plot_success (same order, same cycle)
    bars = ax.barh(y, np.where(never, 1.0, vals), color=["0.8" if n else f"C{i}" for i, n in enumerate(never)])
    low, high = np.array(intervals, dtype=float).T
    ok = ~never & np.isfinite(low) & np.isfinite(high)
    if ok.any():
        ax.errorbar(vals[ok], y[ok], xerr=[vals[ok] - low[ok], high[ok] - vals[ok]], fmt="none", ecolor="k",
                    capsize=3, lw=1)
    for bar, v, n, hi in zip(bars, vals, never, high, strict=True):
        if n:
            bar.set_hatch("//")
        x_text = bar.get_width() if n or not np.isfinite(hi) else max(bar.get_width(), hi)
        ax.text(x_text + 0.02, bar.get_y() + bar.get_height() / 2, "never" if n else f"{v:.0%}",
                va="center", fontsize=8)
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.15)
    ax.set_xlabel(f"fraction of the pool labeled\nuntil MRR >= {threshold:g}")
    ax.set_title(_title(ds), fontsize=9)
    return fig


def plot_active(result: Any, threshold: float = 0.99):
    """MRR curves, success curves and the label-efficiency bars side by side.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.active.experiment import simulate
    >>> p = Predictions.from_top1([0, 0, 1, 1], [0.9, 0.8, 0.7, 0.6], [0, 1, 1, 1], classes=["a", "b"])
    >>> len(plot_active(simulate(p, strategies="ts", runs=3, log_every=1)).axes)
    3
    """
    import matplotlib.pyplot as plt

    # constrained layout counts the legends beside the axes and the long x label of the bars (tight_layout
    # left the end of that label outside the figure)
    fig, axes = plt.subplots(1, 3, figsize=(15, 3.8), gridspec_kw={"width_ratios": [1.2, 1.2, 0.9]},
                             layout="constrained")
    plot_mrr(result, ax=axes[0])
    plot_success(result, ax=axes[1])
    plot_label_efficiency(result, threshold, ax=axes[2])
    return fig
