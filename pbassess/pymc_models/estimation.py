"""The confidence-informed accuracy model of label-efficient estimation, and its :class:`~pbassess.inference.Spec`.

The pool is split into cells (a region crossed with an equal-mass confidence bin); cell c has
``N_c`` items in the pool, ``n_c`` of them labeled with ``k_c`` correct, and the model's mean
confidence ``s_c`` over the cell's pool::

    theta_c ~ Beta(mu_c tau, (1 - mu_c) tau),   logit mu_c = offset [+ u_r(c)] + slope * logit s_c,
    k_c ~ Binomial(n_c, theta_c),
    offset ~ Normal(0, 1.5),  slope ~ Normal(1, 1),  log tau ~ Normal(3, 2)      (:data:`HYPERPRIOR`)
    u_r ~ Normal(0, sigma),   sigma ~ HalfNormal(1)                               (region offsets)

The estimand is each region's **pool** accuracy: its labeled items are known, the unlabeled
ones are ``Binomial(N_c - n_c, theta_c)`` (a finite-population posterior).

:func:`confidence_prior_model` is the PyMC model over the labeled cells' counts with the
cells' accuracies integrated out (``BetaBinomial``: NUTS samples it without the funnel of a
hierarchical Beta). :class:`ConfidencePriorSpec` is the same model for
:func:`pbassess.inference.fit` (NUTS only: the hyperparameters have no closed-form posterior);
each posterior draw of the hyperparameters is completed by an exact draw of every cell's
accuracy from its conditional Beta (a Rao-Blackwellised, exact draw of the hierarchical
posterior), the region pool accuracies follow, and the log-likelihood is one Bernoulli value
per labeled item given its cell's accuracy (so PSIS-LOO leaves out one item).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from pbassess.errors import ConfigError
from pbassess.inference.spec import Observations, Spec

__all__ = ["ESTIMATION_NUTS_DEFAULTS", "HYPERPRIOR", "SIGMA_PRIOR_SCALE", "ConfidencePriorSpec",
           "confidence_prior_model"]

#: (mean, sd) of the Normal hyperpriors of offset, slope and log strength.
HYPERPRIOR: dict[str, tuple[float, float]] = {"offset": (0.0, 1.5), "slope": (1.0, 1.0), "log_strength": (3.0, 2.0)}
#: Scale of the HalfNormal prior of the region offsets' spread sigma.
SIGMA_PRIOR_SCALE = 1.0
#: NUTS defaults of the model under the user's ``sample_kwargs`` (the region offsets' funnel near sigma = 0).
ESTIMATION_NUTS_DEFAULTS: dict[str, Any] = {"target_accept": 0.95}

_CLIP = 1e-4


def _logit_conf(mean_conf: Any) -> np.ndarray:
    c = np.clip(np.asarray(mean_conf, dtype=float), _CLIP, 1 - _CLIP)
    return np.log(c) - np.log1p(-c)


def confidence_prior_model(n: Any, correct: Any, mean_conf: Any, region: Any = None, n_regions: int | None = None,
                           *, region_offsets: bool = False, regions: Sequence[Any] | None = None):
    """PyMC model of the labeled cells' counts given the confidence-informed hierarchical prior.

    ``offset``, ``slope``, ``log_strength`` with the hyperpriors of :data:`HYPERPRIOR`;
    ``correct ~ BetaBinomial(n, mu tau, (1 - mu) tau)`` over the labeled cells (dim
    ``labeled_cell``; the cells' accuracies integrated out). ``region_offsets`` adds
    ``region_offset`` (one per region, ``Normal(0, region_sd)``, non-centred through
    ``region_offset_z``) and ``region_sd ~ HalfNormal(1)``.

    Parameters
    ----------
    n, correct : array_like of int, shape (C,)
        Labeled and correct labeled items per cell (cells without labels are left out).
    mean_conf : array_like, shape (C,)
        Mean confidence of each cell's pool.
    region : array_like of int, shape (C,), optional
        Region of each cell (needed with ``region_offsets``).
    n_regions : int, optional
        Number of regions (default ``max(region) + 1``, or the number of ``regions``).
    region_offsets : bool
        A calibration offset per region.
    regions : sequence, optional
        Region names (coordinate of dim ``region``; default ``0..n_regions-1``).

    Returns
    -------
    pymc.Model

    Examples
    --------
    >>> sorted(v.name for v in confidence_prior_model([2, 2], [2, 1], [0.85, 0.65]).free_RVs)
    ['log_strength', 'offset', 'slope']
    >>> m = confidence_prior_model([2, 2], [2, 1], [0.85, 0.65], [0, 1], region_offsets=True)
    >>> sorted(v.name for v in m.free_RVs)
    ['log_strength', 'offset', 'region_offset_z', 'region_sd', 'slope']
    """
    import pymc as pm

    n_arr = np.asarray(n, dtype=np.int64)
    k_arr = np.asarray(correct, dtype=np.int64)
    conf = np.asarray(mean_conf, dtype=float)
    reg = np.zeros(n_arr.size, dtype=np.int64) if region is None else np.asarray(region, dtype=np.int64)
    if not (n_arr.shape == k_arr.shape == conf.shape == reg.shape) or n_arr.ndim != 1:
        raise ConfigError("n, correct, mean_conf and region must have one value per cell")
    if (k_arr < 0).any() or (k_arr > n_arr).any():
        raise ConfigError("each cell needs 0 <= correct <= n")
    used = n_arr > 0
    if not used.any():
        raise ConfigError("the Bayesian estimate needs at least one labeled item")
    if n_regions is None:
        n_regions = len(regions) if regions is not None else int(reg.max()) + 1
    names = list(range(int(n_regions))) if regions is None else list(regions)
    if len(names) != int(n_regions) or (reg.size and int(reg.max()) >= len(names)):
        raise ConfigError(f"{len(names)} region names for {n_regions} regions (largest region index {int(reg.max())})")
    x = _logit_conf(conf[used])
    with pm.Model(coords={"labeled_cell": np.flatnonzero(used), "region": names}) as model:
        offset = pm.Normal("offset", *HYPERPRIOR["offset"])
        slope = pm.Normal("slope", *HYPERPRIOR["slope"])
        log_strength = pm.Normal("log_strength", *HYPERPRIOR["log_strength"])
        eta = offset + slope * x
        if region_offsets:
            region_sd = pm.HalfNormal("region_sd", SIGMA_PRIOR_SCALE)
            z = pm.Normal("region_offset_z", 0.0, 1.0, dims="region")
            region_offset = pm.Deterministic("region_offset", region_sd * z, dims="region")
            eta = eta + region_offset[reg[used]]
        mu = pm.math.sigmoid(eta)
        tau = pm.math.exp(log_strength)
        pm.BetaBinomial("correct", n=n_arr[used], alpha=mu * tau, beta=(1 - mu) * tau,
                        observed=k_arr[used], dims="labeled_cell")
    return model


class ConfidencePriorSpec(Spec):
    """The confidence-informed accuracy model (module docstring) for :func:`pbassess.inference.fit` (NUTS only).

    Reported: ``accuracy`` (each region's pool accuracy, dim ``region``), ``offset``, ``slope``,
    ``strength`` and, with region offsets, ``region_sd`` and ``region_offset``. The posterior
    also holds the model's free variables and ``cell_accuracy`` (dim ``cell``), each cell's
    accuracy drawn exactly from its conditional Beta given the hyperparameters. Prior draws are
    exact (NumPy) draws of the same variables; the log prior is PyMC's.

    Parameters
    ----------
    n_pool, n, correct : array_like of int, shape (C,)
        Items in the pool, labeled items and correct labeled items per cell.
    mean_conf : array_like, shape (C,)
        Mean confidence of each cell's pool.
    region : array_like of int, shape (C,)
        Region of each cell.
    regions : sequence of str
        Region names.
    region_offsets : bool
        A calibration offset per region (asks for labels in two or more regions to be useful).
    observations : Observations, optional
        The labeled items (cell index in ``0..C-1``, correct 1/0); without them the
        log-likelihood is one Binomial value per labeled cell.
    seed : int, optional
        Seed of the exact draws that complete the hyperparameters (cell accuracies, unlabeled items).

    Examples
    --------
    >>> spec = ConfidencePriorSpec([50, 50], [10, 5], [9, 3], [0.9, 0.7], [0, 0], ["all"], seed=0)
    >>> spec.has_conjugate, sorted(spec.reported)
    (False, ['accuracy', 'offset', 'slope', 'strength'])
    >>> prior = spec.complete({k: v.reshape(4, 25, *v.shape[1:])
    ...                        for k, v in spec.prior_draws(100, np.random.default_rng(0)).items()})
    >>> prior["accuracy"][0], prior["cell_accuracy"][1].shape
    (('region',), (4, 25, 2))
    """

    name = "confidence-informed estimate"
    observed_name = "correct"
    nuts_defaults = ESTIMATION_NUTS_DEFAULTS

    def __init__(self, n_pool: Any, n: Any, correct: Any, mean_conf: Any, region: Any, regions: Sequence[Any], *,
                 region_offsets: bool = False, observations: Observations | None = None, seed: Any = None) -> None:
        self.n_pool = np.asarray(n_pool, dtype=np.int64)
        self.n = np.asarray(n, dtype=np.int64)
        self.correct = np.asarray(correct, dtype=np.int64)
        self.mean_conf = np.asarray(mean_conf, dtype=float)
        self.region = np.asarray(region, dtype=np.int64)
        self.regions = [str(r) for r in regions]
        if not (self.n_pool.shape == self.n.shape == self.correct.shape == self.mean_conf.shape == self.region.shape):
            raise ConfigError("n_pool, n, correct, mean_conf and region must have one value per cell")
        if (self.n > self.n_pool).any():
            raise ConfigError("a cell has more labeled items than items")
        if self.region.size and int(self.region.max()) >= len(self.regions):
            raise ConfigError(f"a cell's region {int(self.region.max())} is out of range ({len(self.regions)} regions)")
        self.region_offsets = bool(region_offsets)
        self.observations = observations
        if observations is not None and observations.size and int(observations.cell.max()) >= self.n.size:
            raise ConfigError(f"an item's cell index {int(observations.cell.max())} is out of range "
                              f"({self.n.size} cells)")
        self._rng = np.random.default_rng(seed)
        self._model = None
        self.cells = np.arange(self.n.size)
        self.coords = {"region": self.regions, "cell": self.cells, "labeled_cell": np.flatnonzero(self.n > 0)}
        self.reported = {"accuracy": ("region",), "offset": (), "slope": (), "strength": ()}
        if self.region_offsets:
            self.reported.update({"region_sd": (), "region_offset": ("region",)})
        self.model()  # validates the counts

    @property
    def has_conjugate(self) -> bool:
        return False

    # -- the model ---------------------------------------------------------------------
    def model(self):
        if self._model is None:
            self._model = confidence_prior_model(self.n, self.correct, self.mean_conf, self.region, len(self.regions),
                                                 region_offsets=self.region_offsets, regions=self.regions)
        return self._model

    def _free(self) -> dict[str, tuple[str, ...]]:
        names = {"offset": (), "slope": (), "log_strength": ()}
        if self.region_offsets:
            names.update({"region_sd": (), "region_offset_z": ("region",), "region_offset": ("region",)})
        return names

    def prior_draws(self, n_draws: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Exact draws from the prior: hyperparameters, then every cell's accuracy and every region's pool accuracy."""
        out = {name: rng.normal(*HYPERPRIOR[name], size=n_draws) for name in ("offset", "slope", "log_strength")}
        if self.region_offsets:
            out["region_sd"] = np.abs(rng.normal(0.0, SIGMA_PRIOR_SCALE, size=n_draws))
            out["region_offset_z"] = rng.standard_normal((n_draws, len(self.regions)))
            out["region_offset"] = out["region_sd"][:, None] * out["region_offset_z"]
        a0, b0 = self._beta_params(out)
        theta = rng.beta(a0, b0)
        out["cell_accuracy"] = theta
        # no item is known under the prior: every item of the pool is a Bernoulli draw of its cell
        out["accuracy"] = self._region_share(rng.binomial(self.n_pool, theta))
        return out

    def _beta_params(self, draws: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Prior Beta(mu_c tau, (1 - mu_c) tau) of every cell under every draw: arrays (..., C)."""
        from scipy import special

        eta = np.asarray(draws["offset"], dtype=float)[..., None] + \
            np.asarray(draws["slope"], dtype=float)[..., None] * _logit_conf(self.mean_conf)
        if self.region_offsets:
            eta = eta + np.asarray(draws["region_offset"], dtype=float)[..., self.region]
        mu = np.clip(special.expit(eta), 1e-9, 1 - 1e-9)
        tau = np.exp(np.asarray(draws["log_strength"], dtype=float))[..., None]
        return mu * tau, (1 - mu) * tau

    def _region_share(self, correct_per_cell: np.ndarray) -> np.ndarray:
        """Correct items per cell (..., C) to each region's pool accuracy (..., R)."""
        member = np.zeros((self.n.size, len(self.regions)))
        member[np.arange(self.n.size), self.region] = 1.0
        size = self.n_pool @ member
        with np.errstate(invalid="ignore", divide="ignore"):
            return (correct_per_cell @ member) / size

    def complete(self, draws: Mapping[str, np.ndarray]) -> dict[str, tuple[tuple[str, ...], np.ndarray]]:
        out = {name: (dims, np.asarray(draws[name], dtype=float)) for name, dims in self._free().items()}
        out["strength"] = ((), np.exp(out["log_strength"][1]))
        if "cell_accuracy" in draws:  # exact prior draws come complete
            theta = np.asarray(draws["cell_accuracy"], dtype=float)
            acc = np.asarray(draws["accuracy"], dtype=float)
        else:  # posterior: each cell's accuracy from its conditional Beta, the unlabeled items from it
            a0, b0 = self._beta_params(draws)
            theta = self._rng.beta(a0 + self.correct, b0 + self.n - self.correct)
            acc = self._region_share(self._rng.binomial(self.n_pool - self.n, theta) + self.correct)
        out["cell_accuracy"] = (("cell",), theta)
        out["accuracy"] = (("region",), acc)
        return out

    def log_likelihood(self, draws, per_item):
        from pbassess.inference.trees import bernoulli_log_likelihood

        return bernoulli_log_likelihood(draws["cell_accuracy"], self.n, self.correct, self.observations, per_item)

    def log_prior(self, draws):
        return None  # PyMC's own (pm.compute_log_prior on the model)

    def observed_data(self) -> xr.Dataset:
        from pbassess.inference.trees import bernoulli_observed_data

        return bernoulli_observed_data(self.observed_name, self.n, self.correct, self.observations)

    def constant_data(self) -> xr.Dataset:
        data: dict[str, Any] = {
            "n_pool": ("cell", self.n_pool), "n_labeled": ("cell", self.n), "n_correct": ("cell", self.correct),
            "mean_confidence": ("cell", self.mean_conf),
            "cell_region": ("cell", np.asarray(self.regions, dtype=object)[self.region]),
        }
        coords: dict[str, Any] = {"cell": self.cells}
        if self.observations is not None:
            data["item_cell"] = ("item", self.observations.cell)
            coords["item"] = self.observations.item
        return xr.Dataset(data, coords=coords)

    def cell_n(self) -> np.ndarray:
        return self.n
