"""Synthetic classifiers with known calibration, for simulation studies and tests.

A pool of top-1 confidences ``c_i`` (``1/K + (1 - 1/K) * Beta(a, b)``, skewed towards 1 like a
trained network's) and the true probability ``q_i`` that each prediction is correct:

- ``"calibrated"``: ``q = c`` (every binned ECE of the pool is exactly 0),
- ``"overconfident"``: ``logit(q) = logit(c) / T`` with ``T = 1 + strength`` (temperature),
- ``"shifted"``: ``q = c - strength`` (clipped to [0, 1]), a uniform accuracy deficit.

The true binned ECE of the pool, ``sum_b p_b |mean_b q - mean_b c|``, is the truth an
estimate from labels is compared with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import expit, logit

from pbassess.calibration.binning import bin_sums, resolve_edges
from pbassess.errors import ConfigError
from pbassess.stats.sampling import as_generator

__all__ = ["SyntheticCalibrationPool", "synthetic_pool"]

KINDS = ("calibrated", "overconfident", "shifted")


@dataclass(frozen=True)
class SyntheticCalibrationPool:
    """Confidences and true correctness probabilities of a synthetic classifier.

    Examples
    --------
    >>> pool = synthetic_pool(5000, "shifted", 0.05, seed=0)
    >>> isinstance(pool, SyntheticCalibrationPool), pool.kind, round(pool.true_ece(), 3)
    (True, 'shifted', 0.05)
    """

    confidence: np.ndarray
    true_prob: np.ndarray
    kind: str
    strength: float

    def true_ece(self, bins: Any = 10) -> float:
        """The pool's binned ECE under the true correctness probabilities."""
        edges = resolve_edges(self.confidence, bins)
        b = bin_sums(self.confidence, self.true_prob, edges)
        occ = b.n > 0
        return float(np.sum(b.n[occ] / b.n.sum() * np.abs(b.outcome_sum[occ] - b.score_sum[occ]) / b.n[occ]))

    def draw_labels(self, n_labeled: int, seed: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Indices of ``n_labeled`` items drawn without replacement and whether each is correct."""
        rng = as_generator(seed)
        if not 0 < n_labeled <= self.confidence.size:
            raise ConfigError(f"n_labeled must lie in 1..{self.confidence.size}, got {n_labeled}")
        idx = rng.choice(self.confidence.size, size=int(n_labeled), replace=False)
        return idx, rng.uniform(size=idx.size) < self.true_prob[idx]


def synthetic_pool(n_items: int = 20_000, kind: str = "calibrated", strength: float = 0.0, *, n_classes: int = 10,
                   a: float = 4.0, b: float = 1.0, seed: Any = None) -> SyntheticCalibrationPool:
    """A synthetic pool of ``n_items`` top-1 confidences with known correctness probabilities.

    Parameters
    ----------
    n_items : int
    kind : {"calibrated", "overconfident", "shifted"}
        ``calibrated``: correct with probability equal to the confidence; ``overconfident``:
        ``sigmoid(logit(c) / (1 + strength))``; ``shifted``: ``c - strength``.
    strength : float
        Size of the miscalibration.
    n_classes : int
        Confidences lie in ``[1 / n_classes, 1)``.
    a, b : float
        Confidences are ``1/K + (1 - 1/K) Beta(a, b)``.
    seed : int or numpy.random.Generator, optional

    Returns
    -------
    SyntheticCalibrationPool
        ``confidence``, ``true_prob`` and the true ECE (``true_ece()``).

    Examples
    --------
    >>> pool = synthetic_pool(5000, "calibrated", seed=0)
    >>> pool.true_ece()
    0.0
    >>> round(synthetic_pool(5000, "shifted", 0.05, seed=0).true_ece(), 3)
    0.05
    """
    if kind not in KINDS:
        raise ConfigError(f"unknown kind {kind!r} (choose one of {', '.join(KINDS)})")
    rng = as_generator(seed)
    floor = 1.0 / n_classes
    c = floor + (1 - floor) * rng.beta(a, b, size=int(n_items))
    c = np.clip(c, floor, 1 - 1e-6)
    if kind == "calibrated":
        q = c.copy()
    elif kind == "overconfident":
        q = expit(logit(c) / (1.0 + strength))
    else:
        q = np.clip(c - strength, 0.0, 1.0)
    return SyntheticCalibrationPool(confidence=c, true_prob=q, kind=kind, strength=float(strength))
