"""Choosing the next batch of items to label from the current posterior of one session.

:func:`choose_batch` turns a posterior over arms (:mod:`pbassess.active.arms`) into a batch of
item indices with one of the strategies of :data:`pbassess.active.strategies.STRATEGIES` (the
same list the simulation engine runs); sampling is without replacement inside each predicted
class and exhausted arms drop out. :func:`target_answer` reads the answer set and its posterior
probability off posterior draws.

Everything here is plain NumPy; randomness comes from one :class:`numpy.random.Generator` so a
session's batches are reproducible.
"""

from __future__ import annotations

import numpy as np

from pbassess.active.arms import (  # noqa: F401  (re-exported: the session's models used to live here)
    ArmModel,
    BetaArms,
    CalibrationArms,
    CostArms,
    build_target_model,
)
from pbassess.active.model import TARGETS  # noqa: F401  (re-exported)
from pbassess.active.strategies import STRATEGIES, check_strategy
from pbassess.counting import cell_counts

__all__ = [
    "STRATEGIES", "TARGETS", "BetaArms", "CalibrationArms", "CostArms", "build_target_model", "choose_batch",
    "target_answer",
]

#: Posterior draws searched for a challenger by top-two Thompson sampling.
TTTS_DRAWS: int = 100

#: Strategies that update the posterior with each slot's expected outcome (a batch spreads out).
_FANTASY = ("bayes-ucb", "epsilon-greedy", "greedy")


def _argmax_random_ties(values: np.ndarray, rng: np.random.Generator) -> int:
    best = np.flatnonzero(values == values.max())
    return int(best[0] if best.size == 1 else rng.choice(best))


def _draw_leader(model: ArmModel, open_arms: np.ndarray, rng: np.random.Generator) -> int:
    return _argmax_random_ties(np.where(open_arms, model.utility_draws(1, rng)[0], -np.inf), rng)


def _challenger(model: ArmModel, open_arms: np.ndarray, leader: int, rng: np.random.Generator) -> int:
    """The leader of the first further draw led by another arm (up to TTTS_DRAWS draws; if the
    leader wins them all, the best other arm of the last one)."""
    draws = np.where(open_arms, model.utility_draws(TTTS_DRAWS, rng), -np.inf)
    leaders = draws.argmax(axis=1)
    others = np.flatnonzero(leaders != leader)
    if others.size:
        return int(leaders[others[0]])
    last = draws[-1].copy()
    last[leader] = -np.inf
    return _argmax_random_ties(last, rng)


def _pick_arm(model: ArmModel, strategy: str, left: np.ndarray, rng: np.random.Generator, *, t: int,
              ttts_beta: float, epsilon: float) -> int:
    """One arm for one slot (``mpts`` is handled by the caller's queue)."""
    open_arms = left > 0
    if strategy == "random-item":
        return int(rng.choice(left.size, p=left / left.sum()))
    if strategy == "random-arm":
        return int(rng.choice(np.flatnonzero(open_arms)))
    if strategy in ("ts", "ttts"):
        arm = _draw_leader(model, open_arms, rng)
        if strategy == "ttts" and open_arms.sum() > 1 and rng.random() >= ttts_beta:
            arm = _challenger(model, open_arms, arm, rng)
        return arm
    if strategy == "bayes-ucb":
        q = np.where(open_arms, model.utility_quantile(1.0 - 1.0 / (t + 1), rng), -np.inf)
        return _argmax_random_ties(q, rng)
    if strategy == "epsilon-greedy" and rng.random() < epsilon:
        return int(rng.choice(np.flatnonzero(open_arms)))
    return _argmax_random_ties(np.where(open_arms, model.utility_mean(), -np.inf), rng)  # greedy step


