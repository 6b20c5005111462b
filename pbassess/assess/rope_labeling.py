"""How many labels a two-group ROPE comparison needs: random versus active acquisition (a simulation).

:func:`simulate_rope_labeling` hides the labels of two groups, reveals them one at a time, and
records when the ROPE decision of ``acc_a - acc_b`` first matches the full-data decision;
``active`` labels the group whose next label is expected to move the ROPE probabilities most
(:func:`active_rope_scores`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import special

from pbassess.assess.rope import (
    beta_moments,
    check_rope,
    decision_name,
    rope_decision,
    rope_probabilities_beta,
)
from pbassess.constants import DEFAULT_PSEUDOCOUNT
from pbassess.errors import ConfigError, DataError
from pbassess.results.base import AssessmentResult
from pbassess.stats import as_generator

__all__ = ["RopeLabelingSimulation", "active_rope_scores", "simulate_rope_labeling"]


class RopeLabelingSimulation(AssessmentResult):
    """How many labels a two-group ROPE comparison needs, random vs active acquisition (a result).

    ``posterior`` holds ``match_rate`` and ``group_share`` (dims ``strategy``, ``checkpoint``);
    ``counts`` the labeled items per group; ``save``/``pbassess.load_result`` keep everything.

    Attributes
    ----------
    groups : tuple of str
        The two groups (difference ``a - b``).
    checkpoints : ndarray of int
        Label budgets at which the decision was evaluated.
    match_rate : dict of str to ndarray
        Per strategy, the fraction of runs whose ROPE decision equals the full-data decision
        at each checkpoint.
    labels_needed : dict of str to int or None
        Per strategy, the first checkpoint from which the match rate stays >= ``target``.
    full_decision : str
        ``below``/``inside``/``above``/``undecided`` with all labels.
    full_probabilities : ndarray, shape (3,)
        ROPE probabilities with all labels.
    group_share : dict of str to ndarray
        Per strategy, the mean share of labels taken from group ``a`` at each checkpoint.

    Examples
    --------
    >>> import numpy as np
    >>> from pbassess import Predictions
    >>> rng = np.random.default_rng(0)
    >>> g = np.repeat(["a", "b"], [200, 200])
    >>> right = rng.random(400) < np.where(g == "a", 0.9, 0.6)
    >>> p = Predictions.from_top1(np.where(right, "x", "y"), np.full(400, 0.8), np.full(400, "x"),
    ...                           classes=["x", "y"], groups={"g": g})
    >>> sim = simulate_rope_labeling(p, "g", rope=0.05, n_runs=5, seed=0)
    >>> type(sim).__name__, sim.groups, sim.full_decision, sorted(sim.match_rate)
    ('RopeLabelingSimulation', ('a', 'b'), 'above', ['active', 'random'])
    >>> bool(sim.match_rate["active"][-1] == 1.0)  # with every label, every run makes the full-data decision
    True
    >>> sorted(sim.to_json())[:4]
    ['checkpoints', 'ci_prob', 'diagnostics', 'full_decision']
    """


    metric = "rope-labeling"

    def __init__(self, groups: Sequence[str], rope: float, threshold: float, target: float, checkpoints: Any,
                 match_rate: dict[str, Any], labels_needed: dict[str, int | None], full_decision: str,
                 full_probabilities: Any, n_runs: int, n_items: int, group_sizes: Sequence[int],
                 group_share: dict[str, Any] | None = None, name: str = "") -> None:
        import xarray as xr

        self._set(groups=groups, rope=rope, threshold=threshold, target=target, checkpoints=checkpoints,
                  match_rate=match_rate, labels_needed=labels_needed, full_decision=full_decision,
                  full_probabilities=full_probabilities, n_runs=n_runs, n_items=n_items, group_sizes=group_sizes,
                  group_share=group_share or {}, name=name)
        strategies = list(self.match_rate)
        coords = {"strategy": strategies, "checkpoint": self.checkpoints}
        data = {"match_rate": (("strategy", "checkpoint"), np.array([self.match_rate[s] for s in strategies]))}
        if strategies and all(s in self.group_share for s in strategies):
            data["group_share"] = (("strategy", "checkpoint"), np.array([self.group_share[s] for s in strategies]))
        counts = xr.Dataset({"n": ("group", np.asarray(self.group_sizes, dtype=np.int64))},
                            coords={"group": list(self.groups)})
        super().__init__(xr.Dataset(data, coords=coords), counts,
                         prior={"kind": "uniform", "note": "Beta(pc/2, pc/2) per group"},
                         data_summary={"name": self.name, "n_items": self.n_items, "groups": list(self.groups)},
                         engine="conjugate", options={"rope": self.rope, "threshold": self.threshold,
                                                      "target": self.target, "n_runs": self.n_runs})

    def _set(self, **fields: Any) -> None:
        self.groups = (str(fields["groups"][0]), str(fields["groups"][1]))
        self.rope, self.threshold, self.target = float(fields["rope"]), float(fields["threshold"]), float(fields["target"])
        self.checkpoints = np.asarray(fields["checkpoints"], dtype=np.int64)
        self.match_rate = {str(k): np.asarray(v, dtype=float) for k, v in fields["match_rate"].items()}
        self.labels_needed = {str(k): (None if v is None else int(v)) for k, v in fields["labels_needed"].items()}
        self.full_decision = str(fields["full_decision"])
        self.full_probabilities = np.asarray(fields["full_probabilities"], dtype=float)
        self.n_runs, self.n_items = int(fields["n_runs"]), int(fields["n_items"])
        self.group_sizes = (int(fields["group_sizes"][0]), int(fields["group_sizes"][1]))
        self.group_share = {str(k): np.asarray(v, dtype=float) for k, v in fields["group_share"].items()}
        self.name = str(fields.get("name") or "")

    def _fields(self) -> dict[str, Any]:
        return {"groups": list(self.groups), "rope": self.rope, "threshold": self.threshold, "target": self.target,
                "checkpoints": self.checkpoints.tolist(),
                "match_rate": {k: v.tolist() for k, v in self.match_rate.items()},
                "labels_needed": dict(self.labels_needed), "full_decision": self.full_decision,
                "full_probabilities": self.full_probabilities.tolist(), "n_runs": self.n_runs,
                "n_items": self.n_items, "group_sizes": list(self.group_sizes),
                "group_share": {k: v.tolist() for k, v in self.group_share.items()}, "name": self.name}

    # -- save/load: every field, exactly (JSON keeps floats bit for bit) ------------------
    def _extra_state(self) -> dict[str, Any]:
        return self._fields()

    def _restore(self, state: dict[str, Any], datasets: dict[str, Any]) -> None:
        self._set(**state)

    def to_json(self) -> dict[str, Any]:
        """Every field (``groups``, ``checkpoints``, ``match_rate``, ``labels_needed``, ``full_decision``, ...)
        plus ``metric`` ("rope-labeling"), ``inference``, ``ci_prob``, ``diagnostics`` and ``sentence``."""
        from pbassess._json import to_jsonable

        return to_jsonable(self.with_envelope(self._fields()))

    def summary(self):
        """One row per strategy: labels needed, as a share of the pool, final match rate."""
        import pandas as pd

        return pd.DataFrame([
            {"strategy": s, "labels_needed": self.labels_needed[s],
             "share_of_pool": (self.labels_needed[s] / self.n_items) if self.labels_needed[s] else np.nan,
             "match_rate_at_end": float(self.match_rate[s][-1])}
            for s in self.match_rate
        ])

    def sentence(self) -> str:
        parts = ", ".join(f"{s}: {v if v is not None else 'not reached'}" for s, v in self.labels_needed.items())
        return (f"Labels needed until the ROPE decision ({self.full_decision}, r={self.rope:g}) of "
                f"{self.groups[0]} - {self.groups[1]} matches the full-data one in >= {self.target:.0%} of "
                f"{self.n_runs} runs: {parts} (pool {self.n_items}).")

    def plot(self, **kwargs: Any):
        from pbassess.plots.compare import plot_labeling_curves

        return plot_labeling_curves(self, **kwargs)


def _normal_rope(m: np.ndarray, v: np.ndarray, r: float) -> np.ndarray:
    sd = np.sqrt(np.maximum(v, 1e-300))
    below = special.ndtr((-r - m) / sd)
    above = special.ndtr((m - r) / sd)
    return np.stack([below, 1 - below - above, above], axis=-1)


def active_rope_scores(alpha: np.ndarray, beta: np.ndarray, rope: float) -> np.ndarray:
    """Expected change of the ROPE probabilities from one more label of each group.

    ``alpha``/``beta`` have shape (runs, 2); returns (runs, 2): for group g,
    ``sum_y P(y) * || pi(after y) - pi(now) ||_1`` under a normal approximation of the
    difference of the two Beta posteriors (a cheap one-step look-ahead).

    Examples
    --------
    >>> s = active_rope_scores(np.array([[5.0, 500.0]]), np.array([[5.0, 500.0]]), 0.05)
    >>> bool(s[0, 0] > s[0, 1])
    True
    """
    m, v = beta_moments(alpha, beta)
    now = _normal_rope(m[:, 0] - m[:, 1], v[:, 0] + v[:, 1], rope)
    scores = np.zeros(alpha.shape)
    for g in (0, 1):
        sign = 1.0 if g == 0 else -1.0
        p_correct = m[:, g]
        total = np.zeros(alpha.shape[0])
        for y, p_y in ((1, p_correct), (0, 1 - p_correct)):
            a2 = alpha[:, g] + y
            b2 = beta[:, g] + (1 - y)
            m2, v2 = beta_moments(a2, b2)
            other = 1 - g
            diff = sign * (m2 - m[:, other])
            after = _normal_rope(diff, v2 + v[:, other], rope)
            total += p_y * np.abs(after - now).sum(axis=-1)
        scores[:, g] = total
    return scores


def _random_labels(orders, sizes, checkpoints, rng, taken, succ) -> None:
    """Labels drawn uniformly at random from the two groups' pool: fills ``taken``/``succ`` (runs, checkpoints, 2)."""
    runs = orders[0].shape[0]
    group_seq = np.stack([rng.permutation(np.repeat([0, 1], sizes)) for _ in range(runs)])
    for gi in (0, 1):
        pos = np.cumsum(group_seq == gi, axis=1)  # labels of group gi taken after each step
        cum_out = np.concatenate([np.zeros((runs, 1)), np.cumsum(orders[gi], axis=1)], axis=1)
        cnt = pos[:, checkpoints - 1]
        taken[:, :, gi] = cnt
        succ[:, :, gi] = np.take_along_axis(cum_out, cnt, axis=1)


