"""What the figures draw is fully visible and legible (issue 24, figures).

* the reliability diagram shows the whole marker of a bin at confidence ~1 (it was half cut by x = 1);
* the values written on a surface heatmap contrast with their cells (they were white on yellow), and the
  attribute names on its axes lie inside the figure (they were cut at the left edge).

Conjugate fits on small pools only; the figures are measured in display coordinates after drawing.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from pbassess import Predictions  # noqa: E402
from pbassess.assess import assess_calibration  # noqa: E402
from pbassess.plots._common import contrast_ratio, relative_luminance, text_colour_on  # noqa: E402
from pbassess.plots.calibration import plot_reliability  # noqa: E402
from pbassess.plots.surface import plot_surface_heatmap  # noqa: E402
from pbassess.surface import ArmCounts, fit_surface  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _confident_pool(seed=0):
    """Most items at confidence 0.99-1.0 (like the built-in digits set: 781 of 899 in the top bin)."""
    rng = np.random.default_rng(seed)
    conf = np.concatenate([rng.uniform(0.99, 1.0, 300), rng.uniform(0.4, 0.9, 60)])
    pred = rng.choice(["a", "b"], conf.size)
    right = rng.random(conf.size) < conf
    return Predictions.from_top1(pred, conf, np.where(right, pred, np.where(pred == "a", "b", "a")),
                                 classes=["a", "b"])


def _marker_boxes(ax):
    """Display-space boxes (x0, y0, x1, y1) of every marker the error bars draw."""
    boxes = []
    for container in ax.containers:
        line = container.lines[0]
        half = line.get_markersize() * ax.figure.dpi / 72.0 / 2.0 + line.get_markeredgewidth() * ax.figure.dpi / 72.0
        centres = ax.transData.transform(np.column_stack([line.get_xdata(), line.get_ydata()]).astype(float))
        boxes.extend((cx - half, cy - half, cx + half, cy + half) for cx, cy in centres)
    return boxes


@pytest.mark.parametrize("in_axes", [False, True], ids=["own figure", "caller's axes"])
def test_the_top_bins_marker_lies_wholly_inside_the_axes(in_axes):
    cal = assess_calibration(_confident_pool(), bins=10, seed=0)
    assert cal.summary()["mean_score"].max() > 0.99
    drawn = plot_reliability(cal, ax=plt.subplots(figsize=(6, 4))[1] if in_axes else None)
    ax = drawn if in_axes else drawn.axes[0]
    ax.figure.canvas.draw()
    frame = ax.get_window_extent()
    boxes = _marker_boxes(ax)
    assert len(boxes) == int((cal.summary()["n_pool"] > 0).sum())
    for x0, y0, x1, y1 in boxes:
        assert frame.x0 <= x0 and x1 <= frame.x1 and frame.y0 <= y0 and y1 <= frame.y1, (x0, x1, frame)


def test_contrast_helpers_match_the_wcag_definitions():
    assert relative_luminance("white") == pytest.approx(1.0)
    assert relative_luminance("black") == pytest.approx(0.0)
    assert contrast_ratio("black", "white") == pytest.approx(21.0)
    # sRGB mid grey #777777 has luminance 0.184 (WCAG's formula by hand: ((0.4667 + 0.055) / 1.055) ** 2.4)
    assert relative_luminance("#777777") == pytest.approx(((0x77 / 255 + 0.055) / 1.055) ** 2.4, rel=1e-12)
    assert text_colour_on("yellow") == "black" and text_colour_on("navy") == "white"


def _heatmap():
    # 4 x 3 arms whose accuracies span the colour map from dark (0.1) to bright yellow (0.95)
    values = [[a, b] for a in range(4) for b in range(3)]
    correct = [1, 3, 5, 8, 12, 14, 16, 17, 18, 18, 19, 19]
    arms = ArmCounts.from_arrays([20] * 12, correct, values=values, attributes=("region-with-a-long-name", "b"))
    return plot_surface_heatmap(fit_surface(arms, estimator="beta-i"))


def test_heatmap_values_contrast_with_their_cells():
    fig = _heatmap()
    ax = fig.axes[0]
    image = ax.images[0]
    data = np.asarray(image.get_array())
    assert len(ax.texts) == data.size
    ratios, on_bright = [], []
    for text in ax.texts:
        x, y = text.get_position()
        cell = image.cmap(image.norm(data[int(round(y)), int(round(x))]))
        ratios.append(contrast_ratio(text.get_color(), cell))
        if relative_luminance(cell) > 0.5:
            on_bright.append(text.get_color())
    # WCAG AA for normal text is 4.5; the better of black and white always reaches 4.58 on any colour
    assert min(ratios) >= 4.5
    assert on_bright and set(on_bright) == {"black"}  # viridis' yellow end: black, not white, text


def test_heatmap_axis_labels_lie_inside_the_figure():
    fig = _heatmap()
    fig.canvas.draw()
    page = fig.bbox
    ax = fig.axes[0]
    for label in [*ax.get_yticklabels(), *ax.get_xticklabels(), ax.yaxis.label, ax.xaxis.label, ax.title]:
        box = label.get_window_extent()
        assert box.x0 >= page.x0 - 0.5 and box.x1 <= page.x1 + 0.5, label.get_text()
        assert box.y0 >= page.y0 - 0.5 and box.y1 <= page.y1 + 0.5, label.get_text()


def _texts_outside_the_figure(fig) -> list[str]:
    """Texts (titles, axis labels, tick labels, annotations) that reach past the figure's edges."""
    fig.canvas.draw()
    page = fig.bbox
    out = []
    for ax in fig.axes:
        ticks = []
        for axis in (ax.xaxis, ax.yaxis):  # only the tick labels drawn: those of ticks inside the view
            lo, hi = sorted(axis.get_view_interval())
            span = 1e-9 * max(abs(hi - lo), 1.0)
            ticks += [label for loc, label in zip(axis.get_ticklocs(), axis.get_ticklabels(), strict=True)
                      if lo - span <= loc <= hi + span]
        texts = [ax.title, ax.xaxis.label, ax.yaxis.label, *ticks, *ax.texts]
        for text in texts:
            if not text.get_visible() or not text.get_text():
                continue
            box = text.get_window_extent()
            if box.x0 < page.x0 - 0.5 or box.x1 > page.x1 + 0.5 or box.y0 < page.y0 - 0.5 or box.y1 > page.y1 + 0.5:
                out.append(text.get_text())
    return out