def choose_batch(
    model: ArmModel,
    predicted: np.ndarray,
    available: np.ndarray,
    strategy: str,
    batch_size: int,
    rng: np.random.Generator,
    *,
    top_m: int = 1,
    ttts_beta: float = 0.5,
    epsilon: float = 0.1,
    n_labeled: int = 0,
    item_bins: np.ndarray | None = None,
) -> list[int]:
    """Pick up to ``batch_size`` pool items to label next.

    Each slot of the batch first picks an arm (predicted class) with the strategy, then one
    uniformly random available item of that arm, which is removed (sampling without
    replacement; arms with no available item drop out). The strategies:

    * ``random-item``: a uniformly random available item (ignores the posterior);
    * ``random-arm``: a uniformly random non-empty arm;
    * ``ts``: Thompson sampling, the arm with the best utility in one posterior draw per slot;
    * ``ttts``: top-two Thompson sampling: the leader of a draw with probability
      ``ttts_beta``, otherwise the first different leader of further draws (the challenger);
    * ``mpts``: multiple-play Thompson sampling: the ``top_m`` best arms of one draw fill
      ``top_m`` slots (in order of their drawn utility);
    * ``bayes-ucb``: the arm with the best posterior quantile of the utility at level
      ``1 - 1/(t + 1)``, t = labels so far (including earlier slots of the batch) plus one;
    * ``epsilon-greedy``: with probability ``epsilon`` a random non-empty arm, otherwise the
      best posterior mean utility;
    * ``greedy``: the best posterior mean utility (for ``estimation``: the largest expected
      drop of the posterior variance).

    The deterministic rules (``bayes-ucb``, ``greedy`` and the greedy step of
    ``epsilon-greedy``) update the posterior with the expected outcome of each slot
    (:meth:`fantasize`), so a batch spreads over the arms the way sequential choices would.
    Ties break at random.

    Parameters
    ----------
    model : BetaArms, CalibrationArms or CostArms
        The current posterior (from :func:`build_target_model`).
    predicted : ndarray of int, shape (N,)
        Predicted class (arm) of each pool item.
    available : ndarray of bool, shape (N,)
        Items that may be chosen (unlabeled and not already waiting for a label).
    strategy : str
        One of :data:`STRATEGIES`.
    batch_size : int
    rng : numpy.random.Generator
    top_m : int
        Size of the answer set (``mpts``).
    ttts_beta : float
        Probability of the leader in ``ttts``.
    epsilon : float
        Exploration probability of ``epsilon-greedy``.
    n_labeled : int
        Labels so far (the time index of Bayes-UCB).
    item_bins : ndarray of int, shape (N,), optional
        Confidence bin of each item inside its class (for the calibration fantasy update).

    Returns
    -------
    list of int
        Pool indices, in the order chosen (fewer than ``batch_size`` when the pool runs out).

    Examples
    --------
    >>> import numpy as np
    >>> pred = np.array([0, 0, 0, 1, 1, 1])
    >>> m = build_target_model("least-accurate", pred, np.full(6, 0.9), np.array([], int), np.array([], int))
    >>> batch = choose_batch(m, pred, np.ones(6, bool), "ts", 4, np.random.default_rng(0))
    >>> len(batch), len(set(batch))
    (4, 4)
    """
    check_strategy(strategy)
    pred = np.asarray(predicted, dtype=np.int64)
    free = np.asarray(available, dtype=bool).copy()
    left = cell_counts(pred[free], model.n_arms)
    chosen: list[int] = []
    queue: list[int] = []
    while len(chosen) < batch_size and left.sum() > 0:
        if strategy == "mpts":
            queue = [a for a in queue if left[a] > 0]
            if not queue:
                u = np.where(left > 0, model.utility_draws(1, rng)[0], -np.inf)
                order = np.argsort(-u, kind="stable")
                queue = [int(a) for a in order[: int(min(top_m, (left > 0).sum()))]]
            arm = queue.pop(0)
        else:
            arm = _pick_arm(model, strategy, left, rng, t=n_labeled + len(chosen) + 1, ttts_beta=ttts_beta,
                            epsilon=epsilon)
        items = np.flatnonzero(free & (pred == arm))
        item = int(items[rng.integers(items.size)])
        free[item] = False
        left[arm] -= 1
        chosen.append(item)
        if strategy in _FANTASY:
            model = model.fantasize(arm, None if item_bins is None else int(item_bins[item]))
    return chosen


def target_answer(
    draws: np.ndarray, valid: np.ndarray, top_m: int = 1, *, lowest: bool = False
) -> tuple[list[int], float, np.ndarray]:
    """The answer set of a top-m question and its posterior probability, from draws.

    The answer is the ``top_m`` arms with the highest posterior probability of being among
    the ``top_m`` extreme arms (ties broken by the posterior mean); its probability is the
    share of draws whose own top-m set is exactly the answer (for m = 1: P(answer is the
    extreme arm)). Invalid arms (no pool items) never count.

    Parameters
    ----------
    draws : ndarray, shape (n_draws, K)
        Posterior draws of the metric.
    valid : ndarray of bool, shape (K,)
    top_m : int
    lowest : bool
        Whether the extreme is the lowest value (least accurate) or the highest.

    Returns
    -------
    answer : list of int
        Arm indices, most probable first.
    probability : float
        Posterior probability that the answer set is exactly the true top-m set.
    p_member : ndarray, shape (K,)
        Posterior probability of each arm being among the top m.

    Examples
    --------
    >>> import numpy as np
    >>> d = np.array([[0.1, 0.5, 0.9], [0.2, 0.1, 0.8], [0.3, 0.6, 0.7]])
    >>> answer, p, member = target_answer(d, np.array([True, True, True]), 1, lowest=True)
    >>> answer, round(p, 3), member.round(3).tolist()
    ([0], 0.667, [0.667, 0.333, 0.0])
    """
    d = np.asarray(draws, dtype=float)
    ok = np.asarray(valid, dtype=bool)
    util = np.where(ok, -d if lowest else d, -np.inf)
    n, k = util.shape
    m = int(top_m)
    order = np.argsort(-util, axis=1, kind="stable")[:, :m]
    member = np.zeros((n, k), dtype=bool)
    np.put_along_axis(member, order, True, axis=1)
    p_member = member.mean(axis=0)
    mean_util = util.mean(axis=0)  # -inf for invalid arms
    rank = np.lexsort((-mean_util, -p_member))
    answer = [int(a) for a in rank[:m]]
    in_answer = np.zeros(k, dtype=bool)
    in_answer[answer] = True
    probability = float(np.all(member == in_answer, axis=1).mean())
    return answer, probability, p_member

