"""Targets of active assessment: what is being looked for, as a conjugate model per arm.

The arms are the predicted classes that occur in the pool (a class the model never predicts
cannot be labeled and is left out). Each target turns a fully labeled pool into
:class:`~pbassess.active.engine.EngineInputs`: how a label updates the arm's posterior, the
prior, and the ground truth from all labels of the pool. The kernel always *minimises* a
score, so "most" targets are stated as "least" of a transformed score::

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

Priors come from :func:`pbassess.active.model.target_prior`, the one prior function the
labeling session uses too (``uniform``: Beta(pc/2, pc/2), per bin for ECE, pc/K in every cell of
the cost Dirichlet; ``informed``: the model's own confidences; see :mod:`pbassess.active.model`);
this module restricts them to the predicted classes and merges equal cost levels. Cost
matrices come from :func:`pbassess.stats.cost.resolve_cost_matrix` (names ``zero-one``,
``people``, ``superclass``, an array or a file). With a 0-1 (or any two-level, equal-across-rows) cost matrix
the expected cost is a monotone function of one Beta, and the target runs on the fast Beta
path of the engine.

``eb`` (empirical Bayes, for the Beta-scored targets: least / most accurate, estimation and
two-level costs) starts from the uniform prior and, every 100 labels, refits one shared
Beta(mu tau, (1 - mu) tau) across the classes from the counts so far (mu the pooled rate, tau
from the method of moments: the spread of the classes' rates beyond binomial noise, clipped
to [1, 1000]); every arm's posterior is that prior plus its own counts.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from pbassess.active.engine import KIND_BETA, KIND_DIRICHLET, KIND_ECE, EngineInputs, run_engine
from pbassess.active.model import (
    ACCURACY_TARGETS,
    PRIORS,
    TARGETS,
    PoolCells,
    TargetInfo,
    cell_counts,
    check_prior,
    check_pseudocount,
    pool_cells,
    target_info,
    target_prior,
)
from pbassess.constants import DEFAULT_BINS, DEFAULT_PSEUDOCOUNT
from pbassess.counting import cell_counts as core_counts
from pbassess.data.predictions import Predictions
from pbassess.errors import ConfigError, DataError
from pbassess.stats import bin_index

__all__ = ["PRIORS", "TARGETS", "TargetInfo", "as_labeled_pool", "build_inputs", "target_info", "true_metric", "warm_up"]


def as_labeled_pool(pred: Any) -> Predictions:
    """The pool as Predictions, checked to carry the true label of every item (a simulation needs them).

    Parameters
    ----------
    pred : Predictions, DataFrame, dict or arrays
        The pool (converted by ``pbassess.data.as_predictions`` when not already Predictions).

    Returns
    -------
    Predictions
        The pool; a :class:`~pbassess.errors.DataError` when an item is unlabeled.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_top1(["a", "a", "b"], [0.9, 0.6, 0.8], ["a", "b", "b"])
    >>> as_labeled_pool(p).n_items
    3
    """
    pred = _as_predictions(pred)
    if pred.n_labeled != pred.n_items:
        raise DataError(
            f"simulation needs the true label of every item (ground truth from the full pool); "
            f"{pred.n_items - pred.n_labeled} of {pred.n_items} items of {pred.name!r} are unlabeled"
        )
    return pred


def _as_predictions(pred: Any) -> Predictions:
    """Predictions from a Predictions, DataFrame, dict or arrays (``pbassess.data.as_predictions`` when present)."""
    if isinstance(pred, Predictions):
        return pred
    try:
        from pbassess.data import as_predictions
    except ImportError:
        raise DataError(f"expected a Predictions pool, got {type(pred).__name__}") from None
    return as_predictions(pred)


def _resolved_cost(pred: Predictions, spec: Any) -> np.ndarray:
    from pbassess.stats.cost import resolve_cost_matrix

    return resolve_cost_matrix(spec, pred.classes)


def true_metric(preds: Any, target: str, *, bins: int = DEFAULT_BINS, cost_matrix: Any = None) -> np.ndarray:
    """The full-pool metric of every class (NaN for classes never predicted).

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_top1(["a", "a", "b"], [0.9, 0.6, 0.8], ["a", "b", "b"])
    >>> true_metric(p, "least-accurate").tolist()
    [0.5, 1.0]
    """
    pred = as_labeled_pool(preds)
    target_info(target)
    k_all = pred.n_classes
    with np.errstate(invalid="ignore", divide="ignore"):
        if target in ACCURACY_TARGETS:
            counts = cell_counts(pred.predicted, pred.confidence, k_all, ("predicted",), labels=pred.labels)
            return counts["correct"].to_numpy() / counts["n"].to_numpy()
        if target == "highest-cost":
            c = _resolved_cost(pred, cost_matrix)
            counts = cell_counts(pred.predicted, pred.confidence, k_all, ("predicted", "true"), labels=pred.labels)
            confusion = counts["n"].to_numpy()
            return (confusion * c).sum(axis=1) / confusion.sum(axis=1)
        cells = pool_cells(pred.predicted, pred.confidence, k_all, bins=bins)
        counts = cell_counts(pred.predicted, pred.confidence, k_all, ("predicted", "bin"), edges=cells.edges,
                             labels=pred.labels)
        cor = counts["correct"].to_numpy()
        n = cells.n.astype(float)
        safe = np.maximum(cells.bin_n, 1)
        ece = np.sum(cells.bin_n / n[:, None] * np.abs(cor / safe - cells.bin_confidence), axis=1)
        return np.where(n > 0, ece, np.nan)


def _top_m(truth: np.ndarray, m: int) -> np.ndarray:
    order = np.argsort(truth, kind="stable")
    mask = np.zeros(truth.shape[0], dtype=bool)
    mask[order[:m]] = True
    return mask


def build_inputs(preds: Any, target: str, *, prior: str = "uniform", pseudocount: float = DEFAULT_PSEUDOCOUNT,
                 top_m: int = 1, bins: int = DEFAULT_BINS, cost_matrix: Any = None) -> EngineInputs:
    """Reduce a fully labeled pool to the engine's arrays for one target and prior.

    Parameters
    ----------
    preds : Predictions or DataFrame
        A pool whose every item has its true label (top-1 form is enough).
    target : str
        One of :data:`TARGETS`.
    prior : str
        One of :data:`PRIORS` (``uniform``, ``informed``, ``eb``); built by
        :func:`pbassess.active.model.target_prior`.
    pseudocount : float
        The prior's strength (its total pseudo-observations per Beta / Dirichlet).
    top_m : int
        Size m of the sought set (1 = the single most extreme class).
    bins : int
        Equal-width confidence bins inside each class (``most-miscalibrated``).
    cost_matrix : name, array (K, K) or path, optional
        Cost matrix for ``highest-cost`` (rows predicted, columns true; see
        :func:`pbassess.stats.cost.resolve_cost_matrix`); default 0-1.

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
    pred = as_labeled_pool(preds)
    target_info(target)
    check_prior(prior)
    pc = check_pseudocount(pseudocount)
    spec = cost_matrix
    k_all = pred.n_classes
    counts = core_counts(pred.predicted, k_all)
    arms = np.flatnonzero(counts > 0)
    n_arms = arms.size
    if n_arms < 2:
        raise DataError(f"the pool of {pred.name!r} predicts only {n_arms} class; nothing to compare")
    top_m = int(top_m)
    if not 1 <= top_m < n_arms:
        raise ConfigError(f"top_m must be between 1 and {n_arms - 1} (the pool has {n_arms} predicted classes), got {top_m}")
    cells = pool_cells(pred.predicted, pred.confidence, k_all, bins=bins, probs=pred.probs)
    start = target_prior(target, prior, cells, pseudocount=pc)
    arm_of_class = np.full(k_all, -1)
    arm_of_class[arms] = np.arange(n_arms)
    order = np.argsort(arm_of_class[pred.predicted], kind="stable")
    layout = {
        "arm_start": np.concatenate([[0], np.cumsum(counts[arms])]).astype(np.int64),
        "arms": arms, "arm_sorted": arm_of_class[pred.predicted][order], "order": order, "top_m": top_m,
    }
    metric = true_metric(pred, target, bins=bins, cost_matrix=spec)[arms]
    eb = prior == "eb"
    if target in ACCURACY_TARGETS:
        return _beta_inputs(pred, target, start, metric, layout, eb)
    if target == "most-miscalibrated":
        return _ece_inputs(pred, start, cells, metric, layout)
    return _cost_inputs(pred, start, _resolved_cost(pred, spec), metric, layout, eb)


