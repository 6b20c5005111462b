"""ROPE statistics: probabilities that a difference lies below, inside or above a region of practical equivalence.

``[P(d < -r), P(-r <= d <= r), P(d > r)]`` from posterior draws (:func:`rope_probabilities`) or
exactly for two independent Betas by quadrature (:func:`rope_probabilities_beta`), and the
decision they imply (:func:`rope_decision`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special

from pbassess.errors import ConfigError

__all__ = ["DECISIONS", "beta_moments", "check_rope", "decision_name", "rope_decision", "rope_probabilities",
           "rope_probabilities_beta"]

DECISIONS = ("below", "inside", "above")


def check_rope(rope: Any) -> float:
    """The ROPE half-width as a non-negative float.

    Examples
    --------
    >>> check_rope(0.02)
    0.02
    >>> check_rope(-1)
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: --rope must be a non-negative number, got -1
    """
    try:
        r = float(rope)
    except (TypeError, ValueError):
        raise ConfigError(f"--rope must be a non-negative number, got {rope!r}") from None
    if not np.isfinite(r) or r < 0:
        raise ConfigError(f"--rope must be a non-negative number, got {rope}")
    return r


def beta_moments(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of Beta(a, b).

    Examples
    --------
    >>> mean, var = beta_moments(np.array([2.0]), np.array([8.0]))
    >>> mean.tolist(), var.round(5).tolist()  # 2/10 and 2*8/(10**2 * 11)
    ([0.2], [0.01455])
    """
    s = a + b
    return a / s, a * b / (s * s * (s + 1))


def decision_name(code: int) -> str:
    """``below``/``inside``/``above`` for 0/1/2, ``undecided`` for -1.

    Examples
    --------
    >>> [decision_name(c) for c in (-1, 0, 1, 2)]
    ['undecided', 'below', 'inside', 'above']
    """
    return "undecided" if code < 0 else DECISIONS[code]


def rope_probabilities(diff_draws: Any, rope: float) -> np.ndarray:
    """``[P(d < -r), P(-r <= d <= r), P(d > r)]`` from draws of a difference (last axis: draws).

    Examples
    --------
    >>> rope_probabilities([-0.3, -0.01, 0.0, 0.02, 0.5], 0.05).round(3).tolist()
    [0.2, 0.6, 0.2]
    """
    d = np.asarray(diff_draws, dtype=float)
    r = check_rope(rope)
    below = (d < -r).mean(axis=-1)
    above = (d > r).mean(axis=-1)
    return np.stack([below, 1.0 - below - above, above], axis=-1)


def rope_probabilities_beta(alpha_a: Any, beta_a: Any, alpha_b: Any, beta_b: Any, rope: float,
                            n_grid: int = 801) -> np.ndarray:
    """ROPE probabilities of ``theta_a - theta_b`` for independent Betas, by quadrature.

    ``P(d < -r) = E_b[F_a(theta_b - r)]`` and ``P(d > r) = 1 - E_b[F_a(theta_b + r)]``; the
    expectation over Beta(alpha_b, beta_b) is a weighted sum over ``n_grid`` points spanning
    its mean +- 12 sd (clipped to [0, 1]) with normalised density weights. Broadcasts over the
    parameters; returns shape (..., 3).

    Examples
    --------
    >>> p = rope_probabilities_beta(50, 50, 50, 50, 0.0)
    >>> bool(abs(p[0] - 0.5) < 1e-3 and abs(p[2] - 0.5) < 1e-3)
    True
    """
    r = check_rope(rope)
    a1, b1, a2, b2 = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (alpha_a, beta_a, alpha_b, beta_b)))
    mean, var = beta_moments(a2, b2)
    sd = np.sqrt(var)[..., None]
    t = np.linspace(-12.0, 12.0, n_grid)
    lo = np.maximum(mean[..., None] - 12 * sd, 0.0)
    hi = np.minimum(mean[..., None] + 12 * sd, 1.0)
    y = lo + (hi - lo) * (t + 12.0) / 24.0
    yc = np.clip(y, 1e-300, 1 - 1e-16)
    # the Beta log density up to its constant (log B(a, b) cancels when the weights are normalised)
    logpdf = (a2[..., None] - 1) * np.log(yc) + (b2[..., None] - 1) * np.log1p(-yc)
    w = np.exp(logpdf - logpdf.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    below = (w * special.betainc(a1[..., None], b1[..., None], np.clip(y - r, 0.0, 1.0))).sum(axis=-1)
    above = 1.0 - (w * special.betainc(a1[..., None], b1[..., None], np.clip(y + r, 0.0, 1.0))).sum(axis=-1)
    below = np.clip(below, 0.0, 1.0)
    above = np.clip(above, 0.0, 1.0)
    return np.stack([below, np.clip(1.0 - below - above, 0.0, 1.0), above], axis=-1)


def rope_decision(probabilities: Any, threshold: float = 0.95) -> np.ndarray:
    """Decision code per row of ROPE probabilities: 0 below, 1 inside, 2 above, -1 undecided.

    A region is decided when its posterior probability reaches ``threshold``.

    Examples
    --------
    >>> rope_decision([[0.97, 0.03, 0.0], [0.2, 0.5, 0.3]]).tolist()
    [0, -1]
    """
    p = np.asarray(probabilities, dtype=float)
    best = p.argmax(axis=-1)
    return np.where(np.take_along_axis(p, best[..., None], axis=-1)[..., 0] >= threshold, best, -1)
