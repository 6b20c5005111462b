"""Figures of the shift table: what is drawn (artists, labels, counts), and legends off the data."""

from __future__ import annotations

import numpy as np
import pytest

from pbassess import Predictions
from pbassess.errors import ConfigError
from pbassess.plots.shift import (
    plot_confidence_curves,
    plot_histograms,
    plot_level_posteriors,
    plot_shift_boxes,
)
from pbassess.shift.table import histogram_sets, pool_levels, shift_table


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(0)
    probs, labels, corr, inten, meth = [], [], [], [], []
    for method in ("a", "b"):
        for c in ("none", "noise", "blur", "ood"):
            for i in ((0,) if c in ("none", "ood") else (1, 2)):
                p = rng.dirichlet(np.full(3, 0.3 + i), size=50)
                probs.append(p)
                labels += [None] * 50 if c == "ood" else p.argmax(1).tolist()
                corr += [c] * 50
                inten += [str(i)] * 50
                meth += [method] * 50
    preds = Predictions.from_probs(np.vstack(probs), labels,
                                   groups={"corruption": corr, "intensity": inten, "method": meth})
    return shift_table(preds, by=("corruption", "intensity"), n_draws=200, seed=0)


def _legend_outside(fig, ax):
    import matplotlib.pyplot as plt

    fig.canvas.draw()
    legend = ax.get_legend()
    assert legend is not None
    box, frame = legend.get_window_extent(), ax.get_window_extent()
    assert box.x0 >= frame.x1 - 1  # right of the data area
    plt.close(fig)


def test_boxes_one_per_model_and_intensity(table):
    assert table["level"].values.tolist() == ["blur/1", "blur/2", "noise/1", "noise/2", "none/0"]
    fig = plot_shift_boxes(table, "accuracy")
    ax = fig.axes[0]
    # 3 intensities x 2 models boxes (each box is one PathPatch with patch_artist)
    assert len([p for p in ax.patches if p.__class__.__name__ == "PathPatch"]) == 6
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "1", "2"]
    assert ax.get_ylabel() == "accuracy"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "b"]
    _legend_outside(fig, ax)


def test_box_medians_are_the_table_values(table):
    fig = plot_shift_boxes(table, "ece")
    ax = fig.axes[0]
    medians = [line for line in ax.get_lines() if line.get_color() == "black" and len(line.get_ydata())]
    # the first model's box at intensity 1 spans blur/1 and noise/1
    expected = np.median(table["ece"].sel(model="a", level=["blur/1", "noise/1"]).values)
    assert any(np.isclose(m.get_ydata()[0], expected) for m in medians)


def test_confidence_curves_draw_the_pooled_counts(table):
    pooled = pool_levels(table, ["noise/1", "noise/2"])
    fig = plot_confidence_curves(pooled)
    count_ax = fig.axes[1]
    assert len(count_ax.get_lines()) == 2
    np.testing.assert_allclose(count_ax.get_lines()[0].get_ydata(), pooled["count_at_confidence"].sel(model="a"))
    assert count_ax.get_lines()[0].get_ydata()[0] == 100  # every item clears threshold 0
    _legend_outside(fig, count_ax)


def test_entropy_histograms_one_panel_per_model_with_ood(table):
    shares = histogram_sets(table, {"test": ["none/0"], "shifted": ["noise/1", "noise/2", "blur/1", "blur/2"]})
    assert shares["set"].values.tolist() == ["test", "shifted", "OOD"]
    np.testing.assert_allclose(shares.sum("entropy_bin").values, 1.0)
    fig = plot_histograms(shares)
    assert len(fig.axes) == 2 and [a.get_title() for a in fig.axes] == ["a", "b"]
    assert len(fig.axes[0].patches) == 3  # one step outline per set
    _legend_outside(fig, fig.axes[-1])


def test_level_posteriors_draw_hdi_bars(table):
    fig = plot_level_posteriors(table, "accuracy")
    ax = fig.axes[0]
    assert len(ax.collections) == 2  # one set of HDI bars per model
    segs = ax.collections[0].get_segments()
    np.testing.assert_allclose([s[:, 1] for s in segs], table["accuracy_hdi"].sel(model="a").values)
    _legend_outside(fig, ax)


def test_plot_errors_are_config_errors(table):
    with pytest.raises(ConfigError, match="no 'nope'"):
        plot_shift_boxes(table, "nope")
    with pytest.raises(ConfigError, match="coordinate"):
        plot_shift_boxes(table, "accuracy", group="year")
