"""The figure of a prior comparison: ELPD per prior, and each prior's predictive accuracy."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["plot_prior_comparison"]


def plot_prior_comparison(comparison: Any, *, axes: Any = None):
    """Two panels: leave-one-item-out ELPD per prior (+- 1 standard error), and prior predictive accuracy.

    The right panel shows, for each prior, the 50% and 90% intervals of the overall accuracy of
    the labeled items simulated from the prior, against the observed accuracy (dashed line): a
    prior whose interval misses the line expected other labels than those seen.

    Parameters
    ----------
    comparison : PriorComparison
        From :func:`pbassess.compare_priors` (or reloaded).
    axes : sequence of two matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import pbassess as pb
    >>> fig = plot_prior_comparison(pb.compare_priors(pb.load_data(), seed=0))
    >>> [ax.get_xlabel() for ax in fig.axes]
    ['ELPD (leave one item out)', 'accuracy of the labeled items']
    """
    import matplotlib.pyplot as plt

    rows = comparison.options["rows"]
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(9.0, 0.45 * len(rows) + 1.6), sharey=True, layout="constrained")
    else:
        fig = axes[0].figure
    y = np.arange(len(rows))[::-1]
    names = [r["prior"] for r in rows]
    elpd = np.array([r["elpd_loo"] for r in rows])
    se = np.array([r["se"] for r in rows])
    left, right = axes
    left.errorbar(elpd, y, xerr=se, fmt="o", color="C0", capsize=3)
    left.set_yticks(y, names)
    left.set_xlabel("ELPD (leave one item out)")
    left.set_title(f"higher is better ({comparison.options['loo']} LOO)", fontsize=9)
    for yi, row in zip(y, rows, strict=True):
        q = row["prior_predictive_accuracy"]
        right.hlines(yi, q[0], q[4], color="C1", lw=1.5)
        right.hlines(yi, q[1], q[3], color="C1", lw=5)
        right.plot(q[2], yi, "o", color="white", mec="C1", ms=5)
    observed = comparison.options["assessed"]["observed_accuracy"]
    right.axvline(observed, color="0.2", ls="--", lw=1, label=f"observed {observed:.3f}")
    right.set_xlabel("accuracy of the labeled items")
    right.set_title("prior predictive (50% and 90%)", fontsize=9)
    right.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    return fig
