"""``pbassess shift`` through the command line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pbassess.cli import main


def _run(capsys, *argv):
    code = main(["shift", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_json_per_level_on_digits_shift(capsys):
    code, out, _ = _run(capsys, "digits-shift", "--by", "environment", "--draws", "200", "--seed", "0", "--json")
    assert code == 0
    rows = json.loads(out)
    assert [r["level"] for r in rows][:2] == ["clean", "gaussian-noise-1"] and len(rows) == 6
    clean = rows[0]
    # the card's published numbers for the clean environment
    assert clean["n"] == 899 and clean["accuracy"] == pytest.approx(0.9177, abs=5e-5)
    assert 0.5 < clean["auroc_ood"] <= 1 and len(clean["accuracy_hdi"]) == 2
    assert clean["ece_hdi"][0] < clean["ece_hdi"][1]
    # calibration worsens with the noise in this set (accuracy 0.92 -> 0.52, confidence 0.96 -> 0.83)
    assert rows[-1]["ece"] > rows[0]["ece"] + 0.2


def test_without_by_the_set_is_one_level(capsys):
    code, out, _ = _run(capsys, "digits-logreg", "--draws", "100", "--json")
    rows = json.loads(out)
    assert code == 0 and len(rows) == 1 and rows[0]["level"] == "all" and "auroc_ood" not in rows[0]


def test_binary_score_models_are_score_columns(capsys, tmp_path):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, size=200)
    good = np.clip(y * 0.6 + 0.2 + rng.normal(0, 0.1, 200), 0.01, 0.99)
    bad = rng.uniform(0.01, 0.99, 200)
    lines = [",site,y,score_good,score_bad"] + [f"{i},{'ab'[i % 2]},{y[i]},{good[i]:.3f},{bad[i]:.3f}"
                                                 for i in range(200)]
    f = tmp_path / "scores.csv"
    f.write_text("\n".join(lines) + "\n")
    code, out, _ = _run(capsys, str(f), "--by", "site", "--draws", "0", "--json")
    rows = json.loads(out)
    assert code == 0 and {r["model"] for r in rows} == {"good", "bad"} and len(rows) == 4
    code, out, _ = _run(capsys, str(f), "--models", "good", "--draws", "0", "--json")
    rows = json.loads(out)
    assert [r["model"] for r in rows] == ["good"] and rows[0]["accuracy"] > 0.9


def test_text_output_has_the_table_and_worsening(capsys):
    code, out, _ = _run(capsys, "digits-shift", "--by", "environment", "--draws", "200", "--seed", "1")
    assert code == 0 and "accuracy" in out.splitlines()[0] and "P(ECE worsens" in out


@pytest.mark.parametrize("argv,message", [
    (["digits-shift", "--by", "nope"], "--by column 'nope' not found"),
    (["digits-shift", "--ood", "environment"], "COLUMN=VALUE"),
    (["digits-shift", "--draws", "x"], "--draws must be a number"),
    (["digits-shift", "--ci-prob", "1.5"], "--ci-prob is out of range"),
    (["no-such-data"], "neither a file nor a registered"),
])
def test_bad_input_exits_2_with_one_line(capsys, argv, message):
    code, _, err = _run(capsys, *argv)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_digits_corruptions_models_are_method_values(capsys):
    code, out, _ = _run(capsys, "digits-corruptions", "--by", "corruption", "--models", "vanilla,ensemble",
                        "--draws", "100", "--seed", "0", "--json")
    rows = json.loads(out)
    assert code == 0 and len(rows) == 7 * 2  # none + 6 corruptions (OOD set aside), 2 methods
    assert {r["model"] for r in rows} == {"vanilla", "ensemble"}
    assert {r["level"] for r in rows} == {"none", "gaussian-noise", "gaussian-blur", "rotation", "translation",
                                          "contrast", "salt-and-pepper"}
    none = [r for r in rows if r["level"] == "none"]
    assert all(r["n"] == 597 and 0 <= r["auroc_ood"] <= 1 for r in none)
    code, _, err = _run(capsys, "digits-corruptions", "--models", "nope", "--draws", "0")
    assert code == 2 and "model 'nope' not found" in err


def test_a_zarr_store_gives_the_same_table_as_the_file(capsys, tmp_path):
    """Issue 23: shift read Parquet/Zarr DATA like every other command (it refused any folder)."""
    import pbassess as pb
    from pbassess.data.lazy import write_zarr

    write_zarr(pb.load_data("digits-shift"), tmp_path / "shift.zarr", rows_per_chunk=2000)
    outputs = []
    for data in ("digits-shift", str(tmp_path / "shift.zarr")):
        assert main(["shift", data, "--by", "environment", "--seed", "1", "--json"]) == 0
        outputs.append(json.loads(capsys.readouterr().out))
    assert outputs[0] == outputs[1]
    (tmp_path / "empty").mkdir()
    assert main(["shift", str(tmp_path / "empty"), "--by", "environment"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "empty" in err[0]
