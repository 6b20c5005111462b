"""A shrinkage calibration model: a spike at perfect calibration and a slab of bin gaps.

Per bin b, labeled counts ``n_b`` and ``k_b`` (correct), mean pool score ``s_b`` and pool
share ``p_b``::

    logit(theta_b) = logit(s_b) + delta_b,   k_b ~ Binomial(n_b, theta_b),
    with probability p_calibrated (0.1):  delta_b = 0 for every bin   (the spike: ECE = 0 exactly),
    otherwise (the slab):  delta_b ~ Normal(mu, tau),  mu ~ Normal(0, 0.5),  tau ~ HalfCauchy(0.3),
    ECE = sum_b p_b |theta_b - s_b|.

Why this prior (issue 20). The model before it had no spike and put horseshoe-type priors of
scale 0.03 on ``mu`` and 0.02 on ``tau``, so that ``P(ECE < eps)`` could approach one for a
calibrated model; but those priors pulled real gaps towards 0: its 95% HDI covered a true ECE
of 0.03 in 27 of 40 and of 0.05 in 29 of 40 simulations at 500 labels, and could not contain an
ECE of exactly 0. The spike now carries "calibrated": a calibrated model's posterior puts mass
on ECE = 0 exactly (so the HDI reaches 0), while the slab's scales (a common shift of about
0.5 logit, a spread of 0.3 logit between bins) are wide enough not to pull a real gap of
0.03-0.05 towards 0. ``benchmarks/calibration_decision.py --coverage`` measures the 95% HDI's
coverage of the true (binned, pool) ECE at 500 labels for true ECE 0, 0.01, 0.03 and 0.05 on
two confidence distributions (docs/calibration.md gives the figures). 500 labels cannot tell an
ECE of 0 from one of 0.02 well, so ``P(ECE < eps)`` is reported with its operating
characteristics (:func:`operating_characteristics`).

Two engines give the same posterior: :func:`shrinkage_posterior` integrates it numerically
(a grid over ``delta`` of step 0.0025 logit, Gaussian convolutions for every ``tau`` on a
log grid and every ``mu`` on the ``delta`` grid, then exact conditional draws of each
``delta_b``; the spike's posterior probability from the two marginal likelihoods): fast
enough for simulation studies; :func:`shrinkage_model` is the PyMC model (non-centred slab, the
spike summed out of the likelihood; it lives in :mod:`pbassess.pymc_models.shrinkage` with its
:class:`~pbassess.pymc_models.shrinkage.ShrinkageSpec`) for NUTS through
:func:`pbassess.inference.fit`: :func:`assess_calibration_shrinkage` fits a pool's labeled items
(a :class:`ShrinkageResult` on the DataTree contract), :func:`sample_shrinkage` bin counts.
Tests check that the two engines agree.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from scipy.signal import fftconvolve
from scipy.special import expit, log_expit, logit, ndtr

from pbassess.constants import CI_PROB
from pbassess.errors import ConfigError
from pbassess.pymc_models.shrinkage import (
    MU_SCALE,
    P_CALIBRATED,
    TAU_SCALE,
    ShrinkageSpec,
    check_bins,
    check_prior,
    shrinkage_model,
)
from pbassess.results.base import AssessmentResult
from pbassess.stats.sampling import as_generator

__all__ = ["DEFAULT_EPS", "MU_SCALE", "OC_REPS", "P_CALIBRATED", "TAU_SCALE", "ShrinkageResult", "assess_calibration_shrinkage", "sample_shrinkage",
           "shrinkage_model", "shrinkage_posterior"]

_STEP = 0.0025
_TAUS = np.concatenate([[0.0], np.geomspace(1e-3, 5.0, 80)])


def _delta_grid(n, k, base, step=_STEP) -> np.ndarray:
    with np.errstate(divide="ignore"):
        centre = logit((k + 0.5) / (n + 1.0)) - base
    lo = min(-4.0, float(centre[n > 0].min(initial=0.0)) - 3.0)
    hi = max(4.0, float(centre[n > 0].max(initial=0.0)) + 3.0)
    return np.arange(lo, hi + step / 2, step)


def _log_lik(grid, n, k, base) -> np.ndarray:
    """Binomial log-likelihood of each bin on the delta grid, minus its maximum: shape (B, G)."""
    eta = base[:, None] + grid[None, :]
    ll = k[:, None] * log_expit(eta) + (n - k)[:, None] * log_expit(-eta)
    return ll - ll.max(axis=1, keepdims=True)


def _smoothed(lik: np.ndarray, tau: float, step: float = _STEP) -> np.ndarray:
    """``int L_b(delta) Normal(delta; mu, tau) d delta`` for every mu on the grid."""
    if tau < step / 2:
        return lik
    half = int(np.ceil(7 * tau / step))
    x = np.arange(-half, half + 1) * step
    kernel = np.exp(-0.5 * (x / tau) ** 2)
    kernel /= kernel.sum()
    return fftconvolve(lik, kernel[None, :], mode="same", axes=1)


def _log_tau_cells(scale: float) -> np.ndarray:
    """Log prior mass under ``tau ~ HalfCauchy(scale)`` of the cell of each ``_TAUS`` value (cells end
    half-way between grid values; the last one runs to infinity)."""
    edges = np.concatenate([[0.0], (_TAUS[1:] + _TAUS[:-1]) / 2, [np.inf]])
    return np.log(np.clip(np.diff(2 / np.pi * np.arctan(edges / scale)), 1e-300, None))


def _hyper_log_post(grid, lik, mu_scale, tau_scale, step=_STEP) -> np.ndarray:
    """Log posterior of (tau, mu) under the slab on ``_TAUS`` x grid (prior cell masses included)."""
    log_prior_tau = _log_tau_cells(tau_scale)
    # cell masses of mu ~ Normal(0, mu_scale): the posterior's total is the slab's marginal likelihood
    log_prior_mu = np.log(np.clip(ndtr((grid + step / 2) / mu_scale) - ndtr((grid - step / 2) / mu_scale), 1e-300, None))
    out = np.empty((_TAUS.size, grid.size))
    for j, tau in enumerate(_TAUS):
        out[j] = np.log(np.clip(_smoothed(lik, tau, step), 1e-300, None)).sum(axis=0) + log_prior_mu + log_prior_tau[j]
    return out


def shrinkage_posterior(n: Any, correct: Any, bin_score: Any, bin_weight: Any, *, n_draws: int = 4000,
                        seed: Any = None, mu_scale: float = MU_SCALE, tau_scale: float = TAU_SCALE,
                        p_calibrated: float = P_CALIBRATED, grid_step: float = _STEP) -> dict[str, np.ndarray]:
    r"""Posterior draws of the shrinkage calibration model by numerical integration.

    Parameters
    ----------
    n, correct : array_like, shape (B,)
        Labeled items and correct labeled items per bin.
    bin_score : array_like, shape (B,)
        Mean pool score ``s_b`` per bin (strictly inside (0, 1)).
    bin_weight : array_like, shape (B,)
        Pool share ``p_b`` per bin (sums to one).
    n_draws : int
    seed : int or numpy.random.Generator, optional
    mu_scale, tau_scale : float
        The slab's prior scales (see the module docstring).
    p_calibrated : float
        Prior probability of the spike, exact calibration (0 gives the slab alone).
    grid_step : float
        Step of the ``delta`` grid in logit units (default 0.0025). The operating
        characteristics' simulations (:func:`operating_characteristics`)
        use 0.02, about six times faster; P(ECE < eps) and the spike's probability then move by
        about 0.01 (tested).

    Returns
    -------
    dict
        ``mu``, ``tau`` (draws,), ``delta``, ``accuracy`` (draws, B), ``ece`` (draws,),
        ``spike`` (draws,: whether the draw is the spike, where ``mu = tau = delta = 0``) and
        ``p_spike`` (the posterior probability of the spike, a float).

    Notes
    -----
    Bin :math:`b` has :math:`y_b` correct of :math:`n_b` labeled items, mean pool score :math:`s_b`
    and pool share :math:`p_b`:

    .. math::

       \operatorname{logit} \theta_b = \operatorname{logit} s_b + \delta_b, \qquad
       y_b \mid \theta_b \sim \mathrm{Binomial}(n_b, \theta_b),

       \delta = 0 \text{ with probability } \pi, \quad \text{else} \quad
       \delta_b \sim \mathcal{N}(\mu, \tau^2), \quad \mu \sim \mathcal{N}(0, s_\mu^2),
       \quad \tau \sim \mathrm{HalfCauchy}(s_\tau),

       \mathrm{ECE} = \sum_b p_b\, \lvert \theta_b - s_b \rvert ,

    with :math:`s_\mu` = ``mu_scale``, :math:`s_\tau` = ``tau_scale`` and :math:`\pi` =
    ``p_calibrated``. :math:`\delta_b = 0` for every bin (the spike) is perfect calibration. This function integrates the
    posterior numerically; :func:`sample_shrinkage` samples the same model with NUTS.

    Examples
    --------
    >>> post = shrinkage_posterior([500, 500], [350, 450], [0.7, 0.9], [0.5, 0.5], n_draws=1000, seed=0)
    >>> bool((post["ece"] < 0.02).mean() > 0.5), post["accuracy"].shape
    (True, (1000, 2))
    """
    n_arr, k_arr, s_arr, w_arr = check_bins(n, correct, bin_score, bin_weight)
    check_prior(mu_scale, tau_scale, p_calibrated)
    rng = as_generator(seed)
    base = logit(s_arr)
    step = float(grid_step)
    if not 0 < step <= 0.05:
        raise ConfigError(f"grid_step must lie in (0, 0.05], got {grid_step!r}")
    grid = _delta_grid(n_arr, k_arr, base, step)
    lik = np.exp(_log_lik(grid, n_arr, k_arr, base))
    log_post = _hyper_log_post(grid, lik, mu_scale, tau_scale, step)
    top = log_post.max()
    prob = np.exp(log_post - top).ravel()
    n_draws = int(n_draws)
    p_spike = 0.0
    if p_calibrated > 0:
        # marginal likelihoods relative to the same per-bin maxima as ``lik``: the spike's is L(delta = 0),
        # the slab's the sum of the (tau, mu) cells' unnormalised posterior masses
        eta = base[:, None] + grid[None, :]
        ll_max = (k_arr[:, None] * log_expit(eta) + (n_arr - k_arr)[:, None] * log_expit(-eta)).max(axis=1)
        ll0 = float(np.sum(k_arr * log_expit(base) + (n_arr - k_arr) * log_expit(-base) - ll_max))
        log_slab = top + np.log(prob.sum())
        p_spike = float(expit(np.log(p_calibrated) + ll0 - np.log1p(-p_calibrated) - log_slab))
    spike = rng.uniform(size=n_draws) < p_spike
    cells = rng.choice(prob.size, size=n_draws, p=prob / prob.sum())
    tau_idx, mu_idx = np.divmod(cells, grid.size)
    tau = _TAUS[tau_idx]
    delta = _conditional_deltas(grid, lik, mu_idx, tau, rng, step)
    mu = grid[mu_idx] + rng.uniform(-step / 2, step / 2, size=n_draws)
    mu[spike], tau[spike], delta[spike] = 0.0, 0.0, 0.0
    theta = expit(base[None, :] + delta)
    theta[spike] = s_arr  # exactly (expit(logit(s)) differs from s in the last bits)
    return {"mu": mu, "tau": tau, "delta": delta, "accuracy": theta,
            "ece": np.sum(w_arr * np.abs(theta - s_arr), axis=-1), "spike": spike, "p_spike": p_spike}


def _conditional_deltas(grid, lik, mu_idx, tau, rng, step=_STEP) -> np.ndarray:
    """Exact draws of delta_b | mu, tau, data on the grid (prior draws where tau is below the step).

    Draws sharing a (mu, tau) cell share its conditional distribution, computed once per cell.
    """
    n_bins = lik.shape[0]
    mu = grid[mu_idx]
    out = mu[:, None] + tau[:, None] * rng.standard_normal((mu.size, n_bins))
    wide = tau >= step
    if not wide.any():
        return out
    cells, inverse = np.unique(np.column_stack([mu_idx[wide], tau[wide]]), axis=0, return_inverse=True)
    rows = np.flatnonzero(wide)
    for c, (m_i, t) in enumerate(cells):
        members = rows[inverse.ravel() == c]
        centre = grid[int(m_i)]
        lo, hi = np.searchsorted(grid, centre - 8 * t), np.searchsorted(grid, centre + 8 * t)
        if hi - lo < 2:
            continue
        g = grid[lo:hi]
        cdf = np.cumsum(lik[:, lo:hi] * np.exp(-0.5 * ((g - centre) / t) ** 2)[None, :], axis=1)
        u = rng.uniform(size=(members.size, n_bins)) * cdf[None, :, -1]
        pick = np.minimum((cdf[None, :, :] < u[:, :, None]).sum(axis=2), g.size - 1)
        out[members] = g[pick] + rng.uniform(-step / 2, step / 2, size=pick.shape)
    return out


def sample_shrinkage(n: Any, correct: Any, bin_score: Any, bin_weight: Any, *, seed: Any = None,
                     sample_kwargs: dict | None = None, **prior: Any):
    """NUTS on :func:`shrinkage_model` over bin counts, through :func:`pbassess.inference.fit`.

    Returns the DataTree (the fit layer's contract; the log-likelihood is one value per labeled
    item, the items the counts imply); ``target_accept`` defaults to 0.95 (the funnels of
    ``tau`` and of the horseshoe scale near 0). Check ``pbassess.inference.diagnostics(idata)``
    before use. :func:`assess_calibration_shrinkage` fits a pool's own labeled items.

    Parameters
    ----------
    n, correct : array_like, shape (B,)
        Labeled and correct labeled items per bin.
    bin_score : array_like, shape (B,)
        Mean pool score per bin (strictly inside (0, 1)).
    bin_weight : array_like, shape (B,)
        Pool share per bin.
    seed : int or numpy.random.Generator, optional
    sample_kwargs : dict, optional
        :func:`pymc.sample` options.
    **prior
        ``mu_scale``, ``tau_scale``, ``p_calibrated`` (see :func:`shrinkage_posterior`).

    Returns
    -------
    xarray.DataTree

    Examples
    --------
    >>> from pbassess.inference import diagnostics
    >>> idata = sample_shrinkage([10, 20, 40], [7, 18, 39], [0.7, 0.9, 0.97], [0.15, 0.3, 0.55], seed=0,
    ...                          sample_kwargs={"draws": 100, "tune": 100, "chains": 1,
    ...                                         "nuts_sampler": "pymc"})  # a tiny run, for the example only
    >>> idata.posterior["accuracy"].dims, idata.posterior["ece"].shape
    (('chain', 'draw', 'bin'), (1, 100))
    >>> d = diagnostics(idata)
    >>> d["chains"], d["draws"]
    (1, 100)
    """
    from pbassess.inference import DEFAULT_SAMPLE_KWARGS, fit
    from pbassess.pymc_models.hierarchical import observations_from_counts

    spec = ShrinkageSpec(n, correct, bin_score, bin_weight,
                         observations=observations_from_counts(np.round(np.asarray(n, dtype=float)),
                                                               np.round(np.asarray(correct, dtype=float))), **prior)
    per_chain = int((sample_kwargs or {}).get("draws", DEFAULT_SAMPLE_KWARGS["draws"]))
    return fit(spec, inference="nuts", draws=per_chain, seed=seed, sample_kwargs=sample_kwargs).idata


#: Default thresholds of ``P(ECE < eps)``.
DEFAULT_EPS: tuple[float, ...] = (0.01, 0.02, 0.05)

#: Simulated data sets per scenario of :func:`operating_characteristics` in the JSON extras.
OC_REPS: int = 40


def operating_characteristics(bins: dict, *, eps: Any = DEFAULT_EPS, level: float = 0.9, reps: int = OC_REPS,
                              n_draws: int = 500, seed: Any = 0, grid_step: float = 0.02,
                              **prior: Any) -> dict[str, Any]:
    """Power and false-"calibrated" rate of the rule ``P(ECE < eps) > level`` at a pool's labels.

    A parametric bootstrap on the pool's own design: the labeled counts per bin ``n_b``, the
    pool's mean scores ``s_b`` and shares ``p_b`` stay as observed; the correct counts are
    simulated, ``k_b ~ Binomial(n_b, theta_b)``, under two truths and the shrinkage posterior
    (:func:`shrinkage_posterior`, delta grid ``grid_step``) is
    refitted to each simulated data set:

    - calibrated (accuracy = confidence, ``theta_b = s_b``, true ECE 0): the share of data sets
      with ``P(ECE < eps) > level`` is the rule's **power**;
    - on the boundary (accuracy = confidence - eps, ``theta_b = max(s_b - eps, 0)``, true ECE
      ``sum_b p_b min(eps, s_b)``, i.e. eps): the share called calibrated is the **false
      "calibrated" rate** (a model just as miscalibrated as eps allows, called calibrated).

    Each share has Monte Carlo sd ``sqrt(r (1 - r) / reps)``, at most ``0.5 / sqrt(reps)``
    (0.079 at the default 40).

    Parameters
    ----------
    bins : dict
        Per-bin statistics of the pool (:func:`pbassess.calibration.posterior.pool_bins`): ``n``, ``bin_score``, ``bin_weight``.
    eps : float or sequence of float
        Thresholds.
    level : float
        The rule's probability threshold.
    reps : int
        Simulated data sets per scenario (one calibrated set serves every eps).
    n_draws : int
        Posterior draws per fit.
    seed : int or numpy.random.Generator
    grid_step : float
        Delta grid step of the fits (0.02: about six times faster than the default 0.0025,
        P(ECE < eps) within about 0.01 of it).
    **prior
        ``mu_scale``, ``tau_scale``, ``p_calibrated`` of the shrinkage model.

    Returns
    -------
    dict
        ``level``, ``reps``, ``n_labeled``, ``mc_sd_max`` and ``by_eps``: per eps (a string key)
        ``power``, ``false_calibrated_rate``, ``mean_p_calibrated`` and ``mean_p_boundary`` (mean
        ``P(ECE < eps)`` under each truth) and ``boundary_ece`` (the boundary truth's ECE).

    Examples
    --------
    >>> from pbassess.calibration.posterior import pool_bins
    >>> from pbassess.calibration.simulate import synthetic_pool
    >>> pool = synthetic_pool(5000, "calibrated", seed=0)
    >>> labeled = np.zeros(5000, bool); labeled[:2000] = True
    >>> b = pool_bins(pool.confidence, np.zeros(5000, bool), labeled)
    >>> oc = operating_characteristics(b, eps=0.02, reps=5, seed=1)
    >>> sorted(oc["by_eps"]["0.02"]), oc["reps"]
    (['boundary_ece', 'false_calibrated_rate', 'mean_p_boundary', 'mean_p_calibrated', 'power'], 5)
    """
    if not 0 < level < 1:
        raise ConfigError(f"level must lie strictly between 0 and 1, got {level!r}")
    if int(reps) < 1:
        raise ConfigError(f"reps must be at least 1, got {reps!r}")
    thresholds = sorted({float(e) for e in np.atleast_1d(np.asarray(eps, dtype=float))})
    if not all(0 < e < 1 for e in thresholds):
        raise ConfigError(f"eps must lie strictly between 0 and 1, got {eps!r}")
    rng = as_generator(seed)
    n = np.asarray(bins["n"], dtype=np.int64)
    s = np.asarray(bins["bin_score"], dtype=float)
    w = np.asarray(bins["bin_weight"], dtype=float)

    def p_below(theta: np.ndarray) -> np.ndarray:
        out = np.empty((int(reps), len(thresholds)))
        for r in range(int(reps)):
            k = rng.binomial(n, theta)
            ece = shrinkage_posterior(n, k, s, w, n_draws=n_draws, seed=rng, grid_step=grid_step, **prior)["ece"]
            out[r] = [np.mean(ece < e) for e in thresholds]
        return out

    calibrated = p_below(s)
    by_eps: dict[str, Any] = {}
    for j, e in enumerate(thresholds):
        theta = np.clip(s - e, 0.0, 1.0)
        boundary = p_below(theta)[:, j]
        by_eps[f"{e:g}"] = {
            "power": float(np.mean(calibrated[:, j] > level)),
            "false_calibrated_rate": float(np.mean(boundary > level)),
            "mean_p_calibrated": float(calibrated[:, j].mean()), "mean_p_boundary": float(boundary.mean()),
            "boundary_ece": float(np.sum(w * np.abs(theta - s))),
        }
    return {"level": float(level), "reps": int(reps), "n_labeled": int(n.sum()),
            "mc_sd_max": float(0.5 / np.sqrt(int(reps))), "by_eps": by_eps}


class ShrinkageResult(AssessmentResult):
    """The shrinkage calibration model fitted by NUTS to a pool's labeled items (the DataTree contract).

    ``posterior`` holds ``accuracy`` (bin), ``ece``, ``mu`` and ``tau``; ``counts`` holds per bin
    ``n`` (labeled), ``correct``, ``n_pool``, ``bin_score`` and ``bin_weight``.

    Examples
    --------
    >>> import pbassess as pb
    >>> res = assess_calibration_shrinkage(pb.load_data(), bins=5, seed=0,
    ...                                    sample_kwargs={"draws": 200, "tune": 300})  # a short real NUTS run
    >>> type(res).__name__, res.posterior["ece"].dims, int(res.counts["n"].sum()) == res.data_summary["n_labeled"]
    ('ShrinkageResult', ('chain', 'draw'), True)
    """

    metric: ClassVar[str] = "calibration-shrinkage"

    def _build_model(self):
        c = self.counts
        return shrinkage_model(c["n"].to_numpy(), c["correct"].to_numpy(), c["bin_score"].to_numpy(),
                               c["bin_weight"].to_numpy(), bin_coords=c["bin"].to_numpy().tolist(),
                               **self.options.get("prior_scales", {}))

    def p_below(self, eps: float = 0.02) -> float:
        """Posterior probability that the ECE is below ``eps``."""
        return float((self.posterior["ece"] < eps).mean())

    def summary(self):
        """One row per bin: mean score, posterior mean and HDI of the accuracy, labeled and pool items."""
        import pandas as pd

        from pbassess.stats.intervals import hdi_from_draws

        acc = self.draws("accuracy")
        hdi = hdi_from_draws(acc, self.ci_prob, axis=0)
        c = self.counts
        table = pd.DataFrame({
            "bin": c["bin"].to_numpy(), "score": c["bin_score"].to_numpy(), "mean": acc.mean(axis=0),
            "hdi_low": hdi[:, 0], "hdi_high": hdi[:, 1], "n": c["n"].to_numpy(), "correct": c["correct"].to_numpy(),
            "n_pool": c["n_pool"].to_numpy(), "weight": c["bin_weight"].to_numpy(),
        })
        return self.annotate(table)

    def sentence(self) -> str:
        from pbassess.stats.intervals import hdi_from_draws

        ece = self.draws("ece")
        lo, hi = hdi_from_draws(ece, self.ci_prob)
        n = int(self.counts["n"].sum())
        text = (f"ECE {float(ece.mean()):.3f} [{float(lo):.3f}, {float(hi):.3f}] ({self.ci_prob:.0%} HDI) under "
                f"the shrinkage calibration model, P(ECE < 0.02) = {self.p_below(0.02):.2f}, from {n} labels in "
                f"{self.counts['bin'].size} bins (NUTS)")
        return self.qualify(text)

    def operating_characteristics(self, eps: Any = (0.01, 0.02, 0.05), level: float = 0.9, **kwargs: Any) -> dict:
        """Power and false-"calibrated" rate of ``P(ECE < eps) > level`` at this pool's labels
        (:func:`operating_characteristics`, computed once per result)."""
        cache = self.__dict__.setdefault("_operating", {})
        key = (tuple(np.atleast_1d(eps).tolist()), float(level), tuple(sorted(kwargs.items())))
        if key not in cache:
            c = self.counts
            prior = {k: v for k, v in self.options.get("prior_scales", {}).items()}
            cache[key] = operating_characteristics(
                {"n": c["n"].to_numpy(), "bin_score": c["bin_score"].to_numpy(), "bin_weight": c["bin_weight"].to_numpy()},
                eps=eps, level=level, **{**prior, **kwargs})
        return cache[key]

    def to_json(self) -> dict[str, Any]:
        """``{"ece": {"mean", "hdi"}, "p_below", "p_below_operating", "bins": [...], ...}`` with the shared keys.

        ``p_below_operating`` (:meth:`operating_characteristics`) says how often ``P(ECE < eps) >
        0.9`` is right at these labels: its power (accuracy = confidence) and false-"calibrated"
        rate (accuracy = confidence - eps), by simulation with the integration engine.
        """
        from pbassess.stats.intervals import hdi_from_draws

        ece = self.draws("ece")
        lo, hi = hdi_from_draws(ece, self.ci_prob)
        table = self.summary()
        return self.with_envelope({
            "ece": {"mean": float(ece.mean()), "hdi": [float(lo), float(hi)]},
            "p_below": {str(e): self.p_below(e) for e in (0.01, 0.02, 0.05)},
            "p_below_operating": self.operating_characteristics(),
            "bins": table.to_dict(orient="records"), "n_labeled": int(self.counts["n"].sum()),
        })

    def plot(self, ax=None, **kwargs: Any):
        """Reliability diagram: posterior mean and HDI of each bin's accuracy against its mean score."""
        import matplotlib.pyplot as plt

        table = self.summary()
        if ax is None:
            _, ax = plt.subplots(figsize=(4.0, 4.0))
        ax.plot([0, 1], [0, 1], color="0.6", lw=1)
        ax.errorbar(table["score"], table["mean"],
                    yerr=[table["mean"] - table["hdi_low"], table["hdi_high"] - table["mean"]], fmt="o", capsize=3,
                    **kwargs)
        ax.set_xlabel("mean confidence")
        ax.set_ylabel("accuracy")
        return ax


def assess_calibration_shrinkage(preds: Any, *, bins: Any = 10, binning: str = "uniform",
                                 inference: str | None = "nuts", ci_prob: float = CI_PROB, seed: Any = None,
                                 sample_kwargs: dict | None = None, mu_scale: float = MU_SCALE,
                                 tau_scale: float = TAU_SCALE, p_calibrated: float = P_CALIBRATED) -> ShrinkageResult:
    """Fit the shrinkage calibration model to a pool's labeled items by NUTS (:func:`pbassess.inference.fit`).

    Parameters
    ----------
    preds : Predictions (or anything :func:`pbassess.data.as_predictions` accepts)
        The pool: every item's confidence sets the bins' mean scores and pool shares, the labeled
        items' correctness the likelihood.
    bins, binning
        As in :func:`pbassess.calibration.posterior.pool_bins` (the same bins).
    inference : {"nuts"}
        The model has no closed-form posterior (:func:`shrinkage_posterior` integrates it
        numerically, outside the fit layer).
    ci_prob : float
        Credible mass of the HDIs.
    seed : int or Generator, optional
    sample_kwargs : dict, optional
        ``pm.sample`` options.
    mu_scale, tau_scale : float
        The slab's prior scales (module docstring).
    p_calibrated : float
        Prior probability of exact calibration (the spike).

    Returns
    -------
    ShrinkageResult

    Examples
    --------
    >>> import pbassess as pb
    >>> res = assess_calibration_shrinkage(pb.load_data(), bins=5, seed=1,
    ...                                    sample_kwargs={"draws": 200, "tune": 300})  # a short real NUTS run
    >>> res.idata["log_likelihood"]["correct"].sizes["item"] == int(res.counts["n"].sum())
    True
    """
    import xarray as xr

    from pbassess.calibration.binning import bin_sums, resolve_edges
    from pbassess.data import as_predictions
    from pbassess.inference import DEFAULT_SAMPLE_KWARGS, Observations, fit, resolve_inference

    if resolve_inference(inference, default="nuts") != "nuts":
        raise ConfigError("the shrinkage calibration model has no closed-form posterior: use inference='nuts' "
                          "(shrinkage_posterior integrates it numerically)")
    pool = as_predictions(preds)
    pool.require_labels("the shrinkage calibration model")
    conf = np.asarray(pool.confidence, dtype=float)
    labeled = np.asarray(pool.labeled, dtype=bool)
    correct = np.asarray(pool.correct, dtype=float)
    # the bins of pbassess.calibration.posterior.pool_bins (which imports this module): pool share and
    # mean pool score per bin (the centre of an empty bin), labeled counts, and each labeled item's bin
    edges = resolve_edges(conf, bins, binning)
    in_pool = bin_sums(conf, np.zeros(conf.size), edges)
    in_labels = bin_sums(conf[labeled], correct[labeled], edges)
    centre = (edges[:-1] + edges[1:]) / 2
    if in_pool.n.size > centre.size:  # the extra bin of scores equal to 1
        centre = np.append(centre, 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(in_pool.n > 0, in_pool.score_sum / np.maximum(in_pool.n, 1), centre)
    b = {"edges": edges, "n_pool": in_pool.n, "bin_weight": in_pool.n / max(in_pool.n.sum(), 1),
         "bin_score": np.clip(score, 1e-6, 1 - 1e-6), "n": in_labels.n,
         "correct": np.round(in_labels.outcome_sum).astype(np.int64)}
    cell = np.full(conf.size, -1, dtype=np.int64)
    cell[labeled] = in_labels.index
    try:
        ids = pool.item_ids
    except KeyError:
        ids = None
    observations = Observations.of(cell, np.where(labeled, correct, 0).astype(np.int64), ids)
    names = list(range(b["n"].size))
    spec = ShrinkageSpec(b["n"], b["correct"], b["bin_score"], b["bin_weight"], mu_scale=mu_scale,
                         tau_scale=tau_scale, p_calibrated=p_calibrated, bin_coords=names, observations=observations)
    per_chain = int((sample_kwargs or {}).get("draws", DEFAULT_SAMPLE_KWARGS["draws"]))
    fitted = fit(spec, inference="nuts", draws=per_chain, seed=seed, sample_kwargs=sample_kwargs)
    counts = xr.Dataset({"n": ("bin", spec.n), "correct": ("bin", spec.correct), "n_pool": ("bin", b["n_pool"]),
                         "bin_score": ("bin", spec.bin_score), "bin_weight": ("bin", spec.bin_weight),
                         "edges": ("edge", np.asarray(b["edges"], dtype=float))}, coords={"bin": names})
    post = fitted.idata["posterior"].to_dataset()[list(spec.reported)]
    return ShrinkageResult(
        post, counts, prior={"p_calibrated": p_calibrated, "mu": f"Normal(0, {mu_scale})", "tau": f"HalfCauchy({tau_scale})"},
        data_summary=pool.describe(), inference="nuts", ci_prob=ci_prob, idata=fitted.idata,
        diagnostics=fitted.diagnostics, model=fitted.model,
        options={"bins": bins if isinstance(bins, int) else np.asarray(bins).tolist(), "binning": binning,
                 "prior_scales": {"mu_scale": mu_scale, "tau_scale": tau_scale, "p_calibrated": p_calibrated}},
    )
