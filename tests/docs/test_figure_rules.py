"""The figure rules of the docs (issue 13) on the figures the guides and notebooks show.

Legends never cover data (they sit outside the axes), and the label-efficiency bars carry their
intervals and the colours of the MRR curves. Conjugate fits and a tiny simulation only.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.colors as mcolors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import pbassess  # noqa: E402
import pbassess.plots  # noqa: E402
from pbassess.assess import assess_accuracy, assess_confusion  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _legend_outside_axes(ax) -> bool:
    fig = ax.figure
    fig.canvas.draw()
    legend = ax.get_legend()
    assert legend is not None, "the figure has no legend"
    box, frame = legend.get_window_extent(), ax.get_window_extent()
    return box.x0 >= frame.x1 - 1 or box.y0 >= frame.y1 - 1 or box.x1 <= frame.x0 + 1 or box.y1 <= frame.y0 + 1


@pytest.mark.parametrize("draw", ["rank", "cost"])
def test_rank_and_cost_legends_sit_outside_the_data(draw):
    preds = pbassess.load_data()
    if draw == "rank":
        fig = pbassess.plots.plot_rank_intervals(assess_accuracy(preds, seed=0, draws=500))
    else:
        fig = pbassess.plots.plot_expected_cost(assess_confusion(preds, seed=0, draws=500))
    ax = fig.axes[0]
    assert _legend_outside_axes(ax)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("HDI" in text for text in labels)


def test_label_efficiency_bars_carry_intervals_and_the_curve_colours():
    from pbassess.active import simulate
    from pbassess.plots.active import plot_label_efficiency, plot_mrr

    sim = simulate(pbassess.load_data(), "least-accurate", ["random-arm", "ts"], "uniform", runs=8, log_every=30,
                   seed=0)
    line_colours = [mcolors.to_rgba(line.get_color()) for line in plot_mrr(sim).axes[0].get_lines()]
    ax = plot_label_efficiency(sim).axes[0]
    bars = [patch for patch in ax.patches if patch.get_hatch() is None]
    reached = [i for i, text in enumerate(t.get_text() for t in ax.texts) if text != "never"]
    assert reached, "no strategy reached the threshold in this small run"
    for i in reached:
        assert np.allclose(mcolors.to_rgba(ax.patches[i].get_facecolor()), line_colours[i])
    assert len(bars) == len(reached)
    # error bars: one horizontal segment per reached bar, drawn by ax.errorbar
    segments = [seg for coll in ax.collections for seg in coll.get_segments()]
    assert len(segments) >= len(reached)
