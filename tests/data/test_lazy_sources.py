"""The reading layer of lazy sources (issue 23): completeness, hidden files, ids, column order, attribute texts."""

from __future__ import annotations

import dask.array as da
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pbassess import Predictions
from pbassess.counting import count_cells
from pbassess.data import read_predictions
from pbassess.data._encoding import typed_text_attribute
from pbassess.data._lazy_sources import ParquetSource
from pbassess.data.lazy import check_unique_ids, read_lazy_predictions, write_zarr
from pbassess.errors import DataError


def _frame(n: int = 60, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = rng.dirichlet([1, 1, 1], n)
    return pd.DataFrame({"item_id": np.arange(n), "label": rng.integers(0, 3, n),
                         "p_a": p[:, 0], "p_b": p[:, 1], "p_c": p[:, 2], "site": rng.choice(["x", "y"], n)})


# ----------------------------------------------------------------------------- item ids, streaming
@pytest.mark.parametrize("text", [False, True])
@pytest.mark.parametrize("per_pass", [None, 7])  # 7: many hash partitions, each pass reading every block
def test_unique_ids_pass_and_a_repeat_is_found_across_blocks(text, per_pass):
    ids = np.random.default_rng(1).permutation(100)
    values = ids.astype(str).astype(object) if text else ids
    arr = da.from_array(values, chunks=30)
    check_unique_ids(arr, lambda row: f"file-{row // 30}", ids_per_pass=per_pass)
    values = values.copy()
    values[95] = values[3]
    with pytest.raises(DataError, match=r"^item ids must be unique: .* appears 2 times \(in file-0 and file-3\)$"):
        check_unique_ids(da.from_array(values, chunks=30), lambda row: f"file-{row // 30}", ids_per_pass=per_pass)


def test_sorted_ids_are_unique_after_one_pass():
    calls = []
    arr = da.arange(1000, chunks=100).map_blocks(lambda b: calls.append(len(b)) or b, dtype=np.int64)
    check_unique_ids(arr, str, ids_per_pass=10)  # 100 passes if the ids were not increasing
    assert [c for c in calls if c] == [100] * 10


def test_a_hash_collision_is_not_a_duplicate(monkeypatch):
    import pbassess.data.lazy as lazy

    monkeypatch.setattr(lazy, "_hash_ids", lambda block: np.zeros(len(block), dtype=np.uint64))
    check_unique_ids(da.from_array(np.array([5, 3, 9, 1]), chunks=2), str)  # every hash equal, ids distinct


# ----------------------------------------------------------------------------- Parquet folders
def test_parquet_folder_skips_hidden_and_accepts_reordered_columns(tmp_path):
    frame = _frame()
    folder = tmp_path / "pool"
    (folder / ".ipynb_checkpoints").mkdir(parents=True)
    frame.iloc[:30].to_parquet(folder / "part-0.parquet", index=False)
    part = frame.iloc[30:]
    part[list(part.columns)[::-1]].to_parquet(folder / "part-1.parquet", index=False)
    frame.to_parquet(folder / ".ipynb_checkpoints" / "part-0.parquet", index=False)
    frame.to_parquet(folder / ".hidden.parquet", index=False)
    lazy = read_predictions(folder)
    eager = Predictions.from_dataframe(frame, group_columns=["site"])
    assert lazy.n_items == 60
    np.testing.assert_array_equal(lazy.labels, eager.labels)
    np.testing.assert_array_equal(lazy.groups["site"], eager.groups["site"])
    np.testing.assert_array_equal(count_cells(lazy, "predicted")["correct"], count_cells(eager, "predicted")["correct"])


def test_parquet_column_max_reads_each_parts_own_column_order(tmp_path):
    pq.write_table(pa.table({"predicted": [0, 1], "label": [1, 1], "confidence": [0.9, 0.8]}), tmp_path / "a.parquet")
    pq.write_table(pa.table({"label": [0, 2], "predicted": [5, 0], "confidence": [0.7, 0.6]}), tmp_path / "b.parquet")
    source = ParquetSource.open(tmp_path, 100)
    assert source.column_max("predicted") == 5 and source.column_max("label") == 2


def test_parquet_int_and_float_parts_merge_and_text_in_a_number_column_is_refused(tmp_path):
    pq.write_table(pa.table({"predicted": [0, 1], "confidence": [0.9, 0.8], "label": [0, 1]}), tmp_path / "a.parquet")
    pq.write_table(pa.table({"predicted": [1, 0], "confidence": [0.7, 0.6], "label": [None, 0.0]}), tmp_path / "b.parquet")
    p = read_lazy_predictions(tmp_path, classes=["x", "y"])
    assert p.labels.tolist() == [0, 1, -1, 0]
    pq.write_table(pa.table({"predicted": [1, 0], "confidence": ["0.7", "0.6"], "label": [1, 0]}), tmp_path / "c.parquet")
    with pytest.raises(DataError, match=r"c\.parquet: column 'confidence' holds text \(string\), but numbers"):
        read_lazy_predictions(tmp_path, classes=["x", "y"])


def test_a_file_changed_after_opening_is_named(tmp_path):
    frame = _frame()
    frame.to_parquet(tmp_path / "p.parquet", index=False)
    lazy = read_predictions(tmp_path / "p.parquet")
    frame.iloc[:10].to_parquet(tmp_path / "p.parquet", index=False)
    with pytest.raises(DataError, match=r"p\.parquet: row groups 0\.\.0 hold 10 rows, the footer says 60 \(the file"):
        lazy.labels  # noqa: B018 - reading is the point


# ----------------------------------------------------------------------------- Zarr stores
def test_write_zarr_stores_chunks_equal_to_the_fill_value(tmp_path):
    """A chunk of labels all 0 (the fill value) is written, so the store reads back complete."""
    n = 40
    p = Predictions.from_probs(np.tile([[0.6, 0.4]], (n, 1)), labels=[0] * 20 + [1] * 20)
    store = write_zarr(p, tmp_path / "s.zarr", rows_per_chunk=10)
    assert (store / "label" / "c" / "0").is_file()
    back = read_lazy_predictions(store)
    assert back.labels.tolist() == p.labels.tolist()


def test_zarr_missing_chunk_of_each_array_is_named(tmp_path):
    p = Predictions.from_probs(np.tile([[0.7, 0.3]], (30, 1)), labels=[0, 1, -1] * 10, groups={"g": ["a", "b"] * 15})
    store = write_zarr(p, tmp_path / "s.zarr", rows_per_chunk=10)
    for array in ("label", "predicted", "confidence", "g", "item_id"):
        chunk = store / array / "c" / "1"
        data = chunk.read_bytes()
        chunk.unlink()
        with pytest.raises(DataError, match=rf"{array}/c/1: chunk \(1,\) of array '{array}' is missing"):
            read_lazy_predictions(store)
        chunk.write_bytes(data)
    assert read_lazy_predictions(store).labels.tolist() == p.labels.tolist()


def test_zarr_chunk_size_follows_rows_per_chunk(tmp_path):
    p = Predictions.from_probs(np.tile([[0.7, 0.3]], (100, 1)))
    store = write_zarr(p, tmp_path / "s.zarr", rows_per_chunk=10)
    assert read_lazy_predictions(store, rows_per_chunk=25).dataset["predicted"].data.chunks[0][0] == 20
    assert read_lazy_predictions(store).dataset["predicted"].data.numblocks == (1,)


# ----------------------------------------------------------------------------- attribute texts
@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (["01", "1", "1.0"], ["01", "1", "1.0"]),           # three groups, not one "1.0"
        (["1.5", "1.50", "2"], ["1.5", "1.50", "2"]),       # two texts of one number: text
        (["007", "8"], ["007", "8"]),                       # a leading zero: a code, not a number
        (["+1", "2"], [1, 2]),                              # a signed integer is a number
        (["+1", "1"], ["+1", "1"]),                         # ... but not when "1" is there too
        (["3", "", "12"], [3, None, 12]),                   # integers with a missing value
        (["0.5", "2", "NA"], [0.5, 2.0, None]),
        (["-4", "0", "17"], [-4, 0, 17]),
        (["True", "False", "True"], [True, False, True]),
        (["a", "NA", ""], ["a", "NA", ""]),                 # text keeps its missing markers as written
    ],
)
def test_attribute_texts_keep_their_identity(texts, expected):
    assert typed_text_attribute(pa.chunked_array([texts])).to_pylist() == expected


def test_csv_attribute_groups_are_the_texts(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("item_id,label,p_a,p_b,A\n1,a,0.9,0.1,01\n2,b,0.2,0.8,1\n3,a,0.6,0.4,1.0\n4,b,0.3,0.7,1\n")
    groups = read_predictions(path).groups["A"]
    assert groups.tolist() == ["01", "1", "1.0", "1"]
