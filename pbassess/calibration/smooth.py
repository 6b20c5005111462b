"""Smooth ECE and the smooth reliability curve (Blasiok and Nakkiran 2023).

With a Gaussian kernel reflected at 0 and 1, ``K_s(t, f) = phi_s(t - f) + phi_s(t + f) +
phi_s(t - 2 + f)``, the residual ``r_i = f_i - y_i`` is smoothed over a mesh of ``[0, 1]``::

    smECE(s) = sum_t |sum_i K_s(t, f_i) r_i| / sum_t sum_i K_s(t, f_i)

and smECE is ``smECE(s*)`` at the bandwidth where ``s* = smECE(s*)``, found by the same
ten-step bisection from 1 as the authors' ``relplot`` package (``relplot.smECE``), on the same
mesh (``max(200, round(10 / s))`` points). pbassess evaluates the kernel sums exactly (tied
scores summed first), where relplot first rounds the scores onto a grid of ``max(2000, 20 / s)
// 2 + 1`` points and reflects that grid without its end points: a score exactly at 0 or 1
then gets one kernel instead of the two the reflection principle gives it (its mirror image is
itself), so relplot gives mass on the boundary (and the part of a score within one grid step
of it) half the kernel weight. The default ``endpoints="relplot"`` follows relplot's convention
(it drops those mirror images as relplot does), so that ``smooth_ece`` is the number readers of
the smooth-ECE paper and users of relplot compute: equal to ``relplot.smECE`` to about 2e-5
(relplot's own grid rounding), tested on CIFAR-100 (smECE 0.1083) and on data away from the
boundary. ``endpoints="reflect"`` keeps the mirror images (the paper's kernel taken
literally). The two conventions differ only through scores at (or within relplot's grid step
of) 0 or 1: they agree to about 1e-6 when no score lies there, and not otherwise: on
CIFAR-100, where 1,134 of the 10,000 confidences equal 1.0, ``"reflect"`` gives 0.0982 against
relplot's 0.1083 (0.010 lower).
The smooth reliability curve is the Nadaraya-Watson
estimate ``mu(t) = sum_i K(t, f_i) y_i / sum_i K(t, f_i)`` at the same bandwidth (relplot's
``prepare_rel_diagram(...)["mu"]`` without bootstrap).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.counting import cell_counts
from pbassess.errors import ConfigError

__all__ = ["kernel_sums", "smooth_ece", "smooth_ece_at", "smooth_reliability_curve"]

_CHUNK = 4096


def _check(scores: Any, outcomes: Any) -> tuple[np.ndarray, np.ndarray]:
    f = np.asarray(scores, dtype=float).ravel()
    y = np.asarray(outcomes, dtype=float).ravel()
    if f.shape != y.shape:
        raise ConfigError(f"scores and outcomes have different lengths ({f.size} and {y.size})")
    if f.size == 0:
        raise ConfigError("smooth ECE needs at least one labeled item")
    if not np.all(np.isfinite(f)) or f.min() < 0 or f.max() > 1:
        raise ConfigError("scores must be probabilities in [0, 1]")
    return f, y


def kernel_sums(scores: Any, values: Any, mesh: Any, sigma: float, endpoints: str = "relplot") -> np.ndarray:
    """``sum_i K_sigma(t, f_i) v_i`` at each mesh point t (reflected Gaussian kernel).

    ``values`` may have a leading batch axis (shape (..., N)); the result has shape (..., T).

    Examples
    --------
    >>> t = np.linspace(0, 1, 5)
    >>> k = kernel_sums([0.5], [1.0], t, 0.1)
    >>> bool(np.argmax(k) == 2), round(float(k[2]), 4)
    (True, 3.9894)
    """
    f = np.asarray(scores, dtype=float).ravel()
    v = np.asarray(values, dtype=float)
    t = np.asarray(mesh, dtype=float).ravel()
    out = np.zeros(v.shape[:-1] + t.shape)
    norm = 1.0 / (np.sqrt(2 * np.pi) * sigma)
    for start in range(0, f.size, _CHUNK):
        fc = f[start:start + _CHUNK]
        k = np.exp(-0.5 * ((t[None, :] - fc[:, None]) / sigma) ** 2)
        for top in (False, True):
            near = fc > 1.0 - 9 * sigma if top else fc < 9 * sigma  # farther mirror images add < 1e-17
            centre = 2.0 - fc[near] if top else -fc[near]
            term = np.exp(-0.5 * ((t[None, :] - centre[:, None]) / sigma) ** 2)
            if endpoints == "relplot":
                term *= _relplot_mirror_weight(fc[near], sigma, top=top)[:, None]
            k[near] += term
        out += (v[..., start:start + _CHUNK] @ k) * norm
    return out


def _relplot_mirror_weight(f: np.ndarray, sigma: float, top: bool) -> np.ndarray:
    """Share of a score's mass that relplot's grid reflection mirrors at 0 (``top=False``) or 1.

    relplot spreads each score linearly over a grid of ``g = max(2000, round(20 / sigma)) // 2 + 1``
    points and mirrors every grid value except the end point's, so the share that lands on the
    end point is not mirrored.
    """
    g = max(2000, round(20 / sigma)) // 2 + 1
    pos = f * (g - 1)
    on_end = np.clip(pos - (g - 2), 0.0, 1.0) if top else np.clip(1.0 - pos, 0.0, 1.0)
    return 1.0 - on_end


#: Above this many distinct scores, items are split linearly onto a grid of this many points.
GRID_POINTS: int = 4001


def _aggregate(f: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct scores, their counts and outcome sums (kernel sums are linear in the items).

    With more than :data:`GRID_POINTS` distinct scores each item is split linearly between the
    two nearest points of a uniform grid (step 2.5e-4): a second-order error of about
    ``(step / sigma)^2 / 8`` relative, below 1e-5 for the bandwidths smooth ECE selects.
    """
    u, inv = np.unique(f, return_inverse=True)
    if u.size <= GRID_POINTS:
        return u, cell_counts(inv, u.size).astype(float), cell_counts(inv, u.size, y)
    pos = f * (GRID_POINTS - 1)
    low = np.clip(np.floor(pos).astype(np.int64), 0, GRID_POINTS - 2)
    frac = pos - low
    n = cell_counts(low, GRID_POINTS, 1 - frac) + cell_counts(low + 1, GRID_POINTS, frac)
    k = cell_counts(low, GRID_POINTS, (1 - frac) * y) + cell_counts(low + 1, GRID_POINTS, frac * y)
    keep = n > 0
    return np.linspace(0.0, 1.0, GRID_POINTS)[keep], n[keep], k[keep]


