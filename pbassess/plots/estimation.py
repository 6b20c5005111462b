"""Figures of an :class:`~pbassess.estimation.EstimationResult` (drawing only, no statistics).

:func:`plot_estimates`: each method's estimate and interval per group, groups along the x axis.
The figure widens with the number of groups, group names turn vertical when they would touch
their neighbours, and the legend sits to the right of the axes, off the data.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.plots._common import figure_and_axes

__all__ = ["plot_estimates"]

#: Horizontal room per group (inches) of a new figure, and its bounds.
INCHES_PER_GROUP: float = 0.45
MIN_WIDTH, MAX_WIDTH = 4.5, 16.0


def _labels_touch(labels: list[Any]) -> bool:
    """Whether any two neighbouring tick labels' drawn boxes overlap (needs a drawn canvas)."""
    boxes = sorted((t.get_window_extent() for t in labels if t.get_text()), key=lambda b: b.x0)
    return any(a.x1 > b.x0 for a, b in zip(boxes, boxes[1:], strict=False))


def _readable_group_labels(ax: Any, names: list[str]) -> None:
    """Put ``names`` on the x ticks horizontally, or vertically (and then smaller) when they would overlap."""
    ax.set_xticks(np.arange(len(names)), names)
    fig = ax.figure
    fig.canvas.draw()
    if not _labels_touch(ax.get_xticklabels()):
        return
    size = ax.get_xticklabels()[0].get_fontsize()
    for label in ax.get_xticklabels():
        label.set_rotation(90)
        label.set_ha("center")
    fig.canvas.draw()
    while _labels_touch(ax.get_xticklabels()) and size > 4:
        size -= 1
        for label in ax.get_xticklabels():
            label.set_fontsize(size)
        fig.canvas.draw()


def plot_estimates(result: Any, *, ax: Any = None, **errorbar: Any):
    """Estimates with their intervals: one marker per method, side by side within each group.

    Parameters
    ----------
    result : EstimationResult
    ax : matplotlib.axes.Axes, optional
        Draw into this Axes and return it; by default a new figure, as wide as the groups need.
    **errorbar
        Passed to :meth:`matplotlib.axes.Axes.errorbar` (e.g. ``ms``, ``capsize``).

    Returns
    -------
    matplotlib.figure.Figure or matplotlib.axes.Axes

    Examples
    --------
    >>> from pbassess.data.examples import example_pool
    >>> from pbassess.estimation import estimate
    >>> pool = example_pool(600, n_labeled=120, sites=["north", "south", "east"], seed=0)
    >>> fig = plot_estimates(estimate(pool, by="site", methods="classical,ppi", seed=0))
    >>> ax = fig.axes[0]
    >>> [t.get_text() for t in ax.get_xticklabels()], [t.get_text() for t in ax.get_legend().get_texts()]
    (['east', 'north', 'south'], ['classical', 'ppi'])
    """
    groups = [str(g) for g in result.groups]
    methods = list(result.methods)
    width = min(max(MIN_WIDTH, INCHES_PER_GROUP * len(groups) + 2.5), MAX_WIDTH)
    fig, ax, created = figure_and_axes(ax, (width, 3.8), layout="constrained")
    x = np.arange(len(groups))
    spread = min(0.15, 0.8 / max(len(methods), 1))
    for i, method in enumerate(methods):
        post = result.posterior.sel(estimator=method)
        mean = post["mean"].to_numpy()
        err = np.stack([mean - post["lower"].to_numpy(), post["upper"].to_numpy() - mean])
        options = {"fmt": "o", "capsize": 3, "ms": 4, "color": f"C{i}", **errorbar}
        ax.errorbar(x + (i - (len(methods) - 1) / 2) * spread, mean, yerr=err, label=method, **options)
    ax.set_xlim(-0.5, len(groups) - 0.5)
    ax.set_ylabel(result.options.get("metric", "metric"))
    pct = f"{100 * result.ci_prob:.10g}%"
    ax.legend(title=f"estimator ({pct} interval)", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0,
              fontsize="small", title_fontsize="small")  # off the data
    if created:
        ax.set_xlabel(str(result.options.get("by") or "group"))
    _readable_group_labels(ax, groups)
    return fig if created else ax
