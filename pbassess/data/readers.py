"""Readers for the prediction-file formats pbassess understands.

* ``top1-text``: whitespace-separated text with one header line, columns
  ``Index Correct Predicted Confidence`` (true class, predicted class, top-1 probability),
  as in the CIFAR-100 ResNet-110 release.
* ``label-probs-text``: whitespace-separated text without a header: the true label, then
  K probabilities (the SVHN release).
* ``binary-scores-csv``: a CSV with a label column, group columns and one
  ``score_<classifier>`` column per classifier holding P(label = 1) (the fairness releases).
* ``pbassess-csv``: pbassess's own CSV: ``item_id``, optional ``label``, either ``p_<class>``
  columns or ``predicted`` + ``confidence``, and any group columns.

``.gz`` files are read transparently. :func:`read_predictions` picks the format from the
file's content when it is not given.
"""

from __future__ import annotations

import gzip
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pbassess.constants import DEFAULT_THRESHOLD
from pbassess.data.predictions import Predictions
from pbassess.errors import ConfigError, DataError

__all__ = [
    "FORMATS",
    "detect_format",
    "read_binary_scores_csv",
    "read_label_probs_text",
    "read_pbassess_csv",
    "read_predictions",
    "read_top1_text",
]

FORMATS = ("top1-text", "label-probs-text", "binary-scores-csv", "pbassess-csv")


def _open_text(path: Path):
    if not path.exists():
        raise DataError(f"file not found: {path}")
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def _head(path: Path, n: int = 2) -> list[str]:
    with _open_text(path) as fh:
        return [line for _, line in zip(range(n), fh, strict=False)]


def detect_format(path: str | Path) -> str:
    """Guess the format of a prediction file from its first lines.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "p.txt"
    >>> _ = f.write_text("Index Correct Predicted Confidence\\n0 cat dog 0.9\\n")
    >>> detect_format(f)
    'top1-text'
    """
    path = Path(path)
    lines = _head(path)
    if not lines or not lines[0].strip():
        raise DataError(f"{path}: the file is empty")
    first = lines[0].strip()
    if "," in first:
        cols = [c.strip() for c in first.split(",")]
        if any(c.startswith("score_") for c in cols):
            return "binary-scores-csv"
        return "pbassess-csv"
    tokens = first.split()
    if [t.lower() for t in tokens[:4]] == ["index", "correct", "predicted", "confidence"]:
        return "top1-text"
    try:
        [float(t) for t in tokens]
    except ValueError:
        raise DataError(f"{path}: cannot tell the format from the first line {first[:60]!r}") from None
    return "label-probs-text"


def read_top1_text(path: str | Path, *, classes: Sequence[str] | None = None, name: str | None = None) -> Predictions:
    """Read a top-1 text file (header ``Index Correct Predicted Confidence``).

    Parameters
    ----------
    path : str or Path
        The file (``.gz`` allowed).
    classes : sequence of str, optional
        Class names; by default the sorted set of names found in the file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "p.txt"
    >>> _ = f.write_text("Index Correct Predicted Confidence\\n0 cat dog 0.9\\n1 dog dog 0.8\\n")
    >>> read_top1_text(f).correct.tolist()
    [False, True]
    """
    path = Path(path)
    ids, truth, pred, conf = [], [], [], []
    with _open_text(path) as fh:
        header = fh.readline().split()
        if [h.lower() for h in header[:4]] != ["index", "correct", "predicted", "confidence"]:
            raise DataError(f"{path}: expected the header 'Index Correct Predicted Confidence', got {' '.join(header)!r}")
        for lineno, line in enumerate(fh, start=2):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 4:
                raise DataError(f"{path}: line {lineno} has {len(parts)} fields, expected 4")
            ids.append(parts[0])
            truth.append(parts[1])
            pred.append(parts[2])
            try:
                conf.append(float(parts[3]))
            except ValueError:
                raise DataError(f"{path}: line {lineno} has confidence {parts[3]!r}, not a number") from None
    if not ids:
        raise DataError(f"{path}: the pool is empty (no rows after the header)")
    labels = [None if t.lower() in {"na", "nan", "-", "?"} else t for t in truth]
    return Predictions.from_top1(pred, conf, labels, classes=classes, item_ids=ids, name=name or path.stem)


