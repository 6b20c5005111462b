"""PyMC models of accuracy surfaces over arm counts, and their specs for :func:`pbassess.inference.fit`.

An *arm* is one combination of attribute values; the models see only each arm's counts
(``n`` labeled items, ``correct`` of them right) and attribute values, as held by
:class:`pbassess.surface.ArmCounts` (any object with its attributes ``attributes``, ``values``,
``n``, ``correct``, ``pool_n``, ``confidence``, ``continuous``, ``n_arms`` and
``global_accuracy`` does). Every model has the dim ``arm``:

* :func:`cpredictor_model` (CPredictor) and :func:`beta_i_model` (Beta-I): one global Beta
  accuracy for every arm, or an independent Beta per arm warm-started at the global accuracy;
  both have exact conjugate posteriors (:class:`CPredictorSpec`, :class:`BetaISpec`).
* :func:`betagp_model` (BetaGP, BetaGP-SL, BetaGP-SLP of Piratla et al. 2021): arm accuracy
  ~ Beta(mu s, (1 - mu) s), mu = sigmoid(f), s = softplus(g), f and g latent GPs over the arm
  attributes (exact latent GP, or for many arms the projected process -- the prior of
  ``pymc_extras.gp.ProjectedProcess`` -- in whitened form f = K_xu L_uu^-T v, 64 inducing
  inputs); Beta-binomial likelihood of the arms' counts; the AAA code's warm start (every arm
  sees a pseudo-observation of weight 0.1 at the global accuracy); for -SL a scale-supervision
  term, for -SLP the sparse arms' counts pooled from their kernel neighbours
  (:func:`pool_sparse_counts`).
* :func:`berngp_model` (BernGP): the correctness bits of an arm ~ Bernoulli(sigmoid(f_arm)).
* :func:`additive_model` (ours): the same Beta-binomial with a sum-to-zero additive (main
  effects + pairwise) link, optionally with the model's confidence as a covariate of the mean.

The GP helpers (:func:`arm_inputs`, :func:`kernel_similarity`, :func:`inducing_inputs`,
:func:`whitened_projected_latent`) live here with the models they build.

Counts may be fractional (pooled or noisy-attribute counts): the likelihoods are written as
``pm.Potential`` terms ``betaln(a + y, b + n - y) - betaln(a, b)`` (the Beta-binomial without
its constant binomial coefficient) and ``y log p + (n - y) log(1 - p)``.

The additive model
------------------
Arm a has attribute values (a_1, ..., a_K), n_a labels and y_a correct ones::

    y_a ~ BetaBinomial(n_a, mu_a s_a, (1 - mu_a) s_a)
    logit mu_a = b + sum_k u_k(a_k) + sum_{k<j} v_kj(a_k, a_j)   [+ slope (logit c_a - mean logit c)]
    log s_a    = softcap(c + sum_k w_k(a_k)),   softcap(x) = C - softplus(C - x),  C = log 1e5

Every effect sums to zero over the levels of each of its attributes: u_k = Q_k beta_k and
v_kj = Q_k B_kj Q_j^T, Q_k an orthonormal basis of the sum-to-zero vectors over the L_k levels
(normalised Helmert contrasts), with beta_k ~ N(0, sigma^2 I), sigma = ``main_scale``, and
B_kj = tau_kj Z_kj, Z_kj standard normal, tau_kj ~ HalfNormal(``interaction_scale``) per pair
(non-centred; or one tau for all pairs, ``pair_scales="shared"``). So u_k ~ N(0, sigma^2 (I -
11'/L_k)) (a ``ZeroSumNormal``) and v_kj is zero along both its axes: the prior of a GP with the
additive (ANOVA) kernel sigma^2 sum_k H_k + sum_{k<j} tau_kj^2 H_k * H_j of centred
per-attribute kernels H_k = I - 11'/L_k, in weight space. Unlike a one-hot design without
constraints it has no directions (intercept up, every level's effect down) that only the prior
pins down: those ridges, and a learned scale per main effect (the ridge sd x z = beta of a
data-rich effect), made NUTS on the ACS data take hundreds of leapfrog steps per draw. A
continuous attribute's effect is a Gaussian-bump basis centred over its distinct values.
Log-scale effects w_k = Q_k omega_k tau'_k, omega standard normal, tau'_k ~
HalfNormal(``scale_main_scale``); b ~ N(logit(global accuracy), ``intercept_sd``), c ~
N(``log_scale_prior``); with the confidence covariate slope ~ N(1, 0.5) on the logit confidence
centred at its pool mean (``confidence_offset`` = b - slope x that mean).

Computation: all effects of an arm are one row of a dense design ``G`` (arms x coefficients),
the likelihood uses only the labeled arms' rows, and mu, s of every arm are deterministics
(evaluated once per kept draw, not in every gradient). The design rows are shared variables,
so nutpie's numba code takes them as arguments instead of compiling them in as constants.

The specs
---------
One :class:`~pbassess.inference.Spec` per estimator (:func:`surface_spec`), all reporting
``accuracy`` (dim ``arm``). Each labeled item is a Bernoulli draw of its arm's accuracy, so the
log-likelihood is one value per labeled item (dim ``item``). In the Beta-binomial models the
arm's accuracy is integrated out of the likelihood NUTS sees; its posterior draws are drawn
afterwards, one per posterior draw of (mu, s), from its conditional posterior
Beta(mu s + correct, (1 - mu) s + n - correct) -- a draw of the joint posterior, so PSIS-LOO over
the items is valid.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import xarray as xr

from pbassess.counting import cell_counts
from pbassess.errors import ConfigError
from pbassess.inference.spec import Observations, Spec
from pbassess.pymc_models.accuracy import (
    asinh_logit_beta_log_density,
    beta_variable,
    clipped_logit,
)
from pbassess.stats.sampling import as_generator

__all__ = [
    "BETA_I_LAMBDA", "CALIBRATION_SCALE", "DEFAULT_SCALE_TERM", "GP_ESTIMATORS", "SCALE_TERMS", "AdditiveDesign", "ArmSpec", "BetaISpec",
    "CPredictorSpec", "SurfaceModelSpec", "additive_design", "additive_model", "indicator_design", "anchor_logit", "anchored_arm_scale", "anchored_items", "anchored_model", "tied_items", "calibrated_anchor", "arm_inputs", "beta_i_model",
    "beta_i_prior", "berngp_model", "betagp_model", "count_terms", "cpredictor_model", "global_accuracy_terms",
    "ANCHORED_DRAWS", "ANCHORED_TUNE", "GRID_GP_MAX_ORDER", "GRID_GP_SAMPLE_KWARGS", "TRUNCATED_BETAGP_SAMPLE_KWARGS",
    "GridEigenbasis", "LOOSE_ANCHORED_OPTIONS", "RESIDUAL_PRIOR_OPTIONS", "gp_latent_form", "grid_eigenbasis", "grid_log_eigenvalues",
    "inducing_inputs", "kernel_similarity", "model_options_for", "observations_from_arm_counts",
    "pool_sparse_counts", "sum_to_zero_basis", "surface_spec", "whitened_projected_latent",
]

SCALE_TERMS = ("gamma", "dirichlet")
#: BetaGP-SL's default scale term: the released code's Gamma term (see :mod:`pbassess.surface`).
DEFAULT_SCALE_TERM = "gamma"
#: Beta-I's warm-start weight lambda (Piratla et al. 2021; ``SimpleExplorer.fit`` of github.com/vihari/AAA).
BETA_I_LAMBDA = 0.1
#: The estimators sampled by NUTS only (no conjugate posterior).
GP_ESTIMATORS = ("berngp", "betagp", "betagp-sl", "betagp-slp", "additive")
EXACT_GP_MAX_ARMS = 300
WARM_START_WEIGHT = 0.1
#: Smooth upper bound of the Beta scale: beyond ~1e5 the Beta-binomial is the binomial, and
#: betaln differences of huge arguments lose all float64 precision (NUTS then diverges).
LOG_SCALE_CAP = float(np.log(1e5))


def _logit(p: Any) -> np.ndarray:
    p = np.clip(np.asarray(p, float), 1e-3, 1 - 1e-3)
    return np.log(p) - np.log1p(-p)


#: The anchored models clip confidences to [ANCHOR_CLIP, 1 - ANCHOR_CLIP] before the logit: at 1e-3
#: many ACS arms (and a synthetic rule's items) sat above 0.999 and collapsed to one anchor.
ANCHOR_CLIP = 1e-6


def anchor_logit(confidence: Any) -> np.ndarray:
    """The logit of confidences as the anchored models see them (clipped to [1e-6, 1 - 1e-6]).

    Examples
    --------
    >>> anchor_logit([0.5, 0.9999, 1.0]).round(2).tolist()
    [0.0, 9.21, 13.82]
    """
    p = np.clip(np.asarray(confidence, float), ANCHOR_CLIP, 1 - ANCHOR_CLIP)
    return np.log(p) - np.log1p(-p)


def arm_inputs(arms: Any) -> tuple[np.ndarray, np.ndarray]:
    """GP inputs of the arms: one-hot columns per categorical attribute, a standardised column per
    continuous one; and the attribute index of every column (for per-attribute lengthscales).

    Examples
    --------
    >>> from pbassess.surface import ArmCounts
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


def kernel_similarity(arms: Any, lengthscale: float = 1.0) -> np.ndarray:
    """Squared-exponential similarity of the arms' inputs (used by BetaGP-SLP's pooling).

    Examples
    --------
    >>> from pbassess.surface import ArmCounts
    >>> a = ArmCounts.from_arrays([1, 1], [1, 0], values=[[0], [1]])
    >>> kernel_similarity(a).round(3).tolist()
    [[1.0, 0.368], [0.368, 1.0]]
    """
    X, _ = arm_inputs(arms)
    norms = (X**2).sum(1)
    # |x - y|^2 by one matrix product: the A x A x D differences took 7 s and 1.9 GB on the 2,554 ACS arms
    sq = np.maximum(norms[:, None] + norms[None, :] - 2.0 * (X @ X.T), 0.0)
    np.fill_diagonal(sq, 0.0)
    return np.exp(-0.5 * sq / lengthscale**2)


def _gp_latent(name: str, X: np.ndarray, owner: np.ndarray, *, form: str, basis: GridEigenbasis | None,
               n_inducing: int, rng, rows: np.ndarray | None = None) -> tuple[Any, Any]:
    """A zero-mean latent GP over the arms with an ARD squared-exponential kernel (one lengthscale
    per attribute, shared by its one-hot columns): its values at every arm, and at ``rows`` (the
    likelihood's arms; in a grid basis computed from those rows of the basis only, so a gradient
    does not pay for the unlabeled arms)."""
    import pymc as pm
    import pytensor.tensor as pt

    n_attr = int(owner.max()) + 1
    amplitude = pm.HalfNormal(f"{name}_amplitude", 1.0)
    lengthscale = pm.Gamma(f"{name}_lengthscale", alpha=2.0, beta=1.0, shape=n_attr)
    cov = amplitude**2 * pm.gp.cov.ExpQuad(X.shape[1], ls=lengthscale[owner])
    a = X.shape[0]
    rows = np.arange(a) if rows is None else np.asarray(rows, dtype=np.int64)
    if form in ("eigenbasis", "truncated"):  # the same prior without a Cholesky factor: f = Q diag(sqrt(lambda)) z
        sd = pt.exp(0.5 * (pt.as_tensor_variable(basis.pattern) @ grid_log_eigenvalues(lengthscale, basis.n_levels)))
        z = pm.Normal(f"{name}_z", 0.0, 1.0, shape=basis.vectors.shape[1])
        weights = amplitude * (sd * z)
        f = pt.as_tensor_variable(basis.vectors) @ weights
        return f, (f if rows.size == a else pt.as_tensor_variable(basis.vectors[rows]) @ weights)
    if form == "cholesky":
        chol = pt.linalg.cholesky(cov(X) + 1e-6 * pt.eye(a))
        z = pm.Normal(f"{name}_z", 0.0, 1.0, shape=a)
        f = chol @ z
        return f, f[rows]
    inducing = inducing_inputs(X, n_inducing, rng)
    v = pm.Normal(f"{name}_v", 0.0, 1.0, shape=inducing.shape[0])
    f = whitened_projected_latent(X, inducing, amplitude, lengthscale[owner], v)
    return f, f[rows]


