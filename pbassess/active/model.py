"""The one target model of active assessment, shared by the simulation engine and the labeling session.

Everything that defines *what* is being looked for and *what is believed before any label*
lives here, once:

* :data:`TARGETS` and :func:`target_info` (metric name, direction);
* :data:`PRIORS` and :func:`target_prior`, the only function that builds a prior. The
  engine (:func:`pbassess.active.targets.build_inputs`) restricts it to the predicted classes
  and merges cost levels; the session (:func:`pbassess.active.arms.build_target_model`) adds
  its label counts to it. A test checks that both start from the same prior for every
  target x prior.
* :func:`pool_cells`, the pool's sufficient statistics the priors and the ECE weights are built
  from, and :func:`cell_counts`, through which the engine and the session count cells
  (:func:`pbassess.counting.count_cells`, the project's one cell encoder).

Per target and predicted class k (over all K classes; classes never predicted get a prior too
but are never arms):

==========================  ===============================================================
target                      prior (pc = pseudocount)
==========================  ===============================================================
accuracy targets            Beta(a_k, b_k) on the accuracy theta_k: ``uniform`` Beta(pc/2, pc/2),
(least/most accurate,       ``informed`` Beta(pc s_k, pc (1 - s_k)), s_k the mean confidence of
estimation)                 the items predicted as k
``most-miscalibrated``      one Beta per (class, confidence bin), as above with s_kb the bin's mean
                            confidence; ECE weights w_kb and scores s_kb from the pool
``highest-cost``            Dirichlet(alpha_k) over the true class: ``uniform`` pc/K in every cell
                            (the convention of the paper's code, ``np.ones((K, K)) * pc / K``, and
                            of :func:`pbassess.stats.cost.dirichlet_prior`); ``informed`` pc times
                            the mean probability vector (full probabilities), or in top-1 form
                            pc s_k on the predicted class and pc (1 - s_k) / (K - 1) elsewhere
==========================  ===============================================================

``eb`` (empirical Bayes; Beta-scored targets) starts from the uniform prior and is refitted
across classes during a simulation (:mod:`pbassess.active.kernels`). Other priors can be added
with :func:`register_prior` (e.g. an adaptive prior) and are then accepted everywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from pbassess.constants import DEFAULT_BINS, DEFAULT_PSEUDOCOUNT
from pbassess.errors import ConfigError
from pbassess.stats import beta_prior, bin_edges, check_pseudocount

__all__ = [
    "ACCURACY_TARGETS", "PRIORS", "TARGETS", "PoolCells", "TargetInfo", "TargetPrior", "cell_counts", "check_pseudocount",
    "check_prior", "check_target", "pool_cells", "prior_names", "register_prior", "target_info", "target_prior",
]

#: Target names (``--target``), shared by ``simulate`` and the labeling session.
TARGETS: tuple[str, ...] = ("least-accurate", "most-accurate", "most-miscalibrated", "highest-cost", "estimation")

#: Targets whose model is one Beta per predicted class for its accuracy.
ACCURACY_TARGETS: tuple[str, ...] = ("least-accurate", "most-accurate", "estimation")

#: Prior names (``--prior``); ``eb`` is empirical Bayes across classes (Beta-scored targets).
PRIORS: tuple[str, ...] = ("uniform", "informed", "eb")

_INFO = {
    "least-accurate": ("accuracy", "lowest"),
    "most-accurate": ("accuracy", "highest"),
    "most-miscalibrated": ("classwise ECE", "highest"),
    "highest-cost": ("expected cost", "highest"),
    "estimation": ("accuracy", "lowest"),
}


class TargetInfo(dict):
    """Descriptive facts of a target (metric name, direction) kept with results.

    Examples
    --------
    >>> info = target_info("least-accurate")
    >>> isinstance(info, TargetInfo), info["metric"], info["direction"]
    (True, 'accuracy', 'lowest')
    """


def check_target(target: str) -> str:
    """``target`` if it is one of :data:`TARGETS`, else a one-line ConfigError.

    Examples
    --------
    >>> check_target("least-accurate")
    'least-accurate'
    >>> check_target("best")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: unknown target 'best' (choose from least-accurate, ...)
    """
    if target not in TARGETS:
        raise ConfigError(f"unknown target {target!r} (choose from {', '.join(TARGETS)})")
    return target


def check_prior(prior: str) -> str:
    """``prior`` if it is one of :func:`prior_names`, else a one-line ConfigError.

    Examples
    --------
    >>> check_prior("uniform")
    'uniform'
    """
    if prior not in _BUILDERS:
        raise ConfigError(f"unknown prior {prior!r} (choose from {', '.join(prior_names())})")
    return prior


def prior_names() -> tuple[str, ...]:
    """The built-in :data:`PRIORS` followed by any added with :func:`register_prior`.

    Examples
    --------
    >>> "uniform" in prior_names()
    True
    """
    return tuple(_BUILDERS)


def target_info(target: str) -> TargetInfo:
    """Metric name and direction of a target.

    Examples
    --------
    >>> target_info("most-miscalibrated")["metric"]
    'classwise ECE'
    """
    metric, direction = _INFO[check_target(target)]
    return TargetInfo(target=target, metric=metric, direction=direction)


@dataclass(frozen=True)
class PoolCells:
    """Sufficient statistics of a pool's predictions (no labels): what priors and ECE weights need.

    Attributes
    ----------
    n : int64 (K,)
        Items predicted as each class.
    mean_confidence : float64 (K,)
        Their mean confidence (0.5 where a class is never predicted).
    bin_n, bin_confidence : (K, B)
        Items and mean confidence per (predicted class, confidence bin) (bin middle where empty).
    edges : float64 (B + 1,)
        The confidence bin edges.
    mean_probs : float64 (K, K) or None
        Mean probability vector of the items predicted as each class (NaN rows where none is);
        None in top-1 form.

    Examples
    --------
    >>> cells = pool_cells([0, 0, 1], [0.9, 0.7, 0.6], 3, bins=2)
    >>> isinstance(cells, PoolCells), cells.n.tolist(), cells.edges.tolist()
    (True, [2, 1, 0], [0.0, 0.5, 1.0])
    """

    n: np.ndarray
    mean_confidence: np.ndarray
    bin_n: np.ndarray
    bin_confidence: np.ndarray
    edges: np.ndarray
    mean_probs: np.ndarray | None

    @property
    def n_classes(self) -> int:
        return int(self.n.shape[0])

    @property
    def predicted_classes(self) -> np.ndarray:
        """Classes with at least one item (the arms)."""
        return np.flatnonzero(self.n > 0)

    @property
    def bin_weight(self) -> np.ndarray:
        """w_kb: share of class k's items in bin b (rows sum to one for predicted classes)."""
        return self.bin_n / np.maximum(self.n, 1)[:, None]


