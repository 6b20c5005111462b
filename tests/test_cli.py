"""The ``data``, ``assess`` and ``demo`` commands, run in-process through ``pbassess.cli.main``.

Checks the JSON contract of ``assess --json`` (and that it is the result's own ``to_json()``),
that errors are one stderr line with exit status 2, and that the non-JSON runs and the demo
write their figures, netCDF files and report.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from pbassess import load_data
from pbassess.cli import main
from pbassess.data import registry

CONTRACT = {
    "accuracy": {"metric", "classes", "n", "correct", "mean", "hdi", "hdi_prob", "p_lowest"},
    "calibration": {"metric", "ece", "bins", "classwise_ece"},
    "cost": {"metric", "classes", "mean", "hdi", "p_highest"},
}


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_json(capsys, *argv: str) -> dict:
    code, out, err = run_cli(capsys, *argv, "--json")
    assert code == 0, err
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one JSON line, got {len(lines)}"
    obj = json.loads(lines[0])
    assert isinstance(obj, dict)
    return obj


def assert_one_line_error(capsys, *argv: str, match: str) -> str:
    """Exit status 2 and one error line on stderr (after the subcommand's usage for a bad option)."""
    code, out, err = run_cli(capsys, *argv)
    assert code == 2, (code, out, err)
    lines = err.strip().splitlines()
    usage = lines[:-1]
    assert not usage or (usage[0].startswith(f"usage: pbassess {argv[0]}") and all(
        line.startswith(" ") for line in usage[1:])), f"expected the subcommand's usage and one line, got: {err!r}"
    assert lines[-1].startswith("pbassess ") and ": error: " in lines[-1] and "Traceback" not in err
    assert match in lines[-1], lines[-1]
    return lines[-1]


# ------------------------------------------------------------------------------ data
def test_data_list_json(capsys):
    obj = run_json(capsys, "data", "list")
    names = [m["name"] for m in obj["models"]]
    assert obj["default"] == names[0] == "digits-logreg" and "digits-shift" in names
    assert {"cifar100-resnet110", "svhn-resnet", "adult-sex", "german-sex"} <= set(names)
    first = obj["models"][0]
    assert first["where"] == "built in" and first["n_items"] == 899 and first["n_classes"] == 10
    assert Path(first["path"]).name == "predictions.csv"
    for m in obj["models"]:
        assert m["where"] in {"built in", "mirror", "cache", "download"}
        assert m["task"] and m["n_items"] > 0 and m["n_classes"] >= 2


def test_data_list_table(capsys):
    code, out, _ = run_cli(capsys, "data", "list")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["name", "task"] and lines[2].startswith("digits-logreg *")
    assert "899" in lines[2] and "built in" in lines[2]


def test_data_list_reports_the_mirror(capsys, shared_data_dir):
    obj = run_json(capsys, "data", "list")
    svhn = next(m for m in obj["models"] if m["name"] == "svhn-resnet")
    assert svhn["where"] == "mirror" and Path(svhn["path"]).is_relative_to(shared_data_dir)


def test_data_show_prints_the_card(capsys):
    code, out, _ = run_cli(capsys, "data", "show", "digits-logreg")
    assert code == 0
    card = json.loads((registry.zoo_dir() / "digits-logreg" / "card.json").read_text())
    assert out.startswith("digits-logreg (built-in default)")
    assert card["provenance"] in out and card["citation"] in out and "built in:" in out
    obj = run_json(capsys, "data", "show", "cifar100-resnet110")
    assert obj["source"]["sha256"] == "8743b3fede5611fdfd5a0a51d7c0777e5abefdeaefb408725ecc41798b45ed97"
    assert obj["n_items"] == 10_000 and obj["n_classes"] == 100


def test_data_fetch_builtin_prints_its_path(capsys):
    code, out, _ = run_cli(capsys, "data", "fetch", "digits-logreg")
    assert code == 0 and out.strip() == str(registry.resolve_path("digits-logreg"))


@pytest.fixture
def remote_zoo(tmp_path, monkeypatch):
    """A temporary zoo with one set downloadable from a file:// URL."""
    text = "item_id,label,p_a,p_b\nx,a,0.8,0.2\ny,b,0.4,0.6\n"
    (tmp_path / "remote").mkdir()
    src = tmp_path / "remote" / "set.csv"
    src.write_text(text)
    card = {"name": "far", "task": "a far set", "format": "pbassess-csv", "classes": 2, "n_items": 2,
            "provenance": "p", "citation": "c", "license": "MIT",
            "source": {"url": src.as_uri(), "sha256": hashlib.sha256(text.encode()).hexdigest(), "mirror_path": "far.csv"}}
    (tmp_path / "zoo" / "far").mkdir(parents=True)
    (tmp_path / "zoo" / "far" / "card.json").write_text(json.dumps(card))
    monkeypatch.setenv("PBASSESS_MODELS_DIR", str(tmp_path / "zoo"))
    monkeypatch.setenv("PBASSESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PBASSESS_DATA_DIR", raising=False)
    registry.registered_cards.cache_clear()
    yield tmp_path
    registry.registered_cards.cache_clear()


def test_data_fetch_downloads_and_verifies(capsys, remote_zoo):
    assert run_json(capsys, "data", "list")["models"][0]["where"] == "download"
    obj = run_json(capsys, "data", "fetch", "far")
    assert obj == {"name": "far", "path": str(remote_zoo / "cache" / "far.csv"), "where": "cache", "verified": True}
    assert run_json(capsys, "data", "list")["models"][0]["where"] == "cache"
    (remote_zoo / "cache" / "far.csv").write_text("item_id,label,p_a,p_b\nx,a,0.7,0.3\n")  # corrupt the cached copy
    assert_one_line_error(capsys, "data", "fetch", "far", match="checksum does not match")


def test_data_errors(capsys):
    assert_one_line_error(capsys, "data", "show", "nope", match="unknown data set 'nope'")
    assert_one_line_error(capsys, "data", "fetch", "nope", match="unknown data set 'nope'")


# ------------------------------------------------------------------------------ assess: JSON contract
def test_assess_accuracy_json_is_the_results_to_json(capsys):
    from pbassess.assess.accuracy import assess_accuracy

    obj = run_json(capsys, "assess", "digits-logreg", "--metric", "accuracy", "--seed", "3")
    assert CONTRACT["accuracy"] <= set(obj)
    assert obj["metric"] == "accuracy" and obj["classes"] == [str(k) for k in range(10)]
    assert sum(obj["n"]) == 899 and obj["hdi_prob"] == 0.95
    for key in ("n", "correct", "mean", "hdi", "p_lowest"):
        assert len(obj[key]) == 10, key
    assert all(lo <= m <= hi for m, (lo, hi) in zip(obj["mean"], obj["hdi"], strict=True))
    assert sum(obj["p_lowest"]) == pytest.approx(1.0)
    expected = json.loads(json.dumps(assess_accuracy(load_data(), seed=3).to_json()))
    assert obj.pop("seed") == 3 and obj == expected


def test_assess_calibration_json(capsys):
    obj = run_json(capsys, "assess", "digits-logreg", "--metric", "calibration", "--bins", "5", "--seed", "1")
    assert CONTRACT["calibration"] <= set(obj) and obj["metric"] == "calibration"
    assert len(obj["bins"]["edges"]) == 6 and sum(obj["bins"]["n"]) == 899
    lo, hi = obj["ece"]["hdi"]
    assert 0 <= lo <= obj["ece"]["mean"] <= hi <= 1
    assert len(obj["classwise_ece"]["mean"]) == 10


def test_assess_cost_json(capsys):
    obj = run_json(capsys, "assess", "digits-logreg", "--metric", "cost", "--seed", "1")
    assert CONTRACT["cost"] <= set(obj) and obj["metric"] == "cost"
    assert obj["classes"] == [str(k) for k in range(10)]


def test_assess_cost_from_a_csv_matrix(capsys, tmp_path):
    # Costs are linear in the cost matrix: with the same seed (same draws), doubling every cost
    # doubles every posterior mean exactly.
    k = 10
    zero_one = 1.0 - np.eye(k)
    f = tmp_path / "double.csv"
    np.savetxt(f, 2 * zero_one, delimiter=",", fmt="%g")
    base = run_json(capsys, "assess", "digits-logreg", "--metric", "cost", "--seed", "5")
    double = run_json(capsys, "assess", "digits-logreg", "--metric", "cost", "--seed", "5", "--cost", str(f))
    np.testing.assert_allclose(np.asarray(double["mean"], float), 2 * np.asarray(base["mean"], float), rtol=1e-9)


@pytest.mark.filterwarnings("ignore:MCMC diagnostics:UserWarning")  # 4 x 100 draws: R-hat ~1.04 is expected
def test_assess_mcmc_engine_agrees_with_the_conjugate_one(capsys):
    mcmc = run_json(capsys, "assess", "digits-logreg", "--engine", "mcmc", "--draws", "100", "--seed", "2")
    exact = run_json(capsys, "assess", "digits-logreg", "--seed", "2")
    assert mcmc["engine"] == "mcmc" and exact["engine"] == "conjugate"
    # Posterior sd of each class accuracy is at most ~0.04 here; 4 chains x 100 draws give an
    # effective sample of at least ~100, so the Monte Carlo error of a mean is <= 0.004: 0.02 is 5 se.
    np.testing.assert_allclose(mcmc["mean"], exact["mean"], atol=0.02)


def test_assess_binary_scores_with_models_and_threshold(capsys, tmp_path):
    f = tmp_path / "fair.csv"
    f.write_text(",sex,y,score_A,score_B\n0,F,1,0.9,0.4\n1,M,0,0.7,0.1\n2,F,0,0.2,0.5\n3,M,1,0.6,0.45\n")
    obj = run_json(capsys, "assess", str(f), "--models", "score_B", "--seed", "0")
    assert obj["classes"] == ["0", "1"] and sum(obj["n"]) == 4
    assert obj["n"] == [4, 0] and obj["correct"] == [2, 0]  # score_B = 0.5 is a tie: negative (score > 0.5)
    obj = run_json(capsys, "assess", str(f), "--models", "score_B", "--ties", "positive", "--seed", "0")
    assert obj["n"] == [3, 1] and obj["correct"] == [1, 0]  # ties positive: only item 2 is positive
    obj = run_json(capsys, "assess", str(f), "--models", "B", "--threshold", "0.42", "--seed", "0")
    assert obj["n"] == [2, 2] and obj["correct"] == [1, 1]
    assert_one_line_error(capsys, "assess", str(f), match="several classifiers")


def test_assess_registered_binary_set_with_models(capsys, shared_data_dir):
    obj = run_json(capsys, "assess", "adult-sex", "--models", "score_RandomForest", "--seed", "0")
    assert sum(obj["n"]) == 10_054


# ------------------------------------------------------------------------------ assess: errors
def test_assess_unknown_data_name(capsys):
    assert_one_line_error(capsys, "assess", "no-such-set", match="neither a file nor a registered data set")


def test_assess_bad_bins(capsys):
    assert_one_line_error(capsys, "assess", "digits-logreg", "--metric", "calibration", "--bins", "0",
                          match="--bins must be at least 1")
    assert_one_line_error(capsys, "assess", "digits-logreg", "--metric", "calibration", "--bins", "ten",
                          match="--bins must be a number")


def test_assess_informed_cost_prior_on_top1_data(capsys, tmp_path):
    f = tmp_path / "top1.txt"
    f.write_text("Index Correct Predicted Confidence\n0 cat dog 0.9\n1 dog dog 0.8\n2 cat cat 0.7\n")
    assert_one_line_error(capsys, "assess", str(f), "--metric", "cost", "--prior", "informed",
                          match="--prior informed")


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["--metric", "precision"], "argument --metric: invalid choice: 'precision'"),
        (["--engine", "vi"], "--inference must be conjugate or nuts for this command"),
        (["--prior", "flat"], "--prior must be one of uniform, informed"),
        (["--pseudocount", "0"], "--pseudocount must be positive"),
        (["--draws", "0"], "--draws must be at least 1"),
        (["--draws", "2.5"], "--draws must be an integer"),
        (["--seed", "-1"], "--seed must be a non-negative integer"),
        (["--seeds", "3"], "unrecognized arguments: --seeds 3"),
        (["--se", "3"], "unrecognized arguments: --se 3"),
        (["--tune", "100"], "--tune applies to --inference nuts"),
        (["--cost", "people"], "--cost-matrix applies only to --metric cost"),
        (["--metric", "calibration", "--prior", "informed"], "--prior informed applies to accuracy and cost"),
        (["--models", "score_LR"], "--models applies only to binary-score CSV data"),
        (["--threshold", "1.5"], "--threshold must be strictly between 0 and 1"),
        (["--by", "sex"], "group column 'sex' not found"),
        (["--metric", "cost", "--cost", "nope.csv"], "--cost-matrix: file not found"),
    ],
)
def test_assess_bad_options(capsys, argv, match):
    assert_one_line_error(capsys, "assess", "digits-logreg", *argv, match=match)


