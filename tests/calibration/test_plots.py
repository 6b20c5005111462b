"""Reliability diagrams show labeled counts per bin, and legends never cover data."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from pbassess import Predictions
from pbassess.assess.calibration import assess_calibration
from pbassess.calibration import smooth_reliability_curve
from pbassess.plots.calibration import (
    plot_classwise_ece,
    plot_ece,
    plot_recalibration,
    plot_reliability,
    plot_smooth_reliability,
)


@pytest.fixture
def result():
    rng = np.random.default_rng(3)
    conf = rng.uniform(0.3, 1.0, 400)
    labels = np.where(rng.uniform(size=400) < conf - 0.1, "a", "b")
    labels = np.where(rng.uniform(size=400) < 0.4, labels, None)  # 40% labeled
    return assess_calibration(Predictions.from_top1(["a"] * 400, conf, labels, classes=["a", "b"]), bins=5, seed=0)


def _data_points(ax):
    """Display coordinates of every drawn data point (line vertices and bar corners)."""
    pts = []
    for line in ax.lines:
        xy = np.column_stack([line.get_xdata(), line.get_ydata()]).astype(float)
        pts.append(ax.transData.transform(xy[np.all(np.isfinite(xy), axis=1)]))
    for patch in ax.patches:
        pts.append(patch.get_window_extent().get_points())
    return np.vstack(pts)


def _assert_legend_clear(fig, ax):
    fig.canvas.draw()
    box = ax.get_legend().get_window_extent()
    pts = _data_points(ax)
    inside = (pts[:, 0] > box.x0) & (pts[:, 0] < box.x1) & (pts[:, 1] > box.y0) & (pts[:, 1] < box.y1)
    assert not inside.any()
    assert not box.overlaps(ax.get_window_extent())  # outside the plotting area altogether


def test_reliability_diagram_shows_labeled_counts(result):
    fig = plot_reliability(result)
    main, hist = fig.axes
    table = result.summary()
    assert [bar.get_height() for bar in hist.patches] == table["n_pool"].tolist()
    step = [line for line in hist.lines if line.get_label() == "labeled items"][0]
    assert step.get_ydata()[:-1].tolist() == table["n_labeled"].tolist()
    written = [int(t.get_text().replace(",", "")) for t in hist.texts]
    assert written == [n for n, pool in zip(table["n_labeled"], table["n_pool"], strict=True) if pool > 0]
    assert sum(written) == int((result.counts["n_labeled"]).sum()) < int(table["n_pool"].sum())
    _assert_legend_clear(fig, main)
    _assert_legend_clear(fig, hist)
    plt.close(fig)


def test_other_calibration_figures_keep_legends_off_the_data(result):
    fig = plot_ece(result)
    _assert_legend_clear(fig, fig.axes[0])
    fig = plot_classwise_ece(result)
    _assert_legend_clear(fig, fig.axes[0])
    rng = np.random.default_rng(0)
    f = rng.uniform(size=500)
    curve = smooth_reliability_curve(f, rng.uniform(size=500) < f, n_points=50)
    fig = plot_smooth_reliability(curve)
    ax = fig.axes[0]
    np.testing.assert_allclose(ax.lines[1].get_ydata(), curve["curve"])
    _assert_legend_clear(fig, ax)
    out = {"method": "beta", "ci_prob": 0.95, "posterior": {
        side: {k: {"mean": m, "hdi": [m * 0.9, m * 1.1]} for k, m in zip(("ece", "nll", "brier"), vals, strict=True)}
        for side, vals in (("before", (0.1, 0.5, 0.2)), ("after", (0.02, 0.4, 0.18)))}}
    fig = plot_recalibration(out)
    ax = fig.axes[0]
    after = [line for line in ax.lines if line.get_label() == "after"][0]
    np.testing.assert_allclose(after.get_xdata(), [0.2, 0.8, 0.9])  # relative to "before"
    _assert_legend_clear(fig, ax)
    plt.close("all")
