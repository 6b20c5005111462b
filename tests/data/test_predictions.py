"""Predictions as a validated view over an xarray.Dataset: layout, types, lazy data, as_predictions, ties."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from pbassess import DataError, Predictions, as_predictions, load_data
from pbassess.data._encoding import encode_classes, infer_classes


# ----------------------------------------------------------------------------- layout and types
def test_dataset_layout_holds_codes_ids_and_typed_attributes():
    frame = pd.DataFrame({
        "item_id": [101, 102, 103], "label": ["b", None, "a"], "p_a": [0.2, 0.6, 0.7], "p_b": [0.8, 0.4, 0.3],
        "site": ["s1", "s2", "s1"], "age": [31, 45, 52], "income": [1.5, np.nan, 2.0], "urban": [True, False, True],
    })
    p = as_predictions(frame, name="toy")
    ds = p.dataset
    assert set(ds.dims) == {"item", "class"} and ds.sizes == {"item": 3, "class": 2}
    assert sorted(ds.data_vars) == ["age", "confidence", "income", "label", "predicted", "probs", "site", "urban"]
    assert ds.attrs["attributes"] == ["site", "age", "income", "urban"] and ds.attrs["name"] == "toy"
    assert ds["class"].values.tolist() == ["a", "b"] and ds["item_id"].values.tolist() == [101, 102, 103]
    assert ds["predicted"].values.tolist() == [1, 0, 0] and ds["label"].values.tolist() == [1, -1, 0]
    kinds = {k: v.dtype.kind for k, v in p.groups.items()}
    assert kinds == {"site": "O", "age": "i", "income": "f", "urban": "b"}
    assert p.item_ids.dtype == np.int64 and not p.is_lazy
    assert p.correct.tolist() == [True, False, True] and p.n_labeled == 2


def test_integer_ids_stay_integers_and_text_ids_keep_leading_zeros():
    assert Predictions.from_top1(["a", "b"], [0.9, 0.8], item_ids=["7", "12"]).item_ids.tolist() == [7, 12]
    assert Predictions.from_top1(["a", "b"], [0.9, 0.8], item_ids=["007", "12"]).item_ids.tolist() == ["007", "12"]
    assert Predictions.from_top1(["a", "b"], [0.9, 0.8]).item_ids.tolist() == [0, 1]
    with pytest.raises(DataError, match="item ids must be unique: 3 appears 2 times"):
        Predictions.from_top1(["a", "b", "a"], [0.9, 0.8, 0.7], item_ids=[3, 4, 3])


def test_arrays_are_read_only_and_the_object_is_immutable():
    p = Predictions.from_top1(["a", "b"], [0.9, 0.8], ["a", "a"])
    with pytest.raises(ValueError):
        p.predicted[0] = 1
    with pytest.raises(AttributeError):
        p.name = "other"


def test_subset_with_labels_and_pickle_keep_the_view_consistent():
    p = Predictions.from_probs([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]], labels=["a", None, "b"], classes=["a", "b"],
                               groups={"g": [1, 2, 1]}, item_ids=["x", "y", "z"])
    s = p.subset(p.groups["g"] == 1)
    assert s.item_ids.tolist() == ["x", "z"] and s.labels.tolist() == [0, 1] and s.groups["g"].tolist() == [1, 1]
    q = p.with_labels([None, "b", "NA"])
    assert q.labels.tolist() == [-1, 1, -1] and p.labels.tolist() == [0, -1, 1]
    r = pickle.loads(pickle.dumps(p))
    assert r.dataset.identical(p.dataset) and r.name == p.name


def test_vectorised_encoding_matches_a_row_by_row_reference(rng):
    classes = ("cat", "dog", "NA", "7")
    pool = np.array(["cat", "dog", "NA", "7", 7, 7.0, "7.0", None, np.nan, "", -1, "-1", "nan", 1], dtype=object)
    values = pool[rng.integers(0, pool.size, 5000)]

    def reference(v):
        if v is None or (isinstance(v, float) and np.isnan(v)) or v == "":
            return -1
        if str(v) in classes:
            return classes.index(str(v))
        if v in (7, 7.0, "7.0"):
            return 3
        if v in (-1, "-1", "nan"):
            return -1
        raise AssertionError(v)

    keep = np.array([not (isinstance(v, int) and v == 1) for v in values])
    codes = encode_classes(values[keep], classes, "labels", allow_missing=True)
    assert codes.tolist() == [reference(v) for v in values[keep]]
    with pytest.raises(DataError, match=r"labels: row \d+ has 1, which is not one of the 4 classes"):
        encode_classes(values, classes, "labels", allow_missing=True)  # numeric names: 1 is no index


def test_class_inference_keeps_predicted_missing_markers_as_classes():
    assert infer_classes(["None", "cat"], ["None", "NA", None]) == ("None", "cat")
    assert infer_classes([2, 10, 1], [1.0, "3.0", -1]) == ("1", "2", "3", "10")


# ----------------------------------------------------------------------------- from_dataset, lazy data
def _dask_dataset(n=1000, chunk=256, bad_row=None):
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(3)
    pred = rng.integers(0, 3, n)
    label = np.where(rng.random(n) < 0.8, pred, (pred + 1) % 3)
    label[::7] = -1
    if bad_row is not None:
        label[bad_row] = 9
    conf = rng.uniform(0.4, 1.0, n)
    ds = xr.Dataset(
        {"predicted": ("item", da.from_array(pred, chunks=chunk)), "confidence": ("item", da.from_array(conf, chunks=chunk)),
         "label": ("item", da.from_array(label, chunks=chunk)), "env": ("item", da.from_array(pred % 2, chunks=chunk))},
        coords={"class": ["a", "b", "c"]}, attrs={"attributes": ["env"]})
    return ds, pred, label


class _CountTasks:
    """Counts the dask computations started inside the block."""

    def __enter__(self):
        from dask.callbacks import Callback

        outer = self
        self.starts = 0

        class Counter(Callback):
            def _start(self, dsk):
                outer.starts += 1

        self._cb = Counter()
        self._cb.__enter__()
        return self

    def __exit__(self, *exc):
        self._cb.__exit__(*exc)


def test_from_dataset_on_dask_data_computes_nothing_and_counts_like_numpy():
    ds, pred, label = _dask_dataset()
    with _CountTasks() as counter:
        p = Predictions.from_dataset(ds, name="lazy")
        assert p.is_lazy and p.n_items == 1000 and p.classes == ("a", "b", "c")
    assert counter.starts == 0
    eager = Predictions.from_dataset(ds.compute(), name="eager")
    assert not eager.is_lazy
    assert p.n_labeled == eager.n_labeled == int((label != -1).sum())
    assert p.describe()["accuracy_labeled"] == pytest.approx(eager.describe()["accuracy_labeled"], abs=1e-15)
    np.testing.assert_array_equal(p.correct, eager.correct)
    assert p.groups["env"].tolist() == (pred % 2).tolist()


def test_dask_values_are_checked_chunk_by_chunk_with_global_rows():
    ds, _, _ = _dask_dataset(bad_row=700)
    p = Predictions.from_dataset(ds)  # structure only: no error yet
    with pytest.raises(DataError, match=r"^labels: row 700 has class index 9 outside 0..2"):
        _ = p.labels


def test_from_dataset_checks_the_structure():
    ds = xr.Dataset({"predicted": ("item", np.array([0.0, 1.0])), "confidence": ("item", [0.9, 0.8])},
                    coords={"class": ["a", "b"]})
    with pytest.raises(DataError, match="predicted must hold integer class indices, got float64"):
        Predictions.from_dataset(ds)
    with pytest.raises(DataError, match="no 'class' coordinate"):
        Predictions.from_dataset(ds.drop_vars("class").assign(predicted=("item", np.array([0, 1]))))
    fixed = ds.assign(predicted=("item", np.array([0, 1])))
    assert Predictions.from_dataset(fixed).labels.tolist() == [-1, -1]
    listed = fixed.assign(probs=(("item", "class"), [[0.9, 0.1], [0.2, 0.8]]))
    listed.attrs["attributes"] = ["probs"]
    with pytest.raises(DataError, match="attribute column 'probs' clashes with a reserved name"):
        Predictions.from_dataset(listed)
    stray = fixed.assign(extra=(("item", "class"), [[1, 2], [3, 4]]))
    with pytest.raises(DataError, match="variable 'extra' is neither a prediction variable nor a listed attribute"):
        Predictions.from_dataset(stray.assign_attrs(attributes=[]))


# ----------------------------------------------------------------------------- as_predictions
def test_as_predictions_accepts_every_input_form():
    probs = np.array([[0.8, 0.2], [0.3, 0.7], [0.5, 0.5]])
    base = Predictions.from_probs(probs, labels=[0, 1, -1])
    assert as_predictions(base) is base
    for obj, kw in [
        ((probs, [0, 1, -1]), {}),
        (probs, {"labels": [0, 1, None]}),
        (probs, {"labels": [0.0, 1.0, np.nan]}),
        ({"probs": probs, "label": [0, 1, -1]}, {}),
        (pd.DataFrame({"label": [0, 1, None], "p_0": probs[:, 0], "p_1": probs[:, 1]}), {}),
        ({"label": ["0", "1", ""], "p_0": probs[:, 0], "p_1": probs[:, 1]}, {}),
        (base.dataset, {}),
    ]:
        p = as_predictions(obj, **kw)
        assert p.labels.tolist() == [0, 1, -1] and p.predicted.tolist() == [0, 1, 0], (obj, kw)
    top1 = as_predictions(pd.DataFrame({"predicted": ["x", "y"], "confidence": [0.9, 0.6], "label": ["y", "y"]}))
    assert top1.classes == ("x", "y") and top1.correct.tolist() == [False, True]
    with pytest.raises(DataError, match="a 1-D array of 3 numbers is ambiguous: .*from_binary_scores"):
        as_predictions(np.array([0.2, 0.5, 0.9]), labels=[0, 1, 1])
    assert as_predictions("digits-logreg").n_items == load_data().n_items
    with pytest.raises(DataError, match="cannot make predictions from a list of"):
        as_predictions([["a", "b"]])
    with pytest.raises(DataError, match="option 'threshold' does not apply to probability arrays"):
        as_predictions(probs, threshold=0.3)


# ----------------------------------------------------------------------------- binary ties
def test_binary_ties_follow_the_rule_and_the_rule_is_checked():
    s = [0.5, 0.5000001, 0.4999999]
    assert Predictions.from_binary_scores(s).predicted.tolist() == [0, 1, 0]
    assert Predictions.from_binary_scores(s, ties="positive").predicted.tolist() == [1, 1, 0]
    low = Predictions.from_binary_scores([0.3, 0.2], threshold=0.25)
    assert low.predicted.tolist() == [1, 0] and low.confidence.tolist() == [0.3, 0.8] and low.threshold == 0.25
    with pytest.raises(DataError, match="ties must be one of negative, positive"):
        Predictions.from_binary_scores(s, ties="up")


def test_compas_decision_tree_gap_depends_on_the_tie_rule(shared_data_dir):
    """README fact: African-American minus Caucasian accuracy, DecisionTree, -0.058 under > 0.5, -0.032 under >=."""
    gaps = {}
    for ties in ("negative", "positive"):
        p = load_data("compas-race", model="DecisionTree", ties=ties)
        race, correct = p.groups["race"], p.correct
        gaps[ties] = correct[race == "African-American"].mean() - correct[race == "Caucasian"].mean()
        assert int((p.probs[:, 1] == 0.5).sum()) == 57
    assert round(gaps["negative"], 3) == -0.058 and round(gaps["positive"], 3) == -0.032


def test_dask_probabilities_are_checked_against_the_predicted_class():
    da = pytest.importorskip("dask.array")
    probs = np.tile([0.7, 0.3], (600, 1))
    pred = np.zeros(600, dtype=np.int64)
    pred[450] = 1  # its probabilities favour class 'a'
    ds = xr.Dataset({"predicted": ("item", da.from_array(pred, chunks=200)),
                     "confidence": ("item", da.from_array(probs[np.arange(600), pred], chunks=200)),
                     "probs": (("item", "class"), da.from_array(probs, chunks=(200, 2)))},
                    coords={"class": ["a", "b"]})
    p = Predictions.from_dataset(ds)
    assert p.is_lazy and p.has_probs
    with pytest.raises(DataError, match=r"^predicted: row 450 is class 'b' but its probabilities favour 'a'"):
        _ = p.predicted
    good = Predictions.from_dataset(ds.assign(predicted=("item", da.from_array(np.zeros(600, np.int64), chunks=200)),
                                              confidence=("item", da.from_array(probs[:, 0], chunks=200))))
    assert good.predicted.sum() == 0 and good.probs.shape == (600, 2)
