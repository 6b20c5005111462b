"""Confusion probabilities P(true | predicted) and the expected misclassification cost.

:func:`assess_confusion` reduces the labeled items to the (K, K) confusion counts (rows
predicted, columns true), puts a Dirichlet prior on each row's ``P(true = . | predicted = k)``
and returns a :class:`CostResult`: the posterior expected cost of each predicted class under a
cost matrix, the probability that each class has the highest expected cost, the posterior mean
confusion probabilities, a table, a sentence, the CLI's JSON object and plots.

Cost convention everywhere: ``cost[k, j]`` is the cost of predicting class k when the truth is
j; the expected cost of predicted class k is ``sum_j P(true = j | predicted = k) * cost[k, j]``
(under the default 0-1 cost: one minus the accuracy of the items predicted as k).

Two engines give the same posterior: ``"conjugate"`` (the exact ``Dirichlet(alpha + counts)``,
drawn with :func:`pbassess.stats.dirichlet_draws`) and ``"mcmc"`` (the PyMC model
:func:`pbassess.pymc_models.confusion.confusion_model` sampled with NUTS).

What a result keeps (memory): 4000 draws of a full 100 x 100 confusion matrix would be 320 MB,
so neither engine stores confusion draws. ``posterior`` holds the expected-cost draws
``(chain, draw, predicted)``; ``counts`` holds the confusion counts, the prior ``alpha``, the cost
matrix and the posterior mean confusion probabilities ``(predicted, true)`` -- exact
``(alpha + counts) / row sum`` for the conjugate engine, the MCMC estimate for ``mcmc``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import xarray as xr

from pbassess.assess.accuracy import check_common, check_pseudocount, percent
from pbassess.constants import CI_PROB, DEFAULT_DRAWS, DEFAULT_PSEUDOCOUNT
from pbassess.data.predictions import Predictions
from pbassess.errors import ConfigError, DataError
from pbassess.results.base import AssessmentResult, mcmc_diagnostics
from pbassess.stats import confusion_counts, hdi_from_draws, prob_extreme
from pbassess.stats.cost import (
    dirichlet_prior,
    expected_cost_posterior_draws,
    mean_probs_by_predicted,
    people_cost_matrix,
    superclass_cost_matrix,
    validate_cost_matrix,
    zero_one_cost,
)

__all__ = ["COST_NAMES", "CostResult", "assess_confusion", "resolve_cost_matrix"]

#: Names accepted for ``cost_matrix``: the 0-1 cost and the paper's two CIFAR-100 matrices.
COST_NAMES: tuple[str, ...] = ("zero-one", "people", "superclass")


def resolve_cost_matrix(cost_matrix: Any, classes: tuple[str, ...]) -> tuple[np.ndarray, str]:
    """The (K, K) cost matrix and its name from ``None``, a name or an array.

    ``None`` or ``"zero-one"``: 0-1 cost; ``"people"`` / ``"superclass"``: the CIFAR-100 matrices
    of :mod:`pbassess.stats.cost` (the classes must be CIFAR-100 names); an array: validated
    (shape (K, K), finite, non-negative), named ``"user"``.

    Examples
    --------
    >>> resolve_cost_matrix(None, ("a", "b"))[1]
    'zero-one'
    >>> resolve_cost_matrix("people", ("a", "b"))
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: people cost matrix (CIFAR-100 classes only): 2 class name(s) not known: 'a', 'b'
    """
    k = len(classes)
    if cost_matrix is None:
        return zero_one_cost(k), "zero-one"
    if isinstance(cost_matrix, str):
        if cost_matrix in ("zero-one", "0-1", "zero_one"):
            return zero_one_cost(k), "zero-one"
        if cost_matrix == "people":
            return people_cost_matrix(classes), "people"
        if cost_matrix == "superclass":
            return superclass_cost_matrix(classes), "superclass"
        raise ConfigError(f"unknown cost matrix {cost_matrix!r} (choose {', '.join(COST_NAMES)} or pass a (K, K) array)")
    return validate_cost_matrix(cost_matrix, k), "user"


def _prior_alpha(prior: Any, pc: float, preds: Predictions) -> tuple[np.ndarray, str]:
    k = preds.n_classes
    if isinstance(prior, str):
        if prior == "uniform":
            return dirichlet_prior("uniform", k, pc), "uniform"
        if prior == "informed":
            if not preds.has_probs:
                raise DataError(
                    f"the informed Dirichlet prior needs full probability vectors, but {preds.name!r} is in top-1 "
                    "form; use prior='uniform'"
                )
            mean_probs = mean_probs_by_predicted(preds.predicted, preds.probs, k)
            return dirichlet_prior("informed", k, pc, mean_probs=mean_probs), "informed"
        raise ConfigError(f"unknown prior {prior!r} (choose 'uniform', 'informed' or a (K, K) array of alphas)")
    try:
        alpha = np.array(prior, dtype=float)
    except (TypeError, ValueError):
        raise ConfigError(f"prior must be 'uniform', 'informed' or a (K, K) array, got {type(prior).__name__}") from None
    if alpha.shape != (k, k):
        raise ConfigError(f"prior array has shape {alpha.shape}, expected ({k}, {k})")
    if not np.all(np.isfinite(alpha)) or (alpha <= 0).any():
        raise ConfigError("prior array must hold positive, finite Dirichlet parameters")
    return alpha, "user"


def assess_confusion(
    preds: Predictions,
    *,
    prior: Any = "uniform",
    pseudocount: float = DEFAULT_PSEUDOCOUNT,
    cost_matrix: Any = None,
    engine: str = "conjugate",
    draws: int = DEFAULT_DRAWS,
    seed: Any = None,
    ci_prob: float = CI_PROB,
    sample_kwargs: Mapping[str, Any] | None = None,
) -> CostResult:
    """Posterior confusion probabilities and expected misclassification cost per predicted class.

    Each predicted class k gets ``P(true = . | predicted = k) ~ Dirichlet(alpha_k)`` a priori and
    the labeled items predicted as k update it to ``Dirichlet(alpha_k + counts_k)``. Only
    labeled items count; a predicted class without labeled items keeps its prior.

    Parameters
    ----------
    preds : Predictions
        The pool; only ``preds.labeled`` items enter the likelihood.
    prior : {"uniform", "informed"} or array_like (K, K)
        ``uniform``: ``alpha = pc / K`` in every cell (``pseudocount=K`` gives the flat
        Dirichlet(1, ..., 1)); ``informed``: ``alpha_k = pc * m_k`` with ``m_k`` the model's mean
        probability vector over all pool items it predicts as k (needs full probability
        vectors); or explicit positive Dirichlet parameters, rows predicted.
        See :func:`pbassess.stats.cost.dirichlet_prior`.
    pseudocount : float
        The prior strength pc per predicted class.
    cost_matrix : None, {"zero-one", "people", "superclass"} or array_like (K, K)
        ``cost[k, j]``: the cost of predicting k when the truth is j. ``None``: 0-1 cost;
        ``"people"``/``"superclass"``: the paper's CIFAR-100 matrices.
    engine : {"conjugate", "mcmc"}
        Exact Dirichlet posterior with ``draws`` Monte Carlo draws of the expected cost, or NUTS
        on :func:`pbassess.pymc_models.confusion.confusion_model`.
    draws : int
        Monte Carlo draws of the conjugate engine (the MCMC engine takes its sizes from
        ``sample_kwargs``: by default 4 chains x 1000 draws).
    seed : int or numpy.random.Generator, optional
    ci_prob : float
        Credible mass of the reported HDIs.
    sample_kwargs : dict, optional
        Options for ``pm.sample`` merged over the defaults (mcmc only).

    Returns
    -------
    CostResult

    Raises
    ------
    DataError
        ``preds`` not a Predictions; informed prior on top-1 data.
    ConfigError
        Unknown engine, prior or cost name; a bad cost matrix (shape, NaN, negative); bad
        pseudocount, draws, ci_prob or sample_kwargs.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.assess.cost import assess_confusion
    >>> p = Predictions.from_top1(["a", "a", "b", "b"], [0.9, 0.8, 0.7, 0.6], ["a", "b", "b", "b"])
    >>> res = assess_confusion(p, seed=0)
    >>> res.summary()["mean"].round(3).tolist()   # (1 + 1) / (2 + 2) and (0 + 1) / (2 + 2)
    [0.5, 0.25]
    """
    check_common(preds, engine, draws, ci_prob, sample_kwargs)
    pc = check_pseudocount(pseudocount)
    names = tuple(preds.classes)
    k = len(names)
    cost, cost_name = resolve_cost_matrix(cost_matrix, names)
    alpha, prior_kind = _prior_alpha(prior, pc, preds)
    lab = preds.labeled
    counts = confusion_counts(preds.predicted[lab], preds.labels[lab], k)
    n_pool = np.bincount(preds.predicted, minlength=k)
    post_alpha = alpha + counts
    idata = None
    diagnostics = None
    if engine == "conjugate":
        ec = expected_cost_posterior_draws(post_alpha, cost, int(draws), seed)
        posterior = xr.Dataset(
            {"expected_cost": (("chain", "draw", "predicted"), ec[None])},
            coords={"chain": [0], "draw": np.arange(ec.shape[0]), "predicted": list(names)},
        )
        confusion_mean = post_alpha / post_alpha.sum(axis=1, keepdims=True)
    else:
        from pbassess.pymc_models.confusion import confusion_model, sample_confusion_model

        model = confusion_model(counts, alpha, cost, classes=names)
        idata = sample_confusion_model(model, seed=seed, sample_kwargs=sample_kwargs)
        posterior = idata["posterior"].to_dataset()[["expected_cost"]]
        cats = model.categories
        category_mean = idata["posterior"]["category_prob"].mean(("chain", "draw")).to_numpy()
        confusion_mean = category_mean[cats.cell_category] * cats.cell_share
        diagnostics = mcmc_diagnostics(idata, var_names=["expected_cost"])
    cell = ("predicted", "true")
    counts_ds = xr.Dataset(
        {
            "confusion": (cell, counts), "prior_alpha": (cell, alpha), "cost": (cell, cost),
            "confusion_mean": (cell, confusion_mean), "n": ("predicted", counts.sum(axis=1)),
            "n_pool": ("predicted", n_pool),
        },
        coords={"predicted": list(names), "true": list(names)},
    )
    prior_info = {"kind": prior_kind, "pseudocount": pc}
    data_summary = {**preds.describe(), "n_classes": k}
    options = {"cost": cost_name, "draws": int(draws) if engine == "conjugate" else None}
    return CostResult(posterior, counts_ds, prior=prior_info, data_summary=data_summary, engine=engine,
                      ci_prob=float(ci_prob), idata=idata, diagnostics=diagnostics, options=options)


class CostResult(AssessmentResult):
    """Posterior expected misclassification cost per predicted class, and confusion probabilities.

    ``posterior["expected_cost"]`` has dims ``(chain, draw, predicted)``; ``counts`` holds the
    confusion counts, prior, cost matrix and posterior mean ``P(true | predicted)``. Means of the
    expected cost are exact for the conjugate engine; HDIs and P(highest) come from the draws.
    Predicted classes with neither labeled nor pool items cannot be the highest.
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
        """``zero-one``, ``people``, ``superclass`` or ``user``."""
        return str(self.options.get("cost", "user"))

    @property
    def valid(self) -> np.ndarray:
        """Predicted classes with at least one pool or labeled item."""
        return (self.counts["n_pool"].to_numpy() > 0) | (self.counts["n"].to_numpy() > 0)

    def cost_draws(self) -> np.ndarray:
        """Posterior draws of the expected cost, shape (n_draws, K)."""
        if "draws" not in self._cache():
            self._cache()["draws"] = self.draws("expected_cost")
        return self._cache()["draws"]

    def mean(self) -> np.ndarray:
        """Posterior mean expected cost per predicted class (exact for the conjugate engine)."""
        if self.engine == "conjugate":
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
        return pd.DataFrame(
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
        )

    def sentence(self) -> str:
        """The predicted class with the highest expected cost, its mean and HDI, and P(highest)."""
        pct = percent(self.ci_prob)
        valid = self.valid
        if not valid.any():
            return "No predicted class has any items, so no expected cost can be compared."
        mean = self.mean()
        p_high = self.p_highest
        order = np.lexsort((-np.where(valid, mean, -np.inf), -p_high))
        worst = int(order[0])
        lo, hi = self.hdi()[worst]
        name = self.classes[worst]
        cost = f"the {self.cost_name} cost" if self.cost_name != "user" else "the given cost matrix"
        if int(self.counts["n"].sum()) == 0:
            return (f"With no labeled items every predicted class's expected cost under {cost} is still its "
                    f"prior; the highest prior mean is {name!r} ({mean[worst]:.2f}, {pct} HDI {lo:.2f}-{hi:.2f}).")
        text = (f"Under {cost}, the predicted class with the highest expected cost is {name!r} (posterior mean "
                f"{mean[worst]:.2f}, {pct} HDI {lo:.2f}-{hi:.2f}), with probability {p_high[worst]:.2f} of being the highest")
        confused, _ = self.most_confused_with()
        if confused[worst] is not None:
            text += f"; when it is wrong the true class is most likely {confused[worst]!r}"
        return text + "."

    def to_json(self) -> dict[str, Any]:
        """The CLI's JSON object: ``metric``, ``classes``, ``mean``, ``hdi``, ``p_highest`` plus
        ``hdi_prob``, ``n``, ``n_pool``, ``confused_with``, ``cost``, ``engine``, ``prior``,
        ``diagnostics``, ``sentence``."""
        confused, _ = self.most_confused_with()
        return {
            "metric": self.metric,
            "classes": self.classes,
            "mean": [float(v) for v in self.mean()],
            "hdi": [[float(lo), float(hi)] for lo, hi in self.hdi()],
            "p_highest": [float(v) for v in self.p_highest],
            "hdi_prob": self.ci_prob,
            "n": [int(v) for v in self.counts["n"].to_numpy()],
            "n_pool": [int(v) for v in self.counts["n_pool"].to_numpy()],
            "confused_with": confused,
            "cost": self.cost_name,
            "engine": self.engine,
            "prior": self.prior,
            "diagnostics": self.diagnostics,
            "sentence": self.sentence(),
        }

    def plot(self, **kwargs: Any):
        """Expected cost per predicted class with HDIs (:func:`pbassess.plots.cost.plot_expected_cost`)."""
        from pbassess.plots.cost import plot_expected_cost

        return plot_expected_cost(self, **kwargs)
