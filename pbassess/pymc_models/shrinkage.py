"""The shrinkage calibration model (PyMC) and its :class:`~pbassess.inference.Spec`.

Per bin b, labeled counts ``n_b`` and ``k_b`` (correct), mean pool score ``s_b`` and pool share
``p_b``; a spike-and-slab prior on the bin shifts::

    logit(theta_b) = logit(s_b) + delta_b,   k_b ~ Binomial(n_b, theta_b),
    with probability p_calibrated:  delta_b = 0 for every bin      (exactly calibrated, ECE = 0),
    otherwise:  delta_b ~ Normal(mu, tau),  mu ~ Normal(0, mu_scale),  tau ~ HalfCauchy(tau_scale),
    ECE = sum_b p_b |theta_b - s_b|.

The model's meaning and its prior scales are explained in :mod:`pbassess.calibration.shrinkage`
(which also holds the numerical-integration engine of the same posterior). Here:
:func:`shrinkage_model` builds it for NUTS (non-centred slab; the spike indicator summed out of
the likelihood: ``log(p L_0 + (1 - p) L(delta))``, a Potential) and :class:`ShrinkageSpec` runs it
through :func:`pbassess.inference.fit` (NUTS only: no closed form), with one Bernoulli
log-likelihood value per labeled item given its bin's accuracy. The spike indicator is drawn
back per draw from its conditional probability ``p_spike = p L_0 / (p L_0 + (1 - p) L(delta))``
(a Deterministic of the model) with the fixed van der Corput sequence in base 2 as uniforms
(:func:`apply_spike`): reproducible without a seed, and stratified.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from pbassess.errors import ConfigError
from pbassess.inference.spec import Observations, Spec

__all__ = ["MU_SCALE", "P_CALIBRATED", "SHRINKAGE_NUTS_DEFAULTS", "TAU_SCALE", "ShrinkageSpec", "apply_spike",
           "check_bins", "check_prior", "shrinkage_model", "simulate_prior"]

#: Default sd of the slab's Normal prior of the common logit shift ``mu``.
MU_SCALE: float = 0.5
#: Default scale of the slab's half-Cauchy prior of the spread ``tau`` of the bin shifts.
TAU_SCALE: float = 0.3
#: Default prior probability that the model is exactly calibrated (every ``delta_b = 0``).
P_CALIBRATED: float = 0.1
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


def check_prior(mu_scale: float, tau_scale: float, p_calibrated: float) -> None:
    """Raise :class:`~pbassess.errors.ConfigError` unless the scales are positive and ``0 <= p_calibrated < 1``.

    Examples
    --------
    >>> check_prior(0.5, 0.3, 0.1)
    """
    if not (mu_scale > 0 and tau_scale > 0):
        raise ConfigError("mu_scale and tau_scale must be positive")
    if not 0 <= p_calibrated < 1:
        raise ConfigError(f"p_calibrated must lie in [0, 1), got {p_calibrated!r}")


def van_der_corput(n: int) -> np.ndarray:
    """The first ``n`` points of the base-2 van der Corput sequence (stratified uniforms in [0, 1)).

    Examples
    --------
    >>> van_der_corput(4).tolist()
    [0.0, 0.5, 0.25, 0.75]
    """
    i = np.arange(int(n), dtype=np.int64)
    out = np.zeros(int(n))
    base = 0.5
    while np.any(i):
        out += (i & 1) * base
        i >>= 1
        base /= 2
    return out


def apply_spike(accuracy: np.ndarray, ece: np.ndarray, p_spike: np.ndarray, bin_score: Any):
    """Mixture draws from slab draws: draw ``d`` is the spike (``accuracy = s``, ``ECE = 0``) when ``u_d < p_spike_d``.

    ``u`` is the van der Corput sequence over the flattened draws (chains then draws).

    Parameters
    ----------
    accuracy : ndarray, shape (..., B)
        Slab draws of the bin accuracies.
    ece : ndarray, shape (...)
        Slab draws of the ECE.
    p_spike : ndarray, shape (...)
        Conditional probability of the spike given each draw's slab parameters.
    bin_score : array_like, shape (B,)

    Returns
    -------
    (ndarray, ndarray)
        Accuracy and ECE draws of the spike-and-slab posterior.

    Examples
    --------
    >>> acc, ece = apply_spike(np.array([[0.6], [0.6]]), np.array([0.1, 0.1]), np.array([1.0, 0.0]), [0.7])
    >>> acc.ravel().tolist(), ece.tolist()
    ([0.7, 0.6], [0.0, 0.1])
    """
    p = np.asarray(p_spike, dtype=float)
    spike = (van_der_corput(p.size) < p.ravel()).reshape(p.shape)
    acc = np.where(spike[..., None], np.asarray(bin_score, dtype=float), accuracy)
    return acc, np.where(spike, 0.0, ece)


def simulate_prior(n: Any, bin_score: Any, n_simulations: int, rng: Any = None, *, mu_scale: float = MU_SCALE,
                   tau_scale: float = TAU_SCALE, p_calibrated: float = P_CALIBRATED):
    """Draws from the spike-and-slab prior and labeled counts simulated from them (for SBC).

    The likelihood is a Potential, which :func:`pymc.sample_prior_predictive` cannot simulate:
    this is the ``simulator`` of :func:`pbassess.inference.sbc.simulation_based_calibration`.
    The slab's ``mu`` and ``tau`` are drawn in every simulation (under the spike they play no
    part in the data, as in the model, where the spike indicator is summed out).

    Parameters
    ----------
    n : array_like, shape (B,)
        Labeled items per bin.
    bin_score : array_like, shape (B,)
    n_simulations : int
    rng : int or numpy.random.Generator, optional
    mu_scale, tau_scale, p_calibrated : float
        The prior.

    Returns
    -------
    (dict, dict)
        ``{"mu", "tau", "spike"}`` (n_simulations,) and ``{"correct"}`` (n_simulations, B).

    Examples
    --------
    >>> truth, data = simulate_prior([10, 20], [0.7, 0.9], 4, 0)
    >>> sorted(truth), data["correct"].shape
    (['mu', 'spike', 'tau'], (4, 2))
    """
    from scipy.special import expit, logit

    from pbassess.stats.sampling import as_generator

    check_prior(mu_scale, tau_scale, p_calibrated)
    gen = as_generator(rng)
    n_arr = np.asarray(n, dtype=np.int64)
    base = logit(np.asarray(bin_score, dtype=float))
    mu = gen.normal(0.0, mu_scale, int(n_simulations))
    tau = np.abs(tau_scale * gen.standard_cauchy(int(n_simulations)))
    spike = gen.uniform(size=int(n_simulations)) < p_calibrated
    delta = mu[:, None] + tau[:, None] * gen.standard_normal((int(n_simulations), n_arr.size))
    delta[spike] = 0.0
    return {"mu": mu, "tau": tau, "spike": spike}, {"correct": gen.binomial(n_arr, expit(base + delta))}


def shrinkage_model(n: Any, correct: Any, bin_score: Any, bin_weight: Any, *, mu_scale: float = MU_SCALE,
                    tau_scale: float = TAU_SCALE, p_calibrated: float = P_CALIBRATED, bin_coords: Any = None):
    """The PyMC model of the shrinkage calibration posterior (non-centred, for NUTS).

    Variables: ``mu``, ``tau``, ``z`` (bin), Deterministics ``delta``, ``accuracy`` (bin) and
    ``ece`` of the slab and ``p_spike`` (the probability of the spike given them); the Binomial
    likelihood of the labeled counts, summed over the spike indicator, is the Potential
    ``likelihood`` (:func:`apply_spike` turns the slab draws into the model's).

    Parameters
    ----------
    n, correct : array_like, shape (B,)
        Labeled and correct labeled items per bin.
    bin_score : array_like, shape (B,)
        Mean pool score per bin (strictly inside (0, 1)).
    bin_weight : array_like, shape (B,)
        Pool share per bin.
    mu_scale, tau_scale : float
        Prior scales (see :func:`pbassess.calibration.shrinkage_posterior`).
    p_calibrated : float
        Prior probability of the spike (exact calibration).
    bin_coords : sequence, optional
        Names of the bins (coords of dim ``bin``).

    Returns
    -------
    pymc.Model

    Examples
    --------
    >>> model = shrinkage_model([10, 20], [7, 18], [0.7, 0.9], [0.4, 0.6])
    >>> sorted(v.name for v in model.deterministics)
    ['accuracy', 'delta', 'ece', 'p_spike']
    """
    import pymc as pm
    import pytensor.tensor as pt
    from scipy.special import log_expit, logit

    n_arr, k_arr, s_arr, w_arr = check_bins(n, correct, bin_score, bin_weight)
    check_prior(mu_scale, tau_scale, p_calibrated)
    coords = {"bin": list(bin_coords) if bin_coords is not None else list(range(n_arr.size))}
    base = logit(s_arr)
    ll_spike = float(np.sum(k_arr * log_expit(base) + (n_arr - k_arr) * log_expit(-base)))
    with pm.Model(coords=coords) as model:
        mu = pm.Normal("mu", 0.0, mu_scale)
        tau = pm.HalfCauchy("tau", tau_scale)
        z = pm.Normal("z", 0.0, 1.0, dims="bin")
        delta = pm.Deterministic("delta", mu + tau * z, dims="bin")
        eta = base + delta
        theta = pm.Deterministic("accuracy", pm.math.sigmoid(eta), dims="bin")
        # Binomial log-likelihood without the constant log C(n, k), the same constant left out of ll_spike
        ll_slab = pt.sum(k_arr * -pt.softplus(-eta) + (n_arr - k_arr) * -pt.softplus(eta))
        if p_calibrated > 0:
            a = np.log(p_calibrated) + ll_spike
            b = np.log1p(-p_calibrated) + ll_slab
            total = pt.logaddexp(a, b)
            pm.Deterministic("p_spike", pt.exp(a - total))
        else:
            total = ll_slab
            pm.Deterministic("p_spike", pt.zeros(()))
        pm.Potential("likelihood", total)
        pm.Deterministic("ece", pm.math.sum(w_arr * pm.math.abs(theta - s_arr)))
    return model


class ShrinkageSpec(Spec):
    """The shrinkage calibration model for :func:`pbassess.inference.fit` (NUTS only).

    Reported: ``accuracy`` (bin) and ``ece`` of the spike-and-slab posterior (:func:`apply_spike`
    applied to the slab's draws), ``mu`` and ``tau`` (the slab's); the posterior also holds the
    model's other variables (``z``, ``delta``, ``p_spike``). Prior draws and the log prior are
    PyMC's (of the slab); the log-likelihood is one Bernoulli value per labeled item.

    Parameters
    ----------
    n, correct, bin_score, bin_weight : array_like, shape (B,)
        Labeled and correct labeled items, mean pool score and pool share per bin.
    mu_scale, tau_scale : float
        Prior scales.
    p_calibrated : float
        Prior probability of exact calibration.
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
                 tau_scale: float = TAU_SCALE, p_calibrated: float = P_CALIBRATED,
                 bin_coords: Sequence[Any] | None = None,
                 observations: Observations | None = None) -> None:
        n_arr, k_arr, self.bin_score, self.bin_weight = check_bins(n, correct, bin_score, bin_weight)
        self.n = np.round(n_arr).astype(np.int64)
        self.correct = np.round(k_arr).astype(np.int64)
        self.mu_scale, self.tau_scale, self.p_calibrated = float(mu_scale), float(tau_scale), float(p_calibrated)
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
                                          mu_scale=self.mu_scale, tau_scale=self.tau_scale,
                                          p_calibrated=self.p_calibrated, bin_coords=self.bins)
        return self._model

    def complete(self, draws: Mapping[str, np.ndarray]) -> dict[str, tuple[tuple[str, ...], np.ndarray]]:
        model = self.model()
        dims = model.named_vars_to_dims
        names = [v.name for v in model.free_RVs] + [v.name for v in model.deterministics]
        missing = [name for name in names if name not in draws]
        if missing:
            raise ConfigError(f"the draws hold no {', '.join(missing)}")
        out = {name: (tuple(dims.get(name, ())), np.asarray(draws[name], dtype=float)) for name in names}
        acc, ece = apply_spike(out["accuracy"][1], out["ece"][1], out["p_spike"][1], self.bin_score)
        out["accuracy"] = (out["accuracy"][0], acc)
        out["ece"] = (out["ece"][0], ece)
        return out

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
