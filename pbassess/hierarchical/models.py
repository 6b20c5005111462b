"""Hierarchical PyMC models over sufficient counts, one cell per environment (x class / bin).

The accuracy models (:func:`accuracy_model`, its :class:`HierarchicalAccuracySpec` for
:func:`pbassess.inference.fit`, :func:`centered_cells`, :func:`spread_estimate`,
:func:`population_draws`) live in :mod:`pbassess.pymc_models.hierarchical` and are re-exported
here so that existing imports keep working.

:func:`calibration_model`: per environment and score bin, ``logit theta_eb = m_b + sigma z_eb``,
the population reliability curve ``sigmoid(m_b)`` shared by all environments, and the posterior
of each environment's ECE ``sum_b w_eb |theta_eb - s_eb|`` (same centring rule as the accuracy
model; see :mod:`pbassess.pymc_models.hierarchical`).

:func:`sample_model` (deprecated: :func:`pbassess.inference.fit` or
:func:`pbassess.inference.sample_model`) runs NUTS with the project's defaults
(:data:`DEFAULT_SAMPLER`).
"""

from __future__ import annotations

import numpy as np

from pbassess.errors import ConfigError
from pbassess.hierarchical.counts import (
    CalibrationCounts,
    EnvironmentCounts,
    calibration_counts,
    environment_counts,
)
from pbassess.hierarchical.sampling import (
    DEFAULT_SAMPLER,
    sample_model,
    sampler_settings,
)
from pbassess.pymc_models.hierarchical import (
    CENTERING_THRESHOLD,
    KINDS,
    MU_SCALE,
    POOLINGS,
    SIGMA_SCALE,
    HierarchicalAccuracySpec,
    _cell_names,
    _check_counts,
    _logit,
    _mixed_normal,
    _observe,
    accuracy_model,
    centered_cells,
    observations_from_counts,
    population_draws,
    spread_estimate,
)

__all__ = [
    "CENTERING_THRESHOLD",
    "DEFAULT_SAMPLER",
    "KINDS",
    "POOLINGS",
    "CalibrationCounts",
    "EnvironmentCounts",
    "HierarchicalAccuracySpec",
    "accuracy_model",
    "calibration_counts",
    "calibration_model",
    "centered_cells",
    "spread_estimate",
    "environment_counts",
    "observations_from_counts",
    "population_draws",
    "sample_model",
    "sampler_settings",
]


def calibration_model(
    counts: CalibrationCounts,
    *,
    prior: str = "uniform",
    parameterization: str = "auto",
):
    """Hierarchical reliability per environment, bin accuracies pooled across environments.

    ``logit theta_eb = m_b + sigma z_eb`` with ``m_b ~ Normal(loc_b, 1.5)`` (``loc_b = 0`` for
    ``prior="uniform"``, ``logit(mean score of bin b)`` for ``"informed"``, i.e. centred on
    perfect calibration) and ``sigma ~ HalfNormal(1)``; bins empty in every environment are
    left out. Deterministics: ``bin_accuracy`` (environment, bin), ``reliability`` (bin, the
    population curve ``sigmoid(m_b)``) and ``ece`` (environment) =
    ``sum_b w_eb |theta_eb - s_eb|`` with the pool's bin shares ``w`` and mean scores ``s``.

    Examples
    --------
    >>> import numpy as np
    >>> from pbassess import Predictions
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.uniform(0.5, 1, 200)
    >>> p = Predictions.from_top1(np.zeros(200, int), conf, (rng.random(200) > conf).astype(int),
    ...                           classes=["0", "1"], groups={"site": np.repeat(["x", "y"], 100)})
    >>> m = calibration_model(calibration_counts(p, "site", bins=5))
    >>> m.named_vars_to_dims["ece"]
    ('environment',)
    """
    import pymc as pm

    if prior not in ("uniform", "informed"):
        raise ConfigError(f"unknown prior {prior!r} (choose 'uniform' or 'informed')")
    n, k = _check_counts(counts.n, counts.k)
    used = counts.n_items.sum(axis=0) > 0
    bins = [b for b, u in zip(counts.bins, used, strict=True) if u]
    n, k = n[:, used], k[:, used]
    weight = counts.weight[:, used]
    score = np.nan_to_num(counts.score[:, used], nan=0.0)
    envs = list(counts.environments)
    dims = ("environment", "bin")
    with pm.Model(coords={"environment": envs, "bin": bins}) as model:
        if prior == "informed":
            pooled_score = np.nansum(counts.score[:, used] * counts.n_items[:, used], axis=0) / counts.n_items[:, used].sum(axis=0)
            loc = _logit(pooled_score)
        else:
            loc = np.zeros(len(bins))
        m_b = pm.Normal("bin_mu", loc, MU_SCALE, dims="bin")
        sigma = pm.HalfNormal("sigma", SIGMA_SCALE)
        centered = centered_cells(n, k, parameterization, "columns")
        eta = _mixed_normal("u", m_b[None, :], sigma, centered, dims, n.shape, _cell_names(envs, bins))
        theta = pm.Deterministic("bin_accuracy", pm.math.sigmoid(eta), dims=dims)
        pm.Deterministic("reliability", pm.math.sigmoid(m_b), dims="bin")
        pm.Deterministic("ece", (weight * abs(theta - score)).sum(axis=1), dims="environment")
        _observe(theta, n, k, _cell_names(envs, bins))
    model.pbassess_info = {"pooling": "hierarchical", "kind": "logit-normal", "prior": prior,
                           "parameterization": parameterization, "bins_used": used.tolist()}
    return model


