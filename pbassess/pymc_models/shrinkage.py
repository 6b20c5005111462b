"""The shrinkage calibration model (PyMC) and its :class:`~pbassess.inference.Spec`.

Per bin b, labeled counts ``n_b`` and ``k_b`` (correct), mean pool score ``s_b`` and pool share
``p_b``::

    logit(theta_b) = logit(s_b) + delta_b,   delta_b ~ Normal(mu, tau),   k_b ~ Binomial(n_b, theta_b),
    mu ~ Normal(0, lam),   lam ~ HalfCauchy(mu_scale),   tau ~ HalfCauchy(tau_scale),
    ECE = sum_b p_b |theta_b - s_b|.

The model's meaning and its prior scales are explained in :mod:`pbassess.calibration.shrinkage`
(which also holds the numerical-integration engine of the same posterior). Here:
:func:`shrinkage_model` builds it (non-centred, for NUTS) and :class:`ShrinkageSpec` runs it
through :func:`pbassess.inference.fit` (NUTS only: no closed form), with one Bernoulli
log-likelihood value per labeled item given its bin's accuracy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from pbassess.errors import ConfigError
from pbassess.inference.spec import Observations, Spec

__all__ = ["MU_SCALE", "SHRINKAGE_NUTS_DEFAULTS", "TAU_SCALE", "ShrinkageSpec", "check_bins", "shrinkage_model"]

#: Default scale of the horseshoe prior of the common logit shift ``mu``.
MU_SCALE: float = 0.03
#: Default scale of the half-Cauchy prior of the spread ``tau`` of the bin shifts.
TAU_SCALE: float = 0.02
#: NUTS defaults under the user's ``sample_kwargs`` (the funnels of ``tau`` and of the horseshoe scale near 0).
SHRINKAGE_NUTS_DEFAULTS: dict[str, Any] = {"target_accept": 0.95}


def check_bins(n: Any, correct: Any, bin_score: Any, bin_weight: Any):
    """Validated float arrays ``(n, correct, bin_score, bin_weight)``, one value per bin.

    Examples
    --------
    >>> [a.tolist() for a in check_bins([2, 3], [1, 3], [0.6, 0.9], [0.5, 0.5])]
    [[2.0, 3.0], [1.0, 3.0], [0.6, 0.9], [0.5, 0.5]]
    """
    n_arr = np.asarray(n, dtype=float).ravel()
    k_arr = np.asarray(correct, dtype=float).ravel()
    s_arr = np.asarray(bin_score, dtype=float).ravel()
    w_arr = np.asarray(bin_weight, dtype=float).ravel()
    if not (n_arr.shape == k_arr.shape == s_arr.shape == w_arr.shape):
        raise ConfigError("n, correct, bin_score and bin_weight must have one value per bin")
    if (n_arr < 0).any() or (k_arr < 0).any() or (k_arr > n_arr).any():
        raise ConfigError("each bin needs 0 <= correct <= n")
    if not np.all((s_arr > 0) & (s_arr < 1)):
        raise ConfigError("bin scores must lie strictly between 0 and 1 (clip confidences of exactly 1)")
    if (w_arr < 0).any() or not np.isclose(w_arr.sum(), 1.0):
        raise ConfigError("bin weights must be non-negative and sum to one")
    return n_arr, k_arr, s_arr, w_arr


def shrinkage_model(n: Any, correct: Any, bin_score: Any, bin_weight: Any, *, mu_scale: float = MU_SCALE,
                    tau_scale: float = TAU_SCALE, bin_coords: Any = None):
    """The PyMC model of the shrinkage calibration posterior (non-centred, for NUTS).

    Variables: ``mu_scale``, ``mu_z``, ``tau``, ``z`` (bin), Deterministics ``mu``, ``delta``,
    ``accuracy`` (bin) and ``ece``; the observed ``correct`` is Binomial over the labeled counts.

    Examples
    --------
    >>> model = shrinkage_model([10, 20], [7, 18], [0.7, 0.9], [0.4, 0.6])
    >>> sorted(v.name for v in model.deterministics)
    ['accuracy', 'delta', 'ece', 'mu']
    """
    import pymc as pm
    from scipy.special import logit

    n_arr, k_arr, s_arr, w_arr = check_bins(n, correct, bin_score, bin_weight)
    if not (mu_scale > 0 and tau_scale > 0):
        raise ConfigError("mu_scale and tau_scale must be positive")
    coords = {"bin": list(bin_coords) if bin_coords is not None else list(range(n_arr.size))}
    with pm.Model(coords=coords) as model:
        lam = pm.HalfCauchy("mu_scale", mu_scale)
        mu = pm.Deterministic("mu", lam * pm.Normal("mu_z", 0.0, 1.0))
        tau = pm.HalfCauchy("tau", tau_scale)
        z = pm.Normal("z", 0.0, 1.0, dims="bin")
        delta = pm.Deterministic("delta", mu + tau * z, dims="bin")
        theta = pm.Deterministic("accuracy", pm.math.sigmoid(logit(s_arr) + delta), dims="bin")
        pm.Binomial("correct", n=n_arr.astype(np.int64), p=theta, observed=k_arr.astype(np.int64), dims="bin")
        pm.Deterministic("ece", pm.math.sum(w_arr * pm.math.abs(theta - s_arr)))
    return model


class ShrinkageSpec(Spec):
    """The shrinkage calibration model for :func:`pbassess.inference.fit` (NUTS only).

    Reported: ``accuracy`` (bin), ``ece``, ``mu`` and ``tau``; the posterior also holds the
    model's other variables (``mu_scale``, ``mu_z``, ``z``, ``delta``). Prior draws and the log
    prior are PyMC's; the log-likelihood is one Bernoulli value per labeled item.

    Parameters
    ----------
    n, correct, bin_score, bin_weight : array_like, shape (B,)
        Labeled and correct labeled items, mean pool score and pool share per bin.
    mu_scale, tau_scale : float
        Prior scales.
    bin_coords : sequence, optional
        Bin names (default ``0..B-1``).
    observations : Observations, optional
        The labeled items (bin index, correct 1/0); without them the log-likelihood is one
        Binomial value per labeled bin.

    Examples
    --------
    >>> spec = ShrinkageSpec([10, 20], [7, 18], [0.7, 0.9], [0.4, 0.6])
    >>> spec.has_conjugate, sorted(spec.reported)
    (False, ['accuracy', 'ece', 'mu', 'tau'])
    """

    name = "shrinkage calibration"
    observed_name = "correct"
    nuts_defaults = SHRINKAGE_NUTS_DEFAULTS

    def __init__(self, n: Any, correct: Any, bin_score: Any, bin_weight: Any, *, mu_scale: float = MU_SCALE,
                 tau_scale: float = TAU_SCALE, bin_coords: Sequence[Any] | None = None,
                 observations: Observations | None = None) -> None:
        n_arr, k_arr, self.bin_score, self.bin_weight = check_bins(n, correct, bin_score, bin_weight)
        self.n = np.round(n_arr).astype(np.int64)
        self.correct = np.round(k_arr).astype(np.int64)
        self.mu_scale, self.tau_scale = float(mu_scale), float(tau_scale)
        self.bins = list(range(self.n.size)) if bin_coords is None else list(bin_coords)
        if len(self.bins) != self.n.size:
            raise ConfigError(f"{len(self.bins)} bin names for {self.n.size} bins")
        self.observations = observations
        if observations is not None and observations.size and int(observations.cell.max()) >= self.n.size:
            raise ConfigError(f"an item's bin index {int(observations.cell.max())} is out of range ({self.n.size} bins)")
        self.coords = {"bin": self.bins}
        self.reported = {"accuracy": ("bin",), "ece": (), "mu": (), "tau": ()}
        self._model = None
        self.model()  # validates the prior scales

    @property
    def has_conjugate(self) -> bool:
        return False

    def prior_draws(self, n_draws, rng):
        return None  # PyMC's prior draws of the model's variables

    def model(self):
        if self._model is None:
            self._model = shrinkage_model(self.n, self.correct, self.bin_score, self.bin_weight,
                                          mu_scale=self.mu_scale, tau_scale=self.tau_scale, bin_coords=self.bins)
        return self._model

    def complete(self, draws: Mapping[str, np.ndarray]) -> dict[str, tuple[tuple[str, ...], np.ndarray]]:
        model = self.model()
        dims = model.named_vars_to_dims
        names = [v.name for v in model.free_RVs] + [v.name for v in model.deterministics]
        missing = [name for name in names if name not in draws]
        if missing:
            raise ConfigError(f"the draws hold no {', '.join(missing)}")
        return {name: (tuple(dims.get(name, ())), np.asarray(draws[name], dtype=float)) for name in names}

    def log_likelihood(self, draws, per_item):
        from pbassess.inference.trees import bernoulli_log_likelihood

        return bernoulli_log_likelihood(draws["accuracy"], self.n, self.correct, self.observations, per_item,
                                        dim="bin", names=self.bins)

    def log_prior(self, draws):
        return None  # PyMC's own (pm.compute_log_prior on the model)

    def observed_data(self) -> xr.Dataset:
        from pbassess.inference.trees import bernoulli_observed_data

        return bernoulli_observed_data(self.observed_name, self.n, self.correct, self.observations, dim="bin",
                                       names=self.bins)

    def constant_data(self) -> xr.Dataset:
        data: dict[str, Any] = {"n": ("bin", self.n), "n_correct": ("bin", self.correct),
                                "bin_score": ("bin", self.bin_score), "bin_weight": ("bin", self.bin_weight)}
        coords: dict[str, Any] = {"bin": self.bins}
        if self.observations is not None:
            data["item_cell"] = ("item", self.observations.cell)
            coords["item"] = self.observations.item
        return xr.Dataset(data, coords=coords)

    def cell_n(self) -> np.ndarray:
        return self.n
