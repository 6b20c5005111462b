"""Hierarchical multi-environment counts (layer 3); the models are in :mod:`pbassess.pymc_models.hierarchical`.

Their results live in :mod:`pbassess.assess.hierarchical`; fitting the same data
independently / pooled / hierarchically and comparing the fits (LOO, prior predictive checks,
diagnostics) is :mod:`pbassess.assess.pooling`. Every fit goes through :func:`pbassess.inference.fit`.
"""

from pbassess.hierarchical.models import (
    accuracy_model,
    calibration_counts,
    calibration_model,
    environment_counts,
)

__all__ = ["accuracy_model", "calibration_counts", "calibration_model", "environment_counts"]
