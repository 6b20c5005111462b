"""Issue 23, options side: every option checked on every path, none accepted and ignored.

Each reject case exits with status 2 and prints exactly one line on stderr naming the option
(and what it allows); each accept case gives the right answer.
"""

from __future__ import annotations

import json

import pytest

from pbassess.cli import main


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _one_line_error(capsys, argv, *wanted):
    code, out, err = _run(capsys, *argv)
    lines = err.strip().splitlines()
    assert code == 2, (argv, code, out, err)
    assert len(lines) == 1, (argv, err)
    for text in wanted:
        assert text in lines[0], (argv, err)
    assert "Traceback" not in err


ADAPTIVE = ["simulate", "digits-logreg", "--strategy", "ts", "--prior", "adaptive", "--runs", "2", "--seed", "1",
            "--quiet"]
ESTIMATION = ["simulate", "digits-logreg", "--target", "estimation", "--strategy", "uncertainty", "--runs", "2",
              "--seed", "1", "--quiet"]

SIMULATE_REJECT = [
    # values checked on every path
    (ADAPTIVE + ["--ci-prob", "0"], ("--ci-prob", "(0, 1)")),
    (ADAPTIVE + ["--ci-prob", "1"], ("--ci-prob", "(0, 1)")),
    (ADAPTIVE + ["--ci-prob", "1.5"], ("--ci-prob", "(0, 1)")),
    (ADAPTIVE + ["--picks-per-round", "0"], ("--picks-per-round", "at least 1")),
    (ADAPTIVE + ["--batch-size", "0"], ("--batch-size", "at least 1")),
    (ADAPTIVE + ["--pseudocount", "0"], ("--pseudocount", "> 0")),
    (ADAPTIVE + ["--pseudocount", "-1"], ("--pseudocount", "> 0")),
    (ADAPTIVE + ["--log-every", "0"], ("--log-every", "at least 1")),
    (ADAPTIVE + ["--runs", "0"], ("--runs", "at least 1")),
    (ADAPTIVE + ["--top-m", "0"], ("--top-m", "at least 1")),
    (ADAPTIVE + ["--budget", "0"], ("--budget", "at least 1")),
    (ESTIMATION + ["--budget", "0"], ("--budget", "at least 1")),
    (ESTIMATION + ["--budget", "2.5"], ("--budget", "integer")),
    (ESTIMATION + ["--runs", "0"], ("--runs", "at least 1")),
    (ESTIMATION + ["--ci-prob", "1.5"], ("--ci-prob", "(0, 1)")),
    (ESTIMATION + ["--budget", "100000"], ("--budget", "at most the pool size")),
    (["simulate", "digits-logreg", "--strategy", "ts", "--runs", "0"], ("--runs", "at least 1")),
    (["simulate", "digits-logreg", "--strategy", "ts", "--bins", "0"], ("--bins", "at least 1")),
    # options that a path does not use are errors naming them, not ignored
    (ADAPTIVE + ["--ci-prob", "0.9"], ("--ci-prob", "does not apply to --prior adaptive")),
    (ADAPTIVE + ["--pseudocount", "2"], ("--pseudocount", "does not apply to --prior adaptive")),
    (ADAPTIVE + ["--picks-per-round", "50"], ("--picks-per-round", "does not apply to --prior adaptive")),
    (ADAPTIVE + ["--batch-size", "50"], ("--batch-size", "does not apply to --prior adaptive")),
    (ADAPTIVE + ["--out", "never-written"], ("--out", "does not apply to --prior adaptive")),
    (ADAPTIVE + ["--bins", "5"], ("--bins", "does not apply to --prior adaptive")),
    (ADAPTIVE + ["--strategy", "random-item"], ("--strategy ts",)),
    (ESTIMATION + ["--prior", "adaptive"], ("--prior", "does not apply to --target estimation")),
    (ESTIMATION + ["--prior", "informed"], ("--prior", "does not apply to --target estimation")),
    (ESTIMATION + ["--top-m", "2"], ("--top-m", "does not apply to --target estimation")),
    (ESTIMATION + ["--log-every", "10"], ("--log-every", "does not apply to --target estimation")),
    (ESTIMATION + ["--pseudocount", "2"], ("--pseudocount", "does not apply to --target estimation")),
    (ESTIMATION + ["--out", "never-written"], ("--out", "does not apply to --target estimation")),
    (["simulate", "digits-logreg", "--target", "estimation", "--strategy", "ts", "--runs", "2"],
     ("'ts'", "random-item, uncertainty")),
]


