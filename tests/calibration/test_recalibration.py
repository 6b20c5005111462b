"""Recalibration maps against scikit-learn, betacal and brute force; before/after evaluation; the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from betacal import BetaCalibration
from scipy.special import expit, log_softmax, logit, softmax
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression

from pbassess.calibration.evaluation import recalibrate
from pbassess.calibration.recalibration import (
    apply_top1,
    fit_beta,
    fit_histogram,
    fit_isotonic,
    fit_platt,
    fit_temperature,
)
from pbassess.cli import main
from pbassess.errors import ConfigError


@pytest.fixture
def miscalibrated(rng):
    s = rng.uniform(0.3, 1.0, 1500)
    y = rng.uniform(size=1500) < expit(0.6 * logit(s) - 0.3)
    return s, y


def test_platt_matches_sklearn_unregularised_logistic_regression(miscalibrated):
    s, y = miscalibrated
    r = fit_platt(s, y)
    lr = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000).fit(logit(s)[:, None], y)
    assert r.params["a"] == pytest.approx(lr.coef_[0, 0], abs=1e-6)
    assert r.params["b"] == pytest.approx(lr.intercept_[0], abs=1e-6)
    np.testing.assert_allclose(r.apply(s), lr.predict_proba(logit(s)[:, None])[:, 1], atol=1e-7)


def test_isotonic_matches_sklearn(miscalibrated, rng):
    s, y = miscalibrated
    s = np.round(s, 2)  # ties, as in real confidences
    ours = fit_isotonic(s, y)
    ref = IsotonicRegression(out_of_bounds="clip", y_min=0, y_max=1).fit(s, y)
    new = np.concatenate([rng.uniform(0.0, 1.0, 500), s])
    np.testing.assert_allclose(ours.apply(new), ref.predict(new), atol=1e-12)


def test_beta_calibration_matches_betacal(miscalibrated):
    s, y = miscalibrated
    ours = fit_beta(s, y)
    ref = BetaCalibration(parameters="abm").fit(s, y)
    a, b, _ = ref.calibrator_.map_
    # betacal fits with LogisticRegression(C=99999999999) (lbfgs, tol 1e-4): agreement to its tolerance
    assert ours.params["a"] == pytest.approx(a, abs=2e-3)
    assert ours.params["b"] == pytest.approx(b, abs=2e-3)
    np.testing.assert_allclose(ours.apply(s), ref.predict(s), atol=5e-4)


def test_beta_calibration_drops_a_negative_coefficient_like_betacal(rng):
    s = rng.uniform(0.01, 0.99, 2000)
    y = rng.uniform(size=2000) < 0.6 + 0.3 * np.log(s) * 0  # outcome unrelated to s -> one coefficient < 0 or tiny
    y = y | (s > 0.97)
    ours = fit_beta(s, y)
    ref = BetaCalibration(parameters="abm").fit(s, y)
    assert min(ours.params["a"], ours.params["b"]) >= 0
    np.testing.assert_allclose(ours.apply(s), ref.predict(s), atol=2e-3)


def test_temperature_matches_brute_force(rng):
    logits = rng.normal(size=(800, 5)) * 3
    y = np.array([rng.choice(5, p=softmax(row / 2.0)) for row in logits])
    probs = softmax(logits, axis=1)
    t = fit_temperature(probs, y).params["temperature"]
    def nll(g):
        return -np.mean(log_softmax(np.log(probs) / g, axis=1)[np.arange(800), y])

    coarse = np.linspace(0.5, 5.0, 451)  # step 0.01, then step 0.0002 around the best
    best = coarse[int(np.argmin([nll(g) for g in coarse]))]
    fine = np.linspace(best - 0.01, best + 0.01, 101)
    assert t == pytest.approx(fine[int(np.argmin([nll(g) for g in fine]))], abs=5e-4)
    assert t == pytest.approx(2.0, abs=0.25)  # the truth, within sampling error of 800 labels


def test_histogram_binning_is_the_bin_accuracy():
    s = np.array([0.05, 0.15, 0.12, 0.55, 0.58, 0.95])
    y = np.array([0, 1, 1, 1, 0, 1])
    r = fit_histogram(s, y, bins=10)
    np.testing.assert_allclose(r.apply([0.11, 0.56, 0.99, 0.35]), [2 / 2, 1 / 2, 1.0, 0.35])


def test_apply_top1_keeps_rows_summing_to_one(rng):
    probs = softmax(rng.normal(size=(200, 4)) * 2, axis=1)
    r = fit_platt(probs.max(1), rng.uniform(size=200) < 0.6)
    out = apply_top1(r, probs)
    np.testing.assert_allclose(out.sum(1), 1.0, atol=1e-12)
    np.testing.assert_allclose(out[np.arange(200), probs.argmax(1)], r.apply(probs.max(1)))
    others = np.delete(out, probs.argmax(1)[:, None] + 4 * np.arange(200)[:, None], axis=None).reshape(200, 3)
    ratio = others / np.delete(probs, probs.argmax(1)[:, None] + 4 * np.arange(200)[:, None], axis=None).reshape(200, 3)
    np.testing.assert_allclose(ratio, ratio[:, :1] * np.ones((1, 3)))  # the other classes keep their proportions


def test_recalibrate_improves_a_miscalibrated_model_and_reports_posteriors():
    from pbassess import Predictions

    rng = np.random.default_rng(5)
    conf = rng.uniform(0.5, 1.0, 4000)
    truth = np.where(rng.uniform(size=4000) < conf - 0.15, "a", "b")
    p = Predictions.from_top1(["a"] * 4000, conf, truth, classes=["a", "b"])
    for method in ("platt", "histogram", "isotonic", "beta"):
        out = recalibrate(p, method, seed=2, n_draws=1000)
        assert out["scoring"] == "top-label" and out["n_fit"] == out["n_eval"] == 2000
        assert out["before"]["ece"] == pytest.approx(0.15, abs=0.02)  # the true ECE
        assert out["after"]["ece"] < 0.04
        assert out["p_improved"]["nll"] > 0.99 and out["p_improved"]["brier"] > 0.99
        lo, hi = out["posterior"]["after"]["nll"]["hdi"]
        assert lo < out["after"]["nll"] < hi


def test_recalibrate_temperature_on_svhn(shared_data_dir):
    from pbassess import load_data

    out = recalibrate(load_data("svhn-resnet"), "temperature", seed=0, n_draws=1000)
    assert out["scoring"] == "multiclass" and out["params"]["temperature"] > 1  # SVHN's ResNet is overconfident
    assert out["after"]["nll"] < out["before"]["nll"]


def test_cli_recalibrate_json_and_errors(capsys):
    assert main(["recalibrate", "digits-logreg", "--method", "beta", "--seed", "3", "--draws", "500", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "beta" and set(out["params"]) == {"a", "b", "c"}
    for side in ("before", "after"):
        assert set(out[side]) == {"ece", "nll", "brier"}
        assert set(out["posterior"][side]) == {"ece", "nll", "brier"}
    assert out["n_fit"] + out["n_eval"] == 899
    assert main(["recalibrate", "digits-logreg", "--method", "platt", "--fit-fraction", "0.3", "--seed", "1"]) == 0
    assert "platt recalibration" in capsys.readouterr().out
    assert main(["recalibrate", "digits-logreg", "--method", "wavelet"]) == 2
    assert main(["recalibrate", "digits-logreg", "--method", "platt", "--fit-fraction", "1.5"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "--method" in err and "--fit-fraction" in err


def test_temperature_needs_full_vectors():
    from pbassess import Predictions

    p = Predictions.from_top1(["a", "b"] * 10, [0.9, 0.6] * 10, ["a", "b"] * 10)
    with pytest.raises(ConfigError, match="full probability vectors"):
        recalibrate(p, "temperature")


def test_p_improved_of_the_ece_pairs_the_draws(rng):
    """Issue 20: before and after are the same items, so P(improved) must compare paired draws.

    Held-out accuracy is confidence - 0.08; the map lowers every confidence by 0.03, so every
    bin's gap shrinks by 0.03 for the same items. Paired draws see that in (almost) every draw;
    independent before/after posteriors (each ECE's posterior sd ~0.01 at 1,500 items) only give
    P ~ Phi(0.03 / (0.012 sqrt 2)) ~ 0.96 and, for a map lowering by 0.01, ~ 0.7.
    """
    from pbassess.calibration.evaluation import paired_ece_draws
    from pbassess.calibration.posterior import beta_metric_draws, pool_bins

    c = rng.uniform(0.6, 0.95, 1500)
    y = rng.uniform(size=1500) < c - 0.08
    for shift, paired_min, independent_max in ((0.03, 0.995, 0.995), (0.01, 0.98, 0.9)):
        before, after = paired_ece_draws(c, c - shift, y, n_draws=4000, seed=1)
        paired = np.mean(after < before)
        all_labeled = np.ones(c.size, bool)
        ind_b = beta_metric_draws(pool_bins(c, y, all_labeled), n_draws=4000, seed=2)["ece"]
        ind_a = beta_metric_draws(pool_bins(c - shift, y, all_labeled), n_draws=4000, seed=3)["ece"]
        independent = np.mean(ind_a < ind_b)
        assert paired > paired_min, (shift, paired)
        assert independent < independent_max, (shift, independent)
    # the identity map: the same draw for both, never strictly better
    before, after = paired_ece_draws(c, c, y, n_draws=500, seed=1)
    np.testing.assert_array_equal(before, after)


def test_paired_ece_draws_reduce_to_the_beta_posterior_of_each_bin(rng):
    # a map that moves no item across a bin edge: the cells are the bins, and each draw's ECE is
    # the ECE of Beta(2 m_b + k_b, 2 (1 - m_b) + n_b - k_b) draws, m_b the mean of before and after scores
    from pbassess.calibration.evaluation import paired_ece_draws

    c = np.repeat([0.62, 0.75, 0.88], 400)
    y = rng.uniform(size=c.size) < c - 0.05
    before, after = paired_ece_draws(c, c + 0.01, y, n_draws=20000, seed=4)
    k = np.array([y[i * 400:(i + 1) * 400].sum() for i in range(3)])
    m = np.array([0.625, 0.755, 0.885])
    a, b = 2 * m + k, 2 * (1 - m) + 400 - k
    theta = np.random.default_rng(4).beta(a, b, size=(20000, 3))
    np.testing.assert_allclose(before, np.abs(theta - [0.62, 0.75, 0.88]).mean(axis=1))
    np.testing.assert_allclose(after, np.abs(theta - [0.63, 0.76, 0.89]).mean(axis=1))


def test_platt_clip_is_an_option_and_changes_the_slope_where_scores_equal_one(rng):
    s = np.concatenate([np.ones(300), rng.uniform(0.3, 0.99, 1700)])
    y = rng.uniform(size=2000) < np.where(s == 1.0, 0.93, expit(0.7 * logit(np.clip(s, 1e-9, 1)) - 0.2))
    default = fit_platt(s, y)
    assert default.params == fit_platt(s, y, clip=1e-12).params
    loose = fit_platt(s, y, clip=5e-5)
    # the clip sets logit(1) (27.6 vs 9.9): the 300 scores of 1 pull the slope differently
    assert abs(loose.params["a"] - default.params["a"]) > 0.02
    lr = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000).fit(logit(np.clip(s, 5e-5, 1 - 5e-5))[:, None], y)
    assert loose.params["a"] == pytest.approx(lr.coef_[0, 0], abs=1e-6)
    with pytest.raises(ConfigError, match="clip"):
        fit_platt(s, y, clip=0.7)
    from pbassess.calibration.recalibration import fit_recalibrator

    with pytest.raises(ConfigError, match="Platt scaling only"):
        fit_recalibrator("isotonic", scores=s, outcomes=y, clip=1e-3)


def test_cli_recalibrate_clip(capsys):
    args = ["recalibrate", "digits-logreg", "--method", "platt", "--seed", "3", "--draws", "200", "--json"]
    assert main(args) == 0
    default = json.loads(capsys.readouterr().out)
    assert main([*args, "--clip", "1e-12"]) == 0
    assert json.loads(capsys.readouterr().out)["params"] == default["params"]
    assert main(["recalibrate", "digits-logreg", "--method", "isotonic", "--clip", "1e-3"]) == 2
    assert main(["recalibrate", "digits-logreg", "--method", "platt", "--clip", "0.9"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "--clip" in err
