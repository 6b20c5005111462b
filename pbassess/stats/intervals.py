"""Highest-density intervals of Monte Carlo draws (vectorised over regions)."""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.constants import CI_PROB
from pbassess.errors import ConfigError

__all__ = ["check_ci_prob", "hdi_from_draws"]


def check_ci_prob(ci_prob: Any) -> float:
    """The credible mass as a float strictly between 0 and 1 (ConfigError otherwise).

    The one check of every ``ci_prob`` argument: numbers (Python or numpy) only; booleans and
    strings are refused rather than converted.

    Examples
    --------
    >>> check_ci_prob(0.9)
    0.9
    >>> check_ci_prob(1.0)
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: ci_prob must be a number strictly between 0 and 1, got 1.0
    """
    if isinstance(ci_prob, bool) or not isinstance(ci_prob, (int, float, np.integer, np.floating)):
        raise ConfigError(f"ci_prob must be a number strictly between 0 and 1, got {ci_prob!r}")
    if not 0 < ci_prob < 1:
        raise ConfigError(f"ci_prob must be a number strictly between 0 and 1, got {ci_prob!r}")
    return float(ci_prob)


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
