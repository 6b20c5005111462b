"""Compiled, batched active-assessment engine: R independent replicate runs in one call.

This is the fast conjugate path behind :func:`pbassess.active.experiment.simulate`. It never
sees xarray or :class:`~pbassess.data.Predictions`: :mod:`pbassess.active.targets` reduces a pool
to a few flat arrays (:class:`EngineInputs`) and this module runs every replicate to the end
inside one numba kernel, ``prange`` over runs (each run is owned by one thread from start to
finish, so the result does not depend on the number of threads).

Choice of compiler
------------------
Both were measured on the 2-core machine for TS on CIFAR-100 (100 runs x 10,000 labels):

* PyTensor, numba backend (``mode="NUMBA"``; the C backend is the same): one compiled step that
  draws Beta(a, b) for all (100 runs, 100 arms) and takes the argmin costs 1.04 ms per call, i.e.
  10.4 s for the draws alone (8.6 s compile); one call per run per label costs 131 us of
  dispatch and RNG handling, 131 s per 10^6 labels. A graph of array operations has to redraw
  all K arms at every label and cannot express the lazy sampler below.
* numba (this module): the whole run - pre-shuffle, posterior draws, bookkeeping and the
  evaluation every L labels - lives in one compiled loop with no Python per label: 0.8 s of
  CPU for the same experiment (``benchmarks/active.py``).

numba it is. Kernels use ``cache=True``: the ~20 s compile is paid once per machine, later
processes load the cached machine code in about a second.

Algorithm (why it is fast, and why it stays exact)
--------------------------------------------------
* **Pool in top-1 form, pre-shuffled.** Sampling without replacement inside a predicted
  class is a uniform random permutation of that class's items, drawn once per run
  (Fisher-Yates on its segment); the labels of arm k are then a prefix of its shuffled list
  and its counts are running sums. ``random-item`` is a uniform permutation of the pool.
* **Lazy exact Thompson sampling for Beta-scored targets** (least / most accurate, 0-1
  highest cost, estimation's ranking). TS needs only the m smallest of K independent Beta
  draws, not all K values. Think of arm k's draw as F_k^{-1}(U_k) with U_k uniform. Each arm
  keeps a small table of its posterior CDF at points x_j = mean + z_j sd with the *exact* values
  F_j = I_{x_j}(a, b) (regularised incomplete beta; after a label they move exactly by
  I_x(a+1, b) = I_x(a, b) - D/a, I_x(a, b+1) = I_x(a, b) + D/b, D = x^a (1-x)^b / B(a, b);
  the table is rebuilt when the arm's count doubles or the posterior drifts off it).
  Comparing U_k with the F_j locates the draw in a bin [x_j, x_{j+1}) at the cost of one
  uniform; its exact value - a draw of the Beta truncated to that bin, by exact rejection
  (truncated-exponential proposal on the chord of the concave log-density with a curvature
  squeeze, or power-law envelopes in the tails) - is needed only if the bin can hold one of the
  m smallest values. Per TS draw:

  1. arms whose U_k falls below their key point l_k (tail mass p_k <= P, P = 0.05) are found by
     Poisson thinning (geometric jumps of rate P through the active arms, accept with p_k / P):
     O(K P) work, not O(K);
  2. the other arms are visited in increasing order of l_k (a sorted array kept by insertion
     when one key moves); the walk stops at the first arm whose key is above the m-th smallest
     bin upper edge found so far, since no later arm can go below it;
  3. exact in-bin values are drawn in increasing order of the bins' lower edges, only while a
     lower edge is below the running m-th smallest value.

  Every value that is drawn has exactly its posterior law and every value that is skipped is
  provably not among the m smallest, so the chosen arms have exactly TS's law (the tests
  compare the lazy choice with brute-force draws and every truncated sampler with its CDF).
  After the first labels only the few arms whose posterior reaches the current minimum are
  touched: ~12 table look-ups and ~1.7 exact draws per label on CIFAR-100 instead of 100 draws.
* **Other targets** (classwise ECE with bins inside each class; expected cost under a
  Dirichlet over cost levels - true classes of equal cost are merged, which is exact by the
  aggregation property of the Dirichlet) draw every active arm's components per step with an
  inlined Marsaglia-Tsang Gamma sampler.
* **Random numbers**: xoshiro256** per run, seeded from ``numpy.random.SeedSequence(seed)``
  so run r is the same whatever R, threads or strategy (strategies share the in-class
  shuffles of run r: paired comparisons).
* **Evaluation** every L labels inside the kernel: the posterior-mean ranking of the arms
  (for ECE: the ECE of the posterior-mean bin accuracies, as in the paper) against the true
  top-m set gives the MRR (each true top-m arm's rank counts only the
  non-top-m arms ahead of it), success (MRR = 1, i.e. the estimated top-m set is the true
  one) and agreement (the share of the true top-m set among the estimated top m: partial
  credit where success is all or nothing; the two coincide for m = 1), plus the mean absolute
  error of the posterior-mean metric.

All kernels take ``float64``/``int64`` arrays; targets minimise a score (a "most" target is
turned into a "least" one by :mod:`pbassess.active.targets`).

Modules: :mod:`~pbassess.active.rng` (xoshiro256** and exact samplers),
:mod:`~pbassess.active.special` (incomplete beta and its inverse), :mod:`~pbassess.active.lazy_ts`
(the lazy exact Thompson sampler), :mod:`~pbassess.active.scores` (per-arm scores and the
evaluation), :mod:`~pbassess.active.kernels` (the run loop, ``prange`` over runs); this module
is the Python side.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from pbassess.active.kernels import run_replicates
from pbassess.active.special import betainc, betaincinv
from pbassess.active.strategies import STRATEGY_CODES
from pbassess.errors import ConfigError

__all__ = [
    "KIND_BETA", "KIND_DIRICHLET", "KIND_ECE", "STRATEGY_CODES", "EngineInputs", "EngineOutput", "betainc",
    "betaincinv", "engine_seed", "run_engine", "seed_states",
]

#: Target model kinds (score minimised by the kernel).
KIND_BETA, KIND_ECE, KIND_DIRICHLET = 0, 1, 2


@dataclass(frozen=True)
class EngineInputs:
    """A pool reduced to the flat arrays the kernel needs (built by :mod:`pbassess.active.targets`).

    Attributes
    ----------
    kind : int
        :data:`KIND_BETA`, :data:`KIND_ECE` or :data:`KIND_DIRICHLET`.
    arm_start : int64 (K + 1,)
        Items of arm k are ``arm_start[k]:arm_start[k+1]`` in the arm-sorted item order.
    item_cell : int64 (N,)
        Component of the arm's model a label of the item updates (bin, cost level; 0 for Beta).
    item_success : bool (N,)
        Whether the label is a "success" of a Beta component (the minimised Beta's alpha grows).
    prior_a, prior_b : float64 (K, C)
        Beta parameters of each component (``prior_b`` unused for Dirichlet: ``prior_a`` are
        the concentrations).
    n_cells : int64 (K,)
        Components in use per arm.
    weight, score : float64 (K, C)
        ECE: bin weights w_kb and mean confidences s_kb; Dirichlet: ``weight`` holds the cost of
        each level.
    truth : float64 (K,)
        The true (full-pool) score of each arm, in the minimised orientation.
    true_top : bool (K,)
        The true top-m set.
    estimation : bool
        Whether index strategies use the expected variance drop (the estimation target).
    empirical_bayes : bool
        Whether the (Beta) prior is refitted across classes during the run.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.active.targets import build_inputs
    >>> p = Predictions.from_top1([0, 0, 1, 1], [0.9, 0.8, 0.7, 0.6], [0, 1, 1, 1], classes=["a", "b"])
    >>> inputs = build_inputs(p, "least-accurate")
    >>> isinstance(inputs, EngineInputs), inputs.kind == KIND_BETA, inputs.arm_start.tolist(), inputs.item_success.tolist()
    (True, True, [0, 2, 4], [True, False, True, True])
    """

    kind: int
    arm_start: np.ndarray
    item_cell: np.ndarray
    item_success: np.ndarray
    prior_a: np.ndarray
    prior_b: np.ndarray
    n_cells: np.ndarray
    weight: np.ndarray
    score: np.ndarray
    truth: np.ndarray
    true_top: np.ndarray
    top_m: int
    estimation: bool = False
    empirical_bayes: bool = False

    @property
    def n_items(self) -> int:
        """Pool size N."""
        return int(self.arm_start[-1])

    @property
    def n_arms(self) -> int:
        """Number of arms K."""
        return int(self.arm_start.shape[0] - 1)


@dataclass(frozen=True)
class EngineOutput:
    """Per-run curves of one strategy: arrays of shape (runs, logs), and labels per arm (runs, K).

    ``mrr``, ``success`` (the estimated top-m set is the true one), ``error`` (mean absolute error
    of the posterior-mean metric) and ``agreement`` (share of the true top-m set among the
    estimated top m; equals ``success`` when m = 1) at every log point.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.active.targets import build_inputs
    >>> p = Predictions.from_top1([0, 0, 1, 1], [0.9, 0.8, 0.7, 0.6], [0, 1, 1, 1], classes=["a", "b"])
    >>> out = run_engine(build_inputs(p, "least-accurate"), "ts", runs=2, log_every=1)
    >>> isinstance(out, EngineOutput), out.mrr.shape, out.picks.sum(axis=1).tolist()  # every item labeled once
    (True, (2, 4), [4, 4])
    """

    mrr: np.ndarray
    success: np.ndarray
    error: np.ndarray
    picks: np.ndarray
    seconds: float
    agreement: np.ndarray | None = None


def engine_seed(seed: Any) -> int | None:
    """The engine's seed: None (fresh entropy), a non-negative int, or a Generator (one 63-bit draw from it).

    Examples
    --------
    >>> engine_seed(3), engine_seed(None)
    (3, None)
    >>> engine_seed(-1)
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: the seed must be a non-negative integer or a numpy Generator, got -1
    """
    if seed is None:
        return None
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(2**63))
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0:
        return int(seed)
    raise ConfigError(f"the seed must be a non-negative integer or a numpy Generator, got {seed!r}")


def seed_states(seed: int | None, runs: int) -> np.ndarray:
    """Per-run xoshiro256** states from one seed; run r's state does not depend on ``runs``.

    Examples
    --------
    >>> bool((seed_states(1, 5)[:3] == seed_states(1, 3)).all())
    True
    """
    words = np.random.SeedSequence(engine_seed(seed)).generate_state(4 * runs, dtype=np.uint64).reshape(runs, 4)
    words[(words == 0).all(axis=1)] = 1  # the all-zero state is xoshiro's one fixed point
    return words


def run_engine(inputs: EngineInputs, strategy: str, *, runs: int = 100, seed: int | None = None,
               budget: int | None = None, log_every: int = 100, batch_size: int = 1,
               ttts_beta: float = 0.5, epsilon: float = 0.1, ucb_level: float = 0.05,
               tail_cap: float = 0.05, run_offset: int = 0, eb_every: int = 100) -> EngineOutput:
    """Run ``runs`` independent replicates of one strategy to the end of the budget.

    Parameters
    ----------
    inputs : EngineInputs
    strategy : str
        A key of :data:`STRATEGY_CODES`.
    runs : int
        Replicates.
    seed : int or numpy.random.Generator, optional
        Where every run's randomness derives from (default a fresh seed).
    budget : int, optional
        Labels per run (default: the whole pool).
    log_every : int
        L: evaluate after every L labels; ``budget // L`` log points.
    batch_size : int
        Selections per round (the posterior is frozen within a round).
    ttts_beta, epsilon, ucb_level : float
        Top-two TS's probability of keeping the leader; epsilon-greedy's exploration rate;
        Bayes-UCB's lower quantile level (the score is minimised).
    tail_cap : float
        Lazy-TS tuning (largest tail mass below an arm's sort key); any value in (0, 1) gives
        the same law, it only changes the speed.
    eb_every : int
        With an empirical-Bayes prior (``inputs.empirical_bayes``): refit it every this many labels.
    run_offset : int
        Index of the first run (runs ``run_offset .. run_offset + runs - 1`` of ``seed``), so a
        long experiment can be cut into chunks with identical results.

    Returns
    -------
    EngineOutput

    Examples
    --------
    >>> import numpy as np
    >>> from pbassess.active.targets import build_inputs
    >>> from pbassess import Predictions
    >>> p = Predictions.from_top1([0, 0, 1, 1], [0.9, 0.8, 0.7, 0.6], [0, 1, 1, 1], classes=["a", "b"])
    >>> out = run_engine(build_inputs(p, "least-accurate"), "ts", runs=2, log_every=1)
    >>> out.mrr.shape, float(out.mrr[:, -1].min())
    ((2, 4), 1.0)
    """
    code = STRATEGY_CODES[strategy]
    n = inputs.n_items
    budget = n if budget is None else int(min(budget, n))
    n_logs = budget // log_every
    ucb_z = float(_normal_quantile(1.0 - ucb_level))
    t0 = time.perf_counter()
    mrr, success, error, picks, agreement = run_replicates(
        seed_states(seed, run_offset + runs)[run_offset:], code, inputs.kind, bool(inputs.estimation), int(inputs.top_m), int(batch_size),
        int(budget), int(log_every), int(n_logs), inputs.arm_start, inputs.item_cell, inputs.item_success,
        inputs.prior_a, inputs.prior_b, inputs.n_cells, inputs.weight, inputs.score, inputs.true_top,
        inputs.truth, float(ttts_beta), float(epsilon), float(ucb_level), ucb_z, float(tail_cap),
        int(eb_every) if inputs.empirical_bayes else 0,
    )
    return EngineOutput(mrr=mrr, success=success, error=error, picks=picks, seconds=time.perf_counter() - t0,
                        agreement=agreement)


def _normal_quantile(p: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(p))

