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
from pbassess.plots._common import count_strip, figure_and_axes, forest_axes

__all__ = ["outside_legend", "plot_classwise_ece", "plot_ece", "plot_recalibration", "plot_reliability",
           "plot_smooth_reliability"]


def outside_legend(ax: Any):
    """A small legend to the right of ``ax``, outside the plotting area (it never covers data).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> _ = ax.plot([0, 1], [0, 1], label="diagonal")
    >>> legend = outside_legend(ax)
    >>> fig.canvas.draw()
    >>> bool(legend.get_window_extent().x0 >= ax.get_window_extent().x1)  # to the right of the data
    True
    """
    return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize="small")


def plot_reliability(result: Any, *, ax: Any = None):
    """Bayesian reliability diagram: posterior accuracy per score bin with credible bars.

    Each non-empty bin is drawn at its mean pool score with the posterior mean accuracy and
    its HDI; crosses mark the labeled items' accuracy, the dashed diagonal is perfect
    calibration. The histogram below shows how many pool items fall in each bin (bars) and how
    many of them are labeled (black step line, with the count written above each bin). Legends
    sit outside the axes, to the right, so they never cover data.

    Parameters
    ----------
    result : CalibrationResult
    ax : matplotlib.axes.Axes, optional
        Draw the diagram into this Axes (the histogram then goes on a twin y-axis along its
        bottom fifth, and the labeled counts in a strip under accuracy 0, clear of the markers)
        and return it; by default a new figure with the histogram in its own panel below.

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
        fig, (ax, hist_ax) = plt.subplots(2, 1, figsize=(7.5, 6.0), sharex=True, height_ratios=[3, 1],
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
    ax.set_xlim(-0.02, 1.02)  # a margin as on y: a bin at confidence ~1 shows its whole marker
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel("accuracy")
    if not created:  # the counts are written in the diagram itself: say what the numbers are
        ax.plot([], [], ls="none", marker="$n$", color="0.25", label="labeled items per bin")
    outside_legend(ax)
    edges = np.append(table["bin_low"].to_numpy(), table["bin_high"].to_numpy()[-1])
    widths = np.diff(edges)
    counts = table["n_pool"].to_numpy()
    labeled = table["n_labeled"].to_numpy()
    hist_ax.bar(edges[:-1], counts, width=widths, align="edge", color="C0", alpha=0.35, edgecolor="C0",
                label="pool items")
    hist_ax.step(edges, np.append(labeled, labeled[-1]), where="post", color="black", lw=1.5, label="labeled items")
    if created:
        for lo, width, n_lab, n_pool in zip(edges[:-1], widths, labeled, counts, strict=True):
            if n_pool > 0 or n_lab > 0:
                hist_ax.annotate(f"{int(n_lab):,}", (lo + width / 2, max(n_lab, n_pool)), xytext=(0, 2),
                                 textcoords="offset points", ha="center", va="bottom", fontsize="x-small")
        hist_ax.set_xlabel("confidence (top-1 score)")
        hist_ax.set_ylabel("items")
        hist_ax.set_ylim(0, max(counts.max(), 1) * 1.25)
        outside_legend(hist_ax)
        ece = result.ece_summary()
        ax.set_title(f"Reliability diagram (ECE {ece['mean']:.3f}, {100 * result.ci_prob:.10g}% HDI "
                     f"{ece['hdi_low']:.3f}-{ece['hdi_high']:.3f})", fontsize="medium")
        return fig
    # Labeled counts go in a strip under accuracy 0, clear of every marker; the histogram stands on the strip.
    count_strip(ax, x, shown["n_labeled"].to_numpy(), top=1.02)
    low, high = ax.get_ylim()
    hist_top = max(counts.max(), 1) * 5
    hist_ax.set_ylim(low / high * hist_top, hist_top)
    hist_ax.set_yticks([])
    handles, labels = ax.get_legend_handles_labels()  # one legend for both layers, off the data
    more_handles, more_labels = hist_ax.get_legend_handles_labels()
    ax.legend(handles + more_handles, labels + more_labels, loc="upper left", bbox_to_anchor=(1.02, 1.0),
              borderaxespad=0.0, fontsize="small")
    ax.set_xlabel("confidence (top-1 score)")
    return ax


def plot_ece(result: Any, *, ax: Any = None):
    """Posterior density of the ECE (histogram of its draws), its HDI and the frequentist ECE.

    Parameters
    ----------
    result : CalibrationResult
        A result of :func:`~pbassess.assess.assess_calibration`.
    ax : matplotlib.axes.Axes, optional
        Draw into this Axes (then the Axes is returned).

    Returns
    -------
    matplotlib.figure.Figure or matplotlib.axes.Axes

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.assess.calibration import assess_calibration
    >>> p = Predictions.from_top1(["a", "b"] * 50, [0.95, 0.65] * 50, ["a", "a"] * 50)
    >>> ax = plot_ece(assess_calibration(p, bins=4, seed=0)).axes[0]
    >>> len(ax.lines)
    1
    """
    fig, ax, created = figure_and_axes(ax, (7.0, 3.5), layout="constrained")
    draws = result.draws("ece")
    summ = result.ece_summary()
    ax.hist(draws, bins=60, density=True, color="C0", alpha=0.6, label="posterior")
    ax.axvspan(summ["hdi_low"], summ["hdi_high"], color="C0", alpha=0.12,
               label=f"{100 * result.ci_prob:.10g}% HDI")
    if np.isfinite(summ["frequentist"]):
        ax.axvline(summ["frequentist"], color="C3", lw=2, label=f"frequentist {summ['frequentist']:.3f}")
    ax.set_xlabel("expected calibration error")
    ax.set_ylabel("posterior density")
    outside_legend(ax)
    if created:
        ax.set_title(f"ECE posterior (mean {summ['mean']:.3f}, {int(summ['n_labeled']):,} labeled)",
                     fontsize="medium")
    return fig if created else ax


def plot_classwise_ece(result: Any, *, top: int = 20, ax: Any = None):
    """Classwise ECE posteriors (mean and HDI) of the ``top`` classes with the largest mean ECE.

    Crosses mark each class's frequentist ECE over its labeled items.

    Parameters
    ----------
    result : CalibrationResult
        A result of :func:`~pbassess.assess.assess_calibration` with ``classwise=True``.
    top : int
        Show the ``top`` classes with the largest mean ECE.
    ax : matplotlib.axes.Axes, optional
        Draw into this Axes (then the Axes is returned).

    Returns
    -------
    matplotlib.figure.Figure or matplotlib.axes.Axes

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
    outside_legend(ax)
    if created:
        ax.set_title("Most miscalibrated predicted classes", fontsize="medium")
    return fig if created else ax


