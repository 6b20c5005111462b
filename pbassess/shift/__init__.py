"""Dataset-shift assessment after Ovadia et al. (2019): metrics, posteriors, the shift table.

* :mod:`pbassess.shift.metrics`: NumPy array functions of one prediction set (accuracy, NLL,
  Brier score and its decomposition, ECE, entropy, accuracy/count versus confidence, OOD AUROC).
* :mod:`pbassess.shift.posterior`: posteriors per level (Beta-binomial accuracy, Bayesian
  bootstrap NLL/Brier, Beta-per-bin ECE) and P(a metric worsens with shift).
* :mod:`pbassess.shift.hierarchical`: a PyMC model pooling accuracy across shift levels.
* :mod:`pbassess.shift.table`: :func:`shift_table` (xarray.Dataset per level and model),
  :func:`shift_records` (the JSON rows of ``pbassess shift``) and :func:`worsening`.
"""

from pbassess.metrics.posterior import (
    ece_draws,  # the binned-calibration family of the metric registry
)
from pbassess.shift.hierarchical import accuracy_trend_model, fit_accuracy_trend, fit_table_trend
from pbassess.shift.metrics import (
    accuracy_vs_confidence,
    brier_decomposition,
    brier_score,
    expected_calibration_error,
    negative_log_likelihood,
    ood_auroc,
    per_item_stats,
    predictive_entropy,
    soften_probabilities,
)
from pbassess.shift.posterior import (
    accuracy_draws,
    bayesian_bootstrap_mean,
    prob_worsens,
)
from pbassess.shift.table import find_ood, shift_records, shift_table, split_models, worsening

__all__ = [
    "accuracy_draws",
    "accuracy_trend_model",
    "accuracy_vs_confidence",
    "bayesian_bootstrap_mean",
    "brier_decomposition",
    "brier_score",
    "ece_draws",
    "expected_calibration_error",
    "find_ood",
    "fit_accuracy_trend",
    "fit_table_trend",
    "negative_log_likelihood",
    "ood_auroc",
    "per_item_stats",
    "predictive_entropy",
    "prob_worsens",
    "shift_records",
    "shift_table",
    "soften_probabilities",
    "split_models",
    "worsening",
]
