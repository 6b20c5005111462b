"""Fit an accuracy surface with any of the estimators: :func:`fit_surface`."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from pbassess.constants import CI_PROB
from pbassess.errors import ConfigError, DataError
from pbassess.stats.sampling import as_generator
from pbassess.surface.arms import ArmCounts, count_arms
from pbassess.surface.conjugate import (
    beta_i_posterior,
    beta_mixture_summary,
    beta_summary,
    cpredictor_posterior,
)
from pbassess.surface.result import SurfaceResult

__all__ = ["DEFAULT_SCALE_TERM", "ESTIMATORS", "INFERENCES", "fit_surface", "hide_labels", "model_options_for",
           "result_from_draws"]

ESTIMATORS = ("cpredictor", "beta-i", "berngp", "betagp", "betagp-sl", "betagp-slp", "additive")
INFERENCES = ("conjugate", "nuts", "advi")
#: BetaGP-SL's default scale term: the released code's Gamma term (see the package docstring).
DEFAULT_SCALE_TERM = "gamma"
#: Surface fits default to 2 chains x 500 draws after 500 tuning steps.
SURFACE_SAMPLE_KWARGS = {"draws": 500, "tune": 500, "chains": 2}


def hide_labels(preds: Any, keep: int, seed: Any = None):
    """Keep the labels of ``keep`` random labeled items and hide the others (for evaluation).

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_binary_scores([.9, .2, .7, .6], [1, 0, 0, 1])
    >>> hide_labels(p, 2, seed=0).n_labeled
    2
    """
    labeled = np.flatnonzero(preds.labels >= 0)
    if keep < 0:
        raise ConfigError(f"--subsample-labels must be non-negative, got {keep}")
    if keep >= labeled.size:
        return preds
    chosen = as_generator(seed).choice(labeled, size=keep, replace=False)
    labels = np.full(preds.n_items, -1, dtype=np.int64)
    labels[chosen] = preds.labels[chosen]
    return preds.with_labels(labels)


def _sample(model, *, seed: Any, sample_kwargs: Mapping[str, Any] | None, inference: str):
    """Posterior draws (a DataTree) by NUTS (nutpie when available) or a variational fit."""
    import pymc as pm

    kwargs = {**SURFACE_SAMPLE_KWARGS, **dict(sample_kwargs or {})}
    if isinstance(kwargs.get("initvals"), Mapping):  # a warm start may name deterministics: keep free variables
        free = {v.name for v in model.free_RVs}
        kwargs["initvals"] = {k: v for k, v in kwargs["initvals"].items() if k in free} or None
    if inference == "nuts":
        try:
            from pbassess.inference import sample_model
        except ImportError:
            sample_model = None
        if sample_model is not None:
            return sample_model(model, seed=seed, sample_kwargs=kwargs, log_likelihood=False)
        from pbassess.pymc_models.accuracy import sample_posterior

        kwargs.setdefault("nuts_sampler", "nutpie")
        return sample_posterior(model, seed=seed, sample_kwargs=kwargs)
    rng = as_generator(seed)
    draws = int(kwargs.get("draws", 500)) * int(kwargs.get("chains", 1))
    with model:
        approx = pm.fit(n=int(kwargs.get("advi_iterations", 5000)), method="advi",
                        random_seed=int(rng.integers(2**31)), progressbar=False)
        return approx.sample(draws, random_seed=int(rng.integers(2**31)))


def _draws(idata: Any, name: str) -> np.ndarray:
    da = idata["posterior"][name]
    return np.asarray(da.stack(sample=("chain", "draw")).transpose("sample", ...).values, float)


def _diagnostics(idata: Any, inference: str) -> dict[str, Any]:
    if inference != "nuts":
        return {"inference": inference, "note": "variational fit: no MCMC diagnostics; expect over-smoothed rare arms"}
    from pbassess.results.base import mcmc_diagnostics

    post = idata["posterior"]
    # Hyperparameters (few values each) and the per-arm mean; not the thousands of raw latents.
    names = [v for v in post.data_vars if int(np.prod([post[v].sizes[d] for d in post[v].dims
                                                      if d not in ("chain", "draw")])) <= 64]
    names += [v for v in ("mu", "p") if v in post.data_vars and v not in names]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        diag = mcmc_diagnostics(idata, var_names=names)
    return {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in diag.items()}


def _conjugate(arms: ArmCounts, estimator: str, ci_prob: float, seed: Any, draws: int):
    a, b = cpredictor_posterior(arms) if estimator == "cpredictor" else beta_i_posterior(arms)
    mean, var, hdi = beta_summary(a, b, ci_prob)
    sample = as_generator(seed).beta(a, b, size=(draws, arms.n_arms)) if draws else None
    return mean, var, hdi, sample, {"alpha": a, "beta": b}


def model_options_for(estimator: str, model_options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The model builder's options: the user's, with BetaGP-SL's default scale term filled in.

    Examples
    --------
    >>> model_options_for("betagp-sl", None), model_options_for("additive", {"interaction_scale": 0.2})
    ({'scale_term': 'gamma'}, {'interaction_scale': 0.2})
    """
    options = dict(model_options or {})
    if estimator == "betagp-sl" or estimator == "betagp-slp":
        options.setdefault("scale_term", DEFAULT_SCALE_TERM)
    return options


