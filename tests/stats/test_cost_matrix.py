"""The one cost-matrix resolver: names, arrays, files; every bad file reported by what is wrong with it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pbassess.data.cifar100 import CIFAR100_CLASSES
from pbassess.errors import ConfigError
from pbassess.stats.cost import (
    cost_matrix_name,
    people_cost_matrix,
    resolve_cost_matrix,
    superclass_cost_matrix,
    zero_one_cost,
)

CLASSES = ["apple", "baby", "bear", "boy"]


def test_names_and_arrays():
    for spec in (None, "zero-one", "0-1", "Zero-One"):
        np.testing.assert_array_equal(resolve_cost_matrix(spec, CLASSES), zero_one_cost(4))
    np.testing.assert_array_equal(resolve_cost_matrix("people", CLASSES), people_cost_matrix(CLASSES))
    np.testing.assert_array_equal(resolve_cost_matrix("superclass", CLASSES), superclass_cost_matrix(CLASSES))
    # "people": mistakes whose true class is a person cost 10 (baby, boy are people)
    assert resolve_cost_matrix("people", CLASSES)[0].tolist() == [0.0, 10.0, 1.0, 10.0]
    m = np.arange(16.0).reshape(4, 4)
    np.testing.assert_array_equal(resolve_cost_matrix(m, CLASSES), m)
    assert resolve_cost_matrix(m.tolist(), CLASSES).dtype == float
    assert resolve_cost_matrix("superclass", CIFAR100_CLASSES).shape == (100, 100)


def test_named_csv_is_reordered_to_the_classes(tmp_path):
    f = tmp_path / "cost.csv"
    f.write_text(",boy,bear,baby,apple\nboy,0,1,2,3\nbear,4,0,5,6\nbaby,7,8,0,9\napple,1,1,1,0\n")
    m = resolve_cost_matrix(f, CLASSES)
    # row "apple" (predicted apple), column "boy": the file's last row, first column
    assert m[0].tolist() == [0.0, 1.0, 1.0, 1.0] and m[3].tolist() == [3.0, 2.0, 1.0, 0.0]
    assert cost_matrix_name(f) == str(f.resolve())


def test_plain_csv_npy_json_and_text(tmp_path):
    m = np.array([[0, 1, 2, 3], [1, 0, 1, 1], [2, 2, 0, 2], [5, 1, 1, 0]], dtype=float)
    np.savetxt(tmp_path / "c.csv", m, delimiter=",")
    np.save(tmp_path / "c.npy", m)
    (tmp_path / "c.json").write_text(json.dumps({"cost": m.tolist()}))
    np.savetxt(tmp_path / "c.txt", m)
    for name in ("c.csv", "c.npy", "c.json", "c.txt"):
        np.testing.assert_array_equal(resolve_cost_matrix(str(tmp_path / name), CLASSES), m)


@pytest.mark.parametrize("text,message", [
    ("0,nan,1,1\n1,0,1,1\n1,1,0,1\n1,1,1,0\n", "row 1, column 2 is nan: costs must be finite"),
    ("0,1,1,1\n1,0,inf,1\n1,1,0,1\n1,1,1,0\n", "row 2, column 3 is inf"),
    ("0,1,1,1\n1,0,1,1\n1,1,0,-2\n1,1,1,0\n", "row 3, column 4 is -2: costs must be non-negative"),
    ("0,1,1,1\n1,0,,1\n1,1,0,1\n1,1,1,0\n", "row 2, column 3 is empty"),
    ("0,1,1,1\n1,0,x,1\n1,1,0,1\n1,1,1,0\n", "row 2, column 3 is 'x', not a number"),
    ("0,1,1\n1,0,1\n1,1,0\n", "is 3 x 3, expected 4 x 4"),
    ("0,1,1,1\n1,0,1\n1,1,0,1\n1,1,1,0\n", "4 rows of 3 to 4 cells"),
    (",apple,baby,bear,cat\napple,0,1,1,1\nbaby,1,0,1,1\nbear,1,1,0,1\nboy,1,1,1,0\n", "column name 'cat'"),
    ("", "is empty"),
])
def test_bad_csv_is_reported_by_what_is_wrong(tmp_path, text, message):
    f = tmp_path / "cost.csv"
    f.write_text(text)
    with pytest.raises(ConfigError) as info:
        resolve_cost_matrix(f, CLASSES)
    assert message in str(info.value) and "\n" not in str(info.value)
    if "nan" in text:
        assert "shape" not in str(info.value) and " x " not in str(info.value)  # issue 8: not by its shape


def test_bad_specs():
    with pytest.raises(ConfigError, match="neither a known name"):
        resolve_cost_matrix("cheap", CLASSES)
    with pytest.raises(ConfigError, match="class name"):
        resolve_cost_matrix("people", ["a", "b"])
    with pytest.raises(ConfigError, match="shape"):
        resolve_cost_matrix(np.ones((3, 3)), CLASSES)
    with pytest.raises(ConfigError, match="numeric"):
        resolve_cost_matrix([["a"] * 4] * 4, CLASSES)
