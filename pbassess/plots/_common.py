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


def check_count(name: str, value: Any) -> int | None:
    """``None``, or ``value`` as a positive int (``ConfigError`` naming ``name`` otherwise)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ConfigError(f"{name} must be a positive integer, got {value!r}")
    return int(value)
