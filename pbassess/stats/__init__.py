"""Conjugate statistics: plain array functions over counts and posterior draws.

Layer 2 of pbassess (after :mod:`pbassess.data`): no xarray, no PyMC; everything batches over
leading dimensions (draws, runs) and is what the active-assessment loop and the PyMC models'
agreement tests use.
"""

from pbassess.stats.beta import beta_hdi, beta_posterior, beta_prior, check_pseudocount
from pbassess.stats.betabinom import beta_binomial_log_marginal, beta_binomial_log_marginal_grad
from pbassess.stats.calibration import ece_from_draws, frequentist_ece
from pbassess.stats.counts import (
    bin_edges,
    bin_index,
    binned_counts,
    confusion_counts,
    region_counts,
)
from pbassess.stats.intervals import hdi_from_draws
from pbassess.stats.ranking import prob_extreme, prob_in_extreme_m, rank_draws
from pbassess.stats.sampling import as_generator, beta_draws, dirichlet_draws

__all__ = [
    "as_generator", "beta_binomial_log_marginal", "beta_binomial_log_marginal_grad", "beta_draws", "beta_hdi", "beta_posterior", "beta_prior", "bin_edges", "bin_index", "check_pseudocount",
    "binned_counts", "confusion_counts", "dirichlet_draws", "ece_from_draws", "frequentist_ece", "hdi_from_draws",
    "prob_extreme", "prob_in_extreme_m", "rank_draws", "region_counts",
]
