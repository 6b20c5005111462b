"""Arms: combinations of attribute values, with their labeled and pool counts.

An *arm* is one combination of values of the chosen attribute columns (sex x disability x
...). :func:`count_arms` finds the non-empty arms of a pool and, per arm, the number of
labeled items ``n``, how many of them the model got right (``correct``), the number of pool
items ``pool_n`` and the model's mean confidence over the pool items (a label-free estimate of
the arm's accuracy). When the attributes come as probabilities from attribute classifiers
(``arm_probs``, an items x arms matrix of P(arm | x)), every item counts fractionally.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import xarray as xr

from pbassess.counting import cell_counts
from pbassess.errors import ConfigError, DataError

__all__ = ["CONFIDENCE_POINTS", "ArmCounts", "confidence_points", "count_arms", "unique_rows"]

#: Points per arm summarising its pool items' confidences (the anchored models' calibration map).
CONFIDENCE_POINTS = 8


@dataclass(frozen=True)
class ArmCounts:
    """Sufficient statistics per arm.

    Parameters
    ----------
    attributes, values, n, correct, pool_n, confidence, item_arm, continuous, confidence_points
        The attributes below, in this order (usually built by :func:`count_arms` or
        :meth:`from_arrays`).

    Attributes
    ----------
    attributes : tuple of str
        The attribute columns defining the arms.
    values : ndarray, shape (A, K)
        Attribute values of each arm (one row per arm, one column per attribute).
    n, correct, pool_n : ndarray of float, shape (A,)
        Labeled items, correctly predicted labeled items, and pool items per arm (fractional
        when items belong to arms with probabilities).
    confidence : ndarray of float, shape (A,)
        Mean model confidence over the arm's pool items (NaN for an empty arm).
    item_arm : ndarray of int, shape (N,), optional
        Arm index of each pool item (hard assignment only).
    continuous : tuple of str
        Attributes to be treated as continuous (ordinal) inputs by the smoothing models.
    confidence_points : ndarray of float, shape (A, B), optional
        Per arm, ``B`` equal-mass quantiles of its pool items' confidences
        (:func:`confidence_points`): the anchored models pass them through the calibration
        map and average, so the anchor is the arm's calibrated label-free accuracy. Absent
        (``None``): each arm's mean confidence is its one point.
    labeled_items : tuple of three arrays, optional
        The labeled items of a pool, in pool order: arm index, model confidence and correctness
        (0/1); the anchored model learns its calibration map from them item by item. Dropped by
        :meth:`with_counts` (other counts, other items).

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_binary_scores([.9, .8, .3, .7, .6], [1, 0, 0, 1, None],
    ...                                    groups={"sex": [1, 1, 2, 2, 2]})
    >>> arms = count_arms(p, ["sex"])
    >>> arms.attributes, arms.values[:, 0].tolist()
    (('sex',), [1, 2])
    >>> arms.n.tolist(), arms.correct.tolist(), arms.pool_n.tolist()
    ([2.0, 2.0], [1.0, 2.0], [2.0, 3.0])
    >>> arms.confidence.round(3).tolist()  # mean confidence of the predicted class per arm
    [0.85, 0.667]
    """

    attributes: tuple[str, ...]
    values: np.ndarray
    n: np.ndarray
    correct: np.ndarray
    pool_n: np.ndarray
    confidence: np.ndarray
    item_arm: np.ndarray | None = None
    continuous: tuple[str, ...] = field(default_factory=tuple)
    confidence_points: np.ndarray | None = None
    labeled_items: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    @property
    def n_arms(self) -> int:
        """Number of arms."""
        return int(self.values.shape[0])

    @property
    def global_accuracy(self) -> float:
        """Accuracy over all labeled items (0.5 when nothing is labeled)."""
        total = float(self.n.sum())
        return float(self.correct.sum() / total) if total > 0 else 0.5

    @classmethod
    def from_arrays(cls, n: Any, correct: Any, *, values: Any = None, attributes: Sequence[str] = ("arm",),
                    pool_n: Any = None, confidence: Any = None, continuous: Sequence[str] = (),
                    confidence_points: Any = None) -> ArmCounts:
        """Arm counts given directly (e.g. for simulations).

        Examples
        --------
        >>> a = ArmCounts.from_arrays([1, 20], [1, 15])
        >>> a.n_arms, a.values[:, 0].tolist(), round(a.global_accuracy, 3)
        (2, [0, 1], 0.762)
        """
        n_arr = np.asarray(n, dtype=float).ravel()
        c_arr = np.asarray(correct, dtype=float).ravel()
        if n_arr.shape != c_arr.shape:
            raise DataError(f"n has {n_arr.size} arms but correct has {c_arr.size}")
        if (n_arr < 0).any() or (c_arr < 0).any() or (c_arr > n_arr + 1e-9).any():
            raise DataError("arm counts must satisfy 0 <= correct <= n")
        vals = np.arange(n_arr.size)[:, None] if values is None else np.asarray(values)
        if vals.ndim == 1:
            vals = vals[:, None]
        if vals.shape != (n_arr.size, len(attributes)):
            raise DataError(f"values has shape {vals.shape}, expected ({n_arr.size}, {len(attributes)})")
        pool = n_arr.copy() if pool_n is None else np.asarray(pool_n, dtype=float).ravel()
        conf = np.full(n_arr.size, np.nan) if confidence is None else np.asarray(confidence, dtype=float).ravel()
        points = None
        if confidence_points is not None:
            points = np.asarray(confidence_points, dtype=float)
            points = points[:, None] if points.ndim == 1 else points
            if points.shape[0] != n_arr.size:
                raise DataError(f"confidence_points has {points.shape[0]} rows, expected {n_arr.size}")
            if confidence is None:
                conf = points.mean(axis=1)
        return cls(tuple(attributes), vals, n_arr, c_arr, pool, conf, None, tuple(continuous), points)

    def with_counts(self, n: np.ndarray, correct: np.ndarray) -> ArmCounts:
        """The same arms with other labeled counts."""
        return ArmCounts(self.attributes, self.values, np.asarray(n, float), np.asarray(correct, float),
                         self.pool_n, self.confidence, self.item_arm, self.continuous, self.confidence_points)

    def anchor_points(self) -> np.ndarray:
        """The arms' confidence points (A, B): :attr:`confidence_points`, else the mean confidence as one point.

        Examples
        --------
        >>> ArmCounts.from_arrays([1, 2], [1, 1], confidence=[0.9, 0.7]).anchor_points().tolist()
        [[0.9], [0.7]]
        """
        if self.confidence_points is not None:
            return np.asarray(self.confidence_points, float)
        conf = np.asarray(self.confidence, float)
        if not np.isfinite(conf).any():
            raise ConfigError("the confidence anchor needs the model's confidence on the arms' pool items")
        return np.where(np.isfinite(conf), conf, np.nanmean(conf))[:, None]

    def coords(self) -> dict[str, Any]:
        """xarray coordinates: ``arm`` (0..A-1) and one coordinate per attribute along ``arm``."""
        coords: dict[str, Any] = {"arm": np.arange(self.n_arms)}
        for k, name in enumerate(self.attributes):
            coords[name] = ("arm", self.values[:, k])
        return coords

    def to_dataset(self) -> xr.Dataset:
        """The counts as an :class:`xarray.Dataset` with an ``arm`` dim.

        Examples
        --------
        >>> ArmCounts.from_arrays([2, 3], [1, 3]).to_dataset()["n"].dims
        ('arm',)
        """
        return xr.Dataset(
            {"n": ("arm", self.n), "correct": ("arm", self.correct), "pool_n": ("arm", self.pool_n),
             "confidence": ("arm", self.confidence)},
            coords=self.coords(), attrs={"attributes": list(self.attributes)},
        )


def _attribute_matrix(preds: Any, attributes: Sequence[str]) -> np.ndarray:
    missing = [a for a in attributes if a not in preds.groups]
    if missing:
        raise DataError(f"attribute column {missing[0]!r} not found (have: {', '.join(sorted(preds.groups)) or 'none'})")
    cols = []
    for a in attributes:
        col = np.asarray(preds.groups[a])
        if col.dtype == object:  # string codes of integer attributes become integers again
            try:
                col = col.astype(np.int64)
            except (TypeError, ValueError):
                col = col.astype(str)
        cols.append(col)
    if all(np.issubdtype(c.dtype, np.number) for c in cols):
        return np.column_stack(cols)
    return np.column_stack([c.astype(str) for c in cols]).astype(object)


def unique_rows(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a numeric matrix in lexicographic order, and each row's index among them.

    The result of ``np.unique(values, axis=0, return_inverse=True)``, through one integer key per row
    (each column's value codes in mixed radix, the first column the most significant, so the keys sort as
    the rows do): ``np.unique(axis=0)`` sorts the rows as structured records, ~2 s on ACS's 277,677 x 10,
    the keys ~0.1 s. Falls back to ``np.unique(axis=0)`` where the keys would overflow or a column has NaN.

    Examples
    --------
    >>> rows, inverse = unique_rows(np.array([[2, 1], [0, 5], [2, 1], [0, 3]]))
    >>> rows.tolist(), inverse.tolist()
    ([[0, 3], [0, 5], [2, 1]], [2, 1, 2, 0])
    """
    values = np.asarray(values)
    if values.ndim != 2 or values.shape[1] == 0 or (values.dtype.kind == "f" and np.isnan(values).any()):
        rows, inverse = np.unique(values, axis=0, return_inverse=True)
        return rows, inverse.ravel()
    codes, radix = [], 1.0
    for column in values.T:
        levels, code = np.unique(column, return_inverse=True)
        codes.append((code.ravel(), levels.size))
        radix *= levels.size
    if radix >= 2.0**62:
        rows, inverse = np.unique(values, axis=0, return_inverse=True)
        return rows, inverse.ravel()
    key = np.zeros(values.shape[0], dtype=np.int64)
    for code, size in codes:
        key *= size
        key += code
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    return values[first], inverse.ravel()


