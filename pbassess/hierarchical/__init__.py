"""Hierarchical multi-environment PyMC models over sufficient counts (layer 3).

Their results live in :mod:`pbassess.assess.hierarchical`; fitting the same data
independently / pooled / hierarchically and comparing the fits (LOO, prior predictive checks,
diagnostics) is :mod:`pbassess.assess.pooling`.
"""

from pbassess.hierarchical.models import (
    accuracy_model,
    calibration_counts,
    calibration_model,
    environment_counts,
)

__all__ = ["accuracy_model", "calibration_counts", "calibration_model", "environment_counts"]
