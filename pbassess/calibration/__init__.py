"""Calibration in full: frequentist metrics with named bin conventions, ECE posteriors that can say
"calibrated", a shrinkage calibration model, and recalibration.

Modules: :mod:`~pbassess.calibration.binning` (edges and the bin conventions of netcal,
torchmetrics and scikit-learn), :mod:`~pbassess.calibration.metrics` (ECE, MCE, RMSCE, ACE,
debiased, classwise, marginal, top-label), :mod:`~pbassess.calibration.smooth` (smooth ECE and
curve), :mod:`~pbassess.calibration.posterior` (posterior metrics, plug-in ECE, the decision
"calibrated"), :mod:`~pbassess.calibration.shrinkage` (the shrinkage model),
:mod:`~pbassess.calibration.recalibration` and :mod:`~pbassess.calibration.evaluation`
(recalibration maps, before/after with posteriors), :mod:`~pbassess.calibration.extras` (the
keys ``assess --metric calibration --json`` adds), :mod:`~pbassess.calibration.simulate`
(synthetic classifiers with known calibration).
"""

from pbassess.calibration.binning import (
    CONVENTIONS,
    assign_bins,
    bin_sums,
    equal_mass_edges,
    equal_width_edges,
)
from pbassess.calibration.evaluation import recalibrate
from pbassess.calibration.metrics import (
    adaptive_calibration_error,
    classwise_ece,
    debiased_ece,
    expected_calibration_error,
    marginal_calibration_error,
    max_calibration_error,
    predicted_class_ece,
    rms_calibration_error,
    top_label_ece,
)
from pbassess.calibration.posterior import (
    beta_metric_draws,
    calibration_decision,
    compare_ece_estimators,
    pool_bins,
)
from pbassess.calibration.recalibration import (
    METHODS,
    apply_top1,
    fit_beta,
    fit_histogram,
    fit_isotonic,
    fit_platt,
    fit_recalibrator,
    fit_temperature,
)
from pbassess.calibration.shrinkage import sample_shrinkage, shrinkage_model, shrinkage_posterior
from pbassess.calibration.simulate import synthetic_pool
from pbassess.calibration.smooth import smooth_ece, smooth_reliability_curve

__all__ = [
    "CONVENTIONS", "METHODS", "adaptive_calibration_error", "apply_top1", "assign_bins", "beta_metric_draws",
    "bin_sums", "calibration_decision", "classwise_ece", "compare_ece_estimators", "debiased_ece",
    "equal_mass_edges", "equal_width_edges", "expected_calibration_error", "fit_beta", "fit_histogram",
    "fit_isotonic", "fit_platt", "fit_recalibrator", "fit_temperature", "marginal_calibration_error",
    "max_calibration_error", "pool_bins", "predicted_class_ece", "recalibrate", "rms_calibration_error",
    "sample_shrinkage", "shrinkage_model", "shrinkage_posterior", "smooth_ece", "smooth_reliability_curve",
    "synthetic_pool", "top_label_ece",
]
