"""Hierarchical PyMC models over sufficient counts, one cell per environment (x class / bin).

A deployed classifier meets several *environments* (hospitals, periods, shift intensities,
demographic groups). Assessing each alone wastes labels; pooling them all hides differences.
These models sit between the two: each environment's accuracy is drawn from a population
distribution whose mean and spread are learned, so a sparsely labeled environment borrows
strength from the others.

Every model here takes sufficient counts only (labeled items ``n`` and correct items ``k`` per
cell) and builds a :class:`pymc.Model` with named dims and coords:

* :func:`accuracy_model` with ``pooling="hierarchical"`` (default), ``"independent"`` or
  ``"pooled"``, and for the hierarchical case ``kind="logit-normal"`` (non-centred
  ``logit theta_e = mu + sigma z_e``, hyperpriors ``mu ~ Normal(0, 1.5)``,
  ``sigma ~ HalfNormal(1)``) or ``kind="beta"`` (``theta_e ~ Beta(phi kappa, (1 - phi) kappa)``
  with ``phi ~ Beta(1, 1)`` and ``kappa ~ Pareto(1.5, 1)``, the ``(a + b)^(-5/2)`` hyperprior of
  Gelman et al., BDA3 ch. 5). With ``classes`` the cells are environment x predicted class and
  the logit is ``mu + a_e + b_c + g_ec`` (crossed environment and class effects plus their
  interaction, all partially pooled).
* :func:`calibration_model`: per environment and score bin, ``logit theta_eb = m_b + sigma z_eb``,
  the population reliability curve ``sigmoid(m_b)`` shared by all environments, and the
  posterior of each environment's ECE ``sum_b w_eb |theta_eb - s_eb|``.

Parameterisation. The non-centred form is the right one for sparsely labeled cells, but for a
cell with thousands of labels the data pin ``logit theta`` down and the non-centred posterior
becomes a narrow ridge (low ESS, divergences). ``parameterization="auto"`` (the default)
therefore centres exactly the cells whose likelihood precision on the logit scale,
``n p (1 - p)`` with ``p = (k + 1) / (n + 2)``, times the squared between-cell spread estimated
from the counts (:func:`spread_estimate`), exceeds :data:`CENTERING_THRESHOLD`, and keeps the
others non-centred (so when environments agree, everything stays non-centred). Both are the same model (same prior, same posterior); only the
geometry NUTS sees differs.

:func:`sample_model` runs NUTS with the project's defaults (:data:`DEFAULT_SAMPLER`, chosen by
``benchmarks/hierarchical.py``: no divergences on the fairness data and on 5 environments x
100 classes) and computes the pointwise log-likelihood needed for LOO.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from pbassess.constants import DEFAULT_PSEUDOCOUNT
from pbassess.errors import ConfigError, DataError
from pbassess.hierarchical.counts import (
    CalibrationCounts,
    EnvironmentCounts,
    calibration_counts,
    environment_counts,
)
from pbassess.hierarchical.sampling import (
    DEFAULT_SAMPLER,
    population_draws,
    sample_model,
    sampler_settings,
)

__all__ = [
    "CENTERING_THRESHOLD",
    "DEFAULT_SAMPLER",
    "KINDS",
    "POOLINGS",
    "CalibrationCounts",
    "EnvironmentCounts",
    "accuracy_model",
    "calibration_counts",
    "calibration_model",
    "centered_cells",
    "spread_estimate",
    "environment_counts",
    "population_draws",
    "sample_model",
    "sampler_settings",
]

#: Under ``parameterization="auto"`` a cell is centred when its logit-scale likelihood
#: precision n p (1 - p) times the estimated spread squared exceeds this, i.e. when the data
#: determine the cell several times better than the population distribution does.
CENTERING_THRESHOLD: float = 2.0


KINDS = ("logit-normal", "beta")
POOLINGS = ("hierarchical", "independent", "pooled")

# Hyperprior scales (logit scale): mu ~ Normal(loc, MU_SCALE), sigma ~ HalfNormal(SIGMA_SCALE).
MU_SCALE = 1.5
SIGMA_SCALE = 1.0


# ---------------------------------------------------------------------------- helpers
def spread_estimate(n: Any, k: Any, effects: str = "mean") -> float:
    """Moment estimate of the cell-level spread (logit sd) around the fixed part of the model.

    Empirical logits ``log((k + 1/2) / (n - k + 1/2))`` of the labeled cells, minus the grand
    mean (``effects="mean"``), the bin means (``"columns"``) or additive row and column effects
    (``"rows+columns"``); their excess variance (divided by the residual degrees of freedom)
    over the mean sampling variance
    ``1/(k + 1/2) + 1/(n - k + 1/2)`` (DerSimonian-Laird style), floored at 0.05.

    Examples
    --------
    >>> round(spread_estimate([1000, 1000], [500, 500]), 2)
    0.05
    >>> spread_estimate([1000, 1000], [100, 900]) > 1.5
    True
    """
    n = np.asarray(n, dtype=float)
    k = np.asarray(k, dtype=float)
    obs = n > 0
    if obs.sum() < 2:
        return 0.05
    logit = np.log((k + 0.5) / (n - k + 0.5))
    var = 1 / (k + 0.5) + 1 / (n - k + 0.5)
    resid = np.where(obs, logit, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-empty rows / columns
        resid = _remove_effects(resid, effects)
    n_obs = int(obs.sum())
    if effects == "mean" or resid.ndim == 1:
        n_params = 1
    elif effects == "columns":
        n_params = int(obs.any(axis=0).sum())
    else:
        n_params = int(obs.any(axis=0).sum() + obs.any(axis=1).sum() - 1)
    dof = max(n_obs - n_params, 1)
    excess = np.nansum(resid[obs] ** 2) / dof - np.mean(var[obs])
    return float(np.sqrt(max(excess, 0.05**2)))


def _remove_effects(resid: np.ndarray, effects: str) -> np.ndarray:
    if effects == "mean" or resid.ndim == 1:
        resid = resid - np.nanmean(resid)
    elif effects == "columns":
        resid = resid - np.nanmean(resid, axis=0, keepdims=True)
    elif effects == "rows+columns":
        for _ in range(10):
            resid = resid - np.nan_to_num(np.nanmean(resid, axis=1, keepdims=True))
            resid = resid - np.nan_to_num(np.nanmean(resid, axis=0, keepdims=True))
    else:
        raise ConfigError(f"unknown effects {effects!r}")
    return resid


def centered_cells(
    n: Any, k: Any, parameterization: str = "auto", effects: str = "mean", threshold: float | None = None
) -> np.ndarray:
    """Boolean mask of cells to centre: all (``"centered"``), none (``"noncentered"``) or by data.

    Under ``"auto"`` a cell is centred when its likelihood precision on the logit scale,
    ``n p (1 - p)`` with ``p = (k + 1)/(n + 2)``, times the estimated spread squared
    (:func:`spread_estimate`) exceeds ``threshold`` (default :data:`CENTERING_THRESHOLD`):
    then the data, not the population prior, determine the cell and the centred form has
    the better geometry. When all cells agree (spread near 0) nothing is centred.

    Examples
    --------
    >>> centered_cells([5, 400, 900], [4, 300, 850]).tolist()
    [False, True, True]
    >>> centered_cells([5, 400, 900], [3, 240, 540]).tolist()
    [False, False, False]
    """
    n = np.asarray(n, dtype=float)
    k = np.asarray(k, dtype=float)
    if parameterization == "centered":
        return np.ones(n.shape, dtype=bool)
    if parameterization == "noncentered":
        return np.zeros(n.shape, dtype=bool)
    if parameterization != "auto":
        raise ConfigError(f"unknown parameterization {parameterization!r} (choose 'auto', 'centered' or 'noncentered')")
    tau = spread_estimate(n, k, effects)
    p = (k + 1) / (n + 2)
    return n * p * (1 - p) * tau**2 > (CENTERING_THRESHOLD if threshold is None else threshold)


def _check_counts(n: Any, k: Any) -> tuple[np.ndarray, np.ndarray]:
    n = np.asarray(n, dtype=np.int64)
    k = np.asarray(k, dtype=np.int64)
    if n.shape != k.shape:
        raise ConfigError(f"counts n and k have different shapes {n.shape} and {k.shape}")
    if (n < 0).any() or (k < 0).any() or (k > n).any():
        raise ConfigError("counts must satisfy 0 <= k <= n in every cell")
    if n.sum() == 0:
        raise DataError("the hierarchical model needs labels, but no item of any environment is labeled")
    return n, k


def _logit(p: Any) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=float), 1e-3, 1 - 1e-3)
    return np.log(p / (1 - p))


def _mixed_normal(name: str, loc: Any, scale: Any, centered: np.ndarray, dims: tuple[str, ...], shape: tuple[int, ...]):
    """Normal(loc, scale) over a grid of cells, centred where ``centered`` else non-centred.

    ``loc`` broadcasts to ``shape``. Returns the tensor of the variable over the full grid.
    """
    import pymc as pm
    import pytensor.tensor as pt

    flat_c = np.flatnonzero(centered.ravel())
    flat_nc = np.flatnonzero(~centered.ravel())
    loc_flat = pt.broadcast_to(loc, shape).ravel()
    scale_flat = pt.broadcast_to(scale, shape).ravel()
    value = pt.zeros(int(np.prod(shape)))
    if flat_nc.size:
        z = pm.Normal(f"{name}_z", 0.0, 1.0, shape=flat_nc.size)
        value = pt.set_subtensor(value[flat_nc], loc_flat[flat_nc] + scale_flat[flat_nc] * z)
    if flat_c.size:
        c = pm.Normal(f"{name}_c", loc_flat[flat_c], scale_flat[flat_c], shape=flat_c.size)
        value = pt.set_subtensor(value[flat_c], c)
    return value.reshape(shape)


def _observe(theta, n: np.ndarray, k: np.ndarray, cell_names: list[str]) -> None:
    """Binomial likelihood over the labeled cells only (dim ``cell``)."""
    import pymc as pm

    labeled = np.flatnonzero(n.ravel() > 0)
    model = pm.modelcontext(None)
    model.add_coord("cell", [cell_names[i] for i in labeled])
    pm.Binomial("k", n=n.ravel()[labeled], p=theta.ravel()[labeled], observed=k.ravel()[labeled], dims="cell")


def _cell_names(environments: Sequence[str], columns: Sequence[str] | None) -> list[str]:
    if columns is None:
        return [str(e) for e in environments]
    return [f"{e}|{c}" for e in environments for c in columns]


# ---------------------------------------------------------------------------- models
def _prior_means(prior: str, prior_mean: Any, shape: tuple[int, ...]) -> np.ndarray:
    """Per-cell prior means: 0.5 (uniform), or the cells' mean confidence clipped to [0.001, 0.999] (informed)."""
    if prior != "informed":
        return np.full(shape, 0.5)
    if prior_mean is None:
        raise ConfigError("an informed prior needs prior_mean (the mean confidence per cell)")
    s = np.asarray(prior_mean, dtype=float)
    if s.shape != shape:
        raise ConfigError(f"prior_mean has shape {s.shape}, expected {shape}")
    s = np.where(np.isfinite(s), s, np.nanmean(s) if np.isfinite(s).any() else 0.5)
    return np.clip(s, 1e-3, 1 - 1e-3)


