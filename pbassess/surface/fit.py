"""Fit an accuracy surface with any of the estimators: :func:`fit_surface`.

Every estimator is a :class:`~pbassess.inference.Spec` over the arm counts
(:mod:`pbassess.pymc_models.surface`), fitted by :func:`pbassess.inference.fit`: exactly
(``conjugate``: CPredictor, Beta-I) or by NUTS (every estimator), into the one DataTree contract
(``posterior`` with ``accuracy`` per arm in 4 chains, ``prior``, ``log_likelihood`` per labeled
item, ``log_prior``, ``observed_data``, ``constant_data``, ``sample_stats`` for NUTS).

ADVI (``inference="advi"``) stays an opt-in fast path of the smoothing models (the grid's
``additive(advi)`` cells, ``pbassess surface --inference advi``): :class:`VariationalSpec` hands
draws of the fitted approximation to :func:`pbassess.inference.fit` as independent draws (its
conjugate route), so an ADVI fit has the same groups and variables as a NUTS fit, except
``sample_stats``, and ``idata.attrs["inference"] == "advi"``. Its draws are not exact: expect
over-smoothed rare arms.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from pbassess.constants import CI_PROB
from pbassess.errors import ConfigError, DataError
from pbassess.inference.spec import Observations, Spec
from pbassess.pymc_models.surface import (
    ANCHORED_DRAWS,  # noqa: F401 - its home was this module
    DEFAULT_SCALE_TERM,
    LOOSE_ANCHORED_OPTIONS,
    RESIDUAL_PRIOR_OPTIONS,
    BetaISpec,
    CPredictorSpec,
    SurfaceModelSpec,
    model_options_for,
    observations_from_arm_counts,
    quiet_pymc_log,
    surface_spec,
)
from pbassess.seeds import generator_is_own
from pbassess.stats.sampling import as_generator
from pbassess.surface.arms import ArmCounts, count_arms
from pbassess.surface.conjugate import beta_summary
from pbassess.surface.estimators import ESTIMATORS, INFERENCES
from pbassess.surface.result import SurfaceResult
from pbassess.surface.stacking import (
    MIN_ELPD_GAIN,
    ConfidenceComparison,
    check_combination,
    check_min_elpd_gain,
)

__all__ = ["DEFAULT_SCALE_TERM", "ESTIMATORS", "INFERENCES", "SURFACE_SAMPLE_KWARGS", "VariationalSpec",
           "fit_surface", "hide_labels", "model_options_for", "surface_result"]

#: Surface fits default to 4 chains x 250 draws after 500 tuning steps (conjugate fits: 4 x 250 exact draws).
SURFACE_SAMPLE_KWARGS = {"draws": 250, "tune": 500, "chains": 4}
#: ADVI's default number of optimisation steps (``sample_kwargs={"advi_iterations": ...}``).
ADVI_ITERATIONS = 5000


def hide_labels(preds: Any, keep: int, seed: Any = None):
    """Keep the labels of ``keep`` random labeled items and hide the others (for evaluation).

    Parameters
    ----------
    preds : Predictions
        A pool with labels.
    keep : int
        Labels to keep (all when ``keep`` is at least the number of labeled items).
    seed : int or numpy.random.Generator, optional

    Returns
    -------
    Predictions
        The same pool with the other labels hidden.

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