@pytest.mark.parametrize(("argv", "wanted"), SIMULATE_REJECT, ids=[" ".join(a[5:]) for a, _ in SIMULATE_REJECT])
def test_simulate_rejects_in_one_line(capsys, tmp_path, monkeypatch, argv, wanted):
    monkeypatch.chdir(tmp_path)
    _one_line_error(capsys, argv, *wanted)
    assert not (tmp_path / "never-written").exists()


def test_simulate_estimation_uses_ci_prob(capsys):
    widths = {}
    for prob in ("0.5", "0.95"):
        code, out, _ = _run(capsys, *ESTIMATION, "--budget", "100", "--ci-prob", prob, "--json")
        assert code == 0
        payload = json.loads(out)
        assert payload["ci_prob"] == float(prob)
        widths[prob] = payload["strategies"]["uncertainty"]["width"][0]
    assert widths["0.5"] < widths["0.95"]


def test_simulate_estimation_random_item_is_an_estimation(capsys):
    # was read by the engine as "lowest accuracy", a table of MRR for another target
    code, out, _ = _run(capsys, "simulate", "digits-logreg", "--target", "estimation", "--strategy", "random-item",
                        "--budget", "100", "--runs", "2", "--seed", "1", "--json")
    assert code == 0
    payload = json.loads(out)
    assert payload["target"] == "estimation"
    assert payload["strategies"]["random-item"]["budget"] == [100]


def test_simulate_adaptive_log_every_is_used(capsys):
    code, out, _ = _run(capsys, *ADAPTIVE, "--log-every", "50", "--json")
    assert code == 0
    payload = json.loads(out)
    assert payload["log_every"] == 50
    assert len(payload["strategies"]["ts"]["mrr"]) == 899 // 50  # one evaluation per 50 labels


GRID_REJECT = [
    ('datasets = "digits-logreg"\nstrategies = ["ts"]\nruns = 2.7\n', "runs must be a positive integer, got 2.7"),
    ('datasets = "digits-logreg"\nstrategies = ["ts"]\nruns = 0\n', "runs must be a positive integer, got 0"),
    ('datasets = "digits-logreg"\nstrategies = ["ts"]\nlog_every = 10.5\n', "log_every must be a positive integer"),
    ('datasets = "digits-logreg"\nstrategies = ["ts"]\nbudget = -3\n', "budget must be a positive integer"),
    ('kind = "estimation"\ndatasets = "digits-logreg"\nlabels = 50\nruns = 2.7\n', "runs must be a positive integer"),
]


@pytest.mark.parametrize(("body", "wanted"), GRID_REJECT)
def test_grid_config_counts_are_never_truncated(capsys, tmp_path, body, wanted):
    grid = tmp_path / "grid.toml"
    grid.write_text('[[experiment]]\ndatasets = "digits-logreg"\nstrategies = ["ts"]\n[[experiment]]\n' + body)
    _one_line_error(capsys, ["grid", str(grid), "--out", str(tmp_path / "out")], str(grid), "grid experiment 2",
                    wanted)
    assert not (tmp_path / "out" / "grid.zarr").exists()


EXPLORE = ["surface-explore", "adult-sex", "--attributes", "race,sex", "--estimator", "beta-i", "--budget", "60",
           "--seed", "1"]


