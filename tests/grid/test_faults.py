"""Issue 23, grid faults: a lock on --out, the merged store swapped in atomically, stale temporaries
cleaned at start, and nothing deleted that pbassess did not write (also under kill -9)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import xarray as xr

from pbassess.cli import main
from pbassess.grid.runner import LOCK_NAME, WRITTEN_NAME, _recover_and_clean, grid_lock

GRID = textwrap.dedent("""\
    [grid]
    kind = "estimation"

    [[experiment]]
    datasets = ["digits-logreg"]
    labels = [60, 120]
    seeds = [0]
    methods = ["classical", "ppi"]
    runs = 3
    """)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "grid.toml"
    path.write_text(GRID)
    return path


def _one_line(capsys, argv, *wanted) -> None:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, (code, out, err)
    for text in wanted:
        assert text in lines[0], err


def _cli(*argv: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    return subprocess.Popen([sys.executable, "-m", "pbassess.cli", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def test_a_second_grid_on_the_same_out_is_refused_in_one_line(capsys, tmp_path, config):
    out = tmp_path / "out"
    out.mkdir()
    with grid_lock(out):  # another grid holds the folder
        _one_line(capsys, ["grid", config, "--out", out, "--json"], "another pbassess grid is running", LOCK_NAME)
    assert not (out / "grid.zarr").exists()
    assert main(["grid", str(config), "--out", str(out), "--json"]) == 0  # free again
    capsys.readouterr()


def test_two_grids_started_together(tmp_path, config):
    out = tmp_path / "out"
    procs = [_cli("grid", str(config), "--out", str(out), "--json") for _ in range(2)]
    results = [p.communicate(timeout=300) for p in procs]
    codes = [p.returncode for p in procs]
    assert sorted(codes) in ([0, 0], [0, 2]), (codes, results)
    for (_stdout, stderr), code in zip(results, codes, strict=True):
        assert "Traceback" not in stderr
        if code == 2:
            assert len(stderr.strip().splitlines()) == 1 and "another pbassess grid is running" in stderr
    assert xr.open_zarr(out / "grid.zarr", consolidated=False).sizes["cell"] == 2


def test_a_store_pbassess_did_not_write_is_refused_not_deleted(capsys, tmp_path, config):
    out = tmp_path / "out"
    (out / "grid.zarr").mkdir(parents=True)
    (out / "grid.zarr" / "precious.txt").write_text("mine")
    _one_line(capsys, ["grid", config, "--out", out], "was not written by pbassess grid", "nothing was deleted")
    assert (out / "grid.zarr" / "precious.txt").read_text() == "mine"
    (out / "grid.zarr" / "precious.txt").unlink()
    (out / "grid.zarr").rmdir()
    assert main(["grid", str(config), "--out", str(out), "--json"]) == 0
    capsys.readouterr()
    written = xr.open_zarr(out / "grid.zarr", consolidated=False).attrs[WRITTEN_NAME]
    assert "zarr.json" in written and all((out / "grid.zarr" / f).is_file() for f in written)
    (out / "grid.zarr" / "notes.md").write_text("a note in our store")  # an unexpected file inside it
    _one_line(capsys, ["grid", config, "--out", out], "1 file(s) pbassess did not write", "notes.md")
    assert (out / "grid.zarr" / "notes.md").exists()


def test_stale_temporaries_are_cleaned_and_other_files_kept(capsys, tmp_path, config):
    out = tmp_path / "out"
    stale = [out / ".grid.zarr.k1ll3d.tmp" / "grid.zarr", out / "cells" / ".estimation__x.abc123.tmp" / "data.zarr"]
    for folder in stale:
        folder.mkdir(parents=True)
        (folder / "zarr.json").write_text("{}")
    keep = [out / "mine.txt", out / "cells" / "notes.txt"]
    for path in keep:
        path.write_text("keep me")
    assert main(["grid", str(config), "--out", str(out), "--json"]) == 0
    capsys.readouterr()
    assert not any(folder.parent.exists() for folder in stale)
    assert all(path.read_text() == "keep me" for path in keep)
    assert xr.open_zarr(out / "grid.zarr", consolidated=False).sizes["cell"] == 2


def test_a_foreign_folder_in_place_of_a_cell_is_kept(capsys, tmp_path, config):
    from pbassess.grid import load_grid

    out = tmp_path / "out"
    cell = load_grid(config)[0]
    folder = out / "cells" / f"{cell.key}.zarr"
    folder.mkdir(parents=True)
    (folder / "thesis.tex").write_text("keep me")
    _one_line(capsys, ["grid", config, "--out", out], "holds files pbassess does not write", "nothing was deleted")
    assert (folder / "thesis.tex").read_text() == "keep me"


_KILLER = textwrap.dedent("""\
    import os, signal, sys
    import pbassess.grid.runner as runner
    from pbassess.cli import main

    where = sys.argv[1]
    if where == "after-write":   # the new store is written beside the old one, not yet swapped in
        def swap(new, target):
            os.kill(os.getpid(), signal.SIGKILL)
        runner._replace_store = swap
    else:                        # no atomic exchange: kill between the two renames
        runner._exchange = lambda a, b: False
        real = os.replace
        class FakeOs:
            def __getattr__(self, name):
                return getattr(os, name)
            @staticmethod
            def replace(a, b):
                source, dest = os.path.basename(os.path.dirname(a)), os.path.basename(os.path.dirname(b))
                if source.startswith(".grid.zarr.") and ".old." not in source and not dest.startswith("."):
                    os.kill(os.getpid(), signal.SIGKILL)  # the old store is aside, the new one not yet in place
                real(a, b)
        runner.os = FakeOs()
    sys.exit(main(sys.argv[2:]))
    """)


@pytest.mark.parametrize("where", ["after-write", "between-renames"])
def test_kill_during_the_final_merge_leaves_the_old_store_readable(capsys, tmp_path, config, where):
    out = tmp_path / "out"
    assert main(["grid", str(config), "--out", str(out), "--json"]) == 0
    capsys.readouterr()
    before = xr.open_zarr(out / "grid.zarr", consolidated=False).load()
    config.write_text(GRID.replace("labels = [60, 120]", "labels = [60, 120, 180]"))  # one more cell: a new merge
    script = tmp_path / "killer.py"
    script.write_text(_KILLER)
    proc = subprocess.run([sys.executable, str(script), where, "grid", str(config), "--out", str(out), "--json"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == -9, proc.stderr
    if where == "after-write":  # the old store never left its place
        assert xr.open_zarr(out / "grid.zarr", consolidated=False).load().identical(before)
    else:  # the old store was set aside: the next start puts it back before anything else
        assert not (out / "grid.zarr").exists()
        _recover_and_clean(out)
        assert xr.open_zarr(out / "grid.zarr", consolidated=False).load().identical(before)
    assert main(["grid", str(config), "--out", str(out), "--json"]) == 0  # and the grid finishes
    capsys.readouterr()
    assert xr.open_zarr(out / "grid.zarr", consolidated=False).sizes["cell"] == 3
    assert not list(out.glob(".grid.zarr.*.tmp")) and not list((out / "cells").glob(".*.tmp"))
