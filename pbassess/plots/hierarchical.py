"""Figures of the hierarchical multi-environment results (drawing only, no statistics).

* :func:`plot_environment_accuracy`: forest plot of each environment's posterior accuracy
  (mean and HDI) next to its raw labeled accuracy k/n, with the population mean and its HDI
  as a band: shrinkage is visible as the gap between a dot and its cross.
* :func:`plot_environment_class_accuracy`: heatmap of the posterior mean accuracy per
  environment x predicted class.
* :func:`plot_environment_reliability`: a reliability diagram per environment (posterior bin
  accuracy with HDI against mean confidence) with the pooled population curve, titled with
  each environment's ECE.
* :func:`plot_ece`: forest plot of the environments' ECE posteriors.
* :func:`plot_pooling_comparison`: the three fits (independent, pooled, hierarchical) of a
  :class:`~pbassess.assess.pooling.ModelComparison` side by side.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.plots._common import figure_and_axes

__all__ = [
    "plot_ece",
    "plot_environment_accuracy",
    "plot_environment_class_accuracy",
    "plot_environment_reliability",
    "plot_pooling_comparison",
]


def plot_environment_accuracy(result: Any, *, ax: Any = None, show_raw: bool = True):
    """Forest plot of a :class:`~pbassess.assess.hierarchical.HierarchicalResult`.

    Examples
    --------
    >>> # fig = plot_environment_accuracy(assess_hierarchical(pred, "environment"))
    """
    table = result.summary()
    env_rows = table[table["level"] == "environment"].reset_index(drop=True)
    pop = table[table["level"] == "population"].set_index("environment")
    fig, ax, _ = figure_and_axes(ax, (9.5, 0.45 * len(env_rows) + 1.6))  # room for the legend on the right
    y = np.arange(len(env_rows))[::-1]
    if "population mean" in pop.index:
        row = pop.loc["population mean"]
        ax.axvspan(row["hdi_low"], row["hdi_high"], color="0.85", zorder=0,
                   label=f"population mean {int(round(result.ci_prob * 100))}% HDI")
        ax.axvline(row["mean"], color="0.5", lw=1, zorder=1, label="population mean")
    ax.hlines(y, env_rows["hdi_low"], env_rows["hdi_high"], color="C0", lw=2.5,
              label=f"{result.pooling} posterior {int(round(result.ci_prob * 100))}% HDI")
    ax.plot(env_rows["mean"], y, "o", color="C0")
    if show_raw:
        raw = env_rows["raw_accuracy"].to_numpy(dtype=float)
        ok = np.isfinite(raw)
        ax.plot(raw[ok], y[ok], "x", color="C3", ms=7, label="labeled accuracy k/n (independent)")
    ax.set_yticks(y)
    ax.set_yticklabels([f"{e} (n={int(n)})" for e, n in zip(env_rows["environment"], env_rows["n_labeled"], strict=True)])
    ax.set_xlabel("accuracy")
    ax.set_title(f"Accuracy per {result.by}")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", borderaxespad=0)  # off the data
    fig.tight_layout()
    return fig


def plot_environment_class_accuracy(result: Any, *, ax: Any = None, cmap: str = "viridis"):
    """Heatmap of posterior mean accuracy, environments x predicted classes.

    Examples
    --------
    >>> # fig = plot_environment_class_accuracy(assess_hierarchical(pred, "environment", per_class=True))
    """
    mean = result.interval("accuracy")["mean"]
    envs, classes = result.environments, result.classes
    fig, ax, _ = figure_and_axes(ax, (min(2 + 0.12 * len(classes), 16), 1.2 + 0.4 * len(envs)))
    im = ax.imshow(mean, aspect="auto", cmap=cmap, vmin=0, vmax=1)
    ax.set_yticks(range(len(envs)))
    ax.set_yticklabels(envs)
    step = max(1, len(classes) // 25)
    ax.set_xticks(range(0, len(classes), step))
    ax.set_xticklabels(classes[::step], rotation=90, fontsize="small")
    ax.set_xlabel("predicted class")
    fig.colorbar(im, ax=ax, label="posterior mean accuracy")
    ax.set_title(f"Accuracy per {result.by} x predicted class")
    fig.tight_layout()
    return fig


def plot_environment_reliability(result: Any, *, ncols: int = 4, figsize_per: float = 2.6):
    """Reliability diagrams of a :class:`~pbassess.assess.hierarchical.HierarchicalCalibrationResult`.

    Examples
    --------
    >>> # fig = plot_environment_reliability(assess_hierarchical_calibration(pred, "environment"))
    """
    import matplotlib.pyplot as plt

    envs = result.environments
    ncols = min(ncols, len(envs))
    nrows = int(np.ceil(len(envs) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(figsize_per * ncols, figsize_per * nrows + 0.4),
                             squeeze=False, sharex=True, sharey=True)
    acc = result.interval("bin_accuracy")  # posterior summaries come from the result: plots only draw
    acc_mean, hdi = acc["mean"], acc["hdi"]
    rel_mean = result.interval("reliability")["mean"]
    ece_mean = result.interval("ece")["mean"]
    score = result.counts["score"].to_numpy()
    n = result.counts["n_labeled"].to_numpy()
    pooled_score = np.nanmean(score, axis=0)
    for i, env in enumerate(envs):
        ax = axes[i // ncols][i % ncols]
        ax.plot([0, 1], [0, 1], color="0.6", lw=1, ls="--", label="perfect calibration")
        ok = np.isfinite(score[i])
        order = np.argsort(pooled_score)
        ax.plot(pooled_score[order], rel_mean[order], color="0.4", lw=1, label="population")
        ax.errorbar(score[i][ok], acc_mean[i][ok],
                    yerr=np.abs(hdi[i][ok].T - acc_mean[i][ok]), fmt="o", ms=3, color="C0", capsize=2,
                    label=f"posterior mean, {int(round(result.ci_prob * 100))}% HDI")
        for x_bin, n_bin in zip(score[i][ok], n[i][ok], strict=True):  # labeled items per bin
            ax.text(x_bin, 0.01, str(int(n_bin)), ha="center", va="bottom", fontsize=5, color="0.3")
        ax.set_title(f"{env}\nECE {ece_mean[i]:.3f}, n={int(n[i].sum())}", fontsize="small")
        ax.set_xlim(0, 1.02)
        ax.set_ylim(0, 1.02)
    for j in range(len(envs), nrows * ncols):
        axes[j // ncols][j % ncols].axis("off")
    handles, labels = axes[0][0].get_legend_handles_labels()
    handles.append(plt.Line2D([], [], ls="none", marker="$n$", color="0.3"))
    labels.append("labeled items per bin")
    if len(envs) < nrows * ncols:  # a spare panel holds the legend, off every diagram
        axes[-1][-1].legend(handles, labels, loc="center", fontsize="x-small", frameon=False)
    else:
        fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="x-small", frameon=False)
    fig.supxlabel("confidence")
    fig.supylabel("accuracy")
    fig.tight_layout()
    return fig


def plot_ece(result: Any, *, ax: Any = None):
    """Forest plot of each environment's ECE posterior.

    Examples
    --------
    >>> # fig = plot_ece(assess_hierarchical_calibration(pred, "environment"))
    """
    table = result.summary()
    fig, ax, _ = figure_and_axes(ax, (6, 0.45 * len(table) + 1.4))
    y = np.arange(len(table))[::-1]
    ax.hlines(y, table["hdi_low"], table["hdi_high"], lw=2.5, color="C1")
    ax.plot(table["ece_mean"], y, "o", color="C1", label="posterior mean and HDI")
    ax.plot(table["plugin_ece"], y, "x", color="C3", label="plug-in ECE of labeled items")
    ax.set_yticks(y)
    ax.set_yticklabels(table["environment"])
    ax.set_xlabel("expected calibration error")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)  # off the data
    fig.tight_layout()
    return fig


def plot_pooling_comparison(comparison: Any, *, ax: Any = None):
    """Posterior accuracy per environment under each fitted variant, side by side.

    Examples
    --------
    >>> # fig = plot_pooling_comparison(compare_pooling(counts))
    """
    results = comparison.results
    first = next(iter(results.values()))
    envs = first.environments
    fig, ax, _ = figure_and_axes(ax, (7, 0.55 * len(envs) + 1.6))
    y0 = np.arange(len(envs))[::-1].astype(float)
    width = 0.7 / max(len(results), 1)
    for j, (name, res) in enumerate(results.items()):
        table = res.summary()
        rows = table[table["level"] == "environment"]
        y = y0 + 0.35 - (j + 0.5) * width
        ax.hlines(y, rows["hdi_low"], rows["hdi_high"], color=f"C{j}", lw=2)
        ax.plot(rows["mean"], y, "o", color=f"C{j}", ms=4, label=name)
    raw = first.summary().query("level == 'environment'")["raw_accuracy"].to_numpy(dtype=float)
    ok = np.isfinite(raw)
    ax.plot(raw[ok], y0[ok], "kx", label="k/n")
    n = first.counts["n_labeled"].to_numpy()
    ax.set_yticks(y0)
    ax.set_yticklabels([f"{e} (n={int(c)})" for e, c in zip(envs, n, strict=True)])
    ax.set_xlabel("accuracy")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)  # off the data
    fig.tight_layout()
    return fig
