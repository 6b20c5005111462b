"""Hierarchical accuracy models over environment counts, and their :class:`~pbassess.inference.Spec`.

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
* :class:`HierarchicalAccuracySpec`: the same model for :func:`pbassess.inference.fit` (NUTS
  only), with the population quantities (:func:`population_draws`) derived from the draws and
  one Bernoulli log-likelihood value per labeled item (each with its environment's, or
  environment x class cell's, accuracy), so PSIS-LOO leaves out one item, not an environment.

Parameterisation. The non-centred form is the right one for sparsely labeled cells, but for a
cell with thousands of labels the data pin ``logit theta`` down and the non-centred posterior
becomes a narrow ridge (low ESS, divergences). ``parameterization="auto"`` (the default)
therefore centres exactly the cells whose likelihood precision on the logit scale,
``n p (1 - p)`` with ``p = (k + 1) / (n + 2)``, times the squared between-cell spread estimated
from the counts (:func:`spread_estimate`), exceeds :data:`CENTERING_THRESHOLD`, and keeps the
others non-centred (so when environments agree, everything stays non-centred). Both are the same
model (same prior, same posterior); only the geometry NUTS sees differs.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from pbassess.constants import DEFAULT_PSEUDOCOUNT
from pbassess.errors import ConfigError, DataError
from pbassess.inference.spec import Observations, Spec

__all__ = [
    "cell_names",
    "CENTERING_THRESHOLD",
    "HIERARCHICAL_NUTS_DEFAULTS",
    "KINDS",
    "POOLINGS",
    "HierarchicalAccuracySpec",
    "HierarchicalCalibrationSpec",
    "accuracy_model",
    "calibration_model",
    "centered_cells",
    "observations_from_counts",
    "population_draws",
    "spread_estimate",
]

#: NUTS defaults of the hierarchical models under the user's ``sample_kwargs`` (see
#: ``benchmarks/hierarchical.py``: no divergences on the fairness data and on 5 environments x 100
#: classes at 0.95).
HIERARCHICAL_NUTS_DEFAULTS: dict[str, Any] = {"target_accept": 0.95}

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


def _mixed_normal(name: str, loc: Any, scale: Any, centered: np.ndarray, dims: tuple[str, ...], shape: tuple[int, ...],
                  cell_names: Sequence[str] | None = None):
    """Normal(loc, scale) over a grid of cells, centred where ``centered`` else non-centred.

    ``loc`` broadcasts to ``shape``. The free variables ``<name>_z`` (non-centred cells) and
    ``<name>_c`` (centred cells) have dims ``<name>_noncentered`` / ``<name>_centered`` named by
    ``cell_names`` (flat, default ``0..``). Returns the tensor of the variable over the full grid.
    """
    import pymc as pm
    import pytensor.tensor as pt

    flat_c = np.flatnonzero(centered.ravel())
    flat_nc = np.flatnonzero(~centered.ravel())
    names = [str(i) for i in range(int(np.prod(shape)))] if cell_names is None else [str(c) for c in cell_names]
    model = pm.modelcontext(None)
    loc_flat = pt.broadcast_to(loc, shape).ravel()
    scale_flat = pt.broadcast_to(scale, shape).ravel()
    value = pt.zeros(int(np.prod(shape)))
    if flat_nc.size:
        model.add_coord(f"{name}_noncentered", [names[i] for i in flat_nc])
        z = pm.Normal(f"{name}_z", 0.0, 1.0, dims=f"{name}_noncentered")
        value = pt.set_subtensor(value[flat_nc], loc_flat[flat_nc] + scale_flat[flat_nc] * z)
    if flat_c.size:
        model.add_coord(f"{name}_centered", [names[i] for i in flat_c])
        c = pm.Normal(f"{name}_c", loc_flat[flat_c], scale_flat[flat_c], dims=f"{name}_centered")
        value = pt.set_subtensor(value[flat_c], c)
    return value.reshape(shape)


def _observe(theta, n: np.ndarray, k: np.ndarray, cell_names: list[str]) -> None:
    """Binomial likelihood over the labeled cells only (dim ``cell``)."""
    import pymc as pm

    labeled = np.flatnonzero(n.ravel() > 0)
    model = pm.modelcontext(None)
    model.add_coord("cell", [cell_names[i] for i in labeled])
    pm.Binomial("k", n=n.ravel()[labeled], p=theta.ravel()[labeled], observed=k.ravel()[labeled], dims="cell")


def cell_names(environments: Sequence[str], columns: Sequence[str] | None) -> list[str]:
    """The names of the (environment, column) cells, row by row: ``"env"`` or ``"env|column"``.

    Examples
    --------
    >>> cell_names(["a", "b"], None), cell_names(["a"], ["0", "1"])
    (['a', 'b'], ['a|0', 'a|1'])
    """
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
    names = cell_names(envs, cls)

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
                eta = _mixed_normal("u", mu, sigma, centered, dims, n.shape, names)
            else:
                sigma_env = pm.HalfNormal("sigma_environment", SIGMA_SCALE)
                sigma_cls = pm.HalfNormal("sigma_class", SIGMA_SCALE)
                sigma = pm.HalfNormal("sigma", SIGMA_SCALE)
                z_env = pm.Normal("environment_z", 0.0, 1.0, dims="environment")
                z_cls = pm.Normal("class_z", 0.0, 1.0, dims="class")
                loc = mu + sigma_env * z_env[:, None] + sigma_cls * z_cls[None, :]
                eta = _mixed_normal("u", loc, sigma, centered, dims, n.shape, names)
            theta = pm.Deterministic("accuracy", pm.math.sigmoid(eta), dims=dims)
        _observe(theta, n, k, names)
    model.pbassess_info = {"pooling": pooling, "kind": kind, "prior": prior, "pseudocount": pc,
                           "parameterization": parameterization}
    return model


def _used_bins(n_items: Any) -> np.ndarray:
    """Bins holding an item of some environment (the calibration model leaves the others out)."""
    return np.asarray(n_items).sum(axis=0) > 0


def calibration_model(
    counts: Any,
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
    The same centring rule as :func:`accuracy_model` (with bin effects removed from the spread).

    Parameters
    ----------
    counts : CalibrationCounts
        Per environment and bin: ``n``, ``k`` (labeled, correct), ``n_items``, ``weight``,
        ``score``, and the names ``environments`` and ``bins``
        (:func:`pbassess.hierarchical.counts.calibration_counts`, or any object with these).
    prior : {"uniform", "informed"}
    parameterization : {"auto", "noncentered", "centered"}

    Returns
    -------
    pymc.Model
        Observed ``k`` over dim ``cell`` (labeled environment x bin cells).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> c = SimpleNamespace(n=np.array([[0, 20, 30], [0, 5, 40]]), k=np.array([[0, 12, 27], [0, 3, 36]]),
    ...                     n_items=np.array([[0, 20, 30], [0, 5, 40]]), weight=np.array([[0, .4, .6], [0, .1, .9]]),
    ...                     score=np.array([[np.nan, .65, .9], [np.nan, .6, .92]]), environments=("x", "y"),
    ...                     bins=("0.0-0.5", "0.5-0.8", "0.8-1.0"))
    >>> m = calibration_model(c)
    >>> m.named_vars_to_dims["ece"], list(m.coords["bin"])
    (('environment',), ['0.5-0.8', '0.8-1.0'])
    """
    import pymc as pm

    if prior not in ("uniform", "informed"):
        raise ConfigError(f"unknown prior {prior!r} (choose 'uniform' or 'informed')")
    n, k = _check_counts(counts.n, counts.k)
    n_items = np.asarray(counts.n_items)
    used = _used_bins(n_items)
    bins = [str(b) for b, u in zip(counts.bins, used, strict=True) if u]
    n, k = n[:, used], k[:, used]
    weight = np.asarray(counts.weight, dtype=float)[:, used]
    raw_score = np.asarray(counts.score, dtype=float)[:, used]
    score = np.nan_to_num(raw_score, nan=0.0)
    envs = [str(e) for e in counts.environments]
    dims = ("environment", "bin")
    names = cell_names(envs, bins)
    with pm.Model(coords={"environment": envs, "bin": bins}) as model:
        if prior == "informed":
            items = n_items[:, used]
            loc = _logit(np.nansum(raw_score * items, axis=0) / items.sum(axis=0))
        else:
            loc = np.zeros(len(bins))
        m_b = pm.Normal("bin_mu", loc, MU_SCALE, dims="bin")
        sigma = pm.HalfNormal("sigma", SIGMA_SCALE)
        centered = centered_cells(n, k, parameterization, "columns")
        eta = _mixed_normal("u", m_b[None, :], sigma, centered, dims, n.shape, names)
        theta = pm.Deterministic("bin_accuracy", pm.math.sigmoid(eta), dims=dims)
        pm.Deterministic("reliability", pm.math.sigmoid(m_b), dims="bin")
        pm.Deterministic("ece", (weight * abs(theta - score)).sum(axis=1), dims="environment")
        _observe(theta, n, k, names)
    model.pbassess_info = {"pooling": "hierarchical", "kind": "logit-normal", "prior": prior,
                           "parameterization": parameterization, "bins_used": used.tolist()}
    return model


