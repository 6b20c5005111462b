"""Figures of an :class:`~pbassess.assess.accuracy.AccuracyResult`: forest, P(extreme), rank intervals.

Each function takes a result and keyword-only options and returns the matplotlib Figure, or
the Axes when one is passed with ``ax=``. They only draw: every number comes from the
result's own tables (:meth:`summary`, :meth:`rank_summary`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.errors import ConfigError
from pbassess.plots._common import check_count, forest_axes

__all__ = ["plot_accuracy", "plot_p_extreme", "plot_rank_intervals"]


def _region_label(result: Any) -> str:
    return getattr(result, "noun", "region")


def plot_accuracy(result: Any, *, top: int | None = None, bottom: int | None = None, ax: Any = None,
                  sort: bool = True):
    """Forest plot of the posterior accuracy of each region: mean and HDI.

    Parameters
    ----------
    result : AccuracyResult
    top, bottom : int, optional
        Show only the ``top`` most accurate and/or the ``bottom`` least accurate regions (by
        posterior mean); by default all regions.
    ax : matplotlib.axes.Axes, optional
        Draw into this Axes (then the Axes is returned).
    sort : bool
        Order rows by posterior mean, least accurate at the top; ``False`` keeps the result's
        region order, first region at the top (ignored when ``top`` or ``bottom`` is given).

    Returns
    -------
    matplotlib.figure.Figure or matplotlib.axes.Axes

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.assess.accuracy import assess_accuracy
    >>> p = Predictions.from_top1(["a", "b", "c"] * 10, [0.9] * 30, ["a", "b", "b"] * 10)
    >>> fig = plot_accuracy(assess_accuracy(p, seed=0), bottom=2)
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['c', 'a']
    """
    top = check_count("top", top)
    bottom = check_count("bottom", bottom)
    table = result.summary()
    if sort or top is not None or bottom is not None:
        table = table.sort_values("mean", kind="stable")
    if top is not None or bottom is not None:
        n_rows = len(table)
        keep = np.zeros(n_rows, dtype=bool)
        if bottom is not None:
            keep[: min(bottom, n_rows)] = True
        if top is not None:
            keep[max(n_rows - top, 0):] = True
        table = table[keep]
    fig, ax, created = forest_axes(ax, len(table))
    y = np.arange(len(table))[::-1]
    mean = table["mean"].to_numpy()
    ax.hlines(y, table["hdi_low"].to_numpy(), table["hdi_high"].to_numpy(), color="C0", lw=2,
              label=f"{100 * result.ci_prob:.10g}% HDI")
    ax.plot(mean, y, "o", color="C0", ms=4, label="posterior mean")
    n = table["n"].to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        raw = np.where(n > 0, table["correct"].to_numpy() / np.maximum(n, 1), np.nan)
    ax.plot(raw, y, "x", color="C3", ms=4, label="labeled accuracy")
    ax.set_yticks(y, [str(v) for v in table.index])
    ax.set_ylim(-0.7, len(table) - 0.3)
    # Zoom on the intervals (accuracies near 1 would otherwise crowd the right edge).
    low = float(np.nanmin(table["hdi_low"].to_numpy())) if len(table) else 0.0
    ax.set_xlim(max(-0.02, low - 0.05), 1.02)
    ax.set_xlabel("accuracy")
    ax.set_ylabel(_region_label(result))
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", borderaxespad=0)
    if created:
        ax.set_title(f"Accuracy per {_region_label(result)} ({result.engine})")
    return fig if created else ax


def plot_p_extreme(result: Any, *, which: str = "lowest", top: int = 20, ax: Any = None):
    """Bar chart of P(region is the least / most accurate) for the ``top`` most probable regions.

    Parameters
    ----------
    result : AccuracyResult
    which : {"lowest", "highest"}
    top : int
        Number of bars (regions with the largest probabilities).
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.figure.Figure or matplotlib.axes.Axes

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.assess.accuracy import assess_accuracy
    >>> p = Predictions.from_top1(["a", "b", "c"] * 10, [0.9] * 30, ["a", "b", "b"] * 10)
    >>> fig = plot_p_extreme(assess_accuracy(p, seed=0), top=2)
    >>> len(fig.axes[0].patches)
    2
    """
    if which not in ("lowest", "highest"):
        raise ConfigError(f"which must be 'lowest' or 'highest', got {which!r}")
    top = check_count("top", top)
    table = result.summary()
    column = f"p_{which}"
    table = table.sort_values(column, ascending=False, kind="stable").head(top)
    fig, ax, created = forest_axes(ax, len(table))
    y = np.arange(len(table))[::-1]
    ax.barh(y, table[column].to_numpy(), color="C3" if which == "lowest" else "C2")
    ax.set_yticks(y, [str(v) for v in table.index])
    ax.set_xlim(0, 1)
    word = "least" if which == "lowest" else "most"
    ax.set_xlabel(f"P({word} accurate)")
    ax.set_ylabel(_region_label(result))
    ax.grid(axis="x", alpha=0.3)
    if created:
        ax.set_title(f"Which {_region_label(result)} is the {word} accurate?")
    return fig if created else ax


def plot_rank_intervals(result: Any, *, top: int | None = None, ax: Any = None):
    """Posterior rank of each region (1 = least accurate): mean rank and rank HDI.

    Parameters
    ----------
    result : AccuracyResult
    top : int, optional
        Show only the ``top`` regions with the smallest mean rank (the likeliest to be among
        the least accurate); by default all regions that have items.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.figure.Figure or matplotlib.axes.Axes

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.assess.accuracy import assess_accuracy
    >>> p = Predictions.from_top1(["a", "b", "c"] * 10, [0.9] * 30, ["a", "b", "b"] * 10)
    >>> fig = plot_rank_intervals(assess_accuracy(p, seed=0))
    >>> len(fig.axes[0].get_yticks())
    3
    """
    top = check_count("top", top)
    table = result.rank_summary().dropna(subset=["mean_rank"]).sort_values("mean_rank", kind="stable")
    if top is not None:
        table = table.head(top)
    fig, ax, created = forest_axes(ax, len(table))
    y = np.arange(len(table))[::-1]
    ax.hlines(y, table["rank_low"].to_numpy(), table["rank_high"].to_numpy(), color="C0", lw=2,
              label=f"{100 * result.ci_prob:.10g}% HDI of rank")
    ax.plot(table["mean_rank"].to_numpy(), y, "o", color="C0", ms=4, label="mean rank")
    ax.set_yticks(y, [str(v) for v in table.index])
    ax.set_xlabel("rank (1 = least accurate)")
    ax.set_ylabel(_region_label(result))
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", borderaxespad=0)  # off the data
    if created:
        ax.set_title(f"Accuracy rank per {_region_label(result)}")
    return fig if created else ax
