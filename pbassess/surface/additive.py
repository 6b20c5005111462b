"""The additive Beta-binomial accuracy surface (ours): :func:`additive_model`.

Arm a has attribute values (a_1, ..., a_K), n_a labels and y_a correct ones::

    y_a ~ BetaBinomial(n_a, mu_a s_a, (1 - mu_a) s_a)
    logit mu_a = b + sum_k u_k(a_k) + sum_{k<j} v_kj(a_k, a_j)   [+ slope (logit c_a - mean logit c)]
    log s_a    = softcap(c + sum_k w_k(a_k)),   softcap(x) = C - softplus(C - x),  C = log 1e5

Every effect sums to zero over the levels of each of its attributes: u_k = Q_k beta_k and
v_kj = Q_k B_kj Q_j^T, Q_k an orthonormal basis of the sum-to-zero vectors over the L_k levels
(normalised Helmert contrasts), with beta_k ~ N(0, sigma^2 I), sigma = ``main_scale``, and
B_kj = tau_kj Z_kj, Z_kj standard normal, tau_kj ~ HalfNormal(``interaction_scale``) per pair
(non-centred; or one tau for all pairs, ``pair_scales="shared"``). So u_k ~ N(0, sigma^2 (I - 11'/L_k)) (a ``ZeroSumNormal``) and v_kj is zero
along both its axes: the prior of a GP with the additive (ANOVA) kernel sigma^2 sum_k H_k +
sum_{k<j} tau_kj^2 H_k * H_j of centred per-attribute kernels H_k = I - 11'/L_k, in weight
space. Unlike a one-hot design without constraints it has no directions (intercept up, every
level's effect down) that only the prior pins down: those ridges, and a learned scale per main
effect (the ridge sd x z = beta of a data-rich effect), made NUTS on the ACS data take hundreds
of leapfrog steps per draw. A continuous attribute's effect is a Gaussian-bump basis centred
over its distinct values. Log-scale effects w_k = Q_k omega_k tau'_k, omega standard normal,
tau'_k ~ HalfNormal(``scale_main_scale``); b ~ N(logit(global accuracy), ``intercept_sd``), c ~
N(``log_scale_prior``); with the confidence covariate slope ~ N(1, 0.5) on the logit
confidence centred at its pool mean (``confidence_offset`` = b - slope x that mean).

Computation: all effects of an arm are one row of a dense design ``G`` (arms x coefficients),
the likelihood uses only the labeled arms' rows, and mu, s of every arm are deterministics
(evaluated once per kept draw, not in every gradient). The design rows are shared variables,
so nutpie's numba code takes them as arguments instead of compiling them in as constants.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pbassess.errors import ConfigError
from pbassess.surface.arms import ArmCounts
from pbassess.surface.models import (
    LOG_SCALE_CAP,
    _beta_binomial_potential,
    _confidence_covariate,
    count_terms,
    global_accuracy_terms,
)

__all__ = ["AdditiveDesign", "additive_design", "additive_model", "sum_to_zero_basis"]

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


def _attribute_basis(values: np.ndarray, continuous: bool, n_basis: int) -> np.ndarray:
    """Rows (one per arm) of an attribute's sum-to-zero effect basis."""
    if continuous:
        x = np.asarray(values, float)
        uniq, inverse = np.unique(x, return_inverse=True)
        centers = np.unique(np.quantile(uniq, np.linspace(0, 1, n_basis)))
        width = max((centers[-1] - centers[0]) / max(len(centers) - 1, 1), 1e-9)
        bumps = np.exp(-0.5 * ((uniq[:, None] - centers[None, :]) / width) ** 2)
        table = bumps - bumps.mean(axis=0)
    else:
        uniq, inverse = np.unique(np.asarray(values).astype(str), return_inverse=True)
        table = sum_to_zero_basis(len(uniq))
    return table[inverse.ravel()]


def additive_design(arms: ArmCounts, *, interactions: bool = True, n_basis: int = 6) -> AdditiveDesign:
    """Sum-to-zero design of main effects and (optionally) pairwise interactions of the arms.

    A categorical attribute with L levels gives L - 1 columns (Helmert contrasts), a continuous
    one ``n_basis`` centred Gaussian bumps; a pair gives the row-wise products of its two
    attributes' columns.

    Examples
    --------
    >>> a = ArmCounts.from_arrays([1, 1, 1, 1], [1, 0, 1, 1], values=[[0, 0], [0, 1], [1, 0], [1, 2]],
    ...                           attributes=("sex", "cit"))
    >>> d = additive_design(a)
    >>> d.matrix.shape, d.names, d.block.tolist()
    ((4, 5), ('sex', 'cit', 'sex:cit'), [0, 1, 1, 2, 2])
    """
    mains = [_attribute_basis(arms.values[:, k], name in arms.continuous, n_basis)
             for k, name in enumerate(arms.attributes)]
    cols, block, names = [], [], []
    for k, x in enumerate(mains):
        cols.append(x)
        block += [len(names)] * x.shape[1]
        names.append(arms.attributes[k])
    n_main = len(names)
    for k in range(len(mains) if interactions else 0):
        for j in range(k + 1, len(mains)):
            x = (mains[k][:, :, None] * mains[j][:, None, :]).reshape(arms.n_arms, -1)
            cols.append(x)
            block += [len(names)] * x.shape[1]
            names.append(f"{arms.attributes[k]}:{arms.attributes[j]}")
    matrix = np.column_stack(cols) if cols else np.zeros((arms.n_arms, 0))
    return AdditiveDesign(matrix, np.asarray(block, dtype=np.int64), tuple(names), n_main)


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


def additive_model(arms: ArmCounts, *, covariate: str | None = None, main_scale: float = 1.0,
                   interaction_scale: float = 0.5, scale_main_scale: float = 0.5, interactions: bool = True,
                   intercept_sd: float = 1.5, log_scale_prior: tuple[float, float] = (np.log(30.0), 1.5),
                   n_basis: int = 6, counts_as_data: bool = False, pair_scales: str = "per-pair"):
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

    Examples
    --------
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
    with pm.Model() as model:
        loc = global_accuracy_terms(arms, counts_as_data)[1]
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
        pm.Deterministic("mu", mu_all)
        pm.Deterministic("scale", s_all)
    return model, arms.n, arms.correct