# ---------------------------------------------------------------------------- population
_GH_NODES, _GH_WEIGHTS = np.polynomial.hermite_e.hermegauss(40)
_GH_WEIGHTS = _GH_WEIGHTS / _GH_WEIGHTS.sum()


def population_draws(posterior: Any, kind: str, seed: Any = None) -> dict[str, np.ndarray]:
    """Population-level posterior quantities on the probability scale, per draw.

    Returns a dict of arrays shaped like the hyperparameter draws:

    * ``population_mean``: the mean accuracy of the population of environments
      (``E[sigmoid(mu + sigma eps)]`` by 40-node Gauss-Hermite quadrature, or ``phi``);
    * ``population_sd``: the spread (standard deviation) of environment accuracies;
    * ``new_environment``: the accuracy of a new, unlabeled environment (one draw of the
      population distribution per posterior draw: the posterior predictive).

    For the environment x class model the population is that of cells (a new environment's
    accuracy on a new class): its logit sd combines all three spreads.

    Examples
    --------
    >>> import xarray as xr, numpy as np
    >>> post = xr.Dataset({"mu": (("chain", "draw"), [[0.0]]), "sigma": (("chain", "draw"), [[1e-9]])})
    >>> out = population_draws(post, "logit-normal", seed=0)
    >>> round(float(out["population_mean"][0, 0]), 6), round(float(out["population_sd"][0, 0]), 6)
    (0.5, 0.0)
    """
    rng = np.random.default_rng(seed) if not isinstance(seed, np.random.Generator) else seed
    if kind == "beta":
        phi = np.asarray(posterior["phi"])
        kappa = np.asarray(posterior["kappa"])
        return {
            "population_mean": phi,
            "population_sd": np.sqrt(phi * (1 - phi) / (kappa + 1)),
            "new_environment": rng.beta(phi * kappa, (1 - phi) * kappa),
        }
    mu = np.asarray(posterior["mu"])
    sigma = np.asarray(posterior["sigma"])
    if "sigma_environment" in posterior:  # environment x class: a new cell varies by all three effects
        sigma = np.sqrt(sigma**2 + np.asarray(posterior["sigma_environment"]) ** 2
                        + np.asarray(posterior["sigma_class"]) ** 2)
    eta = mu[..., None] + sigma[..., None] * _GH_NODES
    p = 1.0 / (1.0 + np.exp(-eta))
    mean = p @ _GH_WEIGHTS
    second = (p**2) @ _GH_WEIGHTS
    new = 1.0 / (1.0 + np.exp(-(mu + sigma * rng.standard_normal(mu.shape))))
    return {"population_mean": mean, "population_sd": np.sqrt(np.maximum(second - mean**2, 0.0)),
            "new_environment": new}


