"""The validated container of a classifier's outputs on a pool of items.

:class:`Predictions` is a thin, read-only view over an :class:`xarray.Dataset` with dims
``item`` (N) and ``class`` (K), numpy- or dask-backed (layout in
:mod:`pbassess.data._validate`): predicted class codes, their confidence, true-label codes
(``-1`` = unlabeled), optional full probability vectors, item ids (integers stay integers) and
attribute columns that keep their type. Every constructor validates its input and raises
:class:`~pbassess.errors.DataError` with a one-line message naming the column or row at fault.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from pbassess.constants import DEFAULT_THRESHOLD, DEFAULT_TIES, SUM_TOLERANCE, UNLABELED
from pbassess.data._build import (
    as_class_names,
    binary_dataset,
    encode_labels,
    make_dataset,
    probs_dataset,
    top1_dataset,
)
from pbassess.data._frame import frame_dataset
from pbassess.data._validate import check_dataset
from pbassess.errors import DataError

__all__ = ["Predictions"]


def _readonly(arr: np.ndarray) -> np.ndarray:
    """A read-only view (the caller's own arrays stay writable)."""
    view = arr.view()
    view.setflags(write=False)
    return view


class Predictions:
    """A classifier's outputs on a pool of N items, validated.

    Build it with :meth:`from_probs`, :meth:`from_top1`, :meth:`from_binary_scores`,
    :meth:`from_dataframe`, :meth:`from_dataset`, :func:`pbassess.data.as_predictions` or the
    readers in :mod:`pbassess.data.readers`; the plain constructor expects already-encoded
    arrays and validates them too.

    Parameters
    ----------
    predicted : array_like of int, shape (N,)
        Index of the predicted class of each item (floats are refused).
    confidence : array_like of float, shape (N,)
        The model's probability of its predicted class, in [1/K, 1] (with ``probs`` it must
        equal the probability of the predicted class).
    classes : sequence of str
        The K class names.
    labels : array_like of int, shape (N,), optional
        True class index, or ``-1`` (:data:`~pbassess.constants.UNLABELED`) where unknown.
    item_ids : array_like, shape (N,), optional
        Unique item identifiers (default 0..N-1); integer ids stay integers.
    probs : array_like of float, shape (N, K), optional
        Full probability vectors; ``predicted`` must be a most probable class of each row.
    groups : dict of str to array_like, optional
        Attribute columns (environment, sex, race, ...), one value per item, keeping their type.
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
    >>> sorted(p.dataset.data_vars), p.is_lazy
    (['confidence', 'label', 'predicted', 'probs'], False)
    """

    __slots__ = ("_cache", "_ds")

    def __init__(self, predicted: Any, confidence: Any, classes: Sequence[Any], labels: Any = None,
                 item_ids: Any = None, probs: Any = None, groups: Mapping[str, Any] | None = None,
                 name: str = "classifier") -> None:
        pred = np.asarray(predicted)
        if pred.ndim != 1:
            raise DataError(f"predicted must be one-dimensional, got shape {pred.shape}")
        if pred.shape[0] == 0:
            raise DataError("the pool is empty: no items were given")
        if pred.dtype.kind not in "iu":
            raise DataError(f"predicted must hold integer class indices, got {pred.dtype} values "
                            "(use Predictions.from_top1 or as_predictions for class names)")
        names = as_class_names(classes, None)
        n = pred.shape[0]
        if labels is None:
            lab = np.full(n, UNLABELED, dtype=np.int64)
        else:
            lab = np.asarray(labels)
            if lab.shape != (n,):
                raise DataError(f"labels has shape {lab.shape} but there are {n} items")
            if lab.dtype.kind not in "iu":
                raise DataError(f"labels must hold integer class indices (-1 = unlabeled), got {lab.dtype} values "
                                "(use with_labels or as_predictions for class names)")
        conf = np.asarray(confidence)
        if conf.shape != (n,):
            raise DataError(f"confidence has shape {conf.shape} but there are {n} items")
        p = None if probs is None else np.asarray(probs, dtype=float)
        if p is not None and p.shape != (n, len(names)):
            raise DataError(f"probabilities have shape {p.shape}, expected ({n}, {len(names)})")
        ds = make_dataset(pred.astype(np.int64, copy=False), conf, names, lab.astype(np.int64, copy=False),
                          item_ids, p, groups, name)
        self._set(check_dataset(ds, top1_bound=True))

    def _set(self, ds: Any) -> None:
        object.__setattr__(self, "_ds", ds)
        object.__setattr__(self, "_cache", {})

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"Predictions is read-only; build a new one instead of setting {key!r}")

    def __reduce__(self):
        return (Predictions._wrap, (self._ds,))

    @classmethod
    def _wrap(cls, ds: Any) -> Predictions:
        """A view over an already validated dataset (no checks)."""
        obj = cls.__new__(cls)
        obj._set(ds)
        return obj

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_dataset(cls, ds: Any, *, name: str | None = None, tolerance: float = SUM_TOLERANCE) -> Predictions:
        """Wrap an :class:`xarray.Dataset` in the layout of :mod:`pbassess.data._validate`.

        Numpy-backed datasets are validated at once; for dask-backed ones the structure is
        checked now and the values chunk by chunk whenever they are computed (nothing is
        computed here).

        Examples
        --------
        >>> import numpy as np, xarray as xr
        >>> from pbassess import Predictions
        >>> ds = xr.Dataset({"predicted": ("item", np.array([0, 1, 1])),
        ...                  "confidence": ("item", [0.9, 0.6, 0.7]),
        ...                  "label": ("item", np.array([0, 0, -1])),
        ...                  "site": ("item", ["s1", "s2", "s1"])},
        ...                 coords={"class": ["cat", "dog"]}, attrs={"attributes": ["site"]})
        >>> p = Predictions.from_dataset(ds, name="pets")
        >>> p.correct.tolist(), p.groups["site"].tolist(), p.name
        ([True, False, False], ['s1', 's2', 's1'], 'pets')
        """
        if name is not None:
            ds = ds.copy()
            ds.attrs = {**ds.attrs, "name": str(name)}
        return cls._wrap(check_dataset(ds, tolerance=tolerance))

    @classmethod
    def from_probs(cls, probs: Any, labels: Any = None, *, classes: Sequence[Any] | None = None,
                   item_ids: Sequence[Any] | None = None, groups: Mapping[str, Any] | None = None,
                   normalize: bool = False, tolerance: float = SUM_TOLERANCE, name: str = "classifier") -> Predictions:
        """Build from full probability vectors, one row per item.

        Parameters
        ----------
        probs : array_like, shape (N, K)
            Predicted class probabilities; each row must sum to one within ``tolerance``.
        labels : array_like, shape (N,), optional
            True labels as class names or indices; ``None``/NaN/""/-1 marks an unlabeled item.
        classes : sequence, optional
            Class names (default ``"0"``, ..., ``"K-1"``).
        item_ids : sequence, optional
            Unique ids (default 0, ..., N-1).
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
        ds = probs_dataset(probs, labels, classes=classes, item_ids=item_ids, groups=groups,
                           normalize=normalize, tolerance=tolerance, name=name)
        return cls._wrap(check_dataset(ds, tolerance=tolerance))

    @classmethod
    def from_top1(cls, predicted: Any, confidence: Any, labels: Any = None, *, classes: Sequence[Any] | None = None,
                  item_ids: Sequence[Any] | None = None, groups: Mapping[str, Any] | None = None,
                  name: str = "classifier") -> Predictions:
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
        ds = top1_dataset(predicted, confidence, labels, classes=classes, item_ids=item_ids, groups=groups,
                          name=name)
        return cls._wrap(check_dataset(ds))

    @classmethod
    def from_binary_scores(cls, scores: Any, labels: Any = None, *, threshold: float = DEFAULT_THRESHOLD,
                           ties: str = DEFAULT_TIES, classes: Sequence[Any] = ("0", "1"),
                           item_ids: Sequence[Any] | None = None, groups: Mapping[str, Any] | None = None,
                           name: str = "classifier") -> Predictions:
        """Build from a binary classifier's scores P(label = positive class).

        The predicted class is the positive one (``classes[1]``) where the score is above
        ``threshold``; a score equal to the threshold goes to the negative class
        (``ties="negative"``, as scikit-learn's ``predict`` does) or to the positive class
        (``ties="positive"``). The probability vector is ``[1 - s, s]``.

        Examples
        --------
        >>> from pbassess import Predictions
        >>> p = Predictions.from_binary_scores([0.2, 0.7, 0.55, 0.5], [0, 1, 0, 1], threshold=0.5)
        >>> p.predicted.tolist(), p.correct.tolist()
        ([0, 1, 1, 0], [True, True, False, False])
        >>> Predictions.from_binary_scores([0.5], ties="positive").predicted.tolist()
        [1]
        """
        ds = binary_dataset(scores, labels, threshold=threshold, ties=ties, classes=classes,
                            item_ids=item_ids, groups=groups, name=name)
        return cls._wrap(check_dataset(ds))

    @classmethod
    def from_dataframe(cls, frame: Any, *, label: str | None = "label", prob_columns: Sequence[str] | None = None,
                       predicted: str | None = None, confidence: str | None = None, item_id: str | None = "item_id",
                       group_columns: Sequence[str] | None = None, classes: Sequence[Any] | None = None,
                       normalize: bool = False, name: str = "classifier") -> Predictions:
        """Build from a pandas DataFrame in either form.

        Full form: ``prob_columns`` lists the K probability columns (by default every column
        named ``p_<class>``, whose suffixes give the class names). Top-1 form: name the
        ``predicted`` and ``confidence`` columns. Other columns listed in ``group_columns``
        become attribute columns, keeping their type. (:func:`pbassess.data.as_predictions`
        detects the form and takes every other column as an attribute.)

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
        ds = frame_dataset(frame, label=label, prob_columns=prob_columns, predicted=predicted, confidence=confidence,
                           item_id=item_id, group_columns=group_columns, classes=classes, normalize=normalize,
                           name=name)
        return cls._wrap(check_dataset(ds))

    # ------------------------------------------------------------------ the data
    @property
    def dataset(self) -> Any:
        """The underlying :class:`xarray.Dataset` (dims ``item``, ``class``; codes, not names)."""
        return self._ds

    @property
    def is_lazy(self) -> bool:
        """Whether the data are dask-backed (read chunk by chunk when computed)."""
        return self._ds["predicted"].chunks is not None

    def _values(self, var: str) -> np.ndarray:
        if var not in self._cache:
            self._cache[var] = _readonly(np.asarray(self._ds[var].values))
        return self._cache[var]

    @property
    def name(self) -> str:
        """Display name of the classifier / data set."""
        return str(self._ds.attrs.get("name", "classifier"))

    @property
    def classes(self) -> tuple[str, ...]:
        """The K class names."""
        if "classes" not in self._cache:
            self._cache["classes"] = tuple(str(c) for c in self._ds["class"].values.tolist())
        return self._cache["classes"]

    @property
    def predicted(self) -> np.ndarray:
        """Index of the predicted class of each item (int64; loads a lazy pool's column)."""
        return self._values("predicted")

    @property
    def confidence(self) -> np.ndarray:
        """Probability of the predicted class of each item."""
        return self._values("confidence")

    @property
    def labels(self) -> np.ndarray:
        """True class index of each item, ``-1`` where unlabeled."""
        return self._values("label")

    @property
    def item_ids(self) -> np.ndarray:
        """Item ids: int64 when every id is an integer, else str (object array)."""
        return self._values("item_id")

    @property
    def probs(self) -> np.ndarray | None:
        """Full probability vectors (N x K), ``None`` in top-1 form."""
        return self._values("probs") if "probs" in self._ds.data_vars else None

    @property
    def groups(self) -> dict[str, np.ndarray]:
        """Attribute columns by name, each keeping its type (str, int, float, bool)."""
        return {col: self._values(col) for col in self._ds.attrs.get("attributes", [])}

    @property
    def threshold(self) -> float | None:
        """Decision threshold of binary scores (``None`` when the prediction is the arg-max)."""
        t = self._ds.attrs.get("threshold")
        return None if t is None else float(t)

    # ------------------------------------------------------------------ views
    @property
    def n_items(self) -> int:
        """Number of items in the pool."""
        return int(self._ds.sizes["item"])

    @property
    def n_classes(self) -> int:
        """Number of classes K."""
        return int(self._ds.sizes["class"])

    @property
    def has_probs(self) -> bool:
        """Whether full probability vectors are available (not only top-1)."""
        return "probs" in self._ds.data_vars

    @property
    def labeled(self) -> np.ndarray:
        """Boolean mask of items with a true label (read-only, computed once)."""
        if ("derived", "labeled") not in self._cache:  # a tuple key: never a column name
            self._cache[("derived", "labeled")] = _readonly(self.labels != UNLABELED)
        return self._cache[("derived", "labeled")]

    @property
    def n_labeled(self) -> int:
        """Number of labeled items."""
        if self.is_lazy and "label" not in self._cache:
            return int((self._ds["label"] != UNLABELED).sum().compute())
        return int(np.count_nonzero(self.labeled))

    @property
    def correct(self) -> np.ndarray:
        """Boolean array: prediction equals label (False where unlabeled; mask with :attr:`labeled`; read-only)."""
        if ("derived", "correct") not in self._cache:
            self._cache[("derived", "correct")] = _readonly(self.labeled & (self.labels == self.predicted))
        return self._cache[("derived", "correct")]

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
        attributes = self._ds.attrs.get("attributes", [])
        if column not in attributes:
            have = ", ".join(attributes) or "none"
            raise DataError(f"group column {column!r} not found (available: {have})")
        return self._values(column)

    def require_labels(self, what: str = "this assessment") -> Predictions:
        """Raise unless at least one item is labeled; returns self for chaining."""
        if self.n_labeled == 0:
            raise DataError(f"{what} needs true labels, but none of the {self.n_items} items is labeled")
        return self

    def require_probs(self, what: str = "this assessment") -> Predictions:
        """Raise unless full probability vectors are present."""
        if not self.has_probs:
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
        elif idx.dtype.kind not in "iu":
            raise DataError(f"select items with a boolean mask or integer positions, got {idx.dtype} values")
        if idx.size == 0:
            raise DataError("the selection is empty: no items match")
        if idx.min() < -self.n_items or idx.max() >= self.n_items:
            raise DataError(f"item position {int(idx.max())} is outside the pool of {self.n_items} items")
        return Predictions._wrap(self._ds.isel(item=idx))

    def with_labels(self, labels: Any) -> Predictions:
        """A copy with the label array replaced (names or indices; missing = unlabeled).

        Examples
        --------
        >>> from pbassess import Predictions
        >>> p = Predictions.from_top1(["a", "b"], [0.9, 0.8])
        >>> p.with_labels(["b", None]).labels.tolist()
        [1, -1]
        """
        codes = encode_labels(labels, self.classes, self.n_items)
        return Predictions._wrap(self._ds.assign(label=("item", codes)))

    def to_xarray(self) -> Any:
        """Export to a readable :class:`xarray.Dataset`: class names instead of codes, dims ``item`` (and ``class``).

        :attr:`dataset` is the coded form the library computes on.

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
        if self.has_probs:
            data["probs"] = (("item", "class"), np.asarray(self.probs))
        for col, values in self.groups.items():
            data[f"group_{col}"] = ("item", values)
        return xr.Dataset(
            data,
            coords={"item": np.asarray(self.item_ids), "class": np.asarray(self.classes, dtype=str)},
            attrs={"name": self.name, "n_classes": self.n_classes},
        )

    def describe(self) -> dict[str, Any]:
        """A small JSON-able summary of the pool (used in saved results and reports)."""
        n_labeled = self.n_labeled
        if n_labeled and self.is_lazy:
            ds = self._ds
            n_correct = int(((ds["label"] == ds["predicted"]) & (ds["label"] != UNLABELED)).sum().compute())
        else:
            n_correct = int(np.count_nonzero(self.correct)) if n_labeled else 0
        return {
            "name": self.name,
            "n_items": self.n_items,
            "n_labeled": n_labeled,
            "n_classes": self.n_classes,
            "form": "probs" if self.has_probs else "top1",
            "accuracy_labeled": n_correct / n_labeled if n_labeled else None,
            "groups": list(self._ds.attrs.get("attributes", [])),
        }

    def __repr__(self) -> str:
        form = "full probabilities" if self.has_probs else "top-1"
        labeled = "?" if self.is_lazy else str(self.n_labeled)
        lazy = ", lazy" if self.is_lazy else ""
        return (f"Predictions({self.name!r}: {self.n_items} items, {self.n_classes} classes, "
                f"{labeled} labeled, {form}{lazy})")
