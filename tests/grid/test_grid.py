"""Experiment grids: TOML expansion, identical numbers per cell wherever it runs, resuming, CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pbassess.errors import ConfigError
from pbassess.grid import Cell, cells_from_config, done_cells, load_grid, run_cell, run_grid

SMALL = dict(dataset="digits-logreg", target="least-accurate", runs=4, log_every=50)


def _write(tmp_path, text: str):
    path = tmp_path / "grid.toml"
    path.write_text(text)
    return path


def test_tables_expand_to_the_union_of_their_products(tmp_path):
    path = _write(tmp_path, """
[[experiment]]
datasets = ["a", "b"]
strategies = ["ts", "random-item"]
priors = ["uniform", "informed"]
runs = 7
[[experiment]]
datasets = ["a"]
targets = ["most-miscalibrated"]
top_m = [1, 3]
strategies = ["ts"]
seeds = [0, 1]
""")
    cells = load_grid(path)
    assert len(cells) == 2 * 2 * 2 + 2 * 2
    assert {c.runs for c in cells[:8]} == {7} and cells[8].runs == 100
    assert len({c.key for c in cells}) == len(cells)
    # a repeated table adds nothing
    cfg = {"experiment": [{"datasets": ["a"], "strategies": ["ts"]}] * 2}
    assert len(cells_from_config(cfg)) == 1


@pytest.mark.parametrize("text, message", [
    ("[[experiment]]\ndatasets = ['a']\n", "'strategies' is missing"),
    ("[[experiment]]\ndatasets = ['a']\nstrategies = []\n", "empty list"),
    ("[[experiment]]\ndatasets = ['a']\nstrategies = ['ts']\nrunz = 3\n", "unknown key 'runz'"),
    ("[[experiment]]\nkind = 'x'\ndatasets = ['a']\nstrategies = ['ts']\n", "unknown kind 'x'"),
    ("[[experiment]]\ndatasets = ['a']\nstrategies = ['ts']\ntop_m = [0]\n", "top_m must hold positive"),
    ("[[experiment]]\ndatasets = ['a']\nstrategies = ['ts']\nruns = 'many'\n", "runs must be a number"),
    ("datasets = [", "not a valid TOML file"),
    ("title = 'no tables'\n", "at least one [[experiment]]"),
])
def test_bad_grid_files_get_one_line(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")) as info:
        load_grid(_write(tmp_path, text))
    assert "\n" not in str(info.value)


def test_missing_grid_file(tmp_path):
    with pytest.raises(ConfigError, match="grid file not found"):
        load_grid(tmp_path / "nope.toml")


def test_a_cell_equals_its_slice_of_the_joint_simulation():
    from pbassess import load_data
    from pbassess.active.experiment import simulate
    from pbassess.grid.cells import _as_dataset

    joint = _as_dataset(simulate(load_data("digits-logreg"), "least-accurate", ["random-item", "ts"],
                                 ["uniform", "informed"], runs=4, log_every=50, seed=3))
    cell = run_cell(Cell(strategy="ts", prior="informed", seed=3, **SMALL))
    np.testing.assert_array_equal(cell["mrr"].values, joint["mrr"].sel(strategy="ts", prior="informed").values)
    np.testing.assert_array_equal(cell["success"].values, joint["success"].sel(strategy="ts", prior="informed").values)


def test_grid_resumes_and_recomputes_only_missing_cells(tmp_path):
    import shutil

    cells = [Cell(strategy=s, prior=p, **SMALL) for s in ("ts", "random-item") for p in ("uniform", "informed")]
    seen = []
    first = run_grid(cells, tmp_path, on_cell=lambda c, ds: seen.append(c.key))
    assert len(seen) == 4 and len(done_cells(cells, tmp_path)) == 4
    assert (tmp_path / "grid.zarr").exists()
    seen.clear()
    again = run_grid(cells, tmp_path, on_cell=lambda c, ds: seen.append(c.key))
    assert seen == []
    np.testing.assert_array_equal(first["mrr_curve"].values, again["mrr_curve"].values)
    shutil.rmtree(tmp_path / "cells" / f"{cells[1].key}.zarr")
    third = run_grid(cells, tmp_path, on_cell=lambda c, ds: seen.append(c.key))
    assert seen == [cells[1].key]
    np.testing.assert_array_equal(first["labels_to_mrr"].values, third["labels_to_mrr"].values)
    # the merged store reads back with every factor as a coordinate
    import xarray as xr

    stored = xr.open_zarr(tmp_path / "grid.zarr", consolidated=False).load()
    assert sorted(set(stored["strategy"].values.tolist())) == ["random-item", "ts"]
    ts = stored.where(stored["strategy"] == "ts", drop=True)
    assert ts.sizes["cell"] == 2
    # with every label bought, every run has found the truth
    assert np.all(stored["final_mrr"].values == 1.0)


def test_changed_settings_make_a_new_cell_on_resume(tmp_path):
    """A resumed grid must not reuse a stored cell whose runs (or any other setting) changed."""
    import dataclasses

    cell = Cell(strategy="ts", prior="uniform", **SMALL)
    run_grid([cell], tmp_path)
    more_runs = dataclasses.replace(cell, runs=cell.runs + 1)
    assert more_runs.key != cell.key
    assert done_cells([more_runs], tmp_path) == []
    seen = []
    merged = run_grid([more_runs], tmp_path, on_cell=lambda c, ds: seen.append(c.key))
    assert seen == [more_runs.key]
    assert merged.sizes["cell"] == 1


@pytest.mark.slow
def test_local_cluster_gives_identical_numbers(tmp_path, local_client):
    cells = [Cell(strategy=s, prior="uniform", seed=5, **SMALL) for s in ("ts", "random-item", "bayes-ucb")]
    here = run_grid(cells, tmp_path / "here")
    there = run_grid(cells, tmp_path / "there", client=local_client)
    for var in ("labels_to_mrr", "final_mrr", "mrr_curve"):
        np.testing.assert_array_equal(here[var].values, there[var].values)


def test_unreachable_scheduler_is_one_line(tmp_path):
    cells = [Cell(strategy="ts", prior="uniform", **SMALL)]
    with pytest.raises(ConfigError, match="local:N"):
        run_grid(cells, tmp_path, scheduler="local:x")


def test_cli_json(tmp_path, capsys):
    from pbassess.cli import main

    path = _write(tmp_path, "[[experiment]]\ndatasets = ['digits-logreg']\nstrategies = ['ts', 'random-item']\n"
                            "runs = 3\nlog_every = 100\n")
    assert main(["grid", str(path), "--out", str(tmp_path / "o"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_cells"] == 2 and out["computed"] == 2 and out["skipped"] == 0
    assert {c["strategy"] for c in out["cells"]} == {"ts", "random-item"}
    assert main(["grid", str(path), "--out", str(tmp_path / "o"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["skipped"] == 2
    assert main(["grid", str(tmp_path / "missing.toml")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "grid file not found" in err[0]