# ---------------------------------------------------------------------------- the spec
#: Hyperparameters reported beside ``accuracy`` when the model has them.
HYPERPARAMETERS: tuple[str, ...] = ("mu", "sigma", "sigma_environment", "sigma_class", "phi", "kappa",
                                    "pooled_accuracy")
#: Population quantities derived from the hyperparameters (hierarchical pooling only).
POPULATION: tuple[str, ...] = ("population_mean", "population_sd", "new_environment")

#: Above this many labeled items, counts alone are not expanded into per-item observations.
MAX_SYNTHETIC_ITEMS: int = 10_000_000


def observations_from_counts(n: Any, k: Any, cell_names: Sequence[str] | None = None) -> Observations:
    """Items implied by per-cell counts: ``k`` correct and ``n - k`` wrong items in each (flat) cell.

    Bernoulli items of one cell are exchangeable, so these give the same per-item
    log-likelihood (and PSIS-LOO) as the real items, only under made-up ids ``"<cell>#<i>"``.

    Examples
    --------
    >>> obs = observations_from_counts([2, 1], [1, 1], ["a", "b"])
    >>> obs.cell.tolist(), obs.outcome.tolist(), obs.item.tolist()
    ([0, 0, 1], [1, 0, 1], ['a#0', 'a#1', 'b#0'])
    """
    n = np.asarray(n, dtype=np.int64).ravel()
    k = np.asarray(k, dtype=np.int64).ravel()
    names = [str(i) for i in range(n.size)] if cell_names is None else [str(c) for c in cell_names]
    cell = np.repeat(np.arange(n.size), n)
    start = np.repeat(np.cumsum(n) - n, n)
    rank = np.arange(cell.size) - start
    outcome = (rank < k[cell]).astype(np.int64)
    item = np.asarray([f"{names[c]}#{r}" for c, r in zip(cell.tolist(), rank.tolist(), strict=True)], dtype=object)
    return Observations(cell, outcome, item)