def _pymc_model(arms: ArmCounts, estimator: str, options: dict[str, Any], covariate: str | None, seed: Any,
                counts_as_data: bool = False):
    from pbassess.surface import models

    if estimator == "berngp":
        return models.berngp_model(arms, covariate=covariate, seed=seed, counts_as_data=counts_as_data,
                                   **options), None, None
    if estimator == "additive":
        from pbassess.surface.additive import additive_model

        return additive_model(arms, covariate=covariate, counts_as_data=counts_as_data, **options)
    if estimator == "beta-i" or estimator == "cpredictor":
        raise ConfigError(f"{estimator} is exact with --inference conjugate; NUTS would only reproduce it")
    return models.betagp_model(arms, variant=estimator, covariate=covariate, seed=seed,
                               counts_as_data=counts_as_data, **options)


def fit_surface(data: Any, attributes: Sequence[str] | None = None, *, estimator: str = "additive",
                inference: str | None = None, covariate: str | None = None, continuous: Sequence[str] = (),
                seed: Any = None, sample_kwargs: Mapping[str, Any] | None = None, ci_prob: float = CI_PROB,
                model_options: Mapping[str, Any] | None = None, arm_probs: Any = None,
                arm_values: Any = None) -> SurfaceResult:
    """Posterior accuracy of every arm by one of the estimators.

    Parameters
    ----------
    data : Predictions or ArmCounts
        A pool with attribute columns (then ``attributes`` names the arm columns) or counts.
    estimator : {"cpredictor", "beta-i", "berngp", "betagp", "betagp-sl", "betagp-slp", "additive"}
    inference : {"conjugate", "nuts", "advi"}, optional
        Default: ``conjugate`` for CPredictor / Beta-I (exact), ``nuts`` otherwise. ADVI is an
        opt-in fast path that over-smooths rare arms.
    covariate : {"confidence"}, optional
        The model's mean confidence over an arm's pool as a covariate of the arm's logit mean
        (learned offset and slope); GP and additive estimators only.
    continuous : sequence of str
        Integer/ordinal attributes used as continuous inputs.
    model_options : dict
        Passed to the model builder (e.g. ``scale_term``, ``gp``, ``interaction_scale``).

    Examples
    --------
    >>> r = fit_surface(ArmCounts.from_arrays([1, 20], [0, 15]), estimator="beta-i")
    >>> r.mean.round(3).tolist(), r.engine
    ([0.065, 0.75], 'conjugate')
    """
    if estimator not in ESTIMATORS:
        raise ConfigError(f"unknown estimator {estimator!r} (choose from {', '.join(ESTIMATORS)})")
    if isinstance(data, ArmCounts):
        arms = data
    else:
        from pbassess.data import as_predictions

        if not attributes:
            raise ConfigError("name the attribute columns of the arms (attributes=[...])")
        arms = count_arms(as_predictions(data), attributes, continuous=continuous, arm_probs=arm_probs,
                          arm_values=arm_values)
    if arms.n.sum() <= 0 and estimator != "cpredictor":
        raise DataError("no labeled items: the surface needs at least one label")
    conjugate_ok = estimator in ("cpredictor", "beta-i")
    inference = inference or ("conjugate" if conjugate_ok else "nuts")
    if inference not in INFERENCES:
        raise ConfigError(f"unknown inference {inference!r} (choose from {', '.join(INFERENCES)})")
    if inference == "conjugate" and not conjugate_ok:
        raise ConfigError(f"{estimator} has no conjugate form: use --inference nuts (or advi)")
    if covariate is not None and conjugate_ok:
        raise ConfigError(f"{estimator} takes no covariate (use additive or a GP estimator)")
    options = model_options_for(estimator, model_options)
    start = time.perf_counter()
    if inference == "conjugate":
        mean, var, hdi, draws, extra = _conjugate(arms, estimator, ci_prob, seed, 1000)
        return SurfaceResult(arms, mean, var, hdi, estimator=estimator, engine="conjugate", ci_prob=ci_prob,
                             draws=draws, extra=extra, diagnostics={}, fit_seconds=time.perf_counter() - start,
                             prior={"lambda": 0.1} if estimator == "beta-i" else {"alpha": 1, "beta": 1})
    rng = as_generator(seed)
    model, n_used, c_used = _pymc_model(arms, estimator, options, covariate, rng)
    idata = _sample(model, seed=rng, sample_kwargs=sample_kwargs, inference=inference)
    return result_from_draws(arms, estimator, idata, n_used, c_used, inference=inference, ci_prob=ci_prob,
                             seed=rng, prior=options, fit_seconds=time.perf_counter() - start)