def _beta_inputs(pred: Predictions, target: str, start: Any, metric: np.ndarray, layout: dict, eb: bool) -> EngineInputs:
    arms, order, arm_start = layout["arms"], layout["order"], layout["arm_start"]
    n_arms = arms.size
    correct = pred.correct[order]
    a0, b0 = start.a[arms], start.b[arms]
    if target == "most-accurate":
        a0, b0, success, truth = b0, a0, ~correct, 1.0 - metric
    else:
        success, truth = correct, metric
    return EngineInputs(
        kind=KIND_BETA, arm_start=arm_start, item_cell=np.zeros(arm_start[-1], dtype=np.int64),
        item_success=np.ascontiguousarray(success, dtype=np.bool_), prior_a=a0[:, None].copy(),
        prior_b=b0[:, None].copy(), n_cells=np.ones(n_arms, dtype=np.int64), weight=np.ones((n_arms, 1)),
        score=np.zeros((n_arms, 1)), truth=truth.astype(float), true_top=_top_m(truth, layout["top_m"]),
        top_m=layout["top_m"], estimation=target == "estimation", empirical_bayes=eb,
    )


def _ece_inputs(pred: Predictions, start: Any, cells: PoolCells, metric: np.ndarray, layout: dict) -> EngineInputs:
    """One Beta per used confidence bin of each class, compacted into cells 0..n_cells-1."""
    arms, order, arm_sorted, arm_start = layout["arms"], layout["order"], layout["arm_sorted"], layout["arm_start"]
    n_arms = arms.size
    b = bin_index(np.asarray(pred.confidence)[order], cells.edges)
    cnt = cells.bin_n[arms]
    used = cnt > 0
    n_cells = used.sum(axis=1)
    cmax = int(n_cells.max())
    cell_of_bin = np.cumsum(used, axis=1) - 1
    item_cell = cell_of_bin[arm_sorted, b].astype(np.int64)
    weight, score = np.zeros((n_arms, cmax)), np.zeros((n_arms, cmax))
    a0, b0 = np.ones((n_arms, cmax)), np.ones((n_arms, cmax))
    for k, cls in enumerate(arms):
        idx = np.flatnonzero(used[k])
        c = np.arange(idx.size)
        weight[k, c] = cnt[k, idx] / cnt[k].sum()
        score[k, c] = cells.bin_confidence[cls, idx]
        a0[k, c] = start.a[cls, idx]
        b0[k, c] = start.b[cls, idx]
    truth = -metric
    return EngineInputs(
        kind=KIND_ECE, arm_start=arm_start, item_cell=item_cell,
        item_success=np.ascontiguousarray(pred.correct[order], dtype=np.bool_), prior_a=a0, prior_b=b0,
        n_cells=n_cells.astype(np.int64), weight=weight, score=score, truth=truth,
        true_top=_top_m(truth, layout["top_m"]), top_m=layout["top_m"],
    )