class HierarchicalAccuracySpec(Spec):
    """The accuracy model of :func:`accuracy_model` for :func:`pbassess.inference.fit` (NUTS only).

    Reported: ``accuracy`` (environment[, class]) and the model's hyperparameters; derived for
    hierarchical pooling: ``population_mean``, ``population_sd`` and ``new_environment``
    (:func:`population_draws`). The log-likelihood is one Bernoulli value per labeled item with
    its cell's accuracy (per labeled cell, Binomial, when the items are unknown); the log prior
    is PyMC's (``pm.compute_log_prior``) and the prior draws come from the PyMC model.

    Parameters
    ----------
    n, k : array_like of int, shape (E,) or (E, K)
        Labeled and correct items per cell.
    environments, classes, pooling, kind, prior, prior_mean, pseudocount, parameterization
        As for :func:`accuracy_model`.
    observations : Observations, optional
        The labeled items (flat cell index ``e * K + c`` and correct 1/0).
    n_items, mean_confidence : array_like, optional
        All items and their mean confidence per cell (kept in ``constant_data``).
    seed : int, optional
        Seed of the random part of the derived quantities (``new_environment``).

    Examples
    --------
    >>> from unittest import mock
    >>> from pbassess.inference import fit, mock_pymc_sample
    >>> spec = HierarchicalAccuracySpec([30, 4], [27, 2], environments=["a", "b"],
    ...                                 observations=observations_from_counts([30, 4], [27, 2], ["a", "b"]))
    >>> spec.has_conjugate, sorted(spec.reported)
    (False, ['accuracy', 'mu', 'sigma'])
    >>> with mock.patch("pymc.sample", mock_pymc_sample):  # plumbing only: no real NUTS in a doctest
    ...     tree = fit(spec, inference="nuts", seed=0, sample_kwargs={"draws": 20, "tune": 20, "chains": 1}).idata
    >>> dict(tree["log_likelihood"]["correct"].sizes), "population_mean" in tree["posterior"]
    ({'chain': 1, 'draw': 20, 'item': 34}, True)
    """

    name = "hierarchical accuracy"
    observed_name = "correct"
    nuts_defaults = HIERARCHICAL_NUTS_DEFAULTS

    def __init__(self, n: Any, k: Any, *, environments: Sequence[str], classes: Sequence[str] | None = None,
                 pooling: str = "hierarchical", kind: str = "logit-normal", prior: str = "uniform",
                 prior_mean: Any = None, pseudocount: float = DEFAULT_PSEUDOCOUNT, parameterization: str = "auto",
                 observations: Observations | None = None, n_items: Any = None, mean_confidence: Any = None,
                 seed: Any = None) -> None:
        self.n, self.k = _check_counts(n, k)
        self.environments = [str(e) for e in environments]
        self.classes = None if classes is None else [str(c) for c in classes]
        self.options = {"pooling": pooling, "kind": kind, "prior": prior, "prior_mean": prior_mean,
                        "pseudocount": pseudocount, "parameterization": parameterization}
        self.observations = observations
        self.n_items = np.asarray(self.n if n_items is None else n_items)
        self.mean_confidence = (np.full(self.n.shape, np.nan) if mean_confidence is None
                                else np.asarray(mean_confidence, dtype=float))
        self.seed = seed
        self._rng = np.random.default_rng(seed)
        self._model = None
        model = self.model()  # validates the options, and names the variables and their dims
        self.dims: tuple[str, ...] = ("environment",) if self.classes is None else ("environment", "class")
        self.cell_names = cell_names(self.environments, self.classes)
        self.coords = {name: list(values) for name, values in model.coords.items() if name != "cell"}
        var_dims = model.named_vars_to_dims
        self.reported = {"accuracy": self.dims}
        for name in HYPERPARAMETERS:
            if name in model.named_vars:
                self.reported[name] = tuple(var_dims.get(name, ()))
        if observations is not None and observations.size and int(observations.cell.max()) >= self.n.size:
            raise ConfigError(f"an item's cell index {int(observations.cell.max())} is out of range "
                              f"({self.n.size} cells)")

    @property
    def has_conjugate(self) -> bool:
        return False

    def prior_draws(self, n_draws, rng):
        return None

    def model(self):
        if self._model is None:
            opts = self.options
            self._model = accuracy_model(
                self.n, self.k, environments=self.environments, classes=self.classes, pooling=opts["pooling"],
                kind=opts["kind"], prior=opts["prior"], prior_mean=opts["prior_mean"],
                pseudocount=opts["pseudocount"], parameterization=opts["parameterization"])
        return self._model

    def complete(self, draws: Mapping[str, np.ndarray]) -> dict[str, tuple[tuple[str, ...], np.ndarray]]:
        model = self.model()
        var_dims = model.named_vars_to_dims
        names = [v.name for v in model.free_RVs] + [v.name for v in model.deterministics]
        out = {name: (tuple(var_dims.get(name, ())), np.asarray(draws[name])) for name in names if name in draws}
        if "accuracy" not in out:
            raise ConfigError("the draws hold no 'accuracy'")
        if self.options["pooling"] == "hierarchical":
            hyper = {name: value for name, (_, value) in out.items()}
            for name, value in population_draws(hyper, self.options["kind"], seed=self._rng).items():
                out[name] = ((), np.asarray(value, dtype=float))
        return out

    def _theta(self, draws: Mapping[str, np.ndarray]) -> np.ndarray:
        theta = np.asarray(draws["accuracy"], dtype=float)
        theta = theta.reshape(*theta.shape[:2], -1)
        return np.clip(theta, np.finfo(float).tiny, np.nextafter(1.0, 0.0))

    def log_likelihood(self, draws, per_item):
        from pbassess.inference.trees import bernoulli_log_likelihood

        return bernoulli_log_likelihood(self._theta(draws), self.n, self.k, self.observations, per_item,
                                        names=self.cell_names, clip=False)

    def log_prior(self, draws):
        return None  # PyMC's own (pm.compute_log_prior on the model)

    def observed_data(self) -> xr.Dataset:
        from pbassess.inference.trees import bernoulli_observed_data

        return bernoulli_observed_data(self.observed_name, self.n, self.k, self.observations, names=self.cell_names)

    def constant_data(self) -> xr.Dataset:
        coords: dict[str, Any] = {"environment": self.environments}
        if self.classes is not None:
            coords["class"] = self.classes
        data: dict[str, Any] = {"n_labeled": (self.dims, self.n), "n_correct": (self.dims, self.k),
                                "n_items": (self.dims, self.n_items),
                                "mean_confidence": (self.dims, self.mean_confidence)}
        if self.observations is not None:
            data["item_cell"] = ("item", np.asarray(self.cell_names, dtype=object)[self.observations.cell])
            coords["item"] = self.observations.item
        return xr.Dataset(data, coords=coords)

    def cell_n(self) -> np.ndarray:
        return self.n.ravel()


