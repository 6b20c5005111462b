"""Region-level calibration offsets for the confidence-informed prior (integrated nested Laplace).

One confidence-to-accuracy map for all regions fails when the regions are miscalibrated by
different amounts: on ``digits-shift`` the mean confidence overstates the accuracy by 0.04 in the
clean environment and by 0.32 under the strongest noise, and with a shared map the intervals of
the environments missed the truth in up to 62% of label draws (``benchmarks/estimation_regions.py``).
Here each region r gets its own offset around the shared one, with a spread learned from the labels:

    logit mu_c = offset + u_r(c) + slope * x_c,   x_c = logit(mean confidence of cell c),
    u_r ~ Normal(0, sigma),   sigma ~ HalfNormal(1),
    theta_c ~ Beta(mu_c tau, (1 - mu_c) tau),   k_c ~ Binomial(n_c, theta_c),

with the hyperpriors of :data:`~pbassess.estimation.eb.HYPERPRIOR` on (offset, slope, log tau).
A region whose labels contradict the shared map moves its own offset; when the regions agree the
learned sigma is small and the model is the shared one. A region without labels keeps the
shared map with the extra uncertainty sigma.

What it does not capture: regions whose *slope* differs (on digits-shift the per-environment
slope of logit accuracy on logit confidence falls from 1.1 clean to 0.3 at the strongest noise,
whose interval still covers 0.87 of 400 label draws). Region slopes sharing the offsets' sigma
made it worse (0.60-0.96 over 100 draws: one scale cannot fit both), and a separate scale for
them needs a two-dimensional grid.

Inference (the fast path, in the spirit of INLA): sigma on a grid of :data:`SIGMA_GRID`; at each
grid value the mode of phi = (offset, slope, log tau, u_1..u_R) (damped Newton with exact
gradient and Hessian) and its Laplace approximation, whose normalising
constant weighs the grid values (the posterior of sigma); draws pick a grid value by weight and
phi from its normal approximation. Fitting sigma by a joint mode instead would collapse it to 0
(the hierarchical funnel), which is why it is integrated over a grid.

The Hessian in phi is an arrow: a region's offset shares cells with the three shared parameters
only, never with another region's. Every Newton step, log-determinant and draw goes through the
3 x 3 Schur complement (:class:`_ArrowPrecision`), so a fit costs O(cells + regions) rather than
O(regions^3): ``estimate --by`` over 899 one-item groups took 162 s with the dense Hessian.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from pbassess.counting import cell_counts
from pbassess.estimation.eb import (
    HYPERPRIOR,
    fit_confidence_prior,
    hyperparameter_bounds,
    logit_confidence,
)
from pbassess.pymc_models.estimation import (
    SIGMA_PRIOR_SCALE,  # scale of sigma's HalfNormal prior (one copy)
)
from pbassess.stats.betabinom import beta_binomial_log_marginal, beta_binomial_log_marginal_grad
from pbassess.stats.sampling import as_generator

__all__ = ["SIGMA_GRID", "RegionalPrior", "fit_regional_prior"]

#: Grid of the region offsets' standard deviation sigma (logit scale).
SIGMA_GRID: np.ndarray = np.geomspace(0.02, 4.0, 18)


@dataclass(frozen=True)
class RegionalPrior:
    """Draws of the hyperparameters: ``offset``, ``slope``, ``strength``, ``sigma`` (S,) and ``region_offset`` (S, R).

    Examples
    --------
    >>> prior = RegionalPrior(np.zeros(1), np.ones(1), np.full(1, 10.0), np.array([[0.0, -1.0]]), np.ones(1))
    >>> a, b = prior.beta_params([0.8, 0.8], np.array([0, 1]))
    >>> a.round(3).tolist()             # region 1's offset of -1 lowers the prior mean of its cell
    [[8.0, 5.954]]
    """

    offset: np.ndarray
    slope: np.ndarray
    strength: np.ndarray
    region_offset: np.ndarray
    sigma: np.ndarray

    def beta_params(self, mean_conf: Any, region: Any) -> tuple[np.ndarray, np.ndarray]:
        """Prior Beta(alpha_c, beta_c) of every cell under every draw: arrays (S, C)."""
        x = logit_confidence(mean_conf)
        reg = np.asarray(region)
        eta = self.offset[:, None] + self.region_offset[:, reg] + self.slope[:, None] * x
        mu = np.clip(special.expit(eta), 1e-9, 1 - 1e-9)
        tau = self.strength[:, None]
        return mu * tau, (1 - mu) * tau

    def summary(self) -> dict[str, Any]:
        """Posterior means: offset, slope, strength, region_sd and region_offsets (one per region)."""
        return {"offset": float(self.offset.mean()), "slope": float(self.slope.mean()),
               "strength": float(self.strength.mean()), "region_sd": float(self.sigma.mean()),
               "region_offsets": self.region_offset.mean(axis=0).round(4).tolist()}


class _Cells:
    """The labeled-cell data of the regional model: counts, logit confidence, region index (all (C,))."""

    def __init__(self, n: np.ndarray, k: np.ndarray, x: np.ndarray, region: np.ndarray, n_regions: int):
        self.n, self.k, self.x, self.region, self.n_regions = n, k, x, region, int(n_regions)

    def per_region(self, values: np.ndarray) -> np.ndarray:
        """Sum of per-cell values over each region's cells: (R,)."""
        return cell_counts(self.region, self.n_regions, weights=np.asarray(values, dtype=float))