def _check_endpoints(endpoints: str) -> None:
    if endpoints not in ("reflect", "relplot"):
        raise ConfigError(f"endpoints must be 'reflect' or 'relplot', got {endpoints!r}")


def _mesh(sigma: float) -> np.ndarray:
    return np.linspace(0.0, 1.0, max(round(10 / sigma), 200))


def smooth_ece_at(scores: Any, outcomes: Any, sigma: float, *, endpoints: str = "relplot") -> float:
    """smECE at a fixed bandwidth ``sigma`` (``relplot.smECE_sigma``).

    Examples
    --------
    >>> round(smooth_ece_at([0.8] * 10, [1] * 8 + [0] * 2, 0.1), 6)
    0.0
    """
    f, y = _check(scores, outcomes)
    _check_endpoints(endpoints)
    if not sigma > 0:
        raise ConfigError(f"sigma must be positive, got {sigma!r}")
    u, n, k = _aggregate(f, y)
    return _smece(u, n, k, sigma, endpoints)


def _smece(u: np.ndarray, n: np.ndarray, k: np.ndarray, sigma: float, endpoints: str) -> float:
    t = _mesh(sigma)
    sums = kernel_sums(u, np.stack([n * u - k, n]), t, sigma, endpoints)
    return float(np.sum(np.abs(sums[0])) / np.sum(sums[1]))


