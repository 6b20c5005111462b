"""Lazy Parquet / Zarr / CSV pools count exactly like the same pool in memory."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from pbassess import Predictions
from pbassess.counting import count_cells, equal_mass_edges
from pbassess.data import read_predictions
from pbassess.data.lazy import read_lazy_predictions, write_zarr
from pbassess.data.synthetic import write_synthetic_pool
from pbassess.errors import DataError

KEYS = [("predicted",), ("predicted", "true"), ("bin",), ("region", "predicted"), ()]


def _eager(lazy: Predictions) -> Predictions:
    return Predictions.from_dataset(lazy.dataset.compute())


def _assert_same_counts(lazy: Predictions, eager: Predictions, stats=()) -> None:
    for by in KEYS:
        a = count_cells(lazy, by, bin_edges=8, item_stats=stats)
        b = count_cells(eager, by, bin_edges=8, item_stats=stats)
        xr.testing.assert_identical(a, b)


@pytest.mark.parametrize("form", ["top1", "probs"])
def test_synthetic_parquet_folder_counts_like_memory(tmp_path, form):
    pool = write_synthetic_pool(tmp_path / "pool", 5000, 4, form=form, labeled_fraction=0.3, rows_per_file=2100,
                                row_group_size=700, seed=3)
    lazy = read_predictions(tmp_path / "pool")            # the folder dispatches to the lazy reader
    assert lazy.is_lazy and lazy.n_items == 5000 and lazy.classes == ("0", "1", "2", "3")
    assert lazy.dataset["predicted"].data.numblocks[0] > 1
    eager = _eager(lazy)
    stats = ("nll", "brier", "entropy") if form == "probs" else ("calibration_bias",)
    _assert_same_counts(lazy, eager, stats)
    c = count_cells(lazy, "predicted")
    np.testing.assert_array_equal(c["n_pool"], pool.counts["n_pool"])
    np.testing.assert_array_equal(c["n"], pool.counts["n"])
    np.testing.assert_array_equal(c["correct"], pool.counts["correct"])
    np.testing.assert_array_equal(equal_mass_edges(lazy, 5), equal_mass_edges(eager, 5))


def test_synthetic_accuracy_matches_its_truth(tmp_path):
    pool = write_synthetic_pool(tmp_path / "p", 60_000, 3, labeled_fraction=1.0, seed=4, accuracy=[0.6, 0.8, 0.9])
    c = count_cells(read_lazy_predictions(tmp_path / "p"), "predicted")
    rate = c["correct"] / c["n"]
    se = np.sqrt(pool.accuracy * (1 - pool.accuracy) / c["n"].values)
    np.testing.assert_array_less(np.abs(rate.values - pool.accuracy), 4 * se)     # binomial, 4 standard errors
    share = c["n_pool"].values / 60_000
    np.testing.assert_allclose(share, pool.class_share, atol=4 * np.sqrt(0.25 / 60_000))


def _frame(n=400, seed=0):
    rng = np.random.default_rng(seed)
    pred = rng.integers(0, 3, n)
    lab = np.where(rng.random(n) < 0.5, pred, rng.integers(0, 3, n)).astype(float)
    lab[rng.random(n) < 0.4] = np.nan
    return pd.DataFrame({"item_id": [f"id{i}" for i in range(n)],
                         "predicted": np.array(["cat", "dog", "eel"])[pred],
                         "confidence": rng.uniform(0.34, 1, n),
                         "label": pd.Series(np.array(["cat", "dog", "eel"] + [None])[np.nan_to_num(lab, nan=3).astype(int)]),
                         "age": rng.integers(20, 25, n), "site": rng.choice(["a", "b"], n)})


def test_text_class_names_and_partial_labels_parquet_and_csv(tmp_path):
    frame = _frame()
    frame.iloc[:150].to_parquet(tmp_path / "part-a.parquet")
    frame.iloc[150:].to_parquet(tmp_path / "part-b.parquet")
    frame.to_csv(tmp_path / "pool.csv", index=False)
    in_memory = Predictions.from_dataframe(frame, predicted="predicted", confidence="confidence",
                                           group_columns=["age", "site"])
    for lazy in (read_lazy_predictions(tmp_path, name="pq"),
                 read_lazy_predictions(tmp_path / "pool.csv", rows_per_chunk=64)):
        assert lazy.is_lazy and lazy.classes == ("cat", "dog", "eel")
        assert lazy.n_labeled == in_memory.n_labeled
        np.testing.assert_array_equal(lazy.labels, in_memory.labels)
        assert lazy.groups["age"].dtype.kind == "i"
        for by in [("predicted", "true"), ("site", "age", "bin")]:
            xr.testing.assert_identical(count_cells(lazy, by, bin_edges=5), count_cells(in_memory, by, bin_edges=5))


def test_integer_codes_with_class_names_and_zarr_round_trip(tmp_path):
    rng = np.random.default_rng(1)
    n = 300
    df = pd.DataFrame({"predicted": rng.integers(0, 2, n), "confidence": rng.uniform(0.5, 1, n),
                       "label": pd.array(np.where(rng.random(n) < 0.5, rng.integers(0, 2, n), -1), dtype="Int64")})
    df.loc[::7, "label"] = pd.NA
    df.to_parquet(tmp_path / "codes.parquet", row_group_size=50)
    lazy = read_lazy_predictions(tmp_path / "codes.parquet", classes=["neg", "pos"], rows_per_chunk=50)
    assert lazy.classes == ("neg", "pos") and lazy.dataset["predicted"].data.numblocks[0] == 6
    want = np.where(df["label"].isna(), -1, df["label"].fillna(-1)).astype(int)
    np.testing.assert_array_equal(lazy.labels, want)
    store = write_zarr(_eager(lazy), tmp_path / "pool.zarr", rows_per_chunk=64)
    back = read_lazy_predictions(store)
    assert back.is_lazy and back.classes == ("neg", "pos")
    xr.testing.assert_identical(count_cells(back, ("predicted", "true")), count_cells(lazy, ("predicted", "true")))


def test_bad_values_are_reported_when_counted(tmp_path):
    pd.DataFrame({"predicted": [0, 1, 7], "confidence": [0.9, 0.8, 0.7]}).to_parquet(tmp_path / "bad.parquet")
    lazy = read_lazy_predictions(tmp_path / "bad.parquet", classes=["a", "b"])
    with pytest.raises(DataError, match="predicted"):
        count_cells(lazy)
    with pytest.raises(DataError, match="no such file"):
        read_lazy_predictions(tmp_path / "missing.parquet")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="no .parquet files"):
        read_lazy_predictions(tmp_path / "empty")


def test_probability_csv_normalized_lazily(tmp_path):
    rng = np.random.default_rng(5)
    raw = rng.dirichlet([1, 1, 1], size=120) * rng.uniform(0.9, 0.98, (120, 1))    # rows sum to 0.90-0.98
    frame = pd.DataFrame({"p_a": raw[:, 0], "p_b": raw[:, 1], "p_c": raw[:, 2],
                          "label": np.where(np.arange(120) % 3 == 0, None, np.array(["a", "b", "c"])[np.arange(120) % 3])})
    frame.to_csv(tmp_path / "probs.csv", index=False)
    with pytest.raises(DataError, match="sums to"):
        count_cells(read_lazy_predictions(tmp_path / "probs.csv", rows_per_chunk=25))
    lazy = read_lazy_predictions(tmp_path / "probs.csv", normalize=True, rows_per_chunk=25)
    eager = Predictions.from_probs(raw, frame["label"], classes=["a", "b", "c"], normalize=True)
    assert lazy.dataset["probs"].data.numblocks[0] == 5
    got = count_cells(lazy, ("predicted", "true"), item_stats=("nll", "brier"))
    want = count_cells(eager, ("predicted", "true"), item_stats=("nll", "brier"))
    xr.testing.assert_allclose(got, want, rtol=1e-15, atol=1e-15)     # same division, chunk by chunk


def test_reader_errors_name_the_problem(tmp_path):
    pd.DataFrame({"predicted": [0, 1], "confidence": [0.9, 0.8]}).to_parquet(tmp_path / "a.parquet")
    pd.DataFrame({"predicted": [0, 1], "score": [0.9, 0.8]}).to_parquet(tmp_path / "b.parquet")
    with pytest.raises(DataError, match="its columns differ"):
        read_lazy_predictions(tmp_path)
    (tmp_path / "b.parquet").unlink()
    pd.DataFrame({"predicted": ["cat", "dog"], "confidence": [0.9, 0.8], "label": ["cat", "cow"]}).to_parquet(
        tmp_path / "c.parquet")
    names = read_lazy_predictions(tmp_path / "c.parquet", classes=["cat", "dog"])
    with pytest.raises(DataError, match="cow"):
        count_cells(names)
    pd.DataFrame({"p_a": [0.5], "predicted": ["a"], "confidence": [0.5]}).to_parquet(tmp_path / "d.parquet")
    with pytest.raises(DataError, match="keep one form"):
        read_lazy_predictions(tmp_path / "d.parquet")
    with pytest.raises(DataError, match="unknown lazy format 'hdf5'"):
        read_lazy_predictions(tmp_path / "a.parquet", format="hdf5")
    (tmp_path / "pool.h5").write_bytes(b"\x89HDF")
    with pytest.raises(DataError, match="cannot tell its format"):
        read_lazy_predictions(tmp_path / "pool.h5")
