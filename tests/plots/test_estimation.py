"""The estimation figure: readable group names for few and many groups, and the legend off the data."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from pbassess import Predictions  # noqa: E402
from pbassess.estimation import estimate  # noqa: E402
from pbassess.plots import plot_estimates  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _result(n_groups: int, seed: int = 0):
    """Classical and PPI estimates for ``n_groups`` groups with long, similar names (the worst case for labels)."""
    rng = np.random.default_rng(seed)
    n = 60 * n_groups
    conf = rng.uniform(0.5, 1.0, n)
    truth = np.where(rng.random(n) < conf, 0, 1)
    labels = np.where(rng.random(n) < 0.3, truth, -1)
    names = np.array([f"environment-{i:02d}" for i in range(n_groups)])
    pool = Predictions.from_top1(np.zeros(n, int), conf, labels, classes=["a", "b"],
                                 groups={"site": np.repeat(names, 60)})
    return estimate(pool, by="site", methods="classical,ppi", seed=seed)


def _overlapping_pairs(boxes):
    return [(i, j) for i in range(len(boxes)) for j in range(i + 1, len(boxes)) if boxes[i].overlaps(boxes[j])]


def _plotted_points(ax) -> np.ndarray:
    """Display coordinates of every marker and every error-bar end drawn in ``ax``."""
    pts = []
    for line in ax.lines:
        xy = np.column_stack([line.get_xdata(), line.get_ydata()]).astype(float)
        pts.append(ax.transData.transform(xy[np.all(np.isfinite(xy), axis=1)]))
    for coll in ax.collections:  # the error bars
        for seg in coll.get_segments():
            pts.append(ax.transData.transform(np.asarray(seg, dtype=float)))
    return np.vstack(pts)


@pytest.mark.parametrize("n_groups", [6, 20])
def test_group_labels_never_overlap_and_name_every_group(n_groups):
    res = _result(n_groups)
    fig = plot_estimates(res)
    fig.canvas.draw()
    ax = fig.axes[0]
    labels = ax.get_xticklabels()
    assert [t.get_text() for t in labels] == res.groups  # every group named, in order
    boxes = [t.get_window_extent() for t in labels]
    assert _overlapping_pairs(boxes) == []
    assert min(t.get_fontsize() for t in labels) >= 5  # still legible


@pytest.mark.parametrize("n_groups", [6, 20])
def test_legend_covers_no_marker_or_error_bar(n_groups):
    res = _result(n_groups)
    fig = plot_estimates(res)
    fig.canvas.draw()
    ax = fig.axes[0]
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == res.methods  # one entry per drawn series
    box = legend.get_window_extent()
    pts = _plotted_points(ax)
    inside = (pts[:, 0] >= box.x0) & (pts[:, 0] <= box.x1) & (pts[:, 1] >= box.y0) & (pts[:, 1] <= box.y1)
    assert not inside.any()
    assert not box.overlaps(ax.get_window_extent())  # outside the plotting area altogether
    # every legend entry matches its series' colour, and every series is drawn at the result's means
    for i, method in enumerate(res.methods):
        container = ax.containers[i]
        np.testing.assert_allclose(container.lines[0].get_ydata(), res.posterior["mean"].sel(estimator=method))


def test_the_result_plot_method_draws_the_same_and_returns_its_axes():
    res = _result(6)
    ax = res.plot()
    assert [t.get_text() for t in ax.get_xticklabels()] == res.groups
    own = plt.subplots()[1]
    assert res.plot(ax=own) is own
    assert len(own.containers) == len(res.methods)
