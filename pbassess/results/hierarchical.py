"""Results of the hierarchical assessments: environments (:func:`pbassess.assess_hierarchical`) and shift trends.

Every summary reports R-hat and bulk ESS per row and, in ``summary().attrs["diagnostics"]``
and in ``to_json()``, the fit's diagnostics (:func:`pbassess.inference.diagnostics`: worst
summary R-hat, min ESS, divergences, ``ok``); a fit that fails them says so in its sentence.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import xarray as xr

from pbassess.results.base import AssessmentResult
from pbassess.stats import hdi_from_draws

__all__ = ["HierarchicalCalibrationResult", "HierarchicalResult", "ShiftTrendResult", "posterior_diagnostics"]


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
        """The fit's diagnostics (keys ``max_rhat``, ``min_ess_bulk``, ``divergences``, ``ok``, ...)."""
        diag = dict(self.diagnostics or {})
        for key in ("max_rhat", "min_ess_bulk", "divergences"):
            diag.setdefault(key, None)
        return diag

    def _diag_text(self) -> str:
        diag = self._diag()
        if diag["max_rhat"] is None and diag["min_ess_bulk"] is None:
            return ""
        rhat = f"R-hat <= {diag['max_rhat']:.3f}" if diag["max_rhat"] is not None else "R-hat skipped (1 chain)"
        ess = f"{diag['min_ess_bulk']:.0f}" if diag["min_ess_bulk"] is not None else "n/a"
        return f"; {rhat}, min ESS {ess}, {diag['divergences']} divergences"

    def _stat(self, var: str) -> dict[str, Any]:
        mean, hdi = _interval(self.posterior[var].transpose("chain", "draw", ...).to_numpy(), self.ci_prob)
        return {"mean": mean, "hdi": hdi}

    def interval(self, var: str) -> dict[str, Any]:
        """Posterior ``{"mean", "hdi"}`` of ``var`` at ``ci_prob`` (what the plots draw; they compute nothing)."""
        return self._stat(var)


