"""The validated container of a classifier's outputs on a pool of items.

:class:`Predictions` holds, for N items and K classes, either full probability vectors
(N x K) or the top-1 form (predicted class and its probability), optional and possibly
partial true labels, class names, item ids and group/attribute columns. Every constructor
validates its input and raises :class:`~pbassess.errors.DataError` with a one-line message
that names the column or row at fault.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pbassess.constants import DEFAULT_THRESHOLD, SUM_TOLERANCE, UNLABELED
from pbassess.errors import DataError

__all__ = ["Predictions"]


def _first_bad(mask: np.ndarray) -> int:
    """Index of the first True entry (row number for error messages)."""
    return int(np.flatnonzero(mask.reshape(mask.shape[0], -1).any(axis=1))[0])


def _as_class_names(classes: Sequence[Any] | None, n_classes: int | None) -> tuple[str, ...]:
    if classes is None:
        if n_classes is None:
            raise DataError("class names are missing: pass classes=[...]")
        return tuple(str(k) for k in range(n_classes))
    names = tuple(str(c) for c in classes)
    if len(set(names)) != len(names):
        seen: set[str] = set()
        dup = next(c for c in names if c in seen or seen.add(c))
        raise DataError(f"class names must be unique: {dup!r} appears twice")
    return names


def _encode(values: Any, classes: tuple[str, ...], what: str, allow_missing: bool) -> np.ndarray:
    """Map labels (names or integer indices) to class indices; missing -> UNLABELED."""
    arr = np.asarray(values, dtype=object).ravel()
    index = {c: i for i, c in enumerate(classes)}
    # Integers index the classes only when the class names are not themselves numbers.
    numeric_names = any(c.lstrip("-").isdigit() for c in classes)
    out = np.full(arr.shape[0], UNLABELED, dtype=np.int64)
    for row, value in enumerate(arr):
        if value is None or (isinstance(value, float) and np.isnan(value)) or value == "":
            if not allow_missing:
                raise DataError(f"{what}: row {row} is missing")
            continue
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        key = str(value)
        if key in index:
            out[row] = index[key]
        elif isinstance(value, (int, np.integer)) and not numeric_names and 0 <= value < len(classes):
            out[row] = int(value)
        else:
            shown = ", ".join(classes[:6]) + (", ..." if len(classes) > 6 else "")
            raise DataError(
                f"{what}: row {row} has {value!r}, which is not one of the {len(classes)} classes ({shown})"
            )
    return out


@dataclass(frozen=True, eq=False)
class Predictions:
    """A classifier's outputs on a pool of N items, validated.

    Build it with :meth:`from_probs`, :meth:`from_top1`, :meth:`from_binary_scores`,
    :meth:`from_dataframe` or the readers in :mod:`pbassess.data.readers`; the plain
    constructor expects already-encoded arrays and validates them too.

    Parameters
    ----------
    predicted : ndarray of int, shape (N,)
        Index of the predicted class of each item.
    confidence : ndarray of float, shape (N,)
        The model's probability of its predicted class, in [0, 1].
    classes : tuple of str
        The K class names.
    labels : ndarray of int, shape (N,)
        True class index, or ``-1`` (:data:`~pbassess.constants.UNLABELED`) where unknown.
    item_ids : ndarray of str, shape (N,)
        Unique item identifiers.
    probs : ndarray of float, shape (N, K), optional
        Full probability vectors; ``None`` in top-1 form.
    groups : dict of str to ndarray, optional
        Attribute columns (environment, sex, race, ...), one value per item.
    name : str
        A display name for the classifier / data set.

    Examples
    --------
    >>> import numpy as np
    >>> from pbassess import Predictions
    >>> p = Predictions.from_probs([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]],
    ...                            labels=["a", "b", None], classes=["a", "b"])
    >>> p.n_items, p.n_classes, p.n_labeled
    (3, 2, 2)
    >>> p.predicted.tolist(), p.correct[:2].tolist()
    ([0, 1, 0], [True, True])
    """

    predicted: np.ndarray
    confidence: np.ndarray
    classes: tuple[str, ...]
    labels: np.ndarray
    item_ids: np.ndarray
    probs: np.ndarray | None = None
    groups: dict[str, np.ndarray] = field(default_factory=dict)
    name: str = "classifier"

    def __post_init__(self) -> None:
        n = self.predicted.shape[0] if np.ndim(self.predicted) == 1 else -1
        if n == 0:
            raise DataError("the pool is empty: no items were given")
        if np.ndim(self.predicted) != 1:
            raise DataError(f"predicted must be one-dimensional, got shape {np.shape(self.predicted)}")
        k = len(self.classes)
        if k < 2:
            raise DataError(f"need at least two classes, got {k} ({', '.join(self.classes)})")
        for what, arr in (("confidence", self.confidence), ("labels", self.labels), ("item_ids", self.item_ids)):
            if np.shape(arr) != (n,):
                raise DataError(f"{what} has shape {np.shape(arr)} but there are {n} items")
        if self.predicted.min() < 0 or self.predicted.max() >= k:
            row = _first_bad((self.predicted < 0) | (self.predicted >= k))
            raise DataError(f"predicted: row {row} has class index {self.predicted[row]} outside 0..{k - 1}")
        if self.labels.min() < UNLABELED or self.labels.max() >= k:
            row = _first_bad((self.labels < UNLABELED) | (self.labels >= k))
            raise DataError(f"labels: row {row} has class index {self.labels[row]} outside 0..{k - 1}")
        conf = self.confidence
        if not np.all(np.isfinite(conf)):
            raise DataError(f"confidence: row {_first_bad(~np.isfinite(conf))} is NaN or infinite")
        if conf.min() < 0 or conf.max() > 1:
            row = _first_bad((conf < 0) | (conf > 1))
            raise DataError(f"confidence: row {row} is {conf[row]!r}, outside [0, 1]")
        if len(set(self.item_ids.tolist())) != n:
            _, first, counts = np.unique(self.item_ids, return_index=True, return_counts=True)
            dup = self.item_ids[first[counts > 1][0]]
            raise DataError(f"item ids must be unique: {dup!r} appears {counts[counts > 1][0]} times")
        if self.probs is not None and self.probs.shape != (n, k):
            raise DataError(f"probabilities have shape {self.probs.shape}, expected ({n}, {k})")
        for col, values in self.groups.items():
            if np.shape(values) != (n,):
                raise DataError(f"group column {col!r} has {np.shape(values)} values for {n} items")
        for arr in (self.predicted, self.confidence, self.labels, self.item_ids, self.probs, *self.groups.values()):
            if arr is not None:
                arr.setflags(write=False)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_probs(
        cls,
        probs: Any,
        labels: Any = None,
        *,
        classes: Sequence[Any] | None = None,
        item_ids: Sequence[Any] | None = None,
        groups: Mapping[str, Any] | None = None,
        normalize: bool = False,
        tolerance: float = SUM_TOLERANCE,
        name: str = "classifier",
    ) -> Predictions:
        """Build from full probability vectors, one row per item.

        Parameters
        ----------
        probs : array_like, shape (N, K)
            Predicted class probabilities; each row must sum to one within ``tolerance``.
        labels : array_like, shape (N,), optional
            True labels as class names or indices; ``None``/NaN/"" marks an unlabeled item.
        classes : sequence, optional
            Class names (default ``"0"``, ..., ``"K-1"``).
        item_ids : sequence, optional
            Unique ids (default ``"0"``, ..., ``"N-1"``).
        groups : mapping, optional
            Attribute columns, each with N values.
        normalize : bool, default False
            Divide each row by its sum instead of rejecting rows that do not sum to one.
        tolerance : float
            Allowed deviation of a row sum from one.
        name : str
            Display name.

        Returns
        -------
        Predictions

        Examples
        --------
        >>> from pbassess import Predictions
        >>> Predictions.from_probs([[2, 2], [1, 3]], normalize=True).confidence.tolist()
        [0.5, 0.75]
        """
        try:
            p = np.array(probs, dtype=float)
        except (TypeError, ValueError) as exc:
            raise DataError(f"probabilities must be numbers: {exc}") from None
        if p.ndim != 2:
            raise DataError(f"probabilities must be a 2-D array (items x classes), got shape {p.shape}")
        if p.shape[0] == 0:
            raise DataError("the pool is empty: no items were given")
        if not np.all(np.isfinite(p)):
            row = _first_bad(~np.isfinite(p))
            raise DataError(f"probabilities: row {row} contains NaN or infinity")
        if (p < 0).any():
            row = _first_bad(p < 0)
            raise DataError(f"probabilities: row {row} has a negative value ({p[row].min():g})")
        sums = p.sum(axis=1)
        if normalize:
            if (sums <= 0).any():
                raise DataError(f"probabilities: row {_first_bad(sums <= 0)} sums to zero and cannot be normalized")
            p = p / sums[:, None]
        elif np.abs(sums - 1).max() > tolerance:
            row = _first_bad(np.abs(sums - 1) > tolerance)
            raise DataError(
                f"probabilities: row {row} sums to {sums[row]:.6g}, not 1 (tolerance {tolerance:g}; pass normalize=True, or --normalize on the command line, to rescale)"
            )
        names = _as_class_names(classes, p.shape[1])
        if len(names) != p.shape[1]:
            raise DataError(f"{len(names)} class names given for {p.shape[1]} probability columns")
        predicted = p.argmax(axis=1)
        confidence = np.clip(p[np.arange(p.shape[0]), predicted], 0.0, 1.0)
        return cls._assemble(predicted, confidence, names, labels, item_ids, groups, name, probs=p)

    @classmethod
    def from_top1(
        cls,
        predicted: Any,
        confidence: Any,
        labels: Any = None,
        *,
        classes: Sequence[Any] | None = None,
        item_ids: Sequence[Any] | None = None,
        groups: Mapping[str, Any] | None = None,
        name: str = "classifier",
    ) -> Predictions:
        """Build from the top-1 form: predicted class and its probability.

        Parameters
        ----------
        predicted : array_like, shape (N,)
            Predicted class names (or indices into ``classes``).
        confidence : array_like, shape (N,)
            Probability the model gave its predicted class, in [0, 1].
        labels : array_like, shape (N,), optional
            True labels; missing values mark unlabeled items.
        classes : sequence, optional
            Class names; by default the sorted union of predicted and true labels.

        Returns
        -------
        Predictions

        Examples
        --------
        >>> from pbassess import Predictions
        >>> p = Predictions.from_top1(["cat", "dog"], [0.9, 0.6], ["cat", "cat"])
        >>> p.classes, p.correct.tolist()
        (('cat', 'dog'), [True, False])
        """
        pred_raw = np.asarray(predicted, dtype=object).ravel()
        if pred_raw.shape[0] == 0:
            raise DataError("the pool is empty: no items were given")
        if classes is None:
            seen = {str(v) for v in pred_raw}
            if labels is not None:
                seen |= {
                    str(int(v)) if isinstance(v, (float, np.floating)) and float(v).is_integer() else str(v)
                    for v in np.asarray(labels, dtype=object).ravel()
                    if not (v is None or v == "" or (isinstance(v, float) and np.isnan(v)))
                }
            classes = sorted(seen, key=lambda c: (not c.lstrip("-").isdigit(), int(c) if c.lstrip("-").isdigit() else 0, c))
        names = _as_class_names(classes, None)
        pred = _encode(pred_raw, names, "predicted", allow_missing=False)
        try:
            conf = np.asarray(confidence, dtype=float).ravel()
        except (TypeError, ValueError) as exc:
            raise DataError(f"confidence must be numbers: {exc}") from None
        if conf.shape != pred.shape:
            raise DataError(f"confidence has {conf.shape[0]} values for {pred.shape[0]} predictions")
        return cls._assemble(pred, conf, names, labels, item_ids, groups, name, probs=None)

    @classmethod
    def from_binary_scores(
        cls,
        scores: Any,
        labels: Any = None,
        *,
        threshold: float = DEFAULT_THRESHOLD,
        classes: Sequence[Any] = ("0", "1"),
        item_ids: Sequence[Any] | None = None,
        groups: Mapping[str, Any] | None = None,
        name: str = "classifier",
    ) -> Predictions:
        """Build from a binary classifier's scores P(label = positive class).

        The predicted class is the positive one (``classes[1]``) where the score is at least
        ``threshold``; the probability vector is ``[1 - s, s]``.

        Examples
        --------
        >>> from pbassess import Predictions
        >>> p = Predictions.from_binary_scores([0.2, 0.7, 0.55], [0, 1, 0], threshold=0.6)
        >>> p.predicted.tolist(), p.correct.tolist()
        ([0, 1, 0], [True, True, True])
        """
        try:
            s = np.asarray(scores, dtype=float).ravel()
        except (TypeError, ValueError) as exc:
            raise DataError(f"scores must be numbers: {exc}") from None
        if s.shape[0] == 0:
            raise DataError("the pool is empty: no items were given")
        if not np.all(np.isfinite(s)):
            raise DataError(f"scores: row {_first_bad(~np.isfinite(s))} is NaN or infinite")
        if (s < 0).any() or (s > 1).any():
            row = _first_bad((s < 0) | (s > 1))
            raise DataError(f"scores: row {row} is {s[row]:g}, outside [0, 1]")
        if not 0 < threshold < 1:
            raise DataError(f"threshold must be strictly between 0 and 1, got {threshold}")
        names = _as_class_names(classes, 2)
        if len(names) != 2:
            raise DataError(f"binary scores need exactly two classes, got {len(names)}")
        probs = np.column_stack([1 - s, s])
        predicted = (s >= threshold).astype(np.int64)
        confidence = probs[np.arange(s.shape[0]), predicted]
        return cls._assemble(predicted, confidence, names, labels, item_ids, groups, name, probs=probs)

    @classmethod
    def from_dataframe(
        cls,
        frame: Any,
        *,
        label: str | None = "label",
        prob_columns: Sequence[str] | None = None,
        predicted: str | None = None,
        confidence: str | None = None,
        item_id: str | None = "item_id",
        group_columns: Sequence[str] | None = None,
        classes: Sequence[Any] | None = None,
        normalize: bool = False,
        name: str = "classifier",
    ) -> Predictions:
        """Build from a pandas DataFrame in either form.

        Full form: ``prob_columns`` lists the K probability columns (by default every column
        named ``p_<class>``, whose suffixes give the class names). Top-1 form: name the
        ``predicted`` and ``confidence`` columns. Other columns listed in ``group_columns``
        become attribute columns; missing optional columns are simply absent.

        Examples
        --------
        >>> import pandas as pd
        >>> from pbassess import Predictions
        >>> df = pd.DataFrame({"item_id": ["x", "y"], "label": ["a", None],
        ...                    "p_a": [0.7, 0.1], "p_b": [0.3, 0.9], "site": ["s1", "s2"]})
        >>> p = Predictions.from_dataframe(df, group_columns=["site"])
        >>> p.classes, p.n_labeled, list(p.groups)
        (('a', 'b'), 1, ['site'])
        """
        cols = list(frame.columns)
        if label is not None and label not in cols:
            if label != "label":
                raise DataError(f"label column {label!r} not found (columns: {', '.join(map(str, cols))})")
            label = None
        labels = None if label is None else frame[label].to_numpy(dtype=object)
        ids = None
        if item_id is not None and item_id in cols:
            ids = frame[item_id].astype(str).to_numpy()
        groups = {}
        for g in group_columns or []:
            if g not in cols:
                raise DataError(f"group column {g!r} not found (columns: {', '.join(map(str, cols))})")
            groups[g] = frame[g].astype(str).to_numpy()
        if predicted is not None or confidence is not None:
            for what, col in (("predicted", predicted), ("confidence", confidence)):
                if col is None or col not in cols:
                    raise DataError(f"{what} column {col!r} not found (columns: {', '.join(map(str, cols))})")
            return cls.from_top1(frame[predicted].to_numpy(dtype=object), frame[confidence].to_numpy(),
                                 labels, classes=classes, item_ids=ids, groups=groups, name=name)
        if prob_columns is None:
            prob_columns = [c for c in cols if str(c).startswith("p_")]
            if not prob_columns:
                raise DataError("no probability columns: name them with prob_columns=[...] or prefix them with 'p_'")
            if classes is None:
                classes = [str(c)[2:] for c in prob_columns]
        missing = [c for c in prob_columns if c not in cols]
        if missing:
            raise DataError(f"probability column {missing[0]!r} not found")
        try:
            values = frame[list(prob_columns)].to_numpy(dtype=float)
        except (TypeError, ValueError):
            bad = next(c for c in prob_columns if not np.issubdtype(frame[c].dtype, np.number))
            raise DataError(f"probability column {bad!r} holds non-numeric values") from None
        return cls.from_probs(values, labels, classes=classes or prob_columns, item_ids=ids,
                              groups=groups, normalize=normalize, name=name)

    @classmethod
    def _assemble(cls, predicted, confidence, names, labels, item_ids, groups, name, probs) -> Predictions:
        n = predicted.shape[0]
        if labels is None:
            lab = np.full(n, UNLABELED, dtype=np.int64)
        else:
            lab_raw = np.asarray(labels, dtype=object).ravel()
            if lab_raw.shape[0] != n:
                raise DataError(f"labels has {lab_raw.shape[0]} values for {n} items")
            lab = _encode(lab_raw, names, "labels", allow_missing=True)
        if item_ids is None:
            ids = np.array([str(i) for i in range(n)], dtype=object)
        else:
            ids = np.array([str(i) for i in np.asarray(item_ids, dtype=object).ravel()], dtype=object)
            if ids.shape[0] != n:
                raise DataError(f"item_ids has {ids.shape[0]} values for {n} items")
        grp = {}
        for col, values in (groups or {}).items():
            arr = np.array([str(v) for v in np.asarray(values, dtype=object).ravel()], dtype=object)
            if arr.shape[0] != n:
                raise DataError(f"group column {col!r} has {arr.shape[0]} values for {n} items")
            grp[str(col)] = arr
        return cls(predicted=np.asarray(predicted, dtype=np.int64), confidence=np.asarray(confidence, dtype=float),
                   classes=tuple(names), labels=lab, item_ids=ids, probs=probs, groups=grp, name=name)

    # ------------------------------------------------------------------ views
    @property
    def n_items(self) -> int:
        """Number of items in the pool."""
        return int(self.predicted.shape[0])

    @property
    def n_classes(self) -> int:
        """Number of classes K."""
        return len(self.classes)

    @property
    def has_probs(self) -> bool:
        """Whether full probability vectors are available (not only top-1)."""
        return self.probs is not None

    @property
    def labeled(self) -> np.ndarray:
        """Boolean mask of items with a true label."""
        return self.labels != UNLABELED

    @property
    def n_labeled(self) -> int:
        """Number of labeled items."""
        return int(self.labeled.sum())

    @property
    def correct(self) -> np.ndarray:
        """Boolean array: prediction equals label (False where unlabeled; mask with :attr:`labeled`)."""
        return self.labeled & (self.labels == self.predicted)

    def class_index(self, name: Any) -> int:
        """Index of a class given by name.

        Examples
        --------
        >>> from pbassess import Predictions
        >>> Predictions.from_top1(["a", "b"], [0.9, 0.8]).class_index("b")
        1
        """
        try:
            return self.classes.index(str(name))
        except ValueError:
            raise DataError(f"unknown class name {name!r}") from None

    def group(self, column: str) -> np.ndarray:
        """The values of an attribute column, with a clear error when it is absent."""
        if column not in self.groups:
            have = ", ".join(self.groups) or "none"
            raise DataError(f"group column {column!r} not found (available: {have})")
        return self.groups[column]

    def require_labels(self, what: str = "this assessment") -> Predictions:
        """Raise unless at least one item is labeled; returns self for chaining."""
        if self.n_labeled == 0:
            raise DataError(f"{what} needs true labels, but none of the {self.n_items} items is labeled")
        return self

    def require_probs(self, what: str = "this assessment") -> Predictions:
        """Raise unless full probability vectors are present."""
        if self.probs is None:
            raise DataError(f"{what} needs full probability vectors, but {self.name!r} is in top-1 form")
        return self

    def subset(self, mask: Any) -> Predictions:
        """The items selected by a boolean mask or an index array.

        Examples
        --------
        >>> from pbassess import Predictions
        >>> p = Predictions.from_top1(["a", "b", "a"], [0.9, 0.8, 0.7], ["a", "a", "a"])
        >>> p.subset(p.predicted == 0).n_items
        2
        """
        idx = np.asarray(mask)
        if idx.dtype == bool:
            if idx.shape != (self.n_items,):
                raise DataError(f"mask has shape {idx.shape} for {self.n_items} items")
            idx = np.flatnonzero(idx)
        if idx.size == 0:
            raise DataError("the selection is empty: no items match")
        return Predictions(
            predicted=self.predicted[idx], confidence=self.confidence[idx], classes=self.classes,
            labels=self.labels[idx], item_ids=self.item_ids[idx],
            probs=None if self.probs is None else self.probs[idx],
            groups={k: v[idx] for k, v in self.groups.items()}, name=self.name,
        )

    def with_labels(self, labels: Any) -> Predictions:
        """A copy with the label array replaced (names or indices; missing = unlabeled)."""
        lab = np.asarray(labels, dtype=object).ravel()
        if lab.shape[0] != self.n_items:
            raise DataError(f"labels has {lab.shape[0]} values for {self.n_items} items")
        return Predictions(
            predicted=self.predicted, confidence=self.confidence, classes=self.classes,
            labels=_encode(lab, self.classes, "labels", allow_missing=True), item_ids=self.item_ids,
            probs=self.probs, groups=dict(self.groups), name=self.name,
        )

    def to_xarray(self):
        """Export to an :class:`xarray.Dataset` with dims ``item`` (and ``class``).

        Examples
        --------
        >>> from pbassess import Predictions
        >>> ds = Predictions.from_probs([[0.9, 0.1], [0.3, 0.7]], classes=["a", "b"]).to_xarray()
        >>> sorted(ds.data_vars)
        ['confidence', 'label', 'predicted', 'probs']
        """
        import xarray as xr

        classes = np.array(self.classes, dtype=object)
        label_names = np.where(self.labeled, classes[np.maximum(self.labels, 0)], "")
        data = {
            "predicted": ("item", classes[self.predicted].astype(str)),
            "confidence": ("item", np.asarray(self.confidence)),
            "label": ("item", label_names.astype(str)),
        }
        if self.probs is not None:
            data["probs"] = (("item", "class"), np.asarray(self.probs))
        for col, values in self.groups.items():
            data[f"group_{col}"] = ("item", values.astype(str))
        return xr.Dataset(
            data,
            coords={"item": np.asarray(self.item_ids, dtype=str), "class": np.asarray(self.classes, dtype=str)},
            attrs={"name": self.name, "n_classes": self.n_classes},
        )

    def describe(self) -> dict[str, Any]:
        """A small JSON-able summary of the pool (used in saved results and reports)."""
        return {
            "name": self.name,
            "n_items": self.n_items,
            "n_labeled": self.n_labeled,
            "n_classes": self.n_classes,
            "form": "probs" if self.has_probs else "top1",
            "accuracy_labeled": float(self.correct[self.labeled].mean()) if self.n_labeled else None,
            "groups": list(self.groups),
        }

    def __repr__(self) -> str:
        form = "full probabilities" if self.has_probs else "top-1"
        return (f"Predictions({self.name!r}: {self.n_items} items, {self.n_classes} classes, "
                f"{self.n_labeled} labeled, {form})")
