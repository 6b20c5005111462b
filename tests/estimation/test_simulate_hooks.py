"""`pbassess simulate --prior adaptive` and `--target estimation --strategy uncertainty` (the hooks)."""

import json

from pbassess.cli import main


def test_simulate_estimation_uncertainty(capsys):
    code = main(["simulate", "digits-logreg", "--target", "estimation", "--strategy", "random-item,uncertainty",
                 "--runs", "40", "--budget", "150", "--seed", "2", "--json"])
    obj = json.loads(capsys.readouterr().out)
    assert code == 0 and obj["target"] == "estimation"
    unc, rnd = obj["strategies"]["uncertainty"], obj["strategies"]["random-item"]
    assert unc["budget"] == [150] and abs(unc["labels"][0] - 150) < 20
    # 40 runs: coverage of a 95% interval is at least 0.8 unless something is broken (MC sd 0.035)
    assert unc["coverage"][0] >= 0.8 and rnd["coverage"][0] >= 0.8
    # digits-logreg is very confident on most items: labels spent on the unsure ones pay off
    assert unc["width"][0] < rnd["width"][0]


def test_simulate_adaptive_prior(capsys):
    code = main(["simulate", "digits-logreg", "--strategy", "ts", "--prior", "adaptive", "--runs", "4",
                 "--log-every", "100", "--seed", "0", "--json"])
    obj = json.loads(capsys.readouterr().out)
    assert code == 0 and obj["prior"] == "adaptive"
    ts = obj["strategies"]["ts"]
    assert len(ts["mrr"]) == 8 and ts["mrr"][-1] == 1.0  # all 899 items minus 99: the truth is found


def test_simulate_adaptive_rejects_other_strategies(capsys):
    code = main(["simulate", "digits-logreg", "--strategy", "bayes-ucb", "--prior", "adaptive", "--runs", "2"])
    err = capsys.readouterr().err
    assert code == 2 and "Thompson sampling" in err and len(err.strip().splitlines()) == 1


def test_uncertainty_is_only_for_estimation(capsys):
    code = main(["simulate", "digits-logreg", "--target", "estimation", "--strategy", "uncertainty,ts", "--runs", "2"])
    assert code == 2
    capsys.readouterr()