def result_from_draws(arms: ArmCounts, estimator: str, idata: Any, n_used: Any, c_used: Any, *, inference: str,
                      ci_prob: float = CI_PROB, seed: Any = None, prior: Mapping[str, Any] | None = None,
                      fit_seconds: float | None = None) -> SurfaceResult:
    """The :class:`SurfaceResult` of posterior draws of a surface model (``p``, or ``mu`` and ``scale``).

    BernGP's arm accuracy is its ``p``; a Beta-binomial model's is the mixture over draws of
    Beta(mu s + correct, (1 - mu) s + n - correct) with the counts ``n_used`` / ``c_used`` its
    likelihood saw.

    Examples
    --------
    >>> import xarray as xr
    >>> p = np.full((1, 4, 2), 0.8)
    >>> idata = xr.DataTree.from_dict({"posterior": xr.Dataset({"p": (("chain", "draw", "arm"), p)})})
    >>> r = result_from_draws(ArmCounts.from_arrays([2, 0], [2, 0]), "berngp", idata, None, None, inference="advi")
    >>> r.mean.tolist(), r.var.tolist()
    ([0.8, 0.8], [0.0, 0.0])
    """
    rng = as_generator(seed)
    if estimator == "berngp":
        draws = _draws(idata, "p")
        from pbassess.stats.intervals import hdi_from_draws

        mean, var, hdi, extra = draws.mean(0), draws.var(0), hdi_from_draws(draws, ci_prob), {}
    else:
        mu, scale = _draws(idata, "mu"), _draws(idata, "scale")
        mean, var, hdi, draws = beta_mixture_summary(mu * scale + c_used, (1 - mu) * scale + n_used - c_used,
                                                     ci_prob=ci_prob, seed=rng)
        extra = {"surface_mean": mu.mean(0), "scale": scale.mean(0)}
    diag = _diagnostics(idata, inference)
    diag.update({k: float(np.mean(_draws(idata, k))) for k in ("confidence_offset", "confidence_slope")
                 if k in idata["posterior"]})
    return SurfaceResult(arms, mean, var, hdi, estimator=estimator, engine=inference, ci_prob=ci_prob,
                         draws=draws, idata=idata, diagnostics=diag, extra=extra, prior=dict(prior or {}),
                         fit_seconds=fit_seconds)
