"""Hierarchical multi-environment assessment: functions and result objects.

:func:`assess_hierarchical` fits the partially pooled accuracy model of
:mod:`pbassess.hierarchical.models` to the labeled items of each environment (a group column:
hospital, period, shift intensity, demographic group) and returns a
:class:`HierarchicalResult`: the posterior accuracy of every environment, the population
posterior (mean and spread of environment accuracies, and the accuracy to expect in a new
environment), and the MCMC diagnostics. :func:`assess_hierarchical_calibration` does the same
for reliability diagrams and each environment's ECE (:class:`HierarchicalCalibrationResult`).

Every summary reports R-hat and bulk ESS per row and, in ``summary().attrs["diagnostics"]``
and in :meth:`~HierarchicalResult.to_json`, the max R-hat, min bulk ESS and divergence count;
a fit that fails them warns (``UserWarning``) when it is made.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import xarray as xr

from pbassess.constants import CI_PROB, DEFAULT_BINS
from pbassess.hierarchical.models import (
    CalibrationCounts,
    EnvironmentCounts,
    accuracy_model,
    calibration_counts,
    calibration_model,
    environment_counts,
    population_draws,
    sample_model,
    sampler_settings,
)
from pbassess.results import AssessmentResult, mcmc_diagnostics
from pbassess.stats import hdi_from_draws

__all__ = [
    "HierarchicalCalibrationResult",
    "HierarchicalResult",
    "assess_hierarchical",
    "assess_hierarchical_calibration",
    "fit_accuracy_counts",
    "posterior_diagnostics",
]


def posterior_diagnostics(posterior: xr.Dataset, var: str) -> tuple[np.ndarray, np.ndarray]:
    """R-hat and bulk ESS of every element of ``posterior[var]`` (NaN with a single chain).

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> ds = xr.Dataset({"x": (("chain", "draw"), np.random.default_rng(0).normal(size=(4, 500)))})
    >>> rhat, ess = posterior_diagnostics(ds, "x")
    >>> bool(abs(rhat - 1) < 0.01), bool(ess > 1000)
    (True, True)
    """
    import arviz as az

    da = posterior[var]
    if da.sizes.get("chain", 1) < 2:
        shape = tuple(s for d, s in da.sizes.items() if d not in ("chain", "draw"))
        return np.full(shape, np.nan), np.full(shape, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rhat = az.rhat(da.to_dataset(name=var))[var].to_numpy()
        ess = az.ess(da.to_dataset(name=var), method="bulk")[var].to_numpy()
    return rhat, ess


def _interval(draws: np.ndarray, prob: float) -> tuple[np.ndarray, np.ndarray]:
    flat = draws.reshape(-1, *draws.shape[2:])
    hdi = hdi_from_draws(flat, prob, axis=0)
    return flat.mean(axis=0), hdi


def _diagnostics_from(idata: Any, var_names: list[str]) -> dict[str, float]:
    diag = mcmc_diagnostics(idata, var_names=var_names)
    return {k: (int(v) if k == "divergences" else float(v)) for k, v in diag.items()}


def _free_names(model: Any) -> list[str]:
    return [v.name for v in model.free_RVs]


class _HierarchicalBase(AssessmentResult):
    """Shared helpers of the hierarchical results."""

    metric = "hierarchical-base"

    @property
    def by(self) -> str:
        """The group column that defines the environments."""
        return str(self.options.get("by", "environment"))

    @property
    def environments(self) -> list[str]:
        """The environment names, in the posterior's order."""
        return [str(e) for e in self.posterior["environment"].to_numpy()]

    def _diag(self) -> dict[str, Any]:
        diag = dict(self.diagnostics or {})
        return {
            "max_rhat": diag.get("max_rhat"),
            "min_ess_bulk": diag.get("min_ess_bulk"),
            "divergences": diag.get("divergences"),
        }

    def _stat(self, var: str) -> dict[str, Any]:
        mean, hdi = _interval(self.posterior[var].transpose("chain", "draw", ...).to_numpy(), self.ci_prob)
        return {"mean": mean, "hdi": hdi}


