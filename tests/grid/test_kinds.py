"""Estimation and surface cells: TOML, registry, numbers against closed forms, resuming, dask, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pbassess.errors import ConfigError
from pbassess.grid import (
    KINDS,
    EstimationCell,
    SurfaceCell,
    cells_from_config,
    done_cells,
    load_grid,
    run_cell,
    run_grid,
)
from pbassess.grid.surface_cells import parse_estimator

GRIDS = Path(__file__).resolve().parents[2] / "benchmarks" / "grids"
SYN = "synthetic-surface:3000:4:0"
ATTRS = ("a0", "a1", "a2", "a3")


def _estimation_cells(runs: int = 6) -> list[EstimationCell]:
    return [EstimationCell("digits-logreg", labels=n, methods=("classical", "ppi", "bayes", "active"), runs=runs,
                           seed=s) for n in (60, 150) for s in (0, 3)]


def _surface_cells() -> list[SurfaceCell]:
    return [SurfaceCell(SYN, ATTRS, name, budget=b, seed=s, min_support=20)
            for name in ("confidence", "beta-i", "cpredictor") for b in (100, 400) for s in (0, 1)]


def test_registry_and_toml_kinds(tmp_path):
    assert set(KINDS) == {"active", "estimation", "surface"}
    cfg = {"grid": {"kind": "surface"},
           "experiment": [{"datasets": SYN, "attributes": list(ATTRS), "estimators": ["beta-i", "additive+conf"],
                           "budgets": [100, 200], "seeds": [0, 1], "chains": 1, "draws": 30},
                          {"kind": "estimation", "datasets": "digits-logreg", "labels": 50, "methods": ["ppi"]}]}
    cells = cells_from_config(cfg)
    surface = [c for c in cells if c.kind == "surface"]
    assert len(surface) == 8 and len(cells) == 9
    assert {c.chains for c in surface} == {1} and {c.draws for c in surface} == {30} and surface[0].tune == 500
    assert cells[-1].methods == ("ppi",) and cells[-1].runs == 100
    assert len({c.key for c in cells}) == 9
    # the same cell read from TOML or built in code has one key (resuming finds it either way)
    assert surface[0].key == SurfaceCell(SYN, list(ATTRS), "beta-i", budget=100, chains=1, draws=30).key
    assert cells[-1].key == EstimationCell("digits-logreg", labels=50, methods=["ppi"], subset="").key
    # changed settings make a different cell (resuming never reuses a cell computed with other settings)
    assert EstimationCell("d", labels=5, runs=3).key != EstimationCell("d", labels=5, runs=4).key
    # a grid of mixed kinds is refused in one line
    with pytest.raises(ConfigError, match="one kind") as info:
        run_grid(cells, tmp_path)
    assert "\n" not in str(info.value)
    # the shipped grid files load, every existing one unchanged
    assert {c.kind for c in load_grid(GRIDS / "estimation_smoke.toml")} == {"estimation"}
    assert {c.kind for c in load_grid(GRIDS / "surface_smoke.toml")} == {"surface"}
    assert {c.kind for c in load_grid(GRIDS / "smoke.toml")} == {"active"}
    assert len(load_grid(GRIDS / "active_paper.toml")) == 2 * 2 * 2 + 2 + 2 * 2 * 2 + 2


@pytest.mark.parametrize("table, message", [
    ({"kind": "estimation", "datasets": "d"}, "'labels' is missing"),
    ({"kind": "estimation", "datasets": "d", "labels": 5, "methods": ["wald"]}, "unknown estimation method 'wald'"),
    ({"kind": "estimation", "datasets": "d", "labels": 0}, "labels must hold positive"),
    ({"kind": "surface", "datasets": "d", "attributes": "SEX", "estimators": "beta-i", "budgets": 5},
     "attributes must be a non-empty list"),
    ({"kind": "surface", "datasets": "d", "attributes": ["SEX"], "estimators": "gp", "budgets": 5},
     "unknown surface estimator 'gp'"),
    ({"kind": "surface", "datasets": "d", "attributes": ["SEX"], "estimators": "additive(mcmc)", "budgets": 5},
     "unknown inference 'mcmc'"),
])
def test_bad_tables_get_one_line(table, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")) as info:
        cells_from_config({"experiment": [table]})
    assert "\n" not in str(info.value)
    with pytest.raises(ConfigError, match=r"\[grid\] table"):
        cells_from_config({"grid": {"kind": "surface", "x": 1}, "experiment": [table]})


def test_estimator_names_match_the_benchmark():
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_surface", GRIDS.parent / "surface.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    for name, meaning in bench.ESTIMATORS.items():  # every name benchmarks/surface.py prints is a grid name
        assert parse_estimator(name) == (meaning or (None, {})), name
    assert parse_estimator("confidence") == (None, {})
    assert parse_estimator("additive+conf") == ("additive", {"covariate": "confidence", "stack_confidence": False})
    assert parse_estimator("additive(advi)") == ("additive", {"inference": "advi"})
    assert parse_estimator("betagp-slp") == ("betagp-slp", {})
    with pytest.raises(ConfigError, match="synthetic-surface:N:K:SEED"):
        run_cell(SurfaceCell("synthetic-surface:a:b", ("a0",), "beta-i", budget=5))


def test_estimation_cell_draws_the_documented_labels_and_classical_interval():
    from scipy import stats

    from pbassess import load_data

    cell = EstimationCell("digits-logreg", labels=60, methods=("classical", "ppi"), runs=5, seed=7)
    ds = run_cell(cell)
    correct = np.asarray(load_data("digits-logreg").correct, dtype=float)
    assert ds.attrs["truth"] == correct.mean() and ds.attrs["n_items"] == correct.size
    for r in range(5):  # run r draws its labels from default_rng([seed, n, r]): the classical interval by hand
        idx = np.random.default_rng([7, 60, r]).choice(correct.size, 60, replace=False)
        k = correct[idx].sum()   # 0/1 values: Clopper-Pearson (the Wald interval fails at the boundary, issue 20)
        lo = 0.0 if k == 0 else stats.beta.ppf(0.025, k, 60 - k + 1)
        hi = 1.0 if k == 60 else stats.beta.ppf(0.975, k + 1, 60 - k)
        np.testing.assert_allclose([ds["lower"].values[0, r], ds["upper"].values[0, r]], [lo, hi], rtol=1e-12)
    # PPI++ with power tuning is never wider than about the classical interval on average
    width = ds["upper"].values - ds["lower"].values
    assert width[1].mean() <= 1.05 * width[0].mean()


def test_surface_cell_is_the_closed_form_beta_i_scored_by_hand():
    from pbassess.grid.surface_cells import _pool
    from pbassess.surface import count_arms, hide_labels

    cell = SurfaceCell(SYN, ATTRS, "beta-i", budget=400, seed=2, min_support=20)
    ds = run_cell(cell)
    pool = _pool(SYN)
    full = count_arms(pool, ATTRS)
    kept = count_arms(hide_labels(pool, 400, seed=2), ATTRS)
    assert kept.n.sum() == 400
    g = kept.correct.sum() / kept.n.sum()  # Beta-I: lambda = 0.1 pseudo-counts at the global accuracy
    expected = (kept.correct + 0.1 * g) / (kept.n + 0.1)
    np.testing.assert_allclose(ds["mean"].values, expected, rtol=1e-12)
    truth = full.correct / full.n
    scored = full.pool_n >= 20
    np.testing.assert_allclose(ds.attrs["macro_mse"], np.mean((expected[scored] - truth[scored]) ** 2), rtol=1e-12)
    assert ds.attrs["n_arms_scored"] == scored.sum() and np.isnan(ds.attrs["max_rhat"])


def test_surface_mcmc_cell_plumbing(monkeypatch, tmp_path):
    """NUTS mocked: the cell passes its sample settings and options, and stores the diagnostics."""
    import pbassess.surface as surface

    seen = {}

    class Fit:
        def __init__(self, arms):
            self.mean = np.full(arms.n_arms, 0.8)
            self.diagnostics = {"max_rhat": 1.02, "divergences": 3}

    def fake_fit(arms, **kwargs):
        seen.update(kwargs)
        return Fit(arms)

    monkeypatch.setattr(surface, "fit_surface", fake_fit)
    cell = SurfaceCell(SYN, ATTRS, "additive+conf(advi)", budget=100, seed=4, draws=30, tune=20, chains=1,
                       min_support=20)
    merged = run_grid([cell], tmp_path)
    assert seen == {"estimator": "additive", "seed": 4, "sample_kwargs": {"draws": 30, "tune": 20, "chains": 1},
                    "covariate": "confidence", "inference": "advi", "stack_confidence": False}
    assert float(merged["max_rhat"][0]) == 1.02 and int(merged["divergences"][0]) == 3
    assert str(merged["estimator"].values[0]) == "additive+conf(advi)"
    np.testing.assert_array_equal(merged["arm_mean"].values[0, :15], 0.8)


@pytest.mark.parametrize("make_cells", [_estimation_cells, _surface_cells], ids=["estimation", "surface"])
def test_grids_resume(tmp_path, make_cells):
    cells = make_cells()
    seen: list[str] = []

    def note(cell, ds):
        seen.append(cell.key)

    first = run_grid(cells, tmp_path, on_cell=note)
    assert len(seen) == len(cells) and len(done_cells(cells, tmp_path)) == len(cells)
    assert (tmp_path / "grid.zarr").exists()
    seen.clear()
    again = run_grid(cells, tmp_path, on_cell=note)
    assert seen == []  # a second run computes nothing
    assert first.identical(again)
    (tmp_path / "cells" / f"{cells[2].key}.zarr" / "zarr.json").unlink()
    third = run_grid(cells, tmp_path, on_cell=note)
    assert seen == [cells[2].key] and first.drop_vars("seconds").identical(third.drop_vars("seconds"))


def test_merged_estimation_table_is_the_in_process_summary(tmp_path):
    from pbassess.estimation.experiment import interval_summary, load_pool, pool_intervals

    conf, correct = load_pool(EstimationCell("digits-logreg", labels=60).pool)
    direct = interval_summary(pool_intervals(conf, correct, 150, 6, 3), correct.mean(), 150)
    row = run_grid(_estimation_cells(), tmp_path).isel(cell=3)
    assert int(row["labels"]) == 150 and int(row["seed"]) == 3 and float(row["truth"]) == correct.mean()
    for j, method in enumerate(row["method"].values):  # to the last digit
        assert [float(row[s].values[j]) for s in ("width", "coverage", "effective_labels")] == \
               [direct[str(method)][s] for s in ("width", "coverage", "effective_labels")]


def test_cli_runs_the_smoke_grids(tmp_path, capsys):
    from pbassess.cli import main

    assert main(["grid", str(GRIDS / "estimation_smoke.toml"), "--out", str(tmp_path / "e"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["kind"] == "estimation" and out["n_cells"] == 4 and out["computed"] == 4
    assert len(out["cells"]) == 16 and {r["method"] for r in out["cells"]} == {"classical", "ppi", "bayes", "active"}
    assert all(r["effective_labels"] == r["labels"] for r in out["cells"] if r["method"] == "classical")
    assert main(["grid", str(GRIDS / "surface_smoke.toml"), "--out", str(tmp_path / "s")]) == 0
    text = capsys.readouterr().out
    assert text.startswith("12 surface cells (12 computed, 0 already done)")
    assert sum(line.startswith("| synthetic-surface") for line in text.splitlines()) == 12
    assert main(["grid", str(GRIDS / "surface_smoke.toml"), "--out", str(tmp_path / "s"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["skipped"] == 12


@pytest.mark.slow
def test_two_worker_cluster_gives_identical_numbers(tmp_path, local_client, monkeypatch):
    """Estimation and surface grids, and the estimation benchmark, on 2 worker processes vs in process."""
    for cells, name in ((_estimation_cells(), "e"), (_surface_cells(), "s")):
        here = run_grid(cells, tmp_path / f"{name}-here")
        there = run_grid(cells, tmp_path / f"{name}-there", client=local_client)
        assert here.drop_vars("seconds").identical(there.drop_vars("seconds"))
    # each worker compiles PyTensor code in a folder of its own
    flags = local_client.run(lambda: __import__("os").environ.get("PYTENSOR_FLAGS", ""))
    dirs = {f.split("base_compiledir=")[-1] for f in flags.values()}
    assert len(dirs) == 2 and all("pbassess-pytensor" in d for d in dirs)


@pytest.mark.slow
def test_estimation_benchmark_on_a_scheduler_prints_the_in_process_table(tmp_path, local_client, capsys,
                                                                         shared_data_dir):
    """benchmarks/estimation.py --scheduler ADDRESS (here the running LocalCluster's) prints the same rows."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_estimation", GRIDS.parent / "estimation.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    from pbassess.estimation.experiment import interval_summary

    for name, conf, correct in bench.pools({"german"}):
        for n in bench.SIZES:
            if n <= conf.size / 3:
                summary = interval_summary(bench.run_pool(conf, correct, n, 3, 1), correct.mean(), n)
                bench.print_row(name, conf.size, correct.mean(), n,
                                {s: {m: summary[m][s] for m in bench.METHODS} for s in bench.STATS})
    here = capsys.readouterr().out
    bench.run_on_grid({"german"}, 3, 1, local_client.scheduler.address, str(tmp_path))
    there = capsys.readouterr().out
    assert here.startswith("| german-sex (LR) |") and here == there