def count_arms(preds: Any, attributes: Sequence[str], *, arm_probs: Any = None, arm_values: Any = None,
               continuous: Sequence[str] = ()) -> ArmCounts:
    """Count labeled, correct and pool items per non-empty arm.

    Parameters
    ----------
    preds : Predictions or anything :func:`pbassess.data.as_predictions` accepts
        The pool; attribute columns in ``preds.groups``.
    attributes : sequence of str
        Columns whose value combinations define the arms.
    arm_probs : array (N, A), optional
        P(arm | x) per item (noisy attributes): items count fractionally. Then ``arm_values``
        (A, K) gives the attribute values of the A arms and ``preds.groups`` is not used.
    continuous : sequence of str
        Attributes the smoothing models treat as continuous (ordinal) inputs.

    Returns
    -------
    ArmCounts
        One row per non-empty arm.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_binary_scores([.9, .8, .3, .7], [1, 0, 0, 1],
    ...                                    groups={"sex": [1, 1, 2, 2]})
    >>> a = count_arms(p, ["sex"])
    >>> a.values[:, 0].tolist(), a.n.tolist(), a.correct.tolist()
    ([1, 2], [2.0, 2.0], [1.0, 2.0])
    """
    attributes = tuple(attributes)
    if not attributes:
        raise ConfigError("choose at least one attribute column for the arms")
    if len(set(attributes)) != len(attributes):
        raise ConfigError("an attribute column is named twice")
    bad = [c for c in continuous if c not in attributes]
    if bad:
        raise ConfigError(f"continuous attribute {bad[0]!r} is not one of the arm attributes")
    labeled = preds.labels >= 0
    correct = (preds.predicted == preds.labels) & labeled
    conf = np.asarray(preds.confidence, dtype=float)
    if arm_probs is not None:
        w = np.asarray(arm_probs, dtype=float)
        if w.ndim != 2 or w.shape[0] != preds.n_items:
            raise DataError(f"arm_probs must have shape ({preds.n_items}, arms), got {w.shape}")
        if arm_values is None or np.shape(arm_values) != (w.shape[1], len(attributes)):
            raise DataError(f"arm_values must have shape ({w.shape[1]}, {len(attributes)})")
        pool_n = w.sum(axis=0)
        n, corr = w.T @ labeled.astype(float), w.T @ correct.astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_conf = np.where(pool_n > 0, (w.T @ conf) / pool_n, np.nan)
        return ArmCounts(attributes, np.asarray(arm_values), n, corr, pool_n, mean_conf, None, tuple(continuous))
    values = _attribute_matrix(preds, attributes)
    if values.dtype == object:  # np.unique(axis=0) does not take object arrays
        keys = np.array(["\x1f".join(map(str, row)) for row in values])
        _, first, item_arm = np.unique(keys, return_index=True, return_inverse=True)
        arm_values = values[first]
    else:
        arm_values, item_arm = unique_rows(values)
    item_arm = item_arm.ravel()
    a = arm_values.shape[0]
    pool_n = cell_counts(item_arm, a).astype(float)
    n = cell_counts(item_arm, a, labeled.astype(float))
    corr = cell_counts(item_arm, a, correct.astype(float))
    mean_conf = cell_counts(item_arm, a, np.asarray(conf, dtype=float)) / pool_n
    points, items = None, None
    if np.isfinite(conf).all():
        points = confidence_points(conf, item_arm, a)
        items = (item_arm[labeled], conf[labeled], correct[labeled].astype(np.int64))
    return ArmCounts(attributes, arm_values, n, corr, pool_n, mean_conf, item_arm, tuple(continuous), points, items)


