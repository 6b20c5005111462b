"""Expected calibration error from counts and from posterior draws."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["ece_from_draws", "frequentist_ece"]


def ece_from_draws(accuracy_draws: Any, bin_weight: Any, bin_score: Any) -> np.ndarray:
    """ECE of each posterior draw: ``sum_b p_b |theta_b - s_b|``.

    Parameters
    ----------
    accuracy_draws : array_like, shape (..., B)
        Draws of the accuracy theta_b of each bin (leading axes batch: draws, classes, ...).
    bin_weight : array_like, shape (..., B)
        p_b, the share of the pool in each bin (sums to one over B).
    bin_score : array_like, shape (..., B)
        s_b, the mean score of the pool's items in each bin.

    Examples
    --------
    >>> ece_from_draws([[0.5, 0.9]], [0.5, 0.5], [0.6, 0.9]).round(6).tolist()
    [0.05]
    """
    theta = np.asarray(accuracy_draws, dtype=float)
    return np.sum(np.asarray(bin_weight) * np.abs(theta - np.asarray(bin_score)), axis=-1)


def frequentist_ece(n: Any, correct: Any, score_sum: Any) -> float:
    """The plug-in ECE of labeled items: ``sum_b (n_b / N) |acc_b - conf_b|``.

    Examples
    --------
    >>> frequentist_ece([2, 2], [1, 2], [1.2, 1.8])
    0.1
    """
    n = np.asarray(n, dtype=float)
    total = n.sum()
    if total == 0:
        return float("nan")
    nz = n > 0
    acc = np.asarray(correct, dtype=float)[nz] / n[nz]
    conf = np.asarray(score_sum, dtype=float)[nz] / n[nz]
    return float(np.round(np.sum(n[nz] / total * np.abs(acc - conf)), 15))