class VariationalSpec(Spec):
    """A smoothing surface's spec whose "exact" draws are draws of its ADVI approximation.

    Everything but :meth:`conjugate_draws` is the wrapped spec's, so
    ``pbassess.inference.fit(VariationalSpec(spec), inference="conjugate")`` gives the DataTree
    contract of a NUTS fit of ``spec`` (same variables and dims), with independent draws of the
    mean-field approximation in the posterior.

    Examples
    --------
    >>> from pbassess.pymc_models.surface import SurfaceModelSpec
    >>> spec = VariationalSpec(SurfaceModelSpec(ArmCounts.from_arrays([3, 1], [2, 1]), "additive"), iterations=200)
    >>> spec.has_conjugate, spec.reported == spec.spec.reported
    (True, True)
    """

    def __init__(self, spec: SurfaceModelSpec, iterations: int = ADVI_ITERATIONS) -> None:
        if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) or iterations < 1:
            raise ConfigError(f"advi_iterations must be a positive integer, got {iterations!r}")
        self.spec = spec
        self.iterations = int(iterations)
        self.name = f"{spec.name} (ADVI)"
        self.estimator = spec.estimator
        self.observed_name = spec.observed_name
        self.reported = spec.reported
        self.coords = spec.coords
        self.observations = spec.observations

    @property
    def has_conjugate(self) -> bool:
        return True

    def conjugate_draws(self, n_draws, rng):
        import pymc as pm

        model = self.spec.model()
        names = [v.name for v in model.free_RVs] + [v.name for v in model.deterministics]
        with warnings.catch_warnings(), quiet_pymc_log():
            warnings.simplefilter("ignore")
            approx = pm.fit(n=self.iterations, method="advi", model=model, random_seed=int(rng.integers(2**31 - 1)),
                            progressbar=False)
            post = approx.sample(n_draws, random_seed=int(rng.integers(2**31 - 1)))["posterior"]
        return {name: post[name].to_numpy().reshape(n_draws, *post[name].shape[2:]) for name in names}

    def prior_draws(self, n_draws, rng):
        return self.spec.prior_draws(n_draws, rng)

    def model(self):
        return self.spec.model()

    def complete(self, draws):
        return self.spec.complete(draws)

    def log_likelihood(self, draws, per_item):
        return self.spec.log_likelihood(draws, per_item)

    def log_prior(self, draws):
        return self.spec.log_prior(draws)

    def observed_data(self):
        return self.spec.observed_data()

    def constant_data(self):
        return self.spec.constant_data()

    def cell_n(self):
        return self.spec.cell_n()


def _observations(preds: Any, arms: ArmCounts) -> Observations | None:
    """The labeled items of a pool with hard arms (None for fractional, noisy-attribute arms)."""
    if arms.item_arm is None:
        return None
    return Observations.of_pool(preds, lambda q: (arms.item_arm, np.asarray(q.predicted == q.labels)))


def _clean(diag: Mapping[str, Any]) -> dict[str, Any]:
    return {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in diag.items()}


def surface_result(arms: ArmCounts, spec: Spec, tree: Any, *, inference: str, ci_prob: float = CI_PROB,
                   diagnostics: Mapping[str, Any] | None = None, prior: Mapping[str, Any] | None = None,
                   options: Mapping[str, Any] | None = None, fit_seconds: float | None = None,
                   model: Any = None) -> SurfaceResult:
    """The :class:`SurfaceResult` of a fitted surface spec's DataTree (``accuracy`` per arm in its posterior).

    The per-arm mean and variance are exact for the conjugate estimators (Beta posteriors) and
    Rao-Blackwellised for the Beta-binomial models (over the posterior draws of mu and s, the
    mixture of Beta(mu s + correct, (1 - mu) s + n - correct)); the HDI is that of the
    ``accuracy`` draws (exact Beta HDIs for conjugate fits).

    Examples
    --------
    >>> from pbassess.inference import fit
    >>> arms = ArmCounts.from_arrays([4, 0], [3, 0])
    >>> spec = BetaISpec(arms)
    >>> r = surface_result(arms, spec, fit(spec, draws=100, seed=0).idata, inference="conjugate")
    >>> r.mean.round(3).tolist(), r.posterior["accuracy"].sizes["chain"]
    ([0.75, 0.75], 4)
    """
    from pbassess.stats.intervals import hdi_from_draws

    post = tree["posterior"]
    accuracy = post["accuracy"].to_numpy()
    flat = accuracy.reshape(-1, arms.n_arms)
    extra: dict[str, np.ndarray] = {}
    if inference == "conjugate" and isinstance(spec, (CPredictorSpec, BetaISpec)):
        a, b = spec.posterior_beta()
        a, b = np.broadcast_to(a, (arms.n_arms,)).astype(float), np.broadcast_to(b, (arms.n_arms,)).astype(float)
        mean, var, hdi = beta_summary(a, b, ci_prob)
        extra = {"alpha": a, "beta": b}
    elif isinstance(spec, (SurfaceModelSpec, VariationalSpec)) and "scale" in post.data_vars:
        inner = spec.spec if isinstance(spec, VariationalSpec) else spec
        mu = post["mu"].to_numpy().reshape(-1, arms.n_arms)
        s = post["scale"].to_numpy().reshape(-1, arms.n_arms)
        a, b = mu * s + inner.c_used, (1.0 - mu) * s + inner.n_used - inner.c_used
        means = a / (a + b)
        mean = means.mean(axis=0)
        var = (a * b / ((a + b) ** 2 * (a + b + 1.0))).mean(axis=0) + means.var(axis=0)
        hdi = hdi_from_draws(flat, ci_prob)
        extra = {"surface_mean": mu.mean(0), "scale": s.mean(0)}
    else:
        mean, var, hdi = flat.mean(axis=0), flat.var(axis=0), hdi_from_draws(flat, ci_prob)
    diag = _clean(diagnostics or {})
    diag.update({k: float(post[k].mean()) for k in ("confidence_offset", "confidence_slope", "calibration_loc",
                                                    "calibration_slope") if k in post.data_vars})
    if "anchor" in post.data_vars:  # the calibrated label-free accuracy the labels moved the arms from
        extra["anchor"] = post["anchor"].to_numpy().reshape(-1, arms.n_arms).mean(axis=0)
    return SurfaceResult(arms, mean, var, hdi, estimator=getattr(spec, "estimator", None) or "surface",
                         engine=inference, ci_prob=ci_prob, idata=tree, diagnostics=diag, prior=dict(prior or {}),
                         extra=extra, fit_seconds=fit_seconds, model=model, spec=spec, options=options)


