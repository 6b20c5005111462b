"""Sufficient statistics per environment (x predicted class, or x confidence bin), from the counting layer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pbassess.constants import DEFAULT_BINS
from pbassess.errors import DataError
from pbassess.stats import bin_edges

__all__ = ["CalibrationCounts", "EnvironmentCounts", "calibration_counts", "environment_counts"]


@dataclass(frozen=True)
class EnvironmentCounts:
    """Sufficient statistics per environment (x predicted class).

    Attributes
    ----------
    by : str
        The group column the environments come from.
    environments : tuple of str
        Environment names (sorted).
    n, k : ndarray of int, shape (E,) or (E, K)
        Labeled items and correct labeled items per cell.
    n_items : ndarray of int, same shape
        All items (labeled or not) per cell.
    mean_confidence : ndarray of float, same shape
        Mean top-1 confidence of all items per cell (NaN for empty cells).
    classes : tuple of str or None
        Class names when the cells are environment x predicted class.
    observations : pbassess.inference.Observations or None
        The labeled items (flat cell index ``e * K + c``, correct 1/0, item ids) when the pool
        lists them (``None`` for a lazy pool, or counts built by hand).

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_top1(["a", "a", "b", "b"], [0.9, 0.7, 0.8, 0.6], ["a", "b", "b", None],
    ...                           groups={"site": ["x", "x", "y", "y"]})
    >>> c = environment_counts(p, "site")
    >>> isinstance(c, EnvironmentCounts), c.environments, c.n.tolist(), c.k.tolist(), c.n_items.tolist()
    (True, ('x', 'y'), [2, 1], [1, 1], [2, 2])
    >>> c.mean_confidence.round(2).tolist()
    [0.8, 0.7]
    """

    by: str
    environments: tuple[str, ...]
    n: np.ndarray
    k: np.ndarray
    n_items: np.ndarray
    mean_confidence: np.ndarray
    classes: tuple[str, ...] | None = None
    observations: Any = field(default=None, compare=False, repr=False)

    @property
    def per_class(self) -> bool:
        """Whether the cells are environment x predicted class."""
        return self.classes is not None

    @property
    def raw_accuracy(self) -> np.ndarray:
        """k / n per cell (NaN where no item is labeled): the independent point estimate."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.n > 0, self.k / np.maximum(self.n, 1), np.nan)


@dataclass(frozen=True)
class CalibrationCounts:
    """Per-environment, per-bin counts for hierarchical calibration.

    ``n``/``k`` are labeled and correct items per (environment, bin); ``weight`` is each bin's
    share of the environment's whole pool (rows sum to one) and ``score`` the pool's mean
    confidence in the bin (NaN for empty bins). ``observations`` lists the labeled items (flat
    cell ``e * B + b``, correct 1/0, item ids) when the pool lists them (``None`` when lazy).

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_top1(["a"] * 4, [0.6, 0.7, 0.8, 0.95], ["a", "b", "a", None], classes=["a", "b"],
    ...                           groups={"site": ["x", "x", "y", "y"]})
    >>> c = calibration_counts(p, "site", bins=2)
    >>> isinstance(c, CalibrationCounts), c.environments, c.n.tolist(), c.k.tolist()
    (True, ('x', 'y'), [[0, 2], [0, 1]], [[0, 1], [0, 1]])
    >>> c.weight.sum(axis=1).tolist()  # each environment's pool shares sum to one
    [1.0, 1.0]
    """

    by: str
    environments: tuple[str, ...]
    edges: np.ndarray
    n: np.ndarray
    k: np.ndarray
    n_items: np.ndarray
    weight: np.ndarray
    score: np.ndarray
    extra: dict[str, Any] = field(default_factory=dict)
    observations: Any = field(default=None, compare=False, repr=False)

    @property
    def bins(self) -> tuple[str, ...]:
        """Bin labels like ``"0.9-1.0"``."""
        e = self.edges
        return tuple(f"{e[i]:.2f}-{e[i + 1]:.2f}" for i in range(e.size - 1))


def _environments(predictions: Any, by: str, environments: Sequence[str] | None, table: Any) -> tuple[tuple[str, ...], np.ndarray]:
    """Environment names and, per name, its row in the count table (-1: no items)."""
    found = [str(v) for v in table[by].to_numpy().tolist()]
    if environments is None:
        envs = tuple(found)
    else:
        envs = tuple(str(e) for e in environments)
        unknown = sorted(set(found) - set(envs))
        if unknown:
            raise DataError(f"group column {by!r} has value {unknown[0]!r} not among the environments given")
    lookup = {e: i for i, e in enumerate(found)}
    return envs, np.array([lookup.get(e, -1) for e in envs], dtype=np.int64)


