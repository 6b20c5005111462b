"""Readers for the prediction-file formats pbassess understands.

* ``top1-text``: whitespace-separated text with one header line, columns
  ``Index Correct Predicted Confidence`` (true class, predicted class, top-1 probability),
  as in the CIFAR-100 ResNet-110 release.
* ``label-probs-text``: whitespace-separated text without a header: the true label, then
  K probabilities (the SVHN release).
* ``binary-scores-csv``: a CSV with a label column, group columns and one
  ``score_<classifier>`` column per classifier holding P(label = 1) (the fairness releases).
* ``pbassess-csv``: pbassess's own CSV: ``item_id``, optional ``label``, either ``p_<class>``
  columns or ``predicted`` + ``confidence`` (not both), and any attribute columns. Attribute
  columns are read as text and become numbers only when no two texts stand for the same number
  (:func:`pbassess.data._encoding.typed_text_attribute`): ``01``, ``1`` and ``1.0`` stay three
  groups.

Gzip is recognised by content (a plain file named ``.gz`` reads too), a UTF-8 byte-order mark
is skipped. The tables are parsed by pyarrow's multithreaded CSV reader; when it fails, a careful
line-by-line scan (:mod:`pbassess.data._textio`) names the line at fault. Parquet and Zarr
files and folders go to :func:`pbassess.data.lazy.read_lazy_predictions` (dask-backed).
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pbassess.constants import DEFAULT_THRESHOLD, DEFAULT_TIES, UNLABELED
from pbassess.data._encoding import typed_text_attribute
from pbassess.data._frame import RESERVED_COLUMNS, check_columns, csv_form_dataset
from pbassess.data._textio import diagnose, first_lines, input_stream, open_text
from pbassess.data._validate import check_dataset
from pbassess.data.predictions import Predictions
from pbassess.errors import ConfigError, DataError

__all__ = [
    "FORMATS",
    "LAZY_SUFFIXES",
    "detect_format",
    "read_binary_scores_csv",
    "read_label_probs_text",
    "read_pbassess_csv",
    "read_predictions",
    "read_top1_text",
]

FORMATS = ("top1-text", "label-probs-text", "binary-scores-csv", "pbassess-csv")
#: File and folder suffixes read lazily (dask-backed) by :mod:`pbassess.data.lazy`.
LAZY_SUFFIXES = (".parquet", ".pq", ".zarr")
_TOP1_HEADER = ["index", "correct", "predicted", "confidence"]


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
    lines = first_lines(path)
    if not lines or not lines[0].strip():
        raise DataError(f"{path}: the file is empty")
    first = lines[0].strip()
    if "," in first:
        cols = [c.strip() for c in next(csv.reader([first]))]
        if any(c.startswith("score_") for c in cols):
            return "binary-scores-csv"
        return "pbassess-csv"
    tokens = first.split()
    if [t.lower() for t in tokens[:4]] == _TOP1_HEADER:
        return "top1-text"
    try:
        [float(t) for t in tokens]
    except ValueError:
        raise DataError(f"{path}: cannot tell the format from the first line {first[:60]!r}") from None
    return "label-probs-text"


def _arrow_table(path: Path, *, delimiter: str, column_names: list[str] | None = None,
                 column_types: dict[str, Any] | None = None, numeric: dict[int, str] | None = None):
    """Parse with pyarrow; on failure, name the line at fault (careful scan) or re-raise as one line."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    read = pacsv.ReadOptions(block_size=1 << 24, column_names=column_names, skip_rows=1 if column_names else 0)
    parse = pacsv.ParseOptions(delimiter=delimiter)
    convert = pacsv.ConvertOptions(column_types=column_types or {}, strings_can_be_null=False,
                                   quoted_strings_can_be_null=False, auto_dict_encode=True,
                                   auto_dict_max_cardinality=1 << 16)
    try:
        with input_stream(path) as stream:
            return pacsv.read_csv(stream, read_options=read, parse_options=parse, convert_options=convert)
    except (pa.ArrowException, OSError, EOFError, ValueError) as exc:
        diagnose(path, whitespace=delimiter == " ", numeric=numeric)
        if delimiter == " ":
            return None  # a layout pyarrow cannot split (several spaces, tabs): use pandas
        raise DataError(f"{path}: cannot be read as CSV ({str(exc).splitlines()[0]})") from None


