"""Figures of a :class:`~pbassess.assess.cost.CostResult`: confusion heatmap and expected cost.

Each function takes a result and keyword-only options and returns the matplotlib Figure, or the
Axes when one is passed with ``ax=``. They only draw: every number comes from the result
(:meth:`~pbassess.assess.cost.CostResult.confusion_probabilities` and
:meth:`~pbassess.assess.cost.CostResult.summary`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pbassess.errors import ConfigError
from pbassess.plots._common import check_count, figure_and_axes, forest_axes

__all__ = ["plot_confusion", "plot_expected_cost"]

#: Above this many classes the heatmap drops its tick labels (they would overlap).
_MAX_TICK_LABELS = 30


def plot_confusion(result: Any, *, classes: Sequence[str] | None = None, ax: Any = None):
    """Heatmap of the posterior mean confusion probabilities P(true | predicted).

    Rows are predicted classes, columns true classes; each row sums to one.

    Parameters
    ----------
    result : CostResult
    classes : sequence of str, optional
        Show only these classes (rows and columns, in this order); by default all.
    ax : matplotlib.axes.Axes, optional
        Draw into this Axes (then the Axes is returned).

    Returns
    -------
    matplotlib.figure.Figure or matplotlib.axes.Axes

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.assess.cost import assess_confusion
    >>> p = Predictions.from_top1(["a", "b", "c"] * 10, [0.9] * 30, ["a", "b", "b"] * 10)
    >>> fig = plot_confusion(assess_confusion(p, seed=0), classes=["b", "c"])
    >>> fig.axes[0].images[0].get_array().shape
    (2, 2)
    """
    conf = result.confusion_probabilities()
    if classes is not None:
        wanted = [str(c) for c in classes]
        known = set(result.classes)
        unknown = [c for c in wanted if c not in known]
        if unknown:
            raise ConfigError(f"classes: unknown class name(s) {', '.join(repr(c) for c in unknown[:5])}")
        if not wanted:
            raise ConfigError("classes: give at least one class name")
        conf = conf.sel(predicted=wanted, true=wanted)
    values = conf.to_numpy()
    k = values.shape[0]
    side = min(max(3.5, 0.25 * k + 2.0), 14.0)
    fig, ax, created = figure_and_axes(ax, (side + 1.0, side), layout="constrained")
    image = ax.imshow(values, cmap="viridis", vmin=0.0, vmax=1.0, interpolation="nearest", aspect="equal")
    names = [str(v) for v in conf["predicted"].to_numpy()]
    if k <= _MAX_TICK_LABELS:
        ax.set_xticks(np.arange(k), names, rotation=90)
        ax.set_yticks(np.arange(k), names)
    ax.set_xlabel("true class")
    ax.set_ylabel("predicted class")
    fig.colorbar(image, ax=ax, label="P(true | predicted), posterior mean", shrink=0.8)
    if created:
        ax.set_title(f"Confusion probabilities ({result.engine})")
    return fig if created else ax


def plot_expected_cost(result: Any, *, top: int | None = None, ax: Any = None):
    """Forest plot of the expected cost per predicted class: posterior mean and HDI, sorted.

    The most costly class is at the top.

    Parameters
    ----------
    result : CostResult
    top : int, optional
        Show only the ``top`` classes with the highest posterior mean cost; by default all.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.figure.Figure or matplotlib.axes.Axes

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.assess.cost import assess_confusion
    >>> p = Predictions.from_top1(["a", "b", "c"] * 10, [0.9] * 30, ["a", "b", "b"] * 10)
    >>> fig = plot_expected_cost(assess_confusion(p, seed=0), top=2)
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['c', 'a']
    """
    top = check_count("top", top)
    table = result.summary().sort_values("mean", ascending=False, kind="stable")
    if top is not None:
        table = table.head(top)
    n_rows = len(table)
    fig, ax, created = forest_axes(ax, n_rows)
    y = np.arange(n_rows)[::-1]
    ax.hlines(y, table["hdi_low"].to_numpy(), table["hdi_high"].to_numpy(), color="C0", lw=2,
              label=f"{100 * result.ci_prob:.10g}% HDI")
    ax.plot(table["mean"].to_numpy(), y, "o", color="C0", ms=4, label="posterior mean")
    ax.set_yticks(y, [str(v) for v in table.index])
    ax.set_ylim(-0.7, n_rows - 0.3)
    ax.set_xlim(left=0.0)
    ax.set_xlabel(f"expected cost ({result.cost_name})")
    ax.set_ylabel("predicted class")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", borderaxespad=0)  # off the data
    if created:
        ax.set_title(f"Expected misclassification cost per predicted class ({result.engine})")
    return fig if created else ax
