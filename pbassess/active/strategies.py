"""Labeling strategies of active assessment (multi-armed bandits over predicted classes).

Every strategy picks a predicted class (an *arm*) and labels the next item of that class;
sampling is without replacement inside each class and exhausted arms drop out. With a batch
size b each round makes b picks from the posterior frozen at the start of the round (for a
labeling team), then reveals the b labels.

==================  ======================================================================
name                rule (for a target minimising a score; "most" targets are mirrored)
==================  ======================================================================
``random-item``     a uniformly random unlabeled item of the pool (the non-active baseline)
``random-arm``      a uniformly random non-empty predicted class
``ts``              Thompson sampling: draw every arm's metric from its posterior, label one
                    of the m most extreme arms of the draw (m = 1: the extreme one)
``ttts``            top-two TS: with probability ``beta`` the TS pick, else redraw until
                    another arm leads (at most 100 redraws)
``mpts``            multiple-play TS for top-m: label all m extreme arms of one draw
``bayes-ucb``       the arm with the most optimistic posterior quantile (level ``ucb_level``,
                    exact Beta quantiles; mean +- z sd for ECE / multi-level cost)
``epsilon-greedy``  with probability ``epsilon`` a random arm, else the best posterior mean
``greedy``          the best posterior mean (for ``estimation``: the largest expected drop of
                    the posterior variance of the class's accuracy)
==================  ======================================================================

The ``estimation`` target has no ranking to sample: it accepts ``random-item``,
``random-arm``, ``greedy`` and ``epsilon-greedy``.

This is the one list of strategies: the engine (:mod:`pbassess.active.kernels`) and the labeling
session (:func:`pbassess.active.select.choose_batch`) both implement every name, with the same
rules (:func:`parse_strategies`, :func:`check_strategy`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pbassess.errors import ConfigError

__all__ = ["ESTIMATION_STRATEGIES", "STRATEGIES", "STRATEGY_CODES", "StrategyOptions", "check_strategy",
           "parse_strategies"]

#: Strategy name -> integer code used inside the compiled kernel.
STRATEGY_CODES: dict[str, int] = {
    "random-item": 0, "random-arm": 1, "ts": 2, "ttts": 3, "mpts": 4, "bayes-ucb": 5, "epsilon-greedy": 6,
    "greedy": 7,
}

#: Strategy names, in display order (``--strategy``), shared by ``simulate`` and the session.
STRATEGIES: tuple[str, ...] = tuple(STRATEGY_CODES)

#: Strategies the ``estimation`` target accepts (it has no ranking to sample).
ESTIMATION_STRATEGIES: tuple[str, ...] = ("random-item", "random-arm", "greedy", "epsilon-greedy")
_ESTIMATION_OK = ESTIMATION_STRATEGIES


@dataclass(frozen=True)
class StrategyOptions:
    """Tuning of the strategies (defaults follow Ji et al., 2021).

    Attributes
    ----------
    batch_size : int
        Picks per round, made from the same posterior.
    ttts_beta : float
        Top-two TS: probability of labeling the leader of the first draw.
    epsilon : float
        Epsilon-greedy exploration rate.
    ucb_level : float
        Bayes-UCB quantile level on the optimistic side (0.05: the 5% quantile of a score
        being minimised).

    Examples
    --------
    >>> StrategyOptions(batch_size=10).batch_size
    10
    """

    batch_size: int = 1
    ttts_beta: float = 0.5
    epsilon: float = 0.1
    ucb_level: float = 0.05

    def __post_init__(self) -> None:
        if int(self.batch_size) != self.batch_size or self.batch_size < 1:
            raise ConfigError(f"batch_size must be a positive integer, got {self.batch_size}")
        if not 0.0 <= self.ttts_beta <= 1.0:
            raise ConfigError(f"ttts_beta must lie in [0, 1], got {self.ttts_beta}")
        if not 0.0 <= self.epsilon <= 1.0:
            raise ConfigError(f"epsilon must lie in [0, 1], got {self.epsilon}")
        if not 0.0 < self.ucb_level < 0.5:
            raise ConfigError(f"ucb_level must lie in (0, 0.5), got {self.ucb_level}")


def parse_strategies(names: str | Iterable[str], target: str = "least-accurate") -> list[str]:
    """Validate strategy names (a comma-separated string or a list) for a target.

    Examples
    --------
    >>> parse_strategies("ts, random-item")
    ['ts', 'random-item']
    """
    items = [n.strip() for n in names.split(",")] if isinstance(names, str) else [str(n).strip() for n in names]
    items = [n for n in items if n]
    if not items:
        raise ConfigError(f"no strategy given (choose from {', '.join(STRATEGIES)})")
    seen: list[str] = []
    for name in items:
        check_strategy(name, target)
        if name not in seen:
            seen.append(name)
    return seen


def check_strategy(name: str, target: str = "least-accurate") -> str:
    """``name`` if it is a strategy that serves ``target``, else a one-line ConfigError.

    Examples
    --------
    >>> check_strategy("greedy", "estimation")
    'greedy'
    """
    if name not in STRATEGY_CODES:
        raise ConfigError(f"unknown strategy {name!r} (choose from {', '.join(STRATEGIES)})")
    if target == "estimation" and name not in _ESTIMATION_OK:
        raise ConfigError(
            f"strategy {name!r} ranks arms, but target 'estimation' has no ranking to sample "
            f"(use {', '.join(_ESTIMATION_OK)})"
        )
    return name
