"""The session's posterior over arms (predicted classes): conjugate models held as NumPy arrays.

For each target the posterior of a per-arm metric is conjugate:

* ``least-accurate`` / ``most-accurate`` / ``estimation``: one Beta(a_k, b_k) per predicted class
  for its accuracy theta_k (Beta-binomial) (:class:`BetaArms`).
* ``most-miscalibrated``: one Beta per (predicted class, confidence bin) for the accuracy
  theta_kb of the items of class k whose confidence falls in bin b; the classwise ECE is
  ``ECE_k = sum_b w_kb |theta_kb - s_kb|`` with w_kb the share of class k's pool items in
  bin b and s_kb their mean confidence (:class:`CalibrationArms`).
* ``highest-cost``: one Dirichlet per predicted class over the true class, and the expected
  cost ``C_k = sum_j theta_kj c_kj`` for a cost matrix c (rows predicted, columns true)
  (:class:`CostArms`).

Every model exposes the *utility* of each arm - the quantity the target wants largest
(minus the accuracy for ``least-accurate``, the ECE, the cost, or for ``estimation`` the drop
of the posterior variance of theta_k that one more label brings) - as posterior draws, mean
and quantile, and a *fantasy* update (the expected effect of one more label, used to spread
a batch of a deterministic rule over several arms).

:func:`build_target_model` starts from :func:`pbassess.active.model.target_prior`, the same
prior the simulation engine starts from, and adds the session's label counts.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy import special

from pbassess.active.model import (
    ACCURACY_TARGETS,
    check_target,
    pool_cells,
    target_prior,
)
from pbassess.constants import DEFAULT_BINS, DEFAULT_PSEUDOCOUNT
from pbassess.counting import cell_codes
from pbassess.counting import cell_counts as core_counts
from pbassess.errors import ConfigError
from pbassess.stats import bin_index

__all__ = ["ArmModel", "BetaArms", "CalibrationArms", "CostArms", "build_target_model", "eb_refit"]

#: Monte Carlo draws used for the quantiles of Bayes-UCB when no closed form exists.
UCB_DRAWS: int = 2000

#: Labels between two refits of the empirical-Bayes prior (as in the engine's default).
EB_EVERY: int = 100


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
        width = values.shape[1]
        return core_counts(group, width, np.asarray(self.alpha, dtype=float))   # one row per class

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



def eb_refit(successes: np.ndarray, failures: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Method-of-moments fit of one Beta(mu tau, (1 - mu) tau) shared by the classes (the engine's ``refit_eb_prior``).

    mu is the pooled rate; tau comes from the spread of the classes' rates beyond binomial noise,
    clipped to [1, 1000]. Returns the prior (a, b) of every class, or None with fewer than two
    labeled classes (the prior stays as it was).

    Examples
    --------
    >>> import numpy as np
    >>> a, b = eb_refit(np.array([20.0, 80.0]), np.array([80.0, 20.0]))
    >>> round(float(a[0] / (a[0] + b[0])), 3)
    0.5
    """
    s = np.asarray(successes, dtype=float)
    f = np.asarray(failures, dtype=float)
    n = s + f
    if n.sum() <= 0:
        return None
    mu = min(max(s.sum() / n.sum(), 1e-3), 1.0 - 1e-3)
    seen = n > 0
    if seen.sum() < 2:
        return None
    p = s[seen] / n[seen]
    noise = np.sum(mu * (1.0 - mu) / n[seen])
    cnt = int(seen.sum())
    var_between = max(np.sum(p * p) / cnt - (np.sum(p) / cnt) ** 2 - noise / cnt, 1e-5)
    tau = min(max(mu * (1.0 - mu) / var_between - 1.0, 1.0), 1000.0)
    return np.full(s.size, mu * tau), np.full(s.size, (1.0 - mu) * tau)