def smooth_ece(scores: Any, outcomes: Any, *, eps: float = 0.001, return_sigma: bool = False,
               endpoints: str = "relplot"):
    """Smooth ECE with its self-consistent bandwidth (``relplot.smECE``).

    Parameters
    ----------
    scores, outcomes : array_like, shape (N,)
    eps : float
        Bandwidths below ``eps`` count as "small enough" in the bisection (relplot's default).
    return_sigma : bool
        Also return the bandwidth.
    endpoints : {"relplot", "reflect"}
        ``"relplot"`` (default): relplot's convention, scores exactly at 0 or 1 get no mirror
        image; ``"reflect"``: they do (see the module docstring; the two differ by 0.010 on
        CIFAR-100).

    Returns
    -------
    float or (float, float)
        The smooth ECE, and the bandwidth with ``return_sigma=True``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> f = rng.uniform(size=500)
    >>> y = rng.uniform(size=500) < f
    >>> bool(smooth_ece(f, y) < 0.05), bool(smooth_ece(f, np.ones(500)) > 0.4)
    (True, True)
    """
    f, y = _check(scores, outcomes)
    _check_endpoints(endpoints)
    u, n, k = _aggregate(f, y)

    def small(width: float) -> bool:
        return width < eps or width < _smece(u, n, k, width, endpoints)

    hi, lo = 1.0, 0.0
    if not small(hi):
        for _ in range(10):
            mid = (hi + lo) / 2
            if small(mid):
                lo = mid
            else:
                hi = mid
    value = _smece(u, n, k, hi, endpoints)
    return (value, hi) if return_sigma else value


def smooth_reliability_curve(scores: Any, outcomes: Any, *, sigma: float | None = None, n_points: int = 200,
                             endpoints: str = "relplot") -> dict:
    """The smooth reliability curve and the score density on a mesh of ``n_points``.

    Returns a dict with ``mesh``, ``curve`` (``mu(t)``), ``density`` (kernel density of the
    scores, integrating to about one), ``sigma`` and ``smooth_ece``; ``sigma`` defaults to the
    smooth-ECE bandwidth.

    Parameters
    ----------
    scores, outcomes : array_like, shape (N,)
    sigma : float, optional
        Kernel bandwidth (default: the smooth-ECE bandwidth).
    n_points : int
        Mesh size over [0, 1].
    endpoints : {"relplot", "reflect"}
        As in :func:`smooth_ece`.

    Returns
    -------
    dict
        ``mesh``, ``curve``, ``density``, ``sigma`` and ``smooth_ece``.

    Examples
    --------
    >>> out = smooth_reliability_curve([0.2, 0.4, 0.6, 0.8] * 50, [0, 0, 1, 1] * 50, n_points=11)
    >>> out["mesh"].shape, bool(out["curve"][0] < 0.5 < out["curve"][-1])
    ((11,), True)
    """
    f, y = _check(scores, outcomes)
    value, width = smooth_ece(f, y, return_sigma=True, endpoints=endpoints)
    if sigma is not None:
        if not sigma > 0:
            raise ConfigError(f"sigma must be positive, got {sigma!r}")
        width = float(sigma)
    t = np.linspace(0.0, 1.0, int(n_points))
    u, n, k = _aggregate(f, y)
    sums = kernel_sums(u, np.stack([k, n]), t, width, endpoints)
    with np.errstate(invalid="ignore", divide="ignore"):
        curve = np.where(sums[1] > 0, sums[0] / sums[1], np.nan)
    return {"mesh": t, "curve": curve, "density": sums[1] / f.size, "sigma": width, "smooth_ece": value}
