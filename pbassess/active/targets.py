"""Targets of active assessment: what is being looked for, as a conjugate model per arm.

The arms are the predicted classes that occur in the pool (a class the model never predicts
cannot be labeled and is left out). Each target turns a fully labeled pool into
:class:`~pbassess.active.engine.EngineInputs`: how a label updates the arm's posterior, the
prior, and the ground truth from all labels of the pool. The kernel always *minimises* a
score, so "most" targets are stated as "least" of a transformed score.

==========================  ==========================================================  =============
target                      model per predicted class k                                 arm score
==========================  ==========================================================  =============
``least-accurate``          Beta(a_k, b_k) for the accuracy theta_k (Beta-binomial)     theta_k (min)
``most-accurate``           same                                                        theta_k (max)
``most-miscalibrated``      one Beta per confidence bin *inside* class k                 classwise ECE
                            (bins of the class's own items), ECE_k = sum_b w_kb |theta_kb - s_kb|   (max)
``highest-cost``            Dirichlet over the true class (the label's outcome is the    expected cost
                            true class) with a cost matrix; true classes of equal cost   (max)
                            in row k are merged into one cell (exact aggregation)
``estimation``              Beta per class; index strategies label where the posterior  -
                            variance of theta_k drops most; evaluated as least-accurate
==========================  ==========================================================  =============

Priors: ``uniform`` is Beta(pc/2, pc/2) (per bin for ECE; for the cost Dirichlet the
project's convention of :func:`pbassess.stats.cost.dirichlet_prior`, pc/K on every true
class); ``informed`` is Beta(pc s, pc (1 - s)) with s the model's mean confidence in the
class (or bin); for the cost Dirichlet pc times the class's mean probability vector when
full probabilities are known (:func:`pbassess.stats.cost.dirichlet_prior`), and in top-1
form pc s on the predicted class and pc (1 - s) spread evenly over the others. Cost matrices
are checked by :func:`pbassess.stats.cost.validate_cost_matrix`; the paper's CIFAR-100
matrices are :func:`pbassess.stats.cost.people_cost_matrix` and
:func:`pbassess.stats.cost.superclass_cost_matrix`. With a 0-1 (or any two-level, equal-across-rows) cost matrix
the expected cost is a monotone function of one Beta, and the target runs on the fast Beta
path of the engine.

``eb`` (empirical Bayes, for the Beta-scored targets: least / most accurate, estimation and
two-level costs) starts from the uniform prior and, every 100 labels, refits one shared
Beta(mu tau, (1 - mu) tau) across the classes from the counts so far (mu the pooled rate, tau
from the method of moments: the spread of the classes' rates beyond binomial noise, clipped
to [1, 1000]); every arm's posterior is that prior plus its own counts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.active.engine import KIND_BETA, KIND_DIRICHLET, KIND_ECE, EngineInputs
from pbassess.constants import DEFAULT_BINS, DEFAULT_PSEUDOCOUNT
from pbassess.data.predictions import Predictions
from pbassess.errors import ConfigError, DataError
from pbassess.stats import beta_prior, bin_edges, bin_index

__all__ = ["PRIORS", "TARGETS", "TargetInfo", "build_inputs", "target_info", "true_metric"]

#: Target names (CLI ``--target``).
TARGETS: tuple[str, ...] = ("least-accurate", "most-accurate", "most-miscalibrated", "highest-cost", "estimation")

#: Prior names (``eb``: empirical Bayes, Beta-scored targets only).
PRIORS: tuple[str, ...] = ("uniform", "informed", "eb")


class TargetInfo(dict):
    """Descriptive facts of a target (metric name, direction) kept with results."""


def target_info(target: str) -> TargetInfo:
    """Metric name and direction of a target.

    Examples
    --------
    >>> target_info("most-miscalibrated")["metric"]
    'classwise ECE'
    """
    table = {
        "least-accurate": ("accuracy", "lowest"),
        "most-accurate": ("accuracy", "highest"),
        "most-miscalibrated": ("classwise ECE", "highest"),
        "highest-cost": ("expected cost", "highest"),
        "estimation": ("accuracy", "lowest"),
    }
    if target not in table:
        raise ConfigError(f"unknown target {target!r} (choose from {', '.join(TARGETS)})")
    metric, direction = table[target]
    return TargetInfo(target=target, metric=metric, direction=direction)


def _check_pool(pred: Predictions) -> None:
    if not isinstance(pred, Predictions):
        raise DataError(f"expected a Predictions pool, got {type(pred).__name__}")
    if pred.n_labeled != pred.n_items:
        raise DataError(
            f"simulation needs the true label of every item (ground truth from the full pool); "
            f"{pred.n_items - pred.n_labeled} of {pred.n_items} items of {pred.name!r} are unlabeled"
        )


def _cost_matrix(cost: Any, n_classes: int) -> np.ndarray:
    from pbassess.stats.cost import validate_cost_matrix, zero_one_cost

    if cost is None:
        return zero_one_cost(n_classes)
    return validate_cost_matrix(cost, n_classes)


def true_metric(pred: Predictions, target: str, *, bins: int = DEFAULT_BINS, cost: Any = None) -> np.ndarray:
    """The full-pool metric of every class (NaN for classes never predicted).

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_top1(["a", "a", "b"], [0.9, 0.6, 0.8], ["a", "b", "b"])
    >>> true_metric(p, "least-accurate").tolist()
    [0.5, 1.0]
    """
    _check_pool(pred)
    target_info(target)
    k_all = pred.n_classes
    n = np.bincount(pred.predicted, minlength=k_all).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        if target in ("least-accurate", "most-accurate", "estimation"):
            return np.bincount(pred.predicted, weights=pred.correct, minlength=k_all) / n
        if target == "highest-cost":
            c = _cost_matrix(cost, k_all)
            return np.bincount(pred.predicted, weights=c[pred.predicted, pred.labels], minlength=k_all) / n
        edges = bin_edges(bins=bins)
        b = bin_index(pred.confidence, edges)
        nb_ = len(edges) - 1
        cell = pred.predicted * nb_ + b
        cnt = np.bincount(cell, minlength=k_all * nb_).reshape(k_all, nb_)
        cor = np.bincount(cell, weights=pred.correct, minlength=k_all * nb_).reshape(k_all, nb_)
        conf = np.bincount(cell, weights=pred.confidence, minlength=k_all * nb_).reshape(k_all, nb_)
        safe = np.maximum(cnt, 1)
        ece = np.sum(cnt / n[:, None] * np.abs(cor / safe - conf / safe), axis=1)
        return np.where(n > 0, ece, np.nan)


def _top_m(truth: np.ndarray, m: int) -> np.ndarray:
    order = np.argsort(truth, kind="stable")
    mask = np.zeros(truth.shape[0], dtype=bool)
    mask[order[:m]] = True
    return mask


def build_inputs(pred: Predictions, target: str, *, prior: str = "uniform",
                 pseudocount: float = DEFAULT_PSEUDOCOUNT, top_m: int = 1, bins: int = DEFAULT_BINS,
                 cost: Any = None) -> EngineInputs:
    """Reduce a fully labeled pool to the engine's arrays for one target and prior.

    Parameters
    ----------
    pred : Predictions
        A pool whose every item has its true label (top-1 form is enough).
    target : str
        One of :data:`TARGETS`.
    prior : {"uniform", "informed", "eb"}
    pseudocount : float
        The prior's strength (its total pseudo-observations per Beta / Dirichlet).
    top_m : int
        Size m of the sought set (1 = the single most extreme class).
    bins : int
        Equal-width confidence bins inside each class (``most-miscalibrated``).
    cost : array (K, K), optional
        Cost matrix for ``highest-cost`` (rows predicted, columns true); default 0-1.

    Returns
    -------
    EngineInputs

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_top1(["a", "a", "b"], [0.9, 0.6, 0.8], ["a", "b", "b"])
    >>> x = build_inputs(p, "least-accurate")
    >>> x.arm_start.tolist(), x.truth.tolist(), x.true_top.tolist()
    ([0, 2, 3], [0.5, 1.0], [True, False])
    """
    _check_pool(pred)
    target_info(target)
    if prior not in PRIORS:
        raise ConfigError(f"unknown prior {prior!r} (choose from {', '.join(PRIORS)})")
    pc = float(pseudocount)
    if not np.isfinite(pc) or pc <= 0:
        raise ConfigError(f"the pseudocount must be positive, got {pseudocount}")
    k_all = pred.n_classes
    counts = np.bincount(pred.predicted, minlength=k_all)
    arms = np.flatnonzero(counts > 0)
    n_arms = arms.size
    if n_arms < 2:
        raise DataError(f"the pool of {pred.name!r} predicts only {n_arms} class; nothing to compare")
    top_m = int(top_m)
    if not 1 <= top_m < n_arms:
        raise ConfigError(f"top_m must be between 1 and {n_arms - 1} (the pool has {n_arms} predicted classes), got {top_m}")
    arm_of_class = np.full(k_all, -1)
    arm_of_class[arms] = np.arange(n_arms)
    arm = arm_of_class[pred.predicted]
    order = np.argsort(arm, kind="stable")
    arm_start = np.concatenate([[0], np.cumsum(counts[arms])]).astype(np.int64)
    arm_sorted = arm[order]
    correct = pred.correct[order]
    conf = np.asarray(pred.confidence)[order]
    labels = pred.labels[order]
    mean_conf = np.bincount(arm_sorted, weights=conf, minlength=n_arms) / counts[arms]
    estimation = target == "estimation"
    metric = true_metric(pred, target, bins=bins, cost=cost)[arms]
    eb = prior == "eb"
    if eb:
        prior = "uniform"

    if target in ("least-accurate", "most-accurate", "estimation"):
        a0, b0 = beta_prior(prior, n_arms, pc, mean=mean_conf if prior == "informed" else None)
        if target == "most-accurate":
            a0, b0, success, truth = b0, a0, ~correct, 1.0 - metric
        else:
            success, truth = correct, metric
        return EngineInputs(
            kind=KIND_BETA, arm_start=arm_start, item_cell=np.zeros(arm_start[-1], dtype=np.int64),
            item_success=np.ascontiguousarray(success, dtype=np.bool_), prior_a=a0[:, None].copy(),
            prior_b=b0[:, None].copy(), n_cells=np.ones(n_arms, dtype=np.int64), weight=np.ones((n_arms, 1)),
            score=np.zeros((n_arms, 1)), truth=truth.astype(float), true_top=_top_m(truth, top_m), top_m=top_m,
            estimation=estimation, empirical_bayes=eb,
        )

    if eb and target == "most-miscalibrated":
        raise ConfigError("the empirical-Bayes prior ('eb') is for Beta-scored targets, not most-miscalibrated")
    if target == "most-miscalibrated":
        edges = bin_edges(bins=bins)
        nb_ = len(edges) - 1
        b = bin_index(conf, edges)
        cell_full = arm_sorted * nb_ + b
        cnt = np.bincount(cell_full, minlength=n_arms * nb_).reshape(n_arms, nb_)
        csum = np.bincount(cell_full, weights=conf, minlength=n_arms * nb_).reshape(n_arms, nb_)
        used = cnt > 0
        n_cells = used.sum(axis=1)
        cmax = int(n_cells.max())
        # compact the used bins of each class into cells 0..n_cells-1
        cell_of_bin = np.cumsum(used, axis=1) - 1
        item_cell = cell_of_bin[arm_sorted, b].astype(np.int64)
        weight = np.zeros((n_arms, cmax))
        score = np.zeros((n_arms, cmax))
        a0 = np.ones((n_arms, cmax))
        b0 = np.ones((n_arms, cmax))
        for k in range(n_arms):
            idx = np.flatnonzero(used[k])
            c = np.arange(idx.size)
            weight[k, c] = cnt[k, idx] / cnt[k].sum()
            score[k, c] = csum[k, idx] / cnt[k, idx]
            pa, pb = beta_prior(prior, idx.size, pc, mean=score[k, c] if prior == "informed" else None)
            a0[k, c] = pa
            b0[k, c] = pb
        truth = -metric
        return EngineInputs(
            kind=KIND_ECE, arm_start=arm_start, item_cell=item_cell,
            item_success=np.ascontiguousarray(correct, dtype=np.bool_), prior_a=a0, prior_b=b0,
            n_cells=n_cells.astype(np.int64), weight=weight, score=score, truth=truth,
            true_top=_top_m(truth, top_m), top_m=top_m,
        )

    # highest-cost: Dirichlet over the true class, cells = distinct cost levels of the row
    from pbassess.stats.cost import dirichlet_prior, mean_probs_by_predicted

    cmat = _cost_matrix(cost, k_all)
    alpha = np.zeros((n_arms, k_all))
    if prior == "uniform":
        alpha[:] = dirichlet_prior("uniform", k_all, pc)[arms]
    elif pred.probs is not None:
        mean_probs = mean_probs_by_predicted(pred.predicted, pred.probs, k_all)
        alpha[:] = dirichlet_prior("informed", k_all, pc, mean_probs)[arms]
    else:
        s = np.clip(mean_conf, 1e-3, 1 - 1e-3)
        alpha[:] = (pc * (1 - s) / (k_all - 1))[:, None]
        alpha[np.arange(n_arms), arms] = pc * s
    rows = cmat[arms]
    levels = [np.unique(r) for r in rows]
    n_cells = np.array([lv.size for lv in levels], dtype=np.int64)
    two_level = bool(np.all(n_cells == 2)) and all(np.array_equal(lv, levels[0]) for lv in levels)
    item_level = np.array([np.searchsorted(levels[a], rows[a, y]) for a, y in zip(arm_sorted, labels, strict=True)],
                          dtype=np.int64)
    agg = np.zeros((n_arms, int(n_cells.max())))
    for k in range(n_arms):
        agg[k, : n_cells[k]] = np.bincount(np.searchsorted(levels[k], rows[k]), weights=alpha[k],
                                           minlength=n_cells[k])
    if np.any(agg[:, :1] <= 0) or any((agg[k, : n_cells[k]] <= 0).any() for k in range(n_arms)):
        raise ConfigError("the cost prior puts no mass on a cost level; raise the pseudocount")
    if two_level:
        # cost = c_lo + (c_hi - c_lo) * P(high level): the highest cost is the lowest P(low level)
        lo_share = np.bincount(arm_sorted, weights=item_level == 0, minlength=n_arms) / counts[arms]
        return EngineInputs(
            kind=KIND_BETA, arm_start=arm_start, item_cell=np.zeros(arm_start[-1], dtype=np.int64),
            item_success=np.ascontiguousarray(item_level == 0), prior_a=agg[:, :1].copy(),
            prior_b=agg[:, 1:2].copy(), n_cells=np.ones(n_arms, dtype=np.int64), weight=np.ones((n_arms, 1)),
            score=np.zeros((n_arms, 1)), truth=lo_share, true_top=_top_m(lo_share, top_m), top_m=top_m,
            empirical_bayes=eb,
        )
    if eb:
        raise ConfigError("the empirical-Bayes prior ('eb') needs a two-level cost matrix (e.g. 0-1)")
    weight = np.zeros_like(agg)
    for k in range(n_arms):
        weight[k, : n_cells[k]] = levels[k]
    truth = -metric
    return EngineInputs(
        kind=KIND_DIRICHLET, arm_start=arm_start, item_cell=item_level,
        item_success=np.ones(arm_start[-1], dtype=np.bool_), prior_a=agg, prior_b=np.ones_like(agg),
        n_cells=n_cells, weight=weight, score=np.zeros_like(agg), truth=truth, true_top=_top_m(truth, top_m),
        top_m=top_m,
    )


def _tiny_inputs() -> list[EngineInputs]:
    """Small pools of every model kind (used to compile the kernel)."""
    rng = np.random.default_rng(0)
    n = 60
    pred = rng.integers(0, 3, n)
    lab = np.where(rng.random(n) < 0.7, pred, rng.integers(0, 3, n))
    p = Predictions.from_top1(pred, rng.uniform(0.4, 1.0, n), lab, classes=["0", "1", "2"])
    cost = np.array([[0, 1, 2], [1, 0, 2], [2, 1, 0]], dtype=float)
    return [build_inputs(p, "least-accurate"), build_inputs(p, "most-miscalibrated"),
            build_inputs(p, "highest-cost", cost=cost)]
