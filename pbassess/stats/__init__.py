"""Conjugate statistics: plain array functions over counts and posterior draws.

Layer 2 of pbassess (after :mod:`pbassess.data`): no xarray, no PyMC; everything batches over
leading dimensions (draws, runs) and is what the active-assessment loop and the PyMC models'
agreement tests use.
"""

from pbassess._lazy import lazy_exports

#: Each public name and the module it lives in (imported on first use: see :mod:`pbassess._lazy`).
_EXPORTS = {
    "beta_hdi": "pbassess.stats.beta",
    "beta_posterior": "pbassess.stats.beta",
    "beta_prior": "pbassess.stats.beta",
    "check_pseudocount": "pbassess.stats.beta",
    "beta_binomial_log_marginal": "pbassess.stats.betabinom",
    "beta_binomial_log_marginal_grad": "pbassess.stats.betabinom",
    "ece_from_draws": "pbassess.stats.calibration",
    "frequentist_ece": "pbassess.stats.calibration",
    "bin_edges": "pbassess.stats.counts",
    "bin_index": "pbassess.stats.counts",
    "binned_counts": "pbassess.stats.counts",
    "confusion_counts": "pbassess.stats.counts",
    "region_counts": "pbassess.stats.counts",
    "hdi_from_draws": "pbassess.stats.intervals",
    "prob_extreme": "pbassess.stats.ranking",
    "prob_in_extreme_m": "pbassess.stats.ranking",
    "rank_draws": "pbassess.stats.ranking",
    "as_generator": "pbassess.stats.sampling",
    "beta_draws": "pbassess.stats.sampling",
    "dirichlet_draws": "pbassess.stats.sampling",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "as_generator", "beta_binomial_log_marginal", "beta_binomial_log_marginal_grad", "beta_draws", "beta_hdi", "beta_posterior", "beta_prior", "bin_edges", "bin_index", "check_pseudocount",
    "binned_counts", "confusion_counts", "dirichlet_draws", "ece_from_draws", "frequentist_ece", "hdi_from_draws",
    "prob_extreme", "prob_in_extreme_m", "rank_draws", "region_counts",
]
