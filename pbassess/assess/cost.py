"""Confusion probabilities P(true | predicted) and the expected misclassification cost.

:func:`assess_confusion` reduces the labeled items to the (K, K) confusion counts (rows
predicted, columns true), puts a Dirichlet prior on each row's ``P(true = . | predicted = k)``
and returns a :class:`CostResult`: the posterior expected cost of each predicted class under a
cost matrix, the probability that each class has the highest expected cost, the posterior mean
confusion probabilities, a table, a sentence, the CLI's JSON object and plots.

Cost convention everywhere: ``cost[k, j]`` is the cost of predicting class k when the truth is
j; the expected cost of predicted class k is ``sum_j P(true = j | predicted = k) * cost[k, j]``
(under the default 0-1 cost: one minus the accuracy of the items predicted as k).

Two inferences give the same posterior: ``"conjugate"`` (the exact ``Dirichlet(alpha + counts)``,
drawn per row over its observed cells and its zero-count cells merged by cost level -- the
Dirichlet aggregation property, exact for the expected cost and the likelihood) and ``"nuts"``
(the PyMC model :func:`pbassess.pymc_models.confusion.confusion_model` sampled with NUTS). Both
store the pointwise log-likelihood of each predicted class's row of confusion counts
(multinomial) under every draw.

What a result keeps (memory): 4000 draws of a full 100 x 100 confusion matrix would be 320 MB,
so neither inference stores confusion draws. ``posterior`` holds the expected-cost draws
``(chain, draw, predicted)``; ``counts`` holds the confusion counts, the prior ``alpha``, the cost
matrix and the posterior mean confusion probabilities ``(predicted, true)`` -- exact
``(alpha + counts) / row sum`` for the conjugate inference, the NUTS estimate for ``nuts``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import xarray as xr

from pbassess.assess._common import (
    as_pool,
    check_draw_memory,
    check_options,
    check_pseudocount,
)
from pbassess.constants import CI_PROB, DEFAULT_PSEUDOCOUNT
from pbassess.errors import ConfigError, DataError
from pbassess.inference import check_memory, fit, total_draws
from pbassess.pymc_models.confusion import ConfusionSpec
from pbassess.results.cost import CostResult
from pbassess.stats.cost import dirichlet_prior, mean_probs_by_predicted

__all__ = ["COST_NAMES", "CostResult", "assess_confusion", "resolve_cost_matrix"]

#: Names accepted for ``cost_matrix``: the 0-1 cost and the paper's two CIFAR-100 matrices.
COST_NAMES: tuple[str, ...] = ("zero-one", "people", "superclass")

#: Category draws (draws x categories) are made in chunks of at most this many floats (128 MiB).
CHUNK_FLOATS: int = 2**24


def resolve_cost_matrix(cost_matrix: Any, classes: tuple[str, ...]) -> tuple[np.ndarray, str]:
    """The (K, K) cost matrix and how it is named, from :func:`pbassess.stats.cost.resolve_cost_matrix`.

    Examples
    --------
    >>> resolve_cost_matrix(None, ("a", "b"))[1]
    'zero-one'
    >>> resolve_cost_matrix([[0, 2], [1, 0]], ("a", "b"))[1]
    'user'
    """
    from pbassess.stats.cost import cost_matrix_name
    from pbassess.stats.cost import resolve_cost_matrix as resolve

    return resolve(cost_matrix, tuple(classes)), cost_matrix_name(cost_matrix)


def _prior_alpha(prior: Any, pc: float, preds: Any) -> tuple[np.ndarray, str]:
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
    preds: Any,
    *,
    prior: Any = "uniform",
    pseudocount: float = DEFAULT_PSEUDOCOUNT,
    cost_matrix: Any = None,
    ci_prob: float = CI_PROB,
    seed: Any = None,
    inference: str | None = None,
    sample_kwargs: Mapping[str, Any] | None = None,
    draws: int | None = None,
    labels: Any = None,
    by: str = "predicted",
) -> CostResult:
    r"""Posterior confusion probabilities and expected misclassification cost per predicted class.

    Each predicted class k gets ``P(true = . | predicted = k) ~ Dirichlet(alpha_k)`` a priori and
    the labeled items predicted as k update it to ``Dirichlet(alpha_k + counts_k)``. Only
    labeled items count; a predicted class without labeled items keeps its prior.

    Parameters
    ----------
    preds : Predictions, pandas.DataFrame or arrays
        The pool (anything :func:`pbassess.data.as_predictions` accepts); only labeled items
        enter the likelihood.
    prior : {"uniform", "informed"} or array_like (K, K)
        ``uniform``: ``alpha = pc / K`` in every cell (``pseudocount=K`` gives the flat
        Dirichlet(1, ..., 1)); ``informed``: ``alpha_k = pc * m_k`` with ``m_k`` the model's mean
        probability vector over all pool items it predicts as k (needs full probability
        vectors); or explicit positive Dirichlet parameters, rows predicted.
        See :func:`pbassess.stats.cost.dirichlet_prior`.
    pseudocount : float
        The prior strength pc per predicted class.
    cost_matrix : None, {"zero-one", "people", "superclass"}, array_like (K, K) or path
        ``cost[k, j]``: the cost of predicting k when the truth is j. ``None``: 0-1 cost;
        ``"people"``/``"superclass"``: the paper's CIFAR-100 matrices; a CSV/.npy/.json file
        (:func:`pbassess.stats.cost.resolve_cost_matrix`).
    inference : {"conjugate", "nuts"}
        Exact Dirichlet posterior, or NUTS on
        :func:`pbassess.pymc_models.confusion.confusion_model` (``"mcmc"`` is an old spelling).
    draws : int, optional
        Posterior draws per chain (4 chains), in both inferences; default 1000.
    seed : int or numpy.random.Generator, optional
    ci_prob : float
        Credible mass of the reported HDIs.
    sample_kwargs : dict, optional
        Options for ``pm.sample`` merged over the defaults (nuts only).

    by : {"predicted"}
        The rows of the confusion matrix (the only choice: expected cost per predicted class).

    labels : array_like, optional
        As in :func:`pbassess.assess_accuracy`.

    Returns
    -------
    CostResult

    Raises
    ------
    DataError
        ``preds`` not a Predictions; informed prior on top-1 data.
    ConfigError
        Unknown inference, prior or cost name; a bad cost matrix (shape, NaN, negative); bad
        pseudocount, draws, ci_prob or sample_kwargs; K x K arrays too large for memory.

    Notes
    -----
    Row :math:`k` of the confusion matrix (items predicted as :math:`k`) has counts
    :math:`y_{k\cdot} = (y_{k1}, \dots, y_{kK})` over the true classes:

    .. math::

       \pi_{k\cdot} \sim \mathrm{Dirichlet}(\alpha_{k\cdot}), \qquad
       y_{k\cdot} \mid \pi_{k\cdot} \sim \mathrm{Multinomial}(n_k, \pi_{k\cdot}), \qquad
       \pi_{k\cdot} \mid y \sim \mathrm{Dirichlet}(\alpha_{k\cdot} + y_{k\cdot}),

    and the expected cost of predicting :math:`k` is
    :math:`R_k = \sum_j C_{kj}\, \pi_{kj}` (:math:`C` the ``cost_matrix``), one value per posterior
    draw. ``prior="uniform"`` sets :math:`\alpha_{kj} = c/K`; ``"informed"`` sets
    :math:`\alpha_{k\cdot} = c\, m_k` with :math:`m_k` the mean probability vector of the items
    predicted as :math:`k`.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.assess.cost import assess_confusion
    >>> p = Predictions.from_top1(["a", "a", "b", "b"], [0.9, 0.8, 0.7, 0.6], ["a", "b", "b", "b"])
    >>> res = assess_confusion(p, seed=0)
    >>> res.summary()["mean"].round(3).tolist()   # (1 + 1) / (2 + 2) and (0 + 1) / (2 + 2)
    [0.5, 0.25]
    """
    from pbassess.counting import count_cells

    inference, draws, ci_prob, sample_kwargs = check_options(inference, draws, ci_prob, sample_kwargs)
    if by != "predicted":
        raise ConfigError(f"the expected cost is per predicted class; by={by!r} is not supported")
    preds = as_pool(preds) if labels is None else as_pool(preds, labels=labels)
    pc = check_pseudocount(pseudocount)
    names = tuple(str(c) for c in preds.classes)
    k = len(names)
    check_memory(8.0 * 6 * k * k, f"the cost assessment of {k:,} classes (K x K matrices)",
                 "assess fewer classes (e.g. merge rare classes) or use the accuracy metric")
    total = total_draws(inference, draws, sample_kwargs)
    check_draw_memory(total, 3 * k, f"the cost assessment of {k:,} classes", "use fewer draws (--draws)")
    cost_arr, cost_name = resolve_cost_matrix(cost_matrix, names)
    alpha, prior_kind = _prior_alpha(prior, pc, preds)
    counts = count_cells(preds, ("predicted", "true"))["n"].to_numpy()
    n_pool = count_cells(preds, ("predicted",))["n_pool"].to_numpy()
    spec = ConfusionSpec(counts, alpha, cost_arr, names, observations=_observations(preds))
    check_draw_memory(total, spec.cats.alpha.size + 2 * k, f"the cost assessment of {k:,} classes",
                      "use fewer draws (--draws)")
    fitted = fit(spec, inference=inference, draws=draws, seed=seed, sample_kwargs=sample_kwargs)
    if inference == "conjugate":  # the exact posterior mean of every cell
        post_alpha = alpha + counts
        confusion_mean = post_alpha / post_alpha.sum(axis=1, keepdims=True)
    else:
        category_mean = fitted.idata["posterior"]["category_prob"].mean(("chain", "draw")).to_numpy()
        confusion_mean = category_mean[spec.cats.cell_category] * spec.cats.cell_share
    cell = ("predicted", "true")
    counts_ds = xr.Dataset(
        {"confusion": (cell, counts), "prior_alpha": (cell, alpha), "cost": (cell, cost_arr),
         "confusion_mean": (cell, confusion_mean), "n": ("predicted", counts.sum(axis=1)),
         "n_pool": ("predicted", n_pool)},
        coords={"predicted": list(names), "true": list(names)},
    )
    options = {"cost": cost_name, "draws": draws}
    return CostResult(fitted.idata["posterior"].to_dataset()[["expected_cost"]], counts_ds,
                      prior={"kind": prior_kind, "pseudocount": pc}, data_summary={**preds.describe(), "n_classes": k},
                      inference=inference, ci_prob=ci_prob, idata=fitted.idata, diagnostics=fitted.diagnostics,
                      options=options, model=fitted.sampled_model)


def _observations(preds: Any):
    """Each labeled item's predicted class (its row) and true class, or None for a lazy pool."""
    from pbassess.inference import Observations

    return Observations.of_pool(preds, lambda p: (p.predicted, p.labels))