def _whitespace_table(path: Path, names: list[str], dtypes: dict[str, Any]):
    """Whitespace-separated table through pandas' C parser (runs of spaces or tabs)."""
    import pandas as pd
    import pyarrow as pa

    try:
        with open_text(path) as fh:
            frame = pd.read_csv(fh, sep=r"\s+", header=None, skiprows=1, names=names, dtype=dtypes,
                                keep_default_na=False, engine="c")
    except (ValueError, pd.errors.ParserError) as exc:
        raise DataError(f"{path}: cannot be read as a whitespace-separated table ({str(exc).splitlines()[0]})") from None
    return pa.Table.from_pandas(frame, preserve_index=False)


def read_top1_text(path: str | Path, *, classes: Sequence[str] | None = None, name: str | None = None) -> Predictions:
    """Read a top-1 text file (header ``Index Correct Predicted Confidence``).

    Parameters
    ----------
    path : str or Path
        The file (gzip allowed).
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
    import pyarrow as pa

    path = Path(path)
    lines = first_lines(path, 1)
    header = lines[0].split() if lines else []
    if [h.lower() for h in header[:4]] != _TOP1_HEADER or len(header) != 4:
        raise DataError(f"{path}: expected the header 'Index Correct Predicted Confidence', got {' '.join(header)!r}")
    names = ["id", "label", "predicted", "confidence"]
    text = pa.dictionary(pa.int32(), pa.string())
    types = {"id": pa.string(), "label": text, "predicted": text, "confidence": pa.float64()}
    table = _arrow_table(path, delimiter=" ", column_names=names, column_types=types, numeric={3: "confidence"})
    if table is None:
        table = _whitespace_table(path, names, {"id": str, "label": str, "predicted": str, "confidence": float})
    if table.num_rows == 0:
        raise DataError(f"{path}: the pool is empty (no rows after the header)")
    return Predictions.from_top1(table["predicted"], table["confidence"].to_numpy(), table["label"], classes=classes,
                                 item_ids=table["id"], name=name or path.name.split(".")[0])


def read_label_probs_text(path: str | Path, *, classes: Sequence[str] | None = None, normalize: bool = False,
                          name: str | None = None) -> Predictions:
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
    import pandas as pd

    path = Path(path)
    first = first_lines(path, 1)
    n_fields = len(first[0].split()) if first else 0
    diagnose_numeric = dict.fromkeys(range(n_fields), "a value")
    try:
        with open_text(path) as fh:
            table = pd.read_csv(fh, sep=r"\s+", header=None, dtype=float, engine="c").to_numpy()
    except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError, EOFError, OSError) as exc:
        diagnose(path, whitespace=True, numeric=diagnose_numeric)
        if isinstance(exc, pd.errors.EmptyDataError):
            raise DataError(f"{path}: the pool is empty") from None
        raise DataError(f"{path}: not a table of numbers ({str(exc).splitlines()[0]})") from None
    if table.shape[0] == 0:
        raise DataError(f"{path}: the pool is empty")
    if table.shape[1] < 3:
        raise DataError(f"{path}: expected a label and at least two probabilities per row, got {table.shape[1]} columns")
    raw = table[:, 0]
    k = table.shape[1] - 1
    names = tuple(classes) if classes is not None else tuple(str(i) for i in range(k))
    if len(names) != k:
        raise DataError(f"{path}: {len(names)} class names given for {k} probability columns")
    missing = np.isnan(raw) | (raw == -1)
    bad = ~missing & ((raw != np.round(raw)) | (raw < 0) | (raw >= k))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise DataError(f"{path}: row {row} has label {raw[row]:g}, outside the classes 0..{k - 1}")
    labels = np.asarray(names, dtype=object)[np.where(missing, 0, raw).astype(np.int64)]
    labels[missing] = None
    return Predictions.from_probs(table[:, 1:], labels, classes=names, normalize=normalize,
                                  name=name or path.name.split(".")[0])


def _binary_labels(y: Any, label: str, path: Path, invert: bool) -> np.ndarray:
    import pandas as pd

    values = pd.to_numeric(pd.Series(y), errors="coerce").to_numpy(dtype=float)
    text_missing = pd.isna(pd.Series(y)).to_numpy()
    if (np.isnan(values) & ~text_missing).any():
        row = int(np.flatnonzero(np.isnan(values) & ~text_missing)[0])
        raise DataError(f"{path}: label column {label!r} must hold 0/1, row {row} has {y[row]!r}")
    found = set(np.unique(values[~np.isnan(values)]).tolist())
    if not found <= {0.0, 1.0}:
        raise DataError(f"{path}: label column {label!r} must hold 0/1, found {sorted(found)[:5]}")
    codes = np.where(np.isnan(values), UNLABELED, values).astype(np.int64)
    return np.where(codes >= 0, 1 - codes, UNLABELED) if invert else codes


def read_binary_scores_csv(path: str | Path, *, model: str | None = None, label: str | None = None,
                           group_columns: Sequence[str] | None = None, threshold: float = DEFAULT_THRESHOLD,
                           ties: str = DEFAULT_TIES, invert_labels: bool = False, name: str | None = None) -> Predictions:
    """Read a binary-score CSV with one ``score_<classifier>`` column per classifier.

    Parameters
    ----------
    path : str or Path
        The CSV (gzip allowed). The first unnamed column, if any, becomes the item id.
    model : str, optional
        The score column to use, e.g. ``"score_LR"`` (``"LR"`` works too); required when
        the file has several.
    label : str, optional
        The label column; by default the one column that is neither a score, a group nor
        the index.
    group_columns : sequence of str, optional
        Attribute columns; by default every non-numeric column.
    threshold : float, default 0.5
        Predict the positive class where the score is above this.
    ties : {"negative", "positive"}, default "negative"
        The class of a score equal to the threshold ("negative": scikit-learn's ``predict``,
        which produced the released fairness classifiers' decisions).
    invert_labels : bool, default False
        Swap label codes 0 and 1 (for files whose label coding is inverted against the scores).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "s.csv"
    >>> _ = f.write_text(",sex,y,score_LR\\n7,F,1,0.9\\n8,M,0,0.7\\n")
    >>> p = read_binary_scores_csv(f)
    >>> p.item_ids.tolist(), p.correct.tolist(), list(p.groups)
    ([7, 8], [True, False], ['sex'])
    """
    import pandas as pd
    import pyarrow as pa

    path = Path(path)
    header = next(csv.reader(first_lines(path, 1) or [""]))
    check_columns(header, str(path))
    text = pa.dictionary(pa.int32(), pa.string())
    table = _arrow_table(path, delimiter=",", column_types={c: text for c in header if not c.startswith("score_")})
    for col in [c for c in table.column_names if not c.startswith("score_")]:  # numbers only where identity is kept
        table = table.set_column(table.schema.get_field_index(col), col, typed_text_attribute(table[col]))
    frame = table.to_pandas()
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
    labels = _binary_labels(frame[label].to_numpy(dtype=object), label, path, invert_labels)
    if not pd.api.types.is_numeric_dtype(frame[model]):
        bad = pd.to_numeric(frame[model], errors="coerce").isna().to_numpy()
        row = int(np.flatnonzero(bad)[0])
        raise DataError(f"{path}: score column {model!r}: row {row} has {frame[model].iloc[row]!r}, not a number")
    return Predictions.from_binary_scores(
        frame[model].to_numpy(dtype=float, na_value=np.nan), labels, threshold=threshold, ties=ties,
        item_ids=frame[id_col] if id_col is not None else None, groups={g: frame[g] for g in group_columns},
        name=name or f"{path.name.split('.')[0]}:{model[6:]}",
    )


def read_pbassess_csv(path: str | Path, *, normalize: bool = False, classes: Sequence[str] | None = None,
                      name: str | None = None) -> Predictions:
    """Read pbassess's own CSV format (see the module docstring).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "p.csv"
    >>> _ = f.write_text("item_id,label,p_a,p_b,site\\nx,a,0.8,0.2,s1\\ny,,0.3,0.7,s2\\n")
    >>> read_pbassess_csv(f)
    Predictions('p': 2 items, 2 classes, 1 labeled, full probabilities)
    """
    import pyarrow as pa

    path = Path(path)
    lines = first_lines(path, 1)
    if not lines or not lines[0].strip():
        raise DataError(f"{path}: the file is empty")
    header = [c.strip() for c in next(csv.reader([lines[0].rstrip("\r\n")]))]
    check_columns(header, str(path))
    text = pa.dictionary(pa.int32(), pa.string())
    attributes = [c for c in header if c not in RESERVED_COLUMNS and not c.startswith("p_")]
    types = {"item_id": pa.string(), "label": text, "predicted": text, "confidence": pa.float64(),
             **{c: pa.float64() for c in header if c.startswith("p_")}, **dict.fromkeys(attributes, text)}
    numeric = {i: f"{c} value" for i, c in enumerate(header) if c.startswith("p_") or c == "confidence"}
    table = _arrow_table(path, delimiter=",", column_types={c: t for c, t in types.items() if c in header},
                         numeric=numeric)
    if table.num_rows == 0:
        raise DataError(f"{path}: the pool is empty")
    for col in attributes:  # read as text, typed only where every value keeps its identity ('01' != '1')
        table = table.set_column(table.schema.get_field_index(col), col, typed_text_attribute(table[col]))
    ds = csv_form_dataset(table, normalize=normalize, classes=classes, name=name or path.name.split(".")[0],
                          where=str(path))
    return Predictions._wrap(check_dataset(ds))


def _is_lazy_folder(path: Path) -> bool:
    """A folder of Parquet files or a Zarr store."""
    if not path.is_dir():
        return False
    markers = (".zgroup", "zarr.json")
    return any((path / m).exists() for m in markers) or next(path.rglob("*.parquet"), None) is not None \
        or next(path.rglob("*.pq"), None) is not None


def read_predictions(path: str | Path, *, format: str | None = None, **options: Any) -> Predictions:
    """Read a prediction file in any supported format (detected when not given).

    Options are passed to the format's reader (``model``/``threshold``/``ties`` for binary
    scores, ``classes``, ``normalize``, ...). Parquet (``.parquet``, ``.pq``) and Zarr
    (``.zarr``) files and folders are read lazily by :func:`pbassess.data.lazy.read_lazy_predictions`.

    Parameters
    ----------
    path : str or pathlib.Path
        A prediction file or (Zarr) folder.
    format : str, optional
        The format's name; detected from the file when omitted.
    **options
        Passed to the format's reader.

    Returns
    -------
    Predictions
        Lazy (Parquet, Zarr) or in memory (the other formats).

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
    if format is None and (path.suffix.lower() in LAZY_SUFFIXES or _is_lazy_folder(path)):
        from pbassess.data.lazy import read_lazy_predictions

        return read_lazy_predictions(path, **{k: v for k, v in options.items() if v is not None})
    if path.is_dir():
        raise DataError(f"{path} is a folder, not a prediction file (nor a folder of Parquet files or a Zarr store)")
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
