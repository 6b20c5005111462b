"""``estimate``: a metric per region from few labels and many predictions, by several methods.

=============  ==================================================================================
method         estimate of each region's mean of the per-item statistic, and its interval
=============  ==================================================================================
``classical``  mean of the labeled items; for 0/1 statistics (accuracy, error) the exact
               Clopper-Pearson interval, otherwise the Wald (CLT) interval
``wald``       same mean, Wald (CLT) interval (``ppi_py.classical_mean_ci``; the ``classical``
               interval before 0.x): fails at the boundary (every label correct: width 0, so
               reported as NaN)
``wilson``     same mean, Wilson score interval (0/1 statistics)
``ppi``        PPI++ with power-tuned lambda (:mod:`pbassess.estimation.frequentist`), boundary-aware:
               for 0/1 statistics with fewer than 10 labeled errors (or successes) the hull of
               the PPI++ and the Clopper-Pearson interval; a region without unlabeled items or
               with one label falls back to the classical interval (lambda = 0)
``ppi-wald``   PPI++ with the plain CLT interval, ``ppi_py.ppi_mean_ci`` (clipped to [0, 1] for
               0/1 statistics, NaN where its width is 0; the ``ppi`` interval before 0.x)
``bayes``      posterior mean and equal-tailed credible interval of the region's pool accuracy with the confidence-informed
               hierarchical prior (:mod:`pbassess.estimation.bayes`; accuracy only)
=============  ==================================================================================

No interval of width zero is reported: where a method cannot give one (no labels; a CLT
interval of labels that are all equal, e.g. one labeled item) its bounds are NaN and
:func:`estimate` warns. Intervals of 0/1 statistics lie in [0, 1]. Coverage of each method at
the boundary: ``benchmarks/coverage.py``.

Labeled items are taken to be a uniform random sample of the pool (of each region).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any, ClassVar

import numpy as np
import xarray as xr

from pbassess.constants import CI_PROB, DEFAULT_BINS
from pbassess.counting import cell_counts as core_counts
from pbassess.data.predictions import Predictions
from pbassess.errors import ConfigError
from pbassess.estimation.bayes import bayes_estimate, cell_counts
from pbassess.estimation.frequentist import classical_intervals, ppi_mean_intervals
from pbassess.estimation.items import item_statistic, region_codes
from pbassess.estimation.methods import LEGACY_METHODS, METHODS
from pbassess.estimation.result import BayesEstimateResult, counts_dataset
from pbassess.results.base import AssessmentResult

__all__ = ["METHODS", "EstimationResult", "estimate"]

#: The interval kind of :func:`~pbassess.estimation.frequentist.classical_interval` of each classical method.
_CLASSICAL_KIND = {"classical": "auto", "wald": "wald", "wilson": "wilson"}


def _parse_methods(methods: str | Iterable[str], bounded: bool, accuracy_like: bool) -> list[str]:
    items = [m.strip() for m in methods.split(",")] if isinstance(methods, str) else [str(m) for m in methods]
    if "all" in items:
        items = [m for m in METHODS if (m != "wilson" or bounded) and (m != "bayes" or accuracy_like)
                 and m not in LEGACY_METHODS]
    for m in items:
        if m not in METHODS:
            raise ConfigError(f"unknown estimation method {m!r} (choose from {', '.join(METHODS)} or all)")
    if "wilson" in items and not bounded:
        raise ConfigError("the wilson interval needs a 0/1 statistic (accuracy or error)")
    if "bayes" in items and not accuracy_like:
        raise ConfigError("the Bayesian estimate models accuracy (a Beta-binomial); use classical or ppi")
    if not items:
        raise ConfigError(f"no estimation method given (choose from {', '.join(METHODS)} or all)")
    return list(dict.fromkeys(items))


def estimate(preds: Any, *, by: str | None = None, metric: Any = "accuracy",
             methods: str | Iterable[str] = ("classical", "ppi", "bayes"), ci_prob: float = CI_PROB,
             bins: int = DEFAULT_BINS, inference: str = "conjugate", draws: int | None = None,
             sample_kwargs: dict[str, Any] | None = None, seed: Any = None,
             region_offsets: bool = True) -> EstimationResult:
    r"""Estimate a mean-of-items metric per region with classical, PPI++ and Bayesian intervals.

    Parameters
    ----------
    preds : Predictions (or anything :func:`pbassess.data.as_predictions` accepts)
        Partially labeled pool; unlabeled items contribute their predictions.
    by : str, optional
        ``None`` (the whole pool), ``"predicted"`` or an attribute column.
    metric : str, MeanEstimand or callable
        ``accuracy``, ``error``, ``brier``, ``nll`` or a registered per-item metric.
    methods : str or iterable of str
        From :data:`METHODS`, or ``"all"`` (every applicable method but the legacy ``wald`` and
        ``ppi-wald``, which are given by name).
    ci_prob : float
        Coverage of the confidence intervals and mass of the Bayesian credible interval.
    bins : int
        Equal-mass confidence bins per region of the Bayesian prior.
    inference : {"conjugate", "nuts"}
        Inference of the Bayesian estimate: the empirical-Bayes fast path (``"conjugate"``; an
        approximation, see :mod:`pbassess.estimation.bayes`) or NUTS through
        :func:`pbassess.inference.fit` (``"mcmc"`` is the old spelling), whose fit is
        ``result.bayes``.
    draws : int, optional
        Posterior draws per chain of the Bayesian method (default 1000; the fast path, which has
        no chains, makes 4 x ``draws``).
    sample_kwargs : dict, optional
        ``pm.sample`` options (``inference="nuts"``).
    seed : int or Generator, optional
    region_offsets : bool
        Bayesian method: with labels in two or more regions, a calibration offset per region with
        a learned spread (:mod:`pbassess.estimation.regional`); ``False`` keeps one
        confidence-to-accuracy map for all regions.

    Returns
    -------
    EstimationResult
        One row per (estimator, group); with ``inference="nuts"`` its ``bayes`` is the Bayesian
        method's fit on the DataTree contract
        (:class:`~pbassess.estimation.result.BayesEstimateResult`).

    Notes
    -----
    Within a region, :math:`Y_i` is the statistic of labeled item :math:`i = 1, \dots, n` and
    :math:`f_i` its prediction from the model's scores; :math:`N` items are unlabeled.
    ``classical`` uses :math:`\bar Y`; ``ppi`` (PPI++) uses the predictions of every item,

    .. math::

       \hat\theta_\lambda = \lambda\, \bar f_{U} + \frac{1}{n} \sum_{i=1}^{n} (Y_i - \lambda f_i),
       \qquad
       \lambda = \operatorname{clip}_{[0, 1]}
       \frac{\widehat{\mathrm{Cov}}(Y, f)}{(1 + n/N)\, \widehat{\mathrm{Var}}(f)},

    with the interval
    :math:`\hat\theta_\lambda \pm z \sqrt{\widehat{\mathrm{Var}}(Y - \lambda f)/n + \lambda^2 \widehat{\mathrm{Var}}(f_U)/N}`.
    ``bayes`` (accuracy) splits each region :math:`r` into equal-mass confidence cells :math:`c`
    with :math:`N_c` items, :math:`n_c` labeled, :math:`y_c` correct, mean confidence :math:`\bar p_c`:

    .. math::

       \theta_c \sim \mathrm{Beta}\big(\mu_c \tau, (1 - \mu_c) \tau\big), \quad
       \operatorname{logit} \mu_c = a + u_{r(c)} + b \operatorname{logit} \bar p_c, \quad
       y_c \mid \theta_c \sim \mathrm{Binomial}(n_c, \theta_c),

       \text{accuracy}_r = \frac{1}{N_r} \sum_{c \in r} \big(y_c + \tilde y_c\big), \qquad
       \tilde y_c \sim \mathrm{Binomial}(N_c - n_c, \theta_c),

    with :math:`a, b, \log\tau` learned from every cell's labels and region offsets
    :math:`u_r \sim \mathcal{N}(0, \sigma^2)`, :math:`\sigma \sim \mathrm{HalfNormal}(1)` (with
    ``region_offsets`` and labels in two or more regions; else :math:`u_r = 0`).

    Examples
    --------
    >>> import numpy as np
    >>> from pbassess import Predictions
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.uniform(0.5, 1.0, 3000)
    >>> truth = np.where(rng.random(3000) < conf, 0, 1)
    >>> labels = np.where(np.arange(3000) < 200, truth, -1)
    >>> p = Predictions.from_top1(np.zeros(3000, int), conf, labels, classes=["a", "b"])
    >>> res = estimate(p, methods="classical,ppi", seed=0)
    >>> w = res.posterior["upper"] - res.posterior["lower"]
    >>> bool(w.sel(estimator="ppi", group="all") < w.sel(estimator="classical", group="all"))
    True
    """
    try:
        from pbassess.data import as_predictions
    except ImportError:  # the data layer's converter is newer than this module
        as_predictions = None
    pool = as_predictions(preds) if as_predictions is not None else preds
    if not isinstance(pool, Predictions):
        raise ConfigError(f"expected Predictions, got {type(preds).__name__}")
    pool.require_labels("estimation")
    stat = item_statistic(metric)
    accuracy_like = stat.name == "accuracy"
    names = _parse_methods(methods, stat.bounded, accuracy_like)
    if ("ppi" in names or "ppi-wald" in names) and stat.predicted is None:
        raise ConfigError(f"metric {stat.name!r} has no model prediction of its per-item statistic; ppi needs one")
    codes, groups = region_codes(pool, by)
    labeled = pool.labeled
    f_all = stat.predicted(pool) if stat.predicted is not None else None
    y_all = np.full(pool.n_items, np.nan)
    y_all[labeled] = stat.observed(pool, np.flatnonzero(labeled))
    n_groups = len(groups)
    out = {v: np.full((len(names), n_groups), np.nan) for v in ("mean", "lower", "upper")}
    lam = np.full(n_groups, np.nan)
    # every group at once (estimate --by over thousands of groups); the same numbers as the group-by-group
    # functions classical_interval / ppi_mean_interval (tested)
    lab_idx = np.flatnonzero(labeled)
    unl_idx = np.flatnonzero(~labeled)
    y_lab, g_lab, g_unl = y_all[lab_idx], codes[lab_idx], codes[unl_idx]
    n_lab_g = core_counts(g_lab, n_groups)
    n_unl_g = core_counts(g_unl, n_groups)
    for i, m in enumerate(names):
        if m in _CLASSICAL_KIND:
            res = classical_intervals(y_lab, g_lab, n_groups, ci_prob, _CLASSICAL_KIND[m])
        elif m in ("ppi", "ppi-wald"):
            kind = "auto" if m == "ppi" else "wald"
            *res, lam_m = ppi_mean_intervals(y_lab, f_all[lab_idx], g_lab, f_all[unl_idx], g_unl, n_groups, ci_prob,
                                             kind=kind)
            # a group without unlabeled items or with one label: the classical interval (lambda = 0)
            fallback = (n_unl_g == 0) | (n_lab_g < 2)
            classical = classical_intervals(y_lab, g_lab, n_groups, ci_prob, kind)
            res = [np.where(fallback, c, r) for c, r in zip(classical, res, strict=True)]
            lam = np.where(fallback, np.nan, lam_m)
        else:
            continue
        out["mean"][i], out["lower"][i], out["upper"][i] = res
    n_pool = core_counts(codes, n_groups)
    n_lab = core_counts(codes, n_groups, labeled).astype(int)
    idata, prior, diagnostics, bayes = None, {}, None, None
    if "bayes" in names:
        cells = cell_counts(pool.confidence, codes, n_groups, labeled, pool.correct, bins=bins)
        try:
            ids = pool.item_ids
        except KeyError:
            ids = None
        fit = bayes_estimate(cells, inference=inference, ci_prob=ci_prob, draws=draws, seed=seed,
                             sample_kwargs=sample_kwargs, region_offsets=region_offsets, regions=groups, item_ids=ids)
        i = names.index("bayes")
        out["mean"][i], out["lower"][i], out["upper"][i] = fit["mean"], fit["ci"][:, 0], fit["ci"][:, 1]
        idata, prior = fit["idata"], fit["prior"]
        if fit["fit"] is not None:
            fitted = fit["fit"]
            diagnostics = fitted.diagnostics
            bayes = BayesEstimateResult(
                idata["posterior"].to_dataset()[list(fitted.spec.reported)], counts_dataset(n_lab, n_pool, groups),
                prior=prior, data_summary=pool.describe(), inference="nuts", ci_prob=ci_prob, idata=idata,
                diagnostics=diagnostics, options={"by": by, "bins": int(bins), "region_offsets": bool(region_offsets)},
                model=fitted.model)
    _check_widths(out, names, groups)
    coords = {"estimator": names, "group": groups}
    posterior = xr.Dataset({k: (("estimator", "group"), v) for k, v in out.items()} | {"ppi_lambda": ("group", lam)},
                           coords=coords)
    counts = xr.Dataset({"n_pool": ("group", n_pool), "n_labeled": ("group", n_lab)}, coords={"group": groups})
    result = EstimationResult(
        posterior, counts, prior=prior, data_summary=pool.describe(),
        engine=_engine(inference) if "bayes" in names else "frequentist", ci_prob=ci_prob, idata=idata,
        diagnostics=diagnostics, options={"by": by, "metric": stat.name, "methods": names, "bins": int(bins)},
    )
    result.bayes = bayes
    return result


def _check_widths(out: dict[str, np.ndarray], names: list[str], groups: list[str]) -> None:
    """No zero-width frequentist interval leaves :func:`estimate`; warn where a method gives none (NaN bounds).

    The Bayesian interval is of the pool's accuracy, a finite-pool quantity: it has width 0 when every
    item of the region is labeled (the accuracy is then known), so it is not asserted here.
    """
    width = out["upper"] - out["lower"]
    frequentist = np.array([m != "bayes" for m in names])
    assert not (width[frequentist] <= 0).any(), "a zero-width (or reversed) interval must never be reported"
    missing = [f"{names[i]} / {groups[g]}" for i, g in zip(*np.nonzero(np.isnan(width)), strict=True)]
    if missing:
        warnings.warn("no interval (too few labels, or a CLT interval of labels that are all equal; "
                      "NaN bounds) for: " + ", ".join(missing[:10]) + (" ..." if len(missing) > 10 else ""),
                      UserWarning, stacklevel=3)


def _engine(inference: str) -> str:
    """The engine recorded for the Bayesian method (``mcmc`` for NUTS, as before)."""
    return "mcmc" if inference in ("nuts", "mcmc") else inference


class EstimationResult(AssessmentResult):
    """Estimates of a metric per region by several methods (dims ``estimator``, ``group``).

    ``posterior`` holds ``mean``, ``lower``, ``upper`` (estimator, group) and ``ppi_lambda`` (group);
    ``counts`` holds ``n_pool`` and ``n_labeled`` per group; ``prior`` the fitted
    confidence-to-accuracy prior (offset, slope, strength) of the Bayesian method. A table of
    several estimators is not one posterior, so the DataTree contract holds on the Bayesian
    part: ``bayes`` is its NUTS fit (:class:`~pbassess.estimation.result.BayesEstimateResult`;
    ``None`` for the fast path or without the Bayesian method).

    Parameters
    ----------
    posterior, counts, prior, data_summary, engine, inference, ci_prob, idata, diagnostics, options, model
        As for :class:`~pbassess.results.AssessmentResult`. Results are built by the assessment
        functions and by :func:`pbassess.load_result`; there is seldom a reason to construct one.

    Examples
    --------
    >>> import numpy as np
    >>> from pbassess import Predictions
    >>> from pbassess.estimation import estimate
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.uniform(0.5, 1.0, 1000)
    >>> truth = np.where(rng.random(1000) < conf, 0, 1)
    >>> labels = np.where(np.arange(1000) < 100, truth, -1)  # the first 100 items are labeled
    >>> pool = Predictions.from_top1(np.zeros(1000, int), conf, labels, classes=["a", "b"])
    >>> res = estimate(pool, methods="classical,ppi", seed=0)
    >>> type(res).__name__, res.posterior["mean"].dims
    ('EstimationResult', ('estimator', 'group'))
    >>> res.counts["n_labeled"].values.tolist(), res.counts["n_pool"].values.tolist()
    ([100], [1000])
    >>> classical = res.posterior["mean"].sel(estimator="classical", group="all")
    >>> bool(classical == (truth[:100] == 0).mean())  # the classical estimate is the labeled mean
    True
    """

    metric: ClassVar[str] = "estimation"
    #: The Bayesian method's NUTS fit on the DataTree contract (None: fast path, or no Bayesian method).
    bayes: BayesEstimateResult | None = None

    def _extra_datasets(self) -> dict[str, Any]:
        return {} if self.bayes is None else {"bayes": self.bayes}

    def _restore(self, state: dict[str, Any], datasets: dict[str, Any]) -> None:
        self.bayes = datasets.get("bayes")

    @property
    def methods(self) -> list[str]:
        return [str(m) for m in self.posterior["estimator"].values]

    @property
    def groups(self) -> list[str]:
        return [str(g) for g in self.posterior["group"].values]

    def reasons(self) -> dict[str, list[str | None]]:
        """Per method, per group: why there is no interval (``None`` where there is one).

        ``"no labeled items"``, ``"one labeled item"`` (a CLT interval needs two), or ``"the labeled
        values are all equal"`` (a Wald or PPI++ CLT interval would have width 0).

        Examples
        --------
        >>> import numpy as np
        >>> from pbassess import Predictions
        >>> p = Predictions.from_top1([0] * 6, [.9] * 6, [0, 0, 1, -1, -1, -1], classes=["a", "b"],
        ...                           groups={"g": ["x", "x", "y", "y", "z", "z"]})
        >>> estimate(p, by="g", methods="wald,classical").reasons()["wald"]
        ['the labeled values are all equal', 'one labeled item', 'no labeled items']
        """
        n_lab = self.counts["n_labeled"].to_numpy()
        out = {}
        for m in self.methods:
            p = self.posterior.sel(estimator=m)
            missing = ~(np.isfinite(p["lower"].to_numpy()) & np.isfinite(p["upper"].to_numpy()))
            out[m] = [None if not miss else "no labeled items" if n == 0 else "one labeled item" if n == 1
                      else "the labeled values are all equal" for miss, n in zip(missing, n_lab, strict=True)]
        return out

    def summary(self):
        """One row per (estimator, group): estimate, interval, width, labeled and pool sizes, and why there is no interval."""
        df = self.posterior[["mean", "lower", "upper"]].to_dataframe().reset_index()
        df["width"] = df["upper"] - df["lower"]
        sizes = self.counts.to_dataframe().reset_index()
        df = df.merge(sizes, on="group")
        reasons = self.reasons()
        index = {g: j for j, g in enumerate(self.groups)}
        df["no_interval"] = [reasons[m][index[g]] or "" for m, g in zip(df["estimator"], df["group"], strict=True)]
        return df

    def sentence(self) -> str:
        metric = self.options.get("metric", "metric")
        best = "ppi" if "ppi" in self.methods else self.methods[0]
        p = self.posterior.sel(estimator=best)
        g = self.groups[0]
        n_lab = int(self.counts["n_labeled"].sum())
        n_unl = int(self.counts["n_pool"].sum()) - n_lab
        mean, lo, hi = (float(p[v].sel(group=g)) for v in ("mean", "lower", "upper"))
        shown = "no estimate" if not np.isfinite(mean) else f"{mean:.3f}"
        shown += (f" [{lo:.3f}, {hi:.3f}]" if np.isfinite(lo) and np.isfinite(hi)
                  else f" (no interval: {self.reasons()[best][0]})")
        text = (f"{metric} of {g}: {shown} by {best}, "
                f"from {n_lab} labels and {n_unl} unlabeled predictions")
        if "classical" in self.methods and best != "classical":
            w = self.posterior["upper"] - self.posterior["lower"]
            ratio = float(w.sel(estimator="classical", group=g) / w.sel(estimator=best, group=g))
            if np.isfinite(ratio):
                text += f" (the classical interval is {ratio:.2f}x as wide)"
        return text + ("" if len(self.groups) == 1 else f"; {len(self.groups)} groups in all")

    def to_json(self) -> dict[str, Any]:
        """``{"metric", "groups", "methods": {name: {"mean", "ci", "reason"}}, "n_labeled", "n_unlabeled", ...}``.

        ``ci`` is null (NaN) where the method gives no interval and ``reason`` says why (null elsewhere).
        """
        reasons = self.reasons()
        methods = {}
        for m in self.methods:
            p = self.posterior.sel(estimator=m)
            methods[m] = {"mean": p["mean"].values.tolist(),
                          "ci": np.stack([p["lower"].values, p["upper"].values], axis=-1).tolist(),
                          "reason": reasons[m]}
        n_lab = int(self.counts["n_labeled"].sum())
        return {
            "metric": self.options.get("metric", "accuracy"), "groups": self.groups, "methods": methods,
            "n_labeled": n_lab, "n_unlabeled": int(self.counts["n_pool"].sum()) - n_lab,
            "n_labeled_per_group": self.counts["n_labeled"].values.tolist(),
            "ppi_lambda": self.posterior["ppi_lambda"].values.tolist(),
            "bayes_prior": self.prior or None,
            "inference": self.engine, "ci_prob": self.ci_prob, "diagnostics": self.diagnostics,
            "sentence": self.sentence(),
        }

    def plot(self, ax=None, **kwargs: Any):
        """Estimates with their intervals, one marker per method, groups along the x axis; returns the Axes.

        Drawn by :func:`pbassess.plots.estimation.plot_estimates` (readable group names, legend off the data).
        """
        from pbassess.plots.estimation import plot_estimates

        drawn = plot_estimates(self, ax=ax, **kwargs)
        return drawn if ax is not None else drawn.axes[0]