class HierarchicalResult(_HierarchicalBase):
    """Posterior accuracy per environment (x predicted class) with partial pooling.

    Attributes beyond :class:`~pbassess.results.AssessmentResult`: ``by`` (the group column),
    ``environments``, ``classes`` (or None), ``kind`` and ``pooling``. Posterior variables:
    ``accuracy`` (environment[, class]), ``population_mean``, ``population_sd`` and
    ``new_environment`` (scalars per draw) and the model's hyperparameters.

    Parameters
    ----------
    posterior, counts, prior, data_summary, engine, inference, ci_prob, idata, diagnostics, options, model
        As for :class:`~pbassess.results.AssessmentResult`. Results are built by the assessment
        functions and by :func:`pbassess.load_result`; there is seldom a reason to construct one.

    Examples
    --------
    >>> from pbassess.data.examples import three_site_pool
    >>> p = three_site_pool()  # sites a, b, c: 40, 40 and 8 items, 90%, 70% and 50% right
    >>> from pbassess.assess import assess_hierarchical
    >>> res = assess_hierarchical(p, "site", seed=0, sample_kwargs={"draws": 100, "tune": 100, "chains": 1,
    ...                           "sampler": "pymc"})  # a tiny NUTS run, for the example only
    >>> res.environments, res.pooling, res.posterior["accuracy"].dims
    (['a', 'b', 'c'], 'hierarchical', ('chain', 'draw', 'environment'))
    >>> t = res.summary().set_index("environment")
    >>> t.loc[["a", "b", "c"], "raw_accuracy"].tolist()
    [0.9, 0.7, 0.5]
    >>> bool(t.loc["c", "mean"] > t.loc["c", "raw_accuracy"])  # the small site is pulled toward the others
    True
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
        table = self.annotate(table)
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
        return self.qualify(text + self._diag_text() + ".")

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
        return self.with_envelope(out)

    def _build_model(self):
        """The accuracy model rebuilt from the saved counts and options."""
        from pbassess.pymc_models.hierarchical import accuracy_model

        c = self.counts
        return accuracy_model(
            c["n_labeled"].to_numpy(), c["n_correct"].to_numpy(), environments=self.environments,
            classes=self.classes, pooling=self.pooling, kind=self.kind,
            prior=str(self.prior.get("kind", "uniform")), prior_mean=c["mean_confidence"].to_numpy(),
            pseudocount=float(self.prior.get("pseudocount", 2.0)),
            parameterization=str(self.options.get("parameterization", "auto")),
        )

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

    Parameters
    ----------
    posterior, counts, prior, data_summary, engine, inference, ci_prob, idata, diagnostics, options, model
        As for :class:`~pbassess.results.AssessmentResult`. Results are built by the assessment
        functions and by :func:`pbassess.load_result`; there is seldom a reason to construct one.

    Examples
    --------
    >>> from pbassess.assess import assess_hierarchical_calibration
    >>> from pbassess.data.examples import example_pool
    >>> p = example_pool(300, sites=["x", "y", "z"], seed=0)
    >>> res = assess_hierarchical_calibration(p, "site", bins=5, seed=0, sample_kwargs={"draws": 100, "tune": 100,
    ...                                       "chains": 1, "sampler": "pymc"})  # a tiny NUTS run, for the example only
    >>> res.environments, res.posterior["bin_accuracy"].dims[2:], res.posterior["ece"].dims[2:]
    (['x', 'y', 'z'], ('environment', 'bin'), ('environment',))
    >>> res.summary()["environment"].tolist()
    ['x', 'y', 'z']
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
        table = self.annotate(table)
        table.attrs["diagnostics"] = self._diag()
        table.attrs["ci_prob"] = self.ci_prob
        return table

    def sentence(self) -> str:
        ece = self._stat("ece")
        order = np.argsort(ece["mean"])
        envs = self.environments
        text = (f"ECE across {len(envs)} environments of {self.by!r} ranges from {ece['mean'][order[0]]:.3f} "
                f"({envs[order[0]]}) to {ece['mean'][order[-1]]:.3f} ({envs[order[-1]]})")
        return self.qualify(text + self._diag_text() + ".")

    def to_json(self) -> dict[str, Any]:
        """``{"metric", "by", "environments", "bins", "ece": {"mean", "hdi"}, "bin_accuracy":
        {"mean"}, "reliability": {"mean", "hdi"}, "diagnostics": {...}}``."""
        ece = self._stat("ece")
        bin_acc = self._stat("bin_accuracy")
        rel = self._stat("reliability")
        return self.with_envelope({
            "metric": self.metric, "by": self.by, "ci_prob": self.ci_prob, "environments": self.environments,
            "bins": self.bins, "ece": {"mean": ece["mean"].tolist(), "hdi": ece["hdi"].tolist()},
            "bin_accuracy": {"mean": bin_acc["mean"].tolist()},
            "reliability": {"mean": rel["mean"].tolist(), "hdi": rel["hdi"].tolist()},
            "diagnostics": self._diag(),
        })

    def _build_model(self):
        """The calibration model rebuilt from the saved counts (the bins it kept) and options."""
        from types import SimpleNamespace

        from pbassess.pymc_models.hierarchical import calibration_model

        c = self.counts
        cells = SimpleNamespace(n=c["n_labeled"].to_numpy(), k=c["n_correct"].to_numpy(),
                                n_items=c["n_items"].to_numpy(), weight=c["weight"].to_numpy(),
                                score=c["score"].to_numpy(), environments=self.environments, bins=self.bins)
        return calibration_model(cells, prior=str(self.prior.get("kind", "uniform")),
                                 parameterization=str(self.options.get("parameterization", "auto")))

    def plot(self, **kwargs: Any):
        """Reliability diagrams per environment (small multiples)."""
        from pbassess.plots.hierarchical import plot_environment_reliability

        return plot_environment_reliability(self, **kwargs)




class ShiftTrendResult(_HierarchicalBase):
    """Accuracy or calibration pooled across ordered shift levels with a trend in the intensity.

    From :func:`pbassess.shift.hierarchical.fit_accuracy_trend`, :func:`~pbassess.shift.hierarchical.fit_table_trend`
    (``trend="accuracy"``: posterior ``theta`` per level, ``alpha``, ``beta``, ``sigma``) or
    :func:`~pbassess.shift.hierarchical.fit_calibration_trend` (``trend="calibration"``: ``ece``
    and ``delta`` per level, ``a``, ``b``, ``sigma``, ``tau``). ``counts`` holds ``n_labeled``,
    ``n_correct`` (per level, or level x bin) and ``intensity``.

    Examples
    --------
    >>> from unittest import mock
    >>> from pbassess.inference import mock_pymc_sample
    >>> from pbassess.shift.hierarchical import fit_accuracy_trend
    >>> with mock.patch("pymc.sample", mock_pymc_sample):  # plumbing only: no real NUTS in a doctest
    ...     res = fit_accuracy_trend([90, 80, 70], [100, 100, 100], seed=0,
    ...                              sample_kwargs={"draws": 50, "tune": 50, "chains": 2})["result"]
    >>> res.trend, res.levels, res.summary()["level"].tolist()
    ('accuracy', ['0', '1', '2'], ['0', '1', '2'])
    >>> res.sentence().startswith("P(accuracy falls as the shift grows)")
    True
    """

    metric = "shift-trend"

    @property
    def trend(self) -> str:
        """``"accuracy"`` or ``"calibration"``."""
        return str(self.options.get("trend", "accuracy"))

    @property
    def levels(self) -> list[str]:
        """The shift levels, in order."""
        return [str(v) for v in self.posterior["level"].to_numpy()]

    @property
    def _var(self) -> str:
        return "theta" if self.trend == "accuracy" else "ece"

    @property
    def _slope(self) -> str:
        return "beta" if self.trend == "accuracy" else "b"

    def prob_trend(self) -> float:
        """P(accuracy falls with the shift) (``beta < 0``), or P(overconfidence grows with it) (``b < 0``)."""
        return float((self.posterior[self._slope].to_numpy() < 0).mean())

    def summary(self):
        """One row per level: ``level``, ``intensity``, ``mean``/``hdi_low``/``hdi_high`` of the level's
        accuracy (``theta``) or ECE, ``n_labeled``, ``r_hat``, ``ess_bulk``."""
        import pandas as pd

        st = self._stat(self._var)
        rhat, ess = posterior_diagnostics(self.posterior, self._var)
        n = self.counts["n_labeled"].to_numpy()
        n = n.sum(axis=1) if n.ndim == 2 else n
        table = pd.DataFrame({
            "level": self.levels, "intensity": self.counts["intensity"].to_numpy(), "mean": st["mean"],
            "hdi_low": st["hdi"][:, 0], "hdi_high": st["hdi"][:, 1], "n_labeled": n.astype(int),
            "r_hat": rhat, "ess_bulk": ess,
        })
        table = self.annotate(table)
        table.attrs["diagnostics"] = self._diag()
        table.attrs["ci_prob"] = self.ci_prob
        return table

    def sentence(self) -> str:
        st = self._stat(self._var)
        lv = self.levels
        what = "accuracy falls as the shift grows" if self.trend == "accuracy" else "overconfidence grows with the shift"
        name = "accuracy" if self.trend == "accuracy" else "ECE"
        text = (f"P({what}) = {self.prob_trend():.3f}; {name} from {st['mean'][0]:.3f} (level {lv[0]}) "
                f"to {st['mean'][-1]:.3f} (level {lv[-1]})")
        return self.qualify(text + self._diag_text() + ".")

    def to_json(self) -> dict[str, Any]:
        """``{"metric", "trend", "levels", "intensity", "mean", "hdi", "n_labeled", "prob_trend", "diagnostics"}``."""
        table = self.summary()
        return self.with_envelope({
            "metric": self.metric, "trend": self.trend, "ci_prob": self.ci_prob, "levels": self.levels,
            "intensity": table["intensity"].tolist(), "mean": table["mean"].tolist(),
            "hdi": table[["hdi_low", "hdi_high"]].to_numpy().tolist(), "n_labeled": table["n_labeled"].tolist(),
            "prob_trend": self.prob_trend(), "diagnostics": self._diag(),
        })

    def _build_model(self):
        """The trend model rebuilt from the saved counts."""
        from pbassess.pymc_models.shift import accuracy_trend_model, calibration_trend_model

        c = self.counts
        x = c["intensity"].to_numpy()
        if self.trend == "accuracy":
            return accuracy_trend_model(c["n_correct"].to_numpy(), c["n_labeled"].to_numpy(), x, levels=self.levels)
        return calibration_trend_model(c["n_labeled"].to_numpy(), c["n_correct"].to_numpy(), c["score_sum"].to_numpy(),
                                       x, levels=self.levels, bins=[str(b) for b in c["bin"].to_numpy()])

    def plot(self, **kwargs: Any):
        """Posterior mean and HDI per level (the shift table's level-posterior figure)."""
        from pbassess.plots.shift import plot_level_posteriors

        st = self._stat(self._var)
        metric = "accuracy" if self.trend == "accuracy" else "ece"
        name = str(self.options.get("model", "model"))
        ds = xr.Dataset({f"{metric}_mean": (("level", "model"), st["mean"][:, None]),
                         f"{metric}_hdi": (("level", "model", "hdi"), st["hdi"][:, None, :])},
                        coords={"level": self.levels, "model": [name]},
                        attrs={"by": self.options.get("by", "level"), "ci_prob": self.ci_prob})
        return plot_level_posteriors(ds, metric, **kwargs)
