"""The calibration keys of `pbassess assess --metric calibration --json`, through the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pbassess.calibration import (
    adaptive_calibration_error,
    debiased_ece,
    max_calibration_error,
    rms_calibration_error,
    smooth_ece,
)
from pbassess.calibration.extras import frequentist_from_counts
from pbassess.cli import main


def _nixon_ace(confidence, correct, n_ranges):
    """Nixon et al. (2019), written out independently: sort by confidence, cut at floor(r N / R)."""
    order = np.argsort(confidence, kind="mergesort")
    c, y = np.asarray(confidence, float)[order], np.asarray(correct, float)[order]
    cuts = [int(np.floor(r * c.size / n_ranges)) for r in range(n_ranges + 1)]
    return float(np.mean([abs(y[a:b].mean() - c[a:b].mean()) for a, b in zip(cuts[:-1], cuts[1:], strict=True)]))


def test_ace_is_nixon_et_al_on_svhn(svhn):
    """Issue 20: "ace" means Nixon et al.'s adaptive ECE: 0.0109 on SVHN with 15 ranges (netcal's: 0.066)."""
    from pbassess.calibration.extras import nixon_ace

    out = nixon_ace(svhn.confidence, svhn.correct, 15)
    # pbassess splits the remainder items as numpy.array_split, the independent version at floor(r N / R):
    # each of the 15 boundaries moves by at most one item of ~1,735, so each range's gap by < 2 / 1,735
    assert out["frequentist"] == pytest.approx(_nixon_ace(svhn.confidence, svhn.correct, 15), abs=2 / 1735)
    assert round(out["frequentist"], 4) == 0.0109
    assert round(adaptive_calibration_error(svhn.confidence, svhn.correct, 15, equal_count=False), 3) == 0.066
    assert out["hdi"][0] <= out["frequentist"] <= out["hdi"][1]


def test_nixon_ace_against_the_independent_version(rng):
    s = np.round(rng.uniform(0.3, 1.0, 997), 3)  # ties and a remainder (997 = 10 * 99 + 7)
    y = rng.uniform(size=997) < s - 0.1
    from pbassess.calibration.extras import nixon_ace

    out = nixon_ace(s, y, 10, n_draws=4000, seed=1)
    # boundaries differ by at most one item of ~99: each range's gap by < 2 / 99
    assert out["frequentist"] == pytest.approx(_nixon_ace(s, y, 10), abs=2 / 99)
    assert out["frequentist"] == pytest.approx(adaptive_calibration_error(s, y, 10))
    # with 997 labels the Beta posteriors' mean gap is near the frequentist value (prior pseudocount 2 per ~100)
    assert out["mean"] == pytest.approx(out["frequentist"], abs=0.02)


def test_frequentist_from_counts_equals_the_item_level_metrics(rng):
    s = rng.uniform(0.2, 1.0, 3000)
    y = rng.uniform(size=3000) < s - 0.05
    from pbassess.calibration.binning import bin_sums, equal_width_edges

    b = bin_sums(s, y, equal_width_edges(10))
    out = frequentist_from_counts(b.n, b.outcome_sum, b.score_sum)
    assert out["mce"] == pytest.approx(max_calibration_error(s, y, 10))
    assert out["rmsce"] == pytest.approx(rms_calibration_error(s, y, 10))
    assert out["mean_bin_gap"] == pytest.approx(adaptive_calibration_error(s, y, 10, equal_count=False))
    assert out["debiased_l1"] == pytest.approx(debiased_ece(s, y, 10, p=1))
    assert out["debiased_l2"] == pytest.approx(debiased_ece(s, y, 10, p=2))


def test_assess_calibration_json_gains_the_issue_keys(capsys):
    assert main(["assess", "digits-logreg", "--metric", "calibration", "--seed", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("mce", "mean_bin_gap", "rmsce", "ace"):
        entry = out[key]
        assert {"frequentist", "mean", "hdi"} <= set(entry)
        assert entry["hdi"][0] <= entry["mean"] <= entry["hdi"][1]
    for key in ("debiased_ece", "smooth_ece", "plugin_ece"):
        assert "frequentist" in out[key]
    assert set(out["p_below"]) == {"0.01", "0.02", "0.05"}
    p = [out["p_below"][k] for k in ("0.01", "0.02", "0.05")]
    assert all(0 <= v <= 1 for v in p) and p == sorted(p)
    # the frequentist values are the item-level metrics of the labeled items (10 equal-width bins)
    from pbassess import load_data

    data = load_data("digits-logreg")
    assert out["mce"]["frequentist"] == pytest.approx(max_calibration_error(data.confidence, data.correct, 10))
    assert out["rmsce"]["frequentist"] == pytest.approx(rms_calibration_error(data.confidence, data.correct, 10))
    assert out["smooth_ece"]["frequentist"] == pytest.approx(smooth_ece(data.confidence, data.correct))
    assert out["debiased_ece"]["frequentist"] == pytest.approx(debiased_ece(data.confidence, data.correct, 10))
    # ace is Nixon et al.'s (10 equal-count ranges), the old meaning lives on as mean_bin_gap
    assert out["ace"]["frequentist"] == pytest.approx(adaptive_calibration_error(data.confidence, data.correct, 10))
    assert out["ace"]["frequentist"] == pytest.approx(_nixon_ace(data.confidence, data.correct, 10), abs=2 / 89)
    assert out["mean_bin_gap"]["frequentist"] == pytest.approx(
        adaptive_calibration_error(data.confidence, data.correct, 10, equal_count=False))
    # P(ECE < eps) comes with the operating characteristics of "P > 0.9" at these labels
    oc = out["p_below_operating"]
    assert oc["n_labeled"] == sum(out["bins"]["n"])
    assert set(oc["by_eps"]) == set(out["p_below"]) and oc["reps"] >= 20
    for entry in oc["by_eps"].values():
        assert 0 <= entry["false_calibrated_rate"] <= 1 and 0 <= entry["power"] <= 1
    # the digits model is overconfident (ECE ~0.04 from 899 labels): never "calibrated"
    assert out["calibrated"] is False and out["p_below"]["0.01"] < 0.05
    assert out["ece"]["frequentist"] == pytest.approx(out["plugin_ece"]["frequentist"])
    assert np.isfinite(out["plugin_ece"]["value"])


@pytest.mark.slow
def test_full_vector_keys_on_svhn(shared_data_dir):
    from pbassess import load_data
    from pbassess.assess.calibration import assess_calibration
    from pbassess.calibration import classwise_ece, marginal_calibration_error, top_label_ece

    p = load_data("svhn-resnet")
    out = assess_calibration(p, seed=0, classwise=False).to_json()
    assert out["classwise_ece_one_vs_rest"]["frequentist"] == pytest.approx(classwise_ece(p.probs, p.labels, 10))
    assert out["marginal_calibration_error"]["frequentist"] == pytest.approx(
        marginal_calibration_error(p.probs, p.labels, 10))
    assert out["top_label_ece"]["frequentist"] == pytest.approx(
        top_label_ece(p.predicted, p.confidence, p.correct, p.n_classes, 10))
    # SVHN's ResNet: ECE ~0.011 from 26,032 labels -> P(ECE < 0.02) high, P(ECE < 0.01) not
    assert out["p_below"]["0.02"] > 0.9 and out["p_below"]["0.01"] < 0.5
    assert out["calibrated"] is True


def test_item_level_keys_survive_save_and_load(tmp_path, monkeypatch):
    from pbassess.calibration import posterior

    monkeypatch.setattr(posterior, "OC_REPS", 4)  # the operating characteristics are tested above
    from pbassess import load_data
    from pbassess.assess.calibration import assess_calibration
    from pbassess.results.base import AssessmentResult

    res = assess_calibration(load_data("digits-logreg"), bins=5, seed=0)
    before = res.to_json()
    loaded = AssessmentResult.load(res.save(tmp_path / "cal.nc"))
    after = loaded.to_json()
    for key in ("smooth_ece", "top_label_ece", "classwise_ece_one_vs_rest", "mce", "p_below", "plugin_ece", "ace",
                "mean_bin_gap", "p_below_operating"):
        assert after[key] == before[key], key
