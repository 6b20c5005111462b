"""Classwise (or groupwise, or regionwise) accuracy and its rankings.

:func:`assess_accuracy` reduces the labeled items to per-region counts ``(n_k, correct_k)``,
combines them with a Beta prior and returns an :class:`AccuracyResult`: the posterior of each
region's accuracy, the probability that each region is the least (or most) accurate, rank
distributions, a table, a sentence, the CLI's JSON object and plots.

Two inferences give the same posterior: ``"conjugate"`` (exact Beta posterior, Monte Carlo draws
in milliseconds) and ``"nuts"`` (the PyMC model :func:`pbassess.pymc_models.accuracy.beta_binomial_model`
sampled with NUTS, for cross-checks and extensions).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import xarray as xr

from pbassess.assess._common import (  # noqa: F401  (percent: older imports)
    as_pool,
    check_draw_memory,
    check_options,
    check_pseudocount,
    percent,
)
from pbassess.constants import CI_PROB, DEFAULT_PSEUDOCOUNT
from pbassess.counting.core import cell_totals
from pbassess.errors import ConfigError, DataError
from pbassess.inference import fit, total_draws
from pbassess.pymc_models.accuracy import BetaBernoulliSpec
from pbassess.results._format import region_dim_names  # noqa: F401  (older imports)
from pbassess.results.accuracy import AccuracyResult
from pbassess.stats import beta_prior

__all__ = ["AccuracyResult", "assess_accuracy"]


# ---------------------------------------------------------------------------- regions
def _array_region_counts(preds: Any, by: Any) -> xr.Dataset:
    """Counts per region for one region label per item (the only per-item step: labels given as an array)."""
    values = np.asarray(by, dtype=object).ravel()
    if values.shape[0] != preds.n_items:
        raise DataError(f"by: {values.shape[0]} region labels for {preds.n_items} items")
    names, index = np.unique(np.array([str(v) for v in values]), return_inverse=True)
    size = names.size
    labeled = preds.labeled
    pool = cell_totals(index, size, {"score_sum_pool": np.asarray(preds.confidence, dtype=float)})
    lab = cell_totals(np.where(labeled, index, -1), size, {"correct": preds.correct})
    return xr.Dataset(
        {"n_pool": ("region", pool["n"]), "score_sum_pool": ("region", pool["score_sum_pool"]),
         "n": ("region", lab["n"]), "correct": ("region", lab["correct"])},
        coords={"region": [str(v) for v in names]},
    )


def _region_counts(preds: Any, by: Any) -> tuple[xr.Dataset, str, str, str]:
    """Counts per region (from :func:`pbassess.counting.count_cells`), dim, noun, description."""
    from pbassess.counting import count_cells

    if isinstance(by, str):
        if by in ("predicted", "true"):
            cells = count_cells(preds, (by,)).rename({by: "class"})
            return cells, "class", f"{by} class", by
        if by not in preds.groups:
            preds.group(by)  # raises the data layer's one-line error for an unknown column
        cells = count_cells(preds, (by,)).rename({by: "group"})
        return cells.assign_coords(group=[str(v) for v in cells["group"].to_numpy()]), "group", f"{by} group", by
    if isinstance(by, (list, tuple, np.ndarray)) or hasattr(by, "__array__"):
        return _array_region_counts(preds, by), "region", "region", "regions"
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
    preds: Any,
    *,
    by: Any = "predicted",
    prior: Any = "uniform",
    pseudocount: float = DEFAULT_PSEUDOCOUNT,
    ci_prob: float = CI_PROB,
    seed: Any = None,
    inference: str | None = None,
    sample_kwargs: Mapping[str, Any] | None = None,
    draws: int | None = None,
    labels: Any = None,
) -> AccuracyResult:
    r"""Posterior accuracy of each predicted class, true class, group or region.

    Each region k gets ``accuracy_k ~ Beta(alpha_k, beta_k)`` a priori and the labeled items
    in it update that to ``Beta(alpha_k + correct_k, beta_k + n_k - correct_k)``. Only
    labeled items count; a region without labeled items keeps its prior (and with no labels
    at all the whole result is the prior).

    Parameters
    ----------
    preds : Predictions, pandas.DataFrame or arrays
        The pool (anything :func:`pbassess.data.as_predictions` accepts); only labeled items
        enter the likelihood.
    by : {"predicted", "true"}, str or array_like
        ``"predicted"``: per predicted class (dim ``class``); ``"true"``: per true class, i.e.
        recall (dim ``class``, unlabeled items belong to no region); a column of
        ``preds.groups`` (dim ``group``); or one region label per item (dim ``region``).
    prior : {"uniform", "informed"}, tuple (alpha, beta), callable or dict
        ``uniform``: Beta(pc/2, pc/2); ``informed``: Beta(pc * s_k, pc * (1 - s_k)) with s_k the
        model's mean confidence over all pool items of region k (labeled or not; for
        ``by="true"`` the labeled items of true class k; the pool's mean confidence for regions
        without items); explicit Beta parameters (scalars or one per region); or a user's
        PyMC prior for ``accuracy`` (a callable ``prior(model, coords)`` returning it, or
        ``{"accuracy": pm.Beta.dist(...)}``; see :mod:`pbassess.pymc_models.priors`), which
        needs ``inference="nuts"``.
    pseudocount : float
        The prior strength pc.
    inference : {"conjugate", "nuts"}
        Exact Beta posterior (default), or NUTS via PyMC (``"mcmc"`` is an old spelling).
    draws : int, optional
        Posterior draws per chain (4 chains), in both inferences; default 1000
        (:func:`pbassess.inference.draws_per_chain`).
    seed : int or numpy.random.Generator, optional
        Randomness of the draws (and ``random_seed`` of ``pm.sample``).
    ci_prob : float
        Credible mass of the reported HDIs.
    sample_kwargs : dict, optional
        Options for ``pm.sample`` merged over the defaults (nuts only; see
        :func:`pbassess.inference.merge_sample_kwargs`).

    labels : array_like, optional
        True labels when ``preds`` is an array of probabilities or a frame without them
        (passed to :func:`pbassess.as_predictions`).

    Returns
    -------
    AccuracyResult

    Raises
    ------
    DataError
        Unknown group column, region labels of the wrong length, ``preds`` not a Predictions.
    ConfigError
        Unknown inference or prior, bad pseudocount, draws, ci_prob or sample_kwargs; a
        size that would not fit in memory.

    Notes
    -----
    Region :math:`k` has :math:`n_k` labeled items, :math:`y_k` of them correct:

    .. math::

       \theta_k \sim \mathrm{Beta}(\alpha_k, \beta_k), \qquad
       y_k \mid \theta_k \sim \mathrm{Binomial}(n_k, \theta_k), \qquad
       \theta_k \mid y_k \sim \mathrm{Beta}(\alpha_k + y_k,\; \beta_k + n_k - y_k),

    with :math:`(\alpha_k, \beta_k) = (c/2,\, c/2)` for ``prior="uniform"`` and
    :math:`(c\, s_k,\; c\,(1 - s_k))` for ``"informed"`` (:math:`c` the ``pseudocount``,
    :math:`s_k` the mean confidence of region :math:`k`). ``inference="conjugate"`` draws the Beta
    posterior exactly; ``"nuts"`` samples the same model.

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
    from pbassess.pymc_models.priors import is_pymc_prior

    inference, draws, ci_prob, sample_kwargs = check_options(inference, draws, ci_prob, sample_kwargs)
    preds = as_pool(preds) if labels is None else as_pool(preds, labels=labels)
    pc = check_pseudocount(pseudocount)
    user_prior = is_pymc_prior(prior)
    if user_prior and inference != "nuts":
        raise ConfigError("a PyMC prior (callable or dict of distributions) needs inference='nuts'")
    cells, dim, noun, by_name = _region_counts(preds, by)
    names = [str(v) for v in cells[dim].to_numpy()]
    n, k = cells["n"].to_numpy(), cells["correct"].to_numpy()
    n_pool, score_sum = cells["n_pool"].to_numpy(), cells["score_sum_pool"].to_numpy()
    check_draw_memory(total_draws(inference, draws, sample_kwargs), len(names), f"accuracy of {len(names):,} regions",
                      "use fewer draws (--draws) or fewer regions")
    with np.errstate(invalid="ignore", divide="ignore"):
        pool_score = np.where(n_pool > 0, score_sum / np.maximum(n_pool, 1), np.nan)
    fallback = float(score_sum.sum() / n_pool.sum()) if n_pool.sum() else 0.5
    alpha, beta, prior_kind = _prior("uniform" if user_prior else prior, pc, len(names), pool_score, fallback)
    # Every region with items (labeled or in the pool) is ranked; a region without labels ranks on
    # its prior draws (flagged ``ranked_on_prior``) instead of dropping out, which made the one
    # labeled region both the lowest and the highest with probability 1 (issue 20). A region with
    # no items at all (a class never predicted) has no accuracy to rank.
    valid = (n > 0) | (n_pool > 0)
    counts = xr.Dataset(
        {"n": (dim, n), "correct": (dim, k), "n_pool": (dim, n_pool), "mean_score": (dim, pool_score),
         "prior_alpha": (dim, alpha), "prior_beta": (dim, beta), "valid": (dim, valid)},
        coords={dim: names},
    )
    spec = BetaBernoulliSpec(n, k, alpha, beta, dim=dim, coords=names, observations=_observations(preds, by, dim, names),
                             user_prior=prior if user_prior else None)
    fitted = fit(spec, inference=inference, draws=draws, seed=seed, sample_kwargs=sample_kwargs)
    prior_info = {"kind": "pymc" if user_prior else prior_kind, "pseudocount": pc}
    data_summary = {**preds.describe(), "n_labeled_in_regions": int(n.sum()), "n_regions": len(names)}
    options = {"by": by_name, "dim": dim, "noun": noun, "draws": draws,
               "user_prior": bool(user_prior)}
    return AccuracyResult(fitted.idata["posterior"].to_dataset()[["accuracy"]], counts, prior=prior_info,
                          data_summary=data_summary, inference=inference, ci_prob=ci_prob, idata=fitted.idata,
                          diagnostics=fitted.diagnostics, options=options, model=fitted.sampled_model)


def _observations(preds: Any, by: Any, dim: str, names: list[str]):
    """Each labeled item's region (index into ``names``) and correctness, or None for a lazy pool."""
    from pbassess.inference import Observations

    if getattr(preds, "is_lazy", False):
        return None  # the per-item arrays stay on disk; the log-likelihood is then per region
    labeled = preds.labeled
    if isinstance(by, str) and by in ("predicted", "true"):
        cell = np.where(labeled, preds.predicted if by == "predicted" else preds.labels, -1)
    else:
        values = preds.group(by) if isinstance(by, str) else np.asarray(by, dtype=object).ravel()
        index = {name: i for i, name in enumerate(names)}
        cell = np.array([index.get(str(v), -1) for v in values], dtype=np.int64)
        cell[~labeled] = -1
    try:
        ids = preds.item_ids
    except KeyError:
        ids = None
    return Observations.of(cell, preds.correct, ids)
