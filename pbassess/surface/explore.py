"""Active exploration of an accuracy surface: which arm to label next.

Each round fits the surface on the labels revealed so far, picks a batch of arms among those
with unlabeled pool items, and reveals one item per chosen arm (the unlabeled item with the
highest P(arm | x); with hard attributes, a random unlabeled item of the arm). Strategies:

* ``variance``: the arms of highest posterior variance (estimation; Piratla et al. 2021);
* ``thompson``: the arms with the lowest accuracy in one posterior draw (find the worst arms);
* ``bayes-ucb``: the arms with the lowest posterior quantile 1 / (t + 1) at round t;
* ``variance-reduction``: the arms whose next label most reduces the summed posterior variance of
  all arms (expected variance reduction, Cohn's active learning criterion, from the posterior
  covariance between arms: a label in arm a takes Cov(b, a)^2 / (Var a + mu_a (1 - mu_a)) off
  arm b's variance); picked greedily, the covariance conditioned on each pick in turn, so a
  batch does not spend its labels on arms that answer the same question;
* ``design``: the labels the optimal design adds to those placed (the allocation of least expected
  macro MSE under the anchored surface linearised at the posterior mean, with the residual scales
  the anchored fit learned, or the model's prior scales for another estimator:
  :mod:`pbassess.surface.design_bound`); an arm may get several labels of a batch. It
  needs the model's confidence (the anchored surface's calibration map);
* ``random``: uniformly random unlabeled items (the baseline).

With nutpie (the default sampler) and a NUTS estimator the loop builds and compiles the model
once for all rounds and seeds and swaps each round's counts into it
(:class:`pbassess.surface.refit.SurfaceRefitter`), starting the chains at the previous round's
posterior mean: on a 64-arm synthetic surface (``benchmarks/surface_explore.py``, additive model,
2 x 300 draws) a round took 0.5 s against 18.7 s when the model was rebuilt and compiled every
round, with the same final MSE. ``refit=False`` rebuilds every round; those refits are
warm-started too (``warm_start=True``; ``"draw"``: from a posterior draw; ``False``: cold): each
round's sampler starts at the previous round's posterior mean of the free variables, without
jitter, and with nutpie at the previous adapted step size (:func:`warm_start_kwargs`). Neither
nutpie nor ``pm.sample`` takes an initial mass matrix, so that is adapted afresh and the tuning
is kept.

:func:`explore_surface` returns the error curves (``surface_errors`` of each round's estimate
against the truth) as an :class:`xarray.Dataset` with dims ``seed`` and ``round``.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from pbassess.constants import CI_PROB
from pbassess.counting import cell_counts
from pbassess.errors import ConfigError, DataError
from pbassess.stats.sampling import as_generator
from pbassess.surface.arms import count_arms
from pbassess.surface.design_bound import (
    anchored_linearisation,
    next_labels,
    posterior_block_scales,
)
from pbassess.surface.evaluate import surface_errors, truth_from_pool
from pbassess.surface.fit import fit_surface

__all__ = ["STRATEGIES", "choose_arms", "explore_surface", "variance_reduction_order", "warm_start_kwargs"]

STRATEGIES = ("variance", "variance-reduction", "design", "thompson", "bayes-ucb", "random")
METRICS = ("macro_mse", "worst_mse", "micro_mse", "rare_mse")
#: A warm-started refit tunes for this fraction of the cold fit's tuning steps (at least 50); see
#: the module docstring for why it is 1 (the mass matrix cannot be carried over).
WARM_TUNE_FRACTION = 1.0


def warm_start_kwargs(result: Any, sample_kwargs: Mapping[str, Any] | None = None, *,
                      tune_fraction: float = WARM_TUNE_FRACTION, point: str = "mean") -> dict[str, Any]:
    """``sample_kwargs`` that start the next NUTS fit from ``result``'s posterior.

    ``initvals``: the posterior mean of every sampled variable (``point="mean"``; ``"draw"``: the
    last draw of the first chain, a point of the typical set) (:func:`fit_surface` keeps the
    model's free variables among them); no initial jitter (nutpie: ``jitter_rvs`` empty; PyMC:
    ``init="adapt_diag"``); with nutpie the initial step size is the previous run's median adapted
    step size (``initial_step``; PyMC's sampler gets none: its step size would be tuned for the
    previous mass matrix, not the fresh one); tuning is ``tune_fraction`` of the cold fit's. A
    result without MCMC draws gives ``sample_kwargs`` unchanged.

    Examples
    --------
    >>> from pbassess.surface import ArmCounts, fit_surface
    >>> warm_start_kwargs(fit_surface(ArmCounts.from_arrays([3], [2]), estimator="beta-i"), {"draws": 100})
    {'draws': 100}
    """
    from pbassess.inference.sampling import merge_sample_kwargs
    from pbassess.surface.fit import SURFACE_SAMPLE_KWARGS

    kwargs = dict(sample_kwargs or {})
    idata = getattr(result, "idata", None)
    if getattr(result, "engine", None) != "nuts" or idata is None or "posterior" not in idata.children:
        return kwargs
    post = idata["posterior"]
    if point not in ("mean", "draw"):
        raise ConfigError(f"unknown warm-start point {point!r} (choose mean or draw)")
    pick = (lambda da: da.mean(("chain", "draw"))) if point == "mean" else (lambda da: da.isel(chain=0, draw=-1))
    init = {str(name): np.asarray(pick(post[name]).values, float) for name in post.data_vars}
    tune = int(kwargs.get("tune", SURFACE_SAMPLE_KWARGS["tune"]))
    kwargs.update({"initvals": init, "tune": max(50, int(round(tune * tune_fraction)))})
    step = None
    if "sample_stats" in idata.children and "step_size" in idata["sample_stats"].data_vars:
        step = float(np.nanmedian(idata["sample_stats"]["step_size"].values))
    sampler = merge_sample_kwargs({k: v for k, v in kwargs.items() if k in ("nuts_sampler", "sampler")},
                                  progressbar=False).get("nuts_sampler") or "pymc"
    nuts = dict(kwargs.get("nuts") or {})
    if sampler == "nutpie":
        kwargs["compile_kwargs"] = {**dict(kwargs.get("compile_kwargs") or {}), "jitter_rvs": set()}
        if step is not None and np.isfinite(step) and step > 0:
            nuts["initial_step"] = step
    else:
        kwargs["init"] = "adapt_diag"
    if nuts:
        kwargs["nuts"] = nuts
    return kwargs


def choose_arms(result: Any, available: np.ndarray, batch_size: int, strategy: str, *, round_index: int = 1,
                seed: Any = None, min_support: float = 0.0) -> np.ndarray:
    """Indices of the arms to label next among ``available`` (a boolean mask over arms).

    ``min_support``: the ``design`` strategy minimises the macro MSE of the arms with at least this
    many pool items (those the surface is scored on); the other strategies ignore it.

    Examples
    --------
    >>> from pbassess.surface import ArmCounts, fit_surface
    >>> r = fit_surface(ArmCounts.from_arrays([50, 0, 1], [40, 0, 1]), estimator="beta-i", seed=0)
    >>> choose_arms(r, np.array([True, True, True]), 1, "variance").tolist()
    [1]
    """
    idx = np.flatnonzero(available)
    if idx.size == 0:
        return idx
    b = min(batch_size, idx.size)
    rng = as_generator(seed)
    if strategy in ("thompson", "bayes-ucb", "variance-reduction") and "accuracy" not in result.posterior:
        raise ConfigError(f"{strategy} exploration needs posterior draws of the surface")
    if strategy == "variance":
        order = np.argsort(-result.var[idx], kind="stable")
    elif strategy in ("thompson", "bayes-ucb"):
        draws = result.draws("accuracy")[:, idx]
        if strategy == "thompson":
            score = draws[rng.integers(draws.shape[0])]
        else:
            score = np.quantile(draws, 1.0 / (round_index + 1.0), axis=0)
        order = np.argsort(score, kind="stable")
    elif strategy == "variance-reduction":
        return idx[variance_reduction_order(result.draws("accuracy"), idx, b)]
    elif strategy == "design":  # the optimal design's next labels, linearised at the posterior mean
        scales = posterior_block_scales(result.idata) if result.engine == "nuts" else None
        coding = ((result.options or {}).get("model_options") or {}).get("coding", "contrast")  # the fit's design
        design = anchored_linearisation(result.arms, result.mean, prior="model" if scales is None else "posterior",
                                        block_scales=scales, min_support=min_support, coding=coding)
        return next_labels(design, result.arms.n, batch_size, available=available)  # an arm may recur
    elif strategy == "random":
        order = rng.permutation(idx.size)
    else:
        raise ConfigError(f"unknown exploration strategy {strategy!r} (choose from {', '.join(STRATEGIES)})")
    return idx[order[:b]]


def variance_reduction_order(draws: np.ndarray, candidates: np.ndarray, batch_size: int) -> np.ndarray:
    """Positions in ``candidates`` of the ``batch_size`` arms whose labels most reduce the surface's variance.

    ``draws`` (S, A) are posterior draws of every arm's accuracy. One label in arm a is a
    Bernoulli(mu_a) observation of it: in the linear-Gaussian approximation it takes
    Cov(b, a)^2 / (Var a + mu_a (1 - mu_a)) off the variance of every arm b. The arm with the
    largest total reduction is picked, the covariance is conditioned on its label (a rank-one
    update), and so on until the batch is full.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> shared = rng.normal(0.0, 0.05, size=(400, 1))
    >>> draws = 0.8 + np.hstack([shared, shared, shared, rng.normal(0.0, 0.12, size=(400, 1))])
    >>> variance_reduction_order(draws, np.arange(4), 2).tolist()  # the lone uncertain arm, then one of three linked ones
    [3, 0]
    """
    d = np.asarray(draws, float)
    mean = d.mean(axis=0)
    dev = d - mean
    cand = np.asarray(candidates, dtype=np.int64)
    # only the candidates' columns of the covariance matter (the gains and the rank-one updates read no other)
    cov = dev.T @ dev[:, cand] / max(d.shape[0] - 1, 1)  # (A, C): Cov(b, candidate)
    noise = np.clip(mean[cand] * (1.0 - mean[cand]), 1e-6, None)
    picked: list[int] = []
    free = np.ones(cand.size, dtype=bool)
    for _ in range(min(batch_size, cand.size)):
        own = cov[cand, np.arange(cand.size)]  # Var of each candidate
        gain = (cov * cov).sum(axis=0) / (own + noise)
        gain[~free] = -np.inf
        j = int(np.argmax(gain))
        picked.append(j)
        free[j] = False
        col = cov[:, j].copy()  # Cov(b, a) for the picked arm a
        cov = cov - np.outer(col, cov[cand[j]]) / (own[j] + noise[j])
    return np.asarray(picked, dtype=np.int64)


def _reveal(arm_ids: np.ndarray, item_arm: np.ndarray, hidden: np.ndarray, rng, arm_probs: Any = None) -> list[int]:
    """One hidden item per chosen arm: the most probable member (soft) or a random member (hard)."""
    chosen = []
    for a in arm_ids:
        if arm_probs is not None:
            cand = np.flatnonzero(hidden)
            if cand.size == 0:
                break
            item = int(cand[np.argmax(np.asarray(arm_probs)[cand, a])])
        else:
            cand = np.flatnonzero(hidden & (item_arm == a))
            if cand.size == 0:
                continue
            item = int(rng.choice(cand))
        hidden[item] = False
        chosen.append(item)
    return chosen


def _one_run(pool: Any, attributes: Sequence[str], truth: np.ndarray, support: np.ndarray, *, estimator: str,
             strategy: str, budget: int, batch_size: int, initial: int, rng, fit_kwargs: Mapping[str, Any],
             min_support: float, k: int, warm_start: bool | str = True,
             refitter: Any = None) -> tuple[list[int], list[dict[str, float]]]:
    full = count_arms(pool, attributes, continuous=fit_kwargs.get("continuous", ()))
    item_arm = full.item_arm
    correct = (pool.predicted == pool.labels).astype(float)
    hidden = np.ones(pool.n_items, dtype=bool)
    start = rng.choice(pool.n_items, size=min(initial, pool.n_items), replace=False)
    hidden[start] = False
    sizes, curves = [], []
    rounds = 0
    kwargs = {k_: v for k_, v in fit_kwargs.items() if k_ != "continuous"}
    previous = None
    if refitter is not None:
        refitter.reset()
    while True:
        shown = ~hidden
        n = cell_counts(item_arm[shown], full.n_arms).astype(float)
        c = cell_counts(item_arm[shown], full.n_arms, correct[shown]).astype(float)
        if n.sum() == 0:  # nothing labeled yet: reveal a random batch first
            cand = np.flatnonzero(hidden)
            hidden[rng.choice(cand, size=min(batch_size, budget, cand.size), replace=False)] = False
            continue
        if refitter is not None:
            result = refitter.fit(n, c, seed=rng, warm_start=bool(warm_start))
        else:
            round_kwargs = dict(kwargs)
            if warm_start and previous is not None:
                point = warm_start if isinstance(warm_start, str) else "mean"
                round_kwargs["sample_kwargs"] = warm_start_kwargs(previous, kwargs.get("sample_kwargs"), point=point)
            result = fit_surface(full.with_counts(n, c), estimator=estimator, seed=rng, **round_kwargs)
        previous = result if result.engine == "nuts" else None
        sizes.append(int(shown.sum()))
        curves.append({**surface_errors(result.mean, truth, support, min_support=min_support, k=k,
                                        truth_is_empirical=False), "fit_seconds": float(result.fit_seconds or 0.0)})
        if shown.sum() >= budget or not hidden.any():
            return sizes, curves
        rounds += 1
        available = cell_counts(item_arm[hidden], full.n_arms) > 0
        want = min(batch_size, budget - int(shown.sum()))
        if strategy == "random":
            cand = np.flatnonzero(hidden)
            hidden[rng.choice(cand, size=min(want, cand.size), replace=False)] = False
        else:  # a batch larger than the available arms cycles through them again
            done = 0
            while done < want and available.any():
                arms = choose_arms(result, available, want - done, strategy, round_index=rounds, seed=rng,
                                   min_support=min_support)
                done += len(_reveal(arms, item_arm, hidden, rng))
                available = cell_counts(item_arm[hidden], full.n_arms) > 0


def _refitter(full: Any, estimator: str, fit_kwargs: Mapping[str, Any], warm_start: bool | str, seeds: Sequence[int]):
    """A compiled-once model for the loop, when the fits are NUTS with nutpie (else None)."""
    from pbassess.inference.sampling import merge_sample_kwargs
    from pbassess.surface.refit import REFIT_ESTIMATORS, SurfaceRefitter

    sample_kwargs = dict(fit_kwargs.get("sample_kwargs") or {})
    sampler = merge_sample_kwargs({k: v for k, v in sample_kwargs.items() if k in ("nuts_sampler", "sampler")},
                                  progressbar=False).get("nuts_sampler")
    if (estimator not in REFIT_ESTIMATORS or fit_kwargs.get("inference") not in (None, "nuts")
            or sampler != "nutpie" or warm_start == "draw"):
        return None
    model_seed = as_generator(seeds[0] if len(seeds) else 0)
    return SurfaceRefitter(full, estimator, covariate=fit_kwargs.get("covariate"),
                           model_options=fit_kwargs.get("model_options"), sample_kwargs=sample_kwargs,
                           seed=model_seed, ci_prob=fit_kwargs.get("ci_prob", CI_PROB))


def explore_surface(preds: Any, attributes: Sequence[str], *, estimator: str = "beta-i", strategy: str = "variance",
                    budget: int = 200, batch_size: int = 10, initial_labels: int = 0, seeds: Sequence[int] = (0,),
                    truth: Any = None, min_support: float = 0.0, k: int = 50,
                    fit_kwargs: Mapping[str, Any] | None = None, warm_start: bool | str = True,
                    refit: bool = True, progress: bool | None = None) -> xr.Dataset:
    """Run the exploration loop for each seed and return the error curves.

    Parameters
    ----------
    preds : Predictions
        The pool with *all* labels (the oracle); the loop hides them and reveals the chosen ones.
    truth : array (A,), optional
        True arm accuracy in the order of :func:`count_arms` over ``attributes``; default: the
        all-labels accuracy of each arm.
    warm_start : bool or {"mean", "draw"}
        Start each round's NUTS refit from the previous round's posterior (:func:`warm_start_kwargs`;
        True means its posterior mean, ``"draw"`` one of its draws); see the module docstring for
        the measured times.
    refit : bool
        With a NUTS estimator and nutpie, build and compile the model once for all rounds and
        seeds and swap each round's counts in (:class:`pbassess.surface.refit.SurfaceRefitter`;
        warm start from the previous posterior mean). False: build and compile every round.
    progress : bool, optional
        A progress bar over the runs (seeds); ``None``: when a person is watching
        (:func:`pbassess.inference.progress_wanted`: a terminal or Jupyter, never under ``--json``).

    Returns
    -------
    xarray.Dataset
        ``macro_mse``, ``worst_mse``, ``micro_mse``, ``rare_mse``, ``fit_seconds`` and ``n_labels``
        with dims (``seed``, ``round``).

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_binary_scores([.9, .8, .3, .7, .6, .4], [1, 0, 0, 1, 1, 1],
    ...                                    groups={"g": [0, 0, 1, 1, 2, 2]})
    >>> ds = explore_surface(p, ["g"], budget=4, batch_size=2, seeds=[0, 1])
    >>> ds["n_labels"].values.tolist()
    [[2, 4], [2, 4]]
    """
    if strategy not in STRATEGIES:
        raise ConfigError(f"unknown exploration strategy {strategy!r} (choose from {', '.join(STRATEGIES)})")
    if budget < 1 or batch_size < 1:
        raise ConfigError(f"budget and batch size must be positive, got {budget} and {batch_size}")
    if (preds.labels < 0).any():
        raise DataError("exploration simulates labeling: every pool item needs its (hidden) label")
    fit_kwargs = dict(fit_kwargs or {})
    full = count_arms(preds, attributes, continuous=fit_kwargs.get("continuous", ()))
    tru = truth_from_pool(full) if truth is None else np.asarray(truth, float)
    if tru.shape != (full.n_arms,):
        raise DataError(f"truth has {tru.size} values for {full.n_arms} arms")
    if strategy == "design":  # refuse a surface too large for the design before any fit
        anchored_linearisation(full, np.mean(full.anchor_points(), axis=1)).check_size()
    refitter = _refitter(full, estimator, fit_kwargs, warm_start, seeds) if refit else None
    from pbassess.inference import progress_wanted

    runs_of: Any = seeds
    if progress_wanted() if progress is None else progress:  # a terminal's stderr or a Jupyter widget
        from tqdm.auto import tqdm

        runs_of = tqdm(seeds, unit="run", desc=f"exploring ({estimator})", file=sys.stderr)
    runs = [_one_run(preds, attributes, tru, full.pool_n, estimator=estimator, strategy=strategy, budget=budget,
                     batch_size=batch_size, initial=initial_labels, rng=as_generator(s), fit_kwargs=fit_kwargs,
                     min_support=min_support, k=k, warm_start=warm_start, refitter=refitter) for s in runs_of]
    length = max(len(sizes) for sizes, _ in runs)
    data = {m: np.full((len(runs), length), np.nan) for m in (*METRICS, "fit_seconds")}
    n_labels = np.full((len(runs), length), -1, dtype=np.int64)
    for i, (sizes, curves) in enumerate(runs):
        n_labels[i, : len(sizes)] = sizes
        for m in data:
            data[m][i, : len(curves)] = [c[m] for c in curves]
    ds = xr.Dataset({m: (("seed", "round"), v) for m, v in data.items()},
                    coords={"seed": list(seeds), "round": np.arange(length)})
    ds["n_labels"] = (("seed", "round"), n_labels)
    ds.attrs = {"estimator": estimator, "strategy": strategy, "budget": budget, "batch_size": batch_size,
                "warm_start": str(warm_start), "refit": int(refitter is not None)}
    return ds