def _design(x: np.ndarray, region: np.ndarray, n_regions: int) -> np.ndarray:
    """d eta_c / d phi for phi = (offset, slope, log tau, u_1..u_R): (C, 3 + R) (the log-tau column is 0).

    The dense reference of the tests; the fit itself never builds it (its Hessian is an arrow:
    the region offsets are coupled to the three shared parameters only).
    """
    jac = np.zeros((x.size, 3 + n_regions))
    jac[:, 0] = 1.0
    jac[:, 1] = x
    jac[np.arange(x.size), 3 + region] = 1.0
    return jac


def _cell_terms(phi: np.ndarray, data: _Cells):
    eta = phi[0] + phi[1] * data.x + phi[3:][data.region]
    mu = np.clip(special.expit(eta), 1e-9, 1 - 1e-9)
    tau = np.exp(phi[2])
    a, b = mu * tau, (1 - mu) * tau
    da, db, dt = beta_binomial_log_marginal_grad(data.k, data.n, a, b, strength=tau)
    return mu, tau, a, b, da, db, dt


def _log_post(phi: np.ndarray, sigma: float, data: _Cells) -> tuple[float, np.ndarray]:
    """Log density of phi given sigma (Beta-binomial counts, hyperpriors, Normal region effects) and its gradient."""
    mu, tau, a, b, da, db, dt = _cell_terms(phi, data)
    ll = beta_binomial_log_marginal(data.k, data.n, a, b, coefficient=False, strength=tau)
    deta = np.nan_to_num((da - db) * tau * mu * (1 - mu))
    dlogtau = np.nan_to_num(da * a + db * b + dt * tau)
    w = phi[3:]
    value = float(ll.sum()) - 0.5 * float(w @ w) / sigma**2 - w.size * np.log(sigma) - 0.5 * w.size * np.log(2 * np.pi)
    grad = np.empty(phi.size)
    grad[0], grad[1], grad[2] = deta.sum(), (deta * data.x).sum(), dlogtau.sum()
    grad[3:] = data.per_region(deta) - w / sigma**2
    for j, key in enumerate(("offset", "slope", "log_strength")):
        m, s = HYPERPRIOR[key]
        value -= 0.5 * ((phi[j] - m) / s) ** 2 + np.log(s * np.sqrt(2 * np.pi))
        grad[j] -= (phi[j] - m) / s**2
    return value, grad


