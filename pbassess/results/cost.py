"""The result of :func:`pbassess.assess_confusion`: expected misclassification cost and confusion probabilities."""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from pbassess.results._format import names_phrase, percent, tied_leaders
from pbassess.results.base import AssessmentResult
from pbassess.stats import hdi_from_draws, prob_extreme

__all__ = ["CostResult"]


class CostResult(AssessmentResult):
    """Posterior expected misclassification cost per predicted class, and confusion probabilities.

    ``posterior["expected_cost"]`` has dims ``(chain, draw, predicted)``; ``counts`` holds the
    confusion counts, prior, cost matrix and posterior mean ``P(true | predicted)``. Means of the
    expected cost are exact for the conjugate engine; HDIs and P(highest) come from the draws.
    Predicted classes with neither labeled nor pool items cannot be the highest.

    Parameters
    ----------
    posterior, counts, prior, data_summary, engine, inference, ci_prob, idata, diagnostics, options, model
        As for :class:`~pbassess.results.AssessmentResult`. Results are built by the assessment
        functions and by :func:`pbassess.load_result`; there is seldom a reason to construct one.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.assess import assess_confusion
    >>> p = Predictions.from_top1(["a", "a", "b", "b"], [0.9, 0.8, 0.7, 0.6], ["a", "b", "b", "b"])
    >>> res = assess_confusion(p, cost_matrix=[[0, 1], [5, 0]], seed=0)
    >>> res.classes, res.mean().round(3).tolist()  # P(b | predicted a) = 2/4 at cost 1, P(a | b) = 1/4 at 5
    (['a', 'b'], [0.5, 1.25])
    >>> res.summary()["confused_with"].tolist()
    ['b', 'a']
    """

    metric = "cost"

    def _cache(self) -> dict[str, Any]:
        return self.__dict__.setdefault("_cached", {})

    @property
    def classes(self) -> list[str]:
        """Class names (the ``predicted`` and ``true`` coordinates)."""
        return [str(v) for v in self.counts["predicted"].to_numpy()]

    @property
    def cost_name(self) -> str:
        """``zero-one``, ``people``, ``superclass``, ``user`` (an array) or the cost file's path."""
        return str(self.options.get("cost", "user"))

    @property
    def valid(self) -> np.ndarray:
        """Predicted classes with at least one pool or labeled item."""
        return (self.counts["n_pool"].to_numpy() > 0) | (self.counts["n"].to_numpy() > 0)

    @property
    def ranked_on_prior(self) -> np.ndarray:
        """Predicted classes ranked on their prior draws alone: pool items but no labels (issue 20)."""
        return self.valid & (self.counts["n"].to_numpy() == 0)

    def cost_draws(self) -> np.ndarray:
        """Posterior draws of the expected cost, shape (n_draws, K)."""
        if "draws" not in self._cache():
            self._cache()["draws"] = self.draws("expected_cost")
        return self._cache()["draws"]

    def mean(self) -> np.ndarray:
        """Posterior mean expected cost per predicted class (exact for the conjugate engine)."""
        if self.inference == "conjugate":
            c = self.counts
            post = c["prior_alpha"].to_numpy() + c["confusion"].to_numpy()
            return np.sum(post * c["cost"].to_numpy(), axis=1) / post.sum(axis=1)
        return self.cost_draws().mean(axis=0)

    def hdi(self) -> np.ndarray:
        """HDI of the expected cost at ``ci_prob`` per predicted class, shape (K, 2)."""
        if "hdi" not in self._cache():
            self._cache()["hdi"] = hdi_from_draws(self.cost_draws(), self.ci_prob, axis=0)
        return self._cache()["hdi"]

    @property
    def p_highest(self) -> np.ndarray:
        """P(predicted class k has the highest expected cost), per class."""
        if "p_highest" not in self._cache():
            valid = self.valid
            value = prob_extreme(self.cost_draws(), lowest=False, valid=valid) if valid.any() else np.zeros(len(valid))
            self._cache()["p_highest"] = value
        return self._cache()["p_highest"]

    def confusion_probabilities(self) -> xr.DataArray:
        """Posterior mean ``P(true = j | predicted = k)``, dims ``(predicted, true)``; rows sum to one.

        Examples
        --------
        >>> from pbassess import Predictions
        >>> from pbassess.assess.cost import assess_confusion
        >>> p = Predictions.from_top1(["a", "a"], [0.9, 0.8], ["a", "b"])
        >>> assess_confusion(p, seed=0).confusion_probabilities().sel(predicted="a").values.tolist()
        [0.5, 0.5]
        """
        da = self.counts["confusion_mean"].copy()
        da.name = "confusion"
        da.attrs["description"] = "posterior mean P(true | predicted); rows predicted, columns true"
        return da

    def most_confused_with(self) -> tuple[list[str | None], np.ndarray]:
        """For each predicted class, the true class it most likely is when the prediction is wrong.

        Returns the class names (None where every wrong true class is equally likely, e.g. no
        observed mistakes under the uniform prior) and their posterior mean probabilities.
        """
        conf = self.counts["confusion_mean"].to_numpy().copy()
        np.fill_diagonal(conf, -np.inf)
        best = conf.argmax(axis=1)
        prob = conf[np.arange(conf.shape[0]), best]
        ties = np.sum(np.isclose(conf, prob[:, None], rtol=1e-12, atol=0.0), axis=1) > 1
        names = [None if tie else self.classes[j] for j, tie in zip(best, ties, strict=True)]
        return names, prob

    def summary(self):
        """One row per predicted class: n, mean, hdi_low, hdi_high, p_highest, confused_with, p_confused."""
        import pandas as pd

        hdi = self.hdi()
        confused, p_confused = self.most_confused_with()
        return self.annotate(pd.DataFrame(
            {
                "n": self.counts["n"].to_numpy().astype(int),
                "mean": self.mean(),
                "hdi_low": hdi[:, 0],
                "hdi_high": hdi[:, 1],
                "p_highest": self.p_highest,
                "confused_with": confused,
                "p_confused": p_confused,
            },
            index=pd.Index(self.classes, name="predicted"),
        ))

    def sentence(self) -> str:
        """The predicted class with the highest expected cost (or the tied ones), its mean and HDI, and P(highest)."""
        pct = percent(self.ci_prob)
        valid = self.valid
        if not valid.any():
            return self.qualify("No predicted class has any items, so no expected cost can be compared.")
        mean = self.mean()
        p_high = self.p_highest
        order = np.lexsort((-np.where(valid, mean, -np.inf), -p_high))
        worst = int(order[0])
        lo, hi = self.hdi()[worst]
        name = self.classes[worst]
        named = self.cost_name in ("zero-one", "people", "superclass")
        cost = f"the {self.cost_name} cost" if named else "the given cost matrix"
        if int(self.counts["n"].sum()) == 0:
            return self.qualify(f"With no labeled items every predicted class's expected cost under {cost} is still "
                                f"its prior; the highest prior mean is {name!r} ({mean[worst]:.2f}, {pct} HDI "
                                f"{lo:.2f}-{hi:.2f}).")
        tied = tied_leaders(p_high, valid)
        if tied.size > 1:
            names = names_phrase([self.classes[t] for t in tied[np.argsort(-mean[tied])]])
            return self.qualify(f"Under {cost}, {tied.size} predicted classes are tied for the highest expected cost: "
                                f"{names} (each with probability about {p_high[tied].mean():.2f} of being the highest; "
                                f"posterior means {mean[tied].min():.2f}-{mean[tied].max():.2f}).")
        text = (f"Under {cost}, the predicted class with the highest expected cost is {name!r} (posterior mean "
                f"{mean[worst]:.2f}, {pct} HDI {lo:.2f}-{hi:.2f}), with probability {p_high[worst]:.2f} of being the highest")
        confused, _ = self.most_confused_with()
        if confused[worst] is not None:
            text += f"; when it is wrong the true class is most likely {confused[worst]!r}"
        return self.qualify(text + ".")

    def to_json(self) -> dict[str, Any]:
        """The CLI's JSON object: ``metric``, ``classes``, ``mean``, ``hdi``, ``p_highest`` plus
        ``ranked_on_prior`` (per class: no labels, ranked on its prior draws), ``hdi_prob``, ``n``, ``n_pool``, ``confused_with``, ``cost``, ``engine``, ``prior``,
        ``diagnostics``, ``sentence``."""
        confused, _ = self.most_confused_with()
        return self.with_envelope({
            "metric": self.metric,
            "classes": self.classes,
            "mean": [float(v) for v in self.mean()],
            "hdi": [[float(lo), float(hi)] for lo, hi in self.hdi()],
            "p_highest": [float(v) for v in self.p_highest],
            "ranked_on_prior": [bool(v) for v in self.ranked_on_prior],
            "hdi_prob": self.ci_prob,
            "n": [int(v) for v in self.counts["n"].to_numpy()],
            "n_pool": [int(v) for v in self.counts["n_pool"].to_numpy()],
            "confused_with": confused,
            "cost": self.cost_name,
            "engine": self.engine,
            "prior": self.prior,
        })

    def _spec(self):
        from pbassess.pymc_models.confusion import ConfusionSpec

        return ConfusionSpec.from_tree(self.idata)

    def _build_model(self):
        from pbassess.pymc_models.confusion import confusion_model

        c = self.counts
        return confusion_model(c["confusion"].to_numpy(), c["prior_alpha"].to_numpy(), c["cost"].to_numpy(),
                               classes=self.classes)

    def plot(self, **kwargs: Any):
        """Expected cost per predicted class with HDIs (:func:`pbassess.plots.cost.plot_expected_cost`)."""
        from pbassess.plots.cost import plot_expected_cost

        return plot_expected_cost(self, **kwargs)