#: The grid eigenbasis is used while its arms x grid matrix has at most this many entries (32 MB).
GRID_BASIS_MAX_ENTRIES = 2**22
#: ... and while the grid has at most this many cells per arm (z, and its posterior draws, has one value per cell).
GRID_BASIS_MAX_CELLS_PER_ARM = 4
#: NUTS defaults of a GP estimator in the grid eigenbasis, whose gradients are cheap. On the
#: miscalibrated surface (256 arms, 2,000 labels) BernGP at 4 x 250 draws after 500 tuning steps
#: and target_accept 0.8 had a max R-hat of 1.014-1.071 and up to 4 divergences per fit; at these
#: settings 1.003 and none, in 13-23 s.
GRID_GP_SAMPLE_KWARGS = {"draws": 1000, "tune": 1000, "target_accept": 0.95}
#: The anchored surface's default draws per chain. On ACS at 2,000 labels (5 seeds) 4 x 750 give a
#: minimum bulk ESS of 940-1,270 and a max R-hat of 1.004-1.009; 4 x 500 gave 1.011 on two fits of 15
#: (the R-hat of the largest of the 45 pair scales: R-hat's own noise at ~100 effective draws per
#: split chain), 4 x 1000 takes 5 s more.
ANCHORED_DRAWS = 750
#: ... after this many tuning steps (the surface defaults' 500 otherwise). At 300 (2026-11-29, 5 seeds each,
#: against 500): ACS at 500 / 2,000 / 10,000 labels max R-hat 1.006 / 1.008 / 1.006 and min bulk ESS 1,617 /
#: 1,193 / 1,068, divergences 1 / 0 / 1 in all (0 / 0 / 3 at 500), the same MSEs and 10-15% faster
#: (2,000 labels: 20.8-22.6 s against 24.5-31.9); the miscalibrated surface the same macro MSE (0.00057)
#: with R-hat <= 1.008 and no divergence in the returned fits (one at 500); `digits-shift` max R-hat 1.004-1.015
#: and no divergence (1.004-1.035 and 5 at 500).
ANCHORED_TUNE = 300
#: Where every attribute is categorical but the grid is too large for its full eigenbasis, the GP
#: keeps the basis's components of at most this many attributes (its main effects and pairs, with
#: their exact eigenvalues; the higher-order interactions are left out). On ACS (2,554 arms, 86,400
#: cells) that is 308 components, in place of the projected process's 64 inducing inputs.
GRID_GP_MAX_ORDER = 2
#: ... while that basis (arms x components) has at most this many entries (128 MB), else the projected process.
TRUNCATED_BASIS_MAX_ENTRIES = 2**24
#: NUTS defaults of the BetaGP models in the truncated basis. Their gradient also evaluates every
#: arm's warm-start Beta-binomial term (on ACS 1.5-2 ms against BernGP's 0.1 ms, which needs only
#: the labeled arms), so the grid defaults' 4 x 1,000 after 1,000 at 0.95 took 274 s on ACS (2,000
#: labels, seed 0; R-hat 1.008, min bulk ESS 521). At 4 x 500 after 500 at 0.9 BetaGP-SLP took
#: 128-139 s (3 seeds, R-hat up to 1.013, min bulk ESS 409), BetaGP-SL 129-167 s and BetaGP 93-96 s (min
#: bulk ESS 273); at these, fewer tuning steps and more draws, BetaGP-SLP takes 102-129 s (the first fit of
#: a process pays ~20 s of compiling; R-hat up to 1.011, min bulk ESS 532), BetaGP-SL 100-116 s (R-hat
#: 1.007, min bulk ESS 575) and BetaGP 75-86 s (R-hat up to 1.016, min bulk ESS 463), with the same MSEs
#: (docs/surfaces.md). Tuning for 300 steps with 500 draws cost ESS (375 and 383 on two BetaGP-SLP seeds).
TRUNCATED_BETAGP_SAMPLE_KWARGS = {"draws": 600, "tune": 300, "target_accept": 0.9}


@dataclass(frozen=True)
class GridEigenbasis:
    """The eigenvectors of the ARD squared-exponential kernel over categorical arms (see :func:`grid_eigenbasis`).

    ``vectors`` (arms x grid cells): the rows of the full grid's eigenvectors at the arms;
    ``pattern`` (grid cells x 2 K): which factor of attribute k each eigenvector takes (column
    2k: the attribute's constant vector, 2k + 1: one of its contrasts); ``n_levels``: L_k.

    Examples
    --------
    >>> X = np.array([[1.0, 0, 1, 0, 0], [0, 1, 0, 0, 1]])  # a binary and a three-level attribute
    >>> b = grid_eigenbasis(X, np.array([0, 0, 1, 1, 1]))
    >>> b.n_levels, b.pattern.shape, b.pattern[0].tolist()  # cell 0: both attributes' constant vectors
    ((2, 3), (6, 4), [1.0, 0.0, 1.0, 0.0])
    """

    vectors: np.ndarray
    pattern: np.ndarray
    n_levels: tuple[int, ...]


def grid_eigenbasis(X: np.ndarray, owner: np.ndarray, max_entries: int = GRID_BASIS_MAX_ENTRIES,
                    max_order: int | None = None) -> GridEigenbasis | None:
    """The eigenbasis of the GP kernel over categorical arms, or None where it does not apply.

    On one-hot inputs the ARD squared-exponential kernel (one lengthscale l_k per attribute) is a
    product over the attributes, k(a, a') = s^2 prod_k rho_k^[a_k != a'_k] with
    rho_k = exp(-1 / l_k^2), so on the full grid of level combinations it is the Kronecker product
    of the per-attribute matrices (1 - rho_k) I + rho_k 11'. Each has the constant vector
    (eigenvalue 1 + (L_k - 1) rho_k) and the contrasts orthogonal to it (eigenvalue 1 - rho_k) as
    eigenvectors, whatever the lengthscales. So the grid's eigenvectors are fixed (the Kronecker
    product of orthonormal per-attribute bases) and only the eigenvalues move with the
    lengthscales: f = Q diag(sqrt(lambda)) z, z ~ N(0, I) over the grid cells, restricted to
    the arms' rows of Q, is the exact GP prior with no Cholesky factor to differentiate (on the
    256-arm miscalibrated surface BernGP sampled in 2 s instead of 276 s).

    Parameters
    ----------
    X, owner : numpy.ndarray
        The arms' inputs and every column's attribute (:func:`arm_inputs`).
    max_entries : int
        None when the arms x grid matrix would have more entries (e.g. ACS: 2,554 arms on a grid
        of 86,400 cells), or the grid more than :data:`GRID_BASIS_MAX_CELLS_PER_ARM` cells per arm.
    max_order : int, optional
        Keep only the eigenvectors that are contrasts in at most this many attributes (constant
        in the others): the kernel's ANOVA components of order <= ``max_order``, whose
        eigenvalues are exact, with the higher-order interactions left out. ``max_order`` = the
        number of attributes is the full basis. Used where the full grid is too large
        (:data:`GRID_GP_MAX_ORDER`; ACS: 308 components instead of 86,400 cells).

    Returns
    -------
    GridEigenbasis or None
        None when an attribute is continuous or the grid is too large.

    Examples
    --------
    >>> X = np.array([[1.0, 0, 1, 0], [1, 0, 0, 1], [0, 1, 0, 1]])  # two binary attributes, 3 of 4 cells
    >>> b = grid_eigenbasis(X, np.array([0, 0, 1, 1]))
    >>> b.vectors.shape, b.n_levels
    ((3, 4), (2, 2))
    >>> np.allclose(b.vectors @ b.vectors.T, np.eye(3))  # orthonormal rows of an orthogonal matrix
    True
    """
    if max_order is not None:
        return _truncated_grid_basis(X, owner, int(max_order), max_entries)
    grid = _grid_cells(X, owner, max_entries)
    if grid is None:
        return None
    levels, cell = grid
    vectors, pattern = np.ones((1, 1)), np.zeros((1, 0))
    for n_lev, q in zip(levels, _level_bases(levels), strict=True):
        factor = np.zeros((n_lev, 2))
        factor[0, 0], factor[1:, 1] = 1.0, 1.0
        vectors = np.kron(vectors, q)
        pattern = np.hstack([np.kron(pattern, np.ones((n_lev, 1))), np.kron(np.ones((pattern.shape[0], 1)), factor)])
    return GridEigenbasis(vectors[cell], pattern, levels)


def _level_bases(levels: tuple[int, ...]) -> list[np.ndarray]:
    """Each attribute's orthonormal basis: the constant vector first, then its contrasts."""
    return [np.linalg.qr(np.column_stack([np.ones(n_lev), np.eye(n_lev)[:, 1:]]))[0] for n_lev in levels]


def _one_hot_levels(X: np.ndarray, owner: np.ndarray) -> list[np.ndarray] | None:
    """Every attribute's one-hot block, or None when a column is continuous (standardised) or not one-hot."""
    blocks = [X[:, owner == k] for k in range(int(owner.max()) + 1)]
    if any(not np.all(np.isin(b, (0.0, 1.0))) or not np.all(b.sum(1) == 1) for b in blocks):
        return None
    return blocks


def _low_order_subsets(n_attributes: int, max_order: int) -> Iterator[tuple[int, ...]]:
    """The sets of at most ``max_order`` attributes (the empty set first), by order: the truncated basis's blocks."""
    for order in range(min(max_order, n_attributes) + 1):
        yield from combinations(range(n_attributes), order)


def _truncated_size(levels: tuple[int, ...], max_order: int) -> int:
    """The number of eigenvectors that are contrasts in at most ``max_order`` of the attributes."""
    return sum(int(np.prod([levels[k] - 1 for k in subset], dtype=float))
               for subset in _low_order_subsets(len(levels), max_order))


def _truncated_grid_basis(X: np.ndarray, owner: np.ndarray, max_order: int, max_entries: int) -> GridEigenbasis | None:
    """:func:`grid_eigenbasis` restricted to the components of at most ``max_order`` attributes."""
    blocks = _one_hot_levels(X, owner)
    if blocks is None:
        return None
    levels = tuple(b.shape[1] for b in blocks)
    if _truncated_size(levels, max_order) * X.shape[0] > max_entries:
        return None
    level = [b.argmax(1) for b in blocks]
    rows = [q[lev] for q, lev in zip(_level_bases(levels), level, strict=True)]  # arm x (constant, contrasts)
    columns, patterns = [], []
    for subset in _low_order_subsets(len(levels), max_order):
        block = np.ones((X.shape[0], 1))
        pattern = np.zeros(2 * len(levels))
        for k in range(len(levels)):
            if k in subset:  # a contrast of attribute k (every one of them: an outer product)
                block = (block[:, :, None] * rows[k][:, None, 1:]).reshape(X.shape[0], -1)
                pattern[2 * k + 1] = 1.0
            else:  # attribute k's constant vector
                block = block * rows[k][:, :1]
                pattern[2 * k] = 1.0
        columns.append(block)
        patterns.append(np.repeat(pattern[None], block.shape[1], axis=0))
    return GridEigenbasis(np.hstack(columns), np.vstack(patterns), levels)


def _grid_cells(X: np.ndarray, owner: np.ndarray, max_entries: int) -> tuple[tuple[int, ...], np.ndarray] | None:
    """Every attribute's number of levels and every arm's grid cell, or None where the eigenbasis does not apply."""
    blocks = _one_hot_levels(X, owner)
    if blocks is None:
        return None  # a continuous (standardised) column, or not one-hot
    levels = tuple(b.shape[1] for b in blocks)
    n_cells = int(np.prod(levels, dtype=float))
    if n_cells * X.shape[0] > max_entries or n_cells > GRID_BASIS_MAX_CELLS_PER_ARM * X.shape[0]:
        return None  # the matrix, or the draws of z (one value per cell), would outgrow the Cholesky form's
    return levels, np.ravel_multi_index(tuple(b.argmax(1) for b in blocks), levels)


def grid_log_eigenvalues(lengthscale: Any, n_levels: tuple[int, ...]) -> Any:
    """log(1 + (L_k - 1) rho_k) and log(1 - rho_k), rho_k = exp(-1 / l_k^2), interleaved per attribute
    (the columns of :attr:`GridEigenbasis.pattern`); a PyTensor expression of the lengthscales.

    Examples
    --------
    >>> grid_log_eigenvalues(np.array([1.0]), (3,)).eval().round(3).tolist()  # rho = exp(-1)
    [0.551, -0.459]
    """
    import pytensor.tensor as pt

    rho = pt.exp(-1.0 / pt.as_tensor_variable(lengthscale) ** 2)
    lev = pt.as_tensor_variable(np.asarray(n_levels, float))
    return pt.stack([pt.log1p((lev - 1.0) * rho), pt.log1p(-rho)], axis=1).reshape((-1,))


def inducing_inputs(X: np.ndarray, n_inducing: int, rng: Any) -> np.ndarray:
    """``n_inducing`` distinct arm inputs drawn at random (all distinct inputs when fewer).

    Parameters
    ----------
    X : numpy.ndarray, shape (A, D)
        The arms' inputs (repeated rows count once).
    n_inducing : int
    rng : int or numpy.random.Generator

    Returns
    -------
    numpy.ndarray, shape (min(n_inducing, distinct rows), D)
        Distinct rows of ``X``, in the order of ``numpy.unique``.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [1.0], [2.0]])
    >>> inducing_inputs(X, 2, 0).shape, inducing_inputs(X, 10, 0).ravel().tolist()
    ((2, 1), [0.0, 1.0, 2.0])
    """
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