def _hessian_arrow(phi: np.ndarray, sigma: float, data: _Cells) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact Hessian of :func:`_log_post` in phi as an arrow: (H_gg (3, 3), H_gu (3, R), diagonal of H_uu (R,)).

    The chain rule through each cell's (eta, log tau) with trigamma terms; region offsets of
    different regions share no cell, so H_uu is diagonal. O(C + R) memory and time.
    """
    mu, tau, a, b, da, db, dt = _cell_terms(phi, data)
    n, k, x = data.n, data.k, data.x
    daa = special.polygamma(1, a + k) - special.polygamma(1, a)
    dbb = special.polygamma(1, b + n - k) - special.polygamma(1, b)
    dtt = special.polygamma(1, tau) - special.polygamma(1, tau + n)
    v = mu * (1 - mu)
    h_ee = np.nan_to_num((daa + dbb) * (tau * v) ** 2 + (da - db) * tau * v * (1 - 2 * mu))
    h_el = np.nan_to_num((daa * a - dbb * b) * tau * v + (da - db) * tau * v)
    h_ll = np.nan_to_num(daa * a**2 + da * a + dbb * b**2 + db * b + dtt * tau**2 + dt * tau)
    h_gg = np.array([[h_ee.sum(), (h_ee * x).sum(), h_el.sum()],
                     [(h_ee * x).sum(), (h_ee * x * x).sum(), (h_el * x).sum()],
                     [h_el.sum(), (h_el * x).sum(), h_ll.sum()]])
    for j, key in enumerate(("offset", "slope", "log_strength")):
        h_gg[j, j] -= 1.0 / HYPERPRIOR[key][1] ** 2
    h_gu = np.stack([data.per_region(h_ee), data.per_region(h_ee * x), data.per_region(h_el)])
    h_uu = data.per_region(h_ee) - 1.0 / sigma**2
    return h_gg, h_gu, h_uu


def _hessian(phi: np.ndarray, sigma: float, data: _Cells) -> np.ndarray:
    """The dense (3 + R, 3 + R) Hessian assembled from :func:`_hessian_arrow` (for the tests)."""
    h_gg, h_gu, h_uu = _hessian_arrow(phi, sigma, data)
    hess = np.zeros((phi.size, phi.size))
    hess[:3, :3], hess[:3, 3:], hess[3:, :3] = h_gg, h_gu, h_gu.T
    hess[3:, 3:] = np.diag(h_uu)
    return hess


def _hessian_numeric(phi: np.ndarray, sigma: float, data: _Cells) -> np.ndarray:
    """Central differences of the exact gradient (the check of :func:`_hessian` in the tests)."""
    step = 1e-5
    hess = np.empty((phi.size, phi.size))
    for j in range(phi.size):
        up, down = phi.copy(), phi.copy()
        up[j] += step
        down[j] -= step
        hess[j] = (_log_post(up, sigma, data)[1] - _log_post(down, sigma, data)[1]) / (2 * step)
    return (hess + hess.T) / 2


class _ArrowPrecision:
    """A positive-definite precision with the arrow structure of :func:`_hessian_arrow`, in Schur form.

    ``P = [[A, B], [B^T, diag(d)]]`` with the diagonal floored at ``floor`` (absolute value: a
    direction of negative curvature is flipped, as in a saddle-free Newton step) and the 3 x 3
    Schur complement ``S = A - B diag(1/d) B^T`` likewise (eigenvalues' absolute values, floored).
    Solves, log-determinant and draws of Normal(0, P^-1) cost O(R).
    """

    def __init__(self, h_gg: np.ndarray, h_gu: np.ndarray, h_uu: np.ndarray, floor: float):
        self.b = -h_gu
        self.d = np.maximum(np.abs(-h_uu), floor)
        schur = -h_gg - (self.b / self.d) @ self.b.T
        evals, evecs = np.linalg.eigh((schur + schur.T) / 2)
        self.evals = np.maximum(np.abs(evals), floor)
        self.evecs = evecs

    def solve(self, g: np.ndarray) -> np.ndarray:
        g_g, g_u = g[:3], g[3:]
        rhs = g_g - self.b @ (g_u / self.d)
        d_g = self.evecs @ ((self.evecs.T @ rhs) / self.evals)
        return np.concatenate([d_g, (g_u - self.b.T @ d_g) / self.d])

    def logdet(self) -> float:
        return float(np.log(self.d).sum() + np.log(self.evals).sum())

    def draw(self, eps: np.ndarray) -> np.ndarray:
        """Rows of Normal(0, P^-1) from rows of standard normals ``eps`` (S, 3 + R): the shared part
        from its marginal (precision S), the region offsets from their conditional given it."""
        z_g = (eps[:, :3] / np.sqrt(self.evals)) @ self.evecs.T
        z_u = -(z_g @ self.b) / self.d + eps[:, 3:] / np.sqrt(self.d)
        return np.concatenate([z_g, z_u], axis=1)


def _mode(phi: np.ndarray, sigma: float, data: _Cells, lows: np.ndarray, highs: np.ndarray,
          max_iter: int = 100) -> tuple[np.ndarray, float, _ArrowPrecision]:
    """Damped Newton ascent of the log density in phi; returns the mode, its value and the precision there."""
    value, grad = _log_post(phi, sigma, data)
    for _ in range(max_iter):
        direction = _ArrowPrecision(*_hessian_arrow(phi, sigma, data), floor=1e-6).solve(grad)
        t = 1.0
        for _ in range(40):
            trial = np.clip(phi + t * direction, lows, highs)
            v_t, g_t = _log_post(trial, sigma, data)
            if np.isfinite(v_t) and v_t >= value - 1e-12:
                break
            t /= 2
        else:
            break
        moved = np.abs(trial - phi).max()
        phi, value, grad = trial, v_t, g_t
        free = ~(((phi <= lows) & (grad < 0)) | ((phi >= highs) & (grad > 0)))
        if moved < 1e-10 or np.abs(grad[free]).max(initial=0.0) < 1e-8:
            break
    return phi, value, _ArrowPrecision(*_hessian_arrow(phi, sigma, data), floor=1e-6)


def fit_regional_prior(n: Any, correct: Any, mean_conf: Any, region: Any, n_regions: int, draws: int,
                       seed: Any = None, max_strength: float = 1e5) -> RegionalPrior:
    """Draws of the hyperparameters of the region-offset model (module docstring) from counts per cell.

    Parameters
    ----------
    n, correct : array_like, shape (C,)
        Labeled and correct labeled items per cell.
    mean_conf : array_like, shape (C,)
        Mean confidence of each cell's pool.
    region : array_like of int, shape (C,)
        Region of each cell.
    n_regions : int
    draws : int
    seed : int or Generator, optional

    Returns
    -------
    RegionalPrior

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> c = np.tile(np.linspace(0.6, 0.95, 10), 4); region = np.repeat(np.arange(4), 10)
    >>> true_offset = np.array([0.0, 0.0, -1.5, 0.0])                 # region 2 is overconfident
    >>> theta = 1 / (1 + np.exp(-(np.log(c / (1 - c)) + true_offset[region])))
    >>> n = np.full(40, 15); k = rng.binomial(n, theta)
    >>> prior = fit_regional_prior(n, k, c, region, 4, draws=2000, seed=1)
    >>> u = prior.region_offset.mean(axis=0)
    >>> bool(u[2] < -0.8 and abs(u[0]) < 0.5), bool(prior.sigma.mean() > 0.3)
    (True, True)
    """
    n_arr = np.asarray(n, dtype=float)
    k_arr = np.asarray(correct, dtype=float)
    reg = np.asarray(region, dtype=np.int64)
    data = _Cells(n_arr, k_arr, logit_confidence(mean_conf), reg, int(n_regions))
    shared = fit_confidence_prior(n_arr, k_arr, mean_conf, max_strength=max_strength)
    low3, high3 = np.array(hyperparameter_bounds(max_strength)).T
    lows = np.concatenate([low3, np.full(n_regions, -10.0)])
    highs = np.concatenate([high3, np.full(n_regions, 10.0)])
    phi = np.concatenate([[float(shared.offset), float(shared.slope), float(np.log(shared.strength))],
                          np.zeros(n_regions)])
    modes, precisions, log_w = [], [], []
    for sigma in SIGMA_GRID[::-1]:                   # wide to narrow, each warm-started from the last
        phi, value, precision = _mode(phi, float(sigma), data, lows, highs)
        modes.append(phi.copy())
        precisions.append(precision)
        # Laplace: log p(y | sigma) + log p(sigma) + log sigma (a grid uniform in log sigma)
        log_ml = value + 0.5 * phi.size * np.log(2 * np.pi) - 0.5 * precision.logdet()
        log_w.append(log_ml - 0.5 * (sigma / SIGMA_PRIOR_SCALE) ** 2 + np.log(sigma))
    log_w = np.array(log_w)
    weights = np.exp(log_w - log_w.max())
    weights /= weights.sum()
    rng = as_generator(seed)
    pick = rng.choice(weights.size, size=int(draws), p=weights)
    z = np.empty((int(draws), phi.size))
    for g in np.unique(pick):
        rows = np.flatnonzero(pick == g)
        z[rows] = modes[g] + precisions[g].draw(rng.standard_normal((rows.size, phi.size)))
    z = np.clip(z, lows, highs)
    sigma = SIGMA_GRID[::-1][pick]
    return RegionalPrior(offset=z[:, 0], slope=z[:, 1], strength=np.exp(z[:, 2]), region_offset=z[:, 3:], sigma=sigma)
