"""PyMC models of accuracy surfaces over arm counts.

Every model exposes per-arm deterministics so that :mod:`pbassess.surface.fit` can summarise
the arms' accuracy posterior the same way:

* ``betagp_model`` (BetaGP, BetaGP-SL, BetaGP-SLP of Piratla et al. 2021): arm accuracy
  ~ Beta(mu s, (1 - mu) s), mu = sigmoid(f), s = softplus(g), f and g latent GPs over the arm
  attributes (exact latent GP, or for many arms the projected process -- the prior of
  ``pymc_extras.gp.ProjectedProcess`` -- in whitened form f = K_xu L_uu^-T v, 64 inducing inputs); Beta-binomial likelihood of the arms' counts; the AAA code's warm
  start (every arm sees a pseudo-observation of weight 0.1 at the global accuracy); for -SL a
  scale-supervision term, for -SLP the sparse arms' counts pooled from their kernel neighbours.
* ``berngp_model`` (BernGP): the correctness bits of an arm ~ Bernoulli(sigmoid(f_arm)).
* the additive model (ours) is in :mod:`pbassess.surface.additive` (it shares this module's
  Beta-binomial potential, scale cap and confidence covariate).

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

__all__ = ["SCALE_TERMS", "arm_inputs", "berngp_model", "betagp_model", "count_terms", "global_accuracy_terms",
           "kernel_similarity"]

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
    inducing = inducing_inputs(X, n_inducing, rng)
    v = pm.Normal(f"{name}_v", 0.0, 1.0, shape=inducing.shape[0])
    return whitened_projected_latent(X, inducing, amplitude, lengthscale[owner], v)


def inducing_inputs(X: np.ndarray, n_inducing: int, rng: Any) -> np.ndarray:
    """``n_inducing`` distinct arm inputs drawn at random (all distinct inputs when fewer)."""
    uniq = np.unique(X, axis=0)
    m = min(int(n_inducing), uniq.shape[0])
    return uniq[np.sort(as_generator(rng).choice(uniq.shape[0], size=m, replace=False))]


def whitened_projected_latent(X: np.ndarray, inducing: np.ndarray, amplitude: Any, lengthscale: Any, v: Any,
                              jitter: float = 1e-5) -> Any:
    """Projected-process (DTC) latent GP in the whitened form f = K_xu L_uu^-T v, v ~ N(0, I).

    The same prior as ``pymc_extras.gp.ProjectedProcess(...).prior`` (which samples u = L_uu v
    and then computes K_xu K_uu^-1 u with two triangular solves), written with one solve of the
    M x M Cholesky factor and an A x M squared-exponential cross-covariance built from scaled
    inputs, so a gradient costs O(A M D + M^3) (ACS: 2,554 x 64 x 36).

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0]])
    >>> f = whitened_projected_latent(X, X, 1.0, np.array([1.0]), np.array([1.0, 0.0, 0.0]))
    >>> np.round(f.eval(), 3).tolist()  # with u = X: f = L v, the first column of chol(K)
    [1.0, 0.607, 0.135]
    """
    import pytensor.tensor as pt
    from pytensor.tensor.linalg import solve_triangular

    inv = 1.0 / pt.as_tensor_variable(lengthscale)
    xs, us = pt.as_tensor_variable(X) * inv, pt.as_tensor_variable(inducing) * inv

    def sqdist(p, q):
        return pt.maximum((p**2).sum(1)[:, None] + (q**2).sum(1)[None, :] - 2.0 * p @ q.T, 0.0)

    var = pt.as_tensor_variable(amplitude) ** 2
    k_xu = var * pt.exp(-0.5 * sqdist(xs, us))
    k_uu = var * pt.exp(-0.5 * sqdist(us, us)) + jitter * pt.eye(inducing.shape[0])
    chol = pt.linalg.cholesky(k_uu)
    return k_xu @ solve_triangular(chol.T, v, lower=False)


def _gp_method(gp: str | None, n_arms: int) -> str:
    method = gp or ("exact" if n_arms <= EXACT_GP_MAX_ARMS else "projected")
    if method not in ("exact", "projected"):
        raise ConfigError(f"unknown GP method {gp!r} (choose exact or projected)")
    return method


def _beta_binomial_potential(name: str, alpha, beta, y: np.ndarray, n: np.ndarray) -> None:
    import pymc as pm
    from pytensor.tensor.special import betaln

    pm.Potential(name, (betaln(alpha + y, beta + n - y) - betaln(alpha, beta)).sum())


def _scale_potential(scale, n_obs, term: str, mask=None) -> None:
    """BetaGP-SL scale supervision over the observed arms.

    ``gamma`` (the released code, ``BetaLikelihood.forward`` in ``src/likelihoods/
    beta_gp_likelihood.py`` of github.com/vihari/AAA): each observed arm's own label count (not
    the -SLP pooled one), clamped to [0.01, 10], is a draw of Gamma(shape = s_a, rate = 1). The
    code averages this over the observed arms and rescales it, like its likelihood, by (all arms /
    observed arms); the sum used here keeps the code's 1:1 weight between likelihood and scale
    term (and equals it when every arm is observed, as in the simple setting). ``dirichlet``
    (the paper): the vector of the observed arms' label shares n_a / N is a draw of Dirichlet(s)
    -- the normalised form of independent Gamma(s_a, 1) counts, so both make the scale track the
    arm's label count. With ``mask`` (0/1 per arm, a tensor) ``scale`` and ``n_obs`` cover every
    arm and only the masked ones count.
    """
    import pymc as pm
    import pytensor.tensor as pt

    weight = 1.0 if mask is None else mask
    if term == "gamma":
        x = pt.clip(n_obs, 1e-2, 10.0)
        pm.Potential("scale_supervision", (weight * pm.logp(pm.Gamma.dist(alpha=scale, beta=1.0), x)).sum())
    elif term == "dirichlet":
        share = n_obs / (weight * n_obs).sum()
        if mask is not None:
            share = pt.switch(pt.gt(mask, 0), share, 1.0)
        logp = (pt.gammaln((weight * scale).sum()) - (weight * pt.gammaln(scale)).sum()
                + (weight * (scale - 1.0) * pt.log(share)).sum())
        pm.Potential("scale_supervision", logp)
    else:
        raise ConfigError(f"unknown scale term {term!r} (choose {' or '.join(SCALE_TERMS)})")


def count_terms(correct: np.ndarray, n: np.ndarray, obs: np.ndarray, as_data: bool) -> tuple[Any, Any]:
    """The likelihood's counts: the observed arms' (constants) or every arm's in data containers.

    With ``as_data`` the containers are ``correct`` and ``labels`` (made in the current model), so
    a compiled model can be given new counts (:class:`pbassess.surface.refit.SurfaceRefitter`).

    Examples
    --------
    >>> count_terms(np.array([2.0, 0.0, 5.0]), np.array([3.0, 0.0, 6.0]), np.array([0, 2]), False)
    (array([2., 5.]), array([3., 6.]))
    """
    if not as_data:
        return correct[obs], n[obs]
    import pymc as pm

    return pm.Data("correct", np.asarray(correct, float)), pm.Data("labels", np.asarray(n, float))


def _confidence_covariate(arms: ArmCounts) -> np.ndarray:
    conf = np.where(np.isfinite(arms.confidence), arms.confidence, np.nanmean(arms.confidence))
    if not np.all(np.isfinite(conf)):
        raise ConfigError("the confidence covariate needs the model's confidence on the arms' pool items")
    return _logit(conf)


def global_accuracy_terms(arms: ArmCounts, as_data: bool) -> tuple[Any, Any]:
    """The labeled items' accuracy and its (clipped) logit, the models' prior centre.

    With ``as_data`` the accuracy is the data container ``global_accuracy`` of the current
    model (it changes with the counts when a compiled model is refitted).

    Examples
    --------
    >>> p, loc = global_accuracy_terms(ArmCounts.from_arrays([4, 0], [3, 0]), False)
    >>> p, round(loc, 4)
    (0.75, 1.0986)
    """
    p = arms.global_accuracy
    if not as_data:
        return p, float(_logit(p))
    import pymc as pm
    import pytensor.tensor as pt

    g = pm.Data("global_accuracy", np.asarray(p, float))
    q = pt.clip(g, 1e-3, 1 - 1e-3)
    return g, pt.log(q) - pt.log1p(-q)


def _mean_intercept(arms: ArmCounts, covariate: str | None, intercept_sd: float, loc: Any = None) -> Any:
    """logit-mean intercept centred at ``loc`` (default: logit of the global accuracy), or a
    learned offset and slope on logit confidence when asked."""
    import pymc as pm

    if covariate is None:
        loc = float(_logit(arms.global_accuracy)) if loc is None else loc
        return pm.Normal("intercept", loc, intercept_sd) if intercept_sd > 0 else loc
    if covariate != "confidence":
        raise ConfigError(f"unknown covariate {covariate!r} (only 'confidence' is supported)")
    x = _confidence_covariate(arms)
    offset = pm.Normal("confidence_offset", 0.0, 1.0)
    slope = pm.Normal("confidence_slope", 1.0, 0.5)
    return offset + slope * x


def betagp_model(arms: ArmCounts, *, variant: str = "betagp", scale_term: str = "gamma",
                 covariate: str | None = None, gp: str | None = None, n_inducing: int = 64,
                 pool_max_labels: float = 5.0, pool_k: int = 3, warm_start: bool = True, seed: Any = None,
                 counts_as_data: bool = False):
    """BetaGP / BetaGP-SL / BetaGP-SLP as a PyMC model.

    Returns ``(model, n, correct)``: the model has deterministics ``mu`` and ``scale`` (per arm);
    ``n``/``correct`` are the counts its likelihood used (pooled for -SLP), from which the arms'
    accuracy posterior is Beta(mu s + correct, (1 - mu) s + n - correct) per draw.
    ``counts_as_data``: every arm's (pooled) counts in the containers ``labels`` / ``correct``
    and, for the scale term, its own count in ``own_labels`` (see :func:`count_terms`).

    Examples
    --------
    >>> arms = ArmCounts.from_arrays([10, 5, 0, 8], [9, 3, 0, 4], values=[[0, 0], [0, 1], [1, 0], [1, 1]],
    ...                              attributes=("sex", "dis"))
    >>> model, n, correct = betagp_model(arms, seed=0)  # the model only: fit_surface samples it
    >>> sorted(v.name for v in model.deterministics), n.tolist()
    (['mu', 'scale'], [10.0, 5.0, 0.0, 8.0])
    >>> n_slp = betagp_model(arms, variant="betagp-slp", seed=0)[1]  # arm 1 (5 labels) pools its neighbours'
    >>> bool(n_slp[1] > 5)
    True
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
    obs = np.arange(arms.n_arms) if counts_as_data else np.flatnonzero(n > 0)
    with pm.Model() as model:
        f = _gp_latent("f", X, owner, method=method, n_inducing=n_inducing, rng=rng)
        g = _gp_latent("g", X, owner, method=method, n_inducing=n_inducing, rng=rng)
        p0, loc = global_accuracy_terms(arms, counts_as_data)
        mean_f = _mean_intercept(arms, covariate, 1.5, loc)
        mean_g = pm.Normal("g_intercept", 3.0, 1.5)
        mu = pm.Deterministic("mu", pt.clip(pm.math.sigmoid(mean_f + f), 1e-6, 1 - 1e-6))
        raw = pt.softplus(mean_g + g) + 1e-3
        scale = pm.Deterministic("scale", raw * np.exp(LOG_SCALE_CAP) / (raw + np.exp(LOG_SCALE_CAP)))
        alpha, beta = mu * scale, (1.0 - mu) * scale
        y, n_lik = count_terms(c, n, obs, counts_as_data)
        _beta_binomial_potential("likelihood", alpha[obs], beta[obs], y, n_lik)
        if warm_start:
            _beta_binomial_potential("warm_start", alpha, beta, WARM_START_WEIGHT * p0,
                                     np.full(arms.n_arms, WARM_START_WEIGHT))
        if variant != "betagp" and counts_as_data:
            own = pm.Data("own_labels", np.asarray(arms.n, float))
            _scale_potential(scale, own, scale_term, mask=pt.gt(n_lik, 0))
        elif variant != "betagp" and obs.size:  # the arm's own label count, not the pooled one (AAA code)
            _scale_potential(scale[obs], arms.n[obs], scale_term)
    return model, n, c


