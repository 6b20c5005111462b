"""PyMC models of accuracy surfaces over arm counts.

Every model exposes per-arm deterministics so that :mod:`pbassess.surface.fit` can summarise
the arms' accuracy posterior the same way:

* ``betagp_model`` (BetaGP, BetaGP-SL, BetaGP-SLP of Piratla et al. 2021): arm accuracy
  ~ Beta(mu s, (1 - mu) s), mu = sigmoid(f), s = softplus(g), f and g latent GPs over the arm
  attributes (exact latent GP, or the projected process of ``pymc_extras.gp`` with inducing
  points for many arms); Beta-binomial likelihood of the arms' counts; the AAA code's warm
  start (every arm sees a pseudo-observation of weight 0.1 at the global accuracy); for -SL a
  scale-supervision term, for -SLP the sparse arms' counts pooled from their kernel neighbours.
* ``berngp_model`` (BernGP): the correctness bits of an arm ~ Bernoulli(sigmoid(f_arm)).
* ``additive_model`` (ours): the Beta-binomial with logit mean and log scale linked to an
  additive weight-space model, main effects per attribute plus pairwise interactions (= a GP
  with an additive ANOVA kernel), optionally with the model's own confidence as a covariate
  of the mean (learned offset and slope).

Counts may be fractional (pooled or noisy-attribute counts): the likelihoods are written as
``pm.Potential`` terms ``betaln(a + y, b + n - y) - betaln(a, b)`` (the Beta-binomial without
its constant binomial coefficient) and ``y log p + (n - y) log(1 - p)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.errors import ConfigError
from pbassess.stats.sampling import as_generator
from pbassess.surface.arms import ArmCounts

__all__ = ["SCALE_TERMS", "additive_model", "arm_inputs", "berngp_model", "betagp_model", "kernel_similarity"]

SCALE_TERMS = ("gamma", "dirichlet")
EXACT_GP_MAX_ARMS = 300
WARM_START_WEIGHT = 0.1
#: Smooth upper bound of the Beta scale: beyond ~1e5 the Beta-binomial is the binomial, and
#: betaln differences of huge arguments lose all float64 precision (NUTS then diverges).
LOG_SCALE_CAP = float(np.log(1e5))


def _logit(p: Any) -> np.ndarray:
    p = np.clip(np.asarray(p, float), 1e-3, 1 - 1e-3)
    return np.log(p) - np.log1p(-p)


def arm_inputs(arms: ArmCounts) -> tuple[np.ndarray, np.ndarray]:
    """GP inputs of the arms: one-hot columns per categorical attribute, a standardised column per
    continuous one; and the attribute index of every column (for per-attribute lengthscales).

    Examples
    --------
    >>> a = ArmCounts.from_arrays([1, 1, 1], [1, 0, 1], values=[[0, 5], [1, 7], [1, 9]],
    ...                           attributes=("sex", "age"), continuous=("age",))
    >>> X, col = arm_inputs(a)
    >>> X.round(2).tolist(), col.tolist()
    ([[1.0, 0.0, -1.22], [0.0, 1.0, 0.0], [0.0, 1.0, 1.22]], [0, 0, 1])
    """
    cols, owner = [], []
    for k, name in enumerate(arms.attributes):
        v = arms.values[:, k]
        if name in arms.continuous:
            x = np.asarray(v, float)
            sd = x.std()
            cols.append(((x - x.mean()) / (sd if sd > 0 else 1.0))[:, None])
            owner.append(k)
        else:
            levels, inverse = np.unique(v.astype(str), return_inverse=True)
            cols.append(np.eye(len(levels))[inverse.ravel()])
            owner += [k] * len(levels)
    return np.column_stack(cols).astype(float), np.asarray(owner)


def kernel_similarity(arms: ArmCounts, lengthscale: float = 1.0) -> np.ndarray:
    """Squared-exponential similarity of the arms' inputs (used by BetaGP-SLP's pooling).

    Examples
    --------
    >>> a = ArmCounts.from_arrays([1, 1], [1, 0], values=[[0], [1]])
    >>> kernel_similarity(a).round(3).tolist()
    [[1.0, 0.368], [0.368, 1.0]]
    """
    X, _ = arm_inputs(arms)
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    return np.exp(-0.5 * sq / lengthscale**2)


def _gp_latent(name: str, X: np.ndarray, owner: np.ndarray, *, method: str, n_inducing: int, rng) -> Any:
    """A zero-mean latent GP over the arms with an ARD squared-exponential kernel (one lengthscale
    per attribute, shared by its one-hot columns)."""
    import pymc as pm
    import pytensor.tensor as pt

    n_attr = int(owner.max()) + 1
    amplitude = pm.HalfNormal(f"{name}_amplitude", 1.0)
    lengthscale = pm.Gamma(f"{name}_lengthscale", alpha=2.0, beta=1.0, shape=n_attr)
    cov = amplitude**2 * pm.gp.cov.ExpQuad(X.shape[1], ls=lengthscale[owner])
    a = X.shape[0]
    if method == "exact":
        chol = pt.linalg.cholesky(cov(X) + 1e-6 * pt.eye(a))
        z = pm.Normal(f"{name}_z", 0.0, 1.0, shape=a)
        return chol @ z
    from pymc_extras.gp import ProjectedProcess

    uniq = np.unique(X, axis=0)
    m = min(n_inducing, uniq.shape[0])
    inducing = uniq[rng.choice(uniq.shape[0], size=m, replace=False)]
    return ProjectedProcess(cov_func=cov).prior(f"{name}_f", X=X, X_inducing=inducing, jitter=1e-5)


def _gp_method(gp: str | None, n_arms: int) -> str:
    method = gp or ("exact" if n_arms <= EXACT_GP_MAX_ARMS else "projected")
    if method not in ("exact", "projected"):
        raise ConfigError(f"unknown GP method {gp!r} (choose exact or projected)")
    return method


def _beta_binomial_potential(name: str, alpha, beta, y: np.ndarray, n: np.ndarray) -> None:
    import pymc as pm
    from pytensor.tensor.special import betaln

    pm.Potential(name, (betaln(alpha + y, beta + n - y) - betaln(alpha, beta)).sum())


def _scale_potential(scale, n_obs: np.ndarray, term: str) -> None:
    """BetaGP-SL scale supervision over the observed arms.

    ``gamma`` (the released code): each observed arm's label count, clamped to [0.01, 10], is a
    draw of Gamma(shape = s_a, rate = 1). ``dirichlet`` (the paper): the vector of the observed
    arms' label shares n_a / N is a draw of Dirichlet(s) -- the normalised form of independent
    Gamma(s_a, 1) counts, so both make the scale track the arm's label count.
    """
    import pymc as pm
    import pytensor.tensor as pt

    if term == "gamma":
        x = np.clip(n_obs, 1e-2, 10.0)
        pm.Potential("scale_supervision", pm.logp(pm.Gamma.dist(alpha=scale, beta=1.0), x).sum())
    elif term == "dirichlet":
        share = n_obs / n_obs.sum()
        logp = pt.gammaln(scale.sum()) - pt.gammaln(scale).sum() + ((scale - 1.0) * np.log(share)).sum()
        pm.Potential("scale_supervision", logp)
    else:
        raise ConfigError(f"unknown scale term {term!r} (choose {' or '.join(SCALE_TERMS)})")


def _confidence_covariate(arms: ArmCounts) -> np.ndarray:
    conf = np.where(np.isfinite(arms.confidence), arms.confidence, np.nanmean(arms.confidence))
    if not np.all(np.isfinite(conf)):
        raise ConfigError("the confidence covariate needs the model's confidence on the arms' pool items")
    return _logit(conf)


def _mean_intercept(arms: ArmCounts, covariate: str | None, intercept_sd: float) -> Any:
    """logit-mean intercept (+ learned offset and slope on logit confidence when asked)."""
    import pymc as pm

    if covariate is None:
        loc = float(_logit(arms.global_accuracy))
        return pm.Normal("intercept", loc, intercept_sd) if intercept_sd > 0 else loc
    if covariate != "confidence":
        raise ConfigError(f"unknown covariate {covariate!r} (only 'confidence' is supported)")
    x = _confidence_covariate(arms)
    offset = pm.Normal("confidence_offset", 0.0, 1.0)
    slope = pm.Normal("confidence_slope", 1.0, 0.5)
    return offset + slope * x


def betagp_model(arms: ArmCounts, *, variant: str = "betagp", scale_term: str = "gamma",
                 covariate: str | None = None, gp: str | None = None, n_inducing: int = 64,
                 pool_max_labels: float = 5.0, pool_k: int = 3, warm_start: bool = True, seed: Any = None):
    """BetaGP / BetaGP-SL / BetaGP-SLP as a PyMC model.

    Returns ``(model, n, correct)``: the model has deterministics ``mu`` and ``scale`` (per arm);
    ``n``/``correct`` are the counts its likelihood used (pooled for -SLP), from which the arms'
    accuracy posterior is Beta(mu s + correct, (1 - mu) s + n - correct) per draw.
    """
    import pymc as pm
    import pytensor.tensor as pt

    from pbassess.surface.conjugate import pool_sparse_counts

    if variant not in ("betagp", "betagp-sl", "betagp-slp"):
        raise ConfigError(f"unknown BetaGP variant {variant!r}")
    if variant != "betagp" and scale_term not in SCALE_TERMS:
        raise ConfigError(f"unknown scale term {scale_term!r} (choose {' or '.join(SCALE_TERMS)})")
    n, c = arms.n, arms.correct
    if variant == "betagp-slp":
        n, c = pool_sparse_counts(arms, kernel_similarity(arms), max_labels=pool_max_labels, k=pool_k)
    X, owner = arm_inputs(arms)
    method = _gp_method(gp, arms.n_arms)
    rng = as_generator(seed)
    obs = np.flatnonzero(n > 0)
    with pm.Model() as model:
        f = _gp_latent("f", X, owner, method=method, n_inducing=n_inducing, rng=rng)
        g = _gp_latent("g", X, owner, method=method, n_inducing=n_inducing, rng=rng)
        mean_f = _mean_intercept(arms, covariate, 1.5)
        mean_g = pm.Normal("g_intercept", 3.0, 1.5)
        mu = pm.Deterministic("mu", pt.clip(pm.math.sigmoid(mean_f + f), 1e-6, 1 - 1e-6))
        raw = pt.softplus(mean_g + g) + 1e-3
        scale = pm.Deterministic("scale", raw * np.exp(LOG_SCALE_CAP) / (raw + np.exp(LOG_SCALE_CAP)))
        alpha, beta = mu * scale, (1.0 - mu) * scale
        _beta_binomial_potential("likelihood", alpha[obs], beta[obs], c[obs], n[obs])
        if warm_start:
            p0 = arms.global_accuracy
            _beta_binomial_potential("warm_start", alpha, beta, WARM_START_WEIGHT * p0,
                                     np.full(arms.n_arms, WARM_START_WEIGHT))
        if variant != "betagp" and obs.size:
            _scale_potential(scale[obs], n[obs], scale_term)
    return model, n, c


def berngp_model(arms: ArmCounts, *, covariate: str | None = None, gp: str | None = None,
                 n_inducing: int = 64, seed: Any = None):
    """BernGP: correctness bits of arm a ~ Bernoulli(sigmoid(f_a)), f a latent GP (deterministic ``p``)."""
    import pymc as pm
    import pytensor.tensor as pt

    X, owner = arm_inputs(arms)
    obs = np.flatnonzero(arms.n > 0)
    with pm.Model() as model:
        f = _gp_latent("f", X, owner, method=_gp_method(gp, arms.n_arms), n_inducing=n_inducing,
                       rng=as_generator(seed))
        eta = _mean_intercept(arms, covariate, 1.5) + f
        pm.Deterministic("p", pm.math.sigmoid(eta))
        y, n = arms.correct[obs], arms.n[obs]
        pm.Potential("likelihood", -(y * pt.softplus(-eta[obs]) + (n - y) * pt.softplus(eta[obs])).sum())
    return model


def _additive_effects(prefix: str, blocks: list[np.ndarray], main_scale: float, pair_scale: float,
                      interactions: bool) -> Any:
    """Sum of main effects (and pairwise interactions) of the attribute design blocks."""
    import pymc as pm

    total = 0.0
    if main_scale > 0:
        for k, B in enumerate(blocks):
            sd = pm.HalfNormal(f"{prefix}_main_sd_{k}", main_scale)
            z = pm.Normal(f"{prefix}_main_{k}", 0.0, 1.0, shape=B.shape[1])
            total = total + B @ (sd * z)
    if interactions and pair_scale > 0:
        for k in range(len(blocks)):
            for j in range(k + 1, len(blocks)):
                bk, bj = blocks[k], blocks[j]
                sd = pm.HalfNormal(f"{prefix}_pair_sd_{k}_{j}", pair_scale)
                z = pm.Normal(f"{prefix}_pair_{k}_{j}", 0.0, 1.0, shape=(bk.shape[1], bj.shape[1]))
                total = total + ((bk @ (sd * z)) * bj).sum(axis=1)
    return total


def additive_blocks(arms: ArmCounts, n_basis: int = 6) -> list[np.ndarray]:
    """Design block per attribute: one-hot levels, or a Gaussian-bump basis of a continuous one.

    Examples
    --------
    >>> a = ArmCounts.from_arrays([1, 1], [1, 0], values=[[0], [1]])
    >>> [b.shape for b in additive_blocks(a)]
    [(2, 2)]
    """
    blocks = []
    for k, name in enumerate(arms.attributes):
        v = arms.values[:, k]
        if name in arms.continuous:
            x = np.asarray(v, float)
            centers = np.unique(np.quantile(x, np.linspace(0, 1, n_basis)))
            width = max((centers[-1] - centers[0]) / max(len(centers) - 1, 1), 1e-9)
            blocks.append(np.exp(-0.5 * ((x[:, None] - centers[None, :]) / width) ** 2))
        else:
            _, inverse = np.unique(v.astype(str), return_inverse=True)
            blocks.append(np.eye(inverse.max() + 1)[inverse.ravel()])
    return blocks


def additive_model(arms: ArmCounts, *, covariate: str | None = None, main_scale: float = 1.0,
                   interaction_scale: float = 0.5, scale_main_scale: float = 0.5, interactions: bool = True,
                   intercept_sd: float = 1.5, log_scale_prior: tuple[float, float] = (np.log(30.0), 1.5)):
    """Our Beta-binomial surface with an additive (main effects + pairwise) weight-space link.

    logit mu_a = intercept [+ offset + slope * logit(confidence_a)] + sum_k u_k(a_k)
    + sum_{k<j} v_kj(a_k, a_j); log s_a = c + sum_k w_k(a_k). Effects are Normal with
    half-normal scales per attribute / pair (``main_scale``, ``interaction_scale``); a scale of 0
    drops the term (with all scales 0 this is the exchangeable Beta-binomial, and with
    ``intercept_sd = 0`` and a fixed log-scale it is Beta-I). Returns ``(model, n, correct)``.
    """
    import pymc as pm
    import pytensor.tensor as pt

    blocks = additive_blocks(arms)
    obs = np.flatnonzero(arms.n > 0)
    with pm.Model() as model:
        eta = _mean_intercept(arms, covariate, intercept_sd)
        eta = eta + _additive_effects("mean", blocks, main_scale, interaction_scale, interactions)
        loc, sd = log_scale_prior
        log_s = pm.Normal("log_scale", loc, sd) if sd > 0 else loc
        log_s = log_s + _additive_effects("scale", blocks, scale_main_scale, 0.0, False)
        eta = eta + pt.zeros(arms.n_arms)
        log_s = log_s + pt.zeros(arms.n_arms)
        mu = pm.Deterministic("mu", pt.clip(pm.math.sigmoid(eta), 1e-6, 1 - 1e-6))
        scale = pm.Deterministic("scale", pt.exp(LOG_SCALE_CAP - pt.softplus(LOG_SCALE_CAP - log_s)))
        _beta_binomial_potential("likelihood", (mu * scale)[obs], ((1 - mu) * scale)[obs],
                                 arms.correct[obs], arms.n[obs])
    return model, arms.n, arms.correct
