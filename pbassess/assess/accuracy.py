"""Classwise (or groupwise, or regionwise) accuracy and its rankings.

:func:`assess_accuracy` reduces the labeled items to per-region counts ``(n_k, correct_k)``,
combines them with a Beta prior and returns an :class:`AccuracyResult`: the posterior of each
region's accuracy, the probability that each region is the least (or most) accurate, rank
distributions, a table, a sentence, the CLI's JSON object and plots.

Two engines give the same posterior: ``"conjugate"`` (exact Beta posterior, Monte Carlo draws
in milliseconds) and ``"mcmc"`` (the PyMC model :func:`pbassess.pymc_models.accuracy.beta_binomial_model`
sampled with NUTS, for cross-checks and extensions).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import xarray as xr

from pbassess.constants import CI_PROB, DEFAULT_DRAWS, DEFAULT_PSEUDOCOUNT
from pbassess.data.predictions import Predictions
from pbassess.errors import ConfigError, DataError
from pbassess.results.base import AssessmentResult, mcmc_diagnostics
from pbassess.stats import (
    beta_draws,
    beta_hdi,
    beta_posterior,
    beta_prior,
    hdi_from_draws,
    prob_extreme,
    rank_draws,
    region_counts,
)

__all__ = ["ENGINES", "AccuracyResult", "assess_accuracy"]

#: Posterior engines every assessment accepts.
ENGINES: tuple[str, ...] = ("conjugate", "mcmc")


# ---------------------------------------------------------------------------- validation
def check_common(preds: Any, engine: str, draws: Any, ci_prob: Any, sample_kwargs: Any) -> None:
    """Validate the options shared by every assessment (raises DataError / ConfigError)."""
    if not isinstance(preds, Predictions):
        raise DataError(f"preds must be a pbassess Predictions object, got {type(preds).__name__}")
    if engine not in ENGINES:
        raise ConfigError(f"unknown engine {engine!r} (choose 'conjugate' or 'mcmc')")
    if isinstance(draws, bool) or not isinstance(draws, (int, np.integer)) or draws < 1:
        raise ConfigError(f"draws must be a positive integer, got {draws!r}")
    try:
        prob = float(ci_prob)
    except (TypeError, ValueError):
        raise ConfigError(f"ci_prob must be a number in (0, 1), got {ci_prob!r}") from None
    if not 0 < prob < 1:
        raise ConfigError(f"ci_prob must be in (0, 1), got {ci_prob!r}")
    if sample_kwargs is not None and not isinstance(sample_kwargs, Mapping):
        raise ConfigError(f"sample_kwargs must be a dict of pm.sample options, got {type(sample_kwargs).__name__}")


def check_pseudocount(pseudocount: Any) -> float:
    """The prior strength as a positive float."""
    try:
        pc = float(pseudocount)
    except (TypeError, ValueError):
        raise ConfigError(f"pseudocount must be a positive number, got {pseudocount!r}") from None
    if not np.isfinite(pc) or pc <= 0:
        raise ConfigError(f"pseudocount must be a positive number, got {pseudocount!r}")
    return pc


def percent(prob: float) -> str:
    """``0.95`` -> ``"95%"``, ``0.875`` -> ``"87.5%"``."""
    return f"{100 * prob:.10g}%"


def region_dim_names(ds: xr.Dataset, var: str) -> list[str]:
    """The non-sample dims of ``var``."""
    return [d for d in ds[var].dims if d not in ("chain", "draw")]


# ---------------------------------------------------------------------------- regions
def _regions(preds: Predictions, by: Any) -> tuple[np.ndarray, list[str], str, str, str]:
    """Region index of every item (-1: no region), region names, dim, noun, description."""
    if isinstance(by, str):
        if by == "predicted":
            return preds.predicted.copy(), list(preds.classes), "class", "predicted class", "predicted"
        if by == "true":
            return preds.labels.copy(), list(preds.classes), "class", "true class", "true"
        values = preds.group(by)
        names, index = np.unique(values.astype(str), return_inverse=True)
        return index.astype(np.int64), [str(v) for v in names], "group", f"{by} group", by
    if isinstance(by, (list, tuple, np.ndarray)) or hasattr(by, "__array__"):
        values = np.asarray(by, dtype=object).ravel()
        if values.shape[0] != preds.n_items:
            raise DataError(f"by: {values.shape[0]} region labels for {preds.n_items} items")
        strings = np.array([str(v) for v in values])
        names, index = np.unique(strings, return_inverse=True)
        return index.astype(np.int64), [str(v) for v in names], "region", "region", "regions"
    raise ConfigError(
        f"by must be 'predicted', 'true', a group column name or one region label per item, got {type(by).__name__}"
    )


def _prior(prior: Any, pc: float, n_regions: int, pool_score: np.ndarray, fallback: float) -> tuple[np.ndarray, np.ndarray, str]:
    if isinstance(prior, str):
        if prior == "uniform":
            a, b = beta_prior("uniform", n_regions, pc)
            return a, b, "uniform"
        if prior == "informed":
            s = np.where(np.isnan(pool_score), fallback, pool_score)
            a, b = beta_prior("informed", n_regions, pc, mean=s)
            return a, b, "informed"
        raise ConfigError(f"unknown prior {prior!r} (choose 'uniform', 'informed' or a tuple (alpha, beta))")
    if isinstance(prior, tuple) and len(prior) == 2:
        from pbassess.pymc_models.accuracy import check_beta_params

        a, b = check_beta_params(prior[0], prior[1], (n_regions,), "prior")
        return a, b, "user"
    raise ConfigError(f"prior must be 'uniform', 'informed' or a tuple (alpha, beta), got {type(prior).__name__}")


# ---------------------------------------------------------------------------- assessment
def assess_accuracy(
    preds: Predictions,
    *,
    by: Any = "predicted",
    prior: Any = "uniform",
    pseudocount: float = DEFAULT_PSEUDOCOUNT,
    engine: str = "conjugate",
    draws: int = DEFAULT_DRAWS,
    seed: Any = None,
    ci_prob: float = CI_PROB,
    sample_kwargs: Mapping[str, Any] | None = None,
) -> AccuracyResult:
    """Posterior accuracy of each predicted class, true class, group or region.

    Each region k gets ``accuracy_k ~ Beta(alpha_k, beta_k)`` a priori and the labeled items
    in it update that to ``Beta(alpha_k + correct_k, beta_k + n_k - correct_k)``. Only
    labeled items count; a region without labeled items keeps its prior (and with no labels
    at all the whole result is the prior).

    Parameters
    ----------
    preds : Predictions
        The pool; only ``preds.labeled`` items enter the likelihood.
    by : {"predicted", "true"}, str or array_like
        ``"predicted"``: per predicted class (dim ``class``); ``"true"``: per true class, i.e.
        recall (dim ``class``, unlabeled items belong to no region); a column of
        ``preds.groups`` (dim ``group``); or one region label per item (dim ``region``).
    prior : {"uniform", "informed"} or tuple (alpha, beta)
        ``uniform``: Beta(pc/2, pc/2); ``informed``: Beta(pc * s_k, pc * (1 - s_k)) with s_k the
        model's mean confidence over all pool items of region k (labeled or not; for
        ``by="true"`` the labeled items of true class k; the pool's mean confidence for regions
        without items); or explicit Beta parameters (scalars or one per region).
    pseudocount : float
        The prior strength pc.
    engine : {"conjugate", "mcmc"}
        Exact Beta posterior with ``draws`` Monte Carlo draws, or NUTS via PyMC.
    draws : int
        Number of Monte Carlo draws of the conjugate engine (the MCMC engine takes its sizes
        from ``sample_kwargs``: by default 4 chains x 1000 draws).
    seed : int or numpy.random.Generator, optional
        Randomness of the draws (and ``random_seed`` of ``pm.sample``).
    ci_prob : float
        Credible mass of the reported HDIs.
    sample_kwargs : dict, optional
        Options for ``pm.sample`` merged over the defaults (mcmc only).

    Returns
    -------
    AccuracyResult

    Raises
    ------
    DataError
        Unknown group column, region labels of the wrong length, ``preds`` not a Predictions.
    ConfigError
        Unknown engine or prior, bad pseudocount, draws, ci_prob or sample_kwargs.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.assess.accuracy import assess_accuracy
    >>> p = Predictions.from_top1(["a", "a", "b", "b", "b"], [0.9, 0.8, 0.7, 0.6, 0.9],
    ...                           ["a", "b", "b", "b", "a"])
    >>> res = assess_accuracy(p, seed=0)
    >>> res.summary()[["n", "correct", "mean"]].round(3).to_dict("index")
    {'a': {'n': 2, 'correct': 1, 'mean': 0.5}, 'b': {'n': 3, 'correct': 2, 'mean': 0.6}}
    """
    check_common(preds, engine, draws, ci_prob, sample_kwargs)
    pc = check_pseudocount(pseudocount)
    region, names, dim, noun, by_name = _regions(preds, by)
    n_regions = len(names)
    labeled = preds.labeled & (region >= 0)
    n, k = region_counts(region[labeled], preds.correct[labeled], n_regions)
    in_pool = region >= 0
    n_pool = np.bincount(region[in_pool], minlength=n_regions)
    score_sum = np.bincount(region[in_pool], weights=preds.confidence[in_pool], minlength=n_regions)
    with np.errstate(invalid="ignore", divide="ignore"):
        pool_score = np.where(n_pool > 0, score_sum / np.maximum(n_pool, 1), np.nan)
    fallback = float(preds.confidence[in_pool].mean()) if in_pool.any() else float(preds.confidence.mean())
    alpha, beta, prior_kind = _prior(prior, pc, n_regions, pool_score, fallback)
    post_a, post_b = beta_posterior(k, n, alpha, beta)
    # Regions compete in the rankings only when they have labeled items (an unlabeled region,
    # e.g. an out-of-distribution set, would otherwise win "lowest" on its prior alone); with
    # no labels anywhere, every region that has pool items is ranked on its prior.
    valid = n > 0 if n.sum() > 0 else n_pool > 0

    counts = xr.Dataset(
        {
            "n": (dim, n), "correct": (dim, k), "n_pool": (dim, n_pool), "mean_score": (dim, pool_score),
            "prior_alpha": (dim, alpha), "prior_beta": (dim, beta), "valid": (dim, valid),
        },
        coords={dim: names},
    )
    idata = None
    diagnostics = None
    if engine == "conjugate":
        theta = beta_draws(post_a, post_b, int(draws), seed)
        posterior = xr.Dataset(
            {"accuracy": (("chain", "draw", dim), theta[None])},
            coords={"chain": [0], "draw": np.arange(theta.shape[0]), dim: names},
        )
    else:
        from pbassess.pymc_models.accuracy import beta_binomial_model, sample_posterior

        model = beta_binomial_model(n, k, alpha, beta, dim=dim, coords=names)
        idata = sample_posterior(model, seed=seed, sample_kwargs=sample_kwargs)
        posterior = idata["posterior"].to_dataset()[["accuracy"]]
        diagnostics = mcmc_diagnostics(idata, var_names=["accuracy"])
    prior_info = {"kind": prior_kind, "pseudocount": pc}
    data_summary = {**preds.describe(), "n_labeled_in_regions": int(n.sum()), "n_regions": n_regions}
    options = {"by": by_name, "dim": dim, "noun": noun, "draws": int(draws) if engine == "conjugate" else None}
    return AccuracyResult(posterior, counts, prior=prior_info, data_summary=data_summary, engine=engine,
                          ci_prob=float(ci_prob), idata=idata, diagnostics=diagnostics, options=options)


# ---------------------------------------------------------------------------- result
class AccuracyResult(AssessmentResult):
    """Posterior accuracy per region (class, group, ...) with rankings.

    Attributes beyond :class:`~pbassess.results.AssessmentResult`: :attr:`regions`,
    :attr:`p_lowest`, :attr:`p_highest`; methods :meth:`mean`, :meth:`hdi`,
    :meth:`p_in_lowest`, :meth:`p_in_highest`, :meth:`rank_draws`, :meth:`rank_summary`.
    With the conjugate engine, means and HDIs are the exact Beta ones; with MCMC they come
    from the draws. Probabilities of ranks always come from the draws. Regions that have
    neither labeled nor pool items (e.g. classes the model never predicts) cannot be
    lowest/highest and rank after all others, but still appear in every table.
    """

    metric = "accuracy"

    # -- basic views ---------------------------------------------------------------------
    def _cache(self) -> dict[str, Any]:
        return self.__dict__.setdefault("_cached", {})

    @property
    def dim(self) -> str:
        """Name of the region dimension: ``class``, ``group`` or ``region``."""
        return region_dim_names(self.posterior, "accuracy")[0]

    @property
    def regions(self) -> list[str]:
        """Region names (class names, group values, region labels)."""
        return [str(v) for v in self.counts[self.dim].to_numpy()]

    @property
    def noun(self) -> str:
        """How a region is called in sentences ("predicted class", "sex group", ...)."""
        return str(self.options.get("noun", self.dim))

    @property
    def valid(self) -> np.ndarray:
        """Regions with at least one pool or labeled item (the ones that can be lowest)."""
        return self.counts["valid"].to_numpy().astype(bool)

    def accuracy_draws(self) -> np.ndarray:
        """Posterior draws of the accuracies, shape (n_draws, K)."""
        if "accuracy_draws" not in self._cache():
            self._cache()["accuracy_draws"] = self.draws("accuracy")
        return self._cache()["accuracy_draws"]

    def _posterior_params(self) -> tuple[np.ndarray, np.ndarray]:
        c = self.counts
        n, k = c["n"].to_numpy(), c["correct"].to_numpy()
        return c["prior_alpha"].to_numpy() + k, c["prior_beta"].to_numpy() + n - k

    def mean(self) -> np.ndarray:
        """Posterior mean accuracy per region (exact for the conjugate engine)."""
        if self.engine == "conjugate":
            a, b = self._posterior_params()
            return a / (a + b)
        return self.accuracy_draws().mean(axis=0)

    def hdi(self) -> np.ndarray:
        """HDI at ``ci_prob`` per region, shape (K, 2) (exact Beta HDI for the conjugate engine)."""
        if "hdi" not in self._cache():
            if self.engine == "conjugate":
                a, b = self._posterior_params()
                self._cache()["hdi"] = beta_hdi(a, b, self.ci_prob)
            else:
                self._cache()["hdi"] = hdi_from_draws(self.accuracy_draws(), self.ci_prob, axis=0)
        return self._cache()["hdi"]

    # -- rankings ------------------------------------------------------------------------
    @property
    def p_lowest(self) -> np.ndarray:
        """P(region k is the least accurate), per region (0 for regions without items)."""
        return self._p_extreme(lowest=True)

    @property
    def p_highest(self) -> np.ndarray:
        """P(region k is the most accurate), per region (0 for regions without items)."""
        return self._p_extreme(lowest=False)

    def _p_extreme(self, lowest: bool) -> np.ndarray:
        key = "p_lowest" if lowest else "p_highest"
        if key not in self._cache():
            if self.valid.any():
                value = prob_extreme(self.accuracy_draws(), lowest=lowest, valid=self.valid)
            else:
                value = np.zeros(len(self.regions))
            self._cache()[key] = value
        return self._cache()[key]

    def rank_draws(self, *, lowest_first: bool = True) -> np.ndarray:
        """Rank of each region in each draw, shape (n_draws, K).

        Rank 1 is the least accurate (``lowest_first``) or the most accurate. Regions without
        items rank after all others.
        """
        d = np.array(self.accuracy_draws(), dtype=float)
        d[:, ~self.valid] = np.inf if lowest_first else -np.inf
        return rank_draws(d, lowest_first=lowest_first)

    def _p_in_extreme(self, m: Any, lowest: bool) -> np.ndarray:
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or not 1 <= m <= len(self.regions):
            raise ConfigError(f"m must be an integer between 1 and {len(self.regions)}, got {m!r}")
        ranks = self.rank_draws(lowest_first=lowest)
        return np.where(self.valid, (ranks <= m).mean(axis=0), 0.0)

    def p_in_lowest(self, m: int) -> np.ndarray:
        """P(region k is among the m least accurate), per region.

        Examples
        --------
        >>> from pbassess import Predictions
        >>> from pbassess.assess.accuracy import assess_accuracy
        >>> p = Predictions.from_top1(["a", "b", "c"] * 20, [0.9] * 60, ["a", "b", "a"] * 20)
        >>> assess_accuracy(p, seed=0).p_in_lowest(1).round(2).tolist()
        [0.0, 0.0, 1.0]
        """
        return self._p_in_extreme(m, lowest=True)

    def p_in_highest(self, m: int) -> np.ndarray:
        """P(region k is among the m most accurate), per region."""
        return self._p_in_extreme(m, lowest=False)

    def rank_summary(self) -> Any:
        """Table of rank distributions: mean rank and the ``ci_prob`` HDI of the rank (1 = least accurate).

        Regions without items get NaN.
        """
        import pandas as pd

        ranks = self.rank_draws().astype(float)
        ranks[:, ~self.valid] = np.nan
        valid = self.valid
        interval = np.full((len(self.regions), 2), np.nan)
        mean_rank = np.full(len(self.regions), np.nan)
        if valid.any():
            interval[valid] = hdi_from_draws(ranks[:, valid], self.ci_prob, axis=0)
            mean_rank[valid] = ranks[:, valid].mean(axis=0)
        frame = pd.DataFrame(
            {"mean_rank": mean_rank, "rank_low": interval[:, 0], "rank_high": interval[:, 1], "p_lowest": self.p_lowest},
            index=pd.Index(self.regions, name=self.dim),
        )
        return frame

    # -- reports -------------------------------------------------------------------------
    def summary(self):
        """One row per region: n, correct, mean, hdi_low, hdi_high, p_lowest, p_highest, mean_rank."""
        import pandas as pd

        hdi = self.hdi()
        ranks = self.rank_draws().astype(float)
        mean_rank = np.where(self.valid, ranks.mean(axis=0), np.nan)
        return pd.DataFrame(
            {
                "n": self.counts["n"].to_numpy().astype(int),
                "correct": self.counts["correct"].to_numpy().astype(int),
                "mean": self.mean(),
                "hdi_low": hdi[:, 0],
                "hdi_high": hdi[:, 1],
                "p_lowest": self.p_lowest,
                "p_highest": self.p_highest,
                "mean_rank": mean_rank,
            },
            index=pd.Index(self.regions, name=self.dim),
        )

    def sentence(self) -> str:
        """The least accurate region, its posterior mean and HDI, and P(it is the lowest)."""
        pct = percent(self.ci_prob)
        if not self.valid.any():
            return f"No {self.noun} has any items, so no accuracy can be compared."
        n_labeled = int(self.counts["n"].sum())
        p_low = self.p_lowest
        mean = self.mean()
        order = np.lexsort((np.where(self.valid, mean, np.inf), -p_low))
        worst = int(order[0])
        lo, hi = self.hdi()[worst]
        name = self.regions[worst]
        if n_labeled == 0:
            return (f"With no labeled items every {self.noun}'s accuracy is still its prior; "
                    f"the lowest prior mean is {name!r} ({mean[worst]:.2f}, {pct} HDI {lo:.2f}-{hi:.2f}).")
        return (f"The least accurate {self.noun} is {name!r} (posterior mean {mean[worst]:.2f}, "
                f"{pct} HDI {lo:.2f}-{hi:.2f}), with probability {p_low[worst]:.2f} of being the lowest.")

    def to_json(self) -> dict[str, Any]:
        """The CLI's JSON object (keys ``metric``, ``classes``, ``n``, ``correct``, ``mean``, ``hdi``,
        ``hdi_prob``, ``p_lowest`` plus ``p_highest``, ``n_pool``, ``by``, ``dim``, ``engine``,
        ``prior``, ``diagnostics``, ``sentence``)."""
        return {
            "metric": self.metric,
            "classes": self.regions,
            "n": [int(v) for v in self.counts["n"].to_numpy()],
            "correct": [int(v) for v in self.counts["correct"].to_numpy()],
            "mean": [float(v) for v in self.mean()],
            "hdi": [[float(lo), float(hi)] for lo, hi in self.hdi()],
            "hdi_prob": self.ci_prob,
            "p_lowest": [float(v) for v in self.p_lowest],
            "p_highest": [float(v) for v in self.p_highest],
            "n_pool": [int(v) for v in self.counts["n_pool"].to_numpy()],
            "by": self.options.get("by"),
            "dim": self.dim,
            "engine": self.engine,
            "prior": self.prior,
            "diagnostics": self.diagnostics,
            "sentence": self.sentence(),
        }

    def plot(self, **kwargs: Any):
        """Classwise accuracy forest plot (:func:`pbassess.plots.accuracy.plot_accuracy`)."""
        from pbassess.plots.accuracy import plot_accuracy

        return plot_accuracy(self, **kwargs)
