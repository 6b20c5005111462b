"""count_cells against brute-force loops, and NumPy against dask to the last digit."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st

from pbassess import Predictions
from pbassess.counting import ItemStatistic, count_cells, equal_mass_edges
from pbassess.errors import ConfigError, DataError


def _pool(seed: int, n: int = 500, k: int = 4, probs: bool = True, frac_labeled: float = 0.6) -> Predictions:
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(k, 0.7), size=n)
    labels = np.array([rng.choice(k, p=row) if rng.random() < frac_labeled else None for row in p], dtype=object)
    groups = {"site": rng.choice(["north", "south", "east"], n), "age": rng.integers(20, 23, n)}
    if probs:
        return Predictions.from_probs(p, labels, classes=[f"c{j}" for j in range(k)], groups=groups)
    return Predictions.from_top1(p.argmax(1), p.max(1), labels, classes=[str(j) for j in range(k)], groups=groups)


def _dataset(pred: Predictions, chunk: int | None = None) -> xr.Dataset:
    """The Predictions.dataset layout, optionally dask-chunked along items."""
    data = {"predicted": ("item", pred.predicted), "confidence": ("item", pred.confidence),
            "label": ("item", pred.labels)}
    if pred.probs is not None:
        data["probs"] = (("item", "class"), pred.probs)
    for col, values in pred.groups.items():
        data[col] = ("item", np.asarray(values))
    ds = xr.Dataset(data, coords={"class": list(pred.classes)}, attrs={"attributes": list(pred.groups)})
    return ds.chunk({"item": chunk}) if chunk else ds


def _brute_force(pred: Predictions, by: tuple[str, ...], edges: np.ndarray | None, stats: tuple[str, ...]) -> dict:
    """Loop over items with plain Python arithmetic (math.fsum for the float sums)."""
    levels = {}
    for key in by:
        if key in ("predicted", "true"):
            levels[key] = list(range(pred.n_classes))
        elif key == "bin":
            levels[key] = list(range(len(edges) - 1))
        else:
            levels[key] = sorted(set(pred.groups[key].tolist()))
    out = {}
    for cell in itertools.product(*(levels[k] for k in by)):
        acc = {"n_pool": 0, "score_pool": [], "n": 0, "correct": 0, "score": [], **{s: [] for s in stats}}
        for i in range(pred.n_items):
            y, c, conf = int(pred.labels[i]), int(pred.predicted[i]), float(pred.confidence[i])
            where = []
            for key in by:
                if key == "predicted":
                    where.append(c)
                elif key == "true":
                    where.append(y)
                elif key == "bin":
                    b = 0
                    while b < len(edges) - 2 and conf >= edges[b + 1]:
                        b += 1
                    where.append(b)
                else:
                    where.append(pred.groups[key][i].item() if hasattr(pred.groups[key][i], "item") else pred.groups[key][i])
            if tuple(where) != cell:
                continue
            acc["n_pool"] += 1
            acc["score_pool"].append(conf)
            p = pred.probs[i] if pred.probs is not None else None
            if "entropy" in stats:
                acc["entropy"].append(-sum(q * math.log(q) for q in p if q > 0))
            if y >= 0:
                acc["n"] += 1
                acc["correct"] += int(c == y)
                acc["score"].append(conf)
                if "nll" in stats:
                    acc["nll"].append(-math.log(max(p[y], 1e-8)))
                if "brier" in stats:
                    acc["brier"].append(sum((q - (j == y)) ** 2 for j, q in enumerate(p)))
                if "calibration_bias" in stats:
                    acc["calibration_bias"].append(conf - (c == y))
        out[cell] = acc
    return out


@pytest.mark.parametrize(
    ("by", "stats"),
    [(("predicted",), ("nll", "brier", "entropy")), (("predicted", "true"), ("calibration_bias",)),
     (("bin",), ("nll",)), (("site", "predicted", "bin"), ("brier", "entropy")), ((), ("entropy", "calibration_bias")),
     (("age",), ())],
)
def test_matches_brute_force_loops(by, stats):
    pred = _pool(1, n=300)
    edges = np.array([0.0, 0.3, 0.5, 0.8, 1.0])
    got = count_cells(pred, by, bin_edges=edges, item_stats=stats)
    want = _brute_force(pred, by, edges, stats)
    assert got["n_pool"].dims == by
    for cell, acc in want.items():
        index = [v if k in ("predicted", "true", "bin") else list(got[k].values).index(v)
                 for k, v in zip(by, cell, strict=True)]
        sel = got.isel(dict(zip(by, index, strict=True)))
        assert int(sel["n_pool"]) == acc["n_pool"]
        assert int(sel["n"]) == acc["n"]
        assert int(sel["correct"]) == acc["correct"]
        np.testing.assert_allclose(float(sel["score_sum_pool"]), math.fsum(acc["score_pool"]), rtol=1e-15, atol=1e-15)
        np.testing.assert_allclose(float(sel["score_sum"]), math.fsum(acc["score"]), rtol=1e-15, atol=1e-15)
        for s in stats:
            np.testing.assert_allclose(float(sel[f"{s}_sum"]), math.fsum(acc[s]), rtol=1e-13, atol=1e-13)
            np.testing.assert_allclose(float(sel[f"{s}_sq_sum"]), math.fsum(v * v for v in acc[s]), rtol=1e-13, atol=1e-13)


def test_coordinates_and_attrs():
    pred = _pool(2, n=200)
    c = count_cells(pred, ("true", "site", "bin"), bin_edges=4)
    assert c["true"].values.tolist() == ["c0", "c1", "c2", "c3"]
    assert c["site"].values.tolist() == ["east", "north", "south"]
    assert c["bin_lower"].values.tolist() == [0.0, 0.25, 0.5, 0.75]
    assert c.attrs["bin_edges"] == [0.0, 0.25, 0.5, 0.75, 1.0]
    # with the true class as a key only labeled items can be placed
    assert int(c["n_pool"].sum()) == pred.n_labeled == int(c["n"].sum())


def test_labeled_only_and_totals():
    pred = _pool(3, n=400)
    full = count_cells(pred, "predicted")
    lab = count_cells(pred, "predicted", labeled_only=True)
    assert int(full["n_pool"].sum()) == pred.n_items
    assert lab["n_pool"].values.tolist() == full["n"].values.tolist()
    assert int(full["correct"].sum()) == int(pred.correct.sum())
    assert lab["score_sum_pool"].values.tolist() == full["score_sum"].values.tolist()


@pytest.mark.parametrize(("chunk", "n"), [(1, 20), (29, 700), (1000, 700)])
@pytest.mark.parametrize("probs", [True, False])
def test_dask_equals_numpy_to_the_last_digit(chunk, n, probs):
    pred = _pool(4, n=n, probs=probs)
    stats = ("nll", "brier", "entropy", "calibration_bias") if probs else ("calibration_bias",)
    for by in [("predicted",), ("predicted", "true"), ("site", "bin"), ()]:
        eager = count_cells(pred, by, bin_edges=7, item_stats=stats)
        lazy = count_cells(_dataset(pred, chunk), by, bin_edges=7, item_stats=stats)
        xr.testing.assert_identical(eager, lazy)
        assert count_cells(_dataset(pred), by, bin_edges=7, item_stats=stats).identical(eager)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 60), k=st.integers(2, 5), chunk=st.integers(1, 25),
       frac=st.floats(0, 1))
def test_property_counts_partition_the_pool(seed, n, k, chunk, frac):
    pred = _pool(seed, n=n, k=k, frac_labeled=frac)
    c = count_cells(pred, ("predicted", "bin"), bin_edges=3, item_stats=("nll",))
    assert int(c["n_pool"].sum()) == n
    assert int(c["n"].sum()) == pred.n_labeled
    assert np.all(c["correct"] <= c["n"]) and np.all(c["n"] <= c["n_pool"])
    np.testing.assert_array_equal(c["n_pool"].sum("bin"), np.bincount(pred.predicted, minlength=k))
    np.testing.assert_allclose(float(c["score_sum_pool"].sum()), math.fsum(pred.confidence), rtol=1e-14)
    conf = count_cells(pred, ("predicted", "true"))["n"].values
    lab = pred.labeled
    np.testing.assert_array_equal(conf, np.bincount(pred.predicted[lab] * k + pred.labels[lab], minlength=k * k).reshape(k, k))
    assert count_cells(_dataset(pred, chunk), ("predicted", "bin"), bin_edges=3, item_stats=("nll",)).identical(c)


def test_order_does_not_change_float_sums():
    pred = _pool(5, n=1000)
    perm = np.random.default_rng(0).permutation(pred.n_items)
    a = count_cells(pred, "site", item_stats=("nll", "brier"))
    b = count_cells(pred.subset(perm), "site", item_stats=("nll", "brier"))
    xr.testing.assert_identical(a, b)


def test_missing_attribute_values_are_left_out():
    base = _pool(6, n=50)
    ds = _dataset(base)
    ds["dept"] = ("item", np.where(np.arange(50) % 5 == 0, np.nan, np.arange(50) % 3).astype(float))
    ds.attrs["attributes"] = ["site", "age", "dept"]
    c = count_cells(ds, "dept")
    assert c["dept"].values.tolist() == [0.0, 1.0, 2.0]
    assert int(c["n_pool"].sum()) == 40


def test_custom_item_statistic_object():
    pred = _pool(7, n=100)
    sq = ItemStatistic("conf_sq", lambda it: it["confidence"] ** 2, needs_labels=False, bound=1.0)
    c = count_cells(pred, (), item_stats=[sq])
    np.testing.assert_allclose(float(c["conf_sq_sum"]), math.fsum(pred.confidence**2), rtol=1e-15)


def test_errors_are_one_line():
    top1 = _pool(8, n=20, probs=False)
    with pytest.raises(DataError, match="needs full probability vectors"):
        count_cells(top1, item_stats=["nll"])
    with pytest.raises(ConfigError, match="neither a region key nor an attribute"):
        count_cells(top1, ("colour",))
    with pytest.raises(ConfigError, match="unknown per-item statistic"):
        count_cells(top1, item_stats=["nope"])
    with pytest.raises(ConfigError, match="twice"):
        count_cells(top1, ("predicted", "predicted"))
    with pytest.raises(ConfigError, match="strictly increasing"):
        count_cells(top1, "bin", bin_edges=[0, 0.5, 0.5, 1])
    ds = _dataset(top1)
    ds["predicted"] = ds["predicted"] + 10
    with pytest.raises(DataError, match="predicted: class code"):
        count_cells(ds)
    big = ItemStatistic("big", lambda it: it["confidence"] * 1e6, needs_labels=False, bound=1.0)
    with pytest.raises(ConfigError, match="exceeds its declared bound"):
        count_cells(top1, item_stats=[big])


def test_equal_mass_edges_numpy_and_dask_agree():
    pred = _pool(9, n=3000)
    e_np = equal_mass_edges(pred, 8, resolution=4096)
    e_dask = equal_mass_edges(_dataset(pred, 333), 8, resolution=4096)
    np.testing.assert_array_equal(e_np, e_dask)
    q = np.quantile(pred.confidence, np.linspace(0, 1, 9)[1:-1], method="lower")
    assert np.abs(e_np[1:-1] - q).max() <= 1 / 4096
    # equal mass: each bin holds about N/8 items, within the count of one sketch cell
    counts = count_cells(pred, "bin", bin_edges=e_np)["n_pool"].values
    cell_max = np.bincount(np.minimum((pred.confidence * 4096).astype(int), 4095)).max()
    assert np.abs(counts - 3000 / 8).max() <= cell_max + 1


def test_sparse_tables_match_dense_counts():
    # K = 60 classes and 300 items: the 3,600-cell confusion table takes the scatter path
    pred = _pool(10, n=300, k=60, frac_labeled=0.7)
    c = count_cells(pred, ("predicted", "true"), item_stats=("nll",))
    lab = pred.labeled
    want = np.zeros((60, 60), dtype=int)
    np.add.at(want, (pred.predicted[lab], pred.labels[lab]), 1)
    np.testing.assert_array_equal(c["n"], want)
    np.testing.assert_array_equal(c["n_pool"], want)
    np.testing.assert_array_equal(c["correct"].values, np.diag(np.diag(want)))
    score = np.zeros((60, 60))
    np.add.at(score, (pred.predicted[lab], pred.labels[lab]), pred.confidence[lab])
    np.testing.assert_allclose(c["score_sum"], score, rtol=1e-15, atol=1e-15)
    xr.testing.assert_identical(count_cells(_dataset(pred, 37), ("predicted", "true"), item_stats=("nll",)), c)
    by_site = count_cells(pred, ("site", "predicted", "age"))     # 540 cells for 300 items: sparse too
    np.testing.assert_array_equal(by_site["n_pool"].sum(("site", "age")), np.bincount(pred.predicted, minlength=60))


def test_count_tables_equals_separate_counts():
    from pbassess.counting import count_tables

    pred = _pool(11, n=600)
    specs = {"acc": "predicted", "cal": {"by": ("bin",), "bin_edges": 15, "item_stats": ["nll"]},
             "cost": ("predicted", "true"), "site": {"by": "site", "labeled_only": True}}
    for source in (pred, _dataset(pred, 111)):
        tables = count_tables(source, specs)
        xr.testing.assert_identical(tables["acc"], count_cells(pred, "predicted"))
        xr.testing.assert_identical(tables["cal"], count_cells(pred, "bin", bin_edges=15, item_stats=["nll"]))
        xr.testing.assert_identical(tables["cost"], count_cells(pred, ("predicted", "true")))
        xr.testing.assert_identical(tables["site"], count_cells(pred, "site", labeled_only=True))
    with pytest.raises(ConfigError, match="unknown count option"):
        count_tables(pred, {"x": {"by": "predicted", "bins": 3}})


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 400), n_bins=st.integers(1, 20), chunk=st.integers(1, 150))
def test_exact_equal_mass_edges_equal_the_in_memory_rule(seed, n, n_bins, chunk):
    from pbassess.stats.counts import bin_edges

    rng = np.random.default_rng(seed)
    conf = np.round(rng.uniform(0.25, 1.0, n), int(rng.integers(1, 6)))     # ties included
    pred = Predictions.from_top1(rng.integers(0, 4, n), conf, classes=["a", "b", "c", "d"])
    want = bin_edges(conf, n_bins, "quantile")
    np.testing.assert_array_equal(equal_mass_edges(pred, n_bins, exact=True, resolution=64), want)
    np.testing.assert_array_equal(equal_mass_edges(_dataset(pred, chunk), n_bins, exact=True, resolution=64), want)