def test_assess_cost_matrix_of_the_wrong_shape(capsys, tmp_path):
    f = tmp_path / "cost.csv"
    np.savetxt(f, 1 - np.eye(3), delimiter=",")
    assert_one_line_error(capsys, "assess", "digits-logreg", "--metric", "cost", "--cost", str(f),
                          match="is 3 x 3, expected 10 x 10")


def test_assess_a_broken_file(capsys, tmp_path):
    f = tmp_path / "broken.csv"
    f.write_text("item_id,label,p_a,p_b\nx,a,0.8,0.5\n")
    assert_one_line_error(capsys, "assess", str(f), match="row 0 sums to 1.3")


def test_read_cost_matrix_reorders_named_rows_and_columns(tmp_path):
    from pbassess.cli.assess import read_cost_matrix
    from pbassess.errors import ConfigError

    f = tmp_path / "c.csv"
    f.write_text("true->,c,a,b\nb,1,2,0\na,3,0,4\nc,0,5,6\n")
    m = read_cost_matrix(f, ("a", "b", "c"))
    # row a (predicted a): true c 3, a 0, b 4 -> [0, 4, 3]; row b: [2, 0, 1]; row c: [5, 6, 0]
    assert m.tolist() == [[0, 4, 3], [2, 0, 1], [5, 6, 0]]
    f.write_text("a,b\n0,1\n2,0\n")
    # columns named (true a, true b), rows in class order (predicted b, predicted a)
    assert read_cost_matrix(f, ("b", "a")).tolist() == [[1, 0], [0, 2]]
    f.write_text("0,1\n-1,0\n")
    with pytest.raises(ConfigError, match="non-negative"):
        read_cost_matrix(f, ("a", "b"))
    f.write_text("x,y\n0,1\n1,0\n")
    with pytest.raises(ConfigError, match="column name 'x'"):
        read_cost_matrix(f, ("a", "b"))


