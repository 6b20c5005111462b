"""Reliability diagrams drawn into a caller's Axes: the labeled counts per bin never touch a marker or each other."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from pbassess import Predictions  # noqa: E402
from pbassess.assess.calibration import assess_calibration  # noqa: E402
from pbassess.plots.calibration import plot_reliability  # noqa: E402

MARKER_PAD_PX = 3.0  # half a 4-pt marker at 100 dpi is 2.8 px


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _result(bins: int, seed: int = 0, *, labeled_share: float = 0.5):
    """Scores over the whole range and accuracies from 0 to 1: markers sit at the very bottom of the diagram too."""
    rng = np.random.default_rng(seed)
    n = 3000
    conf = rng.uniform(0.02, 1.0, n)
    correct = rng.random(n) < conf ** 3  # low bins have accuracy near 0
    labels = np.where(correct, "a", "b")
    labels = np.where(rng.random(n) < labeled_share, labels, None)
    return assess_calibration(Predictions.from_top1(["a"] * n, conf, labels, classes=["a", "b"]), bins=bins,
                              seed=seed, classwise=False)


def _marker_boxes(ax):
    """Display-space boxes (padded by the marker radius) of every marker and error bar drawn in ``ax``."""
    boxes = []
    for line in ax.lines:
        if line.get_linestyle() not in ("None", "none", "", " ") and line.get_marker() in (None, "None", "none", ""):
            continue  # the diagonal reference line is not a marker
        xy = np.column_stack([line.get_xdata(), line.get_ydata()]).astype(float)
        for px, py in ax.transData.transform(xy[np.all(np.isfinite(xy), axis=1)]):
            boxes.append((px - MARKER_PAD_PX, py - MARKER_PAD_PX, px + MARKER_PAD_PX, py + MARKER_PAD_PX))
    for coll in ax.collections:  # error bars
        for seg in coll.get_segments():
            (x0, y0), (x1, y1) = ax.transData.transform(np.asarray(seg, dtype=float))
            boxes.append((min(x0, x1) - 1, min(y0, y1) - 1, max(x0, x1) + 1, max(y0, y1) + 1))
    return boxes


def _touches(box, other) -> bool:
    x0, y0, x1, y1 = other
    return box.x0 < x1 and x0 < box.x1 and box.y0 < y1 and y0 < box.y1


@pytest.mark.parametrize("bins", [5, 10, 20])
@pytest.mark.parametrize("figsize", [(6.4, 4.8), (4.0, 3.0)])
def test_counts_in_a_callers_axes_clear_every_marker_and_each_other(bins, figsize):
    res = _result(bins)
    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    assert plot_reliability(res, ax=ax) is ax
    fig.canvas.draw()
    table = res.summary()
    shown = table[table["n_pool"] > 0]
    counts = [t for t in ax.texts]
    # one count per occupied bin, equal to the table's labeled count, at the bin's mean score
    assert [int(t.get_text().replace(",", "")) for t in counts] == shown["n_labeled"].tolist()
    np.testing.assert_allclose([t.get_position()[0] for t in counts], shown["mean_score"])
    assert min(shown["accuracy_hdi_low"]) < 0.05  # some markers really sit at the bottom
    text_boxes = [t.get_window_extent() for t in counts]
    markers = _marker_boxes(ax)
    assert len(markers) >= 2 * len(shown)
    for box in text_boxes:
        assert not any(_touches(box, m) for m in markers)
    for i in range(len(text_boxes)):
        for j in range(i + 1, len(text_boxes)):
            assert not text_boxes[i].overlaps(text_boxes[j])
    frame = ax.get_window_extent()
    assert all(frame.y0 - 1 <= box.y0 and box.y1 <= frame.y1 for box in text_boxes)  # inside the diagram


def test_the_new_figure_keeps_its_counts_above_the_histogram_bars_without_overlap():
    res = _result(20)
    fig = plot_reliability(res)
    fig.canvas.draw()
    hist = fig.axes[1]
    boxes = [t.get_window_extent() for t in hist.texts]
    assert len(boxes) == int((res.summary()["n_pool"] > 0).sum())
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            assert not boxes[i].overlaps(boxes[j])
