"""Closed-form surface estimators and the helpers shared by all estimators.

* CPredictor: one global accuracy for every arm (Beta(1 + correct, 1 + wrong) over all labels).
* Beta-I: an independent Beta per arm, warm-started with lambda x (global accuracy, 1 - global
  accuracy) pseudo-counts, lambda = 0.1 (Piratla et al. 2021; ``SimpleExplorer.fit`` of
  github.com/vihari/AAA).
* :func:`pool_sparse_counts`: BetaGP-SLP's pooling of arms with few labels from their nearest
  arms by kernel similarity (``simplev3_rloss`` of the AAA code; defined beside the BetaGP models
  in :mod:`pbassess.pymc_models.surface`).
* :func:`beta_mixture_summary`: mean, variance and HDI of arm accuracies whose posterior is a
  mixture over MCMC draws of Beta(alpha_s, beta_s) (Rao-Blackwellised).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.constants import CI_PROB
from pbassess.pymc_models.surface import BETA_I_LAMBDA, beta_i_prior, pool_sparse_counts
from pbassess.stats.beta import beta_hdi
from pbassess.stats.intervals import hdi_from_draws
from pbassess.stats.sampling import as_generator
from pbassess.surface.arms import ArmCounts

__all__ = ["BETA_I_LAMBDA", "beta_i_posterior", "beta_mixture_summary", "cpredictor_posterior",
           "pool_sparse_counts"]



def cpredictor_posterior(arms: ArmCounts) -> tuple[np.ndarray, np.ndarray]:
    """Beta parameters of CPredictor: the global Beta(1 + correct, 1 + wrong) for every arm.

    Parameters
    ----------
    arms : ArmCounts

    Returns
    -------
    alpha, beta : ndarray, shape (A,)
        The global posterior Beta parameters, repeated for every arm.

    Examples
    --------
    >>> a, b = cpredictor_posterior(ArmCounts.from_arrays([3, 1], [2, 1]))
    >>> a.tolist(), b.tolist()
    ([4.0, 4.0], [2.0, 2.0])
    """
    c, n = float(arms.correct.sum()), float(arms.n.sum())
    return np.full(arms.n_arms, 1.0 + c), np.full(arms.n_arms, 1.0 + n - c)


def beta_i_posterior(arms: ArmCounts, lam: float = BETA_I_LAMBDA,
                     prior_accuracy: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Beta parameters of Beta-I: correct + lam * p0, wrong + lam * (1 - p0), p0 = global accuracy.

    Parameters
    ----------
    arms : ArmCounts
    lam : float
        Prior strength.
    prior_accuracy : float, optional
        ``p0`` (default the global accuracy of the labeled items).

    Returns
    -------
    alpha, beta : ndarray, shape (A,)
        Posterior Beta parameters of each arm.

    Examples
    --------
    >>> a, b = beta_i_posterior(ArmCounts.from_arrays([4, 0], [3, 0]))
    >>> a.round(3).tolist(), b.round(3).tolist()
    ([3.075, 0.075], [1.025, 0.025])
    """
    a, b = beta_i_prior(arms, lam, prior_accuracy)
    return arms.correct + a, arms.n - arms.correct + b


def beta_summary(alpha: np.ndarray, beta: np.ndarray, ci_prob: float = CI_PROB):
    """Mean, variance and exact HDI of Beta(alpha, beta), elementwise."""
    total = alpha + beta
    mean = alpha / total
    var = alpha * beta / (total**2 * (total + 1.0))
    return mean, var, beta_hdi(alpha, beta, ci_prob)


def beta_mixture_summary(alpha_draws: np.ndarray, beta_draws: np.ndarray, *, ci_prob: float = CI_PROB,
                         seed: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Summary of arm accuracies distributed as a mixture over draws s of Beta(alpha_s, beta_s).

    The mean and variance are exact for the mixture (law of total variance); the HDI is taken
    from one Beta draw per mixture component. Returns (mean, var, hdi (A, 2), draws (S, A)).

    Examples
    --------
    >>> m, v, h, d = beta_mixture_summary(np.full((4000, 1), 3.0), np.full((4000, 1), 1.0), seed=0)
    >>> round(float(m[0]), 3), round(float(v[0]), 4)
    (0.75, 0.0375)
    """
    a, b = np.asarray(alpha_draws, float), np.asarray(beta_draws, float)
    total = a + b
    means = a / total
    within = a * b / (total**2 * (total + 1.0))
    mean = means.mean(axis=0)
    var = within.mean(axis=0) + means.var(axis=0)
    draws = as_generator(seed).beta(a, b)
    return mean, var, hdi_from_draws(draws, ci_prob, axis=0), draws