def _unpooled_accuracy(pooling: str, prior: str, s: np.ndarray, pc: float, shape: tuple[int, ...],
                       cls: list[str] | None, dims: tuple[str, ...]):
    """Accuracy of the independent (one Beta per cell) or completely pooled (one per class) model."""
    import pymc as pm

    informed = prior == "informed"
    if pooling == "independent":
        a = pc * s if informed else np.full(shape, pc / 2)
        b = pc * (1 - s) if informed else np.full(shape, pc / 2)
        return pm.Beta("accuracy", a, b, dims=dims)
    if cls is None:
        s0 = float(np.mean(s))
        a0, b0 = (pc * s0, pc * (1 - s0)) if informed else (pc / 2, pc / 2)
        shared = pm.Beta("pooled_accuracy", a0, b0)
        return pm.Deterministic("accuracy", shared * np.ones(shape), dims=dims)
    s_c = s.mean(axis=0)
    a0 = pc * s_c if informed else np.full(len(cls), pc / 2)
    b0 = pc * (1 - s_c) if informed else np.full(len(cls), pc / 2)
    shared = pm.Beta("pooled_accuracy", a0, b0, dims="class")
    return pm.Deterministic("accuracy", shared[None, :] * np.ones(shape), dims=dims)


def accuracy_model(
    n: Any,
    k: Any,
    *,
    environments: Sequence[str],
    classes: Sequence[str] | None = None,
    pooling: str = "hierarchical",
    kind: str = "logit-normal",
    prior: str = "uniform",
    prior_mean: Any = None,
    pseudocount: float = DEFAULT_PSEUDOCOUNT,
    parameterization: str = "auto",
):
    """A PyMC model of accuracy per environment (x predicted class) from counts.

    Parameters
    ----------
    n, k : array_like of int, shape (E,) or (E, K)
        Labeled and correct items per cell.
    environments : sequence of str
        The E environment names (coords of dim ``environment``).
    classes : sequence of str, optional
        The K class names when cells are environment x predicted class (dim ``class``).
    pooling : {"hierarchical", "independent", "pooled"}
        Partial pooling across environments; a separate Beta per cell; or one accuracy shared
        by all environments (per class when ``classes`` is given).
    kind : {"logit-normal", "beta"}
        Population distribution of the hierarchical model (``beta`` only without classes).
    prior : {"uniform", "informed"}
        For ``independent``/``pooled``: Beta(pc/2, pc/2), or Beta(pc s, pc (1 - s)) centred at
        ``prior_mean`` s (the model's mean confidence per cell). For ``hierarchical``:
        ``informed`` centres the population mean ``mu`` at ``logit(mean(prior_mean))``
        instead of 0.
    prior_mean : array_like, optional
        Prior means per cell (same shape as ``n``), required for ``prior="informed"``.
    pseudocount : float
        Strength pc of the Beta priors.
    parameterization : {"auto", "noncentered", "centered"}
        See the module docstring.

    Returns
    -------
    pymc.Model
        Deterministic ``accuracy`` with dims ``("environment",)`` or ``("environment", "class")``;
        observed ``k`` over dim ``cell`` (labeled cells only).

    Examples
    --------
    >>> m = accuracy_model([30, 4], [27, 2], environments=["a", "b"])
    >>> sorted(v.name for v in m.free_RVs)
    ['mu', 'sigma', 'u_c', 'u_z']
    >>> m.named_vars_to_dims["accuracy"]
    ('environment',)
    """
    import pymc as pm

    n, k = _check_counts(n, k)
    envs = [str(e) for e in environments]
    if n.shape[0] != len(envs):
        raise ConfigError(f"counts have {n.shape[0]} environments but {len(envs)} names were given")
    if pooling not in POOLINGS:
        raise ConfigError(f"unknown pooling {pooling!r} (choose from {', '.join(POOLINGS)})")
    if kind not in KINDS:
        raise ConfigError(f"unknown kind {kind!r} (choose from {', '.join(KINDS)})")
    if prior not in ("uniform", "informed"):
        raise ConfigError(f"unknown prior {prior!r} (choose 'uniform' or 'informed')")
    if classes is not None:
        cls = [str(c) for c in classes]
        if n.ndim != 2 or n.shape[1] != len(cls):
            raise ConfigError(f"per-class counts must have shape ({len(envs)}, {len(cls)}), got {n.shape}")
        dims: tuple[str, ...] = ("environment", "class")
        coords = {"environment": envs, "class": cls}
    else:
        cls = None
        if n.ndim != 1:
            raise ConfigError(f"counts must be one-dimensional without classes, got shape {n.shape}")
        dims = ("environment",)
        coords = {"environment": envs}
    s = _prior_means(prior, prior_mean, n.shape)
    pc = float(pseudocount)
    if not pc > 0:
        raise ConfigError(f"the pseudocount must be positive, got {pseudocount}")
    names = _cell_names(envs, cls)

    with pm.Model(coords=coords) as model:
        if pooling in ("independent", "pooled"):
            theta = _unpooled_accuracy(pooling, prior, s, pc, n.shape, cls, dims)
        elif kind == "beta":
            if cls is not None:
                raise ConfigError("kind='beta' supports environments only; use kind='logit-normal' with classes")
            phi = pm.Beta("phi", 1.0, 1.0)
            kappa = pm.Pareto("kappa", alpha=1.5, m=1.0)
            theta = pm.Beta("accuracy", phi * kappa, (1 - phi) * kappa, dims=dims)
        else:
            mu_loc = float(_logit(np.mean(s))) if prior == "informed" else 0.0
            mu = pm.Normal("mu", mu_loc, MU_SCALE)
            centered = centered_cells(n, k, parameterization, "mean" if cls is None else "rows+columns")
            if cls is None:
                sigma = pm.HalfNormal("sigma", SIGMA_SCALE)
                eta = _mixed_normal("u", mu, sigma, centered, dims, n.shape)
            else:
                sigma_env = pm.HalfNormal("sigma_environment", SIGMA_SCALE)
                sigma_cls = pm.HalfNormal("sigma_class", SIGMA_SCALE)
                sigma = pm.HalfNormal("sigma", SIGMA_SCALE)
                z_env = pm.Normal("environment_z", 0.0, 1.0, dims="environment")
                z_cls = pm.Normal("class_z", 0.0, 1.0, dims="class")
                loc = mu + sigma_env * z_env[:, None] + sigma_cls * z_cls[None, :]
                eta = _mixed_normal("u", loc, sigma, centered, dims, n.shape)
            theta = pm.Deterministic("accuracy", pm.math.sigmoid(eta), dims=dims)
        _observe(theta, n, k, names)
    model.pbassess_info = {"pooling": pooling, "kind": kind, "prior": prior, "pseudocount": pc,
                           "parameterization": parameterization}
    return model


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
        eta = _mixed_normal("u", m_b[None, :], sigma, centered, dims, n.shape)
        theta = pm.Deterministic("bin_accuracy", pm.math.sigmoid(eta), dims=dims)
        pm.Deterministic("reliability", pm.math.sigmoid(m_b), dims="bin")
        pm.Deterministic("ece", (weight * abs(theta - score)).sum(axis=1), dims="environment")
        _observe(theta, n, k, _cell_names(envs, bins))
    model.pbassess_info = {"pooling": "hierarchical", "kind": "logit-normal", "prior": prior,
                           "parameterization": parameterization, "bins_used": used.tolist()}
    return model


