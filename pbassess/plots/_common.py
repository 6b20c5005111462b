"""Small helpers shared by the plot modules (private: no statistics, only figure plumbing)."""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.errors import ConfigError


def figure_and_axes(ax: Any, figsize: tuple[float, float], *, layout: str | None = None):
    """``(figure, axes, created)``: the given Axes and its figure, or a new figure of ``figsize``.

    ``created`` tells whether a figure was made here (plots then return the Figure and add a
    title; with a caller's Axes they return the Axes). ``layout`` is passed to
    :func:`matplotlib.pyplot.subplots` when given.
    """
    import matplotlib.pyplot as plt

    if ax is not None:
        return ax.figure, ax, False
    options = {} if layout is None else {"layout": layout}
    fig, new_ax = plt.subplots(figsize=figsize, **options)
    return fig, new_ax, True


def forest_axes(ax: Any, n_rows: int, width: float = 6.4):
    """:func:`figure_and_axes` for a forest plot: a constrained figure sized for ``n_rows`` labelled rows."""
    height = min(max(2.0, 0.22 * n_rows + 1.2), 24.0)
    return figure_and_axes(ax, (width, height), layout="constrained")


def relative_luminance(rgba: Any) -> float:
    """WCAG relative luminance of a colour (0 black, 1 white), from its sRGB components."""
    import matplotlib.colors as mcolors

    rgb = np.asarray(mcolors.to_rgb(rgba), dtype=float)
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    return float(linear @ np.array([0.2126, 0.7152, 0.0722]))


def contrast_ratio(a: Any, b: Any) -> float:
    """WCAG contrast ratio of two colours, from 1 (same luminance) to 21 (black on white)."""
    high, low = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def text_colour_on(background: Any) -> str:
    """``"black"`` or ``"white"``, whichever contrasts more with ``background`` (a cell's colour)."""
    return "black" if contrast_ratio("black", background) >= contrast_ratio("white", background) else "white"


def check_count(name: str, value: Any) -> int | None:
    """``None``, or ``value`` as a positive int (``ConfigError`` naming ``name`` otherwise)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ConfigError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def count_strip(ax: Any, x: Any, counts: Any, *, top: float = 1.02, fontsize: float = 6.0, color: str = "0.25"):
    """Write one count per x position in a strip along the bottom of ``ax``, below every data point.

    The texts are drawn once to measure them (the figure's layout is applied first), then each
    goes to the lowest row where it does not touch its left neighbour. The y-limits become
    ``(bottom, top)`` with ``bottom < 0`` chosen so that the rows (plus a margin) lie under
    ``y = 0``: data in ``[0, top]`` never reach them. Rows are offset in points from the bottom
    edge, whatever the size of the axes. Returns the Text artists, in the order of ``x``.
    """
    from matplotlib.transforms import ScaledTranslation, blended_transform_factory

    x = np.asarray(x, dtype=float)
    fig = ax.figure
    along_bottom = blended_transform_factory(ax.transData, ax.transAxes)
    line_pt, pad_px = 1.35 * fontsize, 2.0

    def lift(row: int):
        return along_bottom + ScaledTranslation(0.0, (2.0 + row * line_pt) / 72.0, fig.dpi_scale_trans)

    texts = [ax.text(xi, 0.0, f"{int(n):,}", transform=lift(0), ha="center", va="bottom", fontsize=fontsize,
                     color=color) for xi, n in zip(x, np.asarray(counts), strict=True)]
    fig.canvas.draw()
    right_edges: list[float] = []  # per row, the right edge (pixels) of its last text
    for i in np.argsort(x, kind="stable"):
        box = texts[i].get_window_extent()
        row = next((r for r, edge in enumerate(right_edges) if box.x0 >= edge + pad_px), len(right_edges))
        if row == len(right_edges):
            right_edges.append(box.x1)
        else:
            right_edges[row] = box.x1
        texts[i].set_transform(lift(row))
    rows = max(len(right_edges), 1)
    height_pt = max(ax.get_window_extent().height * 72.0 / fig.dpi, 1.0)
    frac = min((rows * line_pt + 8.0) / height_pt, 0.5)
    ax.set_ylim(-frac * top / (1.0 - frac), top)
    return texts
