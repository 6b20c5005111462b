"""Active estimation inside a labeling session: target ``estimation``, strategy ``uncertainty``.

The session follows exactly the design of :func:`pbassess.estimation.active.active_sample`
(Zrnic and Candes, 2024): the pool is visited in a random order (``default_rng(seed)
.permutation(N)``) split into ``batches`` chunks; before each chunk the remaining label budget
is spread over the remaining items with probabilities proportional to
:func:`~pbassess.estimation.active.uncertainty_weights` (``sqrt(c (1 - c))`` of the confidence
mixed with uniform), floored at a quarter of the mean rate, and each item of the chunk is
issued when an independent uniform falls below its probability ``pi``. A call to
``next_batch`` processes chunks until at least one item is issued.

Every issued item's ``pi`` is written to the state file (key ``design``) in the same atomic
write that makes it outstanding, so a crash between ``next`` and ``add`` loses neither the
item nor its probability. The estimate is the inverse-probability-weighted mean of
:func:`~pbassess.estimation.active.ipw_mean_interval` over the visited prefix of the order
(the chunks up to the first one with an issued item still waiting for its label): a random
prefix of a random permutation is a simple random sample of the pool, so the estimate and its
interval stay valid for the pool's accuracy at every stopping point, while the plain mean of
the labels is biased by the uncertainty-driven selection.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from pbassess.constants import CI_PROB
from pbassess.errors import ConfigError
from pbassess.estimation.active import (
    DEFAULT_UNIFORM_SHARE,
    chunk_probabilities,
    ipw_mean_interval,
    tail_statistics,
    uncertainty_weights,
)
from pbassess.estimation.frequentist import classical_interval

__all__ = ["UNCERTAINTY", "check_design", "default_budget", "issue_uncertainty_batch", "new_design", "session_estimates"]

#: The session strategy of active estimation (target ``estimation`` only).
UNCERTAINTY = "uncertainty"


def default_budget(n_items: int, batch_size: int) -> int:
    """Expected number of labels when none is given: 10% of the pool, at least one batch, at most the pool.

    Examples
    --------
    >>> default_budget(2000, 10), default_budget(50, 10), default_budget(5, 10)
    (200, 10, 5)
    """
    return int(min(n_items, max(int(batch_size), round(0.1 * n_items))))


def new_design(n_items: int, batch_size: int, seed: int, budget: Any = None,
               uniform_share: Any = DEFAULT_UNIFORM_SHARE) -> tuple[dict[str, Any], dict[str, Any]]:
    """The design record of a new session and the generator state after drawing the visiting order.

    The order is ``default_rng(seed).permutation(n_items)`` (as in ``active_sample(...,
    seed=seed)``); it is drawn again from the seed when needed, so the state stores only the
    settings, the chunks processed and the probability of every issued item.

    Returns
    -------
    (design, rng_state) : (dict, dict)

    Examples
    --------
    >>> design, _ = new_design(1000, 25, seed=0)
    >>> design["budget"], design["batches"], design["chunks_done"], design["pi"]
    (100, 4, 0, {})
    """
    budget = default_budget(n_items, batch_size) if budget is None else budget
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or not 1 <= budget <= n_items:
        raise ConfigError(f"the label budget must be an integer between 1 and the pool size {n_items}, got {budget!r}")
    eta = float(uniform_share)
    if not 0.0 <= eta <= 1.0:
        raise ConfigError(f"the uniform share must lie in [0, 1], got {uniform_share!r}")
    rng = np.random.default_rng(int(seed))
    rng.permutation(n_items)
    batches = int(min(n_items, math.ceil(int(budget) / int(batch_size))))
    design = {"budget": int(budget), "batches": batches, "uniform_share": eta, "chunks_done": 0, "pi": {}}
    return design, rng.bit_generator.state


def check_design(design: Any, n_items: int) -> str | None:
    """What is wrong with a design record read from a state file, or None.

    Examples
    --------
    >>> check_design({"budget": 5, "batches": 1, "uniform_share": 0.2, "chunks_done": 0, "pi": {}}, 10) is None
    True
    """
    if not isinstance(design, dict):
        return "the active-estimation design is missing"
    for key in ("budget", "batches", "chunks_done"):
        if isinstance(design.get(key), bool) or not isinstance(design.get(key), int):
            return f"the design's {key!r} is missing or not an integer"
    if not 1 <= design["budget"] <= n_items or not 1 <= design["batches"] <= n_items:
        return "the design's budget or number of batches does not fit the pool"
    if not 0 <= design["chunks_done"] <= design["batches"]:
        return "the design's chunk counter is out of range"
    if not isinstance(design.get("uniform_share"), (int, float)) or not 0 <= design["uniform_share"] <= 1:
        return "the design's uniform share is not in [0, 1]"
    pi = design.get("pi")
    if not isinstance(pi, dict) or not all(isinstance(v, (int, float)) and 0 < v <= 1 for v in pi.values()):
        return "the design's labeling probabilities are missing or outside (0, 1]"
    return None


def _chunks(seed: int, n_items: int, batches: int) -> tuple[np.ndarray, list[np.ndarray]]:
    order = np.random.default_rng(int(seed)).permutation(n_items)
    return order, np.array_split(order, int(batches))


def issue_uncertainty_batch(state: dict[str, Any], confidence: Any, item_ids: Any, labeled: Any,
                            rng: np.random.Generator) -> list[str]:
    """Toss the coins of the next chunks until an item is issued; record each issued item's pi in ``state``.

    ``state`` is the session's state dict (edited in place: ``design["pi"]`` and
    ``design["chunks_done"]``); ``labeled`` the item ids labeled already (an item labeled
    before its coin comes up is recorded but not issued again). Returns the issued ids
    (empty when every chunk has been visited).

    Examples
    --------
    >>> design, rng_state = new_design(100, 10, seed=2)
    >>> state = {"config": {"seed": 2}, "design": design}
    >>> rng = np.random.Generator(np.random.PCG64()); rng.bit_generator.state = rng_state
    >>> ids = issue_uncertainty_batch(state, np.linspace(0.5, 1, 100), [str(i) for i in range(100)], set(), rng)
    >>> len(ids) > 0, set(ids) == set(state["design"]["pi"]), state["design"]["chunks_done"] >= 1
    (True, True, True)
    """
    design = state["design"]
    conf = np.asarray(confidence, dtype=float)
    n_items = conf.size
    budget = float(design["budget"])
    order, chunks = _chunks(state["config"]["seed"], n_items, design["batches"])
    weights = uncertainty_weights(conf, design["uniform_share"])
    floor = 0.25 * budget / n_items  # as in active_sample: keeps every 1 / pi bounded
    issued: list[str] = []
    w_seq = weights[order]
    tails = tail_statistics(w_seq)
    while design["chunks_done"] < design["batches"] and not issued:
        k = design["chunks_done"]
        chunk = chunks[k]
        start = sum(c.size for c in chunks[:k])
        left = max(budget - len(design["pi"]), 0.0)
        probs = chunk_probabilities(w_seq, tails, start, start + chunk.size, left)
        probs = np.maximum(probs, floor)
        hits = rng.random(chunk.size) < probs
        for i, p in zip(chunk[hits], probs[hits], strict=True):
            item = str(item_ids[i])
            design["pi"][item] = float(p)
            if item not in labeled:
                issued.append(item)
        design["chunks_done"] = k + 1
    return issued


def session_estimates(pool: Any, state: Mapping[str, Any], labels: Mapping[str, str],
                      ci_prob: float = CI_PROB) -> dict[str, Any]:
    """The pool's accuracy from the session's labels: the plain mean and, with a design, the IPW estimate.

    Returns
    -------
    dict
        ``plain``: ``mean``, ``ci`` (Wald, as if the labels were a uniform sample - biased under
        uncertainty selection) and ``labels``; ``ipw``: ``mean``, ``ci``, ``lambda``,
        ``items_visited`` (the prefix of the order it covers), ``labels_used`` and
        ``waiting`` (issued items still without a label, outside the prefix), or None
        without an active-estimation design.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> pool = Predictions.from_top1(["a", "b", "a"], [0.9, 0.8, 0.7])
    >>> session_estimates(pool, {}, {"0": "a", "1": "a"})["plain"]["mean"]
    0.5
    """
    index = {str(item): i for i, item in enumerate(pool.item_ids)}
    classes = list(pool.classes)
    correct = {item: float(classes.index(lab) == pool.predicted[index[item]]) for item, lab in labels.items()}
    mean, lo, hi = classical_interval(list(correct.values()), ci_prob)
    out: dict[str, Any] = {"plain": {"mean": _num(mean), "ci": [_num(lo), _num(hi)], "labels": len(correct)},
                           "ipw": None}
    design = state.get("design")
    if design is None:
        return out
    _, chunks = _chunks(state["config"]["seed"], pool.n_items, design["batches"])
    pi_of = design["pi"]
    visited: list[np.ndarray] = []
    waiting = 0
    for chunk in chunks[: design["chunks_done"]]:
        missing = sum(1 for i in chunk if str(pool.item_ids[i]) in pi_of and str(pool.item_ids[i]) not in correct)
        if missing:
            waiting = sum(1 for item in pi_of if item not in correct)
            break
        visited.append(chunk)
    idx = np.concatenate(visited) if visited else np.zeros(0, dtype=np.int64)
    ids = [str(pool.item_ids[i]) for i in idx]
    xi = np.array([item in pi_of for item in ids], dtype=bool)
    pi = np.array([pi_of.get(item, 1.0) for item in ids], dtype=float)
    y = np.array([correct.get(item, 0.0) for item in ids], dtype=float)
    f = np.asarray(pool.confidence, dtype=float)[idx]
    m, low, high, lam = ipw_mean_interval(y, f, pi, xi, ci_prob)
    out["ipw"] = {"mean": _num(m), "ci": [_num(low), _num(high)], "lambda": _num(lam), "items_visited": int(idx.size),
                  "labels_used": int(xi.sum()), "waiting": int(waiting)}
    return out


def _num(value: float) -> float | None:
    return None if not np.isfinite(value) else float(value)
