"""Plots: each takes a result object and draws it (computing never happens here)."""

from pbassess.plots.accuracy import plot_accuracy, plot_p_extreme, plot_rank_intervals
from pbassess.plots.active import plot_label_efficiency, plot_mrr, plot_success
from pbassess.plots.calibration import plot_classwise_ece, plot_ece, plot_reliability
from pbassess.plots.compare import plot_comparison, plot_fairness, plot_labeling_curves
from pbassess.plots.cost import plot_confusion, plot_expected_cost
from pbassess.plots.estimation import plot_estimates
from pbassess.plots.hierarchical import (
    plot_environment_accuracy,
    plot_environment_class_accuracy,
    plot_environment_reliability,
    plot_pooling_comparison,
)

__all__ = [
    "plot_accuracy", "plot_classwise_ece", "plot_comparison", "plot_confusion", "plot_ece",
    "plot_environment_accuracy", "plot_environment_class_accuracy", "plot_environment_reliability",
    "plot_estimates", "plot_expected_cost", "plot_fairness", "plot_label_efficiency", "plot_labeling_curves", "plot_mrr",
    "plot_p_extreme", "plot_pooling_comparison", "plot_rank_intervals", "plot_reliability", "plot_success",
]
