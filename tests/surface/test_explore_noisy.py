"""Exploration loop, noisy-attribute calibration and the synthetic generator."""

import numpy as np
import pytest

from pbassess import Predictions
from pbassess.errors import ConfigError, DataError
from pbassess.surface import ArmCounts, count_arms, fit_surface
from pbassess.surface.explore import choose_arms, explore_surface
from pbassess.surface.noisy import arm_log_probs, calibrate_arm_model, soft_arm_counts
from pbassess.surface.synthetic import synthetic_surface


def test_variance_strategy_picks_the_least_labeled_available_arms():
    r = fit_surface(ArmCounts.from_arrays([50, 0, 2, 0], [40, 0, 1, 0]), estimator="beta-i", seed=0)
    chosen = choose_arms(r, np.array([True, True, True, False]), 2, "variance")
    assert set(chosen.tolist()) == {1, 2}  # arm 3 has no unlabeled items; arm 0 is well known


def test_thompson_and_bayes_ucb_prefer_a_clearly_worse_arm():
    r = fit_surface(ArmCounts.from_arrays([200, 200, 200], [190, 60, 185]), estimator="beta-i", seed=0)
    avail = np.ones(3, dtype=bool)
    assert choose_arms(r, avail, 1, "thompson", seed=1).tolist() == [1]
    assert choose_arms(r, avail, 1, "bayes-ucb", round_index=5).tolist() == [1]
    with pytest.raises(ConfigError, match="unknown exploration strategy"):
        choose_arms(r, avail, 1, "greedy")


def test_exploration_curves_reach_the_budget_and_reveal_the_truth():
    syn = synthetic_surface(3000, 3, seed=4)
    ds = explore_surface(syn.preds, syn.attributes, estimator="beta-i", budget=3000, batch_size=400, seeds=[0])
    assert ds["n_labels"].values[0, -1] == 3000
    # with every label revealed, Beta-I's mean is the empirical accuracy (up to the 0.1 pseudo-count)
    assert ds["macro_mse"].values[0, -1] < 1e-4
    assert ds["macro_mse"].values[0, 0] > ds["macro_mse"].values[0, -1]


def test_variance_exploration_beats_random_on_macro_mse():
    syn = synthetic_surface(6000, 5, seed=3)
    kw = dict(estimator="beta-i", budget=300, batch_size=20, seeds=[0, 1, 2], initial_labels=40)
    var = explore_surface(syn.preds, syn.attributes, strategy="variance", **kw)
    rnd = explore_surface(syn.preds, syn.attributes, strategy="random", **kw)
    arms = count_arms(syn.preds, syn.attributes)
    assert arms.n_arms == 32
    # variance sampling spreads labels over arms: lower macro MSE at the budget (mean of 3 seeds)
    assert var["macro_mse"].values[:, -1].mean() < rnd["macro_mse"].values[:, -1].mean()


def test_exploration_needs_the_hidden_labels():
    p = Predictions.from_binary_scores([0.9, 0.2], [1, None], groups={"g": [0, 1]})
    with pytest.raises(DataError, match="needs its"):
        explore_surface(p, ["g"], budget=1)


def test_arm_probabilities_are_products_of_attribute_probabilities():
    arms = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    lp = arm_log_probs([[0.7, 0.4]], arms)
    assert np.allclose(np.exp(lp)[0], [0.3 * 0.6, 0.3 * 0.4, 0.7 * 0.6, 0.7 * 0.4])


def test_calibration_recovers_a_known_temperature():
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 2, size=(3000, 1))
    true_logit = (2 * truth[:, 0] - 1) * 2.0 + rng.normal(0, 1.0, size=3000)
    # the Bayes posterior logit is 4 * s for s ~ N(+-2, 1): a classifier reporting s is under-confident by 4x
    probs = 1 / (1 + np.exp(-true_logit))[:, None]
    m = calibrate_arm_model(probs, truth, [[0], [1]], kind="temperature")
    assert abs(m.temperatures[0] - 4.0) < 0.4  # ~4 standard errors at n = 3000


def test_full_calibration_improves_heldout_likelihood_of_correlated_attributes():
    syn = synthetic_surface(8000, 4, seed=2, attribute_noise=1.0)
    gold, test = np.arange(600), np.arange(600, 8000)
    idx = syn.attribute_truth @ np.array([8, 4, 2, 1])
    ll = {}
    for kind in ("raw", "temperature", "full"):
        m = calibrate_arm_model(syn.attribute_probs[gold], syn.attribute_truth[gold], syn.arm_values, kind=kind)
        ll[kind] = arm_log_probs(syn.attribute_probs[test], syn.arm_values, m)[np.arange(test.size), idx[test]].mean()
    assert ll["raw"] < ll["temperature"] < ll["full"]


def test_soft_counts_equal_hard_counts_for_certain_attributes():
    syn = synthetic_surface(500, 3, seed=1)
    certain = np.where(syn.attribute_truth == 1, 1 - 1e-9, 1e-9)
    soft = soft_arm_counts(syn.preds, certain, syn.arm_values)
    hard = count_arms(syn.preds, syn.attributes)
    index = hard.values @ np.array([4, 2, 1])
    assert np.allclose(soft.pool_n[index], hard.pool_n, atol=1e-4)
    assert np.allclose(soft.correct[index], hard.correct, atol=1e-4)


def _trace_after(cov, noise, picked):
    """Summed variance of every arm after one Gaussian label in each picked arm (joint conditioning)."""
    s = np.asarray(picked)
    block = cov[np.ix_(s, s)] + np.diag(noise[s])
    return np.trace(cov - cov[:, s] @ np.linalg.solve(block, cov[s, :]))


def test_variance_reduction_picks_greedily_by_exact_gaussian_conditioning():
    from pbassess.surface.explore import variance_reduction_order

    rng = np.random.default_rng(3)
    loadings = rng.normal(0.0, 0.04, size=(6, 3))  # six arms sharing three effects, plus their own noise
    draws = 0.8 + rng.normal(size=(4000, 3)) @ loadings.T + rng.normal(0.0, 0.02, size=(4000, 6))
    mean = draws.mean(axis=0)
    cov = np.cov(draws, rowvar=False)
    noise = mean * (1 - mean)
    cand = np.array([0, 2, 3, 4, 5])  # arm 1 has no unlabeled item left
    order = cand[variance_reduction_order(draws, cand, 3)]
    picked: list[int] = []
    for _ in range(3):  # the greedy choice by the joint posterior of all labels so far
        best = min((a for a in cand if a not in picked), key=lambda a: _trace_after(cov, noise, [*picked, a]))
        picked.append(int(best))
    assert order.tolist() == picked
    assert 1 not in order.tolist()


def test_variance_reduction_strategy_needs_draws_and_skips_unavailable_arms():
    r = fit_surface(ArmCounts.from_arrays([50, 0, 2, 0], [40, 0, 1, 0]), estimator="beta-i", seed=0)
    chosen = choose_arms(r, np.array([True, True, True, False]), 2, "variance-reduction")
    assert set(chosen.tolist()) <= {0, 1, 2} and len(chosen) == 2
    assert 1 in chosen.tolist()  # an arm with no labels: the most uncertain, and nothing else answers for it