def _draws_and_kwargs(draws: int | None, sample_kwargs: Mapping[str, Any] | None,
                      defaults: Mapping[str, int] | None = None) -> tuple[int, dict, int]:
    """Posterior draws per chain, the NUTS options (surface defaults, then the model's ``defaults``
    of ``draws`` and ``tune``, under the user's) and ADVI's steps."""
    from pbassess.inference import draws_per_chain

    if sample_kwargs is not None and not isinstance(sample_kwargs, Mapping):
        raise ConfigError(f"sample_kwargs must be a dict of pm.sample options, got {type(sample_kwargs).__name__}")
    user = dict(sample_kwargs or {})
    iterations = user.pop("advi_iterations", ADVI_ITERATIONS)
    given = {"draws": user.pop("draws")} if "draws" in user else None
    base = {**SURFACE_SAMPLE_KWARGS, **dict(defaults or {})}
    per_chain = draws_per_chain(draws if draws is not None or given else base["draws"], given)
    kwargs = {**{k: v for k, v in base.items() if k != "draws"}, **user}
    return per_chain, kwargs, iterations


def _free_initvals(kwargs: dict[str, Any], model: Any) -> dict[str, Any]:
    """A warm start may name deterministics (``mu``, ``accuracy``): keep the model's free variables."""
    if isinstance(kwargs.get("initvals"), Mapping):
        free = {v.name for v in model.free_RVs}
        kwargs["initvals"] = {k: v for k, v in kwargs["initvals"].items() if k in free} or None
    return kwargs


def _check_stacking(stack_confidence: Any, given: Sequence[str], *, estimator: str, covariate: str | None,
                    inference: str) -> bool | None:
    """``stack_confidence`` checked against the estimator before anything is fitted: ``None`` where stacking
    could apply (decided with the model, :func:`_stacks`), ``False`` where it cannot, else a one-line error.
    ``given``: the stacking options the caller set (``min_elpd_gain``, ``confidence_combination``)."""
    if stack_confidence not in (None, True, False):
        raise ConfigError(f"stack_confidence is True, False or None (stacked wherever it applies), got {stack_confidence!r}")
    stackable = estimator == "additive" and covariate == "confidence" and inference == "nuts"
    if stack_confidence and not stackable:
        raise ConfigError("stacking with the confidence applies to the confidence-anchored surface: "
                          "--estimator additive --covariate confidence with NUTS")
    if given and (stack_confidence is False or not stackable):
        raise ConfigError(f"{given[0]} applies where the anchored surface is stacked with the confidence "
                          "(--estimator additive --covariate confidence with NUTS, not --no-stack-confidence)")
    return stack_confidence if stackable else False


def _stacks(stack_confidence: bool | None, spec: Any, arms: ArmCounts, *, given: Sequence[str]) -> bool:
    """Whether this fit is stacked with the confidence, refused in one line before sampling where asked and impossible.

    ``None`` (the default): wherever the anchored model has labeled items with their confidences to compare on.
    """
    anchored = bool(getattr(spec, "anchored", False))
    if stack_confidence is None:
        from pbassess.pymc_models.surface import anchored_items

        stacked = anchored and anchored_items(arms) is not None
        if given and not stacked:
            raise ConfigError(f"{given[0]} applies where the anchored surface is stacked with the confidence "
                              "(a pool with labeled items, the anchored model)")
        return stacked
    if stack_confidence:
        from pbassess.surface.stacking import confidence_items

        if not anchored:
            raise ConfigError("stacking with the confidence needs the anchored model (model option anchored=True)")
        confidence_items(arms)
    return bool(stack_confidence)


