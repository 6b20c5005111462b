"""Closed-form surface estimators and the helpers shared by all estimators.

* CPredictor: one global accuracy for every arm (Beta(1 + correct, 1 + wrong) over all labels).
* Beta-I: an independent Beta per arm, warm-started with lambda x (global accuracy, 1 - global
  accuracy) pseudo-counts, lambda = 0.1 (Piratla et al. 2021; ``SimpleExplorer.fit`` of
  github.com/vihari/AAA).
* :func:`pool_sparse_counts`: BetaGP-SLP's pooling of arms with few labels from their nearest
  arms by kernel similarity (``simplev3_rloss`` of the AAA code).
* :func:`beta_mixture_summary`: mean, variance and HDI of arm accuracies whose posterior is a
  mixture over MCMC draws of Beta(alpha_s, beta_s) (Rao-Blackwellised).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.constants import CI_PROB
from pbassess.errors import ConfigError
from pbassess.stats.beta import beta_hdi
from pbassess.stats.intervals import hdi_from_draws
from pbassess.stats.sampling import as_generator
from pbassess.surface.arms import ArmCounts

__all__ = ["BETA_I_LAMBDA", "beta_i_posterior", "beta_mixture_summary", "cpredictor_posterior",
           "pool_sparse_counts"]

BETA_I_LAMBDA = 0.1


def cpredictor_posterior(arms: ArmCounts) -> tuple[np.ndarray, np.ndarray]:
    """Beta parameters of CPredictor: the global Beta(1 + correct, 1 + wrong) for every arm.

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

    Examples
    --------
    >>> a, b = beta_i_posterior(ArmCounts.from_arrays([4, 0], [3, 0]))
    >>> a.round(3).tolist(), b.round(3).tolist()
    ([3.075, 0.075], [1.025, 0.025])
    """
    if lam <= 0:
        raise ConfigError(f"the Beta-I warm-start weight lambda must be positive, got {lam}")
    p0 = arms.global_accuracy if prior_accuracy is None else float(prior_accuracy)
    p0 = min(max(p0, 1e-3), 1 - 1e-3)  # a proper Beta even when every label so far is right (or wrong)
    return arms.correct + lam * p0, arms.n - arms.correct + lam * (1.0 - p0)


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


def pool_sparse_counts(arms: ArmCounts, similarity: np.ndarray, *, max_labels: float = 5.0,
                       k: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """BetaGP-SLP pooling: counts of sparsely labeled arms replaced by a neighbourhood average.

    For every observed arm with ``0 < n <= max_labels``, its labeled and correct counts become
    the mean of those of its ``k`` most similar observed arms (by ``similarity``, an A x A
    kernel matrix; the arm itself is the most similar), as in ``simplev3_rloss`` of the AAA
    code (lambda = 1/k, the arm's own counts replaced). Other arms keep their counts.

    Examples
    --------
    >>> arms = ArmCounts.from_arrays([1, 30, 30, 0], [0, 30, 15, 0])
    >>> sim = np.array([[1, .9, .5, .1], [.9, 1, .2, .1], [.5, .2, 1, .1], [.1, .1, .1, 1.]])
    >>> n, c = pool_sparse_counts(arms, sim)
    >>> n.round(2).tolist(), c.round(2).tolist()
    ([20.33, 30.0, 30.0, 0.0], [15.0, 30.0, 15.0, 0.0])
    """
    if k < 1:
        raise ConfigError(f"the pooling neighbourhood size must be at least 1, got {k}")
    n, c = arms.n.copy(), arms.correct.copy()
    observed = np.flatnonzero(arms.n > 0)
    sparse = observed[arms.n[observed] <= max_labels]
    if sparse.size == 0 or observed.size == 0:
        return n, c
    sim = np.asarray(similarity, float)[np.ix_(sparse, observed)]
    kk = min(k, observed.size)
    top = observed[np.argsort(-sim, axis=1, kind="stable")[:, :kk]]
    n[sparse] = arms.n[top].mean(axis=1)
    c[sparse] = arms.correct[top].mean(axis=1)
    return n, c
