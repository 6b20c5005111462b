"""Counting arms: the distinct attribute rows equal NumPy's row-wise unique."""

from __future__ import annotations

import numpy as np
import pytest

from pbassess.surface.arms import unique_rows


@pytest.mark.parametrize("case", ["small ints", "one column", "floats", "nan", "wide keys", "int8", "empty",
                                  "overflowing radix"])
def test_unique_rows_equals_numpy_rowwise_unique(case):
    rng = np.random.default_rng(5)
    values = {
        "small ints": rng.integers(-3, 4, (5000, 4)),
        "one column": rng.integers(0, 2, (100, 1)),
        "floats": rng.normal(size=(400, 3)).round(1),
        "nan": np.array([[1.5, np.nan], [1.5, np.nan], [0.0, 1.0], [0.0, 1.0]]),
        "wide keys": rng.integers(0, 2**40, (300, 3)),
        "int8": rng.integers(0, 3, (1000, 6)).astype(np.int8),
        "empty": np.zeros((0, 3), dtype=np.int64),
        "overflowing radix": rng.integers(0, 10**6, (2000, 4)),  # 2000^4 distinct codes > 2^62: NumPy's path
    }[case]
    rows, inverse = unique_rows(values)
    expected_rows, expected_inverse = np.unique(values, axis=0, return_inverse=True)
    np.testing.assert_array_equal(rows, expected_rows)
    np.testing.assert_array_equal(inverse, expected_inverse.ravel())
    np.testing.assert_array_equal(rows[inverse], values)  # every row is its arm's
