"""Comparing fits of the same counts: independent / pooled / hierarchical, or different priors.

The same environment counts are fitted several ways and compared with ArviZ:

* **LOO** (PSIS leave-one-out over the labeled items: every variant is fitted through
  :func:`pbassess.inference.fit`, whose log-likelihood holds one Bernoulli value per labeled
  item, so one item is left out, never a whole environment) via :func:`arviz.compare`, with the
  Pareto-k diagnostic of every variant surfaced: a ``UserWarning`` names the variant and how many
  items exceed the reliability threshold;
* **prior predictive checks**: where each environment's observed accuracy falls in the
  prior predictive distribution of k/n (a tail probability near 0 or 1 flags a prior that
  cannot produce the data);
* **MCMC diagnostics**: max R-hat, min bulk ESS and divergences of each fit, in the table and
  as warnings when they fail.

:data:`POOLING_VARIANTS` compares no pooling, complete pooling and partial pooling;
:data:`PRIOR_VARIANTS` compares a uniform prior, an informed prior (centred on the model's own
confidence) and the hierarchical prior learned from the other environments.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from pbassess.assess.hierarchical import HierarchicalResult, fit_accuracy_counts
from pbassess.errors import ConfigError
from pbassess.hierarchical.counts import EnvironmentCounts, environment_counts
from pbassess.results.base import AssessmentResult, frame_from_state, frame_state
from pbassess.stats import as_generator

__all__ = [
    "POOLING_VARIANTS",
    "PRIOR_VARIANTS",
    "ModelComparison",
    "compare_pooling",
    "compare_priors",
    "compare_variants",
    "prior_predictive_check",
]

POOLING_VARIANTS: dict[str, dict[str, Any]] = {
    "independent": {"pooling": "independent", "prior": "uniform"},
    "pooled": {"pooling": "pooled", "prior": "uniform"},
    "hierarchical": {"pooling": "hierarchical", "kind": "logit-normal"},
}

PRIOR_VARIANTS: dict[str, dict[str, Any]] = {
    "uniform": {"pooling": "independent", "prior": "uniform"},
    "informed": {"pooling": "independent", "prior": "informed"},
    "hierarchical": {"pooling": "hierarchical", "kind": "logit-normal"},
}


class ModelComparison(AssessmentResult):
    """Several fits of the same counts, compared (a result: ``summary()``, ``sentence()``, ``to_json()``, ``save``).

    Parameters
    ----------
    table : pandas.DataFrame
        The comparison table (see Attributes).
    results : dict of str to HierarchicalResult
        The fit of each variant.
    loo : dict of str to ArviZ ELPD data, optional
        Each variant's PSIS-LOO.
    prior_checks : dict of str to pandas.DataFrame, optional
        Each variant's prior predictive check per cell.
    warnings : list of str, optional
        Every diagnostic problem found (also raised as ``UserWarning``).

    Attributes
    ----------
    table : pandas.DataFrame
        One row per variant (ranked by LOO): ArviZ's ``rank``, ``elpd``, ``elpd_diff``, ``dse``,
        ``weight``, ``p`` ... plus ``pareto_k_bad`` (labeled items above ArviZ's threshold),
        ``max_rhat``, ``min_ess_bulk``, ``divergences`` and ``prior_check_extreme`` (cells whose
        observed accuracy has a prior predictive tail probability below 0.01 or above 0.99).
    results, loo, prior_checks, warnings
        The parameters of the same names (``loo`` is the dict of ELPD data, not the
        ``loo()`` method of other results).

    Examples
    --------
    >>> import numpy as np
    >>> from pbassess.assess.pooling import POOLING_VARIANTS, compare_variants
    >>> from pbassess.hierarchical.counts import EnvironmentCounts
    >>> counts = EnvironmentCounts("site", ("a", "b", "c"), np.array([40, 40, 8]), np.array([36, 28, 4]),
    ...                            np.array([40, 40, 8]), np.array([0.8, 0.8, 0.8]))
    >>> two = {name: POOLING_VARIANTS[name] for name in ("independent", "pooled")}
    >>> cmp = compare_variants(counts, two, prior_draws=100, seed=0, warn=False,
    ...                        sample_kwargs={"draws": 100, "tune": 100, "chains": 1, "sampler": "pymc"})  # tiny runs
    >>> isinstance(cmp, ModelComparison), sorted(cmp.results), sorted(cmp.prior_checks)
    (True, ['independent', 'pooled'], ['independent', 'pooled'])
    >>> sorted(cmp.table.index), {"elpd", "pareto_k_bad", "max_rhat", "prior_check_extreme"} <= set(cmp.table.columns)
    (['independent', 'pooled'], True)
    >>> cmp.sentence().startswith("By LOO")
    True
    >>> import tempfile, pathlib, pbassess
    >>> back = pbassess.load_result(cmp.save(pathlib.Path(tempfile.mkdtemp()) / "cmp.nc"))
    >>> sorted(back.results), back.sentence() == cmp.sentence()
    (['independent', 'pooled'], True)
    """

    metric = "model-comparison"

    def __init__(self, table: Any, results: Mapping[str, HierarchicalResult], loo: Mapping[str, Any] | None = None,
                 prior_checks: Mapping[str, Any] | None = None, warnings: list[str] | None = None) -> None:
        results = dict(results)
        if not results:
            raise ConfigError("a model comparison needs at least one fitted variant")
        first = next(iter(results.values()))
        diagnostics = {name: r.diagnostics for name, r in results.items()}
        ok = all((d or {}).get("ok", True) for d in diagnostics.values())
        super().__init__(
            _variant_posterior(results), first.counts, prior={name: r.prior for name, r in results.items()},
            data_summary=first.data_summary, engine=first.engine, inference=first.inference, ci_prob=first.ci_prob,
            diagnostics={"ok": ok, "variants": diagnostics}, options={"variants": list(results)},
        )
        self.table = table
        self.results = results
        self.loo = dict(loo) if loo is not None else _loo_of(results)
        self.prior_checks = dict(prior_checks or {})
        self.warnings = list(warnings or [])

    # -- save/load: the table, the checks and every variant's whole result ---------------
    def _extra_state(self) -> dict[str, Any]:
        return {"variants": list(self.results), "table": frame_state(self.table),
                "prior_checks": {name: frame_state(t) for name, t in self.prior_checks.items()},
                "warnings": list(self.warnings)}

    def _extra_datasets(self) -> dict[str, Any]:
        return {f"results/{i}": res for i, res in enumerate(self.results.values())}

    def _restore(self, state: dict[str, Any], datasets: dict[str, Any]) -> None:
        self.results = {name: datasets[f"results/{i}"] for i, name in enumerate(state["variants"])}
        self.table = frame_from_state(state["table"])
        self.prior_checks = {name: frame_from_state(t) for name, t in state["prior_checks"].items()}
        self.warnings = list(state["warnings"])
        self.loo = _loo_of(self.results)

    def summary(self):
        """The comparison table."""
        return self.table

    def to_json(self) -> dict[str, Any]:
        """``{"metric": "model-comparison", "variants", "best", "table": [{"variant", "rank", "elpd", ...}],
        "warnings"}`` plus ``inference``, ``ci_prob``, ``diagnostics`` and ``sentence``."""
        from pbassess._json import to_jsonable

        table = self.table.reset_index(names="variant")
        return to_jsonable(self.with_envelope({
            "variants": list(self.results), "best": str(self.table.index[0]),
            "table": table.to_dict(orient="records"), "warnings": list(self.warnings),
        }))

    def sentence(self) -> str:
        best = self.table.index[0]
        text = f"By LOO, {best!r} predicts held-out labeled items best"
        if len(self.table) > 1:
            second = self.table.index[1]
            row = self.table.loc[second]
            text += f" (next {second!r}: elpd difference {row['elpd_diff']:.1f} +- {row['dse']:.1f})"
        if self.warnings:
            text += f"; {len(self.warnings)} diagnostic warning(s)"
        return text + "."

    def plot(self, **kwargs: Any):
        """The variants' environment accuracies side by side."""
        from pbassess.plots.hierarchical import plot_pooling_comparison

        return plot_pooling_comparison(self, **kwargs)


def _loo_of(results: Mapping[str, Any]) -> dict[str, Any]:
    """PSIS-LOO of every variant (pointwise), as :func:`compare_variants` computes it."""
    import arviz as az

    out = {}
    for name, res in results.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[name] = az.loo(res.idata, pointwise=True)
    return out


def _variant_posterior(results: Mapping[str, Any]) -> Any:
    """The variants' ``accuracy`` draws side by side (dim ``variant``), when they line up; else empty."""
    import xarray as xr

    try:
        parts = [r.posterior["accuracy"] for r in results.values()]
        stacked = xr.concat(parts, dim="variant", join="exact", coords="minimal", compat="override")
        return stacked.assign_coords(variant=np.asarray(list(results), dtype=str)).to_dataset(name="accuracy")
    except (KeyError, ValueError):
        return xr.Dataset()


def prior_predictive_check(idata: Any, counts: EnvironmentCounts, prob: float = 0.95):
    """Where each labeled cell's observed accuracy falls in the prior predictive of k/n.

    Needs a ``prior_predictive`` group (``fit_accuracy_counts(..., prior_predictive=500)``).

    Returns
    -------
    pandas.DataFrame
        One row per labeled cell: ``cell``, ``n``, ``observed`` (k/n), ``prior_mean``,
        ``prior_low``/``prior_high`` (central ``prob`` interval of the prior predictive k/n) and
        ``tail_prob`` = P(prior predictive k <= observed k).

    Examples
    --------
    >>> import numpy as np
    >>> from pbassess.assess.hierarchical import fit_accuracy_counts
    >>> from pbassess.hierarchical.counts import EnvironmentCounts
    >>> c = EnvironmentCounts("g", ("a", "b"), np.array([20, 20]), np.array([19, 10]),
    ...                       np.array([20, 20]), np.array([0.9, 0.6]))
    >>> from unittest import mock
    >>> from pbassess.inference import mock_pymc_sample
    >>> with mock.patch("pymc.sample", mock_pymc_sample):  # plumbing only: no real NUTS in a doctest
    ...     r = fit_accuracy_counts(c, pooling="independent", seed=0, prior_predictive=400,
    ...                             sample_kwargs={"draws": 100, "tune": 100, "chains": 2, "sampler": "pymc"})
    >>> prior_predictive_check(r.idata, c)["cell"].tolist()
    ['a', 'b']
    """
    import pandas as pd

    if "prior_predictive" not in idata.children:
        raise ConfigError("the fit has no prior predictive draws: sample with prior_predictive > 0")
    k_prior = idata["prior_predictive"]["k"]
    cells = [str(c) for c in k_prior["cell"].to_numpy()]
    draws = k_prior.stack(sample=("chain", "draw")).transpose("sample", ...).to_numpy()
    labeled = np.flatnonzero(counts.n.ravel() > 0)
    n = counts.n.ravel()[labeled]
    k = counts.k.ravel()[labeled]
    frac = draws / n
    lo, hi = np.quantile(frac, [(1 - prob) / 2, 1 - (1 - prob) / 2], axis=0)
    return pd.DataFrame({
        "cell": cells, "n": n, "observed": k / n, "prior_mean": frac.mean(axis=0), "prior_low": lo,
        "prior_high": hi, "tail_prob": (draws <= k).mean(axis=0),
    })


def compare_variants(
    counts: EnvironmentCounts,
    variants: Mapping[str, Mapping[str, Any]] = POOLING_VARIANTS,
    *,
    prior_draws: int = 500,
    seed: Any = None,
    warn: bool = True,
    sample_kwargs: Mapping[str, Any] | None = None,
) -> ModelComparison:
    """Fit each variant to the same counts and compare them (LOO, prior checks, diagnostics).

    Parameters
    ----------
    counts : EnvironmentCounts
    variants : mapping of name to options of :func:`~pbassess.assess.hierarchical.fit_accuracy_counts`
        E.g. :data:`POOLING_VARIANTS` or :data:`PRIOR_VARIANTS`.
    prior_draws : int
        Prior predictive draws per variant (0 skips the prior predictive check).
    seed : int or Generator, optional
    warn : bool
        Raise every diagnostic problem as a ``UserWarning`` as well.
    sample_kwargs : dict, optional
        :func:`pymc.sample` options of every fit (``draws`` per chain, ``tune``, ``chains``,
        ``target_accept``, ``sampler`` ...), merged by :func:`pbassess.inference.fit`.

    Examples
    --------
    >>> import numpy as np
    >>> from pbassess.hierarchical.counts import EnvironmentCounts
    >>> c = EnvironmentCounts("g", ("a", "b", "c"), np.array([40, 30, 5]), np.array([36, 21, 4]),
    ...                       np.array([40, 30, 5]), np.array([0.9, 0.7, 0.8]))
    >>> from unittest import mock
    >>> from pbassess.inference import mock_pymc_sample
    >>> with mock.patch("pymc.sample", mock_pymc_sample):  # plumbing only: no real NUTS in a doctest
    ...     cmp = compare_variants(c, seed=0, warn=False,
    ...                            sample_kwargs={"draws": 200, "tune": 200, "chains": 2, "sampler": "pymc"})
    >>> sorted(cmp.table.index)
    ['hierarchical', 'independent', 'pooled']
    """
    import arviz as az

    if len(variants) < 2:
        raise ConfigError("comparing fits needs at least two variants")
    rng = as_generator(seed)
    results: dict[str, HierarchicalResult] = {}
    loo: dict[str, Any] = {}
    checks: dict[str, Any] = {}
    problems: list[str] = []
    for name, options in variants.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = fit_accuracy_counts(counts, seed=rng, prior_predictive=prior_draws, sample_kwargs=sample_kwargs,
                                      **dict(options))
        for w in caught:
            if "MCMC diagnostics" in str(w.message):
                problems.append(f"{name}: {w.message}")
        results[name] = res
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            elpd = az.loo(res.idata, pointwise=True)
        loo[name] = elpd
        pk = np.asarray(elpd.pareto_k)
        bad = int(np.sum(pk > elpd.good_k))
        if bad:
            problems.append(f"{name}: Pareto k > {elpd.good_k:.2f} for {bad} of {pk.size} items "
                            f"(max {np.nanmax(pk):.2f}); the LOO estimate of this variant is unreliable")
        if prior_draws:
            checks[name] = prior_predictive_check(res.idata, counts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # The PSIS-LOO computed above: az.compare given the fits would compute it a second time (half the
        # comparison's time on thousands of labeled items: arviz-stats smooths each item's tail in Python).
        table = az.compare(loo)
    for name, res in results.items():
        diag = res.diagnostics or {}
        pk = np.asarray(loo[name].pareto_k)
        table.loc[name, "pareto_k_bad"] = int(np.sum(pk > loo[name].good_k))
        table.loc[name, "pareto_k_max"] = float(np.nanmax(pk))
        table.loc[name, "max_rhat"] = diag.get("max_rhat")
        table.loc[name, "min_ess_bulk"] = diag.get("min_ess_bulk")
        table.loc[name, "divergences"] = diag.get("divergences")
        if name in checks:
            tail = checks[name]["tail_prob"].to_numpy()
            table.loc[name, "prior_check_extreme"] = int(np.sum((tail < 0.01) | (tail > 0.99)))
    if warn:
        for message in problems:
            warnings.warn(message, UserWarning, stacklevel=2)
    return ModelComparison(table=table, results=results, loo=loo, prior_checks=checks, warnings=problems)


def compare_pooling(preds: Any, by: str, *, per_class: bool = False, seed: Any = None,
                    prior_draws: int = 500, sample_kwargs: Mapping[str, Any] | None = None) -> ModelComparison:
    """Independent vs pooled vs hierarchical accuracy per environment, compared by LOO.

    ``sample_kwargs`` are the :func:`pymc.sample` options of every fit (see :func:`compare_variants`).

    Parameters
    ----------
    preds : Predictions
        The pool; labeled items inform the accuracies.
    by : str
        Group column naming each item's environment.
    per_class : bool
        Cells are environment x predicted class.
    seed : int or Generator, optional
    prior_draws : int
        Prior predictive draws per variant (0 skips the prior predictive check).
    sample_kwargs : dict, optional
        :func:`pymc.sample` options of every fit.

    Returns
    -------
    ModelComparison
        The three fits ranked by LOO, with prior checks and diagnostics.

    Examples
    --------
    >>> from pbassess.data.examples import three_site_pool
    >>> p = three_site_pool()  # sites a, b, c: 40, 40 and 8 items, 90%, 70% and 50% right
    >>> cmp = compare_pooling(p, "site", seed=0, prior_draws=100, sample_kwargs={"draws": 100, "tune": 100, "chains": 1,
    ...                       "sampler": "pymc"})  # tiny NUTS runs, for the example only
    >>> sorted(cmp.table.index)
    ['hierarchical', 'independent', 'pooled']
    >>> cmp.prior_checks["pooled"]["observed"].tolist()
    [0.9, 0.7, 0.5]
    >>> len(cmp.warnings) > 0  # such tiny runs fail the ESS and Pareto k checks: read no ranking from them
    True

    On a fairness data set: ``compare_pooling(load_data("adult-sex"), "race-sex").table``.
    """
    preds.require_labels("the pooling comparison")
    counts = environment_counts(preds, by, per_class=per_class)
    return compare_variants(counts, POOLING_VARIANTS, prior_draws=prior_draws, seed=seed, sample_kwargs=sample_kwargs)


def compare_priors(preds: Any, by: str, *, seed: Any = None, prior_draws: int = 500,
                   sample_kwargs: Mapping[str, Any] | None = None) -> ModelComparison:
    """Uniform vs informed vs hierarchical priors on the environments' accuracies.

    ``sample_kwargs`` are the :func:`pymc.sample` options of every fit (see :func:`compare_variants`).

    Examples
    --------
    >>> from pbassess.data.examples import three_site_pool
    >>> p = three_site_pool()  # sites a, b, c: 40, 40 and 8 items, 90%, 70% and 50% right
    >>> cmp = compare_priors(p, "site", seed=0, prior_draws=100, sample_kwargs={"draws": 100, "tune": 100, "chains": 1,
    ...                      "sampler": "pymc"})  # tiny NUTS runs, for the example only
    >>> sorted(cmp.table.index), cmp.results["informed"].environments
    (['hierarchical', 'informed', 'uniform'], ['a', 'b', 'c'])
    """
    preds.require_labels("the prior comparison")
    counts = environment_counts(preds, by)
    return compare_variants(counts, PRIOR_VARIANTS, prior_draws=prior_draws, seed=seed, sample_kwargs=sample_kwargs)