@pytest.mark.parametrize(("extra", "wanted"), [
    (["--min-support", "-1"], ("--min-support", "at least 0")),
    (["--min-support", "nan"], ("--min-support", "finite")),
    (["--seeds", "0"], ("--seeds", "at least 1")),
    (["--arms-per-round", "0"], ("--arms-per-round", "at least 1")),
    (["--budget", "0"], ("--budget", "at least 1")),
    (["--budget", "6.5"], ("--budget", "integer")),
])
def test_surface_explore_rejects_in_one_line(capsys, extra, wanted):
    _one_line_error(capsys, EXPLORE + extra, *wanted)


def test_surface_subsample_labels_is_checked(capsys):
    _one_line_error(capsys, ["surface", "adult-sex", "--attributes", "race,sex", "--estimator", "beta-i",
                             "--subsample-labels", "0"], "--subsample-labels", "at least 1")


def _two_class_csv(path, column_value):
    import numpy as np

    rng = np.random.default_rng(0)
    rows = ["p_0,p_1,label,A"]
    for _ in range(40):
        a = rng.uniform(0.05, 0.95)
        rows.append(f"{a:.3f},{1 - a:.3f},{int(rng.uniform() > a)},{column_value}")
    path.write_text("\n".join(rows) + "\n")
    return path


def test_shift_every_item_out_of_distribution_is_an_error(capsys, tmp_path):
    data = _two_class_csv(tmp_path / "all_ood.csv", "only")
    _one_line_error(capsys, ["shift", str(data), "--ood", "A=only", "--seed", "1"], "--ood A=only",
                    "every item", "--ood none")
    code, out, _ = _run(capsys, "shift", str(data), "--ood", "none", "--seed", "1", "--json")
    assert code == 0
    assert json.loads(out)


CLOSED_STDOUT = [
    ["assess", "digits-logreg", "--seed", "1"],
    ["estimate", "digits-logreg", "--labels", "100", "--seed", "1"],
    ["surface", "adult-sex", "--attributes", "race,sex", "--estimator", "beta-i", "--seed", "1"],
    EXPLORE,
    ["shift", "digits-shift", "--by", "environment", "--seed", "1"],
    ["recalibrate", "digits-logreg", "--method", "temperature", "--seed", "1"],
]


@pytest.mark.parametrize("argv", CLOSED_STDOUT, ids=[a[0] for a in CLOSED_STDOUT])
def test_closed_stdout_is_an_error(tmp_path, argv):
    import shlex
    import subprocess
    import sys

    command = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "pbassess.cli", *argv, "--out", "out"])
    done = subprocess.run(["bash", "-c", command + " >&-"], cwd=tmp_path, stderr=subprocess.PIPE, text=True,
                          timeout=300)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1, done.stderr
    assert "standard output is closed" in lines[0] and f"pbassess {argv[0]}:" in lines[0]
    assert not (tmp_path / "out").exists()  # refused before anything was computed or written


def _top1_csv(path, n):
    import numpy as np

    rng = np.random.default_rng(1)
    rows = ["predicted,confidence,label"]
    for _ in range(n):
        conf = rng.uniform(0.5, 1.0)
        rows.append(f"a,{conf:.3f},{'a' if rng.uniform() < conf - 0.2 else 'b'}")
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize(("n", "fraction", "needed"), [(4, "0.5", "40"), (39, "0.5", "40"), (60, "0.2", "98")])  # round(0.2 * 98) = 20
def test_recalibrate_refuses_too_few_items(capsys, tmp_path, n, fraction, needed):
    data = _top1_csv(tmp_path / "few.csv", n)
    _one_line_error(capsys, ["recalibrate", str(data), "--method", "platt", "--fit-fraction", fraction, "--seed", "1"],
                    "too few to recalibrate", "at least 20", f"at least {needed} labeled items")


def test_recalibrate_at_the_minimum_runs(capsys, tmp_path):
    data = _top1_csv(tmp_path / "enough.csv", 40)
    code, out, err = _run(capsys, "recalibrate", str(data), "--method", "platt", "--seed", "1", "--draws", "200",
                          "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert payload["n_fit"] == payload["n_eval"] == 20
