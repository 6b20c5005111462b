"""The fast (pyarrow) readers agree with a plain reference parse; gzip by content, BOM, whitespace layouts."""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest

from pbassess import DataError, Predictions, read_predictions
from pbassess.data.readers import read_pbassess_csv, read_top1_text


def _random_pool(rng, n=3000, k=7):
    classes = [f"c{j}" for j in range(k)]
    probs = rng.dirichlet(np.full(k, 0.5), size=n).round(6)
    probs[:, -1] = 1 - probs[:, :-1].sum(axis=1)
    probs = np.clip(probs, 0, 1)
    labels = np.asarray(classes, dtype=object)[rng.integers(0, k, n)]
    labels[rng.random(n) < 0.2] = ""
    return classes, probs, labels


def test_csv_reader_agrees_with_a_pandas_reference(tmp_path, rng):
    classes, probs, labels = _random_pool(rng)
    n = probs.shape[0]
    frame = pd.DataFrame({"item_id": [f"img-{i}" for i in range(n)], "label": labels,
                          **{f"p_{c}": probs[:, j] for j, c in enumerate(classes)},
                          "site": rng.choice(["north", "south"], n), "age": rng.integers(18, 90, n)})
    path = tmp_path / "pool.csv"
    frame.to_csv(path, index=False)
    fast = read_pbassess_csv(path)
    ref = pd.read_csv(path, dtype={"label": str}, keep_default_na=False)
    expected_labels = [classes.index(y) if y else -1 for y in ref["label"]]
    assert fast.classes == tuple(classes)
    assert fast.labels.tolist() == expected_labels
    np.testing.assert_array_equal(fast.probs, ref[[f"p_{c}" for c in classes]].to_numpy())
    assert fast.predicted.tolist() == ref[[f"p_{c}" for c in classes]].to_numpy().argmax(axis=1).tolist()
    assert fast.item_ids.tolist() == ref["item_id"].tolist()
    assert fast.groups["site"].tolist() == ref["site"].tolist() and fast.groups["age"].dtype == np.int64
    assert fast.groups["age"].tolist() == ref["age"].tolist()


def test_top1_reader_agrees_with_a_line_by_line_reference(tmp_path, rng):
    n = 2000
    names = np.array(["cat", "dog", "emu", "NA"])
    true, pred = names[rng.integers(0, 3, n)], names[rng.integers(0, 4, n)]
    true[rng.random(n) < 0.1] = "NA"
    conf = rng.uniform(0.3, 1, n).round(4)
    lines = ["Index Correct Predicted Confidence"] + [f"{i} {t} {p} {c}" for i, (t, p, c) in
                                                         enumerate(zip(true, pred, conf, strict=True))]
    path = tmp_path / "top1.txt.gz"
    path.write_bytes(gzip.compress("\n".join(lines).encode()))
    fast = read_top1_text(path)
    assert fast.classes == ("NA", "cat", "dog", "emu")  # 'NA' is predicted, so it is a class
    index = {c: j for j, c in enumerate(fast.classes)}
    assert fast.predicted.tolist() == [index[p] for p in pred]
    assert fast.labels.tolist() == [index[t] for t in true]
    assert fast.confidence.tolist() == conf.tolist() and fast.item_ids.tolist() == list(range(n))


def test_whitespace_layouts_pyarrow_cannot_split_fall_back_to_pandas(tmp_path):
    path = tmp_path / "ws.txt"
    path.write_text("Index  Correct\tPredicted Confidence\n7   cat dog\t0.9\n8 dog  dog 0.8  \n")
    p = read_predictions(path)
    assert p.item_ids.tolist() == [7, 8] and p.correct.tolist() == [False, True]


def test_gzip_is_recognised_by_content_and_a_bom_is_skipped(tmp_path):
    body = "item_id,label,p_a,p_b\n1,a,0.9,0.1\n2,b,0.2,0.8\n"
    hidden = tmp_path / "pool.csv"  # gzip without the .gz name
    hidden.write_bytes(gzip.compress(body.encode()))
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbf" + body.encode())
    for path in (hidden, bom):
        p = read_predictions(path)
        assert p.correct.tolist() == [True, True] and p.item_ids.tolist() == [1, 2]


def test_a_label_column_of_floats_matches_integer_classes(tmp_path):
    path = tmp_path / "f.csv"
    pd.DataFrame({"label": [1, None, 0], "p_0": [0.2, 0.5, 0.9], "p_1": [0.8, 0.5, 0.1]}).to_csv(path, index=False)
    assert "1.0" in path.read_text()  # what pandas writes for integer labels with a missing value
    p = read_predictions(path)
    assert p.labels.tolist() == [1, -1, 0]


def test_reader_options_reach_the_binary_reader(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text(",g,y,score_A\n0,u,1,0.5\n1,v,0,0.7\n")
    assert read_predictions(path).predicted.tolist() == [0, 1]
    assert read_predictions(path, ties="positive").predicted.tolist() == [1, 1]
    with pytest.raises(DataError, match="ties must be one of"):
        read_predictions(path, ties="maybe")


def test_an_empty_folder_is_not_a_prediction_file(tmp_path):
    with pytest.raises(DataError, match="is a folder, not a prediction file"):
        read_predictions(tmp_path)


def test_predictions_round_trip_through_the_csv_form(tmp_path):
    p = Predictions.from_probs([[0.7, 0.3], [0.1, 0.9]], labels=["x", None], classes=["x", "y"],
                               item_ids=["a1", "a2"], groups={"k": [3, 4]})
    frame = pd.DataFrame({"item_id": p.item_ids, "label": np.where(p.labeled, np.array(p.classes)[p.labels], ""),
                          **{f"p_{c}": p.probs[:, j] for j, c in enumerate(p.classes)}, "k": p.groups["k"]})
    frame.to_csv(tmp_path / "rt.csv", index=False)
    q = read_predictions(tmp_path / "rt.csv")
    assert q.dataset.drop_attrs().identical(p.dataset.drop_attrs())