def _widens(widen_scales: Any, model_options: Mapping[str, Any] | None, *, stacked: bool) -> bool:
    """Whether a stacked anchored fit is refitted with the wider residual prior when the labels show the
    confidence wrong; refused in one line, before sampling, where asked and impossible."""
    if widen_scales not in (None, True, False):
        raise ConfigError(f"widen_scales is True, False or None (wherever it applies), got {widen_scales!r}")
    given = [k for k in RESIDUAL_PRIOR_OPTIONS if k in (model_options or {})]
    if widen_scales and not stacked:
        raise ConfigError("widening the residual's scales applies where the anchored surface is stacked with the "
                          "confidence (--estimator additive --covariate confidence on a pool, not "
                          "--no-stack-confidence)")
    if widen_scales and given:
        raise ConfigError(f"widening refits with the wider residual prior, but model_options set {given[0]!r} "
                          "already (drop it, or do not widen: widen_scales=False, --no-widen-scales)")
    return stacked and not given and widen_scales is not False


def _sample(spec: Any, inference: str, draws: int | None, sample_kwargs: Mapping[str, Any] | None, rng: Any,
            defer_prior: bool) -> tuple[Any, dict[str, Any]]:
    """``spec`` fitted by ``inference`` (:func:`pbassess.inference.fit`) and its diagnostics."""
    from pbassess.inference import fit

    per_chain, kwargs, iterations = _draws_and_kwargs(draws, sample_kwargs, spec.sample_defaults)
    if inference == "advi":
        fitted = fit(VariationalSpec(spec, iterations), inference="conjugate", draws=per_chain, seed=rng)
        fitted.idata.attrs["inference"] = "advi"
        return fitted, {"inference": "advi", "note": "variational fit: no MCMC diagnostics; expect over-smoothed rare arms"}
    if inference == "conjugate":
        return fit(spec, inference="conjugate", draws=per_chain, seed=rng), {}
    fitted = fit(spec, inference="nuts", draws=per_chain, seed=rng, defer_prior=defer_prior,
                 sample_kwargs=_free_initvals(kwargs, spec.model()))
    return fitted, dict(fitted.diagnostics or {})


def _widened_diagnostics(default: Mapping[str, Any], comparison: ConfidenceComparison) -> dict[str, Any]:
    """What the default fit, which the widened one replaced, showed: its ELPD gain over the confidence and its
    convergence (``default_scales_*`` keys of the diagnostics and of ``--json``)."""
    keep = {k: default[k] for k in ("max_rhat", "min_ess_bulk", "divergences") if k in default}
    return {"widened_scales": True, "default_scales_elpd_diff_vs_confidence": comparison.elpd_diff,
            "default_scales_elpd_diff_vs_confidence_se": comparison.elpd_diff_se,
            **{f"default_scales_{k}": v for k, v in keep.items()}}


