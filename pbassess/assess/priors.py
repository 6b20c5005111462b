"""Priors compared for one assessment: leave-one-item-out ELPD, prior sensitivity, prior predictive checks.

:func:`compare_priors` fits the same counts under several priors and returns a
:class:`PriorComparison`:

* an ``az.compare`` table over the fits' leave-one-item-out ELPD (exact for conjugate fits,
  :meth:`pbassess.results.AssessmentResult.loo`; PSIS-LOO for NUTS fits with a user's prior);
* prior sensitivity by power scaling (``az.psense_summary`` on each fit's ``log_prior`` and
  ``log_likelihood`` groups): the largest prior and likelihood sensitivity over the reported
  variables and how many of them ArviZ flags;
* a prior predictive check: where the labeled items' number correct falls among counts
  simulated from each prior (two-sided tail probability), and how many regions fall in a 1%
  tail;
* a plot of the ELPDs and of the prior predictive accuracy against the observed one.

Environments (``metric="environments"``) are compared by
:func:`pbassess.assess.pooling.compare_priors` (uniform, informed and hierarchical priors fitted
by NUTS).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from pbassess.constants import CI_PROB, DEFAULT_PSEUDOCOUNT
from pbassess.errors import ConfigError
from pbassess.results.base import AssessmentResult

__all__ = ["PRIOR_METRICS", "PriorComparison", "compare_priors", "parse_prior", "prior_predictive_accuracy"]

#: Metrics whose priors :func:`compare_priors` compares.
PRIOR_METRICS: tuple[str, ...] = ("accuracy", "environments")

_BETA = re.compile(r"^\s*beta\s*\(\s*([^,()]+)\s*,\s*([^,()]+)\s*\)\s*$", re.IGNORECASE)
_NAMED = re.compile(r"^\s*(uniform|informed)\s*(?:\(\s*(?:pc\s*=\s*)?([^()]+)\s*\))?\s*$", re.IGNORECASE)


def parse_prior(text: Any, pseudocount: float = DEFAULT_PSEUDOCOUNT) -> tuple[Any, float]:
    """``(prior, pseudocount)`` for ``assess_accuracy`` from a prior's name or text.

    ``"uniform"``, ``"informed"``, ``"informed(10)"`` / ``"informed(pc=10)"`` (another
    pseudocount), ``"beta(20, 2)"`` (the same Beta prior for every region), a tuple
    ``(alpha, beta)``, or a user's PyMC prior (callable or dict; needs NUTS).

    Examples
    --------
    >>> parse_prior("beta(20,2)"), parse_prior("informed(pc=10)"), parse_prior("uniform")
    (((20.0, 2.0), 2.0), ('informed', 10.0), ('uniform', 2.0))
    >>> parse_prior("gauss(0, 1)")
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: unknown prior 'gauss(0, 1)' (use uniform, informed, informed(PC) or beta(A,B))
    """
    if not isinstance(text, str):
        return text, pseudocount
    match = _BETA.match(text)
    if match:
        try:
            a, b = float(match.group(1)), float(match.group(2))
        except ValueError:
            raise ConfigError(f"prior {text!r}: beta(A,B) needs two numbers") from None
        if not (np.isfinite(a) and np.isfinite(b) and a > 0 and b > 0):
            raise ConfigError(f"prior {text!r}: beta(A,B) needs two positive numbers")
        return (a, b), pseudocount
    match = _NAMED.match(text)
    if match:
        pc = pseudocount
        if match.group(2) is not None:
            try:
                pc = float(match.group(2))
            except ValueError:
                raise ConfigError(f"prior {text!r}: the pseudocount must be a number") from None
        return match.group(1).lower(), pc
    raise ConfigError(f"unknown prior {text!r} (use uniform, informed, informed(PC) or beta(A,B))")


def _prior_check(result: Any, rng: np.random.Generator) -> dict[str, Any]:
    """Prior predictive check of the labeled counts: total correct and per-region 1% tails."""
    theta = result.idata["prior"]["accuracy"].to_numpy()
    theta = theta.reshape(-1, theta.shape[-1])
    n = result.counts["n"].to_numpy()
    k = result.counts["correct"].to_numpy()
    reps = rng.binomial(n[None, :], np.clip(theta, 0.0, 1.0))
    total_rep, total_obs = reps.sum(axis=1), int(k.sum())
    p_low = float(np.mean(total_rep <= total_obs))
    p_high = float(np.mean(total_rep >= total_obs))
    labeled = n > 0
    cell_low = np.mean(reps <= k[None, :], axis=0)
    cell_high = np.mean(reps >= k[None, :], axis=0)
    extreme = labeled & ((cell_low < 0.01) | (cell_high < 0.01))
    with np.errstate(invalid="ignore", divide="ignore"):
        acc_rep = total_rep / max(int(n.sum()), 1)
    return {"p_value": min(1.0, 2 * min(p_low, p_high)), "regions_in_1pct_tail": int(extreme.sum()),
            "observed_accuracy": total_obs / max(int(n.sum()), 1),
            "prior_predictive_accuracy": acc_rep}


def _sensitivity(result: Any) -> dict[str, Any]:
    import logging

    import arviz as az

    logger = logging.getLogger("arviz_stats.psense")  # its "we detected potential issues" note: the
    level = logger.level                               # table's sensitivity_flagged column says it
    logger.setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            table = az.psense_summary(result.idata, var_names=list(result.posterior.data_vars))
        except Exception as exc:  # noqa: BLE001 - ArviZ's own message is the most useful one here
            return {"prior": None, "likelihood": None, "flagged": None, "error": str(exc).splitlines()[0]}
        finally:
            logger.setLevel(level)
    flagged = int((table["diagnosis"] != "✓").sum())
    return {"prior": float(table["prior"].max()), "likelihood": float(table["likelihood"].max()),
            "flagged": flagged, "table": table}


class PriorComparison(AssessmentResult):
    """Several priors for one assessment, compared (see :func:`compare_priors`).

    The posterior, counts and DataTree are those of the prior ranked first; :attr:`fits` holds
    every fit (in this process), and ``summary()`` the comparison table, which is saved with
    the result.

    Parameters
    ----------
    posterior, counts, prior, data_summary, engine, inference, ci_prob, idata, diagnostics, options, model
        As for :class:`~pbassess.results.AssessmentResult`. Results are built by the assessment
        functions and by :func:`pbassess.load_result`; there is seldom a reason to construct one.

    Examples
    --------
    >>> import pbassess as pb
    >>> cmp = pb.compare_priors(pb.load_data(), priors=["uniform", "informed"], seed=0)
    >>> sorted(cmp.summary().index), {"elpd_loo", "se", "elpd_diff", "weight"} <= set(cmp.summary().columns)
    (['informed', 'uniform'], True)
    """

    metric = "prior-comparison"

    @property
    def fits(self) -> dict[str, Any]:
        """The fit of each prior (only in the process that made them)."""
        return getattr(self, "_fits", {})

    @property
    def best(self) -> str:
        """The prior ranked first by ELPD."""
        return str(self.options["ranking"][0])

    def summary(self):
        """One row per prior, ranked by ELPD: ArviZ's comparison columns, sensitivity and the prior check."""
        import pandas as pd

        rows = self.options["rows"]
        table = pd.DataFrame(rows).set_index("prior")
        return self.annotate(table)

    def sentence(self) -> str:
        rows = self.options["rows"]
        best, rest = rows[0], rows[1:]
        text = f"By leave-one-item-out ELPD ({self.options['loo']}), the {best['prior']} prior predicts best"
        if rest:
            second = rest[0]
            diff, dse = -second["elpd_diff"], second["dse"]
            if dse > 0 and diff < 2 * dse:
                text = (f"The priors predict about equally well by leave-one-item-out ELPD ({self.options['loo']}): "
                        f"{best['prior']} leads {second['prior']} by {diff:.1f} with a standard error of {dse:.1f}")
            else:
                text += f", {diff:.1f} ahead of {second['prior']} (standard error {dse:.1f})"
        conflict = [r["prior"] for r in rows if r.get("prior_check_p", 1.0) < 0.01]
        if conflict:
            text += f"; the labels are unlikely under {', '.join(conflict)} (prior predictive p < 0.01)"
        return self.qualify(text + ".")

    def to_json(self) -> dict[str, Any]:
        priors = [{k: v for k, v in row.items()} for row in self.options["rows"]]
        return self.with_envelope({"metric": self.metric, "assessed": self.options["assessed"], "best": self.best,
                                   "loo": self.options["loo"], "priors": priors})

    def plot(self, **kwargs: Any):
        """ELPD per prior with its standard error, and each prior's predictive accuracy against the observed."""
        from pbassess.plots.priors import plot_prior_comparison

        return plot_prior_comparison(self, **kwargs)