def _rows(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``values[rows]`` with zeros for rows -1 (environments without items)."""
    out = np.zeros((rows.size, *values.shape[1:]), dtype=values.dtype)
    out[rows >= 0] = values[rows[rows >= 0]]
    return out


def environment_counts(
    predictions: Any, by: str, *, per_class: bool = False, environments: Sequence[str] | None = None
) -> EnvironmentCounts:
    """Reduce a prediction set to labeled / correct counts per environment (x predicted class).

    Parameters
    ----------
    predictions : Predictions
        The pool; unlabeled items count in ``n_items`` only.
    by : str
        The group column naming each item's environment.
    per_class : bool, default False
        Cells are environment x predicted class.
    environments : sequence of str, optional
        Environment order (default: sorted values of the column); may include environments
        without items.

    Returns
    -------
    EnvironmentCounts

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_top1(["a", "b", "a", "a"], [0.9, 0.8, 0.7, 0.6], ["a", "a", None, "a"],
    ...                           groups={"site": ["x", "x", "y", "y"]})
    >>> c = environment_counts(p, "site")
    >>> c.environments, c.n.tolist(), c.k.tolist(), c.n_items.tolist()
    (('x', 'y'), [2, 1], [1, 1], [2, 2])
    """
    from pbassess.counting import count_cells

    if by not in predictions.groups:
        predictions.group(by)  # the data layer's one-line error for an unknown column
    table = count_cells(predictions, (by, "predicted") if per_class else (by,))
    envs, rows = _environments(predictions, by, environments, table)
    n, k = _rows(table["n"].to_numpy(), rows), _rows(table["correct"].to_numpy(), rows)
    n_items, conf_sum = _rows(table["n_pool"].to_numpy(), rows), _rows(table["score_sum_pool"].to_numpy(), rows)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = np.where(n_items > 0, conf_sum / np.maximum(n_items, 1), np.nan)
    classes = tuple(str(c) for c in predictions.classes) if per_class else None
    return EnvironmentCounts(
        by=by, environments=envs, n=n, k=k, n_items=n_items, mean_confidence=mean_conf, classes=classes,
        observations=_observations(predictions, by, envs, classes),
    )


def _observations(predictions: Any, by: str, envs: Sequence[str], classes: Sequence[str] | None) -> Any:
    """Each labeled item's cell (environment, or environment x predicted class) and correctness; None when lazy."""
    from pbassess.inference import Observations

    def cells(p: Any):
        index = {e: i for i, e in enumerate(envs)}
        env = np.array([index.get(str(v), -1) for v in p.group(by)], dtype=np.int64)
        cell = env if classes is None else np.where(env >= 0, env * len(classes) + np.asarray(p.predicted), -1)
        return cell, p.correct

    return Observations.of_pool(predictions, cells)


def calibration_counts(
    predictions: Any, by: str, *, bins: int | Any = DEFAULT_BINS, environments: Sequence[str] | None = None
) -> CalibrationCounts:
    """Per-environment, per-confidence-bin counts (labeled, correct, pool share, mean score).

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_top1(["a", "a", "a"], [0.95, 0.65, 0.62], ["a", "b", None],
    ...                           classes=["a", "b"], groups={"site": ["x", "x", "x"]})
    >>> c = calibration_counts(p, "site", bins=2)
    >>> c.n.tolist(), c.k.tolist(), c.weight.round(3).tolist()
    ([[0, 2]], [[0, 1]], [[0.0, 1.0]])
    """
    from pbassess.counting import count_cells

    if by not in predictions.groups:
        predictions.group(by)
    edges = bin_edges(bins=bins)
    table = count_cells(predictions, (by, "bin"), bin_edges=edges)
    envs, rows = _environments(predictions, by, environments, table)
    n, k = _rows(table["n"].to_numpy(), rows), _rows(table["correct"].to_numpy(), rows)
    n_items, score_sum = _rows(table["n_pool"].to_numpy(), rows), _rows(table["score_sum_pool"].to_numpy(), rows)
    totals = n_items.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        weight = np.where(totals > 0, n_items / np.maximum(totals, 1), 0.0)
        score = np.where(n_items > 0, score_sum / np.maximum(n_items, 1), np.nan)
    return CalibrationCounts(by=by, environments=envs, edges=edges, n=n, k=k, n_items=n_items, weight=weight,
                             score=score, observations=_bin_observations(predictions, by, envs, edges))


def _bin_observations(predictions: Any, by: str, envs: Sequence[str], edges: np.ndarray) -> Any:
    """Each labeled item's environment x confidence-bin cell and correctness; None when lazy."""
    from pbassess.counting import assign_bins
    from pbassess.inference import Observations

    n_bins = edges.size - 1

    def cells(p: Any):
        index = {e: i for i, e in enumerate(envs)}
        env = np.array([index.get(str(v), -1) for v in p.group(by)], dtype=np.int64)
        return np.where(env >= 0, env * n_bins + assign_bins(p.confidence, edges), -1), p.correct

    return Observations.of_pool(predictions, cells)
