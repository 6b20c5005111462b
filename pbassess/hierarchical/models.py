"""The hierarchical models' counts and PyMC builders, under one import (no model is built here).

The counts per environment (x class / bin) come from :mod:`pbassess.hierarchical.counts`; the
PyMC models and their :class:`~pbassess.inference.Spec` live in
:mod:`pbassess.pymc_models.hierarchical` (:func:`accuracy_model`,
:class:`HierarchicalAccuracySpec`, :func:`calibration_model`, :class:`HierarchicalCalibrationSpec`,
:func:`centered_cells`, :func:`spread_estimate`, :func:`population_draws`) and are re-exported
here so that existing imports keep working. Fitting goes through :func:`pbassess.inference.fit`
(the one place that merges NUTS settings).

Examples
--------
>>> from pbassess.hierarchical.models import accuracy_model
>>> sorted(v.name for v in accuracy_model([30, 4], [27, 2], environments=["a", "b"]).free_RVs)
['mu', 'sigma', 'u_c', 'u_z']
"""

from __future__ import annotations

from pbassess.hierarchical.counts import (
    CalibrationCounts,
    EnvironmentCounts,
    calibration_counts,
    environment_counts,
)
from pbassess.pymc_models.hierarchical import (
    CENTERING_THRESHOLD,
    HIERARCHICAL_NUTS_DEFAULTS,
    KINDS,
    POOLINGS,
    HierarchicalAccuracySpec,
    HierarchicalCalibrationSpec,
    accuracy_model,
    calibration_model,
    centered_cells,
    observations_from_counts,
    population_draws,
    spread_estimate,
)

__all__ = [
    "CENTERING_THRESHOLD",
    "HIERARCHICAL_NUTS_DEFAULTS",
    "KINDS",
    "POOLINGS",
    "CalibrationCounts",
    "EnvironmentCounts",
    "HierarchicalAccuracySpec",
    "HierarchicalCalibrationSpec",
    "accuracy_model",
    "calibration_counts",
    "calibration_model",
    "centered_cells",
    "environment_counts",
    "observations_from_counts",
    "population_draws",
    "spread_estimate",
]
