"""Figures of a :class:`~pbassess.assess.calibration.CalibrationResult`.

:func:`plot_reliability` (Bayesian reliability diagram with the pool's score histogram),
:func:`plot_ece` (ECE posterior with the frequentist value) and :func:`plot_classwise_ece`.
Each takes a result and keyword-only options and returns the Figure, or the Axes when one is
passed with ``ax=``; every number comes from the result's tables and draws.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.errors import ConfigError
from pbassess.plots._common import figure_and_axes, forest_axes

__all__ = ["plot_classwise_ece", "plot_ece", "plot_reliability"]


def plot_reliability(result: Any, *, ax: Any = None):
    """Bayesian reliability diagram: posterior accuracy per score bin with credible bars.

    Each non-empty bin is drawn at its mean pool score with the posterior mean accuracy and
    its HDI; crosses mark the labeled items' accuracy, the dashed diagonal is perfect
    calibration, and the histogram below shows how many pool items fall in each bin.

    Parameters
    ----------
    result : CalibrationResult
    ax : matplotlib.axes.Axes, optional
        Draw the diagram into this Axes (the histogram then goes on a twin y-axis along its
        bottom fifth) and return it; by default a new figure with the histogram in its own
        panel below.

    Returns
    -------
    matplotlib.figure.Figure or matplotlib.axes.Axes

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.assess.calibration import assess_calibration
    >>> p = Predictions.from_top1(["a", "b"] * 50, [0.95, 0.65] * 50, ["a", "a"] * 50)
    >>> fig = plot_reliability(assess_calibration(p, bins=4, seed=0))
    >>> len(fig.axes), len(fig.axes[1].patches)
    (2, 4)
    """
    import matplotlib.pyplot as plt

    table = result.summary()
    created = ax is None
    if created:
        fig, (ax, hist_ax) = plt.subplots(2, 1, figsize=(5.5, 6.0), sharex=True, height_ratios=[3, 1],
                                          layout="constrained")
    else:
        fig = ax.figure
        hist_ax = ax.twinx()
    occupied = table["n_pool"].to_numpy() > 0
    shown = table[occupied]
    x = shown["mean_score"].to_numpy()
    mean = shown["accuracy_mean"].to_numpy()
    err = np.vstack([mean - shown["accuracy_hdi_low"].to_numpy(), shown["accuracy_hdi_high"].to_numpy() - mean])
    ax.plot([0, 1], [0, 1], "--", color="0.5", lw=1, label="perfect calibration")
    ax.errorbar(x, mean, yerr=err, fmt="o", color="C0", ms=4, capsize=3,
                label=f"posterior mean, {100 * result.ci_prob:.10g}% HDI")
    ax.plot(x, shown["frequentist_accuracy"].to_numpy(), "x", color="C3", ms=5, label="labeled accuracy")
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel("accuracy")
    ax.legend(loc="upper left", fontsize="small")
    edges = np.append(table["bin_low"].to_numpy(), table["bin_high"].to_numpy()[-1])
    widths = np.diff(edges)
    counts = table["n_pool"].to_numpy()
    hist_ax.bar(edges[:-1], counts, width=widths, align="edge", color="C0", alpha=0.35, edgecolor="C0")
    if created:
        hist_ax.set_xlabel("confidence (top-1 score)")
        hist_ax.set_ylabel("pool items")
        ece = result.ece_summary()
        ax.set_title(f"Reliability diagram (ECE {ece['mean']:.3f}, {100 * result.ci_prob:.10g}% HDI "
                     f"{ece['hdi_low']:.3f}-{ece['hdi_high']:.3f})", fontsize="medium")
        return fig
    hist_ax.set_ylim(0, max(counts.max(), 1) * 5)
    hist_ax.set_yticks([])
    ax.set_xlabel("confidence (top-1 score)")
    return ax


def plot_ece(result: Any, *, ax: Any = None):
    """Posterior density of the ECE (histogram of its draws), its HDI and the frequentist ECE.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.assess.calibration import assess_calibration
    >>> p = Predictions.from_top1(["a", "b"] * 50, [0.95, 0.65] * 50, ["a", "a"] * 50)
    >>> ax = plot_ece(assess_calibration(p, bins=4, seed=0)).axes[0]
    >>> len(ax.lines)
    1
    """
    fig, ax, created = figure_and_axes(ax, (5.5, 3.5), layout="constrained")
    draws = result.draws("ece")
    summ = result.ece_summary()
    ax.hist(draws, bins=60, density=True, color="C0", alpha=0.6, label="posterior")
    ax.axvspan(summ["hdi_low"], summ["hdi_high"], color="C0", alpha=0.12,
               label=f"{100 * result.ci_prob:.10g}% HDI")
    if np.isfinite(summ["frequentist"]):
        ax.axvline(summ["frequentist"], color="C3", lw=2, label=f"frequentist {summ['frequentist']:.3f}")
    ax.set_xlabel("expected calibration error")
    ax.set_ylabel("posterior density")
    ax.legend(fontsize="small")
    if created:
        ax.set_title(f"ECE posterior (mean {summ['mean']:.3f}, {int(summ['n_labeled']):,} labeled)",
                     fontsize="medium")
    return fig if created else ax


def plot_classwise_ece(result: Any, *, top: int = 20, ax: Any = None):
    """Classwise ECE posteriors (mean and HDI) of the ``top`` classes with the largest mean ECE.

    Crosses mark each class's frequentist ECE over its labeled items.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.assess.calibration import assess_calibration
    >>> p = Predictions.from_top1(["a", "b", "c"] * 30, [0.95, 0.65, 0.8] * 30, ["a", "a", "c"] * 30)
    >>> fig = plot_classwise_ece(assess_calibration(p, bins=4, seed=0), top=2)
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['b', 'c']
    """
    if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or top < 1:
        raise ConfigError(f"top must be a positive integer, got {top!r}")
    table = result.classwise_summary()
    table = table[table["n_pool"] > 0].sort_values("ece_mean", ascending=False, kind="stable").head(int(top))
    fig, ax, created = forest_axes(ax, len(table), width=6.0)
    y = np.arange(len(table))[::-1]
    ax.hlines(y, table["ece_hdi_low"].to_numpy(), table["ece_hdi_high"].to_numpy(), color="C0", lw=2,
              label=f"{100 * result.ci_prob:.10g}% HDI")
    ax.plot(table["ece_mean"].to_numpy(), y, "o", color="C0", ms=4, label="posterior mean")
    ax.plot(table["ece_frequentist"].to_numpy(), y, "x", color="C3", ms=4, label="frequentist")
    ax.set_yticks(y, [str(v) for v in table.index])
    ax.set_xlim(left=0)
    ax.set_xlabel("classwise ECE")
    ax.set_ylabel("predicted class")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")
    if created:
        ax.set_title("Most miscalibrated predicted classes", fontsize="medium")
    return fig if created else ax
