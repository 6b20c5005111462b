"""Reader of the ACS employment prediction set (NannyML's folktables example, Massachusetts).

The set comes as three Parquet files: ``employment_MA_reference.pq`` (2015, with the true
label ``employed``), ``employment_MA_analysis.pq`` (2016-2018, without it) and
``employment_MA_analysis_target.pq`` (``id``, ``employed`` for the analysis rows). The reader
joins the analysis file with its target on ``id``, stacks the reference rows in front and
returns binary :class:`~pbassess.data.predictions.Predictions` over all 277,677 people:
predicted class = ``prediction`` (1 = employed), P(employed) = ``predicted_probability``,
every item labeled, the person attributes kept as integer ACS PUMS codes (age ``AGEP`` as an
integer number of years) plus ``year`` as the environment column.

The registry (:mod:`pbassess.data.registry`) hands cards whose ``format`` is
:data:`ACS_FORMAT` to :func:`load_acs_employment`, which finds each file in the local mirror
(``PBASSESS_DATA_DIR``), the user cache, or downloads it with its sha256 checked.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from pbassess.constants import DATA_DIR_ENV
from pbassess.data.download import cache_dir, download_file
from pbassess.data.predictions import Predictions
from pbassess.errors import DataError

__all__ = ["ACS_ATTRIBUTES", "ACS_FORMAT", "load_acs_employment", "read_acs_employment"]

ACS_FORMAT = "acs-employment-parquet"
ACS_ATTRIBUTES = ("AGEP", "SCHL", "MAR", "RELP", "DIS", "ESP", "CIT", "MIG", "MIL", "ANC",
                  "NATIVITY", "DEAR", "DEYE", "DREM", "SEX", "RAC1P", "year")
_FILES = {"reference": "employment_MA_reference.pq", "analysis": "employment_MA_analysis.pq",
          "target": "employment_MA_analysis_target.pq"}
CLASSES = ("not_employed", "employed")


def _integer_codes(column: Any, name: str) -> np.ndarray:
    """Integer codes of a (categorical-string or numeric) column, with a clear error if not integral."""
    import pandas as pd

    series = pd.Series(column)
    if isinstance(series.dtype, pd.CategoricalDtype):  # map the few categories, not every row
        cats = pd.to_numeric(pd.Series(series.cat.categories.astype(str)), errors="coerce").to_numpy(dtype=float)
        codes = series.cat.codes.to_numpy()
        values = np.where(codes >= 0, cats[np.maximum(codes, 0)], np.nan)
    else:
        values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)
    if not np.all(np.isfinite(values)) or np.any(values != np.round(values)):
        bad = int(np.flatnonzero(~np.isfinite(values) | (values != np.round(values)))[0])
        raise DataError(f"ACS column {name!r}: row {bad} is not an integer code")
    return values.astype(np.int64)


def read_acs_employment(folder: str | os.PathLike, *, name: str = "acs-employment",
                        paths: dict[str, str | os.PathLike] | None = None) -> Predictions:
    """Read the ACS employment set from a folder holding its three Parquet files.

    Parameters
    ----------
    folder : path
        Folder with ``employment_MA_{reference,analysis,analysis_target}.pq``.
    name : str
        Display name of the prediction set.
    paths : dict, optional
        Explicit file paths under the keys ``reference``, ``analysis``, ``target``.

    Returns
    -------
    Predictions
        Binary, all items labeled; attribute columns as integer codes (see module docstring).

    Examples
    --------
    >>> read_acs_employment("/nonexistent")
    Traceback (most recent call last):
    ...
    pbassess.errors.DataError: ACS employment file missing: /nonexistent/employment_MA_reference.pq
    """
    import pandas as pd

    files = {key: Path(folder) / fname for key, fname in _FILES.items()}
    files.update({k: Path(v) for k, v in (paths or {}).items()})
    for path in files.values():
        if not path.exists():
            raise DataError(f"ACS employment file missing: {path}")
    reference = pd.read_parquet(files["reference"])
    analysis = pd.read_parquet(files["analysis"])
    target = pd.read_parquet(files["target"])
    if "employed" not in reference or "employed" not in target or "id" not in target:
        raise DataError("ACS employment files lack the 'employed' label or the 'id' join key")
    if target["id"].duplicated().any():
        raise DataError("ACS analysis target: duplicate ids")
    joined = analysis.merge(target[["id", "employed"]], on="id", how="left", validate="one_to_one")
    if joined["employed"].isna().any():
        missing = joined.loc[joined["employed"].isna(), "id"].iloc[0]
        raise DataError(f"ACS analysis row with id {missing} has no entry in the analysis target file")
    frame = pd.concat([reference, joined[reference.columns]], ignore_index=True)
    score = frame["predicted_probability"].to_numpy(dtype=float)
    predicted = frame["prediction"].to_numpy(dtype=np.int64)
    if not np.array_equal(predicted, (score >= 0.5).astype(np.int64)):
        raise DataError("ACS employment: 'prediction' disagrees with predicted_probability >= 0.5")
    probs = np.column_stack([1.0 - score, score])
    groups = {col: _integer_codes(frame[col], col) for col in ACS_ATTRIBUTES if col in frame}
    labels = frame["employed"].to_numpy(dtype=np.int64)
    return Predictions(
        predicted=predicted, confidence=probs[np.arange(len(frame)), predicted], classes=CLASSES,
        labels=labels, item_ids=np.array([str(i) for i in frame["id"].to_numpy()], dtype=object),
        probs=probs, groups=groups, name=name,
    )


def _locate(entry: dict[str, Any], *, download: bool) -> Path:
    """One file of the recipe: mirror, then cache, then a checked download."""
    rel = entry["mirror_path"]
    mirror = os.environ.get(DATA_DIR_ENV)
    cache = cache_dir() / rel
    for path in ([Path(mirror) / rel] if mirror else []) + [cache]:
        if path.exists():
            return path
    if not download:
        raise DataError(f"{rel} is not available locally (set {DATA_DIR_ENV} to a mirror or allow the download)")
    return download_file(entry["url"], cache, entry["sha256"])


def load_acs_employment(card: Any, *, download: bool = True, **options: Any) -> Predictions:
    """Load the registered ACS set described by ``card`` (its ``files`` list names the three files).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> load_acs_employment(SimpleNamespace(name="x", extra={}, source=None))
    Traceback (most recent call last):
    ...
    pbassess.errors.DataError: card 'x' lists no ACS files
    """
    files = (card.extra or {}).get("files") or {}
    if set(files) != set(_FILES):
        raise DataError(f"card {card.name!r} lists no ACS files")
    unknown = set(options) - {"name"}
    if unknown:
        raise DataError(f"option {sorted(unknown)[0]!r} does not apply to the ACS employment set")
    paths = {key: _locate(entry, download=download) for key, entry in files.items()}
    return read_acs_employment(paths["reference"].parent, name=options.get("name") or card.name, paths=paths)