def cell_counts(predicted: Any, confidence: Any, n_classes: int, by: tuple[str, ...], *, edges: Any = None,
                labels: Any = None):
    """Counts per cell with :func:`pbassess.counting.count_cells`, the one place cells are encoded.

    ``labels`` (class index, -1 for unlabeled; default: none labeled) are those of the caller -
    for a session the labels given so far, not the pool's own. Returns the ``xarray.Dataset`` of
    ``count_cells`` (``n_pool``, ``score_sum_pool``, ``n``, ``correct``, ``score_sum``).

    Examples
    --------
    >>> c = cell_counts([0, 0, 1], [0.9, 0.7, 0.6], 2, ("predicted",), labels=[0, 1, -1])
    >>> c["n_pool"].values.tolist(), c["n"].values.tolist(), c["correct"].values.tolist()
    ([2, 1], [2, 0], [1, 0])
    """
    import xarray as xr

    from pbassess.counting import count_cells

    pred = np.asarray(predicted, dtype=np.int64)
    lab = np.full(pred.size, -1, dtype=np.int64) if labels is None else np.asarray(labels, dtype=np.int64)
    items = xr.Dataset(
        {"predicted": ("item", pred), "confidence": ("item", np.asarray(confidence, dtype=float)),
         "label": ("item", lab)},
        coords={"class": [str(i) for i in range(int(n_classes))]}, attrs={"name": "pool", "attributes": []},
    )
    return count_cells(items, by, bin_edges=edges)


