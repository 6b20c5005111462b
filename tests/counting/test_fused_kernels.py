"""The fused numba counting loop and binning loop give exactly what the NumPy kernel gives (issue 25).

Large blocks (:data:`pbassess.counting.kernels.NUMBA_MIN_ITEMS` items and more) are counted by
one compiled loop; here the threshold is lowered to 0 so that small pools take that path, and
every table is compared with the NumPy kernel's, bit for bit (every entry is an integer: item
counts and fixed-point limb sums). Speed is measured by ``benchmarks/interactive.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from pbassess import Predictions
from pbassess.counting import bins as B
from pbassess.counting import cells as C
from pbassess.counting import count_cells, count_tables
from pbassess.errors import PbassessError


def _both(monkeypatch, fn):
    """``fn()`` on the fused path, then on the NumPy path."""
    monkeypatch.setattr(C, "NUMBA_MIN_ITEMS", 0)
    fused = fn()
    monkeypatch.setattr(C, "NUMBA_MIN_ITEMS", 2**62)
    return fused, fn()


def _pool(n: int = 6000, k: int = 5, seed: int = 0) -> Predictions:
    rng = np.random.default_rng(seed)
    conf = rng.uniform(0.0, 1.0, n)
    edges = np.concatenate([np.linspace(0, 1, b + 1) for b in (7, 10, 13, 15)])
    conf[: edges.size] = edges                                      # scores on every edge
    conf[edges.size: 2 * edges.size] = np.clip(np.nextafter(edges, -1.0), 0.0, 1.0)
    pred = rng.integers(0, k, n)
    label = np.where(rng.random(n) < 0.7, pred, rng.integers(0, k, n))
    label[rng.random(n) < 0.3] = -1                                 # unlabeled items
    return Predictions.from_top1(pred, conf, label, classes=[f"c{i}" for i in range(k)])


@pytest.mark.parametrize("by", [("predicted", "bin"), ("bin", "predicted"), ("bin",), ("predicted",), ()])
@pytest.mark.parametrize("bins", [15, 10, 7, [0.0, 0.3, 0.31, 0.7, 1.0]])
@pytest.mark.parametrize("labeled_only", [False, True])
def test_fused_count_equals_the_numpy_kernel(monkeypatch, by, bins, labeled_only):
    pool = _pool()
    fused, plain = _both(monkeypatch, lambda: count_cells(pool, by, bin_edges=bins, labeled_only=labeled_only))
    xr.testing.assert_identical(fused, plain)
    for name in fused.data_vars:
        np.testing.assert_array_equal(fused[name].to_numpy(), plain[name].to_numpy())


def test_count_tables_mixes_fused_and_numpy_plans(monkeypatch):
    pool = _pool(seed=1)
    spec = {"cal": {"by": ("predicted", "bin"), "bin_edges": 15}, "acc": "predicted",
            "stats": {"by": "bin", "bin_edges": 10, "item_stats": ["calibration_bias"]}, "confusion": ("predicted", "true")}
    fused, plain = _both(monkeypatch, lambda: count_tables(pool, spec))
    for name in spec:
        xr.testing.assert_identical(fused[name], plain[name])


def test_an_invalid_item_gives_the_numpy_kernels_error(monkeypatch):
    pool = _pool(200)
    ds = pool.dataset.copy()
    ds["predicted"] = ds["predicted"].copy(data=np.where(np.arange(200) == 150, 9, ds["predicted"].to_numpy()))
    errors = []
    for threshold in (0, 2**62):
        monkeypatch.setattr(C, "NUMBA_MIN_ITEMS", threshold)
        with pytest.raises(PbassessError) as info:
            count_cells(ds, ("predicted", "bin"), bin_edges=15)
        errors.append(str(info.value))
    assert errors[0] == errors[1] and "class code 9" in errors[0]


@pytest.mark.parametrize("n_bins", [1, 2, 5, 7, 9, 10, 13, 15, 17, 30, 100, 1000])
def test_compiled_equal_width_bins_equal_the_numpy_rule_near_every_edge(monkeypatch, n_bins):
    e = np.linspace(0.0, 1.0, n_bins + 1)
    s = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, 2.0, -2.0]
    for edge in e:
        lo = hi = edge
        for _ in range(8):
            lo, hi = np.nextafter(lo, -np.inf), np.nextafter(hi, np.inf)
            s += [edge, lo, hi]
    s = np.array(s)
    want = {clip: B.assign_bins(s, e, clip=clip) for clip in (True, False)}      # NumPy: below the threshold
    monkeypatch.setattr(B, "NUMBA_MIN_ITEMS", 0)
    for clip in (True, False):
        got = B.assign_bins(s, e, clip=clip)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, want[clip])
    np.testing.assert_array_equal(B.assign_bins(s[:-2].reshape(-1, 2), e), want[True][:-2].reshape(-1, 2))