def plot_smooth_reliability(curve: dict, *, ax: Any = None):
    """The smooth reliability curve of :func:`pbassess.calibration.smooth_reliability_curve`.

    Draws ``curve["curve"]`` against ``curve["mesh"]``, the diagonal, and the score density as a
    shaded band along the bottom (scaled to a fifth of the height).

    Examples
    --------
    >>> from pbassess.calibration import smooth_reliability_curve
    >>> out = smooth_reliability_curve([0.2, 0.4, 0.6, 0.8] * 50, [0, 0, 1, 1] * 50, n_points=21)
    >>> ax = plot_smooth_reliability(out).axes[0]
    >>> len(ax.lines[1].get_xdata())
    21
    """
    fig, ax, created = figure_and_axes(ax, (7.0, 4.5), layout="constrained")
    mesh, mu, density = curve["mesh"], curve["curve"], curve["density"]
    ax.plot([0, 1], [0, 1], "--", color="0.5", lw=1, label="perfect calibration")
    ax.plot(mesh, mu, color="C0", lw=2, label=f"smooth curve (bandwidth {curve['sigma']:.3f})")
    scale = 0.2 / max(float(np.max(density)), 1e-12)
    ax.fill_between(mesh, 0, density * scale, color="C0", alpha=0.2, label="score density (scaled)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("predicted probability")
    ax.set_ylabel("observed frequency")
    outside_legend(ax)
    if created:
        ax.set_title(f"Smooth reliability diagram (smooth ECE {curve['smooth_ece']:.3f})", fontsize="medium")
    return fig if created else ax


def plot_recalibration(out: dict, *, ax: Any = None):
    """Before/after posterior means and HDIs of ECE, NLL and Brier from :func:`pbassess.calibration.evaluation.recalibrate`.

    One row per quantity, each on its own scale relative to its "before" mean (1 = unchanged).

    Examples
    --------
    >>> out = {"method": "platt", "ci_prob": 0.95, "posterior": {
    ...     "before": {"ece": {"mean": 0.1, "hdi": [0.08, 0.12]}, "nll": {"mean": 0.5, "hdi": [0.45, 0.55]},
    ...                "brier": {"mean": 0.2, "hdi": [0.18, 0.22]}},
    ...     "after": {"ece": {"mean": 0.02, "hdi": [0.01, 0.03]}, "nll": {"mean": 0.4, "hdi": [0.36, 0.44]},
    ...               "brier": {"mean": 0.18, "hdi": [0.16, 0.2]}}}}
    >>> ax = plot_recalibration(out).axes[0]
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['ece', 'nll', 'brier']
    """
    fig, ax, created = figure_and_axes(ax, (7.0, 2.8), layout="constrained")
    keys = ["ece", "nll", "brier"]
    y = np.arange(len(keys))[::-1].astype(float)
    for offset, side, color in ((0.12, "before", "C3"), (-0.12, "after", "C0")):
        post = out["posterior"][side]
        ref = np.array([out["posterior"]["before"][k]["mean"] for k in keys])
        mean = np.array([post[k]["mean"] for k in keys]) / ref
        lo = np.array([post[k]["hdi"][0] for k in keys]) / ref
        hi = np.array([post[k]["hdi"][1] for k in keys]) / ref
        ax.hlines(y + offset, lo, hi, color=color, lw=2)
        ax.plot(mean, y + offset, "o", color=color, label=side)
    ax.axvline(1.0, color="0.5", lw=1, ls="--", label="unchanged")
    ax.set_yticks(y, keys)
    ax.set_xlabel(f"posterior mean and {100 * out.get('ci_prob', 0.95):.10g}% HDI, relative to before")
    outside_legend(ax)
    if created:
        ax.set_title(f"Recalibration: {out['method']}", fontsize="medium")
    return fig if created else ax