def _pool_sums(predicted: np.ndarray, confidence: np.ndarray, n_classes: int,
               edges: np.ndarray) -> tuple[np.ndarray, ...]:
    """Items and confidence sums per predicted class and per (class, bin), in floating point.

    Not :func:`cell_counts` (``count_cells``): its exact fixed-point sums differ from these in
    the last bits, and the informed priors built from them would move fixed-seed simulations by
    a rare tie-break (the recorded reference of ``tests/active/test_reference.py`` and the README
    tables). The NumPy counting core's plain float sums are used instead; the integer counts agree
    exactly.
    """
    from pbassess.counting.core import cell_codes
    from pbassess.counting.core import cell_counts as core_counts
    from pbassess.stats import bin_index

    k = n_classes
    n_bins = edges.size - 1
    cell = cell_codes([predicted, bin_index(confidence, edges)], [k, n_bins])
    n = core_counts(predicted, k)
    conf = core_counts(predicted, k, np.asarray(confidence, dtype=float))
    bin_n = core_counts(cell, k * n_bins).reshape(k, n_bins)
    bin_conf = core_counts(cell, k * n_bins, np.asarray(confidence, dtype=float)).reshape(k, n_bins)
    return n, conf, bin_n, bin_conf


def pool_cells(predicted: Any, confidence: Any, n_classes: int, *, bins: int = DEFAULT_BINS,
               probs: Any = None) -> PoolCells:
    """Summarise a pool's predictions for the priors of every target.

    Examples
    --------
    >>> c = pool_cells([0, 0, 1], [0.9, 0.7, 0.6], 3, bins=2)
    >>> c.n.tolist(), c.mean_confidence.round(2).tolist(), c.bin_n.tolist()
    ([2, 1, 0], [0.8, 0.6, 0.5], [[0, 2], [0, 1], [0, 0]])
    """
    from pbassess.stats.cost import mean_probs_by_predicted

    pred = np.asarray(predicted, dtype=np.int64)
    conf = np.asarray(confidence, dtype=float)
    k = int(n_classes)
    edges = bin_edges(bins=bins)
    n, conf_sum, bin_n, bin_sum = _pool_sums(pred, conf, k, edges)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = np.where(n > 0, conf_sum / np.maximum(n, 1), 0.5)
        middle = np.broadcast_to((edges[:-1] + edges[1:]) / 2, bin_n.shape)
        bin_conf = np.where(bin_n > 0, bin_sum / np.maximum(bin_n, 1), middle)
    mean_probs = None if probs is None else mean_probs_by_predicted(pred, probs, k)
    return PoolCells(n=n, mean_confidence=mean_conf, bin_n=bin_n, bin_confidence=bin_conf, edges=edges,
                     mean_probs=mean_probs)


@dataclass(frozen=True)
class TargetPrior:
    """The prior of one target over all K classes (see the module table).

    ``a``, ``b``: Beta parameters, shape (K,) for the accuracy targets and (K, B) per confidence bin
    for ``most-miscalibrated``; ``alpha``: Dirichlet parameters (K, K) for ``highest-cost``
    (rows predicted, columns true). The fields a target does not use are None.

    Examples
    --------
    >>> p = target_prior("least-accurate", "informed", pool_cells([0, 0, 1], [0.9, 0.7, 0.6], 3), pseudocount=10)
    >>> isinstance(p, TargetPrior), p.target, p.a.round(3).tolist(), p.alpha is None
    (True, 'least-accurate', [8.0, 6.0, 5.0], True)
    """

    target: str
    prior: str
    pseudocount: float
    a: np.ndarray | None = None
    b: np.ndarray | None = None
    alpha: np.ndarray | None = None


PriorBuilder = Callable[[str, PoolCells, float], TargetPrior]


