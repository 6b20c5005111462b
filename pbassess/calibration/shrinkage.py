"""A shrinkage calibration model: bin gaps that can all be (near) zero.

Per bin b, labeled counts ``n_b`` and ``k_b`` (correct), mean pool score ``s_b`` and pool
share ``p_b``::

    logit(theta_b) = logit(s_b) + delta_b,   delta_b ~ Normal(mu, tau),   k_b ~ Binomial(n_b, theta_b),
    mu ~ Normal(0, lam),   lam ~ HalfCauchy(mu_scale),   tau ~ HalfCauchy(tau_scale),
    ECE = sum_b p_b |theta_b - s_b|.

``delta_b = 0`` for every bin is perfect calibration. ``mu`` is a common over/under-confidence
with a horseshoe prior (scale 0.03 logit) and ``tau`` the spread of the bins around it with a
half-Cauchy prior (scale 0.02 logit): both put most prior mass near 0, yet their heavy tails
let real miscalibration escape the shrinkage (CIFAR-100's ECE of 0.099 is found from 200
labels on: posterior mean ECE 0.092). The scales were chosen by the simulation study of
``benchmarks/calibration_decision.py``: with them the decision ``P(ECE < 0.02) > 0.9`` (with at
least 1,000 labels) is right in 95-100% of repetitions for calibrated and miscalibrated
synthetic models from 2,000 labels on, and never calls CIFAR-100 calibrated. With fewer labels
the prior dominates (see :func:`pbassess.calibration.posterior.calibration_decision`).
Unlike independent Beta posteriors per bin, whose ECE posterior is biased upward by the noise
of every bin and whose HDI never contains 0 (10,000 labels of a calibrated model: mean 0.008),
this posterior concentrates on 0 for a calibrated model, so ``P(ECE < eps)`` can approach one.

Two engines give the same posterior: :func:`shrinkage_posterior` integrates it numerically
(a grid over ``delta`` of step 0.0025 logit, Gaussian convolutions for every ``tau`` on a
log grid and every ``mu`` on the ``delta`` grid, then exact conditional draws of each
``delta_b``): fast enough for simulation studies; :func:`shrinkage_model` is the PyMC model
(non-centred; it lives in :mod:`pbassess.pymc_models.shrinkage` with its
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
    TAU_SCALE,
    ShrinkageSpec,
    check_bins,
    shrinkage_model,
)
from pbassess.results.base import AssessmentResult
from pbassess.stats.sampling import as_generator

__all__ = ["MU_SCALE", "TAU_SCALE", "ShrinkageResult", "assess_calibration_shrinkage", "sample_shrinkage",
           "shrinkage_model", "shrinkage_posterior"]

_STEP = 0.0025
_TAUS = np.concatenate([[0.0], np.geomspace(1e-3, 5.0, 80)])


def _delta_grid(n, k, base) -> np.ndarray:
    with np.errstate(divide="ignore"):
        centre = logit((k + 0.5) / (n + 1.0)) - base
    lo = min(-4.0, float(centre[n > 0].min(initial=0.0)) - 3.0)
    hi = max(4.0, float(centre[n > 0].max(initial=0.0)) + 3.0)
    return np.arange(lo, hi + _STEP / 2, _STEP)


def _log_lik(grid, n, k, base) -> np.ndarray:
    """Binomial log-likelihood of each bin on the delta grid, minus its maximum: shape (B, G)."""
    eta = base[:, None] + grid[None, :]
    ll = k[:, None] * log_expit(eta) + (n - k)[:, None] * log_expit(-eta)
    return ll - ll.max(axis=1, keepdims=True)


def _smoothed(lik: np.ndarray, tau: float) -> np.ndarray:
    """``int L_b(delta) Normal(delta; mu, tau) d delta`` for every mu on the grid."""
    if tau < _STEP / 2:
        return lik
    half = int(np.ceil(7 * tau / _STEP))
    x = np.arange(-half, half + 1) * _STEP
    kernel = np.exp(-0.5 * (x / tau) ** 2)
    kernel /= kernel.sum()
    return fftconvolve(lik, kernel[None, :], mode="same", axes=1)


def _log_horseshoe_cells(x: np.ndarray, scale: float) -> np.ndarray:
    """Log prior mass of each grid cell ``[x - step/2, x + step/2]`` under ``mu ~ Normal(0, lam)``,
    ``lam ~ HalfCauchy(scale)`` (quadrature over lam; cell masses, not densities, because the
    horseshoe density is infinite at 0)."""
    lam = np.geomspace(scale * 1e-4, scale * 1e4, 400)
    w = np.gradient(lam) * 2 / (np.pi * scale * (1 + (lam / scale) ** 2))
    upper = ndtr((x[None, :] + _STEP / 2) / lam[:, None])
    lower = ndtr((x[None, :] - _STEP / 2) / lam[:, None])
    return np.log(np.clip(w @ (upper - lower), 1e-300, None))


def _hyper_log_post(grid, lik, mu_scale, tau_scale) -> np.ndarray:
    """Log posterior of (tau, mu) on ``_TAUS`` x grid (tau measure included)."""
    widths = np.gradient(_TAUS)
    log_prior_tau = np.log(2 / (np.pi * tau_scale * (1 + (_TAUS / tau_scale) ** 2))) + np.log(widths)
    log_prior_mu = _log_horseshoe_cells(grid, mu_scale)
    out = np.empty((_TAUS.size, grid.size))
    for j, tau in enumerate(_TAUS):
        out[j] = np.log(np.clip(_smoothed(lik, tau), 1e-300, None)).sum(axis=0) + log_prior_mu + log_prior_tau[j]
    return out


def shrinkage_posterior(n: Any, correct: Any, bin_score: Any, bin_weight: Any, *, n_draws: int = 4000,
                        seed: Any = None, mu_scale: float = MU_SCALE, tau_scale: float = TAU_SCALE) -> dict[str, np.ndarray]:
    """Posterior draws of the shrinkage calibration model by numerical integration.

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
        Prior scales (see the module docstring).

    Returns
    -------
    dict
        ``mu``, ``tau`` (draws,), ``delta``, ``accuracy`` (draws, B) and ``ece`` (draws,).

    Examples
    --------
    >>> post = shrinkage_posterior([500, 500], [350, 450], [0.7, 0.9], [0.5, 0.5], n_draws=1000, seed=0)
    >>> bool((post["ece"] < 0.02).mean() > 0.5), post["accuracy"].shape
    (True, (1000, 2))
    """
    n_arr, k_arr, s_arr, w_arr = check_bins(n, correct, bin_score, bin_weight)
    if not (mu_scale > 0 and tau_scale > 0):
        raise ConfigError("mu_scale and tau_scale must be positive")
    rng = as_generator(seed)
    base = logit(s_arr)
    grid = _delta_grid(n_arr, k_arr, base)
    lik = np.exp(_log_lik(grid, n_arr, k_arr, base))
    log_post = _hyper_log_post(grid, lik, mu_scale, tau_scale)
    prob = np.exp(log_post - log_post.max()).ravel()
    cells = rng.choice(prob.size, size=int(n_draws), p=prob / prob.sum())
    tau_idx, mu_idx = np.divmod(cells, grid.size)
    tau = _TAUS[tau_idx]
    delta = _conditional_deltas(grid, lik, mu_idx, tau, rng)
    mu = grid[mu_idx] + rng.uniform(-_STEP / 2, _STEP / 2, size=int(n_draws))
    theta = expit(base[None, :] + delta)
    return {"mu": mu, "tau": tau, "delta": delta, "accuracy": theta,
            "ece": np.sum(w_arr * np.abs(theta - s_arr), axis=-1)}


def _conditional_deltas(grid, lik, mu_idx, tau, rng) -> np.ndarray:
    """Exact draws of delta_b | mu, tau, data on the grid (prior draws where tau is below the step).

    Draws sharing a (mu, tau) cell share its conditional distribution, computed once per cell.
    """
    n_bins = lik.shape[0]
    mu = grid[mu_idx]
    out = mu[:, None] + tau[:, None] * rng.standard_normal((mu.size, n_bins))
    wide = tau >= _STEP
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
        out[members] = g[pick] + rng.uniform(-_STEP / 2, _STEP / 2, size=pick.shape)
    return out


def sample_shrinkage(n: Any, correct: Any, bin_score: Any, bin_weight: Any, *, seed: Any = None,
                     sample_kwargs: dict | None = None, **prior: Any):
    """NUTS on :func:`shrinkage_model` over bin counts, through :func:`pbassess.inference.fit`.

    Returns the DataTree (the fit layer's contract; the log-likelihood is one value per labeled
    item, the items the counts imply); ``target_accept`` defaults to 0.95 (the funnels of
    ``tau`` and of the horseshoe scale near 0). Check ``pbassess.inference.diagnostics(idata)``
    before use. :func:`assess_calibration_shrinkage` fits a pool's own labeled items.

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

    def to_json(self) -> dict[str, Any]:
        """``{"ece": {"mean", "hdi"}, "p_below", "bins": [...], ...}`` with the shared keys."""
        from pbassess.stats.intervals import hdi_from_draws

        ece = self.draws("ece")
        lo, hi = hdi_from_draws(ece, self.ci_prob)
        table = self.summary()
        return self.with_envelope({
            "ece": {"mean": float(ece.mean()), "hdi": [float(lo), float(hi)]},
            "p_below": {str(e): self.p_below(e) for e in (0.01, 0.02, 0.05)},
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
                                 tau_scale: float = TAU_SCALE) -> ShrinkageResult:
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
        Prior scales (module docstring).

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
                         tau_scale=tau_scale, bin_coords=names, observations=observations)
    per_chain = int((sample_kwargs or {}).get("draws", DEFAULT_SAMPLE_KWARGS["draws"]))
    fitted = fit(spec, inference="nuts", draws=per_chain, seed=seed, sample_kwargs=sample_kwargs)
    counts = xr.Dataset({"n": ("bin", spec.n), "correct": ("bin", spec.correct), "n_pool": ("bin", b["n_pool"]),
                         "bin_score": ("bin", spec.bin_score), "bin_weight": ("bin", spec.bin_weight),
                         "edges": ("edge", np.asarray(b["edges"], dtype=float))}, coords={"bin": names})
    post = fitted.idata["posterior"].to_dataset()[list(spec.reported)]
    return ShrinkageResult(
        post, counts, prior={"mu": f"Normal(0, lam), lam ~ HalfCauchy({mu_scale})", "tau": f"HalfCauchy({tau_scale})"},
        data_summary=pool.describe(), inference="nuts", ci_prob=ci_prob, idata=fitted.idata,
        diagnostics=fitted.diagnostics, model=fitted.model,
        options={"bins": bins if isinstance(bins, int) else np.asarray(bins).tolist(), "binning": binning,
                 "prior_scales": {"mu_scale": mu_scale, "tau_scale": tau_scale}},
    )
