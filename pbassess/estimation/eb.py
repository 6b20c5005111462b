"""Empirical Bayes for a confidence-informed Beta prior (plain NumPy / SciPy, batched over runs).

The model, per region r (a class, a group, a confidence bin or a cell of them) with ``n_r``
labeled items of which ``k_r`` are correct and the model's mean confidence ``c_r`` over the
region's whole pool (a label-free estimate of its accuracy, as in NannyML's CBPE):

    theta_r ~ Beta(mu_r tau, (1 - mu_r) tau),   logit mu_r = offset + slope * logit c_r,
    k_r ~ Binomial(n_r, theta_r).

``offset = 0, slope = 1`` says the confidence is calibrated; ``tau`` (the prior strength, in
pseudo-labels) says how far the regions' accuracies stray from what the confidence predicts.
All three are learned from the labels across regions: :func:`fit_confidence_prior` maximises
the Beta-binomial marginal likelihood (theta integrated out) times the weak hyperpriors

    offset ~ Normal(0, 1.5),  slope ~ Normal(1, 1),  log tau ~ Normal(3, 2),

the same ones the PyMC model (:func:`pbassess.pymc_models.estimation.confidence_prior_model`) samples;
the exact per-region posterior given the fit is ``Beta(mu_r tau + k_r, (1 - mu_r) tau + n_r - k_r)``.
A well-calibrated model gets a large tau (its confidence is trusted like many labels), a
miscalibrated one gets its offset / slope corrected by the labels.

Every function takes arrays of shape (..., R) and fits each leading index on its own, so a
simulation fits the priors of all its runs in one optimiser call (the objective is a sum of
independent terms).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from pbassess.errors import ConfigError
from pbassess.pymc_models.estimation import (
    HYPERPRIOR,  # (mean, sd) of the hyperpriors: one copy, beside the PyMC model
)
from pbassess.stats.betabinom import beta_binomial_log_marginal, beta_binomial_log_marginal_grad

__all__ = ["HYPERPRIOR", "ConfidencePrior", "bounded_normal_draws", "fit_confidence_prior", "hyperparameter_bounds",
           "laplace_covariance", "laplace_draws", "logit_confidence", "marginal_log_likelihood"]


_CLIP = 1e-4


def hyperparameter_bounds(max_strength: float) -> list[tuple[float, float]]:
    """The (low, high) bounds of the fitted (offset, slope, log strength), strength at most ``max_strength``.

    Examples
    --------
    >>> [(float(lo), round(float(hi), 4)) for lo, hi in hyperparameter_bounds(1e5)][:2]
    [(-10.0, 10.0), (-5.0, 10.0)]
    """
    return [(-10.0, 10.0), (-5.0, 10.0), (np.log(0.05), np.log(max_strength))]


def logit_confidence(mean_conf: Any) -> np.ndarray:
    """The logit of the mean confidence, clipped to [1e-4, 1 - 1e-4] first (the prior's covariate).

    Examples
    --------
    >>> logit_confidence([0.5, 0.9, 1.0]).round(4).tolist()
    [0.0, 2.1972, 9.2102]
    """
    c = np.clip(np.asarray(mean_conf, dtype=float), _CLIP, 1 - _CLIP)
    return np.log(c) - np.log1p(-c)


@dataclass(frozen=True)
class ConfidencePrior:
    """A fitted confidence-to-accuracy prior (arrays of shape (...) for batched fits).

    Parameters
    ----------
    offset, slope : float or ndarray
        ``logit mu = offset + slope * logit(mean confidence)``.
    strength : float or ndarray
        The Beta prior's strength ``tau``.

    Examples
    --------
    >>> prior = ConfidencePrior(offset=0.0, slope=1.0, strength=10.0)
    >>> a, b = prior.beta_params([0.8, 0.5])
    >>> a.round(6).tolist(), b.round(6).tolist()
    ([8.0, 5.0], [2.0, 5.0])
    """

    offset: Any
    slope: Any
    strength: Any

    def prior_mean(self, mean_conf: Any) -> np.ndarray:
        """mu_r = sigmoid(offset + slope * logit c_r), broadcasting a batch axis in front."""
        x = logit_confidence(mean_conf)
        off = np.asarray(self.offset, dtype=float)[..., None]
        slope = np.asarray(self.slope, dtype=float)[..., None]
        return np.clip(special.expit(off + slope * x), 1e-9, 1 - 1e-9)

    def beta_params(self, mean_conf: Any) -> tuple[np.ndarray, np.ndarray]:
        """Prior Beta(alpha_r, beta_r) of every region."""
        mu = self.prior_mean(mean_conf)
        tau = np.asarray(self.strength, dtype=float)[..., None]
        return mu * tau, (1 - mu) * tau

    def to_dict(self) -> dict[str, Any]:
        """Plain values (lists for batched fits)."""
        return {k: np.asarray(getattr(self, k)).tolist() for k in ("offset", "slope", "strength")}


def marginal_log_likelihood(params: Any, n: Any, k: Any, mean_conf: Any) -> np.ndarray:
    """Beta-binomial log marginal likelihood (without the binomial coefficients) per fit.

    ``params`` has shape (..., 3): offset, slope, log strength.

    Examples
    --------
    >>> ll = marginal_log_likelihood([0.0, 1.0, np.log(1e6)], [100], [80], [0.8])
    >>> bool(abs(ll - (80 * np.log(0.8) + 20 * np.log(0.2))) < 1e-3)   # tau -> inf: Binomial(0.8)
    True
    """
    value, _ = _value_and_grad(np.asarray(params, dtype=float), np.asarray(n, dtype=float),
                               np.asarray(k, dtype=float), logit_confidence(mean_conf), with_prior=False)
    return value


def _value_and_grad(p: np.ndarray, n: np.ndarray, k: np.ndarray, x: np.ndarray, *, with_prior: bool):
    off, slope, log_tau = p[..., 0:1], p[..., 1:2], p[..., 2:3]
    mu = np.clip(special.expit(off + slope * x), 1e-9, 1 - 1e-9)
    tau = np.exp(log_tau)
    a, b = mu * tau, (1 - mu) * tau
    ll = beta_binomial_log_marginal(k, n, a, b, coefficient=False, strength=tau)
    with np.errstate(invalid="ignore", over="ignore"):
        da, db, dtau_common = beta_binomial_log_marginal_grad(k, n, a, b, strength=tau)
        deta = np.nan_to_num((da - db) * tau * mu * (1 - mu), nan=0.0, posinf=0.0, neginf=0.0)
        dlogtau = np.nan_to_num((da * a + db * b) + dtau_common * tau, nan=0.0, posinf=0.0, neginf=0.0)
    value = ll.sum(axis=-1)
    grad = np.stack([deta.sum(axis=-1), (deta * x).sum(axis=-1), dlogtau.sum(axis=-1)], axis=-1)
    if with_prior:
        for j, key in enumerate(("offset", "slope", "log_strength")):
            m, s = HYPERPRIOR[key]
            value = value - 0.5 * ((p[..., j] - m) / s) ** 2
            grad[..., j] -= (p[..., j] - m) / s**2
    return value, grad


def fit_confidence_prior(n: Any, correct: Any, mean_conf: Any, *, start: Any = None,
                         max_strength: float = 1e5) -> ConfidencePrior:
    """Maximise the marginal likelihood x hyperpriors over (offset, slope, log strength).

    Damped Newton steps with exact gradients, each fit of a batch on its own (no shared optimiser).

    Parameters
    ----------
    n, correct : array_like, shape (..., R)
        Labeled and correct labeled items per region (regions without labels contribute nothing).
    mean_conf : array_like, shape (R,) or (..., R)
        The model's mean confidence per region over the whole pool.
    start : array_like, shape (..., 3), optional
        Warm start (offset, slope, log strength), e.g. the previous fit of a simulation.
    max_strength : float
        Upper bound of tau.

    Returns
    -------
    ConfidencePrior
        Scalars, or arrays of shape (...) for batched counts.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> c = rng.uniform(0.55, 0.95, 40)
    >>> n = np.full(40, 60); k = rng.binomial(n, c)          # calibrated: accuracy = confidence
    >>> fit = fit_confidence_prior(n, k, c)
    >>> abs(float(fit.offset)) < 0.3, abs(float(fit.slope) - 1) < 0.3, float(fit.strength) > 50
    (True, True, True)
    """
    n_arr = np.asarray(n, dtype=float)
    k_arr = np.asarray(correct, dtype=float)
    if n_arr.shape != k_arr.shape:
        raise ConfigError(f"counts of items {n_arr.shape} and of correct items {k_arr.shape} differ in shape")
    if (k_arr < 0).any() or (k_arr > n_arr).any():
        raise ConfigError("each region needs 0 <= correct <= n")
    x = np.broadcast_to(logit_confidence(mean_conf), n_arr.shape)
    batch = n_arr.shape[:-1]
    size = int(np.prod(batch)) if batch else 1
    n2, k2, x2 = n_arr.reshape(size, -1), k_arr.reshape(size, -1), x.reshape(size, -1)
    if start is None:
        p0 = np.tile([HYPERPRIOR["offset"][0], HYPERPRIOR["slope"][0], HYPERPRIOR["log_strength"][0]], (size, 1))
    else:
        p0 = np.broadcast_to(np.asarray(start, dtype=float), (*batch, 3)).reshape(size, 3).copy()

    lows, highs = np.array(hyperparameter_bounds(max_strength)).T
    res_x = _newton_maximise(np.clip(p0, lows, highs), n2, k2, x2, lows, highs)
    p = res_x.reshape(*batch, 3) if batch else res_x[0]
    return ConfidencePrior(offset=p[..., 0], slope=p[..., 1], strength=np.exp(p[..., 2]))


def _hessian(p: np.ndarray, n: np.ndarray, k: np.ndarray, x: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """Batched (B, 3, 3) Hessian of the log posterior by forward differences of the exact gradient."""
    step = 1e-5
    hess = np.empty((p.shape[0], 3, 3))
    for j in range(3):
        q = p.copy()
        q[:, j] += step
        hess[:, j, :] = (_value_and_grad(q, n, k, x, with_prior=True)[1] - grad) / step
    return (hess + np.swapaxes(hess, 1, 2)) / 2


def _newton_maximise(p: np.ndarray, n: np.ndarray, k: np.ndarray, x: np.ndarray, lows: np.ndarray,
                     highs: np.ndarray, max_iter: int = 60) -> np.ndarray:
    """Maximise the log posterior of every row of ``p`` (B, 3) by damped Newton steps within bounds.

    The rows are independent 3-parameter problems, so each gets its own 3 x 3 Hessian
    (negative curvature flipped, tiny curvature floored: always an ascent direction) and its own
    step-halving line search. No BLAS threads or optimiser state: a thousand fits cost about as
    much as one.
    """
    value, grad = _value_and_grad(p, n, k, x, with_prior=True)
    active = np.ones(p.shape[0], dtype=bool)
    for _ in range(max_iter):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        pa, ga = p[idx], grad[idx]
        evals, evecs = np.linalg.eigh(-_hessian(pa, n[idx], k[idx], x[idx], ga))
        evals = np.maximum(np.abs(evals), 1e-3)
        direction = np.einsum("bij,bj,bkj,bk->bi", evecs, 1.0 / evals, evecs, ga)
        t = np.ones(idx.size)
        accepted = np.zeros(idx.size, dtype=bool)
        new_p, new_v, new_g = pa.copy(), value[idx].copy(), ga.copy()
        for _ in range(30):
            trial = np.clip(pa + t[:, None] * direction, lows, highs)
            v_t, g_t = _value_and_grad(trial, n[idx], k[idx], x[idx], with_prior=True)
            ok = ~accepted & np.isfinite(v_t) & (v_t >= value[idx] - 1e-12)
            new_p[ok], new_v[ok], new_g[ok] = trial[ok], v_t[ok], g_t[ok]
            accepted |= ok
            if accepted.all():
                break
            t[~accepted] /= 2
        moved = np.abs(new_p - pa).max(axis=1)
        p[idx], value[idx], grad[idx] = new_p, new_v, new_g
        # projected gradient: a component pushing against its bound does not count
        g_proj = np.where(((new_p <= lows) & (new_g < 0)) | ((new_p >= highs) & (new_g > 0)), 0.0, new_g)
        active[idx] = (moved > 1e-9) & (np.abs(g_proj).max(axis=1) > 1e-7)
    return p


def laplace_draws(fit: ConfidencePrior, n: Any, correct: Any, mean_conf: Any, draws: int, seed: Any = None,
                  max_strength: float = 1e5) -> ConfidencePrior:
    """Draws of (offset, slope, strength) from the Laplace approximation at the fitted mode.

    The plug-in fit ignores how uncertain the hyperparameters are, which makes intervals too
    narrow when few regions carry labels; drawing them from the normal approximation of their
    marginal posterior (on the offset, slope, log-strength scale; Hessian by central differences
    of the exact gradient) puts that uncertainty back, close to what NUTS gives.

    A batched fit (arrays of shape (B,) from :func:`fit_confidence_prior` on counts of shape
    (B, R)) gets its own approximation per row, all at once.

    Parameters
    ----------
    fit : ConfidencePrior
        The fitted mode (:func:`fit_confidence_prior`).
    n, correct : array_like
        Labeled and correct labeled items per cell.
    mean_conf : array_like
        Mean confidence per cell.
    draws : int
    seed : int or numpy.random.Generator, optional
    max_strength : float
        Upper bound of the drawn strength.

    Returns
    -------
    ConfidencePrior
        With arrays of shape (draws,), or (B, draws) for a batched fit.

    Examples
    --------
    >>> rng = np.random.default_rng(2)
    >>> c = rng.uniform(0.6, 0.95, 30); n = np.full(30, 20); k = rng.binomial(n, c)
    >>> fit = fit_confidence_prior(n, k, c)
    >>> d = laplace_draws(fit, n, k, c, 2000, seed=0)
    >>> bool(abs(np.mean(d.offset) - fit.offset) < 0.1), d.strength.shape
    (True, (2000,))
    >>> both = fit_confidence_prior(np.stack([n, n]), np.stack([k, k]), c)       # a batch of two fits
    >>> laplace_draws(both, np.stack([n, n]), np.stack([k, k]), c, 500, seed=0).offset.shape
    (2, 500)
    """
    from pbassess.stats.sampling import as_generator

    batched = np.ndim(fit.offset) > 0
    mode = np.stack([np.atleast_1d(np.asarray(fit.offset, dtype=float)),
                     np.atleast_1d(np.asarray(fit.slope, dtype=float)),
                     np.atleast_1d(np.log(np.asarray(fit.strength, dtype=float)))], axis=-1)
    size = mode.shape[0]
    n_arr = np.broadcast_to(np.asarray(n, dtype=float), (size, np.shape(n)[-1]))
    k_arr = np.broadcast_to(np.asarray(correct, dtype=float), n_arr.shape)
    x = np.broadcast_to(logit_confidence(mean_conf), n_arr.shape)
    factor = np.linalg.cholesky(laplace_covariance(mode, n_arr, k_arr, x))
    rng = as_generator(seed)
    z = np.stack([bounded_normal_draws(mode[b], factor[b], int(draws), rng, max_strength) for b in range(size)])
    if not batched:
        z = z[0]
    return ConfidencePrior(offset=z[..., 0], slope=z[..., 1], strength=np.exp(z[..., 2]))


def bounded_normal_draws(mode: np.ndarray, factor: np.ndarray, draws: int, rng: np.random.Generator,
                         max_strength: float = 1e5) -> np.ndarray:
    """(draws, 3) draws of Normal(mode, factor factor^T) within the bounds (the stream of ``multivariate_normal``).

    The draws are clipped to :func:`hyperparameter_bounds`.

    Examples
    --------
    >>> z = bounded_normal_draws(np.zeros(3), np.eye(3), 4, np.random.default_rng(0))
    >>> z.shape, bool((np.abs(z) <= 10).all())
    ((4, 3), True)
    """
    lows, highs = np.array(hyperparameter_bounds(max_strength)).T
    return np.clip(mode + rng.standard_normal((draws, 3)) @ factor.T, lows, highs)


def laplace_covariance(mode: np.ndarray, n: np.ndarray, k: np.ndarray, x: np.ndarray) -> np.ndarray:
    """(B, 3, 3) inverse of minus the log posterior's Hessian at each mode (B, 3), floored by the hyperpriors.

    ``mode`` holds (offset, slope, log strength) per row; ``n``, ``k`` and ``x`` (the logit of the
    regions' mean confidence) have shape (B, R).

    Examples
    --------
    >>> cov = laplace_covariance(np.array([[0.0, 1.0, 8.0]]), np.zeros((1, 3)), np.zeros((1, 3)), np.zeros((1, 3)))
    >>> np.sqrt(np.diag(cov[0])).round(3).tolist()      # no labels: the hyperpriors' sds
    [1.5, 1.0, 2.0]
    """
    step = 1e-4
    hess = np.zeros((mode.shape[0], 3, 3))
    for j in range(3):
        up, down = mode.copy(), mode.copy()
        up[:, j] += step
        down[:, j] -= step
        g_up = _value_and_grad(up, n, k, x, with_prior=True)[1]
        g_down = _value_and_grad(down, n, k, x, with_prior=True)[1]
        hess[:, j] = (g_up - g_down) / (2 * step)
    precision = -(hess + np.swapaxes(hess, 1, 2)) / 2
    # the hyperpriors alone bound the precision from below (guards a flat or non-concave spot)
    floor = np.diag([1 / HYPERPRIOR[key][1] ** 2 for key in ("offset", "slope", "log_strength")])
    bad = ~np.isfinite(precision).all(axis=(1, 2))
    precision[bad] = floor
    evals, evecs = np.linalg.eigh(precision)
    fix = evals.min(axis=1) <= 0
    if fix.any():
        clipped = np.maximum(evals[fix], 0)
        precision[fix] = np.einsum("bij,bj,bkj->bik", evecs[fix], clipped, evecs[fix]) + floor
    return np.linalg.inv(precision)
