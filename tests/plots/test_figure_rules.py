"""The figure rules of issue 13 swept over every plot function that draws lines.

* every drawn line (a reference line, a curve, a threshold) has a legend entry in its figure;
* legends never cover data: each legend's box holds no plotted point of its axes;
* reliability diagrams write the labeled count of every occupied bin, also per environment.

Inputs are small: conjugate fits, a tiny simulation, and hierarchical results drawn from mocked
sampling (only the drawing is under test here; the fits have their own tests).
"""

from __future__ import annotations

from unittest import mock

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import xarray as xr  # noqa: E402

from pbassess import Predictions  # noqa: E402
from pbassess.assess import (  # noqa: E402
    assess_accuracy,
    assess_calibration,
    assess_confusion,
    assess_hierarchical,
    assess_hierarchical_calibration,
    compare_groups,
    simulate_rope_labeling,
)
from pbassess.inference import mock_pymc_sample  # noqa: E402
from pbassess.plots import calibration as cal_plots  # noqa: E402
from pbassess.plots import shift as shift_plots  # noqa: E402
from pbassess.plots import surface as surface_plots  # noqa: E402
from pbassess.plots.accuracy import plot_accuracy, plot_rank_intervals  # noqa: E402
from pbassess.plots.active import plot_mrr, plot_success  # noqa: E402
from pbassess.plots.compare import plot_comparison, plot_fairness, plot_labeling_curves  # noqa: E402
from pbassess.plots.cost import plot_expected_cost  # noqa: E402
from pbassess.plots.estimation import plot_estimates  # noqa: E402
from pbassess.plots.hierarchical import (  # noqa: E402
    plot_environment_accuracy,
    plot_environment_reliability,
)

NO_LINE = ("None", "none", "", " ")


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _figure(drawn):
    return drawn if hasattr(drawn, "savefig") else np.ravel(drawn)[0].figure


def _legend_texts(fig) -> set[str]:
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None] + list(fig.legends)
    return {t.get_text() for legend in legends for t in legend.get_texts()}


def _unexplained_lines(fig) -> list[str]:
    """Lines drawn with a line style (not markers only, not parts of error bars) whose label is in no legend."""
    texts = _legend_texts(fig)
    missing = []
    for ax in fig.axes:
        in_containers = {id(child) for c in ax.containers for child in c.get_children()}
        for line in ax.lines:
            if id(line) in in_containers or line.get_linestyle() in NO_LINE or len(line.get_xdata()) < 2:
                continue
            if line.get_label() not in texts:
                missing.append(f"{ax.get_title() or ax.get_ylabel()}: {line.get_label()}")
    return missing


def _legends_cover_nothing(fig) -> None:
    fig.canvas.draw()
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        box = legend.get_window_extent()
        for line in ax.lines:
            xy = np.column_stack([line.get_xdata(), line.get_ydata()]).astype(float)
            pts = ax.transData.transform(xy[np.all(np.isfinite(xy), axis=1)]) if len(xy) else np.empty((0, 2))
            inside = (pts[:, 0] > box.x0) & (pts[:, 0] < box.x1) & (pts[:, 1] > box.y0) & (pts[:, 1] < box.y1)
            assert not inside.any(), f"the legend of {ax.get_title()!r} covers {line.get_label()!r}"
        if any(np.size(line.get_xdata()) for line in ax.lines):
            assert not box.overlaps(ax.get_window_extent()), f"the legend of {ax.get_title()!r} sits in the data"


