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

from pbassess._lazy import lazy_exports

#: Each public name and the module it lives in (imported on first use: see :mod:`pbassess._lazy`).
_EXPORTS = {
    "CONVENTIONS": "pbassess.calibration.binning",
    "assign_bins": "pbassess.calibration.binning",
    "bin_sums": "pbassess.calibration.binning",
    "equal_mass_edges": "pbassess.calibration.binning",
    "equal_width_edges": "pbassess.calibration.binning",
    "paired_ece_draws": "pbassess.calibration.evaluation",
    "recalibrate": "pbassess.calibration.evaluation",
    "adaptive_calibration_error": "pbassess.calibration.metrics",
    "classwise_ece": "pbassess.calibration.metrics",
    "debiased_ece": "pbassess.calibration.metrics",
    "expected_calibration_error": "pbassess.calibration.metrics",
    "marginal_calibration_error": "pbassess.calibration.metrics",
    "max_calibration_error": "pbassess.calibration.metrics",
    "mean_bin_gap": "pbassess.calibration.metrics",
    "predicted_class_ece": "pbassess.calibration.metrics",
    "rms_calibration_error": "pbassess.calibration.metrics",
    "top_label_ece": "pbassess.calibration.metrics",
    "beta_metric_draws": "pbassess.calibration.posterior",
    "calibration_decision": "pbassess.calibration.posterior",
    "compare_ece_estimators": "pbassess.calibration.posterior",
    "operating_characteristics": "pbassess.calibration.shrinkage",
    "pool_bins": "pbassess.calibration.posterior",
    "METHODS": "pbassess.calibration.methods",
    "apply_top1": "pbassess.calibration.recalibration",
    "fit_beta": "pbassess.calibration.recalibration",
    "fit_histogram": "pbassess.calibration.recalibration",
    "fit_isotonic": "pbassess.calibration.recalibration",
    "fit_platt": "pbassess.calibration.recalibration",
    "fit_recalibrator": "pbassess.calibration.recalibration",
    "fit_temperature": "pbassess.calibration.recalibration",
    "sample_shrinkage": "pbassess.calibration.shrinkage",
    "shrinkage_model": "pbassess.calibration.shrinkage",
    "shrinkage_posterior": "pbassess.calibration.shrinkage",
    "synthetic_pool": "pbassess.calibration.simulate",
    "smooth_ece": "pbassess.calibration.smooth",
    "smooth_reliability_curve": "pbassess.calibration.smooth",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "CONVENTIONS", "METHODS", "adaptive_calibration_error", "apply_top1", "assign_bins", "beta_metric_draws",
    "bin_sums", "calibration_decision", "classwise_ece", "compare_ece_estimators", "debiased_ece",
    "equal_mass_edges", "equal_width_edges", "expected_calibration_error", "fit_beta", "fit_histogram",
    "fit_isotonic", "fit_platt", "fit_recalibrator", "fit_temperature", "marginal_calibration_error",
    "max_calibration_error", "mean_bin_gap", "operating_characteristics", "paired_ece_draws", "pool_bins", "predicted_class_ece", "recalibrate", "rms_calibration_error",
    "sample_shrinkage", "shrinkage_model", "shrinkage_posterior", "smooth_ece", "smooth_reliability_curve",
    "synthetic_pool", "top_label_ece",
]
