"""Exact posterior draws of Beta and Dirichlet distributions, with NumPy's compiled generators.

These used to be PyTensor functions compiled in each process (0.4 s to import PyTensor, then
about 0.7 s to compile on a warm compile cache). PyTensor's Beta and Dirichlet variables drew
with NumPy's algorithms (ported by its numba backend), so the NumPy calls here consume the same
stream and give the same draws for a seed, to within a few ulp. No on-disk cache of a compiled
function could start in under 50 ms, since loading one imports PyTensor first (the measurement
is in docs/sampling.md). Nothing here imports PyTensor.

Every call takes a seed or a :class:`numpy.random.Generator` (advanced past the draws made),
and batches over leading dimensions: one NumPy call draws every component of every draw.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.errors import ConfigError
from pbassess.seeds import as_generator  # re-exported: the seed handler lives below every layer

__all__ = ["as_generator", "beta_draws", "dirichlet_draws"]


def _beta(rng: np.random.Generator, a: np.ndarray, b: np.ndarray, n: int) -> np.ndarray:
    """``n`` draws of Beta(a, b) for every element: NumPy's generator, as PyTensor's Beta variable called it."""
    return np.asarray(rng.beta(a, b, size=(n, *a.shape)), dtype=float)


def _dirichlet(rng: np.random.Generator, alpha: np.ndarray, n: int) -> np.ndarray:
    """``n`` draws of Dirichlet(alpha[..., :]) for each leading index, as ``rng.dirichlet`` row by row.

    PyTensor's (numba-compiled) Dirichlet variable drew, for each (draw, row) in C order, one
    standard Gamma per component and divided by their left-to-right sum; one batched
    ``standard_gamma`` call over the (n, ..., J) array and the same sum consume the same stream
    and give the same numbers (to a few ulp) without a Python loop over draws.
    """
    shape = (n, *alpha.shape)
    if 0 in shape:
        return np.empty(shape)
    gammas = rng.standard_gamma(np.broadcast_to(alpha, shape))
    j = alpha.shape[-1]
    total = gammas[..., 0].copy()
    for col in range(1, j):  # left to right, as NumPy sums (np.sum would pair terms and round differently)
        total += gammas[..., col]
    with np.errstate(divide="ignore", invalid="ignore"):  # all-underflowed Gammas give NaN, as before
        gammas *= (1.0 / total)[..., None]
    return gammas


def _check_params(name: str, *arrays: np.ndarray) -> None:
    for arr in arrays:
        if not np.all(np.isfinite(arr)) or (arr <= 0).any():
            raise ConfigError(f"{name} parameters must be positive and finite")


def beta_draws(alpha: Any, beta: Any, n_draws: int, seed: Any = None) -> np.ndarray:
    """Independent draws from Beta(alpha_k, beta_k) for each k (any leading dimensions).

    Parameters
    ----------
    alpha, beta : array_like, shape (K,) or any shape, the same for both
        Positive Beta parameters (a scalar counts as shape (1,)).
    n_draws : int
        Number of draws.
    seed : int or Generator, optional
        Randomness source.

    Returns
    -------
    ndarray, shape (n_draws, K) (``(n_draws, *alpha.shape)``)

    Examples
    --------
    >>> d = beta_draws([2.0, 8.0], [8.0, 2.0], 20000, seed=0)
    >>> d.shape, bool(abs(d[:, 0].mean() - 0.2) < 0.01)
    ((20000, 2), True)
    >>> beta_draws(np.ones((3, 4)), np.ones((3, 4)), 5, seed=0).shape  # batched over (3, 4)
    (5, 3, 4)
    """
    a = np.atleast_1d(np.asarray(alpha, dtype=float))
    b = np.atleast_1d(np.asarray(beta, dtype=float))
    if a.shape != b.shape:
        raise ConfigError(f"alpha and beta must be arrays of one shape, got {a.shape} and {b.shape}")
    _check_params("Beta", a, b)
    rng = as_generator(seed)
    return _beta(rng, a, b, int(n_draws))


def dirichlet_draws(alpha: Any, n_draws: int, seed: Any = None) -> np.ndarray:
    """Independent draws from Dirichlet(alpha_k) for each row k of ``alpha`` (any leading dimensions).

    Parameters
    ----------
    alpha : array_like, shape (K, J) or (..., J)
        Positive concentration parameters, one Dirichlet per row (the last axis); a vector is
        one row, shape (1, J).
    n_draws : int
    seed : int or Generator, optional

    Returns
    -------
    ndarray, shape (n_draws, K, J) (``(n_draws, *alpha.shape)``)
        Each ``[d, k]`` sums to one.

    Examples
    --------
    >>> d = dirichlet_draws([[1.0, 1.0, 2.0]], 10000, seed=0)
    >>> d.shape, bool(abs(d[:, 0, 2].mean() - 0.5) < 0.01)
    ((10000, 1, 3), True)
    >>> dirichlet_draws(np.ones((2, 3, 4)), 5, seed=0).shape  # batched over (2, 3)
    (5, 2, 3, 4)
    """
    al = np.asarray(alpha, dtype=float)
    if al.ndim == 1:
        al = al[None, :]
    if al.ndim < 2:
        raise ConfigError(f"alpha must hold one Dirichlet per row (shape (K, J)), got shape {al.shape}")
    _check_params("Dirichlet", al)
    rng = as_generator(seed)
    return _dirichlet(rng, al, int(n_draws))
