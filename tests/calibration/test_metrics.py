"""Frequentist calibration metrics against peers (netcal/torchmetrics conventions, scikit-learn, scipy) and closed forms."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binned_statistic
from sklearn.calibration import calibration_curve

from pbassess.calibration import (
    adaptive_calibration_error,
    classwise_ece,
    debiased_ece,
    expected_calibration_error,
    marginal_calibration_error,
    max_calibration_error,
    predicted_class_ece,
    rms_calibration_error,
    top_label_ece,
)
from pbassess.calibration.binning import assign_bins, bin_sums, equal_count_bins, equal_width_edges
from pbassess.errors import ConfigError


# ------------------------------------------------------------------ CIFAR-100: the peers' published numbers
def test_cifar100_ece_and_mce_by_peer_convention(cifar100):
    c, y = cifar100.confidence, cifar100.correct
    for convention in ("left", "right", "netcal", "torchmetrics"):
        assert round(expected_calibration_error(c, y, 10, convention=convention), 4) == 0.0987
    # netcal: float64 linspace edges, numpy's [e_b, e_b+1) rule -> a confidence of 0.7 falls below 0.7000000000000001
    assert round(max_calibration_error(c, y, 10, convention="netcal"), 4) == 0.2096
    # torchmetrics: float32, bucketize(right=True) - 1 -> 0.7 falls in [0.7, 0.8)
    assert round(max_calibration_error(c, y, 10, convention="torchmetrics"), 4) == 0.2089
    # exactly one item (confidence 0.7000) changes bins between the two conventions
    e = equal_width_edges(10)
    moved = assign_bins(c, e, "netcal")[0] != assign_bins(c, e, "torchmetrics")[0]
    assert moved.sum() == 1 + int((c == 1.0).sum())  # plus torchmetrics' own bin for scores equal to 1
    assert np.all(c[moved & (c < 1)] == 0.7)


def test_torchmetrics_documented_examples():
    # binary_calibration_error docstring: tensor(0.2900), tensor(0.2918), tensor(0.3167) with n_bins=2
    preds, target = [0.25, 0.25, 0.55, 0.75, 0.75], [0, 0, 1, 1, 1]
    kw = {"bins": 2, "convention": "torchmetrics"}
    assert round(expected_calibration_error(preds, target, **kw), 4) == 0.29
    assert round(rms_calibration_error(preds, target, **kw), 4) == 0.2918
    assert round(max_calibration_error(preds, target, **kw), 4) == 0.3167
    # multiclass_calibration_error docstring (n_bins=3): 0.2000, 0.2082, 0.2333 on the top-1 confidence
    probs = np.array([[0.25, 0.20, 0.55], [0.55, 0.05, 0.40], [0.10, 0.30, 0.60], [0.90, 0.05, 0.05]])
    correct = probs.argmax(1) == np.array([0, 1, 2, 0])
    conf = probs.max(1)
    kw = {"bins": 3, "convention": "torchmetrics"}
    assert round(expected_calibration_error(conf, correct, **kw), 4) == 0.2
    assert round(rms_calibration_error(conf, correct, **kw), 4) == 0.2082
    assert round(max_calibration_error(conf, correct, **kw), 4) == 0.2333


def test_right_convention_matches_sklearn_calibration_curve(rng):
    s = np.round(rng.uniform(size=3000), 1)  # many scores exactly on the edges
    y = rng.uniform(size=3000) < s
    prob_true, prob_pred = calibration_curve(y, s, n_bins=10, strategy="uniform")
    b = bin_sums(s, y, equal_width_edges(10), "right")
    occ = b.n > 0
    np.testing.assert_allclose(b.accuracy[occ], prob_true, atol=1e-12)
    np.testing.assert_allclose(b.confidence[occ], prob_pred, atol=1e-12)


def test_netcal_convention_matches_scipy_binned_statistic(rng):
    # netcal bins with scipy.stats.binned_statistic_dd over numpy.linspace edges after clipping to [eps, 1 - eps]
    s = np.concatenate([np.round(rng.uniform(size=2000), 1), [0.0, 1.0]])
    y = rng.uniform(size=s.size) < s
    clipped = np.clip(s, np.finfo(float).eps, 1 - np.finfo(float).eps)
    edges = np.linspace(0, 1, 11)
    count = binned_statistic(clipped, y, "count", bins=edges).statistic
    acc = binned_statistic(clipped, y.astype(float), "mean", bins=edges).statistic
    b = bin_sums(s, y, edges, "netcal")
    np.testing.assert_array_equal(b.n, count)
    np.testing.assert_allclose(b.accuracy[b.n > 0], acc[count > 0], atol=1e-12)


# ------------------------------------------------------------------ closed forms
def test_ece_mce_rmsce_closed_form():
    s = [0.1, 0.2, 0.8, 0.9]
    y = [0, 1, 1, 1]
    # bins [0, .5): acc .5, conf .15 -> gap .35; [.5, 1]: acc 1, conf .85 -> gap .15
    assert expected_calibration_error(s, y, 2) == pytest.approx(0.5 * 0.35 + 0.5 * 0.15)
    assert max_calibration_error(s, y, 2) == pytest.approx(0.35)
    assert rms_calibration_error(s, y, 2) == pytest.approx(np.sqrt(0.5 * 0.35**2 + 0.5 * 0.15**2))
    # explicit edges and equal-mass bins
    assert expected_calibration_error(s, y, [0, 0.5, 1]) == pytest.approx(0.25)
    assert expected_calibration_error(s, y, 4, binning="quantile") == pytest.approx(
        np.mean(np.abs(np.array(y) - np.array(s))))


def test_adaptive_calibration_error_closed_form(rng):
    s = rng.uniform(size=1000)
    y = rng.uniform(size=1000) < s
    idx = equal_count_bins(s, 10)
    assert np.all(np.bincount(idx) == 100)
    order = np.argsort(s)
    gaps = [abs(y[part].mean() - s[part].mean()) for part in np.array_split(order, 10)]
    assert adaptive_calibration_error(s, y, 10) == pytest.approx(np.mean(gaps))
    # netcal's ACE: unweighted mean over non-empty equal-width bins
    b = bin_sums(s, y, equal_width_edges(10), "netcal")
    assert adaptive_calibration_error(s, y, 10, equal_count=False) == pytest.approx(
        np.mean(np.abs(b.accuracy - b.confidence)[b.n > 0]))


def test_debiased_l2_is_unbiased_for_a_calibrated_model(rng):
    # E[debiased squared L2 error] = 0 for a calibrated model (Kumar et al. 2019); the plug-in is biased up.
    sq_debiased, sq_plugin = [], []
    for _ in range(300):
        s = rng.uniform(0.5, 1.0, 200)
        y = rng.uniform(size=200) < s
        b = bin_sums(s, y, equal_width_edges(5))
        occ = b.n >= 2
        w = b.n[occ] / b.n.sum()
        acc = b.accuracy[occ]
        gap2 = (acc - b.confidence[occ]) ** 2
        sq_plugin.append(np.sum(w * gap2))
        sq_debiased.append(np.sum(w * (gap2 - acc * (1 - acc) / (b.n[occ] - 1))))
        # the function returns the square root of the clipped value
        assert debiased_ece(s, y, 5, p=2) == pytest.approx(np.sqrt(max(sq_debiased[-1], 0)))
    se = np.std(sq_debiased) / np.sqrt(len(sq_debiased))
    assert abs(np.mean(sq_debiased)) < 3 * se
    assert np.mean(sq_plugin) > 10 * se


def test_debiased_l1_is_the_limit_of_kumar_normal_resampling(rng):
    # Kumar et al.'s normal_debiased_ce: 2 * ce - mean over resamples of the ECE with bin accuracies ~ Normal(acc, sd)
    s = rng.uniform(0.3, 1.0, 400)
    y = rng.uniform(size=400) < s - 0.05
    b = bin_sums(s, y, equal_width_edges(10))
    occ = b.n > 0
    w, acc, conf, n = b.n[occ] / b.n.sum(), b.accuracy[occ], b.confidence[occ], b.n[occ]
    ce = np.sum(w * np.abs(acc - conf))
    samples = rng.normal(acc, np.sqrt(acc * (1 - acc) / n), size=(200_000, acc.size))
    resampled = np.abs(samples - conf) @ w
    monte_carlo = 2 * ce - resampled.mean()
    assert debiased_ece(s, y, 10, p=1) == pytest.approx(monte_carlo, abs=4 * resampled.std() / np.sqrt(200_000))


def test_classwise_and_marginal_against_a_direct_loop(rng):
    logits = rng.normal(size=(1500, 4)) * 2
    probs = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    labels = np.array([rng.choice(4, p=p ** 1.5 / (p ** 1.5).sum()) for p in probs])
    per_class, sq = [], []
    for j in range(4):
        idx = np.clip(np.digitize(probs[:, j], np.linspace(0, 1, 11)) - 1, 0, 9)
        gaps, weights = [], []
        for b in range(10):
            m = idx == b
            if m.any():
                gaps.append(abs((labels[m] == j).mean() - probs[m, j].mean()))
                weights.append(m.mean())
        per_class.append(np.dot(weights, gaps))
        sq.append(np.dot(weights, np.square(gaps)))
    assert classwise_ece(probs, labels, 10) == pytest.approx(np.mean(per_class))
    assert marginal_calibration_error(probs, labels, 10) == pytest.approx(np.sqrt(np.mean(sq)))
    with pytest.raises(ConfigError, match="full"):
        classwise_ece(probs[:, 0], labels)


def test_top_label_ece_matches_the_within_predicted_class_ece_of_assess_calibration():
    from pbassess import load_data
    from pbassess.assess.calibration import assess_calibration

    p = load_data("digits-logreg")
    res = assess_calibration(p, bins=10, seed=0)
    ece_k, n_k = predicted_class_ece(p.predicted, p.confidence, p.correct, p.n_classes, 10)
    np.testing.assert_allclose(ece_k, res.classwise_summary()["ece_frequentist"].to_numpy(), atol=1e-12)
    assert top_label_ece(p.predicted, p.confidence, p.correct, p.n_classes, 10) == pytest.approx(
        np.sum(ece_k * n_k) / n_k.sum())


def test_bad_input_is_one_line_config_error():
    with pytest.raises(ConfigError, match="convention"):
        expected_calibration_error([0.5], [1], convention="middle")
    with pytest.raises(ConfigError, match="probabilities"):
        expected_calibration_error([1.5], [1])
    with pytest.raises(ConfigError, match="lengths"):
        expected_calibration_error([0.5, 0.6], [1])
    with pytest.raises(ConfigError, match="cover"):
        expected_calibration_error([0.5], [1], [0.2, 1.0])
    assert np.isnan(expected_calibration_error([], []))
