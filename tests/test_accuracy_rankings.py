"""Rankings with unlabeled regions (issue 20): a region without labels ranks on its prior draws.

Before the fix, ``assess_accuracy(acs, by="year")`` with labels only in 2015 dropped the three
unlabeled years from the ranking, so 2015 was the lowest and the highest year with probability
1 at once. The exact answer, with every year's Beta(1, 1) prior and 2015's posterior Beta(a, b):
P(2015 lowest) = E[(1 - theta)^3] = B(a, b + 3) / B(a, b), P(2015 highest) = E[theta^3] =
B(a + 3, b) / B(a, b), and by symmetry each unlabeled year gets a third of the rest. The
result's probabilities come from S posterior draws, so each is checked within 5 Monte Carlo
standard errors ``sqrt(p (1 - p) / S)`` (plus 1e-3 for the discreteness of a count).
"""

import os
from pathlib import Path

import numpy as np
import pytest
from scipy import special

from pbassess import Predictions
from pbassess.assess import assess_accuracy

ACS = Path(os.environ.get("PBASSESS_DATA_DIR", "/nonexistent")) / "acs_employment_ma"
needs_data = pytest.mark.skipif(not (ACS / "employment_MA_reference.pq").exists(), reason="ACS data absent")
DRAWS = 500  # per chain: 4 x 500 = 2,000 draws


def _tolerance(p, s):
    return 5 * np.sqrt(np.asarray(p) * (1 - np.asarray(p)) / s) + 1e-3


def _exact_one_labeled(a, b, n_unlabeled):
    """P(lowest), P(highest) of the labeled region (Beta(a, b)) against n_unlabeled Beta(1, 1) regions."""
    m = n_unlabeled
    low = np.exp(special.betaln(a, b + m) - special.betaln(a, b))
    high = np.exp(special.betaln(a + m, b) - special.betaln(a, b))
    return float(low), float(high)


def _check_rankings(res, labeled, a, b):
    s = res.accuracy_draws().shape[0]
    k = len(res.regions)
    low, high = _exact_one_labeled(a, b, k - 1)
    others = [i for i in range(k) if i != labeled]
    assert abs(res.p_lowest[labeled] - low) < _tolerance(low, s)
    assert abs(res.p_highest[labeled] - high) < _tolerance(high, s)
    # the unlabeled regions share the rest equally (same prior)
    for i in others:
        assert abs(res.p_lowest[i] - (1 - low) / (k - 1)) < _tolerance((1 - low) / (k - 1), s)
        assert abs(res.p_highest[i] - (1 - high) / (k - 1)) < _tolerance((1 - high) / (k - 1), s)
    assert res.p_lowest.sum() == pytest.approx(1.0) and res.p_highest.sum() == pytest.approx(1.0)
    assert not np.any((res.p_lowest > 0.99) & (res.p_highest > 0.99))


@pytest.fixture(scope="module")
def acs_2015_only():
    from pbassess import load_data

    acs = load_data("acs-employment")
    year = np.asarray(acs.groups["year"])
    return acs.with_labels(np.where(year == 2015, acs.labels, -1))


@needs_data
def test_acs_labels_in_2015_only_rank_the_other_years_on_their_prior(acs_2015_only):
    # 4 x 125 draws: the per-item log-likelihood of 68,785 labels is the cost of this fit
    res = assess_accuracy(acs_2015_only, by="year", seed=0, draws=125)
    assert res.regions == ["2015", "2016", "2017", "2018"]
    n = res.counts["n"].to_numpy()
    assert n.tolist() == [68_785, 0, 0, 0]
    assert res.ranked_on_prior.tolist() == [False, True, True, True]
    a = 1.0 + res.counts["correct"].to_numpy()[0]
    b = 1.0 + n[0] - res.counts["correct"].to_numpy()[0]
    _check_rankings(res, 0, a, b)
    # 2015's accuracy 0.827 against three uniform priors: lowest ~0.005, highest ~0.566, never both 1
    assert res.p_lowest[0] < 0.02 and 0.5 < res.p_highest[0] < 0.65
    # and the result says so, in every form
    summary = res.summary()
    assert res.rank_summary()["ranked_on_prior"].tolist() == [False, True, True, True]
    payload = res.to_json()
    assert payload["ranked_on_prior"] == [False, True, True, True]
    assert "ranked on their prior" in res.sentence()
    assert np.isfinite(summary["mean_rank"]).all()


