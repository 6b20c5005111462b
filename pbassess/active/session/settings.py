"""The settings of a labeling session: validation, numbers, the cost matrix, and the pool they apply to.

A session's settings (target, strategy, prior, batch size, top-m, seed, ...) are checked when
it starts and again when its state file is loaded (:func:`validate_config`); the pool comes
from Predictions, a DataFrame or arrays, a prediction file or a registered name
(:func:`load_pool`), and the cost matrix of target ``highest-cost`` from the one resolver
(:func:`session_cost`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from pbassess.active.model import check_prior, check_target
from pbassess.active.strategies import check_strategy
from pbassess.counting import cell_counts
from pbassess.data.predictions import Predictions
from pbassess.errors import ConfigError, DataError

__all__ = ["as_float", "load_pool", "session_cost", "validate_config"]


def validate_config(cfg: dict[str, Any], pool: Predictions) -> None:
    """Raise ConfigError on any invalid setting (used at start and when loading a state).

    Examples
    --------
    >>> from pbassess import Predictions
    >>> pool = Predictions.from_top1(["a", "b", "c"], [0.9, 0.8, 0.7])
    >>> cfg = {"target": "least-accurate", "strategy": "ts", "prior": "uniform", "batch_size": 0, "top_m": 1,
    ...        "bins": 10, "pseudocount": 2.0, "ttts_beta": 0.5, "epsilon": 0.1, "seed": 0}
    >>> validate_config(cfg, pool)
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: batch_size must be an integer of at least 1, got 0
    """
    check_target(cfg["target"])
    if cfg["strategy"] == "uncertainty":  # active estimation (pbassess.active.session.estimation)
        if cfg["target"] != "estimation":
            raise ConfigError(f"strategy 'uncertainty' serves target 'estimation' only, not {cfg['target']!r}")
    else:
        check_strategy(cfg["strategy"], cfg["target"])
    check_prior(cfg["prior"])
    for key, low in (("batch_size", 1), ("top_m", 1), ("bins", 1)):
        value = cfg[key]
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ConfigError(f"{key} must be an integer of at least {low}, got {value!r}")
    pc = cfg["pseudocount"]
    if isinstance(pc, bool) or not isinstance(pc, (int, float)) or not np.isfinite(pc) or pc <= 0:
        raise ConfigError(f"the pseudocount must be a positive number, got {pc!r}")
    if not 0 < cfg["ttts_beta"] < 1:
        raise ConfigError(f"the top-two TS beta must be strictly between 0 and 1, got {cfg['ttts_beta']!r}")
    if not 0 <= cfg["epsilon"] <= 1:
        raise ConfigError(f"epsilon must lie in [0, 1], got {cfg['epsilon']!r}")
    seed = cfg["seed"]
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ConfigError(f"the seed must be a non-negative integer, got {seed!r}")
    n_arms = int((cell_counts(pool.predicted, pool.n_classes) > 0).sum())
    limit = n_arms if cfg["target"] == "estimation" else n_arms - 1
    if cfg["top_m"] > limit:
        raise ConfigError(f"top_m = {cfg['top_m']} is too large: the pool predicts {n_arms} classes, "
                          f"so top_m must be at most {limit} for target {cfg['target']!r}")
    if cfg["target"] != "highest-cost" and cfg.get("cost_source", "zero-one") not in ("0-1", "zero-one"):
        raise ConfigError(f"a cost matrix only applies to target 'highest-cost', not {cfg['target']!r}")


def as_float(value: Any, what: str) -> float:
    """``value`` as a float, or one ConfigError line naming the setting ``what``.

    Examples
    --------
    >>> as_float("0.5", "epsilon")
    0.5
    >>> as_float(True, "epsilon")
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: epsilon must be a number, got True
    """
    if isinstance(value, bool):
        raise ConfigError(f"{what} must be a number, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{what} must be a number, got {value!r}") from None


def session_cost(cost_matrix: Any, classes: tuple[str, ...]) -> tuple[np.ndarray | None, str]:
    """The session's cost matrix (None for 0-1) and how it is recorded, via the one resolver.

    Examples
    --------
    >>> session_cost(None, ("a", "b"))
    (None, 'zero-one')
    >>> matrix, name = session_cost([[0, 1], [2, 0]], ("a", "b"))
    >>> matrix.tolist(), name
    ([[0.0, 1.0], [2.0, 0.0]], 'user')
    """
    from pbassess.stats.cost import cost_matrix_name, resolve_cost_matrix

    spec = cost_matrix
    name = cost_matrix_name(spec)
    if name == "zero-one":
        return None, name
    return resolve_cost_matrix(spec, classes), name


def load_pool(source: Any, options: Mapping[str, Any] | None) -> tuple[Predictions, str | None]:
    """A pool from Predictions, a DataFrame / arrays, a file path or a registered name; and how to find it again.

    In-memory pools (anything but a path or a name) are not recorded: they are passed again on load.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> pool = Predictions.from_top1(["a", "b"], [0.9, 0.8])
    >>> load_pool(pool, None) == (pool, None)
    True
    >>> load_pool(None, None)
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: no pool given: pass a Predictions object, a prediction file or a registered name
    """
    from pbassess.data.registry import load_data, model_card

    if isinstance(source, Predictions):
        return source, None
    if source is None:
        raise ConfigError("no pool given: pass a Predictions object, a prediction file or a registered name")
    if not isinstance(source, (str, os.PathLike)):
        from pbassess.data import as_predictions

        return as_predictions(source), None
    opts = {k: v for k, v in dict(options or {}).items() if v is not None}
    pool = load_data(source, **opts)
    text = os.fspath(source)
    try:
        model_card(text)
        return pool, text  # a registered name (load_data prefers it over a file of that name)
    except DataError:
        return pool, str(Path(text).resolve())