# ---------------------------------------------------------------------------------------------- inputs
def _pool(n=400, seed=0):
    rng = np.random.default_rng(seed)
    conf = rng.uniform(0.3, 1.0, n)
    pred = rng.choice(["a", "b", "c"], n)
    right = rng.random(n) < conf
    truth = np.where(right, pred, np.where(pred == "a", "b", "a"))
    return Predictions.from_top1(pred, conf, truth, classes=["a", "b", "c"],
                                 groups={"site": np.repeat(["x", "y", "z", "w"], n // 4)})


def _binary_pool():
    y, sex = np.tile([1, 0], 60), np.repeat(["F", "M"], 60)
    return Predictions.from_binary_scores(np.where((y == 1) | (sex == "M"), 0.8, 0.3), y, groups={"sex": sex})


def _figures_without_sampling():
    pool = _pool()
    cal = assess_calibration(pool, bins=10, seed=0)
    acc = assess_accuracy(pool, seed=0, draws=500)
    cmp = compare_groups(_binary_pool(), "sex", rope=0.05, seed=0)
    rng = np.random.default_rng(0)
    g = np.repeat(["a", "b"], [300, 100])
    right = rng.random(400) < np.where(g == "a", 0.9, 0.6)
    rope_pool = Predictions.from_top1(np.where(right, "x", "y"), np.full(400, 0.8), np.full(400, "x"),
                                      classes=["x", "y"], groups={"g": g})
    from pbassess.active import simulate
    from pbassess.calibration import smooth_reliability_curve
    from pbassess.estimation import estimate

    sim = simulate(pool, "least-accurate", ["random-item", "ts"], "uniform", runs=4, log_every=40, seed=0)
    curve = smooth_reliability_curve(pool.confidence[pool.labeled], pool.correct[pool.labeled], n_points=50)
    recal = {"method": "beta", "ci_prob": 0.95, "posterior": {
        side: {k: {"mean": m, "hdi": [m * 0.9, m * 1.1]} for k, m in zip(("ece", "nll", "brier"), vals, strict=True)}
        for side, vals in (("before", (0.1, 0.5, 0.2)), ("after", (0.02, 0.4, 0.18)))}}
    t = np.round(np.arange(10) / 10, 1)
    pooled = xr.Dataset({"accuracy_at_confidence": (("model", "threshold"), np.linspace(0.6, 1, 20).reshape(2, 10)),
                         "count_at_confidence": (("model", "threshold"), np.linspace(50, 5, 20).reshape(2, 10))},
                        coords={"model": ["a", "b"], "threshold": t})
    levels = xr.Dataset({"ece_mean": (("level", "model"), [[0.1, 0.12], [0.2, 0.25]]),
                         "ece_hdi": (("level", "model", "hdi"), [[[0.08, 0.12], [0.1, 0.14]], [[0.15, 0.25], [0.2, 0.3]]])},
                        coords={"level": ["0", "1"], "model": ["a", "b"]})
    mse = {name: xr.Dataset({"macro_mse": (("seed", "round"), rng.uniform(0.01, 0.1, (3, 5))),
                             "n_labels": (("seed", "round"), np.tile(np.arange(1, 6) * 10, (3, 1)))})
           for name in ("random", "active")}
    return {
        "reliability": cal_plots.plot_reliability(cal),
        "reliability in ax": cal_plots.plot_reliability(cal, ax=plt.subplots(figsize=(6, 4))[1]),
        "ece": cal_plots.plot_ece(cal),
        "classwise ece": cal_plots.plot_classwise_ece(cal),
        "smooth reliability": cal_plots.plot_smooth_reliability(curve),
        "recalibration": cal_plots.plot_recalibration(recal),
        "accuracy": plot_accuracy(acc),
        "rank": plot_rank_intervals(acc),
        "expected cost": plot_expected_cost(assess_confusion(pool, seed=0, draws=500)),
        "comparison": plot_comparison(cmp),
        "fairness": plot_fairness({"LR": cmp, "NB": cmp}),
        "labeling curves": plot_labeling_curves(simulate_rope_labeling(rope_pool, "g", rope=0.05, n_runs=5, seed=1)),
        "mrr": plot_mrr(sim),
        "success": plot_success(sim),
        "estimates": plot_estimates(estimate(pool, by="site", methods="classical,ppi", seed=0)),
        "confidence curves": shift_plots.plot_confidence_curves(pooled),
        "level posteriors": shift_plots.plot_level_posteriors(levels),
        "mse curves": surface_plots.plot_mse_curves(mse),
    }


@pytest.fixture(scope="module")
def figures():
    return _figures_without_sampling()


def test_every_line_has_a_legend_entry(figures):
    problems = {name: _unexplained_lines(_figure(drawn)) for name, drawn in figures.items()}
    assert {name: lines for name, lines in problems.items() if lines} == {}


def test_no_legend_covers_data(figures):
    for drawn in figures.values():
        _legends_cover_nothing(_figure(drawn))


def test_reference_lines_are_named(figures):
    comparison = _legend_texts(_figure(figures["comparison"]))
    assert {"no difference", "ROPE +-0.05"} <= comparison
    assert "unchanged" in _legend_texts(_figure(figures["recalibration"]))
    labeling = _legend_texts(_figure(figures["labeling curves"]))
    assert any(text.endswith(" labels") for text in labeling) and any(text.startswith("target") for text in labeling)


# ------------------------------------------------------------------------------------ hierarchical results
@pytest.fixture(scope="module")
def hierarchical():
    pool = _pool(n=480)
    with mock.patch("pymc.sample", mock_pymc_sample):  # only the drawing is under test
        acc = assess_hierarchical(pool, "site", seed=0, sample_kwargs={"draws": 50, "tune": 50, "chains": 1,
                                                                       "sampler": "pymc"})
        cal = assess_hierarchical_calibration(pool, "site", bins=5, seed=0,
                                              sample_kwargs={"draws": 50, "tune": 50, "chains": 1, "sampler": "pymc"})
    return acc, cal


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_environment_figures_follow_the_rules(hierarchical):
    acc, cal = hierarchical
    for fig in (plot_environment_accuracy(acc), plot_environment_reliability(cal, ncols=2),
                plot_environment_reliability(cal, ncols=4)):
        assert _unexplained_lines(fig) == []
        _legends_cover_nothing(fig)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_environment_reliability_writes_every_bins_labeled_count_clear_of_the_markers(hierarchical):
    _, cal = hierarchical
    fig = plot_environment_reliability(cal, ncols=4)
    fig.canvas.draw()
    n = cal.counts["n_labeled"].to_numpy()
    score = cal.counts["score"].to_numpy()
    for i, ax in enumerate(fig.axes[: len(cal.environments)]):
        ok = np.isfinite(score[i])
        assert [int(t.get_text().replace(",", "")) for t in ax.texts] == n[i][ok].astype(int).tolist()
        boxes = [t.get_window_extent() for t in ax.texts]
        points = np.vstack([ax.transData.transform(np.column_stack([c.lines[0].get_xdata(), c.lines[0].get_ydata()]))
                            for c in ax.containers])
        for box in boxes:
            assert not ((points[:, 0] > box.x0 - 3) & (points[:, 0] < box.x1 + 3)
                        & (points[:, 1] > box.y0 - 3) & (points[:, 1] < box.y1 + 3)).any()
        assert not any(boxes[a].overlaps(boxes[b]) for a in range(len(boxes)) for b in range(a + 1, len(boxes)))