def gp_latent_form(arms: Any, gp: str | None = None) -> str:
    """How the GP estimators write their latent GP over ``arms``: ``"eigenbasis"`` (exact, the grid's
    fixed eigenvectors: :func:`grid_eigenbasis`), ``"truncated"`` (the eigenbasis's components of
    at most :data:`GRID_GP_MAX_ORDER` attributes: categorical attributes on a grid too large for
    the full basis), ``"cholesky"`` (exact, a Cholesky factor of the arms' kernel: continuous
    attributes, up to 300 arms) or ``"projected"`` (64 inducing inputs).

    ``gp`` ("exact", "truncated" or "projected") forces the method; by default the GP is exact
    when the eigenbasis applies or there are at most 300 arms, else truncated when every
    attribute is categorical, else projected.

    Examples
    --------
    >>> from pbassess.surface import ArmCounts
    >>> arms = ArmCounts.from_arrays([3, 1], [2, 1], values=[[0, 0], [1, 1]], attributes=("sex", "dis"))
    >>> gp_latent_form(arms), gp_latent_form(arms, "projected")
    ('eigenbasis', 'projected')
    """
    if gp not in (None, "exact", "truncated", "projected"):
        raise ConfigError(f"unknown GP method {gp!r} (choose exact, truncated or projected)")
    if gp == "projected":
        return "projected"
    X, owner = arm_inputs(arms)
    if gp != "truncated" and _grid_cells(X, owner, GRID_BASIS_MAX_ENTRIES) is not None:
        return "eigenbasis"
    if gp == "exact" or (gp is None and arms.n_arms <= EXACT_GP_MAX_ARMS):
        return "cholesky"
    blocks = _one_hot_levels(X, owner)
    if blocks is not None and _truncated_size(tuple(b.shape[1] for b in blocks), GRID_GP_MAX_ORDER) * arms.n_arms \
            <= TRUNCATED_BASIS_MAX_ENTRIES:
        return "truncated"
    if gp == "truncated":
        raise ConfigError("the truncated GP needs categorical attributes (a continuous one has no grid) and a basis "
                          f"of at most {TRUNCATED_BASIS_MAX_ENTRIES:,} entries (arms x components)")
    return "projected"


def _latent_form_and_basis(arms: Any, gp: str | None, X: np.ndarray, owner: np.ndarray):
    """:func:`gp_latent_form`, and the grid eigenbasis (built once per model) when that is the form."""
    form = gp_latent_form(arms, gp)
    if form == "eigenbasis":
        return form, grid_eigenbasis(X, owner, GRID_BASIS_MAX_ENTRIES)
    if form == "truncated":
        return form, grid_eigenbasis(X, owner, TRUNCATED_BASIS_MAX_ENTRIES, max_order=GRID_GP_MAX_ORDER)
    return form, None


def _beta_binomial_potential(name: str, alpha, beta, y: np.ndarray, n: np.ndarray, log_beta=None) -> None:
    """The Beta-binomial log-likelihood of ``y`` of ``n`` (without the binomial coefficient) as a potential.

    ``log_beta``: log B(alpha, beta) when the caller has it already (BetaGP's likelihood and
    warm start share it).
    """
    import pymc as pm
    from pytensor.tensor.special import betaln

    norm = betaln(alpha, beta) if log_beta is None else log_beta
    pm.Potential(name, (betaln(alpha + y, beta + n - y) - norm).sum())


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


def _confidence_covariate(arms: Any) -> np.ndarray:
    conf = np.where(np.isfinite(arms.confidence), arms.confidence, np.nanmean(arms.confidence))
    if not np.all(np.isfinite(conf)):
        raise ConfigError("the confidence covariate needs the model's confidence on the arms' pool items")
    return _logit(conf)


