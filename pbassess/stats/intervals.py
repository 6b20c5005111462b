"""Highest-density intervals of Monte Carlo draws (vectorised over regions)."""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.constants import CI_PROB
from pbassess.errors import ConfigError

__all__ = ["hdi_from_draws"]


def hdi_from_draws(draws: Any, prob: float = CI_PROB, axis: int = 0) -> np.ndarray:
    """Narrowest interval holding ``prob`` of the draws along ``axis``.

    Returns
    -------
    ndarray with ``axis`` replaced by a trailing axis of length 2 (lower, upper).

    Examples
    --------
    >>> d = np.linspace(0, 1, 1001)[:, None] ** 2   # density decreasing in x
    >>> hdi_from_draws(d, 0.5).round(2).tolist()
    [[0.0, 0.25]]
    """
    if not 0 < prob < 1:
        raise ConfigError(f"the credible mass must be in (0, 1), got {prob}")
    x = np.sort(np.moveaxis(np.asarray(draws, dtype=float), axis, -1), axis=-1)
    n = x.shape[-1]
    width = int(np.floor(prob * n))
    if width < 1 or width >= n:
        return np.stack([x[..., 0], x[..., -1]], axis=-1)
    spans = x[..., width:] - x[..., : n - width]
    start = np.argmin(spans, axis=-1)[..., None]
    lo = np.take_along_axis(x, start, axis=-1)[..., 0]
    hi = np.take_along_axis(x, start + width, axis=-1)[..., 0]
    return np.stack([lo, hi], axis=-1)