def compare_priors(
    preds: Any,
    *,
    metric: str = "accuracy",
    priors: Sequence[Any] | Mapping[str, Any] = ("uniform", "informed"),
    by: Any = "predicted",
    pseudocount: float = DEFAULT_PSEUDOCOUNT,
    ci_prob: float = CI_PROB,
    seed: Any = None,
    inference: str | None = None,
    draws: int | None = None,
    sample_kwargs: Mapping[str, Any] | None = None,
) -> Any:
    r"""Fit the same labeled counts under several priors and compare them.

    Parameters
    ----------
    preds : Predictions, pandas.DataFrame or arrays
        The pool (anything :func:`pbassess.as_predictions` accepts).
    metric : {"accuracy", "environments"}
        ``accuracy``: per predicted class, true class or group (``by``), fitted by
        :func:`pbassess.assess_accuracy`; ``environments``: the environments of column ``by``
        with uniform, informed and hierarchical priors (:func:`pbassess.assess.pooling.compare_priors`, NUTS).
    priors : sequence or dict
        Priors by name or text (:func:`parse_prior`: ``"uniform"``, ``"informed"``,
        ``"informed(10)"``, ``"beta(20,2)"``), or a dict ``{label: prior}`` whose values may
        also be tuples or a user's PyMC prior (those need ``inference="nuts"``).
    by, pseudocount, ci_prob, seed, inference, draws, sample_kwargs
        As in :func:`pbassess.assess_accuracy` (every fit draws from ``seed``).

    Returns
    -------
    PriorComparison
        ``summary()`` has one row per prior: ``elpd_loo``, ``se``, ``elpd_diff``, ``dse``,
        ``weight`` and ``p_loo`` (ArviZ's ``az.compare``), ``prior_sensitivity`` /
        ``likelihood_sensitivity`` (largest power-scaling sensitivity over the regions) and
        ``sensitivity_flagged`` (regions ArviZ flags), ``prior_check_p`` (two-sided prior
        predictive tail probability of the number correct), ``regions_in_1pct_tail`` and
        ``prior_predictive_accuracy`` (5, 25, 50, 75 and 95% quantiles of the overall accuracy of the
        labeled items simulated from the prior).

    Notes
    -----
    Each prior gives a model of the same labeled items (for ``metric="accuracy"``, region :math:`k`:
    :math:`\theta_k \sim \mathrm{Beta}(\alpha_k, \beta_k)`, item :math:`i` correct
    :math:`y_i \sim \mathrm{Bernoulli}(\theta_{k(i)})`). The priors are ranked by the expected log
    predictive density of leave-one-out cross-validation,

    .. math::

       \widehat{\mathrm{elpd}}_{\mathrm{loo}} = \sum_{i=1}^{n} \log p(y_i \mid y_{-i}), \qquad
       p(y_i = 1 \mid y_{-i}) = \frac{\alpha_k + y_k - y_i}{\alpha_k + \beta_k + n_k - 1}
       \quad (k = k(i)),

    exact for the conjugate fits (PSIS-LOO, ArviZ's ``az.loo``, for the others), and compared by
    ``az.compare`` (differences, their standard errors and stacking weights).

    Examples
    --------
    >>> import pbassess as pb
    >>> cmp = pb.compare_priors(pb.load_data(), priors=["uniform", "informed", "beta(20,2)"], seed=0)
    >>> cmp.to_json()["best"] in {"uniform", "informed", "beta(20,2)"}, len(cmp.to_json()["priors"])
    (True, 3)
    """
    import arviz as az

    from pbassess.assess._common import as_pool
    from pbassess.assess.accuracy import assess_accuracy
    from pbassess.stats import as_generator

    if metric not in PRIOR_METRICS:
        raise ConfigError(f"unknown metric {metric!r} for compare_priors (choose {', '.join(PRIOR_METRICS)})")
    preds = as_pool(preds)
    if metric == "environments":
        from pbassess.assess.pooling import compare_priors as compare_environment_priors

        if not isinstance(by, str) or by in ("predicted", "true"):
            raise ConfigError("metric='environments' needs by= the column naming each item's environment")
        return compare_environment_priors(preds, by, seed=seed, sample_kwargs=sample_kwargs)
    named = dict(priors) if isinstance(priors, Mapping) else {str(p): p for p in priors}
    if len(named) < 2:
        raise ConfigError(f"compare_priors needs at least two priors, got {len(named)}")
    if preds.n_labeled == 0:
        raise ConfigError("compare_priors needs labeled items: the ELPD of each prior is computed on them")
    rng = as_generator(seed)
    fits: dict[str, Any] = {}
    for label, given in named.items():
        prior, pc = parse_prior(given, pseudocount)
        fits[label] = assess_accuracy(preds, by=by, prior=prior, pseudocount=pc, ci_prob=ci_prob, seed=rng,
                                      inference=inference, draws=draws, sample_kwargs=sample_kwargs)
    loos = {label: res.loo() for label, res in fits.items()}
    exact = all(float(np.max(elpd.pareto_k)) == 0.0 for elpd in loos.values())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = az.compare(loos, round_to="none")
    rows = []
    for label in table.index:
        res, loo = fits[label], loos[label]
        check = _prior_check(res, rng)
        sens = _sensitivity(res)
        rows.append({
            "prior": str(label), "elpd_loo": float(table.loc[label, "elpd"]), "se": float(table.loc[label, "se"]),
            "elpd_diff": float(table.loc[label, "elpd_diff"]), "dse": float(table.loc[label, "dse"]),
            "weight": float(table.loc[label, "weight"]), "p_loo": float(loo.p),
            "pareto_k_bad": int(np.sum(np.asarray(loo.pareto_k) > loo.good_k)),
            "prior_sensitivity": sens["prior"], "likelihood_sensitivity": sens["likelihood"],
            "sensitivity_flagged": sens["flagged"], "prior_check_p": check["p_value"],
            "regions_in_1pct_tail": check["regions_in_1pct_tail"], "prior_kind": res.prior["kind"],
            "pseudocount": res.prior["pseudocount"],
            "prior_predictive_accuracy": [float(q) for q in np.quantile(check["prior_predictive_accuracy"],
                                                                        [0.05, 0.25, 0.5, 0.75, 0.95])],
        })
        res._prior_predictive_accuracy = check["prior_predictive_accuracy"]
        res._sensitivity_table = sens.get("table")
    best = fits[rows[0]["prior"]]
    n = best.counts["n"].to_numpy()
    options = {"rows": rows, "ranking": [r["prior"] for r in rows], "loo": "exact" if exact else "PSIS",
               "assessed": {"metric": metric, "by": best.options.get("by"), "n_labeled": int(n.sum()),
                            "observed_accuracy": float(best.counts["correct"].sum() / max(int(n.sum()), 1))},
               "draws": best.options.get("draws")}
    # a NUTS fit that failed its diagnostics makes the comparison fail them too (--strict exits 3)
    failed = [res.diagnostics for res in fits.values() if res.diagnostics and not res.diagnostics.get("ok", True)]
    out = PriorComparison(best.posterior, best.counts, prior=best.prior, data_summary=best.data_summary,
                          inference=best.inference, ci_prob=ci_prob, idata=best.idata,
                          diagnostics=failed[0] if failed else best.diagnostics,
                          options=options)
    out._fits = fits
    return out


def prior_predictive_accuracy(fits: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The prior predictive overall accuracy of each fit (kept by :func:`compare_priors`).

    Examples
    --------
    >>> import pbassess as pb
    >>> cmp = pb.compare_priors(pb.load_data(), seed=0)
    >>> sorted(prior_predictive_accuracy(cmp.fits))
    ['informed', 'uniform']
    """
    return {label: np.asarray(getattr(res, "_prior_predictive_accuracy", np.array([])))
            for label, res in fits.items()}