class HierarchicalResult(_HierarchicalBase):
    """Posterior accuracy per environment (x predicted class) with partial pooling.

    Attributes beyond :class:`~pbassess.results.AssessmentResult`: ``by`` (the group column),
    ``environments``, ``classes`` (or None), ``kind`` and ``pooling``. Posterior variables:
    ``accuracy`` (environment[, class]), ``population_mean``, ``population_sd`` and
    ``new_environment`` (scalars per draw) and the model's hyperparameters.
    """

    metric = "hierarchical"

    @property
    def classes(self) -> list[str] | None:
        return [str(c) for c in self.posterior["class"].to_numpy()] if "class" in self.posterior.dims else None

    @property
    def kind(self) -> str:
        return str(self.options.get("kind", "logit-normal"))

    @property
    def pooling(self) -> str:
        return str(self.options.get("pooling", "hierarchical"))

    def summary(self):
        """One row per environment (x class) and three population rows.

        Columns: ``level``, ``environment``, (``class``), ``mean``, ``hdi_low``, ``hdi_high``,
        ``n_labeled``, ``n_correct``, ``n_items``, ``raw_accuracy`` (k/n, the independent point
        estimate), ``r_hat``, ``ess_bulk``. ``attrs["diagnostics"]`` holds the fit's max R-hat,
        min bulk ESS and divergences.
        """
        import pandas as pd

        acc = self._stat("accuracy")
        rhat, ess = posterior_diagnostics(self.posterior, "accuracy")
        n = self.counts["n_labeled"].to_numpy()
        k = self.counts["n_correct"].to_numpy()
        with np.errstate(invalid="ignore", divide="ignore"):
            raw = np.where(n > 0, k / np.maximum(n, 1), np.nan)
        envs = self.environments
        rows = []
        if self.classes is None:
            cells = [(i, (i,), {"environment": e}) for i, e in enumerate(envs)]
        else:
            cells = [(i * len(self.classes) + j, (i, j), {"environment": e, "class": c})
                     for i, e in enumerate(envs) for j, c in enumerate(self.classes)]
        for _, idx, names in cells:
            rows.append({
                "level": "environment", **names, "mean": acc["mean"][idx], "hdi_low": acc["hdi"][idx][0],
                "hdi_high": acc["hdi"][idx][1], "n_labeled": int(n[idx]), "n_correct": int(k[idx]),
                "n_items": int(self.counts["n_items"].to_numpy()[idx]), "raw_accuracy": raw[idx],
                "r_hat": rhat[idx], "ess_bulk": ess[idx],
            })
        for var, label in (("population_mean", "population mean"), ("population_sd", "population sd"),
                           ("new_environment", "new environment")):
            if var in self.posterior:
                st = self._stat(var)
                r, e = posterior_diagnostics(self.posterior, var)
                rows.append({"level": "population", "environment": label, "mean": float(st["mean"]),
                             "hdi_low": float(st["hdi"][0]), "hdi_high": float(st["hdi"][1]),
                             "r_hat": float(r), "ess_bulk": float(e)})
        table = pd.DataFrame(rows)
        table.attrs["diagnostics"] = self._diag()
        table.attrs["ci_prob"] = self.ci_prob
        return table

    def sentence(self) -> str:
        acc = self._stat("accuracy")
        pct = int(round(self.ci_prob * 100))
        envs = self.environments
        if self.classes is None:
            order = np.argsort(acc["mean"])
            lo, hi = envs[order[0]], envs[order[-1]]
            text = (f"Across {len(envs)} environments of {self.by!r} ({self.pooling}), accuracy ranges from "
                    f"{acc['mean'][order[0]]:.3f} ({lo}) to {acc['mean'][order[-1]]:.3f} ({hi})")
        else:
            text = (f"Accuracy per environment of {self.by!r} x {len(self.classes)} predicted classes "
                    f"({self.pooling}), mean cell accuracy {np.mean(acc['mean']):.3f}")
        if "population_mean" in self.posterior:
            pm_ = self._stat("population_mean")
            text += (f"; population mean {float(pm_['mean']):.3f} ({pct}% HDI {pm_['hdi'][0]:.3f}-"
                     f"{pm_['hdi'][1]:.3f})")
        diag = self._diag()
        if diag["max_rhat"] is not None:
            text += (f"; R-hat <= {diag['max_rhat']:.3f}, min ESS {diag['min_ess_bulk']:.0f}, "
                     f"{diag['divergences']} divergences")
        return text + "."

    def to_json(self) -> dict[str, Any]:
        """``{"metric", "by", "kind", "pooling", "environments", ("classes"), "mean", "hdi",
        "n_labeled", "n_items", "raw_accuracy", "population": {...}, "diagnostics": {"max_rhat",
        "min_ess_bulk", "divergences"}}``."""
        acc = self._stat("accuracy")
        n = self.counts["n_labeled"].to_numpy()
        k = self.counts["n_correct"].to_numpy()
        with np.errstate(invalid="ignore", divide="ignore"):
            raw = np.where(n > 0, k / np.maximum(n, 1), np.nan)
        out: dict[str, Any] = {
            "metric": self.metric, "by": self.by, "kind": self.kind, "pooling": self.pooling,
            "ci_prob": self.ci_prob, "environments": self.environments,
        }
        if self.classes is not None:
            out["classes"] = self.classes
        out.update({"mean": acc["mean"].tolist(), "hdi": acc["hdi"].tolist(), "n_labeled": n.tolist(),
                    "n_items": self.counts["n_items"].to_numpy().tolist(), "raw_accuracy": raw.tolist()})
        population = {}
        for var, key in (("population_mean", "mean"), ("population_sd", "sd"), ("new_environment", "new_environment")):
            if var in self.posterior:
                st = self._stat(var)
                population[key] = {"mean": float(st["mean"]), "hdi": [float(st["hdi"][0]), float(st["hdi"][1])]}
        out["population"] = population
        out["diagnostics"] = self._diag()
        return out

    def plot(self, **kwargs: Any):
        """Forest plot of environment accuracies (heatmap for environment x class)."""
        from pbassess.plots.hierarchical import (
            plot_environment_accuracy,
            plot_environment_class_accuracy,
        )

        if self.classes is not None:
            return plot_environment_class_accuracy(self, **kwargs)
        return plot_environment_accuracy(self, **kwargs)