def _active_labels(orders, sizes, checkpoints, max_labels, prior, rope, taken, succ) -> None:
    """Each label from the group whose next label moves the ROPE probabilities most (:func:`active_rope_scores`)."""
    a0, b0 = prior
    runs = orders[0].shape[0]
    alpha, beta_ = np.full((runs, 2), a0), np.full((runs, 2), b0)
    used = np.zeros((runs, 2), dtype=np.int64)
    ck = 0
    rows = np.arange(runs)
    for step in range(1, max_labels + 1):
        scores = active_rope_scores(alpha, beta_, rope)
        # tie-break (saturated probabilities): the group with fewer labels per item
        scores = scores + 1e-12 * (sizes - used) / sizes
        scores[used >= sizes] = -np.inf
        pick = scores.argmax(axis=1)
        y = np.where(pick == 0, orders[0][rows, np.minimum(used[:, 0], sizes[0] - 1)],
                     orders[1][rows, np.minimum(used[:, 1], sizes[1] - 1)])
        alpha[rows, pick] += y
        beta_[rows, pick] += 1 - y
        used[rows, pick] += 1
        while ck < checkpoints.size and checkpoints[ck] == step:
            taken[:, ck] = used
            succ[:, ck] = alpha - a0
            ck += 1
        if ck >= checkpoints.size:
            break


