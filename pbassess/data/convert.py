"""One entry point from anything prediction-like to a validated :class:`Predictions`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from pbassess.data._frame import csv_form_dataset, frame_dataset
from pbassess.data._validate import check_dataset
from pbassess.data.predictions import Predictions
from pbassess.errors import DataError

__all__ = ["as_predictions"]

_FRAME_OPTIONS = ("label", "prob_columns", "predicted", "confidence", "item_id", "group_columns")
_ARRAY_OPTIONS = ("labels", "classes", "item_ids", "groups", "normalize", "tolerance", "name")


def _check_options(kw: Mapping[str, Any], allowed: tuple[str, ...], what: str) -> None:
    extra = sorted(set(kw) - set(allowed))
    if extra:
        raise DataError(f"option {extra[0]!r} does not apply to {what} (they take {', '.join(allowed)})")


def _from_frame(frame: Any, kw: dict[str, Any]) -> Predictions:
    if any(k in kw for k in _FRAME_OPTIONS):
        _check_options(kw, (*_FRAME_OPTIONS, "classes", "normalize", "name"), "a DataFrame")
        if "group_columns" not in kw:
            used = {kw.get("label", "label"), kw.get("item_id", "item_id"), kw.get("predicted"),
                    kw.get("confidence"), *(kw.get("prob_columns") or [])}
            kw["group_columns"] = [c for c in frame.columns
                                   if c not in used and not (kw.get("prob_columns") is None and kw.get("predicted")
                                                             is None and str(c).startswith("p_"))]
        return Predictions._wrap(check_dataset(frame_dataset(frame, **kw)))
    _check_options(kw, ("classes", "normalize", "name"), "a DataFrame in the CSV form")
    return Predictions._wrap(check_dataset(csv_form_dataset(frame, **kw)))


def _from_mapping(obj: Mapping[str, Any], kw: dict[str, Any]) -> Predictions:
    import pandas as pd

    columns = dict(obj)
    if "probs" in columns:
        probs = columns.pop("probs")
        labels = columns.pop("label", columns.pop("labels", kw.pop("labels", None)))
        ids = columns.pop("item_id", columns.pop("item_ids", kw.pop("item_ids", None)))
        _check_options(kw, ("classes", "normalize", "tolerance", "name"), "a dict with 'probs'")
        return Predictions.from_probs(probs, labels, item_ids=ids, groups=columns, **kw)
    lengths = {k: np.shape(v)[0] if np.ndim(v) else 1 for k, v in columns.items()}
    if len(set(lengths.values())) > 1:
        raise DataError(f"the columns have different lengths ({', '.join(f'{k}: {n}' for k, n in lengths.items())})")
    if "labels" in columns and "label" not in columns:
        columns["label"] = columns.pop("labels")
    if "item_ids" in columns and "item_id" not in columns:
        columns["item_id"] = columns.pop("item_ids")
    return _from_frame(pd.DataFrame(columns), kw)


def _from_array(arr: np.ndarray, kw: dict[str, Any]) -> Predictions:
    labels = kw.pop("labels", None)
    if arr.ndim == 2:
        _check_options(kw, _ARRAY_OPTIONS, "probability arrays")
        return Predictions.from_probs(arr, labels, **kw)
    if arr.ndim == 1:
        raise DataError(f"a 1-D array of {arr.shape[0]} numbers is ambiguous: pass N x K probabilities, build "
                        "binary scores with Predictions.from_binary_scores(scores, labels), or top-1 predictions "
                        "with Predictions.from_top1")
    raise DataError(f"a numpy array must hold N x K probabilities, got shape {arr.shape}")


def as_predictions(obj: Any, **kw: Any) -> Predictions:
    """Turn anything prediction-like into validated :class:`Predictions`.

    Parameters
    ----------
    obj : Predictions, pandas.DataFrame, dict, numpy array, tuple, xarray.Dataset, str or path
        * :class:`Predictions`: returned as is (``name=`` renames it).
        * DataFrame (or dict of equal-length columns) in the CSV form: ``item_id``, optional
          ``label``, either ``p_<class>`` columns or ``predicted`` + ``confidence`` (not both);
          every other column is an attribute column keeping its type. The options of
          :meth:`Predictions.from_dataframe` (``label=``, ``prob_columns=``, ...) pick columns
          by other names.
        * dict with a ``"probs"`` (N x K) entry: ``label``/``labels``, ``item_id``/``item_ids``
          and attribute columns beside it.
        * numpy array (N, K) of probabilities, or a tuple ``(probs, labels)``.
        * :class:`xarray.Dataset` in the layout of :attr:`Predictions.dataset`.
        * a file path or a registered name (:func:`pbassess.load_data`).
    **kw
        ``labels=``, ``classes=``, ``item_ids=``, ``groups=``, ``normalize=``, ``name=``,
        reader options for files and names (e.g. ``model=``, ``threshold=``, ``ties=``).

    Labels ``-1``, NaN, None and "" mark unlabeled items (unless a class carries that name).

    Returns
    -------
    Predictions

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from pbassess.data import as_predictions
    >>> df = pd.DataFrame({"item_id": [10, 11, 12], "label": ["a", None, "b"],
    ...                    "predicted": ["a", "b", "a"], "confidence": [0.9, 0.7, 0.6], "age": [31, 45, 52]})
    >>> p = as_predictions(df)
    >>> p.correct.tolist(), p.item_ids.tolist(), p.groups["age"].dtype.kind
    ([True, False, False], [10, 11, 12], 'i')
    >>> as_predictions(np.array([[0.8, 0.2], [0.3, 0.7]]), labels=[1, -1]).labels.tolist()
    [1, -1]
    """
    import pandas as pd
    import xarray as xr

    if isinstance(obj, Predictions):
        _check_options(kw, ("name",), "Predictions")
        if "name" in kw and kw["name"] != obj.name:
            return Predictions.from_dataset(obj.dataset, name=kw["name"])
        return obj
    if isinstance(obj, xr.Dataset):
        _check_options(kw, ("name", "tolerance"), "an xarray.Dataset")
        return Predictions.from_dataset(obj, **kw)
    if isinstance(obj, pd.DataFrame):
        return _from_frame(obj, dict(kw))
    if isinstance(obj, Mapping):
        return _from_mapping(obj, dict(kw))
    if isinstance(obj, (str, os.PathLike)):
        from pbassess.data.registry import load_data

        return load_data(obj, **kw)
    if isinstance(obj, tuple) and len(obj) == 2 and "labels" not in kw:
        return _from_array(np.asarray(obj[0]), {**kw, "labels": obj[1]})
    if obj is None:
        raise DataError("no predictions were given")
    try:
        arr = np.asarray(obj)
    except (TypeError, ValueError):
        arr = np.asarray(obj, dtype=object)
    if arr.dtype.kind not in "fiu":
        raise DataError(f"cannot make predictions from a {type(obj).__name__} of {arr.dtype} values: give a "
                        "DataFrame, a dict of columns or numeric arrays")
    return _from_array(arr.astype(float), dict(kw))