# ------------------------------------------------------------------------------ assess: files
def test_assess_writes_figures_and_netcdf(capsys, tmp_path):
    from pbassess.results import AssessmentResult

    out = tmp_path / "acc"
    code, stdout, err = run_cli(capsys, "assess", "digits-logreg", "--seed", "4", "--out", str(out))
    assert code == 0, err
    assert "The least accurate predicted class is" in stdout and f"to {out}" in stdout
    assert (out / "accuracy.nc").is_file()
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert "accuracy.png" in pngs and len(pngs) >= 2
    for png in out.glob("*.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    loaded = AssessmentResult.load(out / "accuracy.nc")
    assert loaded.metric == "accuracy" and loaded.sentence() in stdout


@pytest.mark.parametrize("metric", ["calibration", "cost"])
def test_assess_other_metrics_write_files(capsys, tmp_path, metric):
    code, stdout, err = run_cli(capsys, "assess", "digits-logreg", "--metric", metric, "--seed", "0",
                                "--draws", "500", "--out", str(tmp_path))
    assert code == 0, err
    assert (tmp_path / f"{metric}.nc").is_file() and list(tmp_path.glob(f"{metric}*.png"))


def test_assess_writes_nothing_without_out(capsys, tmp_path, monkeypatch):
    """Like every command: files only with --out DIR (then the .nc, the figures and report.md)."""
    monkeypatch.chdir(tmp_path)
    code, stdout, err = run_cli(capsys, "assess", "digits-shift", "--by", "environment", "--draws", "500")
    assert code == 0, err
    assert not list(tmp_path.iterdir())
    assert "gaussian-noise-5" in stdout and stdout.strip().splitlines()[-1].startswith("seed ")
    code, stdout, err = run_cli(capsys, "assess", "digits-shift", "--by", "environment", "--draws", "500",
                                "--out", "rep")
    assert code == 0 and (tmp_path / "rep" / "accuracy.nc").is_file() and (tmp_path / "rep" / "report.md").is_file()


def test_assess_json_writes_nothing_without_out(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run_json(capsys, "assess", "digits-logreg", "--draws", "200")
    assert not (tmp_path / "reports").exists()


# ------------------------------------------------------------------------------ demo
def test_demo_writes_the_report(capsys, tmp_path):
    from pbassess.results import AssessmentResult

    out = tmp_path / "demo"
    code, stdout, err = run_cli(capsys, "demo", "--out", str(out))
    assert code == 0, err
    report = out / "report.md"
    assert stdout.strip().splitlines()[-2] == f"report written to {report}"
    seed = stdout.strip().splitlines()[-1].removeprefix("seed ")  # a fresh seed, recorded
    assert f"seed {seed}" in report.read_text()
    text = report.read_text()
    for metric in ("accuracy", "calibration", "cost"):
        result = AssessmentResult.load(out / f"{metric}.nc")
        assert result.sentence() in stdout and result.sentence() in text
    links = [line.split("](", 1)[1].rstrip(")") for line in text.splitlines() if line.startswith("![")]
    assert len(links) >= 3 and all((out / link).is_file() for link in links)
    assert text.count("| --- |") >= 3  # markdown tables
    # Seeded: a second run with the recorded seed gives the same numbers.
    code, stdout2, _ = run_cli(capsys, "demo", "--out", str(tmp_path / "again"), "--seed", seed)
    assert stdout2.replace(str(tmp_path / "again"), str(out)) == stdout


def test_assess_normalize_rescales_rows_that_do_not_sum_to_one(tmp_path, capsys):
    import json as _json

    from pbassess.cli import main as _main

    bad = tmp_path / "unnormalised.csv"
    bad.write_text("item_id,label,p_a,p_b\nx,a,2,2\ny,b,1,3\nz,a,3,1\n")
    assert _main(["assess", str(bad), "--json"]) == 2
    assert "--normalize" in capsys.readouterr().err
    assert _main(["assess", str(bad), "--json", "--normalize"]) == 0
    out = _json.loads(capsys.readouterr().out)
    assert out["n"] == [2, 1]
