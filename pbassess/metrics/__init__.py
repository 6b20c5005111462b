"""The metric registry and the conjugate posteriors of every registered metric.

>>> from pbassess.metrics import get_metric, list_metrics, metric_statistics, metric_posterior
>>> from pbassess import Predictions
>>> p = Predictions.from_probs([[0.8, 0.2], [0.4, 0.6], [0.7, 0.3]], labels=[0, 0, 1])
>>> s = metric_statistics(p, "nll")
>>> round(float(s["total"] / s["n"]), 4)         # mean of -log(0.8), -log(0.4), -log(0.3)
0.7811
>>> metric_posterior("nll", s, n_draws=100, seed=0).dims
('draw',)

See :mod:`pbassess.metrics.registry` for the fields of a :class:`Metric` and the built-in
entries (accuracy, error_rate, tpr, fpr, precision, calibration_bias, nll, brier, entropy,
confidence, confusion, class_prevalence), and :mod:`pbassess.metrics.bootstrap` for the
Bayesian bootstrap of continuous per-item statistics.
"""

from pbassess.metrics.bootstrap import bayesian_bootstrap, bootstrap_moments
from pbassess.metrics.posterior import metric_posterior, metric_statistics
from pbassess.metrics.registry import (
    FAMILIES,
    REDUCTIONS,
    TOOLS,
    Metric,
    get_metric,
    list_metrics,
    metrics_used_by,
    register_metric,
)

__all__ = [
    "FAMILIES",
    "REDUCTIONS",
    "TOOLS",
    "Metric",
    "bayesian_bootstrap",
    "bootstrap_moments",
    "get_metric",
    "list_metrics",
    "metric_posterior",
    "metric_statistics",
    "metrics_used_by",
    "register_metric",
]
