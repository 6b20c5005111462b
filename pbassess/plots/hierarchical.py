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

from pbassess.plots._common import count_strip, figure_and_axes

__all__ = [
    "plot_ece",
    "plot_environment_accuracy",
    "plot_environment_class_accuracy",
    "plot_environment_reliability",
    "plot_pooling_comparison",
]


def plot_environment_accuracy(result: Any, *, ax: Any = None, show_raw: bool = True):
    """Forest plot of a :class:`~pbassess.assess.hierarchical.HierarchicalResult`.

    Parameters
    ----------
    result : HierarchicalResult
        A result of :func:`~pbassess.assess.assess_hierarchical` (without ``per_class``).
    ax : matplotlib.axes.Axes, optional
        Draw into this Axes.
    show_raw : bool
        Also mark each environment's labeled accuracy k/n.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from pbassess.data.examples import three_site_pool
    >>> p = three_site_pool()  # sites a, b, c: 40, 40 and 8 items, 90%, 70% and 50% right
    >>> from pbassess.assess import assess_hierarchical
    >>> res = assess_hierarchical(p, "site", seed=0, sample_kwargs={"draws": 100, "tune": 100, "chains": 1,
    ...                           "sampler": "pymc"})  # a tiny NUTS run, for the example only
    >>> fig = plot_environment_accuracy(res)
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['a (n=40)', 'b (n=40)', 'c (n=8)']
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()]  # doctest: +NORMALIZE_WHITESPACE
    ['population mean 95% HDI', 'population mean', 'hierarchical posterior 95% HDI',
     'labeled accuracy k/n (independent)']
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

    Parameters
    ----------
    result : HierarchicalResult
        A result of :func:`~pbassess.assess.assess_hierarchical` with ``per_class=True``.
    ax : matplotlib.axes.Axes, optional
        Draw into this Axes.
    cmap : str
        Matplotlib colour map of the accuracies (0 to 1).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import numpy as np
    >>> from pbassess import Predictions
    >>> from pbassess.assess import assess_hierarchical
    >>> rng = np.random.default_rng(0)
    >>> predicted = np.tile(["x", "y"], 60)
    >>> truth = np.where(rng.random(120) < 0.8, predicted, np.where(predicted == "x", "y", "x"))
    >>> p = Predictions.from_top1(predicted, np.full(120, 0.8), truth, classes=["x", "y"],
    ...                           groups={"site": np.repeat(["a", "b", "c"], 40)})
    >>> res = assess_hierarchical(p, "site", per_class=True, seed=0, sample_kwargs={"draws": 100, "tune": 100,
    ...                           "chains": 1, "sampler": "pymc"})  # a tiny NUTS run, for the example only
    >>> fig = plot_environment_class_accuracy(res)
    >>> fig.axes[0].images[0].get_array().shape  # environments x predicted classes
    (3, 2)
    >>> [t.get_text() for t in fig.axes[0].get_xticklabels()], fig.axes[1].get_ylabel()
    (['x', 'y'], 'posterior mean accuracy')
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

    Parameters
    ----------
    result : HierarchicalCalibrationResult
        A result of :func:`~pbassess.assess.assess_hierarchical_calibration`.
    ncols : int
        Panels per row (one panel per environment).
    figsize_per : float
        Width and height of a panel, in inches.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from pbassess.assess import assess_hierarchical_calibration
    >>> from pbassess.data.examples import example_pool
    >>> p = example_pool(300, sites=["x", "y", "z"], seed=0)
    >>> res = assess_hierarchical_calibration(p, "site", bins=5, seed=0, sample_kwargs={"draws": 100, "tune": 100,
    ...                                       "chains": 1, "sampler": "pymc"})  # a tiny NUTS run, for the example only
    >>> fig = plot_environment_reliability(res, ncols=2)  # 2 x 2 panels: the spare one holds the legend
    >>> [ax.get_title().splitlines()[0] for ax in fig.axes[:3]]
    ['x', 'y', 'z']
    >>> sum(int(t.get_text()) for t in fig.axes[0].texts) == int(res.counts["n_labeled"][0].sum())
    True
    >>> [t.get_text() for t in fig.axes[3].get_legend().get_texts()][-1]
    'labeled items per bin'
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
    bottom = 0.0
    for i, env in enumerate(envs):
        ax = axes[i // ncols][i % ncols]
        ax.plot([0, 1], [0, 1], color="0.6", lw=1, ls="--", label="perfect calibration")
        ok = np.isfinite(score[i])
        order = np.argsort(pooled_score)
        ax.plot(pooled_score[order], rel_mean[order], color="0.4", lw=1, label="population")
        ax.errorbar(score[i][ok], acc_mean[i][ok],
                    yerr=np.abs(hdi[i][ok].T - acc_mean[i][ok]), fmt="o", ms=3, color="C0", capsize=2,
                    label=f"posterior mean, {int(round(result.ci_prob * 100))}% HDI")
        ax.set_title(f"{env}\nECE {ece_mean[i]:.3f}, n={int(n[i].sum())}", fontsize="small")
        ax.set_xlim(0, 1.02)
        count_strip(ax, score[i][ok], n[i][ok], fontsize=5, color="0.3")  # labeled items per bin, under the data
        bottom = min(bottom, ax.get_ylim()[0])
    axes[0][0].set_ylim(bottom, 1.02)  # shared: the deepest strip of all panels
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
    >>> from pbassess.assess import assess_hierarchical_calibration
    >>> from pbassess.data.examples import example_pool
    >>> p = example_pool(300, sites=["x", "y", "z"], seed=0)
    >>> res = assess_hierarchical_calibration(p, "site", bins=5, seed=0, sample_kwargs={"draws": 100, "tune": 100,
    ...                                       "chains": 1, "sampler": "pymc"})  # a tiny NUTS run, for the example only
    >>> ax = plot_ece(res).axes[0]
    >>> [t.get_text() for t in ax.get_yticklabels()], [t.get_text() for t in ax.get_legend().get_texts()]
    (['x', 'y', 'z'], ['posterior mean and HDI', 'plug-in ECE of labeled items'])
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

    Parameters
    ----------
    comparison : ModelComparison
        A result of :func:`~pbassess.assess.compare_pooling` (or ``compare_variants``).
    ax : matplotlib.axes.Axes, optional
        Draw into this Axes.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import numpy as np
    >>> from pbassess.assess.pooling import POOLING_VARIANTS, compare_variants
    >>> from pbassess.hierarchical.counts import EnvironmentCounts
    >>> counts = EnvironmentCounts("site", ("a", "b", "c"), np.array([40, 40, 8]), np.array([36, 28, 4]),
    ...                            np.array([40, 40, 8]), np.array([0.8, 0.8, 0.8]))
    >>> cmp = compare_variants(counts, POOLING_VARIANTS, prior_draws=0, seed=0, warn=False, sample_kwargs={"draws": 100,
    ...                        "tune": 100, "chains": 1, "sampler": "pymc"})  # tiny runs; or compare_pooling(preds, "site")
    >>> fig = plot_pooling_comparison(cmp)
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    ['independent', 'pooled', 'hierarchical', 'k/n']
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['a (n=40)', 'b (n=40)', 'c (n=8)']
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