def global_accuracy_terms(arms: Any, as_data: bool) -> tuple[Any, Any]:
    """The labeled items' accuracy and its (clipped) logit, the models' prior centre.

    With ``as_data`` the accuracy is the data container ``global_accuracy`` of the current
    model (it changes with the counts when a compiled model is refitted).

    Examples
    --------
    >>> from pbassess.surface import ArmCounts
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


def _mean_intercept(arms: Any, covariate: str | None, intercept_sd: float, loc: Any = None) -> Any:
    """logit-mean intercept centred at ``loc`` (default: logit of the global accuracy), or, with
    ``covariate="confidence"``, the anchored mean function logit(anchor) of :func:`calibrated_anchor`."""
    import pymc as pm

    if covariate is None:
        loc = float(_logit(arms.global_accuracy)) if loc is None else loc
        return pm.Normal("intercept", loc, intercept_sd) if intercept_sd > 0 else loc
    if covariate != "confidence":
        raise ConfigError(f"unknown covariate {covariate!r} (only 'confidence' is supported)")
    _, logit_anchor = calibrated_anchor(arms)
    return logit_anchor


def _anchor_inputs(arms: Any) -> tuple[np.ndarray, float]:
    """The arms' logit confidence points (A, B) and their pool-weighted mean (the calibration map's centre)."""
    points = arms.anchor_points() if hasattr(arms, "anchor_points") else _confidence_points_of(arms)
    z = anchor_logit(points)
    centre = float(np.average(z.mean(axis=1), weights=np.maximum(np.asarray(arms.pool_n, float), 1e-12)))
    return z, centre


def _confidence_points_of(arms: Any) -> np.ndarray:
    points = getattr(arms, "confidence_points", None)
    if points is not None:
        return np.asarray(points, float)
    return _confidence_covariate_raw(arms)[:, None]


def _confidence_covariate_raw(arms: Any) -> np.ndarray:
    conf = np.where(np.isfinite(arms.confidence), arms.confidence, np.nanmean(arms.confidence))
    if not np.all(np.isfinite(conf)):
        raise ConfigError("the confidence anchor needs the model's confidence on the arms' pool items")
    return conf


#: The calibration map's prior: Student-t_3 deviations from the identity map, of scale 0.2 for the
#: calibrated logit at the mean confidence and 0.05 for the slope. A wide N(zbar, 1), N(1, 0.5) prior
#: let 500 ACS labels move the map by sampling noise alone (MLE slope 0.92 on seed 1: macro MSE 47%
#: above the confidence's); 0.05 for both held the level too tightly on the miscalibrated surface,
#: whose rules shift the mean (macro MSE 0.00059 against 0.00041 at 0.2).
CALIBRATION_SCALE = (0.2, 0.05)


def calibrated_anchor(arms: Any, *, scale: tuple[float, float] = CALIBRATION_SCALE) -> tuple[Any, Any]:
    """The calibrated label-free accuracy of every arm (``anchor``, deterministic) and its logit.

    A calibration map with two parameters, logit P(right | c) = l + b (logit c - zbar), is
    learned from the labels: ``calibration_deviation`` (l - zbar, b - 1) ~ Student-t_3(0, ``scale``)
    independently, so the map sits at the identity (a calibrated model: l = zbar, the pool's
    mean logit confidence, and b = 1) unless the labels show otherwise -- most prior mass near it,
    heavy tails for a real miscalibration. ``calibration_loc`` (l, the calibrated logit at zbar)
    and ``calibration_slope`` (b) are deterministics; an arm's anchor is the map averaged over its
    items' confidences (over its confidence points, :meth:`ArmCounts.anchor_points`). Also adds
    ``confidence_offset`` = l - b zbar (the map's intercept). Must be called inside a model
    context with an ``arm`` coordinate.

    Examples
    --------
    >>> import pymc as pm
    >>> from pbassess.surface import ArmCounts
    >>> arms = ArmCounts.from_arrays([3, 2], [2, 2], confidence_points=[[0.6, 0.8], [0.9, 0.9]])
    >>> with pm.Model(coords={"arm": [0, 1]}) as m:
    ...     anchor, _ = calibrated_anchor(arms)
    >>> import pytensor
    >>> at = pytensor.function([m["calibration_deviation"]], m["anchor"])
    >>> np.round(at(np.zeros(2)), 3).tolist()  # the identity map: the arms' mean confidence
    [0.7, 0.9]
    """
    import pymc as pm
    import pytensor.tensor as pt

    z, centre = _anchor_inputs(arms)
    sd = np.asarray(scale, float)
    if sd.shape != (2,) or not np.all(sd > 0):
        raise ConfigError(f"the calibration scale must be two positive numbers, got {scale!r}")
    deviation = pm.StudentT("calibration_deviation", nu=3, mu=0.0, sigma=sd, shape=2)
    loc = pm.Deterministic("calibration_loc", centre + deviation[0])
    slope = pm.Deterministic("calibration_slope", 1.0 + deviation[1])
    pm.Deterministic("confidence_offset", loc - slope * centre)
    base = loc + slope * pt.as_tensor(z - centre)
    p = pt.clip(pm.math.sigmoid(base).mean(axis=1), 1e-9, 1 - 1e-9)
    anchor = pm.Deterministic("anchor", p, dims="arm")
    return anchor, pt.log(anchor) - pt.log1p(-anchor)


def betagp_model(arms: Any, *, variant: str = "betagp", scale_term: str = "gamma",
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
    >>> from pbassess.surface import ArmCounts
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
    from pytensor.tensor.special import betaln

    if variant not in ("betagp", "betagp-sl", "betagp-slp"):
        raise ConfigError(f"unknown BetaGP variant {variant!r}")
    if variant != "betagp" and scale_term not in SCALE_TERMS:
        raise ConfigError(f"unknown scale term {scale_term!r} (choose {' or '.join(SCALE_TERMS)})")
    n, c = arms.n, arms.correct
    if variant == "betagp-slp":
        n, c = pool_sparse_counts(arms, kernel_similarity(arms), max_labels=pool_max_labels, k=pool_k)
    X, owner = arm_inputs(arms)
    form, basis = _latent_form_and_basis(arms, gp, X, owner)
    rng = as_generator(seed)
    obs = np.arange(arms.n_arms) if counts_as_data else np.flatnonzero(n > 0)
    with pm.Model(coords={"arm": np.arange(arms.n_arms)}) as model:
        f = _gp_latent("f", X, owner, form=form, basis=basis, n_inducing=n_inducing, rng=rng)[0]
        g = _gp_latent("g", X, owner, form=form, basis=basis, n_inducing=n_inducing, rng=rng)[0]
        p0, loc = global_accuracy_terms(arms, counts_as_data)
        mean_f = _mean_intercept(arms, covariate, 1.5, loc)
        mean_g = pm.Normal("g_intercept", 3.0, 1.5)
        mu = pm.Deterministic("mu", pt.clip(pm.math.sigmoid(mean_f + f), 1e-6, 1 - 1e-6), dims="arm")
        raw = pt.softplus(mean_g + g) + 1e-3
        scale = pm.Deterministic("scale", raw * np.exp(LOG_SCALE_CAP) / (raw + np.exp(LOG_SCALE_CAP)), dims="arm")
        alpha, beta = mu * scale, (1.0 - mu) * scale
        y, n_lik = count_terms(c, n, obs, counts_as_data)
        log_beta = betaln(alpha, beta) if warm_start else None
        _beta_binomial_potential("likelihood", alpha[obs], beta[obs], y, n_lik,
                                 None if log_beta is None else log_beta[obs])
        if warm_start:
            _beta_binomial_potential("warm_start", alpha, beta, WARM_START_WEIGHT * p0,
                                     np.full(arms.n_arms, WARM_START_WEIGHT), log_beta)
        if variant != "betagp" and counts_as_data:
            own = pm.Data("own_labels", np.asarray(arms.n, float))
            _scale_potential(scale, own, scale_term, mask=pt.gt(n_lik, 0))
        elif variant != "betagp" and obs.size:  # the arm's own label count, not the pooled one (AAA code)
            _scale_potential(scale[obs], arms.n[obs], scale_term)
    return model, n, c


def berngp_model(arms: Any, *, covariate: str | None = None, gp: str | None = None,
                 n_inducing: int = 64, seed: Any = None, counts_as_data: bool = False,
                 intercept_loc: float | None = None):
    """BernGP: correctness bits of arm a ~ Bernoulli(sigmoid(f_a)), f a latent GP (deterministic ``p``).

    ``counts_as_data``: every arm's counts in the containers ``labels`` / ``correct`` (see
    :func:`count_terms`). ``intercept_loc``: the intercept's prior centre (default the logit of
    the labels' global accuracy).

    Examples
    --------
    >>> from pbassess.surface import ArmCounts
    >>> arms = ArmCounts.from_arrays([10, 5, 0, 8], [9, 3, 0, 4], values=[[0, 0], [0, 1], [1, 0], [1, 1]],
    ...                              attributes=("sex", "dis"))
    >>> model = berngp_model(arms, seed=0)  # the model only: fit_surface samples it
    >>> [v.name for v in model.deterministics], model["p"].type.shape
    (['p'], (4,))
    """
    import pymc as pm
    import pytensor.tensor as pt

    X, owner = arm_inputs(arms)
    form, basis = _latent_form_and_basis(arms, gp, X, owner)
    obs = np.arange(arms.n_arms) if counts_as_data else np.flatnonzero(arms.n > 0)
    with pm.Model(coords={"arm": np.arange(arms.n_arms)}) as model:
        f, f_obs = _gp_latent("f", X, owner, form=form, basis=basis, n_inducing=n_inducing, rng=as_generator(seed),
                              rows=obs)
        loc = global_accuracy_terms(arms, counts_as_data)[1] if intercept_loc is None else float(intercept_loc)
        mean = _mean_intercept(arms, covariate, 1.5, loc)
        pm.Deterministic("p", pm.math.sigmoid(mean + f), dims="arm")
        eta_obs = (mean[obs] if covariate is not None else mean) + f_obs
        y, n = count_terms(arms.correct, arms.n, obs, counts_as_data)
        pm.Potential("likelihood", -(y * pt.softplus(-eta_obs) + (n - y) * pt.softplus(eta_obs)).sum())
    return model


def pool_sparse_counts(arms: Any, similarity: np.ndarray, *, max_labels: float = 5.0,
                       k: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """BetaGP-SLP pooling: counts of sparsely labeled arms replaced by a neighbourhood average.

    For every observed arm with ``0 < n <= max_labels``, its labeled and correct counts become
    the mean of those of its ``k`` most similar observed arms (by ``similarity``, an A x A
    kernel matrix; the arm itself is the most similar), as in ``simplev3_rloss`` of the AAA
    code (lambda = 1/k, the arm's own counts replaced). Other arms keep their counts.

    Parameters
    ----------
    arms : ArmCounts
    similarity : ndarray, shape (A, A)
        Kernel similarity between arms.
    max_labels : float
        Arms with at most this many labels (and at least one) are pooled.
    k : int
        Neighbours averaged (the arm itself included).

    Returns
    -------
    n, correct : ndarray, shape (A,)
        The pooled labeled and correct counts.

    Examples
    --------
    >>> from pbassess.surface import ArmCounts
    >>> arms = ArmCounts.from_arrays([1, 30, 30, 0], [0, 30, 15, 0])
    >>> sim = np.array([[1, .9, .5, .1], [.9, 1, .2, .1], [.5, .2, 1, .1], [.1, .1, .1, 1.]])
    >>> n, c = pool_sparse_counts(arms, sim)
    >>> n.round(2).tolist(), c.round(2).tolist()
    ([20.33, 30.0, 30.0, 0.0], [15.0, 30.0, 15.0, 0.0])
    """
    if k < 1:
        raise ConfigError(f"the pooling neighbourhood size must be at least 1, got {k}")
    n, c = arms.n.copy(), arms.correct.copy()
    observed = np.flatnonzero(arms.n > 0)
    sparse = observed[arms.n[observed] <= max_labels]
    if sparse.size == 0 or observed.size == 0:
        return n, c
    sim = np.asarray(similarity, float)[np.ix_(sparse, observed)]
    kk = min(k, observed.size)
    top = observed[np.argsort(-sim, axis=1, kind="stable")[:, :kk]]
    n[sparse] = arms.n[top].mean(axis=1)
    c[sparse] = arms.correct[top].mean(axis=1)
    return n, c


# ---------------------------------------------------------------------------- the additive model

def sum_to_zero_basis(n_levels: int) -> np.ndarray:
    """Orthonormal basis (L x (L - 1)) of the vectors over L levels that sum to zero (Helmert).

    Examples
    --------
    >>> Q = sum_to_zero_basis(3)
    >>> Q.sum(axis=0).round(12).tolist(), (Q.T @ Q).round(12).tolist()
    ([0.0, 0.0], [[1.0, 0.0], [0.0, 1.0]])
    """
    q = np.zeros((n_levels, max(n_levels - 1, 0)))
    for j in range(1, n_levels):
        q[:j, j - 1] = 1.0 / np.sqrt(j * (j + 1))
        q[j, j - 1] = -j / np.sqrt(j * (j + 1))
    return q


@dataclass(frozen=True)
class AdditiveDesign:
    """Contrast-coded design of the additive model.

    Attributes
    ----------
    matrix : ndarray, shape (A, P)
        One row per arm; the columns of the main-effect blocks come first, then the pairs'.
    block : ndarray of int, shape (P,)
        Block index of every column.
    names : tuple of str
        Block names: the attribute (main effect) or ``"k:j"`` (pair).
    n_main : int
        Number of main-effect blocks (blocks ``0 .. n_main - 1``).

    Examples
    --------
    >>> from pbassess.surface import ArmCounts
    >>> a = ArmCounts.from_arrays([1, 1, 1, 1], [1, 0, 1, 1], values=[[0, 0], [0, 1], [1, 0], [1, 2]],
    ...                           attributes=("sex", "cit"))
    >>> d = additive_design(a)
    >>> isinstance(d, AdditiveDesign), d.n_main, d.names
    (True, 2, ('sex', 'cit', 'sex:cit'))
    """

    matrix: np.ndarray
    block: np.ndarray
    names: tuple[str, ...]
    n_main: int

    @property
    def main_columns(self) -> np.ndarray:
        """Indices of the main-effect columns."""
        return np.flatnonzero(self.block < self.n_main)

    @property
    def pair_columns(self) -> np.ndarray:
        """Indices of the pairwise-interaction columns."""
        return np.flatnonzero(self.block >= self.n_main)


def _attribute_basis(values: np.ndarray, continuous: bool, n_basis: int, indicator: bool = False) -> np.ndarray:
    """Rows (one per arm) of an attribute's sum-to-zero effect basis (``indicator``: a column per level)."""
    if continuous:
        x = np.asarray(values, float)
        uniq, inverse = np.unique(x, return_inverse=True)
        centers = np.unique(np.quantile(uniq, np.linspace(0, 1, n_basis)))
        width = max((centers[-1] - centers[0]) / max(len(centers) - 1, 1), 1e-9)
        bumps = np.exp(-0.5 * ((uniq[:, None] - centers[None, :]) / width) ** 2)
        table = bumps - bumps.mean(axis=0)
    else:
        uniq, inverse = np.unique(np.asarray(values).astype(str), return_inverse=True)
        table = np.eye(len(uniq)) if indicator else sum_to_zero_basis(len(uniq))
    return table[inverse.ravel()]


def additive_design(arms: Any, *, interactions: bool = True, n_basis: int = 6) -> AdditiveDesign:
    """Sum-to-zero design of main effects and (optionally) pairwise interactions of the arms.

    A categorical attribute with L levels gives L - 1 columns (Helmert contrasts), a continuous
    one ``n_basis`` centred Gaussian bumps; a pair gives the row-wise products of its two
    attributes' columns.

    Examples
    --------
    >>> from pbassess.surface import ArmCounts
    >>> a = ArmCounts.from_arrays([1, 1, 1, 1], [1, 0, 1, 1], values=[[0, 0], [0, 1], [1, 0], [1, 2]],
    ...                           attributes=("sex", "cit"))
    >>> d = additive_design(a)
    >>> d.matrix.shape, d.names, d.block.tolist()
    ((4, 5), ('sex', 'cit', 'sex:cit'), [0, 1, 1, 2, 2])
    """
    mains = [_attribute_basis(arms.values[:, k], name in arms.continuous, n_basis)
             for k, name in enumerate(arms.attributes)]
    return _design_of(arms, mains, interactions=interactions)


def _design_of(arms: Any, mains: list[np.ndarray], *, interactions: bool, drop_empty: bool = False) -> AdditiveDesign:
    """The main-effect blocks ``mains`` (one per attribute) and the row-wise products of every two of them."""
    cols, block, names = [], [], []
    for k, x in enumerate(mains):
        cols.append(x)
        block += [len(names)] * x.shape[1]
        names.append(arms.attributes[k])
    n_main = len(names)
    for k in range(len(mains) if interactions else 0):
        for j in range(k + 1, len(mains)):
            x = (mains[k][:, :, None] * mains[j][:, None, :]).reshape(arms.n_arms, -1)
            if drop_empty:
                x = x[:, np.abs(x).sum(axis=0) > 0]
            cols.append(x)
            block += [len(names)] * x.shape[1]
            names.append(f"{arms.attributes[k]}:{arms.attributes[j]}")
    matrix = np.column_stack(cols) if cols else np.zeros((arms.n_arms, 0))
    return AdditiveDesign(matrix, np.asarray(block, dtype=np.int64), tuple(names), n_main)


def indicator_design(arms: Any, *, interactions: bool = True, n_basis: int = 6) -> AdditiveDesign:
    """Cell-indicator design: a column per level of every attribute and per cell of every pair.

    Over-complete (each block's columns sum to one), so an attribute combination that is off --
    one level, or one cell of a pair -- is a single coefficient instead of a quarter in the
    intercept, each main effect and the pair, as it is in the contrasts of :func:`additive_design`.
    A continuous attribute keeps its centred Gaussian bumps.

    Examples
    --------
    >>> from pbassess.surface import ArmCounts
    >>> a = ArmCounts.from_arrays([1, 1, 1, 1], [1, 0, 1, 1], values=[[0, 0], [0, 1], [1, 0], [1, 2]],
    ...                           attributes=("sex", "cit"))
    >>> d = indicator_design(a)
    >>> d.matrix.shape, d.names, d.block.tolist()
    ((4, 9), ('sex', 'cit', 'sex:cit'), [0, 0, 1, 1, 1, 2, 2, 2, 2])
    >>> d.matrix[3].tolist()  # sex = 1, cit = 2: one level of each and one cell of the pair (no arm has the other two)
    [0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    """
    mains = [_attribute_basis(arms.values[:, k], name in arms.continuous, n_basis, indicator=True)
             for k, name in enumerate(arms.attributes)]
    return _design_of(arms, mains, interactions=interactions, drop_empty=True)  # cells no arm has carry nothing


def _block_scales(name: str, design: AdditiveDesign, cols: np.ndarray, scale: float):
    """Half-normal scale per block of the columns ``cols`` (returned repeated per column)."""
    import pymc as pm

    blocks = np.unique(design.block[cols])
    sd = pm.HalfNormal(f"{name}_sd", scale, shape=blocks.size)
    return sd[np.searchsorted(blocks, design.block[cols])]


def _mean_effects(design: AdditiveDesign, main_scale: float, interaction_scale: float, pair_scales: str = "per-pair"):
    """Coefficients of the logit mean's design columns (and the columns they multiply).

    Main effects: centred, beta ~ N(0, main_scale^2) (data-rich: a learned scale per attribute
    made NUTS trace the ridge sd x z = beta). Pairs: non-centred, beta = tau_kj z with one
    tau_kj ~ HalfNormal(interaction_scale) per pair (mostly prior-dominated: no funnel), or with
    ``pair_scales="shared"`` one tau ~ HalfNormal(interaction_scale) for all pairs.
    """
    import pymc as pm
    import pytensor.tensor as pt

    parts, columns = [], []
    main, pair = design.main_columns, design.pair_columns
    if main_scale > 0 and main.size:
        parts.append(pm.Normal("mean_main", 0.0, main_scale, shape=main.size))
        columns.append(main)
    if interaction_scale > 0 and pair.size:
        if pair_scales not in ("per-pair", "shared"):
            raise ConfigError(f"unknown pair_scales {pair_scales!r} (choose per-pair or shared)")
        tau = (_block_scales("mean_pair", design, pair, interaction_scale) if pair_scales == "per-pair"
               else pm.HalfNormal("mean_pair_sd", interaction_scale))
        parts.append(tau * pm.Normal("mean_pair_z", 0.0, 1.0, shape=pair.size))
        columns.append(pair)
    if not parts:
        return None, np.zeros(0, dtype=np.int64)
    return pt.concatenate(parts), np.concatenate(columns)


def additive_model(arms: Any, *, covariate: str | None = None, main_scale: float = 1.0,
                   interaction_scale: float = 0.5, scale_main_scale: float = 0.5, interactions: bool = True,
                   intercept_sd: float = 1.5, log_scale_prior: tuple[float, float] = (np.log(30.0), 1.5),
                   n_basis: int = 6, counts_as_data: bool = False, pair_scales: str = "per-pair",
                   intercept_loc: float | None = None):
    """Our Beta-binomial surface with a sum-to-zero additive (main effects + pairwise) link.

    The model is written out in the module docstring. A scale of 0 drops its term: with all
    of ``main_scale``, ``interaction_scale`` and ``scale_main_scale`` at 0 this is the
    exchangeable Beta-binomial, and with ``intercept_sd = 0`` and a fixed log-scale
    (``log_scale_prior=(loc, 0)``) it is Beta(mu0 s, (1 - mu0) s) per arm independently.
    Returns ``(model, n, correct)``; the model has deterministics ``mu``
    and ``scale`` per arm. ``pair_scales="shared"`` gives all pairs one scale tau ~
    HalfNormal(``interaction_scale``) instead of one each: lower MSE on ACS and on the synthetic
    surface, but it mixed badly at 10,000 ACS labels (docs/surfaces.md), so per-pair is the default.
    ``counts_as_data=True`` puts every arm's counts in data containers
    ``labels`` and ``correct`` (an arm without labels adds exactly 0 to the likelihood), so a
    compiled model is refitted on new counts without recompiling
    (:class:`pbassess.surface.refit.SurfaceRefitter`); the posterior is the same.
    ``intercept_loc`` fixes the intercept's prior centre (default: the logit of the labels'
    global accuracy, a prior centred on the data as in the AAA code; a fixed centre makes the
    prior proper for simulation-based calibration).

    Examples
    --------
    >>> from pbassess.surface import ArmCounts
    >>> a = ArmCounts.from_arrays([3, 0, 8, 1], [2, 0, 7, 1], values=[[0, 0], [0, 1], [1, 0], [1, 1]],
    ...                           attributes=("sex", "dis"))
    >>> model, n, c = additive_model(a)
    >>> sorted(v.name for v in model.free_RVs)
    ['intercept', 'log_scale', 'mean_main', 'mean_pair_sd', 'mean_pair_z', 'scale_sd', 'scale_z']
    >>> model["mu"].type.shape, model["scale"].type.shape
    ((4,), (4,))
    """
    import pymc as pm
    import pytensor
    import pytensor.tensor as pt

    if covariate not in (None, "confidence"):
        raise ConfigError(f"unknown covariate {covariate!r} (only 'confidence' is supported)")
    design = additive_design(arms, interactions=interactions and interaction_scale > 0, n_basis=n_basis)
    obs = np.arange(arms.n_arms) if counts_as_data else np.flatnonzero(arms.n > 0)
    G = design.matrix
    with pm.Model(coords={"arm": np.arange(arms.n_arms)}) as model:
        loc = global_accuracy_terms(arms, counts_as_data)[1] if intercept_loc is None else float(intercept_loc)
        intercept = pm.Normal("intercept", loc, intercept_sd) if intercept_sd > 0 else pt.as_tensor(loc)
        offset = pt.zeros(arms.n_arms)
        if covariate == "confidence":
            x = _confidence_covariate(arms)
            centre = float(np.average(x, weights=np.maximum(arms.pool_n, 1e-12)))
            slope = pm.Normal("confidence_slope", 1.0, 0.5)
            pm.Deterministic("confidence_offset", intercept - slope * centre)
            offset = slope * pt.as_tensor(x - centre)
        coef, cols = _mean_effects(design, main_scale, interaction_scale, pair_scales)
        s_loc, s_sd = log_scale_prior
        log_scale = pm.Normal("log_scale", s_loc, s_sd) if s_sd > 0 else pt.as_tensor(float(s_loc))
        main = design.main_columns
        scale_coef = None
        if scale_main_scale > 0 and main.size:
            sd = _block_scales("scale", design, main, scale_main_scale)
            scale_coef = sd * pm.Normal("scale_z", 0.0, 1.0, shape=main.size)

        def link(rows, label):
            # Shared (not constant) design rows: numba (nutpie) then takes them as arguments
            # instead of compiling megabytes of constants into the sampler.
            e, ls = intercept + offset[rows], log_scale + pt.zeros(rows.size)
            if coef is not None:
                e = e + pytensor.shared(np.ascontiguousarray(G[rows][:, cols]), name=f"additive_mean_{label}") @ coef
            if scale_coef is not None:
                ls = ls + pytensor.shared(np.ascontiguousarray(G[rows][:, main]), name=f"additive_scale_{label}") @ scale_coef
            mu = pt.clip(pm.math.sigmoid(e), 1e-6, 1 - 1e-6)
            return mu, pt.exp(LOG_SCALE_CAP - pt.softplus(LOG_SCALE_CAP - ls))

        mu_all, s_all = link(np.arange(arms.n_arms), "all")
        mu_obs, s_obs = (mu_all, s_all) if counts_as_data else link(obs, "labeled")
        y, n = count_terms(arms.correct, arms.n, obs, counts_as_data)
        _beta_binomial_potential("likelihood", mu_obs * s_obs, (1 - mu_obs) * s_obs, y, n)
        pm.Deterministic("mu", mu_all, dims="arm")
        pm.Deterministic("scale", s_all, dims="arm")
    return model, arms.n, arms.correct


#: The anchored residual's prior scales (half-Student-t_3): per attribute, per pair, and an arm's own effect.
#: At 0.1 / 0.05 / 0.1 the residual picked up noise on ACS (500 labels, seed 0: macro MSE 0.00195 against
#: the confidence's 0.00167; 0.00160 at these); the miscalibrated surface's rules still escape (0.00062 against
#: the unanchored additive model's 0.00095, seed 0).
ANCHORED_MAIN_SCALE, ANCHORED_PAIR_SCALE, ANCHORED_ARM_SCALE = 0.05, 0.025, 0.05
#: The anchored surface's wider residual prior: a coefficient per attribute level and per pair cell
#: (``coding="indicator"``), and residual scales twice the defaults. :func:`pbassess.surface.fit_surface`
#: refits with it when the labels show the confidence wrong (docs/surfaces.md, *Widening the residual*).
LOOSE_ANCHORED_OPTIONS = {"coding": "indicator", "main_scale": 0.1, "interaction_scale": 0.05}
#: The ``model_options`` of :func:`anchored_model` that set its residual's prior (a fit given one is not widened).
RESIDUAL_PRIOR_OPTIONS = ("coding", "main_scale", "interaction_scale", "arm_scale", "interactions")


def anchored_model(arms: Any, *, main_scale: float = ANCHORED_MAIN_SCALE, interaction_scale: float = ANCHORED_PAIR_SCALE,
                   arm_scale: float = ANCHORED_ARM_SCALE,
                   interactions: bool = True, n_basis: int = 6, calibration_scale: tuple[float, float] = CALIBRATION_SCALE,
                   counts_as_data: bool = False, coding: str = "contrast"):
    """The confidence-anchored additive surface: calibrated confidence plus residual effects that can vanish.

    Arm a has confidence points c_a1..c_aB (means of equal-mass slices of its pool items' confidences,
    :meth:`ArmCounts.anchor_points`), n_a labels and y_a correct ones::

        eta_ab = l + b (logit c_ab - zbar) + r_a               (calibration map + residual)
        mu_a   = mean_b sigmoid(eta_ab),   anchor_a = mean_b sigmoid(l + b (logit c_ab - zbar))
        r_a    = sum_k u_k(a_k) + sum_{k<j} v_kj(a_k, a_j) + e_a
        y_a    ~ Binomial(n_a, mu_a)

    l - zbar, b - 1 ~ Student-t_3(0, ``calibration_scale``) (the calibration map, :func:`calibrated_anchor`,
    learned from all labels); the residual's main effects u_k = Q_k (sigma_k z_k) and pairs
    v_kj = Q_k (tau_kj Z_kj) Q_j^T are sum-to-zero (:func:`additive_design`) and non-centred,
    with sigma_k ~ HalfStudentT_3(``main_scale``) and tau_kj ~ HalfStudentT_3(``interaction_scale``)
    learned per attribute and per pair, and e_a = sigma_e z_a an arm's own effect with
    sigma_e ~ HalfStudentT_3(``arm_scale``) (left out where it repeats the modelled effects: one
    attribute, or two with their pair; :func:`anchored_arm_scale`): most prior mass near zero (strong shrinkage where the
    confidence is right; with scales 0.5 / 0.25 / 0.25 the ACS fit at 2,000 labels scored twice
    the confidence's MSE) and heavy tails, so a real miscalibration still escapes. Every scale
    can shrink to zero: then mu_a is the anchor.
    A scale of 0 drops its term. ``coding="indicator"`` replaces the contrasts by a coefficient per
    level and per pair cell (:func:`indicator_design`; same scales), so a combination that is off
    is one coefficient, not a quarter in each of the map's level, two main effects and the pair.
    That prior is sampled in the contrasts, without the over-complete design's redundant
    directions (the same prior over the arms' residuals, with a free ``level_z`` for the blocks'
    means; docs/surfaces.md); with a continuous attribute the cell design itself is kept.
    Measured (docs/surfaces.md, 5 label seeds): on the miscalibrated surface at 2,000 labels macro
    MSE 0.00070 against the contrasts' 0.00084, better on every seed (one divergence in 1 of 5 fits,
    against the contrasts' 2 of 5); on ACS
    0.00169 against 0.00166 at 2,000 labels and 0.00198 against 0.00191 at 500, with a fit ~30%
    slower (its multi-level pairs have many more cells). So the contrasts stay the default.
    The residual shifts every item of the arm on the logit scale, so the arm's accuracy mu_a is
    the calibrated accuracy of its items, moved.

    The likelihood is item by item when the arms carry their labeled items
    (:func:`anchored_items`, a pool counted by :func:`pbassess.surface.count_arms`): labeled item
    i of arm a is right with probability sigmoid(l + b (logit c_i - zbar) + r_a), so the map is
    learned from the confidences within arms (arm counts alone confound it with the residual:
    on ACS they gave b = 1.5 where the items give b ~ 1); items of one arm with one confidence
    are summed as one term (:func:`tied_items`). Otherwise (counts given directly,
    fractional counts, ``counts_as_data``) the arm counts, y_a ~ Binomial(n_a, mu_a), exact when
    items are labeled at random within their arm. ``accuracy`` = ``mu``: no Beta layer.
    Returns ``(model, n, correct)``; deterministics ``mu``, ``anchor``, ``residual`` (arm) and
    ``confidence_offset`` (the map's intercept l - b zbar). An unknown ``coding`` raises
    :class:`~pbassess.errors.ConfigError`.

    Examples
    --------
    >>> from pbassess.surface import ArmCounts
    >>> a = ArmCounts.from_arrays([3, 0, 8, 1], [2, 0, 7, 1], values=[[0, 0], [0, 1], [1, 0], [1, 1]],
    ...                           attributes=("sex", "dis"), confidence=[0.7, 0.8, 0.9, 0.6])
    >>> model, n, c = anchored_model(a)
    >>> sorted(v.name for v in model.free_RVs)  # two attributes and their pair: no arm effect of its own
    ['calibration_deviation', 'main_sd', 'main_z', 'pair_sd', 'pair_z']
    >>> model["mu"].type.shape, model["anchor"].type.shape
    ((4,), (4,))
    """
    import pymc as pm
    import pytensor
    import pytensor.tensor as pt

    if coding not in ("contrast", "indicator"):
        raise ConfigError(f"unknown coding {coding!r} (choose contrast or indicator)")
    pairs = interactions and interaction_scale > 0
    over_complete = coding == "indicator" and bool(arms.continuous)
    design = (indicator_design if over_complete else additive_design)(arms, interactions=pairs, n_basis=n_basis)
    obs = np.arange(arms.n_arms) if counts_as_data else np.flatnonzero(np.asarray(arms.n) > 0)
    G = design.matrix
    with pm.Model(coords={"arm": np.arange(arms.n_arms)}) as model:
        anchor, _ = calibrated_anchor(arms, scale=calibration_scale)
        z, centre = _anchor_inputs(arms)
        base = model["calibration_loc"] + model["calibration_slope"] * pt.as_tensor(z - centre)
        if coding == "indicator" and not over_complete:
            coef, cols, level = _indicator_effects_in_contrasts(arms, design, main_scale, interaction_scale)
        else:
            coef, cols, level = _block_effects(design, main_scale, interaction_scale)
        arm_scale = anchored_arm_scale(arms, arm_scale, interactions=interactions, interaction_scale=interaction_scale)
        arm_effect = (pm.HalfStudentT("arm_sd", nu=3, sigma=arm_scale) * pm.Normal("arm_z", 0.0, 1.0, dims="arm")
                      if arm_scale > 0 else None)
        z_centred = z - centre

        def residual(rows, label):
            # The level shift, the design's effects and the arms' own. Shared (not constant) design
            # rows: nutpie's numba code takes them as arguments instead of compiling them in.
            resid = pt.zeros(rows.size) if level is None else pt.zeros(rows.size) + level
            if coef is not None:
                resid = resid + pytensor.shared(np.ascontiguousarray(G[rows][:, cols]), name=f"anchored_{label}") @ coef
            if arm_effect is not None:
                resid = resid + arm_effect[rows]
            return resid

        def arm_mu(rows, resid):
            eta = model["calibration_loc"] + model["calibration_slope"] * pt.as_tensor(z_centred[rows])
            return pt.clip(pm.math.sigmoid(eta + resid[:, None]).mean(axis=1), 1e-9, 1 - 1e-9)

        # The gradient needs only the labeled arms' rows; mu and the residual of every arm are
        # deterministics (evaluated once per kept draw).
        every = np.arange(arms.n_arms)
        resid_all = residual(every, "all")
        mu = pm.Deterministic("mu", arm_mu(every, resid_all), dims="arm")
        items = None if counts_as_data else anchored_items(arms)
        if items is None:  # the arm counts: Binomial(n_a, mu_a)
            y, n = count_terms(np.asarray(arms.correct, float), np.asarray(arms.n, float), obs, counts_as_data)
            m = mu if counts_as_data else arm_mu(obs, residual(obs, "labeled"))
            pm.Potential("likelihood", (y * pt.log(m) + (n - y) * pt.log1p(-m)).sum())
        else:  # the labeled items: Bernoulli(sigmoid(l + b (logit c_i - zbar) + r_arm(i)))
            arm_of, z_item, right = items
            rows = np.unique(arm_of)
            resid = residual(rows, "labeled")
            group_arm, group_z, group_n, group_right = tied_items(arm_of, z_item, right)
            eta = (model["calibration_loc"] + model["calibration_slope"] * pt.as_tensor(group_z - centre)
                   + resid[np.searchsorted(rows, group_arm)])
            # sum over the group's items of log sigmoid(+-eta) = -n softplus(-eta) - (n - right) eta
            pm.Potential("likelihood", -(pt.as_tensor(group_n) * pt.softplus(-eta)
                                         + pt.as_tensor(group_n - group_right) * eta).sum())
        pm.Deterministic("residual", resid_all, dims="arm")
        del anchor, base
    return model, arms.n, arms.correct


def _block_effects(design: AdditiveDesign, main_scale: float, interaction_scale: float):
    """The residual's coefficients, non-centred with a half-Student-t_3 scale per block: (coef, columns, None)."""
    import pymc as pm
    import pytensor.tensor as pt

    parts, columns = [], []
    for label, cols, scale in (("main", design.main_columns, main_scale),
                               ("pair", design.pair_columns, interaction_scale)):
        if scale > 0 and cols.size:
            blocks = np.unique(design.block[cols])
            sd = pm.HalfStudentT(f"{label}_sd", nu=3, sigma=scale, shape=blocks.size)
            sd = sd[np.searchsorted(blocks, design.block[cols])]
            parts.append(sd * pm.Normal(f"{label}_z", 0.0, 1.0, shape=cols.size))
            columns.append(cols)
    if not parts:
        return None, None, None
    return pt.concatenate(parts), np.concatenate(columns), None


def _indicator_effects_in_contrasts(arms: Any, contrasts: AdditiveDesign, main_scale: float, interaction_scale: float):
    """The indicator design's prior written in the sum-to-zero contrasts, without its redundant directions.

    A coefficient per level, u_k(l) = sigma_k z_kl, and per pair cell, v_kj(l, m) = tau_kj z_klm
    (:func:`indicator_design`), splits into orthogonal, independent parts: the doubly centred
    cell effects are the contrasts' pair Q_k (tau_kj Z) Q_j^T; a pair's row (column) means are a
    main effect of k (j) with variance tau_kj^2 / L_j (/ L_k) per contrast; and every block's mean
    is a shift of all arms, with variance sigma_k^2 / L_k or tau_kj^2 / (L_k L_j). So the same
    prior over the arms' residuals is: contrast main effects with sd sqrt(sigma_k^2 + sum_j tau_kj^2
    / L_j), contrast pairs with sd tau_kj, and one level shift with sd sqrt(sum_k sigma_k^2 / L_k +
    sum_kj tau_kj^2 / (L_k L_j)). The over-complete form gave NUTS a ridge per level and per pair
    cell mean (63 leapfrog steps a draw on ACS against the contrasts' 31). Categorical attributes
    only (the caller keeps the over-complete form otherwise). Returns (coef, columns, level).
    """
    import pymc as pm
    import pytensor.tensor as pt

    K = len(arms.attributes)
    levels = np.array([np.unique(np.asarray(arms.values[:, k]).astype(str)).size for k in range(K)], float)
    # the pair blocks the design was built with (a pair of a one-level attribute has cells but no contrasts)
    pair_of = ([(k, j) for k in range(K) for j in range(k + 1, K)]
               if interaction_scale > 0 and len(contrasts.names) > contrasts.n_main else [])
    main_var = pt.zeros(K)
    level_var = pt.as_tensor(0.0)
    if main_scale > 0 and K:
        main_sd = pm.HalfStudentT("main_sd", nu=3, sigma=main_scale, shape=K)
        main_var = main_sd ** 2
        level_var = level_var + (main_var / levels).sum()
    pair_sd = None
    if pair_of:
        pair_sd = pm.HalfStudentT("pair_sd", nu=3, sigma=interaction_scale, shape=len(pair_of))
        share = np.zeros((K, len(pair_of)))  # a pair's row means: variance tau^2 / L_other on each attribute's main effect
        for p, (k, j) in enumerate(pair_of):
            share[k, p], share[j, p] = 1.0 / levels[j], 1.0 / levels[k]
        pair_var = pair_sd ** 2
        main_var = main_var + pt.dot(pt.as_tensor(share), pair_var)
        level_var = level_var + (pair_var / np.array([levels[k] * levels[j] for k, j in pair_of])).sum()
    if main_scale <= 0 and pair_sd is None:
        return None, None, None
    parts, columns = [], []
    main = contrasts.main_columns
    if main.size:
        parts.append(pt.sqrt(main_var)[contrasts.block[main]] * pm.Normal("main_z", 0.0, 1.0, shape=main.size))
        columns.append(main)
    pair = contrasts.pair_columns
    if pair_sd is not None and pair.size:
        parts.append(pair_sd[contrasts.block[pair] - contrasts.n_main] * pm.Normal("pair_z", 0.0, 1.0, shape=pair.size))
        columns.append(pair)
    level = pt.sqrt(level_var) * pm.Normal("level_z", 0.0, 1.0)
    if not parts:
        return None, None, level
    return pt.concatenate(parts), np.concatenate(columns), level


def anchored_arm_scale(arms: Any, arm_scale: float, *, interactions: bool = True,
                       interaction_scale: float = ANCHORED_PAIR_SCALE) -> float:
    """The arm effect's scale, or 0 where the arm effect would repeat the modelled effects.

    With one attribute an arm is a level of it, so an arm's own effect is its main effect again;
    with two and their pair modelled, the pair is. Such a duplicate leaves a ridge that only the
    priors pin down: on ``digits-shift`` (7 environments, 2,000 labels) the anchored fit had R-hat
    1.45, bulk ESS 9 and 43 divergences.

    Examples
    --------
    >>> from pbassess.surface import ArmCounts
    >>> one = ArmCounts.from_arrays([1, 1], [1, 0], values=[[0], [1]])
    >>> two = ArmCounts.from_arrays([1, 1], [1, 0], values=[[0, 0], [1, 1]], attributes=("a", "b"))
    >>> anchored_arm_scale(one, 0.05), anchored_arm_scale(two, 0.05), anchored_arm_scale(two, 0.05, interactions=False)
    (0.0, 0.0, 0.05)
    """
    modelled = 2 if interactions and interaction_scale > 0 else 1
    return 0.0 if np.asarray(arms.values).reshape(arms.n_arms, -1).shape[1] <= modelled else float(arm_scale)


def tied_items(arm_of: np.ndarray, z: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Labeled items of one arm with one logit confidence, as a group: (arm, z, items, right ones) per group.

    Such items share their probability of being right, sigmoid(eta), so the anchored likelihood
    sums them in one term, ``-n softplus(-eta) - (n - right) eta`` (the sum of their Bernoulli log
    probabilities): the same log density, fewer terms. On ACS 2,000 random labels are 1,675
    groups and 10,000 are 6,514 (a model's confidences repeat where the inputs do); a logp and
    gradient took 122 us against 168 us item by item at 2,000 labels, 392 against 488 at 10,000.
    Groups are sorted by arm, then by z.

    Examples
    --------
    >>> arm, z, n, k = tied_items(np.array([1, 0, 1, 1]), np.array([0.5, 0.5, 0.5, 2.0]), np.array([1, 0, 0, 1]))
    >>> arm.tolist(), z.tolist(), n.tolist(), k.tolist()
    ([0, 1, 1], [0.5, 0.5, 2.0], [1.0, 2.0, 1.0], [0.0, 1.0, 1.0])
    """
    keys = np.column_stack([np.asarray(arm_of, float), np.asarray(z, float)])
    unique, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.ravel().astype(np.int64)
    n = cell_counts(inverse, len(unique))
    k = cell_counts(inverse, len(unique), weights=np.asarray(right, float))
    return unique[:, 0].astype(np.int64), unique[:, 1], np.asarray(n, float), np.asarray(k, float)


def anchored_items(arms: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The labeled items the anchored model's likelihood uses: (arm, logit confidence, right), or None.

    None (the per-arm Binomial is used) when the arms carry no items (counts given directly,
    fractional counts, counts changed by :meth:`ArmCounts.with_counts`) or when the items do not
    add up to the arm counts.

    Examples
    --------
    >>> from pbassess.surface import ArmCounts
    >>> anchored_items(ArmCounts.from_arrays([1, 2], [1, 1])) is None
    True
    """
    items = getattr(arms, "labeled_items", None)
    if items is None:
        return None
    arm_of, conf, right = (np.asarray(x) for x in items)
    codes = arm_of.astype(np.int64)
    if codes.size and (codes.min() < 0 or codes.max() >= arms.n_arms):
        return None
    n = cell_counts(codes, arms.n_arms)
    k = cell_counts(codes, arms.n_arms, weights=right.astype(float))
    if not (np.allclose(n, arms.n) and np.allclose(k, arms.correct)):
        return None
    return arm_of.astype(np.int64), anchor_logit(conf), right.astype(np.int64)


# ---------------------------------------------------------------------------- the conjugate estimators
def beta_i_prior(arms: Any, lam: float = BETA_I_LAMBDA, prior_accuracy: float | None = None) -> tuple[float, float]:
    """Beta-I's prior of every arm: Beta(lam p0, lam (1 - p0)), p0 the global accuracy (kept inside (0.001, 0.999)).

    Examples
    --------
    >>> from pbassess.surface import ArmCounts
    >>> a, b = beta_i_prior(ArmCounts.from_arrays([4, 0], [3, 0]))
    >>> round(a, 3), round(b, 3)
    (0.075, 0.025)
    """
    if lam <= 0:
        raise ConfigError(f"the Beta-I warm-start weight lambda must be positive, got {lam}")
    p0 = arms.global_accuracy if prior_accuracy is None else float(prior_accuracy)
    p0 = min(max(p0, 1e-3), 1 - 1e-3)  # a proper Beta even when every label so far is right (or wrong)
    return lam * p0, lam * (1.0 - p0)


def _bernoulli_potential(logit: Any, y: np.ndarray, n: np.ndarray) -> None:
    """``sum y log p + (n - y) log(1 - p)`` from the logit (stable; fractional counts allowed)."""
    import pymc as pm
    import pytensor.tensor as pt

    pm.Potential("likelihood", -(y * pt.softplus(-logit) + (n - y) * pt.softplus(logit)).sum())


def cpredictor_model(arms: Any):
    """CPredictor: one accuracy for every arm, ``global_accuracy ~ Beta(1, 1)``, all labels Bernoulli draws of it.

    The free variable is ``global_accuracy_asinh_logit`` (:func:`pbassess.pymc_models.accuracy.beta_variable`);
    ``accuracy`` (dim ``arm``) repeats ``global_accuracy`` per arm.

    Examples
    --------
    >>> from pbassess.surface import ArmCounts
    >>> model = cpredictor_model(ArmCounts.from_arrays([3, 7], [1, 6]))
    >>> [v.name for v in model.free_RVs], sorted(v.name for v in model.deterministics)
    (['global_accuracy_asinh_logit'], ['accuracy', 'global_accuracy'])
    """
    import pymc as pm
    import pytensor.tensor as pt

    with pm.Model(coords={"arm": np.arange(arms.n_arms)}) as model:
        theta, logit = beta_variable("global_accuracy", 1.0, 1.0)
        pm.Deterministic("accuracy", theta * pt.ones(arms.n_arms), dims="arm")
        _bernoulli_potential(logit, float(np.sum(arms.correct)), float(np.sum(arms.n)))
    return model


def beta_i_model(arms: Any, lam: float = BETA_I_LAMBDA):
    """Beta-I: ``accuracy[a] ~ Beta(lam p0, lam (1 - p0))`` independently, each arm's labels Bernoulli draws of it.

    Examples
    --------
    >>> from pbassess.surface import ArmCounts
    >>> model = beta_i_model(ArmCounts.from_arrays([3, 7], [1, 6]))
    >>> [v.name for v in model.free_RVs], model.initial_point()["accuracy_asinh_logit"].shape
    (['accuracy_asinh_logit'], (2,))
    """
    import pymc as pm

    a, b = beta_i_prior(arms, lam)
    with pm.Model(coords={"arm": np.arange(arms.n_arms)}) as model:
        _, logit = beta_variable("accuracy", np.full(arms.n_arms, a), np.full(arms.n_arms, b), dims="arm")
        _bernoulli_potential(logit, np.asarray(arms.correct, float), np.asarray(arms.n, float))
    return model


# ---------------------------------------------------------------------------- the specs
def observations_from_arm_counts(n: Any, correct: Any) -> Observations | None:
    """The labeled items that whole-number arm counts imply (``correct`` right, then the wrong ones, per arm).

    Item ids are ``"<arm>#<rank>"``; fractional counts (noisy attributes, pooled counts) imply no
    items (``None``: the log-likelihood is then one value per arm).

    Examples
    --------
    >>> obs = observations_from_arm_counts([2, 0, 1], [1, 0, 1])
    >>> obs.cell.tolist(), obs.outcome.tolist(), obs.item.tolist()
    ([0, 0, 2], [1, 0, 1], ['0#0', '0#1', '2#0'])
    >>> observations_from_arm_counts([1.5], [1.0]) is None
    True
    """
    n_arr, c_arr = np.asarray(n, float), np.asarray(correct, float)
    if not (np.allclose(n_arr, np.round(n_arr)) and np.allclose(c_arr, np.round(c_arr))):
        return None
    n_int, c_int = np.round(n_arr).astype(np.int64), np.round(c_arr).astype(np.int64)
    cell = np.repeat(np.arange(n_int.size), n_int)
    rank = np.arange(cell.size) - np.repeat(np.cumsum(n_int) - n_int, n_int)
    outcome = (rank < c_int[cell]).astype(np.int64)
    item = np.asarray([f"{c}#{r}" for c, r in zip(cell.tolist(), rank.tolist(), strict=True)], dtype=object)
    return Observations(cell, outcome, item)


@contextlib.contextmanager
def quiet_pymc_log() -> Iterator[None]:
    """PyMC's INFO lines ("Sampling: [...]", ADVI's "Finished ...") silenced within the block."""
    logger = logging.getLogger("pymc")
    previous = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(previous)


def _auto_dims(name: str, shape: tuple[int, ...], dims: tuple[str, ...] | None) -> tuple[str, ...]:
    """A variable's dims: the model's, else ArviZ's default names (``<name>_dim_<i>``)."""
    if dims is not None and len(dims) == len(shape) and all(d is not None for d in dims):
        return tuple(dims)
    return tuple(f"{name}_dim_{i}" for i in range(len(shape)))


class ArmSpec(Spec):
    """What every surface spec shares: the arms' counts, the items, the per-item Bernoulli log-likelihood.

    Each labeled item is a Bernoulli draw of its arm's ``accuracy``; the posterior's
    ``accuracy`` (chain, draw, arm) gives one log-likelihood value per item (dim ``item``), or
    per labeled arm when the items are unknown (the Binomial of the arm's counts, fractional
    counts allowed).

    Parameters
    ----------
    arms : ArmCounts
        The arms (:class:`pbassess.surface.ArmCounts` or any object with its attributes).
    observations : Observations, optional
        The labeled items (cell = arm index, outcome = correct 1/0).
    seed : int or numpy.random.Generator, optional
        Seed of the random part of :meth:`complete` (draws of the arms' accuracy given the
        model's draws).

    Examples
    --------
    >>> from pbassess.surface import ArmCounts
    >>> spec = CPredictorSpec(ArmCounts.from_arrays([3, 1], [2, 1]))
    >>> isinstance(spec, ArmSpec), spec.coords["arm"].tolist(), spec.cell_n().tolist()
    (True, [0, 1], [3.0, 1.0])
    """

    observed_name = "correct"
    estimator = "surface"
    #: Draws per chain and tuning steps of a NUTS fit, where the model's own differ from the surface
    #: defaults (the anchored model: :data:`ANCHORED_DRAWS` after :data:`ANCHORED_TUNE`; the GP estimators in the grid
    #: eigenbasis: :data:`GRID_GP_SAMPLE_KWARGS`).
    sample_defaults: Mapping[str, int] = {}

    def __init__(self, arms: Any, *, observations: Observations | None = None, seed: Any = None) -> None:
        self.arms = arms
        self.n = np.asarray(arms.n, dtype=float)
        self.correct = np.asarray(arms.correct, dtype=float)
        self.coords = {"arm": np.arange(arms.n_arms)}
        if observations is not None and observations.size:
            if int(observations.cell.max()) >= arms.n_arms:
                raise ConfigError(f"an item's arm index {int(observations.cell.max())} is out of range "
                                  f"({arms.n_arms} arms)")
            from pbassess.counting import cell_counts

            counted = cell_counts(observations.cell, arms.n_arms)
            if not np.allclose(counted, self.n):
                raise ConfigError("the labeled items do not add up to the arms' counts")
        self.observations = observations
        self.seed = seed
        self._rng = as_generator(seed)
        self._model = None

    def cell_n(self) -> np.ndarray:
        return self.n

    def model(self):
        if self._model is None:
            self._model = self._build_model()
        return self._model

    def _build_model(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _model_dims(self, name: str, shape: tuple[int, ...]) -> tuple[str, ...]:
        dims = self.model().named_vars_to_dims.get(name)
        return _auto_dims(name, shape, None if dims is None else tuple(dims))

    @staticmethod
    def _theta(draws: Mapping[str, np.ndarray]) -> np.ndarray:
        theta = np.asarray(draws["accuracy"], dtype=float)
        return np.clip(theta, np.finfo(float).tiny, np.nextafter(1.0, 0.0))

    def log_likelihood(self, draws, per_item):
        from pbassess.inference.trees import bernoulli_log_likelihood

        return bernoulli_log_likelihood(self._theta(draws), self.n, self.correct, self.observations, per_item,
                                        dim="arm", names=self.coords["arm"], clip=False)

    def observed_data(self) -> xr.Dataset:
        from pbassess.inference.trees import bernoulli_observed_data

        return bernoulli_observed_data(self.observed_name, self.n, self.correct, self.observations, dim="arm",
                                       names=self.coords["arm"])

    def constant_data(self) -> xr.Dataset:
        data: dict[str, Any] = {"n": ("arm", self.n), "n_correct": ("arm", self.correct),
                                "pool_n": ("arm", np.asarray(self.arms.pool_n, float)),
                                "confidence": ("arm", np.asarray(self.arms.confidence, float))}
        coords: dict[str, Any] = {"arm": self.coords["arm"]}
        points = getattr(self.arms, "confidence_points", None)
        if points is not None:  # the anchored models' inputs: kept so a loaded result rebuilds the same model
            data["confidence_points"] = (("arm", "confidence_point"), np.asarray(points, float))
        if self.observations is not None:
            data["item_arm"] = ("item", self.observations.cell)
            coords["item"] = self.observations.item
        return xr.Dataset(data, coords=coords)

    def _exact_loo(self, a: np.ndarray, b: np.ndarray):
        """Closed-form leave-one-item-out of Beta(a, b) posteriors per arm (the prior held fixed)."""
        obs = self.observations
        if obs is None:
            return None
        a_i, b_i = a[obs.cell], b[obs.cell]
        hit = np.where(obs.outcome == 1, a_i, b_i)
        return np.log(hit - 1.0) - np.log(a_i + b_i - 1.0), np.log(hit) - np.log(a_i + b_i)


class CPredictorSpec(ArmSpec):
    """CPredictor (:func:`cpredictor_model`): exact Beta(1 + correct, 1 + wrong) over all labels, or NUTS.

    Reported: ``accuracy`` (arm) and ``global_accuracy``; the posterior also holds the model's
    free variable ``global_accuracy_asinh_logit``, for either inference.

    Examples
    --------
    >>> from pbassess.inference import fit
    >>> from pbassess.surface import ArmCounts
    >>> arms = ArmCounts.from_arrays([3, 7], [1, 6])
    >>> post = fit(CPredictorSpec(arms), draws=2000, seed=0).idata["posterior"]
    >>> bool(abs(float(post["accuracy"].mean()) - 8 / 12) < 0.01), dict(post["accuracy"].sizes)["arm"]
    (True, 2)
    """

    name = "cpredictor surface"
    estimator = "cpredictor"
    # the asinh-logit coordinate of one Beta over all labels: target_accept 0.9 (BetaBernoulliSpec's 0.95 is
    # for regions without labels, sampled from their prior alone; this model has none)
    nuts_defaults = {"target_accept": 0.9}

    def __init__(self, arms: Any, *, observations: Observations | None = None, seed: Any = None) -> None:
        super().__init__(arms, observations=observations, seed=seed)
        self.reported = {"accuracy": ("arm",), "global_accuracy": ()}

    def posterior_beta(self) -> tuple[float, float]:
        """The exact posterior Beta(1 + correct, 1 + wrong) of the global accuracy."""
        c, n = float(self.correct.sum()), float(self.n.sum())
        return 1.0 + c, 1.0 + n - c

    def _build_model(self):
        return cpredictor_model(self.arms)

    def conjugate_draws(self, n_draws, rng):
        a, b = self.posterior_beta()
        return {"global_accuracy": rng.beta(a, b, size=n_draws)}

    def prior_draws(self, n_draws, rng):
        return {"global_accuracy": rng.beta(1.0, 1.0, size=n_draws)}

    def complete(self, draws):
        p = np.asarray(draws["global_accuracy"], dtype=float)
        return {"accuracy": (("arm",), np.repeat(p[..., None], self.arms.n_arms, axis=-1)),
                "global_accuracy": ((), p),
                "global_accuracy_asinh_logit": ((), np.arcsinh(clipped_logit(p)))}

    def log_prior(self, draws):
        z = np.asarray(draws["global_accuracy_asinh_logit"], dtype=float)
        return {"global_accuracy_asinh_logit": ((), asinh_logit_beta_log_density(z, 1.0, 1.0))}

    def exact_loo_pointwise(self):
        a, b = self.posterior_beta()
        return self._exact_loo(np.full(self.arms.n_arms, a), np.full(self.arms.n_arms, b))


class BetaISpec(ArmSpec):
    """Beta-I (:func:`beta_i_model`): exact Beta(correct + lam p0, wrong + lam (1 - p0)) per arm, or NUTS.

    p0 is the global accuracy of the labels (the prior is centred on the data, as in the AAA
    code); the exact leave-one-item-out predictive holds that prior fixed. NUTS on the same
    model is a cross-check only: an arm without labels keeps the prior Beta(0.1 p0, 0.1 (1 - p0)),
    whose mass sits at 0 and 1, and NUTS mixes slowly between them (on 4 arms, one unlabeled:
    R-hat 1.06, bulk ESS 59 in 4 x 500 draws, means equal to the exact ones within 0.011).

    Examples
    --------
    >>> from pbassess.inference import fit
    >>> from pbassess.surface import ArmCounts
    >>> spec = BetaISpec(ArmCounts.from_arrays([4, 0], [3, 0]))
    >>> a, b = spec.posterior_beta()
    >>> a.round(3).tolist(), b.round(3).tolist()
    ([3.075, 0.075], [1.025, 0.025])
    """

    name = "beta-i surface"
    estimator = "beta-i"
    nuts_defaults = {"target_accept": 0.95}

    def __init__(self, arms: Any, *, lam: float = BETA_I_LAMBDA, observations: Observations | None = None,
                 seed: Any = None) -> None:
        super().__init__(arms, observations=observations, seed=seed)
        self.lam = float(lam)
        a, b = beta_i_prior(arms, self.lam)
        self.alpha, self.beta = np.full(arms.n_arms, a), np.full(arms.n_arms, b)
        self.reported = {"accuracy": ("arm",)}

    def posterior_beta(self) -> tuple[np.ndarray, np.ndarray]:
        """The exact posterior Beta parameters of every arm."""
        return self.correct + self.alpha, self.n - self.correct + self.beta

    def _build_model(self):
        return beta_i_model(self.arms, self.lam)

    def conjugate_draws(self, n_draws, rng):
        a, b = self.posterior_beta()
        return {"accuracy": rng.beta(a, b, size=(n_draws, a.size))}

    def prior_draws(self, n_draws, rng):
        return {"accuracy": rng.beta(self.alpha, self.beta, size=(n_draws, self.alpha.size))}

    def complete(self, draws):
        theta = np.asarray(draws["accuracy"], dtype=float)
        return {"accuracy": (("arm",), theta), "accuracy_asinh_logit": (("arm",), np.arcsinh(clipped_logit(theta)))}

    def log_prior(self, draws):
        z = np.asarray(draws["accuracy_asinh_logit"], dtype=float)
        return {"accuracy_asinh_logit": (("arm",), asinh_logit_beta_log_density(z, self.alpha, self.beta))}

    def exact_loo_pointwise(self):
        return self._exact_loo(*self.posterior_beta())


def model_options_for(estimator: str, model_options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The model builder's options: the user's, with BetaGP-SL's default scale term filled in.

    Examples
    --------
    >>> model_options_for("betagp-sl", None), model_options_for("additive", {"interaction_scale": 0.2})
    ({'scale_term': 'gamma'}, {'interaction_scale': 0.2})
    """
    options = dict(model_options or {})
    if estimator in ("betagp-sl", "betagp-slp"):
        options.setdefault("scale_term", DEFAULT_SCALE_TERM)
    return options


class SurfaceModelSpec(ArmSpec):
    """A smoothing surface (BernGP, BetaGP, BetaGP-SL, BetaGP-SLP, additive) for NUTS (no conjugate posterior).

    The posterior holds the model's free variables and deterministics (``mu`` and ``scale`` of
    the Beta-binomial models, ``p`` of BernGP) and ``accuracy`` (arm): BernGP's ``p``, or for the
    Beta-binomial models one draw of Beta(mu s + correct, (1 - mu) s + n - correct) per posterior
    draw, with the counts the likelihood saw (pooled for -SLP; :attr:`n_used`, :attr:`c_used`).
    Prior draws come from the PyMC model (``accuracy`` then ~ Beta(mu s, (1 - mu) s)); the log
    prior is PyMC's. Reported: ``accuracy``, ``mu`` (or ``p``) and the hyperparameters of at
    most 64 values (the variables the NUTS diagnostics check).

    Parameters
    ----------
    arms : ArmCounts
    estimator : {"berngp", "betagp", "betagp-sl", "betagp-slp", "additive"}
    model_options : dict, optional
        Passed to the builder (e.g. ``scale_term``, ``gp``, ``interaction_scale``).
    covariate : {"confidence"}, optional
    model_seed : int, optional
        Seed of the builder's random choices (the GP models' inducing inputs).
    counts_as_data : bool
        Every arm's counts in data containers (:func:`count_terms`), so that a compiled model
        takes new counts (:class:`pbassess.surface.refit.SurfaceRefitter`).
    observations, seed
        As for :class:`ArmSpec`.

    Examples
    --------
    >>> from pbassess.surface import ArmCounts
    >>> arms = ArmCounts.from_arrays([3, 0, 8, 1], [2, 0, 7, 1], values=[[0, 0], [0, 1], [1, 0], [1, 1]],
    ...                              attributes=("sex", "dis"))
    >>> spec = SurfaceModelSpec(arms, "additive")
    >>> spec.has_conjugate, list(spec.reported)[:2], spec.n_used.tolist()
    (False, ['accuracy', 'mu'], [3.0, 0.0, 8.0, 1.0])
    """

    name = "accuracy surface"
    prior_layout_is_posterior = True  # prior_draws and NUTS give the same variables, completed alike

    def __init__(self, arms: Any, estimator: str = "additive", *, model_options: Mapping[str, Any] | None = None,
                 covariate: str | None = None, model_seed: int | None = None, counts_as_data: bool = False,
                 observations: Observations | None = None, seed: Any = None) -> None:
        if estimator not in GP_ESTIMATORS:
            raise ConfigError(f"{estimator!r} is not a smoothing surface ({', '.join(GP_ESTIMATORS)})")
        super().__init__(arms, observations=observations, seed=seed)
        self.estimator = estimator
        self.options = model_options_for(estimator, model_options)
        self.covariate = covariate
        self.model_seed = model_seed
        self.counts_as_data = counts_as_data
        self.bernoulli = estimator == "berngp"
        builder_options = {k: v for k, v in self.options.items() if k != "anchored"}
        self.anchored = estimator == "additive" and covariate == "confidence" and bool(self.options.get("anchored", True))
        if "anchored" in self.options and not (estimator == "additive" and covariate == "confidence"):
            raise ConfigError("the model option 'anchored' applies to the additive estimator with the confidence covariate")
        if self.anchored:
            # the half-Student-t scales' necks: smaller steps (at 0.8, 10 divergences in 4 x 1000 draws on 32 arms)
            self.nuts_defaults = {"target_accept": 0.95}
            self.sample_defaults = {"draws": ANCHORED_DRAWS, "tune": ANCHORED_TUNE}
            self._model, n_used, c_used = anchored_model(arms, counts_as_data=counts_as_data, **builder_options)
            self.n_used, self.c_used = np.asarray(n_used, float), np.asarray(c_used, float)
            # NUTS keeps the free variables only; complete() evaluates the deterministics afterwards
            self.nuts_var_names = tuple(v.name for v in self._model.free_RVs)
        elif estimator == "berngp":
            self._model = berngp_model(arms, covariate=covariate, seed=model_seed, counts_as_data=counts_as_data,
                                       **self.options)
            self.n_used, self.c_used = self.n, self.correct
        elif estimator == "additive":
            self._model, n_used, c_used = additive_model(arms, covariate=covariate, counts_as_data=counts_as_data,
                                                         **builder_options)
            self.n_used, self.c_used = np.asarray(n_used, float), np.asarray(c_used, float)
        else:
            self._model, n_used, c_used = betagp_model(arms, variant=estimator, covariate=covariate, seed=model_seed,
                                                       counts_as_data=counts_as_data, **self.options)
            self.n_used, self.c_used = np.asarray(n_used, float), np.asarray(c_used, float)
        form = gp_latent_form(arms, self.options.get("gp")) if estimator != "additive" else None
        if form in ("eigenbasis", "truncated"):
            defaults = TRUNCATED_BETAGP_SAMPLE_KWARGS if form == "truncated" and not self.bernoulli \
                else GRID_GP_SAMPLE_KWARGS
            self.nuts_defaults = {"target_accept": defaults["target_accept"]}
            self.sample_defaults = {k: defaults[k] for k in ("draws", "tune")}
            # NUTS keeps the free variables only: the per-arm deterministics at every draw, tuning
            # included, would cost more than the gradient (complete() evaluates them afterwards)
            self.nuts_var_names = tuple(v.name for v in self._model.free_RVs)
        model = self._model
        self.free = [v.name for v in model.free_RVs]
        self.deterministics = [v.name for v in model.deterministics]
        point = model.initial_point()
        self.reported = {"accuracy": ("arm",), ("p" if self.bernoulli else "mu"): ("arm",)}
        for v in model.free_RVs:  # the hyperparameters: few values each (not the per-arm or inducing latents)
            value_name = model.rvs_to_values[v].name
            shape = np.shape(point[value_name])
            if int(np.prod(shape)) <= 64 and not v.name.endswith(("_z", "_v")):
                self.reported[v.name] = self._model_dims(v.name, shape)
        for name in ("confidence_offset",):
            if name in model.named_vars:
                self.reported[name] = ()
        if "anchor" in model.named_vars:
            self.reported["anchor"] = ("arm",)

    @property
    def diagnosed(self) -> list[str]:
        """The model's variables: ``accuracy`` is a conditional draw given ``mu`` and ``s`` and mixes as they do.

        The anchored model's ``anchor`` (per arm) is a function of the two calibration parameters,
        which are diagnosed themselves; ArviZ's diagnostics loop over elements in Python, and
        the 2,554 ACS anchors cost ~10 s for nothing new.
        """
        skip = {"accuracy", "anchor"} if getattr(self, "anchored", False) else {"accuracy"}
        return [v for v in self.reported if v not in skip]

    @property
    def has_conjugate(self) -> bool:
        return False

    def with_counts(self, arms: Any, n_used: Any, c_used: Any, observations: Observations | None = None,
                    seed: Any = None) -> SurfaceModelSpec:
        """The same model (not rebuilt) over other counts of the same arms (a refit of a ``counts_as_data`` model)."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        ArmSpec.__init__(new, arms, observations=observations, seed=seed)
        new._model = self._model
        new.n_used, new.c_used = np.asarray(n_used, float), np.asarray(c_used, float)
        return new

    def _build_model(self):  # pragma: no cover - built in __init__
        return self._model

    def _accuracy(self, values: Mapping[str, np.ndarray], prior: bool) -> np.ndarray:
        if self.bernoulli:
            return np.asarray(values["p"], dtype=float)
        if getattr(self, "anchored", False):  # the anchored model's arm accuracy is mu itself (Binomial counts)
            return np.asarray(values["mu"], dtype=float)
        mu, s = np.asarray(values["mu"], float), np.asarray(values["scale"], float)
        a, b = mu * s, (1.0 - mu) * s
        if not prior:
            a, b = a + self.c_used, b + self.n_used - self.c_used
        return self._rng.beta(a, b)

    def prior_draws(self, n_draws, rng):
        import warnings

        import pymc as pm

        anchored = getattr(self, "anchored", False)
        names = self.free if anchored else self.free + self.deterministics
        with warnings.catch_warnings(), quiet_pymc_log():
            warnings.simplefilter("ignore")
            prior = pm.sample_prior_predictive(draws=n_draws, model=self.model(), var_names=names,
                                               random_seed=int(rng.integers(2**31 - 1)))
        group = prior["prior"]
        out = {name: group[name].to_numpy().reshape(n_draws, *group[name].shape[2:]) for name in names}
        if anchored:
            out.update(self._deterministics(out))
        out["accuracy"] = self._accuracy(out, prior=True)
        return out

    def _deterministics(self, draws: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """The model's deterministics from draws of its free variables (compiled once, all draws at once)."""
        from pbassess.inference.deterministics import DeterministicEvaluator

        if getattr(self, "_evaluator", None) is None:
            self._evaluator = DeterministicEvaluator(self._model)
        return self._evaluator(draws)

    def complete(self, draws):
        out: dict[str, tuple[tuple[str, ...], np.ndarray]] = {}
        if any(n not in draws for n in self.deterministics) and all(n in draws for n in self.free):
            draws = {**self._deterministics(draws), **draws}  # NUTS kept the free variables only
        for name in self.free + self.deterministics:
            if name in draws:
                value = np.asarray(draws[name])
                out[name] = (self._model_dims(name, value.shape[2:]), value)
        given = draws.get("accuracy")
        value = np.asarray(given, float) if given is not None else self._accuracy(draws, prior=False)
        out["accuracy"] = (("arm",), value)
        return out

    def log_prior(self, draws):
        return None  # PyMC's own (pm.compute_log_prior on the model)

    def log_likelihood(self, draws, per_item):
        items = anchored_items(self.arms) if getattr(self, "anchored", False) and not self.counts_as_data else None
        if items is None or not per_item or "residual" not in draws:
            return super().log_likelihood(draws, per_item)
        # the item-level likelihood the anchored model was fitted with: each item's own Bernoulli
        arm_of, z, right = items
        _, centre = _anchor_inputs(self.arms)
        loc, slope = np.asarray(draws["calibration_loc"], float), np.asarray(draws["calibration_slope"], float)
        resid = np.asarray(draws["residual"], float)
        eta = loc[..., None] + slope[..., None] * (z - centre) + resid[..., arm_of]
        sign = 2.0 * right - 1.0
        return ("item",), -np.logaddexp(0.0, -sign * eta), {}


def surface_spec(arms: Any, estimator: str, *, model_options: Mapping[str, Any] | None = None,
                 covariate: str | None = None, observations: Observations | None = None, seed: Any = None,
                 model_seed: int | None = None) -> ArmSpec:
    """The spec of one surface estimator over ``arms``.

    Examples
    --------
    >>> from pbassess.surface import ArmCounts
    >>> arms = ArmCounts.from_arrays([3, 1], [2, 1])
    >>> [type(surface_spec(arms, e)).__name__ for e in ("cpredictor", "beta-i", "berngp")]
    ['CPredictorSpec', 'BetaISpec', 'SurfaceModelSpec']
    """
    options = dict(model_options or {})
    if estimator == "cpredictor":
        if options:
            raise ConfigError(f"cpredictor takes no model options (got {', '.join(options)})")
        return CPredictorSpec(arms, observations=observations, seed=seed)
    if estimator == "beta-i":
        unknown = set(options) - {"lam"}
        if unknown:
            raise ConfigError(f"beta-i takes only the model option 'lam' (got {', '.join(sorted(unknown))})")
        return BetaISpec(arms, observations=observations, seed=seed, **options)
    return SurfaceModelSpec(arms, estimator, model_options=options, covariate=covariate, model_seed=model_seed,
                            observations=observations, seed=seed)