def _uniform(target: str, cells: PoolCells, pc: float) -> TargetPrior:
    from pbassess.stats.cost import dirichlet_prior

    k = cells.n_classes
    if target in ACCURACY_TARGETS:
        a, b = beta_prior("uniform", k, pc)
        return TargetPrior(target, "uniform", pc, a=a, b=b)
    if target == "most-miscalibrated":
        a, b = beta_prior("uniform", cells.bin_n.size, pc)
        return TargetPrior(target, "uniform", pc, a=a.reshape(cells.bin_n.shape), b=b.reshape(cells.bin_n.shape))
    return TargetPrior(target, "uniform", pc, alpha=dirichlet_prior("uniform", k, pc))


def _informed(target: str, cells: PoolCells, pc: float) -> TargetPrior:
    from pbassess.stats.cost import dirichlet_prior

    k = cells.n_classes
    if target in ACCURACY_TARGETS:
        a, b = beta_prior("informed", k, pc, mean=cells.mean_confidence)
        return TargetPrior(target, "informed", pc, a=a, b=b)
    if target == "most-miscalibrated":
        shape = cells.bin_n.shape
        a, b = beta_prior("informed", cells.bin_n.size, pc, mean=cells.bin_confidence.ravel())
        return TargetPrior(target, "informed", pc, a=a.reshape(shape), b=b.reshape(shape))
    if cells.mean_probs is not None:
        return TargetPrior(target, "informed", pc, alpha=dirichlet_prior("informed", k, pc, cells.mean_probs))
    s = np.clip(cells.mean_confidence, 1e-3, 1 - 1e-3)
    alpha = np.repeat((pc * (1 - s) / max(k - 1, 1))[:, None], k, axis=1)
    alpha[np.arange(k), np.arange(k)] = pc * s
    return TargetPrior(target, "informed", pc, alpha=alpha)


def _empirical_bayes(target: str, cells: PoolCells, pc: float) -> TargetPrior:
    """Empirical Bayes starts from the uniform prior; the refit happens as labels arrive."""
    if target == "most-miscalibrated":
        raise ConfigError("the empirical-Bayes prior ('eb') is for Beta-scored targets, not most-miscalibrated")
    start = _uniform(target, cells, pc)
    return TargetPrior(target, "eb", pc, a=start.a, b=start.b, alpha=start.alpha)


_BUILDERS: dict[str, PriorBuilder] = {"uniform": _uniform, "informed": _informed, "eb": _empirical_bayes}


def register_prior(name: str, builder: PriorBuilder) -> None:
    """Add a prior under ``name``: ``builder(target, cells, pseudocount) -> TargetPrior``.

    The name joins :func:`prior_names`, so ``simulate`` and the session accept it (the engine
    runs it as a fixed prior; a prior that changes with the labels needs its own kernel step,
    like ``eb``).

    Parameters
    ----------
    name : str
        The prior's name.
    builder : callable
        ``builder(target, cells, pseudocount) -> TargetPrior``.

    Examples
    --------
    >>> register_prior("uniform", _uniform)  # re-registering a builder is allowed
    >>> "uniform" in prior_names()
    True
    """
    if not callable(builder):
        raise ConfigError(f"the builder of prior {name!r} must be callable")
    _BUILDERS[str(name)] = builder


def target_prior(target: str, prior: str, cells: PoolCells, *, pseudocount: float = DEFAULT_PSEUDOCOUNT) -> TargetPrior:
    """The prior of ``target`` under ``prior``: the one place a prior is built (engine and session).

    Parameters
    ----------
    target : str
        One of :data:`TARGETS`.
    prior : str
        One of :data:`PRIORS`.
    cells : PoolCells
        From :func:`pool_cells`.
    pseudocount : float
        The prior strength pc.

    Returns
    -------
    TargetPrior

    Examples
    --------
    >>> cells = pool_cells([0, 0, 1], [0.9, 0.7, 0.6], 3)
    >>> target_prior("highest-cost", "uniform", cells, pseudocount=3).alpha[0].tolist()
    [1.0, 1.0, 1.0]
    >>> p = target_prior("least-accurate", "informed", cells, pseudocount=10)
    >>> p.a.round(3).tolist(), p.b.round(3).tolist()
    ([8.0, 6.0, 5.0], [2.0, 4.0, 5.0])
    """
    check_target(target)
    return _BUILDERS[check_prior(prior)](target, cells, check_pseudocount(pseudocount))
