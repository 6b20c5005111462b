"""Tests of ``pbassess simulate``."""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from pbassess.cli import main


@pytest.fixture
def top1_csv(tmp_path):
    """A pool in top-1 form (predicted class, probability, true label): 4 classes, 120 items."""
    rng = np.random.default_rng(0)
    acc = {"a": 0.4, "b": 0.9, "c": 0.75, "d": 0.95}
    rows = ["item_id,predicted,confidence,label"]
    i = 0
    for cls, a in acc.items():
        for j in range(30):
            wrong = [c for c in acc if c != cls][j % 3]
            rows.append(f"x{i},{cls},{rng.uniform(0.5, 1):.3f},{cls if j < a * 30 else wrong}")
            i += 1
    path = tmp_path / "pool.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def test_json_contract(top1_csv, capsys):
    code = main(["simulate", str(top1_csv), "--target", "least-accurate", "--strategy", "random-item,ts",
                 "--runs", "5", "--log-every", "10", "--seed", "3", "--json"])
    assert code == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    # the keys of the original contract, plus the keys every result shares, plus per-prior tables
    assert set(out) == {"target", "top_m", "log_every", "seconds", "compile_seconds", "strategies", "priors",
                        "metric", "inference", "ci_prob", "diagnostics", "sentence", "seed"}
    assert out["target"] == "least-accurate" and out["top_m"] == 1 and out["log_every"] == 10
    assert out["metric"] == "accuracy" and out["inference"] == "conjugate" and out["ci_prob"] == 0.95
    assert out["diagnostics"]["ok"] is True and out["diagnostics"]["runs"] == 5
    assert set(out["strategies"]) == {"random-item", "ts"} and out["priors"]["uniform"] == out["strategies"]
    for row in out["strategies"].values():
        assert set(row) == {"labels_to_mrr", "labels_to_mrr_interval", "mrr", "success", "agreement"}
        low, high = row["labels_to_mrr_interval"]
        assert low <= row["labels_to_mrr"] <= high  # a bootstrap interval over runs brackets the estimate
        assert len(row["mrr"]) == len(row["success"]) == len(row["agreement"]) == 12  # 120 items / L = 10
        assert row["agreement"] == row["success"]  # top-1: finding the set is finding its one class
        assert row["mrr"][-1] == 1.0 and 0 < row["labels_to_mrr"] <= 1
    assert "#" not in captured.err and out["seed"] == 3  # --json implies --quiet; the seed is recorded


def test_same_seed_same_json(top1_csv, capsys):
    args = ["simulate", str(top1_csv), "--strategy", "ttts", "--runs", "3", "--log-every", "20", "--json",
            "--prior", "informed", "--pseudocount", "4", "--top-m", "2"]
    main(args)  # no --seed: a fresh one, recorded in the output
    first = json.loads(capsys.readouterr().out)
    main([*args, "--seed", str(first["seed"])])
    second = json.loads(capsys.readouterr().out)
    assert first["strategies"] == second["strategies"] and first["top_m"] == 2 and second["seed"] == first["seed"]


def test_other_targets_and_outputs(top1_csv, tmp_path, capsys):
    out_dir = tmp_path / "out"
    code = main(["simulate", str(top1_csv), "--target", "most-miscalibrated", "--strategy", "ts,bayes-ucb",
                 "--runs", "3", "--log-every", "30", "--bins", "5", "--out", str(out_dir)])
    assert code == 0
    text = capsys.readouterr().out
    assert "labels to MRR" in text and "bayes-ucb" in text
    assert {p.name for p in out_dir.iterdir()} == {"simulation.nc", "labels_to_mrr.csv", "active.png",
                                                         "report.md"}
    from pbassess import load_result

    loaded = load_result(out_dir / "simulation.nc")  # the saved result loads back with its curves
    assert type(loaded).__name__ == "SimulationResult" and set(loaded.posterior["strategy"].values) == {"ts", "bayes-ucb"}
    cost = tmp_path / "cost.csv"
    np.savetxt(cost, np.array([[0, 1, 2, 2], [1, 0, 1, 1], [2, 1, 0, 1], [1, 1, 1, 0]]), delimiter=",")
    code = main(["simulate", str(top1_csv), "--target", "highest-cost", "--strategy", "mpts", "--top-m", "2",
                 "--cost-matrix", str(cost), "--runs", "2", "--log-every", "40", "--json"])
    assert code == 0 and json.loads(capsys.readouterr().out)["target"] == "highest-cost"


@pytest.mark.parametrize("extra,message", [
    (["--strategy", "thompson"], "unknown strategy"),
    (["--strategy", "ts", "--target", "estimation"], "estimation"),
    (["--strategy", "ts", "--top-m", "9"], "top_m"),
    (["--strategy", "ts", "--log-every", "1000"], "log_every"),
])
def test_user_errors_are_one_line(top1_csv, capsys, extra, message):
    code = main(["simulate", str(top1_csv), "--runs", "2", *extra])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and message in err[-1] and err[-1].startswith("pbassess simulate: error:")


def test_cifar100_people_cost_matrix(cifar100, shared_data_dir, capsys):
    # the paper's people matrix has three cost levels per row: the Dirichlet path of the engine
    code = main(["simulate", "cifar100-resnet110", "--target", "highest-cost", "--cost-matrix", "people",
                 "--strategy", "ts", "--runs", "2", "--log-every", "2500", "--json"])
    assert code == 0
    assert len(json.loads(capsys.readouterr().out)["strategies"]["ts"]["mrr"]) == 4


def test_registered_name(shared_data_dir, capsys):
    code = main(["simulate", "svhn-resnet", "--strategy", "ts", "--runs", "2", "--log-every", "2000", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["strategies"]["ts"]["mrr"]) == 26032 // 2000