class HierarchicalCalibrationResult(_HierarchicalBase):
    """Reliability per environment with pooled bin accuracies, and each environment's ECE.

    Posterior variables: ``bin_accuracy`` (environment, bin), ``reliability`` (bin: the
    population curve), ``ece`` (environment), ``sigma``.
    """

    metric = "hierarchical-calibration"

    @property
    def bins(self) -> list[str]:
        return [str(b) for b in self.posterior["bin"].to_numpy()]

    def summary(self):
        """One row per environment: ECE mean and HDI, plug-in ECE of the labeled items, counts,
        R-hat and bulk ESS; ``attrs["diagnostics"]`` as for :class:`HierarchicalResult`."""
        import pandas as pd

        from pbassess.stats import frequentist_ece

        ece = self._stat("ece")
        rhat, ess = posterior_diagnostics(self.posterior, "ece")
        n = self.counts["n_labeled"].to_numpy()
        k = self.counts["n_correct"].to_numpy()
        score = np.nan_to_num(self.counts["score"].to_numpy())
        rows = []
        for i, env in enumerate(self.environments):
            rows.append({
                "environment": env, "ece_mean": ece["mean"][i], "hdi_low": ece["hdi"][i][0],
                "hdi_high": ece["hdi"][i][1], "plugin_ece": frequentist_ece(n[i], k[i], score[i] * n[i]),
                "n_labeled": int(n[i].sum()), "n_items": int(self.counts["n_items"].to_numpy()[i].sum()),
                "r_hat": rhat[i], "ess_bulk": ess[i],
            })
        table = pd.DataFrame(rows)
        table.attrs["diagnostics"] = self._diag()
        table.attrs["ci_prob"] = self.ci_prob
        return table

    def sentence(self) -> str:
        ece = self._stat("ece")
        order = np.argsort(ece["mean"])
        envs = self.environments
        diag = self._diag()
        text = (f"ECE across {len(envs)} environments of {self.by!r} ranges from {ece['mean'][order[0]]:.3f} "
                f"({envs[order[0]]}) to {ece['mean'][order[-1]]:.3f} ({envs[order[-1]]})")
        if diag["max_rhat"] is not None:
            text += (f"; R-hat <= {diag['max_rhat']:.3f}, min ESS {diag['min_ess_bulk']:.0f}, "
                     f"{diag['divergences']} divergences")
        return text + "."

    def to_json(self) -> dict[str, Any]:
        """``{"metric", "by", "environments", "bins", "ece": {"mean", "hdi"}, "bin_accuracy":
        {"mean"}, "reliability": {"mean", "hdi"}, "diagnostics": {...}}``."""
        ece = self._stat("ece")
        bin_acc = self._stat("bin_accuracy")
        rel = self._stat("reliability")
        return {
            "metric": self.metric, "by": self.by, "ci_prob": self.ci_prob, "environments": self.environments,
            "bins": self.bins, "ece": {"mean": ece["mean"].tolist(), "hdi": ece["hdi"].tolist()},
            "bin_accuracy": {"mean": bin_acc["mean"].tolist()},
            "reliability": {"mean": rel["mean"].tolist(), "hdi": rel["hdi"].tolist()},
            "diagnostics": self._diag(),
        }

    def plot(self, **kwargs: Any):
        """Reliability diagrams per environment (small multiples)."""
        from pbassess.plots.hierarchical import plot_environment_reliability

        return plot_environment_reliability(self, **kwargs)


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
    **sampler: Any,
) -> HierarchicalResult:
    """Fit the accuracy model to precomputed :class:`EnvironmentCounts`.

    Same options as :func:`assess_hierarchical`; ``prior_predictive`` > 0 also stores that many
    prior predictive draws in ``result.idata``.

    Examples
    --------
    >>> import numpy as np
    >>> from pbassess.hierarchical.models import EnvironmentCounts
    >>> c = EnvironmentCounts("site", ("a", "b"), np.array([40, 5]), np.array([36, 3]),
    ...                       np.array([40, 50]), np.array([0.9, 0.8]))
    >>> r = fit_accuracy_counts(c, seed=0, draws=100, tune=100, chains=1, sampler="pymc")
    >>> r.to_json()["environments"]
    ['a', 'b']
    """
    from pbassess.stats import as_generator

    rng = as_generator(seed)
    settings = sampler_settings(**sampler)
    model = accuracy_model(
        counts.n, counts.k, environments=counts.environments, classes=counts.classes, pooling=pooling,
        kind=kind, prior=prior, prior_mean=counts.mean_confidence, pseudocount=pseudocount,
        parameterization=parameterization,
    )
    idata = sample_model(model, seed=rng, prior_predictive=prior_predictive, **settings)
    post = idata["posterior"].to_dataset()
    keep = ["accuracy"] + [v for v in ("mu", "sigma", "sigma_environment", "sigma_class", "phi", "kappa",
                                        "pooled_accuracy") if v in post]
    posterior = post[keep]
    if pooling == "hierarchical":
        pop = population_draws(post, kind, seed=rng)
        for name, value in pop.items():
            posterior[name] = (("chain", "draw"), value)
    diagnostics = _diagnostics_from(idata, _free_names(model))
    opts = {"by": counts.by, "kind": kind, "pooling": pooling, "per_class": counts.per_class,
            "parameterization": parameterization, "sampler": settings}
    return HierarchicalResult(
        posterior, _env_counts_dataset(counts),
        prior={"kind": prior, "pseudocount": pseudocount, "population": kind if pooling == "hierarchical" else None,
               "mu": "Normal(0 or logit(mean confidence), 1.5)", "sigma": "HalfNormal(1)"},
        data_summary=data_summary or {}, engine=f"mcmc-{settings['sampler']}", ci_prob=ci_prob, idata=idata,
        diagnostics=diagnostics, options=opts,
    )