def _pool(regions, labeled_region, n_per_region=200, accuracy=0.9, seed=0):
    """A binary pool: n_per_region items per region, labels only in ``labeled_region``."""
    rng = np.random.default_rng(seed)
    n = n_per_region * len(regions)
    group = np.repeat(regions, n_per_region)
    predicted = rng.integers(0, 2, n)
    correct = rng.random(n) < accuracy
    truth = np.where(correct, predicted, 1 - predicted)
    labels = np.where(group == labeled_region, truth, -1)
    conf = rng.uniform(0.6, 1.0, n)
    p = Predictions.from_top1(predicted, conf, labels, classes=[0, 1])
    return p, group


@pytest.mark.parametrize("k", [2, 3, 5])
def test_synthetic_labels_in_one_region(k):
    regions = np.array([f"r{i}" for i in range(k)])
    p, group = _pool(regions, "r1", seed=k)
    res = assess_accuracy(p, by=group, seed=k, draws=DRAWS)
    assert res.ranked_on_prior.tolist() == [i != 1 for i in range(k)]
    c = res.counts
    a = 1.0 + float(c["correct"][1])
    b = 1.0 + float(c["n"][1] - c["correct"][1])
    _check_rankings(res, 1, a, b)
    if k > 1:
        # the unlabeled regions rank too: their mean rank is finite and the labeled one is not always first
        assert np.isfinite(res.rank_summary()["mean_rank"]).all()
        assert (res.p_in_lowest(1)[[i for i in range(k) if i != 1]] > 0).all()


def test_one_region_is_both_lowest_and_highest():
    p, group = _pool(np.array(["only"]), "only")
    res = assess_accuracy(p, by=group, seed=0, draws=DRAWS)
    assert res.p_lowest.tolist() == [1.0] and res.p_highest.tolist() == [1.0]
    assert res.ranked_on_prior.tolist() == [False]


def test_a_region_without_any_items_is_not_ranked():
    # by predicted class: class "c" is never predicted (no pool items, no labels), "b" has items but no labels
    p = Predictions.from_top1(["a"] * 30 + ["b"] * 30, [0.9] * 60, ["a"] * 25 + ["b"] * 5 + [None] * 30,
                              classes=["a", "b", "c"])
    res = assess_accuracy(p, seed=0, draws=DRAWS)
    assert res.regions == ["a", "b", "c"]
    assert res.valid.tolist() == [True, True, False]
    assert res.ranked_on_prior.tolist() == [False, True, False]
    assert res.p_lowest[2] == 0.0 and res.p_highest[2] == 0.0
    # "b" (prior Beta(1, 1)) against "a" (Beta(26, 6)): the exact two-region answer
    _check_rankings_two = _exact_one_labeled(26.0, 6.0, 1)
    s = res.accuracy_draws().shape[0]
    assert abs(res.p_lowest[0] - _check_rankings_two[0]) < _tolerance(_check_rankings_two[0], s)
    assert abs(res.p_highest[0] - _check_rankings_two[1]) < _tolerance(_check_rankings_two[1], s)


def test_a_result_saved_with_the_old_rule_ranks_by_the_new_one():
    p, group = _pool(np.array(["x", "y", "z"]), "x")
    res = assess_accuracy(p, by=group, seed=0, draws=DRAWS)
    # the old rule stored valid = labeled regions only
    res.counts["valid"] = ("group", np.array([True, False, False]))
    res.__dict__.pop("_cached", None)
    assert res.valid.tolist() == [True, True, True]
    assert res.p_lowest[0] < 1.0 and res.p_highest[0] < 1.0
