"""`pbassess estimate` through the command line."""

import json
import os

import numpy as np
import pytest

from pbassess.cli import main

DATA = os.environ.get("PBASSESS_DATA_DIR")


def _run(capsys, argv):
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_estimate_json_contract_on_builtin_data(capsys):
    code, out, _ = _run(capsys, ["estimate", "digits-logreg", "--labels", "150", "--seed", "3", "--json"])
    assert code == 0
    obj = json.loads(out)
    assert obj["metric"] == "accuracy" and obj["groups"] == ["all"]
    assert set(obj["methods"]) == {"classical", "wilson", "ppi", "bayes"}
    assert obj["n_labeled"] == 150 and obj["n_labeled"] + obj["n_unlabeled"] == 899
    for m in obj["methods"].values():
        (lo, hi), = m["ci"]
        assert lo <= m["mean"][0] <= hi
    # the classical estimate is the plain mean of the kept labels: recompute it independently
    from pbassess import load_data
    from pbassess.cli.estimate import hide_labels

    kept = hide_labels(load_data("digits-logreg"), 150, seed=3)
    assert obj["methods"]["classical"]["mean"][0] == pytest.approx(kept.correct[kept.labeled].mean())
    again = json.loads(_run(capsys, ["estimate", "digits-logreg", "--labels", "150", "--seed", "3", "--json"])[1])
    assert again == obj  # seeded


def test_estimate_by_predicted_and_text_output(capsys):
    code, out, _ = _run(capsys, ["estimate", "digits-logreg", "--by", "predicted", "--method", "ppi",
                                 "--labels", "400", "--seed", "0", "--json"])
    obj = json.loads(out)
    assert code == 0 and len(obj["groups"]) == 10 and list(obj["methods"]) == ["ppi"]
    assert len(obj["methods"]["ppi"]["ci"]) == 10
    code, out, _ = _run(capsys, ["estimate", "digits-logreg", "--labels", "100", "--method", "classical,ppi"])
    assert code == 0 and "by ppi, from 100 labels" in out and "estimator" in out


@pytest.mark.parametrize("argv, message", [
    (["--labels", "0"], "--labels must be between 1"),
    (["--method", "magic"], "unknown estimation method"),
    (["--by", "nosuch"], "not found"),
    (["--metric", "brier", "--method", "bayes"], "Beta-binomial"),
])
def test_estimate_bad_input_is_one_line(capsys, argv, message):
    code, out, err = _run(capsys, ["estimate", "digits-logreg", *argv])
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1


@pytest.mark.skipif(not DATA or not os.path.isdir(os.path.join(DATA or "", "fairness")), reason="no data mirror")
def test_estimate_fairness_groups_cover_the_truth(capsys):
    code, out, _ = _run(capsys, ["estimate", "adult-sex", "--by", "sex", "--models", "score_LR", "--labels", "1000",
                                 "--seed", "1", "--json"])
    obj = json.loads(out)
    from pbassess import load_data

    full = load_data("adult-sex", model="score_LR")
    sex = full.group("sex")
    truth = [full.correct[sex == g].mean() for g in obj["groups"]]
    for name in ("classical", "ppi", "bayes"):
        ci = np.array(obj["methods"][name]["ci"])
        assert np.all((ci[:, 0] <= truth) & (np.array(truth) <= ci[:, 1])), name
