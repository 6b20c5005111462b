"""Choosing the next batch of items to label from the current posterior of one session.

The arms are the predicted classes. For each target the posterior of a per-arm metric is
conjugate, so it is held as a few NumPy arrays:

* ``least-accurate`` / ``most-accurate`` / ``estimation``: one Beta(a_k, b_k) per predicted class
  for its accuracy theta_k (Beta-binomial).
* ``most-miscalibrated``: one Beta per (predicted class, confidence bin) for the accuracy
  theta_kb of the items of class k whose confidence falls in bin b; the classwise ECE is
  ``ECE_k = sum_b w_kb |theta_kb - s_kb|`` with w_kb the share of class k's pool items in
  bin b and s_kb their mean confidence.
* ``highest-cost``: one Dirichlet per predicted class over the true class, and the expected
  cost ``C_k = sum_j theta_kj c_kj`` for a cost matrix c (rows predicted, columns true).

Every model exposes the *utility* of each arm — the quantity the target wants largest
(minus the accuracy for ``least-accurate``, the ECE, the cost, or for ``estimation`` the drop
of the posterior variance of theta_k that one more label brings) — as posterior draws, mean
and quantile, and a *fantasy* update (the expected effect of one more label, used to spread
a batch of a deterministic rule over several arms). :func:`choose_batch` turns those into a
batch of item indices with one of the strategies of :data:`STRATEGIES`; sampling is without
replacement inside each predicted class and exhausted arms drop out.

Everything here is plain NumPy (plus ``scipy.special`` for exact Beta quantiles); randomness
comes from one :class:`numpy.random.Generator` so a session's batches are reproducible.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import special

from pbassess.constants import DEFAULT_BINS, DEFAULT_PSEUDOCOUNT
from pbassess.errors import ConfigError
from pbassess.stats import beta_prior, bin_edges, bin_index

__all__ = [
    "STRATEGIES", "TARGETS", "BetaArms", "CalibrationArms", "CostArms", "build_target_model", "choose_batch",
    "target_answer",
]

#: Strategy names (CLI ``--strategy``).
STRATEGIES: tuple[str, ...] = ("random-item", "random-arm", "ts", "ttts", "mpts", "bayes-ucb", "epsilon-greedy")

#: Target names (CLI ``--target``).
TARGETS: tuple[str, ...] = ("least-accurate", "most-accurate", "most-miscalibrated", "highest-cost", "estimation")

#: Posterior draws searched for a challenger by top-two Thompson sampling.
TTTS_DRAWS: int = 100

#: Monte Carlo draws used for the quantiles of Bayes-UCB when no closed form exists.
UCB_DRAWS: int = 2000


def _variance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    s = a + b
    return a * b / (s * s * (s + 1.0))


def _beta_by_gamma(rng: np.random.Generator, a: np.ndarray, b: np.ndarray, n: int) -> np.ndarray:
    """Beta draws of shape (n, *a.shape) via two Gamma draws (exact)."""
    x = rng.standard_gamma(np.broadcast_to(a, (n, *a.shape)))
    y = rng.standard_gamma(np.broadcast_to(b, (n, *b.shape)))
    return x / (x + y)


@dataclass(frozen=True, eq=False)
class BetaArms:
    """Beta posteriors of the accuracy of each arm (predicted class).

    Parameters
    ----------
    alpha, beta : ndarray, shape (K,)
        Posterior parameters.
    valid : ndarray of bool, shape (K,)
        Arms with at least one pool item (the others never win and are never chosen).
    goal : {"lowest", "highest", "estimation"}
        ``lowest``: utility = -theta (least accurate); ``highest``: utility = theta;
        ``estimation``: utility = the drop of Var(theta_k) that one more label of arm k brings.

    Examples
    --------
    >>> import numpy as np
    >>> arms = BetaArms(np.array([9.0, 2.0]), np.array([1.0, 8.0]), np.array([True, True]), "lowest")
    >>> arms.utility_mean().round(2).tolist()
    [-0.9, -0.2]
    """

    alpha: np.ndarray
    beta: np.ndarray
    valid: np.ndarray
    goal: str = "lowest"

    metric_name = "accuracy"

    @property
    def n_arms(self) -> int:
        return int(self.alpha.shape[0])

    def metric_draws(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Draws of theta_k, shape (n, K)."""
        return _beta_by_gamma(rng, self.alpha, self.beta, n)

    def metric_mean(self) -> np.ndarray:
        return self.alpha / (self.alpha + self.beta)

    def _utility_of_theta(self, theta: np.ndarray) -> np.ndarray:
        if self.goal == "lowest":
            return -theta
        if self.goal == "highest":
            return theta
        a, b = self.alpha, self.beta
        v_now, v_up, v_down = _variance(a, b), _variance(a + 1, b), _variance(a, b + 1)
        return v_now - (theta * v_up + (1 - theta) * v_down)

    def utility_draws(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Posterior draws of each arm's utility, shape (n, K); -inf for invalid arms."""
        u = self._utility_of_theta(self.metric_draws(n, rng))
        return np.where(self.valid, u, -np.inf)

    def utility_mean(self) -> np.ndarray:
        """Posterior mean utility (for ``estimation``: the exact expected variance drop)."""
        return np.where(self.valid, self._utility_of_theta(self.metric_mean()), -np.inf)

    def utility_quantile(self, level: float, rng: np.random.Generator) -> np.ndarray:
        """Posterior ``level``-quantile of each arm's utility (exact Beta quantiles)."""
        a, b = self.alpha, self.beta
        if self.goal == "lowest":
            q = -special.betaincinv(a, b, 1.0 - level)
        elif self.goal == "highest":
            q = special.betaincinv(a, b, level)
        else:  # the utility is linear in theta: its quantile is that of theta on the right side
            slope = _variance(a, b + 1) - _variance(a + 1, b)
            theta_q = np.where(slope >= 0, special.betaincinv(a, b, level), special.betaincinv(a, b, 1.0 - level))
            q = self._utility_of_theta(theta_q)
        return np.where(self.valid, q, -np.inf)

    def fantasize(self, arm: int, item_bin: int | None = None) -> BetaArms:
        """The posterior after one more label of ``arm`` with its expected outcome."""
        mean = self.alpha[arm] / (self.alpha[arm] + self.beta[arm])
        alpha, beta = self.alpha.copy(), self.beta.copy()
        alpha[arm] += mean
        beta[arm] += 1.0 - mean
        return replace(self, alpha=alpha, beta=beta)


@dataclass(frozen=True, eq=False)
class CalibrationArms:
    """Beta posteriors per (predicted class, confidence bin) and the classwise ECE.

    Parameters
    ----------
    alpha, beta : ndarray, shape (K, B)
    weight : ndarray, shape (K, B)
        Share of class k's pool items in bin b (rows sum to one for valid classes).
    score : ndarray, shape (K, B)
        Mean confidence of class k's pool items in bin b (bin middle where the bin is empty).
    valid : ndarray of bool, shape (K,)

    Examples
    --------
    >>> import numpy as np
    >>> arms = CalibrationArms(np.array([[1e6, 1.0]]), np.array([[1.0, 1e6]]), np.array([[0.5, 0.5]]),
    ...                        np.array([[0.9, 0.8]]), np.array([True]))
    >>> arms.metric_mean().round(3).tolist()  # ECE = 0.5 * |1 - 0.9| + 0.5 * |0 - 0.8|
    [0.45]
    """

    alpha: np.ndarray
    beta: np.ndarray
    weight: np.ndarray
    score: np.ndarray
    valid: np.ndarray

    metric_name = "ece"

    @property
    def n_arms(self) -> int:
        return int(self.alpha.shape[0])

    def metric_draws(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Draws of the classwise ECE, shape (n, K) (only bins holding pool items are drawn)."""
        k, n_bins = self.weight.shape
        cells = np.flatnonzero(self.weight.ravel() > 0)
        theta = _beta_by_gamma(rng, self.alpha.ravel()[cells], self.beta.ravel()[cells], n)
        part = self.weight.ravel()[cells] * np.abs(theta - self.score.ravel()[cells])
        owner = cells // n_bins  # non-decreasing: sum the cells of each class with reduceat
        present, starts = np.unique(owner, return_index=True)
        out = np.zeros((n, k))
        if cells.size:
            out[:, present] = np.add.reduceat(part, starts, axis=1)
        return out

    def utility_draws(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return np.where(self.valid, self.metric_draws(n, rng), -np.inf)

    def utility_mean(self) -> np.ndarray:
        return np.where(self.valid, self.metric_mean(), -np.inf)

    def metric_mean(self) -> np.ndarray:
        """Exact posterior mean of the classwise ECE."""
        # E|theta - s| for theta ~ Beta(a, b): closed form through incomplete Beta functions:
        # E|theta - s| = E[theta - s] + 2 E[(s - theta)_+], E[(s - theta)_+] = s F(s; a, b) - m F(s; a + 1, b).
        a, b, s = self.alpha, self.beta, self.score
        m = a / (a + b)
        below = s * special.betainc(a, b, s) - m * special.betainc(a + 1, b, s)
        return np.sum(self.weight * (m - s + 2.0 * below), axis=-1)

    def utility_quantile(self, level: float, rng: np.random.Generator) -> np.ndarray:
        q = np.quantile(self.metric_draws(UCB_DRAWS, rng), min(level, 1.0), axis=0)
        return np.where(self.valid, q, -np.inf)

    def fantasize(self, arm: int, item_bin: int | None = None) -> CalibrationArms:
        if item_bin is None:
            return self
        a, b = self.alpha[arm, item_bin], self.beta[arm, item_bin]
        alpha, beta = self.alpha.copy(), self.beta.copy()
        alpha[arm, item_bin] += a / (a + b)
        beta[arm, item_bin] += b / (a + b)
        return replace(self, alpha=alpha, beta=beta)


@dataclass(frozen=True, eq=False)
class CostArms:
    """Dirichlet posteriors of the true class given each predicted class, and the expected cost.

    Columns with equal cost in a row are merged (the aggregation property of the Dirichlet),
    so a 0-1 cost matrix costs two Gamma draws per arm and draw, however many classes.

    Parameters
    ----------
    alpha : ndarray, shape (K, K)
        Posterior Dirichlet parameters, row k for predicted class k.
    cost : ndarray, shape (K, K)
        Cost of predicting row class when the truth is column class.
    valid : ndarray of bool, shape (K,)

    Examples
    --------
    >>> import numpy as np
    >>> arms = CostArms(np.array([[3.0, 1.0], [1.0, 1.0]]), 1 - np.eye(2), np.array([True, True]))
    >>> arms.metric_mean().tolist()
    [0.25, 0.5]
    """

    alpha: np.ndarray
    cost: np.ndarray
    valid: np.ndarray
    groups: tuple[np.ndarray, np.ndarray] | None = None

    metric_name = "cost"

    def __post_init__(self) -> None:
        if self.groups is None:  # computed once; dataclasses.replace (fantasy updates) carries it over
            object.__setattr__(self, "groups", _cost_groups(np.asarray(self.cost, dtype=float)))

    @property
    def n_arms(self) -> int:
        return int(self.alpha.shape[0])

    def _grouped_alpha(self) -> np.ndarray:
        group, values = self.groups
        k, width = values.shape
        flat = (np.arange(k)[:, None] * width + group).ravel()
        return np.bincount(flat, weights=self.alpha.ravel(), minlength=k * width).reshape(k, width)

    def metric_draws(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Draws of the expected cost of each predicted class, shape (n, K)."""
        alpha = self._grouped_alpha()
        values = self.groups[1]
        g = rng.standard_gamma(np.broadcast_to(alpha, (n, *alpha.shape)))  # Gamma(0) = 0 for padding
        return np.sum(g * values, axis=-1) / g.sum(axis=-1)

    def metric_mean(self) -> np.ndarray:
        return np.sum(self.alpha * self.cost, axis=1) / self.alpha.sum(axis=1)

    def utility_draws(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return np.where(self.valid, self.metric_draws(n, rng), -np.inf)

    def utility_mean(self) -> np.ndarray:
        return np.where(self.valid, self.metric_mean(), -np.inf)

    def utility_quantile(self, level: float, rng: np.random.Generator) -> np.ndarray:
        q = np.quantile(self.metric_draws(UCB_DRAWS, rng), min(level, 1.0), axis=0)
        return np.where(self.valid, q, -np.inf)

    def fantasize(self, arm: int, item_bin: int | None = None) -> CostArms:
        alpha = self.alpha.copy()
        alpha[arm] += alpha[arm] / alpha[arm].sum()
        return replace(self, alpha=alpha)


ArmModel = BetaArms | CalibrationArms | CostArms


def _cost_groups(cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each row, the group index of every column (columns of equal cost share one) and the
    group cost values, padded to the largest number of groups (padding groups get alpha 0)."""
    k = cost.shape[0]
    rows = [np.unique(cost[r], return_inverse=True) for r in range(k)]
    width = max(len(vals) for vals, _ in rows)
    group = np.zeros((k, k), dtype=np.int64)
    values = np.zeros((k, width))
    for r, (vals, inverse) in enumerate(rows):
        group[r] = inverse
        values[r, : len(vals)] = vals
    return group, values


def _class_means(values: np.ndarray, predicted: np.ndarray, k: int, fill: float) -> np.ndarray:
    n = np.bincount(predicted, minlength=k)
    total = np.bincount(predicted, weights=values, minlength=k)
    return np.where(n > 0, total / np.maximum(n, 1), fill)


def build_target_model(
    target: str,
    predicted: np.ndarray,
    confidence: np.ndarray,
    labeled_index: np.ndarray,
    labels: np.ndarray,
    *,
    prior: str = "uniform",
    pseudocount: float = DEFAULT_PSEUDOCOUNT,
    bins: int = DEFAULT_BINS,
    cost: np.ndarray | None = None,
    probs: np.ndarray | None = None,
    n_classes: int | None = None,
) -> ArmModel:
    """The posterior over arms (predicted classes) for a target, from the labels so far.

    Parameters
    ----------
    target : str
        One of :data:`TARGETS`.
    predicted : ndarray of int, shape (N,)
        Predicted class of each pool item.
    confidence : ndarray, shape (N,)
        The model's confidence in its prediction.
    labeled_index : ndarray of int
        Pool indices of the labeled items.
    labels : ndarray of int
        Their true class indices.
    prior : {"uniform", "informed"}
        Uniform: Beta(pc/2, pc/2) on each accuracy (and, for cost, a Dirichlet whose
        accuracy margin is that Beta, the remaining mass spread evenly over the other
        classes). Informed: Beta(pc * s_k, pc * (1 - s_k)) with s_k the model's mean
        confidence of predicted class k over the pool (per bin for calibration; for cost
        the Dirichlet mean is the model's mean probability vector when ``probs`` is given).
    pseudocount : float
        The prior strength pc.
    bins : int
        Equal-width confidence bins inside each class (``most-miscalibrated``).
    cost : ndarray, shape (K, K), optional
        Cost matrix for ``highest-cost`` (default 0-1: one minus the accuracy).
    probs : ndarray, shape (N, K), optional
        Full probability vectors (informed Dirichlet prior).
    n_classes : int, optional
        K (default: from ``cost``, ``probs`` or the largest predicted index); pass it when
        the last classes are never predicted.

    Returns
    -------
    BetaArms, CalibrationArms or CostArms

    Examples
    --------
    >>> import numpy as np
    >>> m = build_target_model("least-accurate", np.array([0, 0, 1]), np.array([0.9, 0.8, 0.7]),
    ...                        np.array([0, 2]), np.array([0, 0]))
    >>> m.alpha.tolist(), m.beta.tolist()
    ([2.0, 1.0], [1.0, 2.0])
    """
    if target not in TARGETS:
        raise ConfigError(f"unknown target {target!r} (choose from {', '.join(TARGETS)})")
    pred = np.asarray(predicted, dtype=np.int64)
    conf = np.asarray(confidence, dtype=float)
    if n_classes is not None:
        k = int(n_classes)
    elif cost is not None:
        k = int(np.shape(cost)[0])
    elif probs is not None:
        k = int(np.shape(probs)[1])
    else:
        k = int(pred.max()) + 1
    idx = np.asarray(labeled_index, dtype=np.int64)
    y = np.asarray(labels, dtype=np.int64)
    pool_n = np.bincount(pred, minlength=k)
    valid = pool_n > 0
    mean_conf = _class_means(conf, pred, k, 0.5)
    arm = pred[idx]
    right = (y == arm).astype(float)

    if target in ("least-accurate", "most-accurate", "estimation"):
        a0, b0 = beta_prior(prior, k, pseudocount, mean=mean_conf if prior == "informed" else None)
        n = np.bincount(arm, minlength=k).astype(float)
        s = np.bincount(arm, weights=right, minlength=k)
        goal = {"least-accurate": "lowest", "most-accurate": "highest", "estimation": "estimation"}[target]
        return BetaArms(a0 + s, b0 + n - s, valid, goal)

    if target == "most-miscalibrated":
        edges = bin_edges(bins=bins)
        n_bins = edges.size - 1
        cell = pred * n_bins + bin_index(conf, edges)
        cell_n = np.bincount(cell, minlength=k * n_bins).reshape(k, n_bins)
        cell_sum = np.bincount(cell, weights=conf, minlength=k * n_bins).reshape(k, n_bins)
        middle = np.broadcast_to((edges[:-1] + edges[1:]) / 2, (k, n_bins))
        score = np.where(cell_n > 0, cell_sum / np.maximum(cell_n, 1), middle)
        weight = cell_n / np.maximum(pool_n, 1)[:, None]
        if prior == "informed":
            a0, b0 = beta_prior("informed", k * n_bins, pseudocount, mean=score.ravel())
        else:
            a0, b0 = beta_prior(prior, k * n_bins, pseudocount)
        lab_cell = cell[idx]
        n = np.bincount(lab_cell, minlength=k * n_bins).astype(float)
        s = np.bincount(lab_cell, weights=right, minlength=k * n_bins)
        return CalibrationArms((a0 + s).reshape(k, n_bins), (b0 + n - s).reshape(k, n_bins), weight, score, valid)

    # highest-cost
    c = np.asarray(cost, dtype=float) if cost is not None else 1.0 - np.eye(k)
    pc = float(pseudocount)
    if not np.isfinite(pc) or pc <= 0:
        raise ConfigError(f"the pseudocount must be positive, got {pseudocount}")
    if prior == "uniform":
        diag = np.full(k, 0.5)
    elif prior == "informed":
        diag = np.clip(mean_conf, 1e-3, 1 - 1e-3)
    else:
        raise ConfigError(f"unknown prior {prior!r} (choose 'uniform' or 'informed')")
    off = (1.0 - diag) / max(k - 1, 1)
    mean_vec = np.broadcast_to(off[:, None], (k, k)).copy()
    mean_vec[np.arange(k), np.arange(k)] = diag
    if prior == "informed" and probs is not None:
        p = np.asarray(probs, dtype=float)
        sums = np.stack([np.bincount(pred, weights=p[:, j], minlength=k) for j in range(k)], axis=1)
        mean_p = sums / np.maximum(pool_n, 1)[:, None]
        mean_vec = np.where(valid[:, None], mean_p, mean_vec)
        mean_vec = np.clip(mean_vec, 1e-3 / k, None)
        mean_vec /= mean_vec.sum(axis=1, keepdims=True)
    alpha = pc * mean_vec
    np.add.at(alpha, (arm, y), 1.0)
    return CostArms(alpha, c, valid)


def _argmax_random_ties(values: np.ndarray, rng: np.random.Generator) -> int:
    best = np.flatnonzero(values == values.max())
    return int(best[0] if best.size == 1 else rng.choice(best))


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
      best posterior mean utility.

    The deterministic rules (``bayes-ucb`` and the greedy step of ``epsilon-greedy``) update
    the posterior with the expected outcome of each slot (:meth:`fantasize`), so a batch
    spreads over the arms the way sequential choices would. Ties break at random.

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
    if strategy not in STRATEGIES:
        raise ConfigError(f"unknown strategy {strategy!r} (choose from {', '.join(STRATEGIES)})")
    pred = np.asarray(predicted, dtype=np.int64)
    k = model.n_arms
    free = np.asarray(available, dtype=bool).copy()
    left = np.bincount(pred[free], minlength=k)
    chosen: list[int] = []
    queue: list[int] = []
    while len(chosen) < batch_size and left.sum() > 0:
        open_arms = left > 0
        if strategy == "random-item":
            arm = int(rng.choice(k, p=left / left.sum()))
        elif strategy == "random-arm":
            arm = int(rng.choice(np.flatnonzero(open_arms)))
        elif strategy == "ts":
            u = np.where(open_arms, model.utility_draws(1, rng)[0], -np.inf)
            arm = _argmax_random_ties(u, rng)
        elif strategy == "ttts":
            u = np.where(open_arms, model.utility_draws(1, rng)[0], -np.inf)
            arm = _argmax_random_ties(u, rng)
            if open_arms.sum() > 1 and rng.random() >= ttts_beta:
                # the challenger: the leader of the first further draw led by another arm (up to
                # TTTS_DRAWS draws; if the leader wins them all, the best other arm of the last one)
                leader = arm
                draws = np.where(open_arms, model.utility_draws(TTTS_DRAWS, rng), -np.inf)
                leaders = draws.argmax(axis=1)
                others = np.flatnonzero(leaders != leader)
                if others.size:
                    arm = int(leaders[others[0]])
                else:
                    last = draws[-1].copy()
                    last[leader] = -np.inf
                    arm = _argmax_random_ties(last, rng)
        elif strategy == "mpts":
            queue = [a for a in queue if left[a] > 0]
            if not queue:
                u = np.where(open_arms, model.utility_draws(1, rng)[0], -np.inf)
                m = int(min(top_m, open_arms.sum()))
                order = np.argsort(-u, kind="stable")
                queue = [int(a) for a in order[:m]]
            arm = queue.pop(0)
        elif strategy == "bayes-ucb":
            t = n_labeled + len(chosen) + 1
            q = np.where(open_arms, model.utility_quantile(1.0 - 1.0 / (t + 1), rng), -np.inf)
            arm = _argmax_random_ties(q, rng)
        else:  # epsilon-greedy
            if rng.random() < epsilon:
                arm = int(rng.choice(np.flatnonzero(open_arms)))
            else:
                arm = _argmax_random_ties(np.where(open_arms, model.utility_mean(), -np.inf), rng)
        items = np.flatnonzero(free & (pred == arm))
        item = int(items[rng.integers(items.size)])
        free[item] = False
        left[arm] -= 1
        chosen.append(item)
        if strategy in ("bayes-ucb", "epsilon-greedy"):
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

