"""Hierarchical multi-environment assessment: functions and result objects.

:func:`assess_hierarchical` fits the partially pooled accuracy model of
:mod:`pbassess.pymc_models.hierarchical` to the labeled items of each environment (a group column:
hospital, period, shift intensity, demographic group) and returns a
:class:`HierarchicalResult`: the posterior accuracy of every environment, the population
posterior (mean and spread of environment accuracies, and the accuracy to expect in a new
environment), and the MCMC diagnostics. :func:`assess_hierarchical_calibration` does the same
for reliability diagrams and each environment's ECE (:class:`HierarchicalCalibrationResult`).

The result classes live in :mod:`pbassess.results.hierarchical`. Both fits go through
:func:`pbassess.inference.fit` (NUTS only) with
:class:`pbassess.pymc_models.hierarchical.HierarchicalAccuracySpec` /
:class:`~pbassess.pymc_models.hierarchical.HierarchicalCalibrationSpec` (the DataTree contract:
``prior``, ``log_prior``, one log-likelihood value per labeled item) and check
:func:`pbassess.inference.diagnostics` (a failing fit warns and says so in its sentence and
JSON). Sampler options travel only in ``sample_kwargs`` (``draws=`` is posterior draws per chain).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import xarray as xr

from pbassess.assess._common import as_pool, check_ci_prob, check_sample_kwargs
from pbassess.constants import CI_PROB, DEFAULT_BINS
from pbassess.errors import ConfigError
from pbassess.hierarchical.counts import (
    CalibrationCounts,
    EnvironmentCounts,
    calibration_counts,
    environment_counts,
)
from pbassess.inference import fit, merge_sample_kwargs, resolve_inference
from pbassess.pymc_models.hierarchical import (
    MAX_SYNTHETIC_ITEMS,
    HierarchicalAccuracySpec,
    HierarchicalCalibrationSpec,
    cell_names,
    observations_from_counts,
)
from pbassess.results.hierarchical import (
    HierarchicalCalibrationResult,
    HierarchicalResult,
    posterior_diagnostics,
)

__all__ = [
    "HierarchicalCalibrationResult",
    "HierarchicalResult",
    "assess_hierarchical",
    "assess_hierarchical_calibration",
    "fit_accuracy_counts",
    "posterior_diagnostics",
]


def _nuts_only(inference: Any) -> None:
    """These models have no conjugate posterior: ``inference`` may only be ``"nuts"`` (the default)."""
    if resolve_inference(inference, default="nuts") != "nuts":
        raise ConfigError("the hierarchical models have no conjugate posterior: use inference='nuts'")


def _sampler_info(spec: Any, draws: int | None, sample_kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    """The NUTS settings a fit used (for the result's options), as :func:`pbassess.inference.fit` merges them."""
    from pbassess.inference import draws_per_chain

    kwargs = {**check_sample_kwargs(sample_kwargs), "draws": draws_per_chain(draws, sample_kwargs)}
    settings = merge_sample_kwargs(kwargs, defaults=spec.nuts_defaults, progressbar=False)
    return {"draws": settings["draws"], "tune": settings["tune"], "chains": settings["chains"],
            "cores": settings.get("cores"), "target_accept": settings.get("target_accept"),
            "sampler": settings.get("nuts_sampler", "pymc")}


# ---------------------------------------------------------------------------- fitting
def _env_counts_dataset(counts: EnvironmentCounts) -> xr.Dataset:
    dims = ("environment", "class") if counts.per_class else ("environment",)
    coords: dict[str, Any] = {"environment": list(counts.environments)}
    if counts.per_class:
        coords["class"] = list(counts.classes)
    return xr.Dataset(
        {"n_labeled": (dims, counts.n), "n_correct": (dims, counts.k), "n_items": (dims, counts.n_items),
         "mean_confidence": (dims, counts.mean_confidence)},
        coords=coords,
    )


def fit_accuracy_counts(
    counts: EnvironmentCounts,
    *,
    pooling: str = "hierarchical",
    kind: str = "logit-normal",
    prior: str = "uniform",
    pseudocount: float = 2.0,
    parameterization: str = "auto",
    ci_prob: float = CI_PROB,
    seed: Any = None,
    data_summary: dict[str, Any] | None = None,
    prior_predictive: int = 0,
    draws: int | None = None,
    sample_kwargs: Mapping[str, Any] | None = None,
) -> HierarchicalResult:
    """Fit the accuracy model to precomputed :class:`EnvironmentCounts` through :func:`pbassess.inference.fit`.

    Same options as :func:`assess_hierarchical`; ``prior_predictive`` > 0 also stores that many
    prior predictive draws (group ``prior_predictive``) in ``result.idata``. The log-likelihood
    is one value per labeled item: the real items when ``counts.observations`` lists them, else
    the items the counts imply (``k`` correct and ``n - k`` wrong per cell, made-up ids).

    Examples
    --------
    >>> import numpy as np
    >>> from pbassess.hierarchical.counts import EnvironmentCounts
    >>> c = EnvironmentCounts("site", ("a", "b"), np.array([40, 5]), np.array([36, 3]),
    ...                       np.array([40, 50]), np.array([0.9, 0.8]))
    >>> from unittest import mock
    >>> from pbassess.inference import mock_pymc_sample
    >>> with mock.patch("pymc.sample", mock_pymc_sample):  # plumbing only: no real NUTS in a doctest
    ...     r = fit_accuracy_counts(c, seed=0, sample_kwargs={"draws": 100, "tune": 100, "chains": 1,
    ...                                                       "sampler": "pymc"})
    >>> r.to_json()["environments"], r.idata["log_likelihood"]["correct"].sizes["item"]
    (['a', 'b'], 45)
    """
    from pbassess.stats import as_generator

    rng = as_generator(seed)
    ci_prob = check_ci_prob(ci_prob)
    observations = counts.observations
    if observations is None and int(counts.n.sum()) <= MAX_SYNTHETIC_ITEMS:
        observations = observations_from_counts(counts.n, counts.k, cell_names(counts.environments, counts.classes))
    spec = HierarchicalAccuracySpec(
        counts.n, counts.k, environments=counts.environments, classes=counts.classes, pooling=pooling, kind=kind,
        prior=prior, prior_mean=counts.mean_confidence, pseudocount=pseudocount, parameterization=parameterization,
        observations=observations, n_items=counts.n_items, mean_confidence=counts.mean_confidence,
        seed=int(rng.integers(2**31 - 1)),
    )
    sampler = _sampler_info(spec, draws, sample_kwargs)
    fitted = fit(spec, inference="nuts", draws=draws, seed=rng, sample_kwargs=check_sample_kwargs(sample_kwargs))
    idata = fitted.idata
    if prior_predictive:
        _add_prior_predictive(idata, fitted.model, int(prior_predictive), rng)
    post = idata["posterior"].to_dataset()
    keep = [v for v in (*spec.reported, "population_mean", "population_sd", "new_environment") if v in post]
    opts = {"by": counts.by, "kind": kind, "pooling": pooling, "per_class": counts.per_class,
            "parameterization": parameterization, "prior": prior, "pseudocount": pseudocount, "sampler": sampler}
    return HierarchicalResult(
        post[keep], _env_counts_dataset(counts),
        prior={"kind": prior, "pseudocount": pseudocount, "population": kind if pooling == "hierarchical" else None,
               "mu": "Normal(0 or logit(mean confidence), 1.5)", "sigma": "HalfNormal(1)"},
        data_summary=data_summary or {}, engine=f"mcmc-{sampler['sampler']}", ci_prob=ci_prob, idata=idata,
        diagnostics=fitted.diagnostics, options=opts, model=fitted.model,
    )


def _add_prior_predictive(idata: Any, model: Any, draws: int, rng: Any) -> None:
    """Prior predictive draws of the model's observed counts ``k`` (group ``prior_predictive``)."""
    import warnings

    import pymc as pm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prior = pm.sample_prior_predictive(draws, model=model, var_names=["k"],
                                           random_seed=int(rng.integers(2**31 - 1)))
    idata["prior_predictive"] = prior["prior_predictive"]


def assess_hierarchical(
    preds: Any,
    by: str,
    *,
    per_class: bool = False,
    pooling: str = "hierarchical",
    kind: str = "logit-normal",
    prior: str = "uniform",
    pseudocount: float = 2.0,
    parameterization: str = "auto",
    environments: Sequence[str] | None = None,
    ci_prob: float = CI_PROB,
    seed: Any = None,
    inference: str | None = None,
    draws: int | None = None,
    sample_kwargs: Mapping[str, Any] | None = None,
) -> HierarchicalResult:
    r"""Accuracy of a classifier in each environment, partially pooled across environments.

    Parameters
    ----------
    preds : Predictions
        The pool; only labeled items inform the accuracies (an environment without labels
        still gets a posterior: the population's).
    by : str
        Group column naming each item's environment.
    per_class : bool, default False
        Cells are environment x predicted class.
    pooling : {"hierarchical", "independent", "pooled"}
        Partial pooling (default), no pooling, or complete pooling across environments.
    kind : {"logit-normal", "beta"}
        Population distribution of the hierarchical model.
    prior : {"uniform", "informed"}
        See :func:`pbassess.pymc_models.hierarchical.accuracy_model`.
    pseudocount : float
        Prior strength of the independent / pooled Beta priors.
    parameterization : {"auto", "noncentered", "centered"}
        NUTS geometry (same posterior).
    environments : sequence of str, optional
        Environment order; may name environments with no items.
    ci_prob : float
        Credible mass of the HDIs.
    seed : int or Generator, optional
    inference : {"nuts"}
        The only inference of these models (``"mcmc"`` is an old spelling).
    draws : int, optional
        Posterior draws per chain (default ``sample_kwargs["draws"]``, else 1000).
    sample_kwargs : dict, optional
        :func:`pymc.sample` options (``tune``, ``chains``, ``cores``, ``target_accept``, ``sampler``
        or ``nuts_sampler`` ...), merged once over the defaults by :func:`pbassess.inference.fit`
        (``target_accept`` 0.95 for these models).

    Returns
    -------
    HierarchicalResult

    Notes
    -----
    Environment :math:`e` has :math:`y_e` correct of :math:`n_e` labeled items. The default
    (``kind="logit-normal"``, ``pooling="hierarchical"``) is

    .. math::

       \mu \sim \mathcal{N}(m, 1.5^2), \quad \sigma \sim \mathrm{HalfNormal}(1), \quad
       \operatorname{logit} \theta_e \sim \mathcal{N}(\mu, \sigma^2), \quad
       y_e \mid \theta_e \sim \mathrm{Binomial}(n_e, \theta_e),

    with :math:`m = 0` (``prior="uniform"``) or the logit of the mean confidence (``"informed"``).
    With ``per_class=True`` the cells are environment :math:`\times` class and
    :math:`\operatorname{logit} \theta_{ek} \sim \mathcal{N}(\mu + \sigma_E z_e + \sigma_C z_k,\, \sigma^2)`,
    :math:`z \sim \mathcal{N}(0, 1)`, each :math:`\sigma \sim \mathrm{HalfNormal}(1)`.
    ``kind="beta"`` uses :math:`\theta_e \sim \mathrm{Beta}(\phi\kappa, (1 - \phi)\kappa)`,
    :math:`\phi \sim \mathrm{Beta}(1, 1)`, :math:`\kappa \sim \mathrm{Pareto}(1.5, 1)`;
    ``pooling="independent"`` gives every environment its own Beta prior and ``"pooled"`` one
    accuracy shared by all.

    Examples
    --------
    >>> import numpy as np
    >>> from pbassess import Predictions
    >>> rng = np.random.default_rng(0)
    >>> env = np.repeat(["a", "b", "c"], [60, 60, 6])
    >>> correct = rng.random(126) < np.where(env == "a", 0.9, 0.7)
    >>> p = Predictions.from_top1(np.where(correct, "x", "y"), np.full(126, 0.8), np.full(126, "x"),
    ...                           classes=["x", "y"], groups={"site": env})
    >>> from unittest import mock
    >>> from pbassess.inference import mock_pymc_sample
    >>> with mock.patch("pymc.sample", mock_pymc_sample):  # plumbing only: no real NUTS in a doctest
    ...     r = assess_hierarchical(p, "site", seed=1, draws=200,
    ...                             sample_kwargs={"tune": 200, "chains": 2, "sampler": "pymc"})
    >>> r.summary()["environment"].tolist()[:3]
    ['a', 'b', 'c']
    """
    _nuts_only(inference)
    ci_prob = check_ci_prob(ci_prob)
    preds = as_pool(preds)
    preds.require_labels("the hierarchical assessment")
    counts = environment_counts(preds, by, per_class=per_class, environments=environments)
    return fit_accuracy_counts(
        counts, pooling=pooling, kind=kind, prior=prior, pseudocount=pseudocount, parameterization=parameterization,
        ci_prob=ci_prob, seed=seed, data_summary={**preds.describe(), "by": by}, draws=draws,
        sample_kwargs=sample_kwargs,
    )


def assess_hierarchical_calibration(
    preds: Any,
    by: str,
    *,
    bins: int | Any = DEFAULT_BINS,
    prior: str = "uniform",
    parameterization: str = "auto",
    environments: Sequence[str] | None = None,
    ci_prob: float = CI_PROB,
    seed: Any = None,
    inference: str | None = None,
    draws: int | None = None,
    sample_kwargs: Mapping[str, Any] | None = None,
) -> HierarchicalCalibrationResult:
    r"""Reliability diagram and ECE of each environment, bin accuracies pooled across environments.

    Fitted through :func:`pbassess.inference.fit` with
    :class:`~pbassess.pymc_models.hierarchical.HierarchicalCalibrationSpec` (NUTS only): the
    DataTree holds ``prior``, ``log_prior`` and one Bernoulli log-likelihood value per labeled
    item (with its environment x bin accuracy).

    Parameters
    ----------
    preds : Predictions
        The pool: every item weighs its bin (``weight``, ``score``); labeled items inform the
        bin accuracies.
    by : str
        Group column naming each item's environment.
    bins : int or sequence of float
        Number of equal-width confidence bins, or their edges.
    prior : {"uniform", "informed"}
        ``"informed"`` centres each bin's population accuracy on the bin's mean confidence
        (perfect calibration); the default does not.
    parameterization, environments, ci_prob, seed, inference, draws, sample_kwargs
        As for :func:`assess_hierarchical`.

    Returns
    -------
    HierarchicalCalibrationResult

    Notes
    -----
    Environment :math:`e` and confidence bin :math:`b` hold a pool share :math:`w_{eb}` with mean
    score :math:`s_{eb}` and :math:`y_{eb}` correct of :math:`n_{eb}` labeled items; the bin
    accuracies are pooled across environments, bin by bin:

    .. math::

       m_b \sim \mathcal{N}(\ell_b, 1.5^2), \quad \sigma \sim \mathrm{HalfNormal}(1), \quad
       \operatorname{logit} \theta_{eb} \sim \mathcal{N}(m_b, \sigma^2), \quad
       y_{eb} \mid \theta_{eb} \sim \mathrm{Binomial}(n_{eb}, \theta_{eb}),

       \mathrm{ECE}_e = \sum_b w_{eb}\, \lvert \theta_{eb} - s_{eb} \rvert,

    with :math:`\ell_b = 0` (``prior="uniform"``) or the logit of bin :math:`b`'s mean confidence
    (``"informed"``).

    Examples
    --------
    >>> from pbassess.data.examples import example_pool
    >>> p = example_pool(300, sites=["x", "y", "z"], seed=0)
    >>> from unittest import mock
    >>> from pbassess.inference import mock_pymc_sample
    >>> with mock.patch("pymc.sample", mock_pymc_sample):  # plumbing only: no real NUTS in a doctest
    ...     r = assess_hierarchical_calibration(p, "site", bins=5, seed=0, sample_kwargs={"draws": 200, "tune": 200,
    ...                                                                                   "chains": 2})
    >>> len(r.to_json()["ece"]["mean"]), r.idata["log_likelihood"]["correct"].sizes["item"]
    (3, 300)
    """
    _nuts_only(inference)
    ci_prob = check_ci_prob(ci_prob)
    preds = as_pool(preds)
    preds.require_labels("the hierarchical calibration assessment")
    counts: CalibrationCounts = calibration_counts(preds, by, bins=bins, environments=environments)
    spec = HierarchicalCalibrationSpec(counts, prior=prior, parameterization=parameterization,
                                       observations=counts.observations)
    sampler = _sampler_info(spec, draws, sample_kwargs)
    fitted = fit(spec, inference="nuts", draws=draws, seed=seed, sample_kwargs=check_sample_kwargs(sample_kwargs))
    post = fitted.idata["posterior"].to_dataset()
    count_ds = fitted.idata["constant_data"].to_dataset()
    count_ds = count_ds[[v for v in ("n_labeled", "n_correct", "n_items", "weight", "score", "edges")
                         if v in count_ds]].drop_vars("item", errors="ignore")
    return HierarchicalCalibrationResult(
        post[list(spec.reported)], count_ds,
        prior={"kind": prior, "bin_mu": "Normal(0 or logit(bin score), 1.5)", "sigma": "HalfNormal(1)"},
        data_summary={**preds.describe(), "by": by}, engine=f"mcmc-{sampler['sampler']}", ci_prob=ci_prob,
        idata=fitted.idata, diagnostics=fitted.diagnostics, model=fitted.model,
        options={"by": by, "bins": counts.edges.size - 1, "parameterization": parameterization, "prior": prior,
                 "sampler": sampler},
    )
