"""Builders: the input forms of :class:`~pbassess.data.Predictions` turned into its dataset.

Each builder converts and encodes (vectorised, see :mod:`pbassess.data._encoding`) and
returns an :class:`xarray.Dataset` in the layout of :mod:`pbassess.data._validate`; the
value checks themselves run once, in :func:`~pbassess.data._validate.check_dataset`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from pbassess.constants import DEFAULT_THRESHOLD, DEFAULT_TIES, UNLABELED
from pbassess.data._encoding import (
    as_attribute,
    as_class_names,
    as_item_ids,
    encode_classes,
    factorize,
    infer_classes,
)
from pbassess.data._validate import RESERVED, check_probs
from pbassess.errors import DataError

__all__ = ["TIES", "binary_dataset", "make_dataset", "probs_dataset", "top1_dataset"]

#: Tie rules of a binary decision at the threshold.
TIES = ("negative", "positive")


def _n(values: Any) -> int:
    return len(values) if hasattr(values, "__len__") else int(np.size(values))


def encode_labels(labels: Any, classes: tuple[str, ...], n: int) -> np.ndarray:
    """Label codes (-1 unlabeled) of N items."""
    if labels is None:
        return np.full(n, UNLABELED, dtype=np.int64)
    if np.isscalar(labels):
        raise DataError(f"labels must be one value per item, got the single value {labels!r}")
    if _n(labels) != n:
        raise DataError(f"labels has {_n(labels)} values for {n} items")
    return encode_classes(labels, classes, "labels", allow_missing=True)


def make_dataset(predicted: np.ndarray, confidence: np.ndarray, classes: tuple[str, ...], labels: np.ndarray,
                 item_ids: Any, probs: np.ndarray | None, groups: Mapping[str, Any] | None, name: str,
                 attrs: Mapping[str, Any] | None = None) -> Any:
    """The dataset of already-encoded arrays (ids and attribute columns converted here)."""
    import xarray as xr

    n = predicted.shape[0]
    data: dict[str, Any] = {
        "predicted": ("item", predicted),
        "confidence": ("item", confidence),
        "label": ("item", labels),
    }
    if probs is not None:
        data["probs"] = (("item", "class"), probs)
    attributes = []
    for col, values in (groups or {}).items():
        col = str(col)
        if col in RESERVED:
            raise DataError(f"attribute column {col!r} clashes with a reserved name ({', '.join(sorted(RESERVED))})")
        data[col] = ("item", as_attribute(values, n, col))
        attributes.append(col)
    coords = {"class": np.asarray(classes, dtype=object), "item_id": ("item", as_item_ids(item_ids, n))}
    return xr.Dataset(data, coords=coords, attrs={"name": str(name), "attributes": attributes, **(attrs or {})})


def _as_float(values: Any, what: str) -> np.ndarray:
    try:
        return np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        pass
    import pandas as pd

    flat = np.asarray(values, dtype=object).ravel()
    parsed = pd.to_numeric(pd.Series(flat), errors="coerce").to_numpy()
    bad = np.flatnonzero(np.isnan(parsed) & ~pd.isna(flat))
    row = int(bad[0]) if bad.size else 0
    ncol = np.shape(values)[1] if np.ndim(values) == 2 else 1
    raise DataError(f"{what}: row {row // ncol} has {flat[row]!r}, not a number")


def probs_dataset(probs: Any, labels: Any, *, classes: Sequence[Any] | None, item_ids: Any,
                  groups: Mapping[str, Any] | None, normalize: bool, tolerance: float, name: str) -> Any:
    """Dataset of full probability vectors (predicted = argmax, confidence = its probability)."""
    p = _as_float(probs, "probabilities")
    if p.ndim != 2:
        raise DataError(f"probabilities must be a 2-D array (items x classes), got shape {p.shape}")
    if p.shape[0] == 0:
        raise DataError("the pool is empty: no items were given")
    if normalize:
        check_probs(p, np.inf)  # finite and non-negative; the sums are rescaled
        sums = p.sum(axis=1)
        if (sums <= 0).any():
            raise DataError(f"probabilities: row {int(np.flatnonzero(sums <= 0)[0])} sums to zero and cannot be normalized")
        p = p / sums[:, None]
    else:
        check_probs(p, tolerance)
    names = as_class_names(classes, p.shape[1])
    if len(names) != p.shape[1]:
        raise DataError(f"{len(names)} class names given for {p.shape[1]} probability columns")
    predicted = p.argmax(axis=1)
    confidence = np.clip(np.take_along_axis(p, predicted[:, None], axis=1)[:, 0], 0.0, 1.0)
    lab = encode_labels(labels, names, p.shape[0])
    return make_dataset(predicted.astype(np.int64), confidence, names, lab, item_ids, p, groups, name)


def top1_dataset(predicted: Any, confidence: Any, labels: Any, *, classes: Sequence[Any] | None, item_ids: Any,
                 groups: Mapping[str, Any] | None, name: str) -> Any:
    """Dataset of the top-1 form (predicted class names or indices and their probability)."""
    if np.isscalar(predicted) or _n(predicted) == 0:
        raise DataError("the pool is empty: no items were given")
    pred_codes = factorize(predicted)
    label_codes = None if labels is None else factorize(labels)
    if classes is None:
        names = infer_classes(pred_codes[1], () if label_codes is None else label_codes[1])
    else:
        names = as_class_names(classes, None)
    pred = encode_classes(predicted, names, "predicted", allow_missing=False, codes_uniques=pred_codes)
    conf = _as_float(confidence, "confidence").ravel()
    if conf.shape != pred.shape:
        raise DataError(f"confidence has {conf.shape[0]} values for {pred.shape[0]} predictions")
    n = pred.shape[0]
    if label_codes is None:
        lab = np.full(n, UNLABELED, dtype=np.int64)
    else:
        if label_codes[0].shape[0] != n:
            raise DataError(f"labels has {label_codes[0].shape[0]} values for {n} items")
        lab = encode_classes(labels, names, "labels", allow_missing=True, codes_uniques=label_codes)
    return make_dataset(pred, conf, names, lab, item_ids, None, groups, name)


def binary_dataset(scores: Any, labels: Any, *, threshold: float = DEFAULT_THRESHOLD, ties: str = DEFAULT_TIES,
                   classes: Sequence[Any] = ("0", "1"), item_ids: Any, groups: Mapping[str, Any] | None,
                   name: str) -> Any:
    """Dataset of a binary classifier's scores P(positive); positive where score > threshold."""
    s = _as_float(scores, "scores").ravel()
    if s.shape[0] == 0:
        raise DataError("the pool is empty: no items were given")
    if not np.all(np.isfinite(s)):
        raise DataError(f"scores: row {int(np.flatnonzero(~np.isfinite(s))[0])} is NaN or infinite")
    if (s < 0).any() or (s > 1).any():
        row = int(np.flatnonzero((s < 0) | (s > 1))[0])
        raise DataError(f"scores: row {row} is {s[row]:g}, outside [0, 1]")
    try:
        threshold = float(threshold)
    except (TypeError, ValueError):
        raise DataError(f"threshold must be a number, got {threshold!r}") from None
    if not 0 < threshold < 1:
        raise DataError(f"threshold must be strictly between 0 and 1, got {threshold}")
    if ties not in TIES:
        raise DataError(f"ties must be one of {', '.join(TIES)} (the class of a score equal to the threshold), got {ties!r}")
    names = as_class_names(classes, 2)
    if len(names) != 2:
        raise DataError(f"binary scores need exactly two classes, got {len(names)}")
    probs = np.column_stack([1 - s, s])
    predicted = ((s >= threshold) if ties == "positive" else (s > threshold)).astype(np.int64)
    confidence = np.where(predicted == 1, s, 1 - s)
    lab = encode_labels(labels, names, s.shape[0])
    return make_dataset(predicted, confidence, names, lab, item_ids, probs, groups, name,
                        attrs={"threshold": threshold, "ties": ties})
