"""Synthetic pools of any size, written to Parquet chunk by chunk, with known true accuracies.

Each item's predicted class is drawn from a Zipf-like class distribution; its prediction is
correct with probability ``accuracy[c]`` for predicted class ``c`` (so the population accuracy
per predicted class, the quantity ``assess_accuracy`` estimates, is known exactly); its
confidence is drawn from a Beta distribution whose mean is ``accuracy[c]`` (calibrated on
average) and at least 1/K; wrong predictions get a true label uniform over the other classes;
each label is kept with probability ``labeled_fraction`` (null otherwise). Columns follow the
CSV form: ``item_id``, ``label``, ``predicted`` + ``confidence`` (top-1) or ``p_<class>``
(full form), and an attribute column ``region``. Memory stays at one chunk whatever the size.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pbassess.errors import ConfigError

__all__ = ["SyntheticPool", "write_synthetic_pool"]

_REGIONS = np.array(["north", "south", "east", "west"], dtype=object)


@dataclass(frozen=True)
class SyntheticPool:
    """Where a synthetic pool was written and the truth it was drawn from.

    Examples
    --------
    >>> import tempfile
    >>> pool = write_synthetic_pool(tempfile.mkdtemp(), 1000, 3, seed=0, labeled_fraction=0.5)
    >>> isinstance(pool, SyntheticPool), pool.n_items, pool.n_classes, pool.path.exists()
    (True, 1000, 3, True)
    """

    path: Path
    n_items: int
    n_classes: int
    form: str
    accuracy: np.ndarray          # true accuracy per predicted class (population)
    class_share: np.ndarray       # probability of each predicted class
    labeled_fraction: float
    counts: dict[str, np.ndarray]  # realised per-class n_pool, n (labeled), correct (labeled)

    @property
    def overall_accuracy(self) -> float:
        """Population accuracy over all items (share-weighted)."""
        return float(self.class_share @ self.accuracy)


def _chunk(rng: np.random.Generator, start: int, rows: int, accuracy: np.ndarray, share: np.ndarray,
           labeled_fraction: float, form: str, concentration: float) -> dict[str, Any]:
    k = accuracy.size
    predicted = rng.choice(k, size=rows, p=share)
    acc = accuracy[predicted]
    correct = rng.random(rows) < acc
    wrong_offset = rng.integers(1, k, size=rows)
    label = np.where(correct, predicted, (predicted + wrong_offset) % k)
    mean = np.clip(acc, 1.0 / k + 1e-3, 1 - 1e-3)
    conf = rng.beta(mean * concentration, (1 - mean) * concentration)
    conf = np.maximum(conf, 1.0 / k + 1e-6)
    labeled = rng.random(rows) < labeled_fraction
    columns: dict[str, Any] = {"item_id": np.arange(start, start + rows, dtype=np.int64)}
    columns["label"] = np.where(labeled, label, -1)
    if form == "top1":
        columns["predicted"] = predicted
        columns["confidence"] = conf
    else:
        rest = rng.dirichlet(np.ones(k - 1), size=rows) * (1 - conf)[:, None]
        too_big = rest.max(axis=1) >= conf               # keep the predicted class the most probable:
        rest[too_big] = ((1 - conf[too_big]) / (k - 1))[:, None]   # spread evenly (< conf as conf > 1/K)
        probs = np.empty((rows, k))
        others = (predicted[:, None] + np.arange(1, k)[None, :]) % k
        probs[np.arange(rows)[:, None], others] = rest
        probs[np.arange(rows), predicted] = conf
        for j in range(k):
            columns[f"p_{j}"] = probs[:, j]
    columns["region"] = _REGIONS[rng.integers(0, _REGIONS.size, size=rows)]
    # The NumPy counting core imports NumPy only (allowed from this layer; see pyproject.toml).
    from pbassess.counting.core import cell_counts

    stats = {"n_pool": cell_counts(predicted, k), "n": cell_counts(predicted[labeled], k),
             "correct": cell_counts(predicted[labeled & correct], k)}
    return {"columns": columns, "labeled": labeled, "stats": stats}


def write_synthetic_pool(path: Any, n_items: int, n_classes: int = 10, *, form: str = "top1",
                         labeled_fraction: float = 0.1, accuracy: Any = None, rows_per_file: int = 10_000_000,
                         row_group_size: int = 1 << 20, concentration: float = 20.0,
                         seed: Any = None) -> SyntheticPool:
    """Write a synthetic pool to a folder of Parquet files, one row group at a time.

    Parameters
    ----------
    path : str or Path
        Folder to create (files ``part-00000.parquet``, ... and ``truth.json``).
    n_items, n_classes : int
    form : {"top1", "probs"}
    labeled_fraction : float
        Share of items whose label is kept (the others are null).
    accuracy : array_like, shape (n_classes,), optional
        True accuracy per predicted class (default: evenly spaced from 0.55 to 0.95).
    rows_per_file, row_group_size : int
    concentration : float
        Beta concentration of the confidences around each class's accuracy.
    seed : int or Generator, optional

    Returns
    -------
    SyntheticPool

    Examples
    --------
    >>> import tempfile
    >>> pool = write_synthetic_pool(tempfile.mkdtemp(), 1000, 3, seed=0, labeled_fraction=0.5)
    >>> pool.accuracy.round(2).tolist(), int(pool.counts["n_pool"].sum())
    ([0.55, 0.75, 0.95], 1000)
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pbassess.seeds import as_generator  # the project's one seed handler

    if int(n_items) < 1 or int(n_classes) < 2:
        raise ConfigError(f"need at least one item and two classes, got {n_items} and {n_classes}")
    if form not in ("top1", "probs"):
        raise ConfigError(f"form must be 'top1' or 'probs', got {form!r}")
    if not 0 <= labeled_fraction <= 1:
        raise ConfigError(f"labeled_fraction must lie in [0, 1], got {labeled_fraction}")
    k = int(n_classes)
    acc = np.linspace(0.55, 0.95, k) if accuracy is None else np.asarray(accuracy, dtype=float)
    if acc.shape != (k,) or (acc < 0).any() or (acc > 1).any():
        raise ConfigError(f"accuracy must hold {k} values in [0, 1]")
    share = 1.0 / np.arange(1, k + 1) ** 0.5
    share /= share.sum()
    rng = as_generator(seed)
    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    totals = {key: np.zeros(k, dtype=np.int64) for key in ("n_pool", "n", "correct")}
    written, file_index = 0, 0
    while written < n_items:
        file_rows = min(int(rows_per_file), n_items - written)
        writer = None
        done = 0
        while done < file_rows:
            rows = min(int(row_group_size), file_rows - done)
            part = _chunk(rng, written + done, rows, acc, share, labeled_fraction, form, concentration)
            cols = part["columns"]
            arrays = {c: pa.array(v, mask=~part["labeled"] if c == "label" else None) for c, v in cols.items()}
            table = pa.table(arrays)
            if writer is None:
                writer = pq.ParquetWriter(folder / f"part-{file_index:05d}.parquet", table.schema)
            writer.write_table(table, row_group_size=rows)
            for key in totals:
                totals[key] += part["stats"][key]
            done += rows
        writer.close()
        written += file_rows
        file_index += 1
    truth = {"n_items": int(n_items), "n_classes": k, "form": form, "accuracy": acc.tolist(),
             "class_share": share.tolist(), "labeled_fraction": labeled_fraction,
             "counts": {key: v.tolist() for key, v in totals.items()}}
    (folder / "truth.json").write_text(json.dumps(truth))
    return SyntheticPool(folder, int(n_items), k, form, acc, share, float(labeled_fraction), totals)
