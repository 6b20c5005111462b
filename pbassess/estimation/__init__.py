"""Label-efficient estimation: few labels, many predictions (issue 11).

* :func:`estimate` - a mean-of-items metric per region by classical (Wald / Wilson), PPI++
  (power-tuned, :mod:`~pbassess.estimation.frequentist`) and Bayesian methods
  (confidence-informed hierarchical prior, :mod:`~pbassess.estimation.bayes`);
* :mod:`~pbassess.estimation.active` - active estimation (uncertainty-proportional labeling,
  inverse-probability weighting);
* :mod:`~pbassess.estimation.compare_active` - active comparison of groups (label where the
  ROPE decision is most likely to move);
* :mod:`~pbassess.estimation.eb` - the empirical-Bayes fit of the confidence-to-accuracy prior,
  shared with the adaptive prior of active assessment.
"""

from pbassess._lazy import lazy_exports

#: Each public name and the module it lives in (imported on first use: see :mod:`pbassess._lazy`).
_EXPORTS = {
    "active_sample": "pbassess.estimation.active",
    "ipw_mean_interval": "pbassess.estimation.active",
    "simulate_estimation": "pbassess.estimation.active",
    "uncertainty_weights": "pbassess.estimation.active",
    "EstimationResult": "pbassess.estimation.api",
    "LEGACY_METHODS": "pbassess.estimation.methods",
    "METHODS": "pbassess.estimation.methods",
    "estimate": "pbassess.estimation.api",
    "bayes_estimate": "pbassess.estimation.bayes",
    "cell_counts": "pbassess.estimation.bayes",
    "confidence_prior_model": "pbassess.estimation.bayes",
    "confidence_prior_spec": "pbassess.estimation.bayes",
    "decision_probabilities": "pbassess.estimation.compare_active",
    "label_value": "pbassess.estimation.compare_active",
    "next_group": "pbassess.estimation.compare_active",
    "ConfidencePrior": "pbassess.estimation.eb",
    "fit_confidence_prior": "pbassess.estimation.eb",
    "laplace_draws": "pbassess.estimation.eb",
    "classical_interval": "pbassess.estimation.frequentist",
    "ppi_lambda": "pbassess.estimation.frequentist",
    "ppi_mean_interval": "pbassess.estimation.frequentist",
    "MeanEstimand": "pbassess.estimation.items",
    "item_statistic": "pbassess.estimation.items",
    "region_codes": "pbassess.estimation.items",
    "BayesEstimateResult": "pbassess.estimation.result",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "LEGACY_METHODS", "METHODS", "BayesEstimateResult", "ConfidencePrior", "EstimationResult", "MeanEstimand", "active_sample",
    "bayes_estimate", "cell_counts", "classical_interval", "confidence_prior_model", "confidence_prior_spec",
    "decision_probabilities", "estimate",
    "fit_confidence_prior", "ipw_mean_interval", "item_statistic", "label_value", "laplace_draws", "next_group",
    "ppi_lambda", "ppi_mean_interval", "region_codes", "simulate_estimation", "uncertainty_weights",
]
