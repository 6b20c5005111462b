"""Active exploration of an accuracy surface: which arm to label next.

Each round fits the surface on the labels revealed so far, picks a batch of arms among those
with unlabeled pool items, and reveals one item per chosen arm (the unlabeled item with the
highest P(arm | x); with hard attributes, a random unlabeled item of the arm). Strategies:

* ``variance``: the arms of highest posterior variance (estimation; Piratla et al. 2021);
* ``thompson``: the arms with the lowest accuracy in one posterior draw (find the worst arms);
* ``bayes-ucb``: the arms with the lowest posterior quantile 1 / (t + 1) at round t;
* ``random``: uniformly random unlabeled items (the baseline).

:func:`explore_surface` returns the error curves (``surface_errors`` of each round's estimate
against the truth) as an :class:`xarray.Dataset` with dims ``seed`` and ``round``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from pbassess.errors import ConfigError, DataError
from pbassess.stats.sampling import as_generator
from pbassess.surface.arms import count_arms
from pbassess.surface.evaluate import surface_errors, truth_from_pool
from pbassess.surface.fit import fit_surface

__all__ = ["STRATEGIES", "choose_arms", "explore_surface"]

STRATEGIES = ("variance", "thompson", "bayes-ucb", "random")
METRICS = ("macro_mse", "worst_mse", "micro_mse", "rare_mse")


def choose_arms(result: Any, available: np.ndarray, batch_size: int, strategy: str, *, round_index: int = 1,
                seed: Any = None) -> np.ndarray:
    """Indices of the arms to label next among ``available`` (a boolean mask over arms).

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
    if strategy == "variance":
        order = np.argsort(-result.var[idx], kind="stable")
    elif strategy in ("thompson", "bayes-ucb"):
        if "accuracy" not in result.posterior:
            raise ConfigError(f"{strategy} exploration needs posterior draws of the surface")
        draws = result.draws("accuracy")[:, idx]
        if strategy == "thompson":
            score = draws[rng.integers(draws.shape[0])]
        else:
            score = np.quantile(draws, 1.0 / (round_index + 1.0), axis=0)
        order = np.argsort(score, kind="stable")
    elif strategy == "random":
        order = rng.permutation(idx.size)
    else:
        raise ConfigError(f"unknown exploration strategy {strategy!r} (choose from {', '.join(STRATEGIES)})")
    return idx[order[:b]]


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
             min_support: float, k: int) -> tuple[list[int], list[dict[str, float]]]:
    full = count_arms(pool, attributes, continuous=fit_kwargs.get("continuous", ()))
    item_arm = full.item_arm
    correct = (pool.predicted == pool.labels).astype(float)
    hidden = np.ones(pool.n_items, dtype=bool)
    start = rng.choice(pool.n_items, size=min(initial, pool.n_items), replace=False)
    hidden[start] = False
    sizes, curves = [], []
    rounds = 0
    kwargs = {k_: v for k_, v in fit_kwargs.items() if k_ != "continuous"}
    while True:
        shown = ~hidden
        n = np.bincount(item_arm[shown], minlength=full.n_arms).astype(float)
        c = np.bincount(item_arm[shown], weights=correct[shown], minlength=full.n_arms)
        if n.sum() == 0:  # nothing labeled yet: reveal a random batch first
            cand = np.flatnonzero(hidden)
            hidden[rng.choice(cand, size=min(batch_size, budget, cand.size), replace=False)] = False
            continue
        result = fit_surface(full.with_counts(n, c), estimator=estimator, seed=rng, **kwargs)
        sizes.append(int(shown.sum()))
        curves.append(surface_errors(result.mean, truth, support, min_support=min_support, k=k,
                                     truth_is_empirical=False))
        if shown.sum() >= budget or not hidden.any():
            return sizes, curves
        rounds += 1
        available = np.bincount(item_arm[hidden], minlength=full.n_arms) > 0
        want = min(batch_size, budget - int(shown.sum()))
        if strategy == "random":
            cand = np.flatnonzero(hidden)
            hidden[rng.choice(cand, size=min(want, cand.size), replace=False)] = False
        else:  # a batch larger than the available arms cycles through them again
            done = 0
            while done < want and available.any():
                arms = choose_arms(result, available, want - done, strategy, round_index=rounds, seed=rng)
                done += len(_reveal(arms, item_arm, hidden, rng))
                available = np.bincount(item_arm[hidden], minlength=full.n_arms) > 0


def explore_surface(preds: Any, attributes: Sequence[str], *, estimator: str = "beta-i", strategy: str = "variance",
                    budget: int = 200, batch_size: int = 10, initial_labels: int = 0, seeds: Sequence[int] = (0,),
                    truth: Any = None, min_support: float = 0.0, k: int = 50,
                    fit_kwargs: Mapping[str, Any] | None = None) -> xr.Dataset:
    """Run the exploration loop for each seed and return the error curves.

    Parameters
    ----------
    preds : Predictions
        The pool with *all* labels (the oracle); the loop hides them and reveals the chosen ones.
    truth : array (A,), optional
        True arm accuracy in the order of :func:`count_arms` over ``attributes``; default: the
        all-labels accuracy of each arm.

    Returns
    -------
    xarray.Dataset
        ``macro_mse``, ``worst_mse``, ``micro_mse``, ``rare_mse`` and ``n_labels`` with dims
        (``seed``, ``round``).

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
    runs = [_one_run(preds, attributes, tru, full.pool_n, estimator=estimator, strategy=strategy, budget=budget,
                     batch_size=batch_size, initial=initial_labels, rng=as_generator(s), fit_kwargs=fit_kwargs,
                     min_support=min_support, k=k) for s in seeds]
    length = max(len(sizes) for sizes, _ in runs)
    data = {m: np.full((len(runs), length), np.nan) for m in METRICS}
    n_labels = np.full((len(runs), length), -1, dtype=np.int64)
    for i, (sizes, curves) in enumerate(runs):
        n_labels[i, : len(sizes)] = sizes
        for m in METRICS:
            data[m][i, : len(curves)] = [c[m] for c in curves]
    ds = xr.Dataset({m: (("seed", "round"), v) for m, v in data.items()},
                    coords={"seed": list(seeds), "round": np.arange(length)})
    ds["n_labels"] = (("seed", "round"), n_labels)
    ds.attrs = {"estimator": estimator, "strategy": strategy, "budget": budget, "batch_size": batch_size}
    return ds
