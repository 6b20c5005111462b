"""Fixed-point sums (order-independent, accurate) and the bin rule (fast path equals searchsorted)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbassess.counting.bins import assign_bins, edges_from_sketch, sketch_counts
from pbassess.counting.exact_sums import bound_log2, limb_sums, limbs_to_float

values_st = st.lists(st.floats(-30.0, 30.0, allow_nan=False, allow_infinity=False), min_size=1, max_size=200)


@settings(max_examples=60, deadline=None)
@given(values=values_st, cut=st.integers(0, 200), seed=st.integers(0, 1000))
def test_limb_sums_do_not_depend_on_order_or_splitting(values, cut, seed):
    x = np.array(values)
    b = bound_log2(32.0)
    whole = limb_sums(x, np.zeros(x.size, dtype=np.int64), 1, b, "x")
    perm = np.random.default_rng(seed).permutation(x.size)
    y = x[perm]
    cut = min(cut, x.size)
    parts = limb_sums(y[:cut], np.zeros(cut, dtype=np.int64), 1, b, "x") + \
        limb_sums(y[cut:], np.zeros(x.size - cut, dtype=np.int64), 1, b, "x")
    np.testing.assert_array_equal(whole, parts)
    total = float(limbs_to_float(whole, b)[0])
    exact = math.fsum(values)
    # each value is represented to 2**(b - 67); the conversion adds one rounding of the result
    assert abs(total - exact) <= x.size * 2.0 ** (b - 67) + 2 * np.spacing(abs(exact)) + 1e-300


def test_limb_sums_keep_small_values():
    tiny = np.full(1000, 1e-9)
    total = float(limbs_to_float(limb_sums(tiny, np.zeros(1000, dtype=np.int64), 1, 0, "t"), 0)[0])
    assert total == pytest.approx(1e-6, rel=1e-9)      # 1e-9 is kept to 2**-67 = 7e-21 absolute


@settings(max_examples=80, deadline=None)
@given(n_bins=st.integers(1, 200), scores=st.lists(st.floats(0, 1), min_size=1, max_size=100))
def test_equal_width_fast_path_equals_searchsorted(n_bins, scores):
    edges = np.linspace(0, 1, n_bins + 1)
    s = np.concatenate([np.array(scores), edges, np.nextafter(edges, 2.0).clip(0, 1), np.nextafter(edges, -1.0).clip(0, 1)])
    want = np.clip(np.searchsorted(edges, s, side="right") - 1, 0, n_bins - 1)
    np.testing.assert_array_equal(assign_bins(s, edges), want)


def test_sketch_edges_error_bound_against_order_statistics():
    rng = np.random.default_rng(3)
    for n, resolution in [(50, 64), (5000, 1024), (200_000, 4096)]:
        s = rng.beta(8, 2, n)
        edges = edges_from_sketch(sketch_counts(s, resolution), 10)
        q = np.quantile(s, np.linspace(0, 1, 11)[1:-1], method="lower")
        assert edges.size == 11                             # continuous scores: no coinciding edges
        assert np.abs(edges[1:-1] - q).max() <= 1 / resolution
