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

from pbassess.estimation.active import (
    active_sample,
    ipw_mean_interval,
    simulate_estimation,
    uncertainty_weights,
)
from pbassess.estimation.api import METHODS, EstimationResult, estimate
from pbassess.estimation.bayes import (
    bayes_estimate,
    cell_counts,
    confidence_prior_model,
    confidence_prior_spec,
)
from pbassess.estimation.compare_active import decision_probabilities, label_value, next_group
from pbassess.estimation.eb import ConfidencePrior, fit_confidence_prior, laplace_draws
from pbassess.estimation.frequentist import classical_interval, ppi_lambda, ppi_mean_interval
from pbassess.estimation.items import MeanEstimand, item_statistic, region_codes
from pbassess.estimation.result import BayesEstimateResult

__all__ = [
    "METHODS", "BayesEstimateResult", "ConfidencePrior", "EstimationResult", "MeanEstimand", "active_sample",
    "bayes_estimate", "cell_counts", "classical_interval", "confidence_prior_model", "confidence_prior_spec",
    "decision_probabilities", "estimate",
    "fit_confidence_prior", "ipw_mean_interval", "item_statistic", "label_value", "laplace_draws", "next_group",
    "ppi_lambda", "ppi_mean_interval", "region_codes", "simulate_estimation", "uncertainty_weights",
]