def simulate_rope_labeling(
    predictions: Any,
    by: str,
    *,
    groups: Sequence[str] | None = None,
    rope: float = 0.02,
    threshold: float = 0.95,
    target: float = 0.95,
    n_runs: int = 20,
    checkpoints: Any = None,
    max_labels: int | None = None,
    strategies: Sequence[str] = ("random", "active"),
    pseudocount: float = DEFAULT_PSEUDOCOUNT,
    seed: Any = None,
) -> RopeLabelingSimulation:
    """Labels needed by random vs active acquisition until the ROPE decision is the full-data one.

    The pool is the labeled items of two groups; their labels are hidden and revealed one at a
    time. The accuracy of each group has a uniform Beta(pc/2, pc/2) prior. At each checkpoint
    the ROPE probabilities of ``acc_a - acc_b`` are computed exactly (quadrature,
    :func:`rope_probabilities_beta`) and the decision is the region with probability >=
    ``threshold`` (else ``undecided``). A run *matches* when its decision equals the decision
    with all labels. ``labels_needed`` is the first checkpoint from which at least ``target``
    of the runs match at every later checkpoint.

    Strategies: ``random`` labels items uniformly at random from the pool; ``active`` labels,
    at each step, an item (at random) of the group whose next label is expected to change the
    ROPE probabilities most (:func:`active_rope_scores`) — i.e. it labels where the ROPE
    decision is most likely to change.

    Parameters
    ----------
    predictions : Predictions
        The pool; only labeled items of the two groups are used.
    by : str
        The group column.
    groups : sequence of two str, optional
        The two groups (default: the column's two labeled groups).
    rope : float
        ROPE half-width of ``acc_a - acc_b``.
    threshold : float
        Probability, in (0.5, 1), a ROPE region needs to be the decision.
    target : float
        Share of runs, in (0, 1], that must match the full-data decision.
    n_runs : int
        Runs per strategy.
    checkpoints : array_like of int, optional
        Label budgets at which the decision is evaluated (default 30 geometric steps from 10).
    max_labels : int, optional
        Largest budget (default all labeled items of the two groups).
    strategies : sequence of {"random", "active"}
    pseudocount : float
        Prior strength pc of the uniform Beta(pc/2, pc/2) priors.
    seed : int or Generator, optional

    Returns
    -------
    RopeLabelingSimulation

    Examples
    --------
    >>> import numpy as np
    >>> from pbassess import Predictions
    >>> rng = np.random.default_rng(0)
    >>> g = np.repeat(["a", "b"], [300, 100])
    >>> correct = rng.random(400) < np.where(g == "a", 0.9, 0.6)
    >>> p = Predictions.from_top1(np.where(correct, "x", "y"), np.full(400, 0.8), np.full(400, "x"),
    ...                           classes=["x", "y"], groups={"g": g})
    >>> sim = simulate_rope_labeling(p, "g", rope=0.05, n_runs=10, seed=1)
    >>> sim.full_decision, sim.labels_needed["active"] <= sim.labels_needed["random"]
    ('above', True)
    """
    rope = check_rope(rope)
    if not 0.5 < threshold < 1:
        raise ConfigError(f"threshold must be in (0.5, 1), got {threshold}")
    if not 0 < target <= 1:
        raise ConfigError(f"target must be in (0, 1], got {target}")
    for s in strategies:
        if s not in ("random", "active"):
            raise ConfigError(f"unknown strategy {s!r} (choose 'random' or 'active')")
    rng = as_generator(seed)
    values = predictions.group(by)
    present = sorted(set(values[predictions.labeled].tolist()))
    names = [str(g) for g in groups] if groups is not None else present
    if len(names) != 2:
        raise DataError(f"the labeling simulation compares exactly two groups of {by!r}; pass groups=[a, b] "
                        f"(labeled groups: {', '.join(present[:8])})")
    for gname in names:
        if gname not in present:
            raise DataError(f"group {gname!r} of {by!r} has no labeled items")
    outcome = [predictions.correct[(values == gname) & predictions.labeled].astype(np.int64) for gname in names]
    sizes = np.array([o.size for o in outcome])
    n_pool = int(sizes.sum())
    pc = float(pseudocount)
    a0 = b0 = pc / 2
    full = rope_probabilities_beta(a0 + outcome[0].sum(), b0 + sizes[0] - outcome[0].sum(),
                                   a0 + outcome[1].sum(), b0 + sizes[1] - outcome[1].sum(), rope)
    full_code = int(rope_decision(full, threshold))
    max_labels = n_pool if max_labels is None else min(int(max_labels), n_pool)
    if checkpoints is None:
        checkpoints = np.unique(np.geomspace(10, max_labels, 30).astype(int))
    checkpoints = np.unique(np.clip(np.asarray(checkpoints, dtype=int), 1, max_labels))
    R = int(n_runs)
    match: dict[str, np.ndarray] = {}
    share: dict[str, np.ndarray] = {}
    for strategy in strategies:
        succ = np.zeros((R, checkpoints.size, 2))
        taken = np.zeros((R, checkpoints.size, 2))
        # Per run, each group's outcomes in a random order.
        orders = [np.stack([rng.permutation(o) for _ in range(R)]) for o in outcome]
        if strategy == "random":
            _random_labels(orders, sizes, checkpoints, rng, taken, succ)
        else:
            _active_labels(orders, sizes, checkpoints, max_labels, (a0, b0), rope, taken, succ)
        probs = rope_probabilities_beta(a0 + succ[..., 0], b0 + taken[..., 0] - succ[..., 0],
                                        a0 + succ[..., 1], b0 + taken[..., 1] - succ[..., 1], rope)
        match[strategy] = (rope_decision(probs, threshold) == full_code).mean(axis=0)
        share[strategy] = (taken[..., 0] / np.maximum(taken.sum(axis=-1), 1)).mean(axis=0)
    needed: dict[str, int | None] = {}
    for strategy, rate in match.items():
        ok = rate >= target
        tail_ok = np.flip(np.cumprod(np.flip(ok)).astype(bool))
        needed[strategy] = int(checkpoints[np.argmax(tail_ok)]) if tail_ok.any() else None
    return RopeLabelingSimulation(
        groups=(names[0], names[1]), rope=rope, threshold=threshold, target=target, checkpoints=checkpoints,
        match_rate=match, labels_needed=needed, full_decision=decision_name(full_code), full_probabilities=full,
        n_runs=R, n_items=n_pool, group_sizes=(int(sizes[0]), int(sizes[1])), group_share=share,
        name=getattr(predictions, "name", ""),
    )