def confidence_points(confidence: Any, item_arm: Any, n_arms: int, n_points: int = CONFIDENCE_POINTS) -> np.ndarray:
    """Per arm, the means of its items' confidences over ``n_points`` equal-mass slices of its quantile function.

    Point j of an arm is the average of the arm's empirical quantile function over
    [j / n_points, (j + 1) / n_points] (an item that straddles a slice border counts in both
    slices with the share it covers), so the points' mean is the arm's mean confidence exactly,
    and the mean of a smooth function over the points approximates its mean over the arm's items
    (the anchored surfaces pass the points through a calibration map). Mid-slice quantiles,
    the earlier points, missed the mean confidence of skewed arms by up to 0.01.

    Parameters
    ----------
    confidence : array (N,)
    item_arm : array of int (N,)
        Arm index of every item (every arm in ``range(n_arms)`` has at least one item).
    n_arms, n_points : int

    Returns
    -------
    numpy.ndarray, shape (n_arms, n_points)

    Examples
    --------
    >>> confidence_points([0.6, 0.9, 0.7, 0.8, 0.55], [0, 0, 0, 0, 1], 2, n_points=2).round(4).tolist()
    [[0.65, 0.85], [0.55, 0.55]]
    >>> confidence_points([0.5, 0.8, 0.9], [0, 0, 0], 1, n_points=2).round(4).tolist()  # 0.8 split in halves
    [[0.6, 0.8667]]
    """
    conf = np.asarray(confidence, float)
    arm = np.asarray(item_arm, np.int64)
    order = np.lexsort((conf, arm))
    size = cell_counts(arm, n_arms).astype(np.int64)
    if (size == 0).any():
        raise DataError("every arm needs at least one item for its confidence points")
    start = np.concatenate([[0], np.cumsum(size)[:-1]])
    sorted_conf = conf[order]
    prefix = np.concatenate([[0.0], np.cumsum(sorted_conf)])  # prefix[k]: sum of the first k sorted values

    def integral(t: np.ndarray) -> np.ndarray:
        """n x the integral of each arm's quantile function over [0, t] (t per arm and level)."""
        pos = t * size[:, None]
        whole = np.minimum(np.floor(pos).astype(np.int64), size[:, None])
        inside = np.minimum(whole, size[:, None] - 1)
        part = (pos - whole) * sorted_conf[start[:, None] + inside]
        return prefix[start[:, None] + whole] - prefix[start][:, None] + part

    edges = np.linspace(0.0, 1.0, n_points + 1)[None, :].repeat(n_arms, axis=0)
    cumulative = integral(edges)
    return np.diff(cumulative, axis=1) * n_points / size[:, None]
