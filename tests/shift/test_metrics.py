"""Shift metrics against closed forms, the paper's code's formulas (uq_benchmark_2019/metrics_lib.py,
transcribed to NumPy below) and scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest

from pbassess.errors import DataError
from pbassess.shift import metrics as M


def _random_set(seed, n=500, k=10, sharp=0.3):
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.full(k, sharp), size=n)
    # labels drawn from a tempered version of the forecast: neither calibrated nor random
    tempered = probs**0.5 / (probs**0.5).sum(axis=1, keepdims=True)
    labels = np.array([rng.choice(k, p=q) for q in tempered])
    return probs, labels


# ---- the paper's formulas, transcribed from metrics_lib.py (tf ops -> numpy) ----
def their_brier_scores(labels, probs):
    plabel = probs[np.arange(len(labels)), labels]
    return np.square(probs).sum(axis=-1) - 2 * plabel


def their_brier_decomposition(labels, probs, literal=False):
    n, nlabels = probs.shape
    pred_class = probs.argmax(axis=1)
    confusion = np.zeros((nlabels, nlabels))
    np.add.at(confusion, (pred_class, labels), 1.0)
    dist_weights = confusion.sum(axis=1) / confusion.sum()
    pbar = confusion.sum(axis=0) / confusion.sum()
    dist_mean = confusion / (confusion.sum(axis=1) + 1.0e-7)[:, None]
    uncertainty = -np.sum(np.square(pbar))
    # Their line is ``tf.square(tf.expand_dims(pbar, 1) - dist_mean)``: pbar (indexed by label j)
    # broadcast down the rows, so entry [k, j] pairs pbar_k with q_kj. ``literal=True`` keeps
    # that; the default pairs pbar_j with q_kj, the variance of the docstring and of Broecker (2009).
    gap = pbar[:, None] - dist_mean if literal else pbar[None, :] - dist_mean
    resolution = np.sum(dist_weights * np.sum(np.square(gap), axis=1))
    reliability = np.mean(np.sum(np.square(dist_mean[pred_class] - probs), axis=1))
    return uncertainty, resolution, reliability


def their_ece(probs, labels, bins=10):
    conf = probs.max(-1)
    correct = (probs.argmax(-1) == labels).astype(float)
    conf = np.where(conf == 0, 1e-8, conf)
    counts, edges = np.histogram(conf, bins=bins, range=[0.0, 1.0])
    idx = np.digitize(conf, edges, right=True)
    acc = [correct[idx == i].mean() if counts[i - 1] else 0 for i in range(1, bins + 1)]
    centre = [conf[idx == i].mean() if counts[i - 1] else 0 for i in range(1, bins + 1)]
    return sum(counts[i] / counts.sum() * abs(centre[i] - acc[i]) for i in range(bins) if counts[i] > 0)


def their_accuracies_at_confidences(labels, probs, thresholds):
    eq = probs.argmax(-1) == labels
    conf = probs.max(-1)
    acc, cnt = [], []
    for t in thresholds:
        mask = conf >= t
        cnt.append(mask.sum())
        acc.append(np.ma.masked_array(eq, mask=~mask).mean())
    return np.array(acc, dtype=float), np.array(cnt)


@pytest.mark.parametrize("seed,k", [(0, 10), (1, 3), (2, 2), (3, 10)])
def test_brier_decomposition_adds_up_exactly(seed, k):
    probs, labels = _random_set(seed, n=300, k=k)
    d = M.brier_decomposition(probs, labels)
    total = d["reliability"] - d["resolution"] + d["uncertainty"] + d["cross"]
    assert total == pytest.approx(d["brier"], abs=1e-12)
    direct = np.mean(np.sum((probs - np.eye(k)[labels]) ** 2, axis=1))
    assert d["brier"] == pytest.approx(direct, abs=1e-12)
    assert d["resolution"] >= 0 and d["reliability"] >= 0
    assert d["uncertainty_minus_one"] == pytest.approx(d["uncertainty"] - 1)


def test_brier_decomposition_matches_their_code():
    probs, labels = _random_set(4, n=1000)
    d = M.brier_decomposition(probs, labels)
    unc, res, rel = their_brier_decomposition(labels, probs)
    # their 1e-7 in the cell denominators shifts the terms by O(1e-7 / n_k): tolerance 1e-6
    assert d["uncertainty_minus_one"] == pytest.approx(unc, abs=1e-6)
    assert d["resolution"] == pytest.approx(res, abs=1e-6)
    assert d["reliability"] == pytest.approx(rel, abs=1e-6)
    # their three terms do not add up; the gap is our cross term (with their minus-one convention)
    their_brier = their_brier_scores(labels, probs).mean()
    assert their_brier == pytest.approx(M.brier_score(probs, labels, minus_one=True), abs=1e-12)
    assert their_brier - (rel - res + unc) == pytest.approx(d["cross"], abs=1e-6)


def test_their_literal_resolution_pairs_the_wrong_axis():
    """Documented discrepancy: their resolution line broadcasts pbar along the wrong axis.

    For a perfect forecast the resolution must equal the uncertainty (reliability 0, Brier 0);
    ours does (previous tests), their literal line does not.
    """
    labels = np.array([0, 1, 2, 1])
    probs = np.eye(3)[labels]
    unc, res_literal, _ = their_brier_decomposition(labels, probs, literal=True)
    _, res_fixed, _ = their_brier_decomposition(labels, probs)
    assert res_fixed == pytest.approx(1 + unc, abs=1e-6)  # 0.625
    assert res_literal == pytest.approx(0.71875, abs=1e-6)  # worked out by hand
    assert M.brier_decomposition(probs, labels)["resolution"] == pytest.approx(0.625)


def test_cross_term_vanishes_for_constant_forecasts_within_cells():
    rng = np.random.default_rng(5)
    forecasts = np.array([[0.7, 0.2, 0.1], [0.1, 0.6, 0.3], [0.2, 0.2, 0.6]])
    cell = rng.integers(0, 3, size=400)
    probs = forecasts[cell]
    labels = np.array([rng.choice(3, p=forecasts[c]) for c in cell])
    d = M.brier_decomposition(probs, labels)
    assert d["cross"] == pytest.approx(0.0, abs=1e-12)


def test_perfect_forecast_has_zero_brier_and_its_decomposition():
    labels = np.array([0, 1, 2, 1])
    d = M.brier_decomposition(np.eye(3)[labels], labels)
    assert d["brier"] == 0 and d["reliability"] == 0 and d["cross"] == 0
    assert d["resolution"] == pytest.approx(d["uncertainty"])  # 1 - (1/16 + 4/16 + 1/16)
    assert d["uncertainty"] == pytest.approx(1 - 6 / 16)


def test_nll_is_softened_as_in_their_code():
    probs = np.array([[1.0, 0.0, 0.0], [0.5, 0.25, 0.25]])
    labels = np.array([1, 0])
    expected = -(np.log(1e-8 / 3) + np.log((1 - 1e-8) * 0.5 + 1e-8 / 3)) / 2
    assert M.negative_log_likelihood(probs, labels) == pytest.approx(expected, rel=1e-12)


def test_entropy_closed_forms():
    assert M.predictive_entropy(np.full((1, 10), 0.1))[0] == pytest.approx(np.log(10))
    p = np.array([[0.2, 0.3, 0.5]])
    assert M.predictive_entropy(p)[0] == pytest.approx(-(p * np.log(p)).sum(), abs=1e-7)


def test_ece_matches_their_code_on_continuous_scores():
    probs, labels = _random_set(6, n=2000)
    stats = M.per_item_stats(probs, labels)
    ours = M.expected_calibration_error(stats["confidence"], stats["correct"], 10)
    assert ours == pytest.approx(their_ece(probs, labels, 10), abs=1e-12)
    assert M.expected_calibration_error(stats["confidence"], stats["correct"], 15) == pytest.approx(
        their_ece(probs, labels, 15), abs=1e-12)


def test_accuracy_versus_confidence_matches_their_code():
    probs, labels = _random_set(7, n=800)
    stats = M.per_item_stats(probs, labels)
    acc, cnt = M.accuracy_vs_confidence(stats["confidence"], stats["correct"])
    t_acc, t_cnt = their_accuracies_at_confidences(labels, probs, M.CONFIDENCE_THRESHOLDS)
    assert cnt.tolist() == t_cnt.tolist() and cnt[0] == 800
    np.testing.assert_allclose(acc, t_acc, atol=1e-12)
    assert np.all(np.diff(cnt) <= 0)


def test_ood_auroc_equals_sklearn_with_ties():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(8)
    a = np.round(rng.beta(5, 2, size=300), 2)  # rounding makes ties
    b = np.round(rng.beta(2, 2, size=200), 2)
    y = np.r_[np.ones(a.size), np.zeros(b.size)]
    assert M.ood_auroc(a, b) == pytest.approx(roc_auc_score(y, np.r_[a, b]), abs=1e-12)
    assert M.ood_auroc(-a, -b) == pytest.approx(1 - roc_auc_score(y, np.r_[a, b]), abs=1e-12)


def test_bad_input_is_one_line_data_error():
    with pytest.raises(DataError, match="labels must lie"):
        M.per_item_stats([[0.5, 0.5]], [2])
    with pytest.raises(DataError, match="labels for"):
        M.brier_decomposition([[0.5, 0.5]], [0, 1])
    with pytest.raises(DataError, match="needs in-distribution"):
        M.ood_auroc([], [0.5])


def test_ece_agrees_with_the_calibration_package():
    """Peer check against pbassess.calibration (same [lo, hi) bins)."""
    calibration = pytest.importorskip("pbassess.calibration")
    probs, labels = _random_set(9, n=1500)
    stats = M.per_item_stats(probs, labels)
    ours = M.expected_calibration_error(stats["confidence"], stats["correct"], 10)
    theirs = calibration.expected_calibration_error(stats["confidence"], stats["correct"], 10)
    assert ours == pytest.approx(theirs, abs=1e-12)
