"""Assessments: each counts cells (:func:`pbassess.counting.count_cells`), computes a posterior
(``inference="conjugate"`` or ``"nuts"``, :mod:`pbassess.inference`) and returns a result of
:mod:`pbassess.results` (an ArviZ DataTree with a pointwise log-likelihood). Every function takes
``preds`` as anything :func:`pbassess.data.as_predictions` accepts (a DataFrame goes straight in).

* :func:`assess_accuracy` – classwise (or per-group / per-region) accuracy, rankings;
* :func:`assess_calibration` – Bayesian reliability diagram, marginal and classwise ECE, bias;
* :func:`assess_confusion` – confusion probabilities and expected cost under a cost matrix;
* :func:`compare_groups`, :func:`compare_models` – differences, P(diff > 0), ROPE;
* :func:`assess_hierarchical`, :func:`assess_hierarchical_calibration` – partial pooling
  across environments;
* :func:`compare_priors` – several priors for one assessment: exact or PSIS LOO, prior
  sensitivity, prior predictive checks.
"""

from pbassess.assess.accuracy import AccuracyResult, assess_accuracy
from pbassess.assess.calibration import CalibrationResult, assess_calibration
from pbassess.assess.compare import ComparisonResult, compare_groups, compare_models
from pbassess.assess.cost import CostResult, assess_confusion
from pbassess.assess.fairness import fairness_table
from pbassess.assess.hierarchical import (
    HierarchicalCalibrationResult,
    HierarchicalResult,
    assess_hierarchical,
    assess_hierarchical_calibration,
)
from pbassess.assess.pooling import ModelComparison, compare_pooling
from pbassess.assess.priors import PriorComparison, compare_priors
from pbassess.assess.rope_labeling import simulate_rope_labeling

__all__ = [
    "AccuracyResult", "CalibrationResult", "ComparisonResult", "CostResult", "HierarchicalCalibrationResult",
    "HierarchicalResult", "ModelComparison", "PriorComparison", "assess_accuracy", "assess_calibration", "assess_confusion", "assess_hierarchical",
    "assess_hierarchical_calibration", "compare_groups", "compare_models", "compare_pooling", "compare_priors", "fairness_table", "simulate_rope_labeling",
]
