"""Bayesian estimation of a pool's accuracy per region with a confidence-informed prior.

The pool is split into cells: each region (group, class or the whole pool) crossed with
equal-mass confidence bins (the bins are computed from the pool's confidences, no labels
needed). Every cell's accuracy has the prior of :mod:`pbassess.estimation.eb`,
``Beta(mu tau, (1 - mu) tau)`` with ``logit mu = offset + slope * logit(mean confidence)``,
and (offset, slope, tau) are learned from the labels of all cells at once. The estimand is the
accuracy of the region's **pool**: its labeled items are known, its unlabeled ones are drawn
from the posterior predictive ``Binomial(N_c - n_c, theta_c)`` of each cell (a finite-population
posterior, the same target as the frequentist intervals of the benchmark). With labels in two or
more regions each region also gets its own offset (``logit mu = offset + u_r + slope * logit c``,
``u_r ~ Normal(0, sigma)`` with sigma learned; :mod:`pbassess.estimation.regional`), so a region
miscalibrated unlike the others is corrected by its own labels.

Two inference paths over the same counts:

* ``conjugate`` (fast path): the mode of the hyperparameters' marginal posterior
  (:func:`~pbassess.estimation.eb.fit_confidence_prior`, empirical Bayes) with a Laplace
  approximation around it (:func:`~pbassess.estimation.eb.laplace_draws`: a plug-in mode alone
  under-covers when few cells carry labels - 71% for a 90% interval in the tests), then exact
  Beta posteriors per cell given each hyperparameter draw;
* ``nuts`` (``mcmc``): :class:`~pbassess.pymc_models.estimation.ConfidencePriorSpec` through
  :func:`pbassess.inference.fit` (the DataTree contract: prior, log prior, one log-likelihood
  value per labeled item). Its PyMC model (:func:`confidence_prior_model`) integrates the
  cells' accuracies out analytically (``BetaBinomial`` likelihood, which NUTS samples without
  the funnel of a hierarchical Beta); each posterior draw of the hyperparameters is completed
  by an exact draw of the cells' accuracies from their conditional Beta (a Rao-Blackwellised,
  exact hierarchical posterior). The fast path has no closed form (it is an approximation),
  so it does not go through the fit layer's ``conjugate`` inference, which means exact draws.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from pbassess.constants import CI_PROB, DEFAULT_BINS
from pbassess.counting import assign_bins, cell_codes
from pbassess.counting import cell_counts as core_counts
from pbassess.errors import ConfigError
from pbassess.estimation.eb import (
    ConfidencePrior,
    bounded_normal_draws,
    fit_confidence_prior,
    laplace_covariance,
    laplace_draws,
    logit_confidence,
)
from pbassess.estimation.regional import fit_regional_prior
from pbassess.stats.sampling import as_generator

__all__ = [
    "CellCounts", "bayes_estimate", "bayes_estimate_batch", "cell_counts", "confidence_prior_model", "confidence_prior_spec",
    "equal_tailed_interval", "pool_accuracy_draws",
]


def equal_tailed_interval(draws: Any, prob: float = CI_PROB, axis: int = 0) -> np.ndarray:
    """The equal-tailed credible interval of Monte Carlo draws: the (1 - prob)/2 and (1 + prob)/2 quantiles.

    The Bayesian method's interval. Not the HDI: for an accuracy near 1 the posterior's density
    is highest at the boundary, so the HDI is ``[q_{1 - prob}, max]`` and puts all of its
    ``1 - prob`` miss probability on the side where the truth lies (at accuracy 0.99 with 200
    labels the 90% HDI covered 0.86 of label draws: 0.11 of misses below, 0.03 above); the
    equal-tailed interval misses (1 - prob) / 2 on each side and is invariant under monotone
    transforms (logit or error rate give the same interval), as with the Jeffreys interval of a
    binomial proportion (Brown, Cai and DasGupta 2001).

    Returns
    -------
    ndarray with ``axis`` replaced by a trailing axis of length 2 (lower, upper).

    Examples
    --------
    >>> d = np.linspace(0, 1, 1001)[:, None]
    >>> equal_tailed_interval(d, 0.9).round(3).tolist()
    [[0.05, 0.95]]
    """
    from pbassess.stats.intervals import check_ci_prob

    tail = (1 - check_ci_prob(prob)) / 2
    x = np.moveaxis(np.asarray(draws, dtype=float), axis, -1)
    return np.stack([np.quantile(x, tail, axis=-1), np.quantile(x, 1 - tail, axis=-1)], axis=-1)


@dataclass(frozen=True)
class CellCounts:
    """Sufficient counts of the cells (region x confidence bin) of a pool.

    Attributes: ``region`` (region index of each cell), ``n_pool``, ``n`` (labeled), ``correct``
    (correct labeled), ``mean_conf`` (mean confidence over the cell's pool), ``n_regions``, and
    per item of the pool ``item_cell`` (the cell of each labeled item, -1 for an unlabeled one)
    and ``item_correct`` (1/0; both ``None`` when built from counts alone).

    Examples
    --------
    >>> cells = cell_counts([0.9, 0.8, 0.6, 0.7], [0, 0, 1, 1], 2, [True, True, True, False], [1, 1, 0, 0], bins=1)
    >>> isinstance(cells, CellCounts), cells.region.tolist(), cells.n_pool.tolist(), cells.n.tolist()
    (True, [0, 1], [2, 2], [2, 1])
    >>> cells.correct.tolist(), cells.mean_conf.round(2).tolist()
    ([2, 0], [0.85, 0.65])
    """

    region: np.ndarray
    n_pool: np.ndarray
    n: np.ndarray
    correct: np.ndarray
    mean_conf: np.ndarray
    n_regions: int
    item_cell: np.ndarray | None = None
    item_correct: np.ndarray | None = None


def cell_counts(confidence: Any, region: Any, n_regions: int, labeled: Any, correct: Any,
                bins: int = DEFAULT_BINS) -> CellCounts:
    """Count the non-empty cells of region x equal-mass confidence bin.

    Parameters
    ----------
    confidence : array_like, shape (N,)
        The model's confidence on every pool item.
    region : array_like of int, shape (N,)
        Region index of each item.
    n_regions : int
    labeled : array_like of bool, shape (N,)
    correct : array_like of {0, 1}, shape (N,)
        Correctness (ignored where not labeled).
    bins : int
        Equal-mass confidence bins per region.

    Returns
    -------
    CellCounts

    Examples
    --------
    >>> c = cell_counts([.9, .8, .6, .95], [0, 0, 1, 1], 2, [True, False, True, False], [1, 0, 0, 0], bins=1)
    >>> c.n_pool.tolist(), c.n.tolist(), c.correct.tolist(), c.mean_conf.round(3).tolist()
    ([2, 2], [1, 1], [1, 0], [0.85, 0.775])
    """
    conf = np.asarray(confidence, dtype=float)
    reg = np.asarray(region, dtype=np.int64)
    lab = np.asarray(labeled, dtype=bool)
    cor = np.asarray(correct, dtype=float) * lab
    if int(bins) < 1:
        raise ConfigError(f"bins must be a positive integer, got {bins}")
    edges = np.unique(np.quantile(conf, np.linspace(0, 1, int(bins) + 1)[1:-1]))
    b = assign_bins(conf, np.concatenate([[-np.inf], edges, [np.inf]]))   # the one bin rule
    nb = edges.size + 1
    cell = cell_codes([reg, b], [n_regions, nb])
    size = n_regions * nb
    n_pool = core_counts(cell, size)
    used = np.flatnonzero(n_pool > 0)
    n = core_counts(cell, size, lab)[used]
    k = core_counts(cell, size, cor)[used]
    mc = core_counts(cell, size, conf)[used] / n_pool[used]
    position = np.full(size, -1, dtype=np.int64)
    position[used] = np.arange(used.size)
    return CellCounts(region=used // nb, n_pool=n_pool[used], n=np.round(n).astype(np.int64),
                      correct=np.round(k).astype(np.int64), mean_conf=mc, n_regions=int(n_regions),
                      # per item, compact (5 bytes an item): the labeled items of a NUTS fit's log-likelihood
                      item_cell=np.where(lab, position[cell], -1).astype(np.int32),
                      item_correct=(cor > 0).astype(np.int8))


def pool_accuracy_draws(cells: CellCounts, alpha: Any, beta: Any, seed: Any = None) -> np.ndarray:
    """Draws of each region's pool accuracy from the cells' posterior Beta(alpha, beta).

    ``alpha``, ``beta`` have shape (S, C) (one row per draw) and already include the counts.
    Unlabeled items of a cell are correct ~ Binomial(N_c - n_c, theta_c). Returns (S, n_regions).
    Batched counts (``cells.n``, ``cells.correct`` of shape (B, C), one row per label draw) take
    ``alpha``, ``beta`` of shape (B, S, C) and return (B, S, n_regions).

    Examples
    --------
    >>> cells = cell_counts([.9, .8], [0, 0], 1, [True, True], [1, 0], bins=1)
    >>> pool_accuracy_draws(cells, np.ones((3, 1)), np.ones((3, 1)), seed=0).tolist()   # all labeled
    [[0.5], [0.5], [0.5]]
    """
    rng = as_generator(seed)
    theta = rng.beta(alpha, beta)
    n_lab, k_lab = np.asarray(cells.n), np.asarray(cells.correct)
    if theta.ndim > n_lab.ndim:          # a draws axis in front of the cells (batched counts: (B, S, C))
        n_lab, k_lab = n_lab[..., None, :], k_lab[..., None, :]
    unl = rng.binomial(cells.n_pool - n_lab, theta)
    total = (unl + k_lab).astype(float)
    member = sparse.csr_array((np.ones(cells.region.size), (np.asarray(cells.region), np.arange(cells.region.size))),
                              shape=(cells.n_regions, cells.region.size))     # region x cell, one 1 per cell
    lead = total.shape[:-1]
    out = (member @ total.reshape(-1, total.shape[-1]).T).T.reshape(*lead, cells.n_regions)
    n_region = core_counts(cells.region, cells.n_regions, np.asarray(cells.n_pool, dtype=float))
    with np.errstate(invalid="ignore"):
        return out / n_region


def confidence_prior_model(cells: CellCounts, region_offsets: bool = False):
    """PyMC model of the labeled cells' counts given the confidence-informed hierarchical prior.

    :func:`pbassess.pymc_models.estimation.confidence_prior_model` over ``cells``: ``offset``,
    ``slope``, ``log_strength`` with the hyperpriors of :data:`~pbassess.estimation.eb.HYPERPRIOR`;
    ``correct ~ BetaBinomial(n, mu tau, (1 - mu) tau)`` (the cells' accuracies integrated out).
    ``region_offsets`` adds ``region_offset`` (one per region, ``Normal(0, region_sd)``,
    non-centred) and ``region_sd ~ HalfNormal(1)`` (:mod:`pbassess.estimation.regional`).

    Parameters
    ----------
    cells : CellCounts
    region_offsets : bool
        Add a calibration offset per region.

    Returns
    -------
    pymc.Model

    Examples
    --------
    >>> cells = cell_counts([.9, .8, .6, .7], [0, 0, 1, 1], 2, [True] * 4, [1, 1, 0, 1], bins=1)
    >>> sorted(v.name for v in confidence_prior_model(cells).free_RVs)
    ['log_strength', 'offset', 'slope']
    """
    from pbassess.pymc_models.estimation import confidence_prior_model as build

    return build(cells.n, cells.correct, cells.mean_conf, cells.region, cells.n_regions, region_offsets=region_offsets)


def confidence_prior_spec(cells: CellCounts, *, region_offsets: bool = False, regions: Any = None,
                          item_ids: Any = None, seed: Any = None):
    """The :class:`~pbassess.pymc_models.estimation.ConfidencePriorSpec` of ``cells``, with its labeled items.

    The items are ``cells.item_cell`` (and ``item_ids``, their names) of the labeled items when
    the cells were counted from items, else the items the counts imply (``k`` correct and
    ``n - k`` wrong per cell, made-up ids), so the log-likelihood is always one value per
    labeled item.

    Parameters
    ----------
    cells : CellCounts
    region_offsets : bool
        Add a calibration offset per region.
    regions : sequence of str, optional
        Region names.
    item_ids : sequence, optional
        Names of the labeled items.
    seed : int or numpy.random.Generator, optional

    Returns
    -------
    ConfidencePriorSpec
        A :class:`~pbassess.inference.Spec` for :func:`pbassess.inference.fit`.

    Examples
    --------
    >>> cells = cell_counts([.9, .8, .6, .7], [0, 0, 1, 1], 2, [True, True, True, False], [1, 0, 0, 0], bins=1)
    >>> spec = confidence_prior_spec(cells, regions=["a", "b"], seed=0)
    >>> spec.observations.cell.tolist(), spec.observations.outcome.tolist(), spec.coords["region"]
    ([0, 0, 1], [1, 0, 0], ['a', 'b'])
    """
    from pbassess.inference import Observations
    from pbassess.pymc_models.estimation import ConfidencePriorSpec
    from pbassess.pymc_models.hierarchical import observations_from_counts

    names = [str(r) for r in (range(cells.n_regions) if regions is None else regions)]
    if cells.item_cell is not None and cells.item_correct is not None:
        item = np.arange(cells.item_cell.size) if item_ids is None else np.asarray(item_ids)
        observations = Observations.of(cells.item_cell, cells.item_correct, item)
    else:
        observations = observations_from_counts(cells.n, cells.correct)
    return ConfidencePriorSpec(cells.n_pool, cells.n, cells.correct, cells.mean_conf, cells.region, names,
                               region_offsets=region_offsets, observations=observations, seed=seed)


def bayes_estimate(cells: CellCounts, *, inference: str = "conjugate", ci_prob: float = CI_PROB,
                   draws: int | None = None, seed: Any = None,
                   sample_kwargs: dict[str, Any] | None = None, region_offsets: bool = True,
                   regions: Any = None, item_ids: Any = None) -> dict[str, Any]:
    """Posterior mean and equal-tailed credible interval of every region's pool accuracy.

    Parameters
    ----------
    cells : CellCounts
    inference : {"conjugate", "nuts"}
        Empirical-Bayes fast path (an approximation: Laplace / nested Laplace over the
        hyperparameters, exact given them) or NUTS through :func:`pbassess.inference.fit`
        (``"mcmc"`` is the old spelling of ``"nuts"``).
    ci_prob : float
        Mass of the equal-tailed credible interval (:func:`equal_tailed_interval`).
    draws : int, optional
        Posterior draws per chain, as in every fit (default 1000): NUTS keeps that many in each
        of its chains; the fast path, which has no chains, makes 4 x ``draws`` draws.
    seed : int or Generator, optional
    sample_kwargs : dict, optional
        ``pm.sample`` options (``nuts``).
    region_offsets : bool
        With labels in two or more regions, give each region its own calibration offset around
        the shared one, with a learned spread (:mod:`pbassess.estimation.regional`), so a region
        miscalibrated unlike the others is corrected by its labels. ``False`` (or a single
        labeled region) keeps one map for all.
    regions : sequence of str, optional
        Region names (NUTS: the ``region`` coordinate of the fit).
    item_ids : array_like, optional
        Names of the pool's items (NUTS: the ``item`` coordinate of the log-likelihood).

    Returns
    -------
    dict
        ``mean`` (R,), ``ci`` (R, 2), ``draws`` (S, R; ``None`` when many regions were finished in
        chunks to bound memory), ``prior`` (fitted offset, slope, strength:
        the EB values, or posterior means for ``nuts`` and for region offsets, which add
        ``region_sd`` and ``region_offsets``), ``idata`` and ``fit`` (the
        :class:`pbassess.inference.Fit`; ``nuts`` only, else None).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.uniform(0.6, 1.0, 2000)
    >>> correct = rng.random(2000) < conf
    >>> labeled = np.arange(2000) < 300
    >>> out = bayes_estimate(cell_counts(conf, np.zeros(2000, int), 1, labeled, correct), seed=0)
    >>> lo, hi = out["ci"][0]
    >>> wald = 2 * 1.96 * np.sqrt(correct[labeled].var() / 300)      # the classical width from the labels
    >>> bool(lo < correct.mean() < hi), bool(hi - lo < wald)
    (True, True)
    """
    from pbassess.inference import CHAINS, draws_per_chain

    rng = as_generator(seed)
    if inference not in ("conjugate", "mcmc", "nuts"):
        raise ConfigError(f"unknown inference {inference!r} (choose 'conjugate' or 'nuts')")
    per_chain = draws_per_chain(draws, sample_kwargs if inference != "conjugate" else None)
    total = CHAINS * per_chain
    if cells.n.sum() == 0:
        raise ConfigError("the Bayesian estimate needs at least one labeled item")
    idata = fitted = None
    regional = bool(region_offsets) and np.unique(cells.region[cells.n > 0]).size >= 2
    if inference == "conjugate" and regional:
        hyper = fit_regional_prior(cells.n, cells.correct, cells.mean_conf, cells.region, cells.n_regions,
                                   total, seed=rng)
        prior_of = hyper.beta_params                     # (mean_conf, region) of some cells -> prior (S, C)
        prior = hyper.summary()
    elif inference == "conjugate":
        fit = fit_confidence_prior(cells.n, cells.correct, cells.mean_conf)
        hyper = laplace_draws(fit, cells.n, cells.correct, cells.mean_conf, total, seed=rng)

        def prior_of(mean_conf, region):
            return hyper.beta_params(mean_conf)

        prior = {k: float(v) for k, v in fit.to_dict().items()}
    else:
        fitted = _nuts_fit(cells, regional, regions, item_ids, rng, sample_kwargs, per_chain)
        idata = fitted.idata
        post = idata["posterior"]
        acc = post["accuracy"].transpose("chain", "draw", "region").to_numpy().reshape(-1, cells.n_regions)
        prior = {k: float(post[k].mean()) for k in ("offset", "slope", "strength")}
        if regional:
            prior["region_sd"] = float(post["region_sd"].mean())
            prior["region_offsets"] = post["region_offset"].mean(("chain", "draw")).to_numpy().round(4).tolist()
        return {"mean": acc.mean(axis=0), "ci": equal_tailed_interval(acc, ci_prob, axis=0), "draws": acc, "prior": prior,
                "idata": idata, "fit": fitted}
    mean, ci, acc = _region_summaries(cells, prior_of, total, ci_prob, rng)
    return {"mean": mean, "ci": ci, "draws": acc, "prior": prior, "idata": idata, "fit": fitted}


#: Most draws x cells held at once by the fast path's finish (16 bytes each, in two arrays); more regions go in chunks.
_CHUNK_ELEMENTS = 4_000_000


def _region_summaries(cells: CellCounts, prior_of: Any, total: int, ci_prob: float, rng: np.random.Generator):
    """Posterior mean, equal-tailed interval and (when held at once) the draws of each region's pool accuracy.

    ``prior_of(mean_conf, region)`` gives the prior Beta parameters (S, C') of a subset of the
    cells under every hyperparameter draw. With many regions (``estimate --by`` over thousands of
    groups) the draws x cells arrays would not fit in memory, so the regions are finished in
    chunks of whole regions of at most :data:`_CHUNK_ELEMENTS` draws x cells; a single chunk (the
    usual case) draws exactly as one call of :func:`pool_accuracy_draws` over all cells.
    """
    n_cells = cells.region.size
    if total * n_cells <= _CHUNK_ELEMENTS:
        a0, b0 = prior_of(cells.mean_conf, cells.region)
        acc = pool_accuracy_draws(cells, a0 + cells.correct, b0 + cells.n - cells.correct, seed=rng)
        return acc.mean(axis=0), equal_tailed_interval(acc, ci_prob, axis=0), acc
    mean = np.full(cells.n_regions, np.nan)
    ci = np.full((cells.n_regions, 2), np.nan)
    order = np.argsort(cells.region, kind="stable")
    starts = np.searchsorted(cells.region[order], np.arange(cells.n_regions + 1))
    per_chunk = max(1, _CHUNK_ELEMENTS // total)
    first = 0
    while first < cells.n_regions:
        last = first + 1                               # whole regions, at least one, up to per_chunk cells
        while last < cells.n_regions and starts[last + 1] - starts[first] <= per_chunk:
            last += 1
        sel = order[starts[first]:starts[last]]
        if sel.size:
            sub = CellCounts(region=cells.region[sel] - first, n_pool=cells.n_pool[sel], n=cells.n[sel],
                             correct=cells.correct[sel], mean_conf=cells.mean_conf[sel], n_regions=last - first)
            a0, b0 = prior_of(cells.mean_conf[sel], cells.region[sel])
            acc = pool_accuracy_draws(sub, a0 + sub.correct, b0 + sub.n - sub.correct, seed=rng)
            mean[first:last] = acc.mean(axis=0)
            ci[first:last] = equal_tailed_interval(acc, ci_prob, axis=0)
        first = last
    return mean, ci, None


def _nuts_fit(cells: CellCounts, regional: bool, regions: Any, item_ids: Any, rng: np.random.Generator,
              sample_kwargs: dict[str, Any] | None, per_chain: int):
    """NUTS on the cells' :class:`~pbassess.pymc_models.estimation.ConfidencePriorSpec` through the fit layer."""
    from pbassess.inference import fit

    spec = confidence_prior_spec(cells, region_offsets=regional, regions=regions, item_ids=item_ids,
                                 seed=int(rng.integers(2**31 - 1)))
    return fit(spec, inference="nuts", draws=per_chain, seed=rng, sample_kwargs=sample_kwargs)


def bayes_estimate_batch(cells: CellCounts, n: Any, correct: Any, *, ci_prob: float = CI_PROB,
                         draws: int | None = None, seed: Any = None) -> dict[str, np.ndarray]:
    """The conjugate :func:`bayes_estimate` of many label draws of one pool at once.

    Row b gives the same numbers as ``bayes_estimate(cells_b, draws=draws, seed=seed[b],
    region_offsets=False)`` with ``cells_b`` the pool's cells holding that row's counts (one
    shared confidence-to-accuracy map; the same as the default for a single region, e.g. the
    whole pool in confidence bins as in ``benchmarks/estimation.py``): the deterministic parts (the
    empirical-Bayes Newton fits and the Laplace covariances) run batched over all rows, the
    random draws (hyperparameters, cell accuracies, unlabeled items) per row from its own stream.

    Parameters
    ----------
    cells : CellCounts
        The pool's cells (``n_pool``, ``mean_conf``, ``region``); its own labeled counts are ignored.
    n, correct : array_like, shape (B, C)
        Labeled and correct labeled items of every cell in each of B label draws.
    ci_prob, draws
        As in :func:`bayes_estimate`.
    seed : int, Generator or sequence of them, optional
        One stream for all rows in turn, or one per row (e.g. each label draw's own generator).

    Returns
    -------
    dict
        ``mean`` (B, R) and ``ci`` (B, R, 2).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.uniform(0.6, 1.0, 2000); correct = rng.random(2000) < conf
    >>> cells = cell_counts(conf, np.zeros(2000, int), 1, np.arange(2000) < 300, correct)
    >>> one = bayes_estimate(cells, seed=7)
    >>> many = bayes_estimate_batch(cells, np.stack([cells.n] * 3), np.stack([cells.correct] * 3), seed=[7, 8, 9])
    >>> many["ci"].shape, bool(np.allclose(many["ci"][0], one["ci"]))
    ((3, 1, 2), True)
    """
    n_arr = np.atleast_2d(np.asarray(n, dtype=np.int64))
    k_arr = np.atleast_2d(np.asarray(correct, dtype=np.int64))
    if n_arr.shape != k_arr.shape or n_arr.shape[-1] != cells.n_pool.size:
        raise ConfigError(f"counts of shape {n_arr.shape} and {k_arr.shape} do not match {cells.n_pool.size} cells")
    if (n_arr.sum(axis=1) == 0).any():
        raise ConfigError("the Bayesian estimate needs at least one labeled item in every label draw")
    rows = n_arr.shape[0]
    if isinstance(seed, (list, tuple)):
        if len(seed) != rows:
            raise ConfigError(f"{len(seed)} seeds for {rows} label draws")
        rngs = [as_generator(s) for s in seed]
    else:
        rngs = [as_generator(seed)] * rows
    from pbassess.inference import CHAINS, draws_per_chain

    total = CHAINS * draws_per_chain(draws)
    fit = fit_confidence_prior(n_arr, k_arr, cells.mean_conf)
    mode = np.stack([fit.offset, fit.slope, np.log(fit.strength)], axis=-1)
    x = np.broadcast_to(logit_confidence(cells.mean_conf), n_arr.shape)
    factor = np.linalg.cholesky(laplace_covariance(mode, n_arr.astype(float), k_arr.astype(float), x))
    mean = np.empty((rows, cells.n_regions))
    ci = np.empty((rows, cells.n_regions, 2))
    for b in range(rows):
        z = bounded_normal_draws(mode[b], factor[b], total, rngs[b])
        a0, b0 = ConfidencePrior(z[:, 0], z[:, 1], np.exp(z[:, 2])).beta_params(cells.mean_conf)
        row = CellCounts(region=cells.region, n_pool=cells.n_pool, n=n_arr[b], correct=k_arr[b],
                         mean_conf=cells.mean_conf, n_regions=cells.n_regions)
        acc = pool_accuracy_draws(row, a0 + k_arr[b], b0 + n_arr[b] - k_arr[b], seed=rngs[b])
        mean[b] = acc.mean(axis=0)
        ci[b] = equal_tailed_interval(acc, ci_prob, axis=0)
    return {"mean": mean, "ci": ci}