def read_label_probs_text(
    path: str | Path,
    *,
    classes: Sequence[str] | None = None,
    normalize: bool = False,
    name: str | None = None,
) -> Predictions:
    """Read whitespace text without header: label, then K probabilities per row.

    A label of ``-1`` or ``nan`` marks an unlabeled item.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "p.txt"
    >>> _ = f.write_text("1 0.2 0.8\\n0 0.6 0.4\\n")
    >>> read_label_probs_text(f).correct.tolist()
    [True, True]
    """
    path = Path(path)
    with _open_text(path) as fh:
        try:
            table = np.loadtxt(fh, dtype=float, ndmin=2)
        except ValueError as exc:
            raise DataError(f"{path}: not a table of numbers ({exc})") from None
    if table.shape[0] == 0:
        raise DataError(f"{path}: the pool is empty")
    if table.shape[1] < 3:
        raise DataError(f"{path}: expected a label and at least two probabilities per row, got {table.shape[1]} columns")
    raw = table[:, 0]
    k = table.shape[1] - 1
    names = tuple(classes) if classes is not None else tuple(str(i) for i in range(k))
    if len(names) != k:
        raise DataError(f"{path}: {len(names)} class names given for {k} probability columns")
    labels: list[Any] = []
    for row, v in enumerate(raw):
        if np.isnan(v) or v == -1:
            labels.append(None)
        elif not float(v).is_integer() or not 0 <= v < k:
            raise DataError(f"{path}: row {row} has label {v:g}, outside the classes 0..{k - 1}")
        else:
            labels.append(names[int(v)])
    return Predictions.from_probs(table[:, 1:], labels, classes=names, normalize=normalize, name=name or path.stem.split(".")[0])


def read_binary_scores_csv(
    path: str | Path,
    *,
    model: str | None = None,
    label: str | None = None,
    group_columns: Sequence[str] | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    invert_labels: bool = False,
    name: str | None = None,
) -> Predictions:
    """Read a binary-score CSV with one ``score_<classifier>`` column per classifier.

    Parameters
    ----------
    path : str or Path
        The CSV (``.gz`` allowed). The first unnamed column, if any, becomes the item id.
    model : str, optional
        The score column to use, e.g. ``"score_LR"`` (``"LR"`` works too); required when
        the file has several.
    label : str, optional
        The label column; by default the one column that is neither a score, a group nor
        the index.
    group_columns : sequence of str, optional
        Attribute columns; by default every non-numeric column.
    threshold : float, default 0.5
        Predict the positive class where the score is at least this.
    invert_labels : bool, default False
        Swap label codes 0 and 1 (for files whose label coding is inverted against the scores).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "s.csv"
    >>> _ = f.write_text(",sex,y,score_LR\\n7,F,1,0.9\\n8,M,0,0.7\\n")
    >>> p = read_binary_scores_csv(f)
    >>> p.item_ids.tolist(), p.correct.tolist(), list(p.groups)
    (['7', '8'], [True, False], ['sex'])
    """
    import pandas as pd

    path = Path(path)
    if not path.exists():
        raise DataError(f"file not found: {path}")
    frame = pd.read_csv(path)
    if frame.empty:
        raise DataError(f"{path}: the pool is empty")
    cols = [str(c) for c in frame.columns]
    score_cols = [c for c in cols if c.startswith("score_")]
    if not score_cols:
        raise DataError(f"{path}: no score_<classifier> columns")
    if model is None:
        if len(score_cols) > 1:
            raise DataError(f"{path}: several classifiers ({', '.join(score_cols)}); pick one with --models")
        model = score_cols[0]
    if not model.startswith("score_"):
        model = f"score_{model}"
    if model not in cols:
        raise DataError(f"{path}: classifier column {model!r} not found (have {', '.join(score_cols)})")
    id_col = cols[0] if cols[0].startswith("Unnamed") or cols[0] == "" else None
    rest = [c for c in cols if c not in score_cols and c != id_col]
    if group_columns is None:
        group_columns = [c for c in rest if not pd.api.types.is_numeric_dtype(frame[c])]
    if label is None:
        candidates = [c for c in rest if c not in group_columns]
        if len(candidates) != 1:
            raise DataError(f"{path}: cannot tell the label column among {candidates}; name it with label=")
        label = candidates[0]
    if label not in cols:
        raise DataError(f"{path}: label column {label!r} not found")
    y = frame[label].to_numpy()
    values = set(pd.unique(y[~pd.isna(y)]).tolist())
    if not values <= {0, 1}:
        raise DataError(f"{path}: label column {label!r} must hold 0/1, found {sorted(values)[:5]}")
    labels = np.where(pd.isna(y), None, y).astype(object)
    if invert_labels:
        labels = np.array([None if v is None else 1 - int(v) for v in labels], dtype=object)
    labels = np.array([None if v is None else str(int(v)) for v in labels], dtype=object)
    ids = frame[id_col].astype(str).to_numpy() if id_col else None
    groups = {g: frame[g].astype(str).to_numpy() for g in group_columns}
    return Predictions.from_binary_scores(
        frame[model].to_numpy(dtype=float), labels, threshold=threshold, item_ids=ids, groups=groups,
        name=name or f"{path.name.split('.')[0]}:{model[6:]}",
    )