def assess_hierarchical(
    predictions: Any,
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
    **sampler: Any,
) -> HierarchicalResult:
    """Accuracy of a classifier in each environment, partially pooled across environments.

    Parameters
    ----------
    predictions : Predictions
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
        See :func:`pbassess.hierarchical.models.accuracy_model`.
    pseudocount : float
        Prior strength of the independent / pooled Beta priors.
    parameterization : {"auto", "noncentered", "centered"}
        NUTS geometry (same posterior).
    environments : sequence of str, optional
        Environment order; may name environments with no items.
    ci_prob : float
        Credible mass of the HDIs.
    seed : int or Generator, optional
    **sampler
        NUTS settings: ``draws``, ``tune``, ``chains``, ``cores``, ``target_accept``,
        ``sampler`` (defaults in :data:`pbassess.hierarchical.models.DEFAULT_SAMPLER`).

    Returns
    -------
    HierarchicalResult

    Examples
    --------
    >>> import numpy as np
    >>> from pbassess import Predictions
    >>> rng = np.random.default_rng(0)
    >>> env = np.repeat(["a", "b", "c"], [60, 60, 6])
    >>> correct = rng.random(126) < np.where(env == "a", 0.9, 0.7)
    >>> p = Predictions.from_top1(np.where(correct, "x", "y"), np.full(126, 0.8), np.full(126, "x"),
    ...                           classes=["x", "y"], groups={"site": env})
    >>> r = assess_hierarchical(p, "site", seed=1, draws=200, tune=200, chains=2, sampler="pymc")
    >>> r.summary()["environment"].tolist()[:3]
    ['a', 'b', 'c']
    """
    predictions.require_labels("the hierarchical assessment")
    counts = environment_counts(predictions, by, per_class=per_class, environments=environments)
    return fit_accuracy_counts(
        counts, pooling=pooling, kind=kind, prior=prior, pseudocount=pseudocount, parameterization=parameterization,
        ci_prob=ci_prob, seed=seed, data_summary={**predictions.describe(), "by": by}, **sampler,
    )