# ---------------------------------------------------------------------------- Bernoulli cells
class BernoulliCellsSpec(Spec):
    """Shared part of the NUTS-only specs whose items are Bernoulli draws of a per-cell probability.

    A subclass sets ``n`` and ``k`` (labeled and correct items per cell, any shape, flattened in
    C order), ``cell_names`` (flat), ``observations`` (flat cell index, correct 1/0), ``reported``
    and ``coords``, names the model's per-cell probability in :attr:`theta_name`, and builds the
    PyMC model in :meth:`build_model`. Prior draws, the log prior and the posterior's variables
    all come from the PyMC model (its free variables and deterministics); the log-likelihood is
    one Bernoulli value per labeled item (one Binomial value per labeled cell when the items are
    unknown).

    Examples
    --------
    >>> spec = HierarchicalCalibrationSpec  # a subclass
    >>> issubclass(spec, BernoulliCellsSpec), spec.theta_name
    (True, 'bin_accuracy')
    """

    observed_name = "correct"
    nuts_defaults = HIERARCHICAL_NUTS_DEFAULTS
    #: The model's variable holding each cell's probability of a correct item.
    theta_name: str = "accuracy"

    n: np.ndarray
    k: np.ndarray
    cell_names: list[str]
    _model: Any = None

    def build_model(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def model(self):
        if self._model is None:
            self._model = self.build_model()
        return self._model

    @property
    def has_conjugate(self) -> bool:
        return False

    def prior_draws(self, n_draws, rng):
        return None  # from the PyMC model

    def log_prior(self, draws):
        return None  # PyMC's own (pm.compute_log_prior on the model)

    def complete(self, draws: Mapping[str, np.ndarray]) -> dict[str, tuple[tuple[str, ...], np.ndarray]]:
        model = self.model()
        var_dims = model.named_vars_to_dims
        names = [v.name for v in model.free_RVs] + [v.name for v in model.deterministics]
        out = {name: (tuple(var_dims.get(name, ())), np.asarray(draws[name])) for name in names if name in draws}
        if self.theta_name not in out:
            raise ConfigError(f"the draws hold no {self.theta_name!r}")
        return out

    def _theta(self, draws: Mapping[str, np.ndarray]) -> np.ndarray:
        theta = np.asarray(draws[self.theta_name], dtype=float)
        theta = theta.reshape(*theta.shape[:2], -1)
        return np.clip(theta, np.finfo(float).tiny, np.nextafter(1.0, 0.0))

    def _check_observations(self) -> None:
        obs = self.observations
        if obs is not None and obs.size and int(obs.cell.max()) >= self.n.size:
            raise ConfigError(f"an item's cell index {int(obs.cell.max())} is out of range ({self.n.size} cells)")

    def log_likelihood(self, draws, per_item):
        from pbassess.inference.trees import bernoulli_log_likelihood

        return bernoulli_log_likelihood(self._theta(draws), self.n, self.k, self.observations, per_item,
                                        names=self.cell_names, clip=False)

    def observed_data(self) -> xr.Dataset:
        from pbassess.inference.trees import bernoulli_observed_data

        return bernoulli_observed_data(self.observed_name, self.n, self.k, self.observations, names=self.cell_names)

    def _item_cells(self, data: dict[str, Any], coords: dict[str, Any]) -> None:
        """Add each labeled item's cell name (``item_cell``, dim ``item``) to constant data."""
        if self.observations is not None:
            data["item_cell"] = ("item", np.asarray(self.cell_names, dtype=object)[self.observations.cell])
            coords["item"] = self.observations.item

    def cell_n(self) -> np.ndarray:
        return self.n.ravel()


class HierarchicalCalibrationSpec(BernoulliCellsSpec):
    """The calibration model of :func:`calibration_model` for :func:`pbassess.inference.fit` (NUTS only).

    Reported: ``bin_accuracy`` (environment, bin), ``reliability`` (bin, the population curve),
    ``ece`` (environment) and ``sigma``. Bins empty in every environment are left out (coord
    ``bin`` holds the others). The log-likelihood is one Bernoulli value per labeled item with
    its environment x bin accuracy; the log prior and the prior draws are PyMC's.

    Parameters
    ----------
    counts : CalibrationCounts
        As for :func:`calibration_model` (``edges`` too, when it has them, kept in ``constant_data``).
    prior, parameterization
        As for :func:`calibration_model`.
    observations : Observations, optional
        The labeled items, each with its flat cell ``e * B + b`` over *all* B bins of ``counts``
        (:func:`pbassess.hierarchical.counts.calibration_counts` lists them so).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from unittest import mock
    >>> from pbassess.inference import fit, mock_pymc_sample
    >>> n, k = np.array([[0, 3, 4], [0, 2, 5]]), np.array([[0, 2, 4], [0, 1, 4]])
    >>> c = SimpleNamespace(n=n, k=k, n_items=n, weight=n / n.sum(1, keepdims=True),
    ...                     score=np.array([[np.nan, .7, .9], [np.nan, .6, .95]]), environments=("x", "y"),
    ...                     bins=("lo", "mid", "hi"))
    >>> obs = Observations.of([1, 1, 1, 2, 2, 2, 2, 4, 4, 5, 5, 5, 5, 5], [1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0])
    >>> spec = HierarchicalCalibrationSpec(c, observations=obs)
    >>> sorted(spec.reported), spec.observations.cell.tolist()[:4]
    (['bin_accuracy', 'ece', 'reliability', 'sigma'], [0, 0, 0, 1])
    >>> with mock.patch("pymc.sample", mock_pymc_sample):  # plumbing only: no real NUTS in a doctest
    ...     tree = fit(spec, inference="nuts", seed=0, sample_kwargs={"draws": 20, "tune": 20, "chains": 1}).idata
    >>> dict(tree["log_likelihood"]["correct"].sizes)
    {'chain': 1, 'draw': 20, 'item': 14}
    """

    name = "hierarchical calibration"
    theta_name = "bin_accuracy"

    def __init__(self, counts: Any, *, prior: str = "uniform", parameterization: str = "auto",
                 observations: Observations | None = None) -> None:
        n_items = np.asarray(counts.n_items)
        used = _used_bins(n_items)
        self.counts = counts
        self.prior = prior
        self.parameterization = parameterization
        self.used = used
        self.n, self.k = _check_counts(np.asarray(counts.n)[:, used], np.asarray(counts.k)[:, used])
        self.n_items = n_items[:, used]
        self.weight = np.asarray(counts.weight, dtype=float)[:, used]
        self.score = np.asarray(counts.score, dtype=float)[:, used]
        self.edges = None if getattr(counts, "edges", None) is None else np.asarray(counts.edges, dtype=float)
        self.environments = [str(e) for e in counts.environments]
        self.bins = [str(b) for b, u in zip(counts.bins, used, strict=True) if u]
        self.cell_names = cell_names(self.environments, self.bins)
        if observations is not None:
            env, b = np.divmod(observations.cell, used.size)
            if observations.size and (int(env.max()) >= len(self.environments) or not used[b].all()):
                raise ConfigError("an item's cell is out of range or in a bin without items")
            position = np.cumsum(used) - 1
            observations = Observations(env * len(self.bins) + position[b], observations.outcome, observations.item)
        self.observations = observations
        self._model = None
        model = self.model()  # validates the options and names the variables and their dims
        self.coords = {name: list(values) for name, values in model.coords.items() if name != "cell"}
        self.reported = {"bin_accuracy": ("environment", "bin"), "reliability": ("bin",), "ece": ("environment",),
                         "sigma": ()}
        self._check_observations()

    def build_model(self):
        return calibration_model(self.counts, prior=self.prior, parameterization=self.parameterization)

    def constant_data(self) -> xr.Dataset:
        dims = ("environment", "bin")
        coords: dict[str, Any] = {"environment": self.environments, "bin": self.bins}
        data: dict[str, Any] = {"n_labeled": (dims, self.n), "n_correct": (dims, self.k),
                                "n_items": (dims, self.n_items), "weight": (dims, self.weight),
                                "score": (dims, self.score)}
        if self.edges is not None:
            data["edges"] = ("edge", self.edges)
        self._item_cells(data, coords)
        return xr.Dataset(data, coords=coords)
