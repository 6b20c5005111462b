"""The result of :func:`pbassess.assess_accuracy`: posterior accuracy per region with rankings."""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.errors import ConfigError
from pbassess.results._format import names_phrase, percent, plural, region_dim_names, tied_leaders
from pbassess.results.base import AssessmentResult
from pbassess.stats import beta_hdi, hdi_from_draws, prob_extreme, rank_draws

__all__ = ["AccuracyResult"]


class AccuracyResult(AssessmentResult):
    """Posterior accuracy per region (class, group, ...) with rankings.

    Attributes beyond :class:`~pbassess.results.AssessmentResult`: :attr:`regions`,
    :attr:`p_lowest`, :attr:`p_highest`; methods :meth:`mean`, :meth:`hdi`,
    :meth:`p_in_lowest`, :meth:`p_in_highest`, :meth:`rank_draws`, :meth:`rank_summary`.
    With the conjugate engine, means and HDIs are the exact Beta ones; with MCMC they come
    from the draws. Probabilities of ranks always come from the draws. A region with pool
    items but no labels is ranked on its prior draws (:attr:`ranked_on_prior`; the summary,
    the JSON and the sentence say so), so it never drops out of the ranking; regions that have
    neither labeled nor pool items (e.g. classes the model never predicts) have no accuracy to
    rank: they cannot be lowest/highest and rank after all others, but still appear in every
    table.

    Parameters
    ----------
    posterior, counts, prior, data_summary, engine, inference, ci_prob, idata, diagnostics, options, model
        As for :class:`~pbassess.results.AssessmentResult`. Results are built by the assessment
        functions and by :func:`pbassess.load_result`; there is seldom a reason to construct one.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.assess import assess_accuracy
    >>> p = Predictions.from_top1(["a"] * 10 + ["b"] * 4, [0.9] * 14, ["a"] * 8 + ["b"] * 6)
    >>> res = assess_accuracy(p, seed=0)
    >>> res.regions, res.mean().round(3).tolist()  # Beta(1 + 8, 1 + 2) and Beta(1 + 4, 1 + 0) means
    (['a', 'b'], [0.75, 0.833])
    >>> res.hdi().shape, float(res.p_lowest.sum())
    ((2, 2), 1.0)
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
        """Regions with at least one pool or labeled item (the ones that are ranked).

        Derived from the counts, so a result saved before the rule changed (when only labeled
        regions were ranked) is ranked by the same rule on load.
        """
        c = self.counts
        if "n_pool" in c:
            return (c["n"].to_numpy() > 0) | (c["n_pool"].to_numpy() > 0)
        return c["valid"].to_numpy().astype(bool)

    @property
    def ranked_on_prior(self) -> np.ndarray:
        """Regions ranked on their prior draws alone: they have pool items but no labels.

        Examples
        --------
        >>> from pbassess import Predictions
        >>> from pbassess.assess import assess_accuracy
        >>> p = Predictions.from_top1(["a", "a", "b", "b"], [0.9, 0.8, 0.7, 0.6], ["a", "b", None, None])
        >>> res = assess_accuracy(p, seed=0)
        >>> res.ranked_on_prior.tolist(), bool(res.p_lowest[1] > 0)  # "b" is ranked, on its prior
        ([False, True], True)
        """
        return self.valid & (self.counts["n"].to_numpy() == 0)

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
        """Posterior mean accuracy per region (exact for the conjugate inference)."""
        if self.inference == "conjugate" and not self.options.get("user_prior"):
            a, b = self._posterior_params()
            return a / (a + b)
        return self.accuracy_draws().mean(axis=0)

    def hdi(self) -> np.ndarray:
        """HDI at ``ci_prob`` per region, shape (K, 2) (exact Beta HDI for the conjugate engine)."""
        if "hdi" not in self._cache():
            if self.inference == "conjugate" and not self.options.get("user_prior"):
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

        Regions without items get NaN; ``ranked_on_prior`` marks the regions ranked on their prior
        draws (pool items, no labels).
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
            {"mean_rank": mean_rank, "rank_low": interval[:, 0], "rank_high": interval[:, 1], "p_lowest": self.p_lowest,
             "ranked_on_prior": self.ranked_on_prior},
            index=pd.Index(self.regions, name=self.dim),
        )
        return frame

    # -- reports -------------------------------------------------------------------------
    def summary(self):
        """One row per region: n, correct, mean, hdi_low, hdi_high, p_lowest, p_highest, mean_rank.

        A region without labels (``n`` 0 with pool items) is ranked on its prior draws; :meth:`rank_summary`,
        :attr:`ranked_on_prior`, the sentence and the JSON say so.
        """
        import pandas as pd

        hdi = self.hdi()
        ranks = self.rank_draws().astype(float)
        mean_rank = np.where(self.valid, ranks.mean(axis=0), np.nan)
        return self.annotate(pd.DataFrame(
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
        ))

    def sentence(self) -> str:
        """The least accurate region (or the tied ones), its posterior mean and HDI, and P(lowest).

        Regions whose probability of being the lowest is within 0.02 of the largest are named
        together as tied instead of picking one.
        """
        pct = percent(self.ci_prob)
        if not self.valid.any():
            return self.qualify(f"No {self.noun} has any items, so no accuracy can be compared.")
        n_labeled = int(self.counts["n"].sum())
        p_low = self.p_lowest
        mean = self.mean()
        order = np.lexsort((np.where(self.valid, mean, np.inf), -p_low))
        worst = int(order[0])
        lo, hi = self.hdi()[worst]
        name = self.regions[worst]
        if n_labeled == 0:
            return self.qualify(f"With no labeled items every {self.noun}'s accuracy is still its prior; "
                                f"the lowest prior mean is {name!r} ({mean[worst]:.2f}, {pct} HDI {lo:.2f}-{hi:.2f}).")
        tied = tied_leaders(p_low, self.valid)
        on_prior = np.flatnonzero(self.ranked_on_prior)
        note = ""
        if on_prior.size:
            listed = names_phrase([self.regions[i] for i in on_prior[:5]]) + (" and others" if on_prior.size > 5 else "")
            verb = "has" if on_prior.size == 1 else "have"
            note = (f" {on_prior.size} {self.noun if on_prior.size == 1 else plural(self.noun)} ({listed}) {verb} "
                    "no labels and {are} ranked on {their} prior alone.").format(
                        are="is" if on_prior.size == 1 else "are", their="its" if on_prior.size == 1 else "their")
        if tied.size > 1:
            names = names_phrase([self.regions[t] for t in tied[np.argsort(mean[tied])]])
            return self.qualify(
                f"{tied.size} {plural(self.noun)} are tied for least accurate: {names} (each with probability about "
                f"{p_low[tied].mean():.2f} of being the lowest; posterior means {mean[tied].min():.2f}-"
                f"{mean[tied].max():.2f})." + note)
        return self.qualify(f"The least accurate {self.noun} is {name!r} (posterior mean {mean[worst]:.2f}, "
                            f"{pct} HDI {lo:.2f}-{hi:.2f}), with probability {p_low[worst]:.2f} of being the lowest."
                            + note)

    def to_json(self) -> dict[str, Any]:
        """The CLI's JSON object (keys ``metric``, ``inference``, ``ci_prob``, ``classes``, ``n``,
        ``correct``, ``mean``, ``hdi``, ``hdi_prob``, ``p_lowest`` plus ``p_highest``,
        ``ranked_on_prior`` (per region: no labels, ranked on its prior draws), ``n_pool``,
        ``by``, ``dim``, ``engine``, ``prior``, ``diagnostics``, ``sentence``)."""
        return self.with_envelope({
            "metric": self.metric,
            "classes": self.regions,
            "n": [int(v) for v in self.counts["n"].to_numpy()],
            "correct": [int(v) for v in self.counts["correct"].to_numpy()],
            "mean": [float(v) for v in self.mean()],
            "hdi": [[float(lo), float(hi)] for lo, hi in self.hdi()],
            "hdi_prob": self.ci_prob,
            "p_lowest": [float(v) for v in self.p_lowest],
            "p_highest": [float(v) for v in self.p_highest],
            "ranked_on_prior": [bool(v) for v in self.ranked_on_prior],
            "n_pool": [int(v) for v in self.counts["n_pool"].to_numpy()],
            "by": self.options.get("by"),
            "dim": self.dim,
            "engine": self.engine,
            "prior": self.prior,
        })

    def _spec(self):
        from pbassess.pymc_models.accuracy import BetaBernoulliSpec

        if self.options.get("user_prior"):
            return None
        return BetaBernoulliSpec.from_tree(self.idata)

    def _build_model(self):
        from pbassess.pymc_models.accuracy import beta_binomial_model

        if self.options.get("user_prior"):
            return None  # a user's PyMC prior cannot be rebuilt from the saved counts
        c = self.counts
        return beta_binomial_model(c["n"].to_numpy(), c["correct"].to_numpy(), c["prior_alpha"].to_numpy(),
                                   c["prior_beta"].to_numpy(), dim=self.dim, coords=self.regions)

    def plot(self, **kwargs: Any):
        """Classwise accuracy forest plot (:func:`pbassess.plots.accuracy.plot_accuracy`)."""
        from pbassess.plots.accuracy import plot_accuracy

        return plot_accuracy(self, **kwargs)