def read_pbassess_csv(path: str | Path, *, normalize: bool = False, name: str | None = None) -> Predictions:
    """Read pbassess's own CSV format (see the module docstring).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "p.csv"
    >>> _ = f.write_text("item_id,label,p_a,p_b,site\\nx,a,0.8,0.2,s1\\ny,,0.3,0.7,s2\\n")
    >>> read_pbassess_csv(f)
    Predictions('p': 2 items, 2 classes, 1 labeled, full probabilities)
    """
    import pandas as pd

    path = Path(path)
    if not path.exists():
        raise DataError(f"file not found: {path}")
    frame = pd.read_csv(path, dtype={"item_id": str, "label": str, "predicted": str}, keep_default_na=True)
    if frame.empty:
        raise DataError(f"{path}: the pool is empty")
    cols = [str(c) for c in frame.columns]
    top1 = "predicted" in cols and "confidence" in cols
    reserved = {"item_id", "label", "predicted", "confidence"}
    groups = [c for c in cols if c not in reserved and not c.startswith("p_")]
    return Predictions.from_dataframe(
        frame, label="label", item_id="item_id", group_columns=groups,
        predicted="predicted" if top1 else None, confidence="confidence" if top1 else None,
        normalize=normalize, name=name or path.name.split(".")[0],
    )


def read_predictions(path: str | Path, *, format: str | None = None, **options: Any) -> Predictions:
    """Read a prediction file in any supported format (detected when not given).

    Options are passed to the format's reader (``model``/``threshold`` for binary scores,
    ``classes``, ``normalize``, ...).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "p.txt"
    >>> _ = f.write_text("0 0.9 0.1\\n1 0.4 0.6\\n")
    >>> read_predictions(f).n_items
    2
    """
    import inspect

    path = Path(path)
    if path.is_dir():
        raise DataError(f"{path} is a folder, not a prediction file")
    fmt = format or detect_format(path)
    readers = {
        "top1-text": read_top1_text,
        "label-probs-text": read_label_probs_text,
        "binary-scores-csv": read_binary_scores_csv,
        "pbassess-csv": read_pbassess_csv,
    }
    if fmt not in readers:
        raise DataError(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})")
    options = {k: v for k, v in options.items() if v is not None}
    accepted = set(inspect.signature(readers[fmt]).parameters) - {"path"}
    for option in options:
        if option not in accepted:
            raise ConfigError(f"option {option!r} does not apply to {fmt} files (they take {', '.join(sorted(accepted))})")
    return readers[fmt](path, **options)