def test_active_panels_keep_every_label_inside_the_figure():
    from pbassess.active import simulate
    from pbassess.plots.active import plot_active

    sim = simulate(_confident_pool(), "least-accurate", ["random-item", "ts"], "uniform", runs=4, log_every=40,
                   seed=0)
    fig = plot_active(sim)
    assert _texts_outside_the_figure(fig) == []  # the bars' x label ran past the right edge


def test_comparison_probability_labels_stay_inside_their_axes():
    from pbassess.assess import compare_groups
    from pbassess.plots.compare import plot_comparison

    rng = np.random.default_rng(1)
    g = np.repeat(["a", "b"], 200)
    right = rng.random(400) < np.where(g == "a", 0.95, 0.55)  # a difference far from 0: the interval ends right
    pool = Predictions.from_top1(np.where(right, "x", "y"), np.full(400, 0.8), np.full(400, "x"),
                                 classes=["x", "y"], groups={"g": g})
    fig = plot_comparison(compare_groups(pool, "g", rope=0.02, seed=0))
    fig.canvas.draw()
    ax = fig.axes[1]
    frame = ax.get_window_extent()
    labels = [t for t in ax.texts if t.get_text().startswith("P(>0)")]
    assert labels
    for text in labels:
        box = text.get_window_extent()
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1, text.get_text()
    assert _texts_outside_the_figure(fig) == []
