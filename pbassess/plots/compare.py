"""Figures of group / model comparisons (drawing only, no statistics).

* :func:`plot_comparison`: the metric per group with its HDI, and each pairwise difference
  with its HDI against the region of practical equivalence.
* :func:`plot_fairness`: for every classifier of a fairness data set, the metric per group and
  the group difference with credible intervals (from :func:`pbassess.assess.fairness.fairness_comparisons`).
* :func:`plot_labeling_curves`: how often the ROPE decision matches the full-data one as labels
  are acquired at random or actively.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from pbassess.plots._common import figure_and_axes

__all__ = ["plot_comparison", "plot_fairness", "plot_labeling_curves"]


def plot_comparison(result: Any, *, axes: Any = None):
    """Two panels: metric per group, and differences per pair with the ROPE band.

    Parameters
    ----------
    result : ComparisonResult
        A result of :func:`~pbassess.assess.compare_groups` or :func:`~pbassess.assess.compare_models`.
    axes : sequence of two matplotlib.axes.Axes, optional
        Draw into these (groups, differences); default a new figure.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import numpy as np
    >>> from pbassess import Predictions
    >>> from pbassess.assess import compare_groups
    >>> y, site = np.tile([1, 0], 60), np.repeat(["x", "y", "z"], 40)
    >>> p = Predictions.from_binary_scores(np.where((y == 1) | (site == "z"), 0.8, 0.3), y, groups={"site": site})
    >>> fig = plot_comparison(compare_groups(p, "site", rope=0.05, seed=0))
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['x (n=40)', 'y (n=40)', 'z (n=40)']
    >>> [t.get_text() for t in fig.axes[1].get_yticklabels()]
    ['x - y', 'x - z', 'y - z']
    >>> [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    ['ROPE +-0.05', 'no difference', '95% HDI']
    """
    import matplotlib.pyplot as plt

    groups = result.group_summary()
    pairs = result.pairs_summary()
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(10, 0.4 * max(len(groups), len(pairs)) + 2))
    else:
        fig = axes[0].figure
    pct = int(round(result.ci_prob * 100))
    y = np.arange(len(groups))[::-1]
    ax = axes[0]
    ax.hlines(y, groups["hdi_low"], groups["hdi_high"], lw=2.5, color="C0", label=f"{pct}% HDI")
    ax.plot(groups["mean"], y, "o", color="C0")
    ax.set_yticks(y)
    ax.set_yticklabels([f"{g} (n={int(n)})" for g, n in zip(groups["group"], groups["n"], strict=True)])
    ax.set_xlabel(result.compared_metric)
    ax.set_title(f"{result.compared_metric} per {result.options.get('by', 'group')}")
    ax = axes[1]
    yp = np.arange(len(pairs))[::-1]
    r = result.rope
    if r > 0:
        ax.axvspan(-r, r, color="0.88", label=f"ROPE +-{r:g}")
    ax.axvline(0, color="0.5", lw=1, label="no difference")
    ax.hlines(yp, pairs["hdi_low"], pairs["hdi_high"], lw=2.5, color="C1", label=f"{pct}% HDI")
    ax.plot(pairs["diff_mean"], yp, "o", color="C1")
    for yi, row in zip(yp, pairs.itertuples(), strict=True):
        # above the interval, centred on its mean: a label right of the interval ran out of the axes into the
        # legend when the interval reached the right edge
        ax.annotate(f"P(>0)={row.p_greater:.2f}", (row.diff_mean, yi), xytext=(0, 5), textcoords="offset points",
                    ha="center", va="bottom", fontsize="x-small")
    ax.set_yticks(yp)
    ax.set_yticklabels([f"{a} - {b}" for a, b in zip(pairs["a"], pairs["b"], strict=True)])
    ax.set_xlabel("difference")
    ax.set_title("pairwise differences")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)  # off the data
    fig.tight_layout()
    return fig


def plot_fairness(comparisons: Mapping[str, Any], *, pair: int = 0, axes: Any = None):
    """Metric per group and group difference with HDIs, one row per classifier.

    Parameters
    ----------
    comparisons : mapping of classifier name to ComparisonResult
    pair : int
        Which pair of groups to show in the difference panel (default the first).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import numpy as np
    >>> from pbassess import Predictions
    >>> from pbassess.assess import compare_groups
    >>> y, sex = np.tile([1, 0], 50), np.repeat(["F", "M"], 50)
    >>> scores = {"LR": np.where(y == 1, 0.8, 0.3), "NB": np.where((y == 1) | (sex == "M"), 0.8, 0.3)}
    >>> comparisons = {name: compare_groups(Predictions.from_binary_scores(s, y, groups={"sex": sex}), "sex",
    ...                                     rope=0.05, seed=0) for name, s in scores.items()}
    >>> fig = plot_fairness(comparisons)  # or plot_fairness(fairness_comparisons("adult-sex", "sex"))
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()], fig.axes[1].get_xlabel()
    (['LR', 'NB'], 'F - M')
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    ['F', 'M']
    """
    import matplotlib.pyplot as plt

    names = list(comparisons)
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(11, 0.45 * len(names) + 1.8), sharey=True)
    else:
        fig = axes[0].figure
    y = np.arange(len(names))[::-1].astype(float)
    first = comparisons[names[0]]
    groups = first.groups
    offsets = np.linspace(-0.25, 0.25, len(groups)) if len(groups) > 1 else np.zeros(1)
    for gi, g in enumerate(groups):
        means, lows, highs = [], [], []
        for name in names:
            t = comparisons[name].group_summary().set_index("group").loc[g]
            means.append(t["mean"])
            lows.append(t["hdi_low"])
            highs.append(t["hdi_high"])
        axes[0].hlines(y + offsets[gi], lows, highs, color=f"C{gi}", lw=2)
        axes[0].plot(means, y + offsets[gi], "o", color=f"C{gi}", ms=4, label=str(g))
    axes[0].set_yticks(y)
    axes[0].set_yticklabels(names)
    axes[0].set_xlabel(first.compared_metric)
    axes[0].legend(fontsize="small", title=str(first.options.get("by", "group")), loc="upper center", bbox_to_anchor=(0.5, -0.18), borderaxespad=0)  # off the data
    rows = [comparisons[n].pairs_summary().iloc[pair] for n in names]
    r = first.rope
    if r > 0:
        axes[1].axvspan(-r, r, color="0.88", label=f"ROPE +-{r:g}")
    axes[1].axvline(0, color="0.5", lw=1, label="no difference")
    axes[1].hlines(y, [row["hdi_low"] for row in rows], [row["hdi_high"] for row in rows], color="C3", lw=2)
    axes[1].plot([row["diff_mean"] for row in rows], y, "o", color="C3", ms=4)
    axes[1].set_xlabel(f"{rows[0]['a']} - {rows[0]['b']}")
    axes[1].legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.18), borderaxespad=0)  # off the data
    pct = int(round(first.ci_prob * 100))
    fig.suptitle(f"{first.compared_metric} by {first.options.get('by', 'group')}: means and {pct}% HDIs")
    fig.tight_layout()
    return fig


def plot_labeling_curves(simulation: Any, *, ax: Any = None):
    """Match rate of the ROPE decision vs number of labels, per acquisition strategy.

    Parameters
    ----------
    simulation : RopeLabelingSimulation
        A result of :func:`~pbassess.assess.simulate_rope_labeling`.
    ax : matplotlib.axes.Axes, optional
        Draw into this Axes.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import numpy as np
    >>> from pbassess import Predictions
    >>> from pbassess.assess import simulate_rope_labeling
    >>> rng = np.random.default_rng(0)
    >>> g = np.repeat(["a", "b"], [300, 100])
    >>> correct = rng.random(400) < np.where(g == "a", 0.9, 0.6)
    >>> p = Predictions.from_top1(np.where(correct, "x", "y"), np.full(400, 0.8), np.full(400, "x"),
    ...                           classes=["x", "y"], groups={"g": g})
    >>> sim = simulate_rope_labeling(p, "g", rope=0.05, n_runs=10, seed=1)
    >>> fig = plot_labeling_curves(sim)
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == [
    ...     "random", f"random needs {sim.labels_needed['random']} labels",
    ...     "active", f"active needs {sim.labels_needed['active']} labels", "target 0.95"]
    True
    """
    fig, ax, _ = figure_and_axes(ax, (6.5, 4))
    for i, (strategy, rate) in enumerate(simulation.match_rate.items()):
        needed = simulation.labels_needed[strategy]
        label = strategy if needed is not None else f"{strategy} (target not reached)"
        ax.plot(simulation.checkpoints, rate, marker=".", color=f"C{i}", label=label)
        if needed is not None:
            ax.axvline(needed, color=f"C{i}", ls=":", lw=1, label=f"{strategy} needs {needed} labels")
    ax.axhline(simulation.target, color="0.5", ls="--", lw=1, label=f"target {simulation.target:g}")
    ax.set_xscale("log")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("labels acquired")
    ax.set_ylabel("P(decision = full-data decision)")
    ax.set_title(f"{simulation.groups[0]} - {simulation.groups[1]}: full-data decision "
                 f"'{simulation.full_decision}' (r={simulation.rope:g})")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)  # off the data
    fig.tight_layout()
    return fig