def assess_hierarchical_calibration(
    predictions: Any,
    by: str,
    *,
    bins: int | Any = DEFAULT_BINS,
    prior: str = "uniform",
    parameterization: str = "auto",
    environments: Sequence[str] | None = None,
    ci_prob: float = CI_PROB,
    seed: Any = None,
    **sampler: Any,
) -> HierarchicalCalibrationResult:
    """Reliability diagram and ECE of each environment, bin accuracies pooled across environments.

    Parameters are those of :func:`assess_hierarchical`, plus ``bins`` (number of equal-width
    confidence bins or their edges). ``prior="informed"`` centres each bin's population
    accuracy on the bin's mean confidence (perfect calibration); the default does not.

    Returns
    -------
    HierarchicalCalibrationResult

    Examples
    --------
    >>> import numpy as np
    >>> from pbassess import Predictions
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.uniform(0.5, 1, 300)
    >>> p = Predictions.from_top1(np.zeros(300, int), conf, (rng.random(300) > conf).astype(int),
    ...                           classes=["0", "1"], groups={"site": np.repeat(["x", "y", "z"], 100)})
    >>> r = assess_hierarchical_calibration(p, "site", bins=5, seed=0, draws=200, tune=200, chains=2,
    ...                                     sampler="pymc")
    >>> len(r.to_json()["ece"]["mean"])
    3
    """
    predictions.require_labels("the hierarchical calibration assessment")
    counts: CalibrationCounts = calibration_counts(predictions, by, bins=bins, environments=environments)
    settings = sampler_settings(**sampler)
    model = calibration_model(counts, prior=prior, parameterization=parameterization)
    idata = sample_model(model, seed=seed, **settings)
    post = idata["posterior"].to_dataset()
    posterior = post[["bin_accuracy", "reliability", "ece", "sigma"]]
    used = np.asarray(model.pbassess_info["bins_used"], dtype=bool)
    bins_used = [b for b, u in zip(counts.bins, used, strict=True) if u]
    count_ds = xr.Dataset(
        {"n_labeled": (("environment", "bin"), counts.n[:, used]),
         "n_correct": (("environment", "bin"), counts.k[:, used]),
         "n_items": (("environment", "bin"), counts.n_items[:, used]),
         "weight": (("environment", "bin"), counts.weight[:, used]),
         "score": (("environment", "bin"), counts.score[:, used]),
         "edges": (("edge",), counts.edges)},
        coords={"environment": list(counts.environments), "bin": bins_used},
    )
    diagnostics = _diagnostics_from(idata, _free_names(model))
    return HierarchicalCalibrationResult(
        posterior, count_ds, prior={"kind": prior, "bin_mu": "Normal(0 or logit(bin score), 1.5)",
                                    "sigma": "HalfNormal(1)"},
        data_summary={**predictions.describe(), "by": by}, engine=f"mcmc-{settings['sampler']}", ci_prob=ci_prob,
        idata=idata, diagnostics=diagnostics,
        options={"by": by, "bins": counts.edges.size - 1, "parameterization": parameterization, "sampler": settings},
    )
