"""Every unusual prediction file of issue 8, through the CLI and through the API.

Each case writes its file into ``tmp_path``. A *reject* case must exit 2 from
``pbassess assess FILE --json`` with exactly one stderr line naming the problem (no traceback)
and raise one :class:`~pbassess.errors.PbassessError` line from the API; an *accept* case must
give the right counts, checked against counting the file's rows by hand.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pbassess import DataError, Predictions, as_predictions, read_predictions
from pbassess.cli import main
from pbassess.errors import ConfigError, PbassessError
from pbassess.stats.sampling import as_generator

CSV_HEAD = "item_id,label,p_a,p_b\n"


def _text(name: str, text: str, *, encoding: str = "utf-8"):
    def write(folder: Path) -> Path:
        path = folder / name
        path.write_bytes(text.encode(encoding))
        return path
    return write


def _gzip_truncated(folder: Path) -> Path:
    rows = "".join(f"{i},a,0.{i % 9 + 1},0.{9 - i % 9 - 1}\n" for i in range(2000))
    blob = gzip.compress((CSV_HEAD + rows).encode())
    path = folder / "cut.csv.gz"
    path.write_bytes(blob[: len(blob) // 2])
    return path


def _binary(folder: Path) -> Path:
    path = folder / "model.bin"
    path.write_bytes(bytes(np.random.default_rng(0).integers(0, 256, 4000, dtype=np.uint8)) + b"\x00\x01")
    return path


# (case id, file writer, expected stderr/API message pattern)
REJECT = [
    ("text-in-probability-column", _text("t.csv", CSV_HEAD + "1,a,0.9,0.1\n2,b,abc,0.5\n"),
     r"line 3 has p_a value 'abc', not a number"),
    ("truncated-gzip", _gzip_truncated, r"the gzip file is truncated or corrupt"),
    ("latin-1", _text("l.csv", CSV_HEAD + "1,a,0.9,0.1\n2,caf\u00e9,0.3,0.7\n", encoding="latin-1"),
     r"line 3 is not UTF-8 text \(byte 0xe9"),
    ("binary-file", _binary, r"binary data \(NUL bytes\)|not UTF-8 text"),
    ("duplicated-p-column", _text("d.csv", "item_id,label,p_a,p_a,p_b\n1,a,0.5,0.3,0.2\n"),
     r"column 'p_a' appears more than once"),
    ("empty-class-name", _text("e.csv", "item_id,label,p_,p_b\n1,b,0.4,0.6\n"),
     r"probability column 'p_' has no class name"),
    ("both-forms", _text("b.csv", "item_id,label,p_a,p_b,predicted,confidence\n1,a,0.9,0.1,a,0.9\n"),
     r"both p_<class> columns .* keep one form"),
    ("short-row", _text("s.csv", CSV_HEAD + "1,a,0.9,0.1\n2,b,0.3\n3,a,0.6,0.4\n"),
     r"line 3 has 3 fields, expected 4 \(too few: a short row\)"),
    ("extra-field", _text("x.csv", CSV_HEAD + "1,a,0.9,0.1\n2,b,0.3,0.7\n3,a,0.6,0.4,7\n"),
     r"line 4 has 5 fields, expected 4 \(too many: an extra field\)"),
    ("boolean-label-text", _text("tb.csv", CSV_HEAD + "1,True,0.9,0.1\n"),
     r"labels: row 0 has 'True', which is not one of the 2 classes"),
    ("top1-short-row", _text("t1.txt", "Index Correct Predicted Confidence\n0 cat dog 0.9\n1 dog dog\n"),
     r"line 3 has 3 fields, expected 4"),
    ("top1-confidence-text", _text("t2.txt", "Index Correct Predicted Confidence\n0 cat dog 0.9\n1 dog dog high\n"),
     r"line 3 has confidence 'high', not a number"),
    ("top1-latin-1-label", _text("t3.txt", "Index Correct Predicted Confidence\n0 caf\u00e9 dog 0.9\n",
                                 encoding="latin-1"), r"line 2 is not UTF-8 text"),
    ("missing-item-id", _text("m.csv", CSV_HEAD + "1,a,0.9,0.1\n,b,0.2,0.8\n"), r"item_ids: row 1 is missing"),
    ("header-only", _text("h.csv", CSV_HEAD), r"the pool is empty"),
    ("empty-file", _text("z.csv", ""), r"the file is empty"),
    ("predicted-without-confidence", _text("pc.csv", "item_id,label,predicted\n1,a,a\n"),
     r"a 'predicted' column but no 'confidence' column"),
]


def _accept_counts(path: Path, labels: list, predicted: list, classes: list[str]):
    """Expected per-predicted-class n and correct from hand-listed labels and predictions."""
    k = len(classes)
    n = [sum(1 for y, p in zip(labels, predicted, strict=True) if y is not None and p == c) for c in range(k)]
    correct = [sum(1 for y, p in zip(labels, predicted, strict=True) if y == p == c) for c in range(k)]
    return n, correct


ACCEPT = [
    # (case id, writer, classes, labels (class index or None), predicted (class index))
    ("plain-file-named-gz", _text("plain.csv.gz", CSV_HEAD + "1,a,0.9,0.1\n2,b,0.3,0.7\n3,a,0.2,0.8\n"),
     ["a", "b"], [0, 1, 0], [0, 1, 1]),
    ("top1-with-utf8-bom", _text("bom.txt", "\ufeffIndex Correct Predicted Confidence\n0 cat dog 0.9\n1 dog dog 0.8\n"
                                            "2 cat cat 0.7\n"),
     ["cat", "dog"], [0, 1, 0], [1, 1, 0]),
    ("label-1.0-for-classes-0-1", _text("f.csv", "item_id,label,p_0,p_1\n1,1.0,0.2,0.8\n2,0.0,0.9,0.1\n3,,0.4,0.6\n"
                                                 "4,1.0,0.7,0.3\n"),
     ["0", "1"], [1, 0, None, 1], [1, 0, 1, 0]),
    ("class-named-NA-nan-None", _text("na.csv", "item_id,label,p_NA,p_nan,p_None\n1,NA,0.8,0.1,0.1\n2,nan,0.1,0.8,0.1\n"
                                                "3,None,0.2,0.2,0.6\n4,,0.5,0.3,0.2\n5,NA,0.1,0.1,0.8\n"),
     ["NA", "nan", "None"], [0, 1, 2, None, 0], [0, 1, 2, 0, 2]),
    ("top1-class-named-None", _text("none.txt", "Index Correct Predicted Confidence\n0 None None 0.9\n1 cat None 0.8\n"
                                                "2 None cat 0.7\n3 NA cat 0.6\n"),
     ["None", "cat"], [0, 1, 0, None], [0, 0, 1, 1]),
]


def _run_cli(path: Path, tmp_path: Path, capsys) -> tuple[int, str, str]:
    code = main(["assess", str(path), "--json", "--seed", "1", "--out", str(tmp_path / "out")])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(("case", "write", "pattern"), REJECT, ids=[c[0] for c in REJECT])
def test_reject_case_cli_gives_one_line_and_exit_2(case, write, pattern, tmp_path, capsys):
    path = write(tmp_path)
    code, out, err = _run_cli(path, tmp_path, capsys)
    lines = err.strip().splitlines()
    assert code == 2, f"{case}: exit {code}, stderr {err!r}"
    assert len(lines) == 1 and "Traceback" not in err, err
    assert re.search(pattern, lines[0]), lines[0]
    assert out == ""


@pytest.mark.parametrize(("case", "write", "pattern"), REJECT, ids=[c[0] for c in REJECT])
def test_reject_case_api_raises_one_line(case, write, pattern, tmp_path):
    path = write(tmp_path)
    with pytest.raises(PbassessError) as info:
        read_predictions(path)
    message = str(info.value)
    assert "\n" not in message and re.search(pattern, message), message


@pytest.mark.parametrize(("case", "write", "classes", "labels", "predicted"), ACCEPT, ids=[c[0] for c in ACCEPT])
def test_accept_case_api_and_cli_give_the_counts(case, write, classes, labels, predicted, tmp_path, capsys):
    path = write(tmp_path)
    p = read_predictions(path)
    assert p.classes == tuple(classes)
    assert p.labels.tolist() == [-1 if y is None else y for y in labels]
    assert p.predicted.tolist() == predicted
    n, correct = _accept_counts(path, labels, predicted, classes)
    code, out, err = _run_cli(path, tmp_path, capsys)
    assert code == 0, err
    result = json.loads(out)
    assert result["classes"] == classes and result["n"] == n and result["correct"] == correct


# ----------------------------------------------------------------------------- API-only cases
def test_text_in_a_pandas_string_probability_column():
    frame = pd.DataFrame({"p_a": pd.array(["0.9", "abc"], dtype="str"), "p_b": [0.1, 0.5]})
    with pytest.raises(DataError, match=r"^probability column 'p_a': row 1 has 'abc', not a number$"):
        as_predictions(frame)
    numeric_text = pd.DataFrame({"p_a": pd.array(["0.9", "0.4"], dtype="str"), "p_b": [0.1, 0.6]})
    assert as_predictions(numeric_text).predicted.tolist() == [0, 1]


RAW = {"predicted": np.array([0, 1]), "confidence": np.array([0.9, 0.8]), "classes": ("a", "b"),
       "labels": np.array([0, -1])}


@pytest.mark.parametrize(
    ("change", "pattern"),
    [
        ({"predicted": np.array([0.0, 1.0])}, r"predicted must hold integer class indices, got float64"),
        ({"predicted": np.array([1, 1]), "probs": np.array([[0.9, 0.1], [0.2, 0.8]])},
         r"predicted: row 0 is class 'b' but its probabilities favour 'a' \(0.9 > 0.1\)"),
        ({"probs": np.array([[0.9, 0.1], [0.3, 0.7]]), "confidence": np.array([0.9, 0.6])},
         r"confidence: row 1 is 0.6 but the probability of its predicted class is 0.7"),
        ({"confidence": np.array([0.9, 0.3])}, r"confidence: row 1 is 0.3, below 1/K = 0.5"),
        ({"labels": np.array([True, False])}, r"labels must hold integer class indices"),
        ({"labels": np.array([0.0, 1.0])}, r"labels must hold integer class indices"),
    ],
    ids=["float-predicted", "probs-disagree", "confidence-not-probs", "confidence-below-1/K", "bool-labels",
         "float-labels"],
)
def test_raw_constructor_rejects(change, pattern):
    with pytest.raises(DataError, match=pattern):
        Predictions(**{**RAW, **change})


def test_a_boolean_label_is_not_class_1():
    with pytest.raises(DataError, match=r"labels: row 0 is the boolean True"):
        Predictions.from_probs([[0.3, 0.7], [0.6, 0.4]], labels=[True, False], classes=["a", "b"])
    with pytest.raises(DataError, match=r"labels: row 0 is the boolean True"):
        Predictions.from_binary_scores([0.7, 0.2], labels=np.array([True, False]))
    named = Predictions.from_probs([[0.3, 0.7], [0.6, 0.4]], labels=[True, False], classes=["False", "True"])
    assert named.labels.tolist() == [1, 0]


@pytest.mark.parametrize("seed", [-1, "abc", 1.5, True])
def test_bad_seeds_give_one_line(seed):
    with pytest.raises(ConfigError, match=r"^seed must be a non-negative integer or a numpy.random.Generator, got "):
        as_generator(seed)


def test_bad_seed_through_the_assess_api():
    from pbassess import assess_accuracy

    preds = Predictions.from_top1(["a", "b", "a"], [0.9, 0.8, 0.7], ["a", "a", "a"])
    with pytest.raises(ConfigError, match=r"seed must be a non-negative integer"):
        assess_accuracy(preds, seed=-1)


def test_the_cli_refuses_a_negative_seed(tmp_path, capsys):
    path = _text("ok.csv", CSV_HEAD + "1,a,0.9,0.1\n")(tmp_path)
    code = main(["assess", str(path), "--json", "--seed", "-1", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "seed" in err[0]