def _cost_inputs(pred: Predictions, start: Any, cmat: np.ndarray, metric: np.ndarray, layout: dict,
                 eb: bool) -> EngineInputs:
    """Dirichlet over the true class with true classes of equal cost merged (exact aggregation)."""
    arms, order, arm_sorted, arm_start = layout["arms"], layout["order"], layout["arm_sorted"], layout["arm_start"]
    n_arms, top_m = arms.size, layout["top_m"]
    labels = pred.labels[order]
    alpha = start.alpha[arms]
    rows = cmat[arms]
    levels = [np.unique(r) for r in rows]
    n_cells = np.array([lv.size for lv in levels], dtype=np.int64)
    two_level = bool(np.all(n_cells == 2)) and all(np.array_equal(lv, levels[0]) for lv in levels)
    item_level = np.array([np.searchsorted(levels[a], rows[a, y]) for a, y in zip(arm_sorted, labels, strict=True)],
                          dtype=np.int64)
    level_of = np.stack([np.searchsorted(levels[k], rows[k]) for k in range(n_arms)])
    agg = core_counts(level_of, int(n_cells.max()), np.asarray(alpha, dtype=float))  # one row per arm
    if np.any(agg[:, :1] <= 0) or any((agg[k, : n_cells[k]] <= 0).any() for k in range(n_arms)):
        raise ConfigError("the cost prior puts no mass on a cost level; raise the pseudocount")
    if two_level:
        # cost = c_lo + (c_hi - c_lo) * P(high level): the highest cost is the lowest P(low level)
        lo_share = core_counts(arm_sorted, n_arms, item_level == 0) / np.diff(arm_start)
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
            build_inputs(p, "highest-cost", cost_matrix=cost)]


def warm_up() -> float:
    """Compile (or load from the on-disk cache) every kernel path; returns the seconds it took.

    It lives here, not in :mod:`pbassess.active.engine`, because it needs the targets to build
    small inputs of every model kind; the engine knows nothing of targets.

    Examples
    --------
    >>> warm_up() >= 0.0
    True
    """
    t0 = time.perf_counter()
    for inputs in _tiny_inputs():
        run_engine(inputs, "ts", runs=1, log_every=1)
    return time.perf_counter() - t0