def berngp_model(arms: ArmCounts, *, covariate: str | None = None, gp: str | None = None,
                 n_inducing: int = 64, seed: Any = None, counts_as_data: bool = False):
    """BernGP: correctness bits of arm a ~ Bernoulli(sigmoid(f_a)), f a latent GP (deterministic ``p``).

    ``counts_as_data``: every arm's counts in the containers ``labels`` / ``correct`` (see
    :func:`count_terms`).

    Examples
    --------
    >>> arms = ArmCounts.from_arrays([10, 5, 0, 8], [9, 3, 0, 4], values=[[0, 0], [0, 1], [1, 0], [1, 1]],
    ...                              attributes=("sex", "dis"))
    >>> model = berngp_model(arms, seed=0)  # the model only: fit_surface samples it
    >>> [v.name for v in model.deterministics], model["p"].type.shape
    (['p'], (4,))
    """
    import pymc as pm
    import pytensor.tensor as pt

    X, owner = arm_inputs(arms)
    obs = np.arange(arms.n_arms) if counts_as_data else np.flatnonzero(arms.n > 0)
    with pm.Model() as model:
        f = _gp_latent("f", X, owner, method=_gp_method(gp, arms.n_arms), n_inducing=n_inducing,
                       rng=as_generator(seed))
        eta = _mean_intercept(arms, covariate, 1.5, global_accuracy_terms(arms, counts_as_data)[1]) + f
        pm.Deterministic("p", pm.math.sigmoid(eta))
        y, n = count_terms(arms.correct, arms.n, obs, counts_as_data)
        pm.Potential("likelihood", -(y * pt.softplus(-eta[obs]) + (n - y) * pt.softplus(eta[obs])).sum())
    return model