def fit_surface(preds: Any, attributes: Sequence[str] | None = None, *, estimator: str = "additive",
                inference: str | None = None, covariate: str | None = None, continuous: Sequence[str] = (),
                seed: Any = None, sample_kwargs: Mapping[str, Any] | None = None, ci_prob: float = CI_PROB,
                model_options: Mapping[str, Any] | None = None, arm_probs: Any = None,
                arm_values: Any = None, draws: int | None = None, stack_confidence: bool | None = None,
                min_elpd_gain: float | None = None, widen_scales: bool | None = None,
                confidence_combination: str | None = None) -> SurfaceResult:
    r"""Posterior accuracy of every arm by one of the estimators, through :func:`pbassess.inference.fit`.

    Parameters
    ----------
    preds : Predictions or ArmCounts
        A pool with attribute columns (then ``attributes`` names the arm columns) or counts.
        A pool gives one log-likelihood value per labeled item; whole-number counts imply their
        items (``"<arm>#<rank>"``); fractional counts (``arm_probs``) give one value per arm.
    estimator : {"cpredictor", "beta-i", "berngp", "betagp", "betagp-sl", "betagp-slp", "additive"}
    inference : {"conjugate", "nuts", "advi"}, optional
        Default: ``conjugate`` for CPredictor / Beta-I (exact; NUTS samples the same model as a
        cross-check), ``nuts`` otherwise. ADVI is an opt-in fast path of the smoothing models
        that over-smooths rare arms.
    covariate : {"confidence", "confidence-linear"}, optional
        ``confidence``: anchor the surface at the model's confidence. Each arm's prior mean is its
        calibrated label-free accuracy (its pool items' confidences through a calibration map
        with a learned intercept and slope, :func:`pbassess.pymc_models.surface.calibrated_anchor`)
        and the labels move the arms through residual effects whose scales are learned and can
        shrink to zero: for ``additive`` the anchored model
        (:func:`pbassess.pymc_models.surface.anchored_model`), for the GP estimators the anchored
        mean function. ``confidence-linear`` (additive only): the earlier Beta-binomial additive
        model with the arm's mean logit confidence as a linear covariate of its logit mean.
    continuous : sequence of str
        Integer/ordinal attributes used as continuous inputs.
    seed : int or numpy.random.Generator, optional
    sample_kwargs : dict, optional
        :func:`pymc.sample` options over the surface defaults (4 chains x 250 draws after 500
        tuning steps); ``advi_iterations`` for ADVI.
    model_options : dict
        Passed to the model builder (e.g. ``scale_term``, ``gp``, ``interaction_scale``; ``lam``
        of Beta-I).
    draws : int, optional
        Posterior draws per chain (default ``sample_kwargs["draws"]``, else 250; 750 after 300 tuning steps for the
        anchored model, whose gradients are cheap: :data:`pbassess.pymc_models.surface.ANCHORED_DRAWS` and
        :data:`~pbassess.pymc_models.surface.ANCHORED_TUNE`; 1,000 after 1,000
        tuning steps at target_accept 0.95 for a GP estimator over categorical attributes in the
        grid eigenbasis, full or truncated, :data:`pbassess.pymc_models.surface.GRID_GP_SAMPLE_KWARGS`).
    stack_confidence : bool, optional
        The anchored surface only (``additive`` with ``covariate="confidence"``, fitted on a pool):
        stack it with the label-free confidence (:mod:`pbassess.surface.stacking`). The labeled
        items' PSIS-LOO predictive densities under the fit are compared with their exact ones under
        the confidence; unless the fit's ELPD gain exceeds ``min_elpd_gain``, every arm's accuracy
        draws become the confidence model's: the fit's draws moved to the arm's mean confidence, so
        the surface keeps the fit's uncertainty. Where the labels give no evidence against the
        confidence the surface stays on it; where they do it is the fit (``confidence_combination``).
        The diagnostics gain ``confidence_weight``, ``confidence_stacking_weight``,
        ``confidence_combination`` and ``elpd_diff_vs_confidence`` (and its ``_se``). ``None`` (the
        default): stacked wherever it applies (the anchored model fitted with NUTS on a pool whose
        labeled items carry their confidences; not on arm counts); ``False``: the anchored
        posterior alone; ``True``: stacked, or a one-line error where it cannot be.
    min_elpd_gain : float, optional
        Where the surface is stacked: the fit is stacked in only when its LOO ELPD gain over the
        confidence exceeds this (default 4, :data:`pbassess.surface.stacking.MIN_ELPD_GAIN`, below
        which an ELPD difference is small and its standard error unreliable); otherwise the surface
        is the confidence (:func:`pbassess.surface.stacking.compare_with_confidence`).
    confidence_combination : {"select", "stack"}, optional
        Where the surface is stacked and the fit's gain exceeds ``min_elpd_gain``: the fit alone
        (``"select"``, the default: the fit nests the confidence, and the labels have rejected it),
        or a fraction of every arm's draws, the confidence's stacking weight, from the confidence
        model (``"stack"``; with ``min_elpd_gain=float("-inf")``, plain stacking). On
        ``digits-shift`` and the miscalibrated surface the fit alone has the lower MSE
        (docs/surfaces.md).
    widen_scales : bool, optional
        Where the surface is stacked and ``model_options`` leave the anchored residual's prior at
        its defaults (none of :data:`pbassess.pymc_models.surface.RESIDUAL_PRIOR_OPTIONS`): when the
        default fit's ELPD gain over the confidence exceeds ``min_elpd_gain`` (and 0), the labels
        show the confidence wrong, and the default prior's premise (residual scales near zero:
        most arms are right) with it; the surface is then refitted with the wider residual prior
        (:data:`pbassess.pymc_models.surface.LOOSE_ANCHORED_OPTIONS`: an effect per attribute level
        and per pair cell, scales twice the defaults), and the refit is what is compared with the confidence and returned.
        The diagnostics gain ``widened_scales`` and, when widened, the default fit's
        ``default_scales_elpd_diff_vs_confidence`` (and ``_se``), ``default_scales_max_rhat``,
        ``default_scales_min_ess_bulk`` and ``default_scales_divergences``. On ACS the default
        fit's gain stays below 4 at 500, 2,000 and 10,000 labels, so nothing is refitted; on the
        miscalibrated surface the refit brings macro MSE from 0.00084 to 0.00062 (docs/surfaces.md).
        ``None`` (the default): wherever it applies; ``False``: never; ``True``: where it applies,
        else a one-line error.

    Returns
    -------
    SurfaceResult
        With ``idata`` (the DataTree contract), ``model`` and :meth:`~SurfaceResult.loo`.

    Notes
    -----
    Arm :math:`a` (one combination of attribute values :math:`a_1, \dots, a_K`) has :math:`y_a`
    correct of :math:`n_a` labeled items. ``cpredictor`` gives every arm one accuracy
    :math:`\theta \sim \mathrm{Beta}(1, 1)`; ``beta-i`` gives each arm its own,
    :math:`\theta_a \sim \mathrm{Beta}(\lambda p_0, \lambda (1 - p_0))` (:math:`p_0` the global
    accuracy, :math:`\lambda = 0.1`), :math:`y_a \sim \mathrm{Binomial}(n_a, \theta_a)`. The
    default ``additive`` model is

    .. math::

       y_a \sim \mathrm{BetaBinomial}\big(n_a,\; \mu_a s_a,\; (1 - \mu_a) s_a\big),

       \operatorname{logit} \mu_a = b + \sum_k u_k(a_k) + \sum_{k < j} v_{kj}(a_k, a_j), \qquad
       \log s_a = \operatorname{softcap}\Big(c + \sum_k w_k(a_k)\Big),

    with every effect summing to zero over the levels of each of its attributes,
    :math:`u_k \sim \mathcal{N}(0, \sigma^2 (I - \mathbf{1}\mathbf{1}^\top / L_k))` (:math:`\sigma` =
    ``main_scale``), interactions :math:`v_{kj} = Q_k (\tau_{kj} Z_{kj}) Q_j^\top` with
    :math:`Q_k` a sum-to-zero basis, :math:`Z_{kj}` standard normal and
    :math:`\tau_{kj} \sim \mathrm{HalfNormal}(s_\tau)` (:math:`s_\tau` = ``interaction_scale``), and
    :math:`b \sim \mathcal{N}(\operatorname{logit} p_0, \sigma_b^2)` (:math:`\sigma_b` =
    ``intercept_sd``). The BetaGP estimators replace the
    additive link by latent Gaussian processes over the attributes,
    :math:`\mu_a = \operatorname{sigmoid} f(a)`, :math:`s_a = \operatorname{softplus} g(a)`; BernGP
    has :math:`y_{ai} \sim \mathrm{Bernoulli}(\operatorname{sigmoid} f(a))`.

    Examples
    --------
    >>> r = fit_surface(ArmCounts.from_arrays([1, 20], [0, 15]), estimator="beta-i", seed=0)
    >>> r.mean.round(3).tolist(), r.engine, dict(r.idata["log_likelihood"]["correct"].sizes)
    ([0.065, 0.75], 'conjugate', {'chain': 4, 'draw': 250, 'item': 21})
    """
    if estimator not in ESTIMATORS:
        raise ConfigError(f"unknown estimator {estimator!r} (choose from {', '.join(ESTIMATORS)})")
    observations = None
    if isinstance(preds, ArmCounts):
        arms = preds
        observations = observations_from_arm_counts(arms.n, arms.correct)
    else:
        from pbassess.data import as_predictions

        if not attributes:
            raise ConfigError("name the attribute columns of the arms (attributes=[...])")
        preds = as_predictions(preds)
        arms = count_arms(preds, attributes, continuous=continuous, arm_probs=arm_probs, arm_values=arm_values)
        observations = _observations(preds, arms)
    if arms.n.sum() <= 0 and estimator != "cpredictor":
        raise DataError("no labeled items: the surface needs at least one label")
    conjugate_ok = estimator in ("cpredictor", "beta-i")
    inference = inference or ("conjugate" if conjugate_ok else "nuts")
    inference = {"mcmc": "nuts"}.get(inference, inference)
    if inference not in INFERENCES:
        raise ConfigError(f"unknown inference {inference!r} (choose from {', '.join(INFERENCES)})")
    if inference == "conjugate" and not conjugate_ok:
        raise ConfigError(f"{estimator} has no conjugate form: use --inference nuts (or advi)")
    if inference == "advi" and conjugate_ok:
        raise ConfigError(f"{estimator} is exact with --inference conjugate; ADVI would only approximate it")
    if covariate is not None and conjugate_ok:
        raise ConfigError(f"{estimator} takes no covariate (use additive or a GP estimator)")
    if covariate == "confidence-linear":
        if estimator != "additive":
            raise ConfigError("the covariate confidence-linear is the additive model's; the GP estimators take "
                              "covariate='confidence' (the anchored mean function)")
        covariate, model_options = "confidence", {**dict(model_options or {}), "anchored": False}
    if covariate not in (None, "confidence"):
        raise ConfigError(f"unknown covariate {covariate!r} (choose confidence or confidence-linear)")
    given = [k for k, v in (("min_elpd_gain", min_elpd_gain), ("confidence_combination", confidence_combination))
             if v is not None]
    stack_confidence = _check_stacking(stack_confidence, given, estimator=estimator, covariate=covariate,
                                       inference=inference)
    min_elpd_gain = check_min_elpd_gain(MIN_ELPD_GAIN if min_elpd_gain is None else min_elpd_gain)
    combination = check_combination("select" if confidence_combination is None else confidence_combination)
    rng = as_generator(seed)

    def build(options: Mapping[str, Any] | None) -> tuple[Any, int]:
        model_seed = int(rng.integers(2**31 - 1))
        return surface_spec(arms, estimator, model_options=options, covariate=covariate, observations=observations,
                            seed=int(rng.integers(2**31 - 1)), model_seed=model_seed), model_seed

    start = time.perf_counter()
    spec, model_seed = build(model_options)
    stack_confidence = _stacks(stack_confidence, spec, arms, given=given)
    widen = _widens(widen_scales, model_options, stacked=stack_confidence)
    fitted, diag = _sample(spec, inference, draws, sample_kwargs, rng, generator_is_own(seed))
    if stack_confidence:
        from pbassess.surface.stacking import compare_with_confidence, stack_accuracy_draws

        comparison = compare_with_confidence(fitted.idata, arms, min_elpd_gain=min_elpd_gain, combination=combination)
        widened = {"widened_scales": False} if widen else {}
        if widen and comparison.elpd_diff > max(min_elpd_gain, 0.0):  # the labels show the confidence wrong
            widened = _widened_diagnostics(diag, comparison)
            fitted = spec = None  # the default fit is not returned: free its draws before the refit's
            model_options = {**dict(model_options or {}), **LOOSE_ANCHORED_OPTIONS}
            spec, model_seed = build(model_options)
            fitted, diag = _sample(spec, inference, draws, sample_kwargs, rng, generator_is_own(seed))
            comparison = compare_with_confidence(fitted.idata, arms, min_elpd_gain=min_elpd_gain, combination=combination)
        tree = stack_accuracy_draws(fitted.idata, arms.confidence, comparison.weight)
        diag.update({**comparison.as_dict(), **widened})
    else:
        tree = fitted.idata
    options = {"covariate": covariate, "model_options": dict(model_options or {}), "model_seed": model_seed}
    if stack_confidence:
        options["stack_confidence"] = True
        options["confidence_combination"] = combination
    if conjugate_ok:
        prior = {"lambda": spec.lam} if estimator == "beta-i" else {"alpha": 1, "beta": 1}
    else:
        prior = dict(spec.options)
    return surface_result(arms, spec, tree, inference=inference, ci_prob=ci_prob, diagnostics=diag,
                          prior=prior, options=options, fit_seconds=time.perf_counter() - start,
                          model=fitted.sampled_model)
