"""Expected calibration error from counts and from posterior draws."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "mean_bin_gap_from_draws", "ece_from_draws", "frequentist_ece", "mce_from_draws", "plugin_ece", "prob_below",
    "rmsce_from_draws",
]


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


def mce_from_draws(accuracy_draws: Any, bin_score: Any, occupied: Any) -> np.ndarray:
    """MCE of each draw: ``max_b |theta_b - s_b|`` over the ``occupied`` bins (those with pool items).

    Examples
    --------
    >>> mce_from_draws([[0.5, 0.9, 0.0]], [0.6, 0.9, 0.5], [True, True, False]).round(6).tolist()
    [0.1]
    """
    gap = np.abs(np.asarray(accuracy_draws, dtype=float) - np.asarray(bin_score))
    occ = np.asarray(occupied, dtype=bool)
    return np.max(np.where(occ, gap, -np.inf), axis=-1)


def rmsce_from_draws(accuracy_draws: Any, bin_weight: Any, bin_score: Any) -> np.ndarray:
    """RMS calibration error of each draw: ``sqrt(sum_b p_b (theta_b - s_b)^2)``.

    Examples
    --------
    >>> rmsce_from_draws([[0.5, 0.9]], [0.5, 0.5], [0.6, 0.9]).round(6).tolist()
    [0.070711]
    """
    theta = np.asarray(accuracy_draws, dtype=float)
    return np.sqrt(np.sum(np.asarray(bin_weight) * (theta - np.asarray(bin_score)) ** 2, axis=-1))


def mean_bin_gap_from_draws(accuracy_draws: Any, bin_score: Any, occupied: Any) -> np.ndarray:
    """Unweighted mean of ``|theta_b - s_b|`` over the occupied bins (netcal's "ACE"; not Nixon et al.'s ACE).

    Examples
    --------
    >>> mean_bin_gap_from_draws([[0.5, 0.9, 0.0]], [0.6, 0.8, 0.5], [True, True, False]).round(6).tolist()
    [0.1]
    """
    gap = np.abs(np.asarray(accuracy_draws, dtype=float) - np.asarray(bin_score))
    occ = np.asarray(occupied, dtype=bool)
    return np.sum(np.where(occ, gap, 0.0), axis=-1) / max(int(occ.sum()), 1)


def plugin_ece(n: Any, correct: Any, prior_alpha: Any, prior_beta: Any, bin_weight: Any, bin_score: Any) -> float:
    """The ECE of the posterior-mean bin accuracies: ``sum_b p_b |E[theta_b] - s_b|``.

    The Bayesian estimator of Ji, Smyth and Steyvers (2020): with Beta priors centred on the
    diagonal, ``E[theta_b] = (alpha_b + k_b) / (alpha_b + beta_b + n_b)`` shrinks sparse bins
    towards ``s_b``, removing most of the upward bias of the frequentist ECE at few labels.

    Examples
    --------
    >>> plugin_ece([10, 0], [5, 0], [1.2, 1.8], [0.8, 0.2], [0.5, 0.5], [0.6, 0.9])
    0.041666666666667
    """
    n = np.asarray(n, dtype=float)
    mean = (np.asarray(prior_alpha, dtype=float) + np.asarray(correct, dtype=float)) / (
        np.asarray(prior_alpha, dtype=float) + np.asarray(prior_beta, dtype=float) + n)
    return float(np.round(np.sum(np.asarray(bin_weight) * np.abs(mean - np.asarray(bin_score))), 15))


def prob_below(draws: Any, eps: Any = (0.01, 0.02, 0.05)) -> dict[float, float]:
    """``P(value < eps)`` from posterior draws, for each threshold.

    Examples
    --------
    >>> prob_below([0.005, 0.015, 0.03, 0.06])
    {0.01: 0.25, 0.02: 0.5, 0.05: 0.75}
    """
    d = np.asarray(draws, dtype=float).ravel()
    thresholds = np.atleast_1d(np.asarray(eps, dtype=float))
    if d.size == 0:
        return {float(e): float("nan") for e in thresholds}
    return {float(e): float(np.mean(d < e)) for e in thresholds}