def _labeled_counts(pred: np.ndarray, conf: np.ndarray, y: np.ndarray, k: int, by: tuple[str, ...],
                    edges: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Labels and correct labels per cell of the labeled items (cells as in :func:`pbassess.counting.count_cells`).

    The NumPy counting core here, not ``count_cells``: choosing a batch must stay fast in a fresh
    process (building the first xarray Dataset imports dask, ~1.5 s), and these integer counts are
    the same either way (``tests/active/test_model.py`` checks it). The session's reported counts
    (:func:`pbassess.active.session_result.session_posterior`) do come from ``count_cells``.
    """
    if by == ("predicted",):
        cell, size = pred, k
    elif by == ("predicted", "bin"):
        n_bins = np.asarray(edges).size - 1
        cell, size = cell_codes([pred, bin_index(conf, edges)], [k, n_bins]), (k, n_bins)
    else:  # ("predicted", "true"): the confusion counts
        cell, size = cell_codes([pred, y], [k, k]), (k, k)
    total = int(np.prod(size))
    n = core_counts(cell, total).astype(float).reshape(size)
    right = core_counts(cell, total, (y == pred)).astype(float).reshape(size)
    return n, right


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
    cost_matrix: np.ndarray | None = None,
    probs: np.ndarray | None = None,
    n_classes: int | None = None,
    cost: np.ndarray | None = None,
) -> ArmModel:
    """The posterior over arms (predicted classes) for a target, from the labels so far.

    Parameters
    ----------
    target : str
        One of :data:`pbassess.active.model.TARGETS`.
    predicted : ndarray of int, shape (N,)
        Predicted class of each pool item.
    confidence : ndarray, shape (N,)
        The model's confidence in its prediction.
    labeled_index : ndarray of int
        Pool indices of the labeled items, in the order they were labeled.
    labels : ndarray of int
        Their true class indices.
    prior : str
        One of :data:`pbassess.active.model.PRIORS`, built by
        :func:`pbassess.active.model.target_prior` (the engine's prior): ``uniform`` Beta(pc/2,
        pc/2) per accuracy (per bin for calibration) and pc/K in every cell of the cost
        Dirichlet; ``informed`` from the model's confidences (the mean probability vector for
        cost when ``probs`` is given); ``eb`` (accuracy targets and two-level costs) the uniform
        prior, refitted across classes from the first 100 j labels once 100 j labels are in (as
        the engine does every 100 labels).
    pseudocount : float
        The prior strength pc.
    bins : int
        Equal-width confidence bins inside each class (``most-miscalibrated``).
    cost_matrix : ndarray, shape (K, K), optional
        Cost matrix for ``highest-cost`` (default 0-1); ``cost=`` is the old spelling.
    probs : ndarray, shape (N, K), optional
        Full probability vectors (informed Dirichlet prior).
    n_classes : int, optional
        K (default: from the cost matrix, ``probs`` or the largest predicted index).

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
    check_target(target)
    if cost is not None and cost_matrix is not None:
        raise ConfigError("pass the cost matrix once, as cost_matrix= (cost= is its old spelling)")
    cmat = cost_matrix if cost_matrix is not None else cost
    pred = np.asarray(predicted, dtype=np.int64)
    conf = np.asarray(confidence, dtype=float)
    k = _n_classes(n_classes, cmat, probs, pred)
    idx = np.asarray(labeled_index, dtype=np.int64)
    y = np.asarray(labels, dtype=np.int64)
    cells = pool_cells(pred, conf, k, bins=bins, probs=probs)
    start = target_prior(target, prior, cells, pseudocount=pseudocount)
    valid = cells.n > 0
    arm, lab_conf = pred[idx], conf[idx]
    if target in ACCURACY_TARGETS:
        n, s = _labeled_counts(arm, lab_conf, y, k, ("predicted",))
        a0, b0 = start.a, start.b
        if prior == "eb" and idx.size >= EB_EVERY:
            first = idx.size - idx.size % EB_EVERY
            n_fit, s_fit = _labeled_counts(arm[:first], lab_conf[:first], y[:first], k, ("predicted",))
            fitted = eb_refit(s_fit, n_fit - s_fit)
            if fitted is not None:
                a0, b0 = fitted
        goal = {"least-accurate": "lowest", "most-accurate": "highest", "estimation": "estimation"}[target]
        return BetaArms(a0 + s, b0 + n - s, valid, goal)
    if target == "most-miscalibrated":  # (target_prior refuses 'eb' here, as the engine does)
        n, s = _labeled_counts(arm, lab_conf, y, k, ("predicted", "bin"), edges=cells.edges)
        return CalibrationArms(start.a + s, start.b + n - s, cells.bin_weight, cells.bin_confidence, valid)
    c = np.asarray(cmat, dtype=float) if cmat is not None else 1.0 - np.eye(k)
    confusion, _ = _labeled_counts(arm, lab_conf, y, k, ("predicted", "true"))
    alpha = _eb_cost_prior(start.alpha, c, arm, y) if prior == "eb" else start.alpha
    return CostArms(alpha + confusion, c, valid)


def _eb_cost_prior(alpha0: np.ndarray, cost: np.ndarray, arm: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Empirical Bayes for a two-level cost matrix, as the engine runs it: one shared Beta on P(low cost level).

    Refitted from the first 100 j labels (:func:`eb_refit` on low-level "successes"); each row's
    level total is spread evenly over the row's cells of that level (the uniform prior's split),
    so the aggregated Beta per class is the engine's.
    """
    levels = np.unique(cost)
    rows_ok = all(np.array_equal(np.unique(row), levels) for row in cost)
    if levels.size != 2 or not rows_ok:
        raise ConfigError("the empirical-Bayes prior ('eb') needs a two-level cost matrix (e.g. 0-1)")
    first = y.size - y.size % EB_EVERY
    if first == 0:
        return alpha0
    k = cost.shape[0]
    low = cost[arm[:first], y[:first]] == levels[0]
    successes = core_counts(arm[:first], k, low).astype(float)
    fitted = eb_refit(successes, core_counts(arm[:first], k) - successes)
    if fitted is None:
        return alpha0
    is_low = cost == levels[0]
    n_low = is_low.sum(axis=1)
    return np.where(is_low, (fitted[0] / n_low)[:, None], (fitted[1] / (k - n_low))[:, None])


def _n_classes(n_classes: Any, cost: Any, probs: Any, pred: np.ndarray) -> int:
    if n_classes is not None:
        return int(n_classes)
    if cost is not None:
        return int(np.shape(cost)[0])
    if probs is not None:
        return int(np.shape(probs)[1])
    return int(pred.max()) + 1
