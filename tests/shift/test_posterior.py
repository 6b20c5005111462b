"""Posteriors of shift metrics against closed forms and simulations with known truth."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from pbassess.errors import ConfigError
from pbassess.metrics.posterior import ece_draws
from pbassess.shift import posterior as P


def test_accuracy_draws_match_the_beta_posterior():
    d = P.accuracy_draws([70, 5], [100, 10], 40_000, seed=0)
    a, b = np.array([71.0, 6.0]), np.array([31.0, 6.0])
    mean, var = a / (a + b), a * b / ((a + b) ** 2 * (a + b + 1))
    # Monte Carlo error of the mean: sd / sqrt(40000) < 0.0008; 4 standard errors
    assert np.all(np.abs(d.mean(axis=0) - mean) < 4 * np.sqrt(var / 40_000))
    np.testing.assert_allclose(d.var(axis=0), var, rtol=0.05)


def test_bayesian_bootstrap_moments_are_the_closed_form():
    rng = np.random.default_rng(1)
    x = rng.gamma(2.0, 1.5, size=50)
    d = P.bayesian_bootstrap_mean(x, 40_000, seed=2)
    var = x.var() / (x.size + 1)  # Var(sum w_i x_i), w ~ Dirichlet(1_N)
    assert d.mean() == pytest.approx(x.mean(), abs=4 * np.sqrt(var / 40_000))
    assert d.var() == pytest.approx(var, rel=0.05)  # sd of a variance estimate ~ sqrt(2/40000) = 0.7 %


def test_bayesian_bootstrap_joint_columns_share_weights():
    x = np.column_stack([np.arange(10.0), 2 * np.arange(10.0) + 1])
    d = P.bayesian_bootstrap_mean(x, 500, seed=3)
    np.testing.assert_allclose(d[:, 1], 2 * d[:, 0] + 1, atol=1e-12)


def test_bootstrap_covers_the_true_mean_at_the_nominal_rate():
    """Simulation with known truth: 95 % central intervals of the mean of Exp(1) samples (n=200)."""
    rng = np.random.default_rng(4)
    hits = 0
    for _ in range(200):
        x = rng.exponential(1.0, size=200)
        d = P.bayesian_bootstrap_mean(x, 1000, seed=rng)
        lo, hi = np.quantile(d, [0.025, 0.975])
        hits += lo <= 1.0 <= hi
    # binomial sd at 200 trials: 1.5 %; the bootstrap is slightly narrow for skewed data
    assert 0.88 <= hits / 200 <= 0.99


def test_ece_draws_concentrate_on_the_true_gap():
    # one bin holding 5000 items of confidence 0.9 whose true accuracy is 0.8: ECE -> 0.1
    rng = np.random.default_rng(5)
    correct = int((rng.random(5000) < 0.8).sum())
    d = ece_draws([0, 5000], [0, correct], [0.0, 4500.0], 4000, seed=6)
    assert d.mean() == pytest.approx(0.1, abs=3 * np.sqrt(0.16 / 5000))


def test_ece_of_a_calibrated_model_is_small():
    rng = np.random.default_rng(7)
    conf = rng.uniform(0.5, 1.0, size=20_000)
    correct = rng.random(conf.size) < conf
    from pbassess.stats.counts import bin_edges, binned_counts

    c = binned_counts(conf, correct, bin_edges(bins=10))
    d = ece_draws(c["n"], c["correct"], c["score_sum"], 2000, seed=8)
    assert d.mean() < 0.015  # bias of |theta - s| at ~4000 items per bin is about 0.006


def test_prob_worsens_two_levels_equals_the_beta_integral():
    # P(theta_2 < theta_1) for Beta posteriors, by numerical integration
    a1, b1, a2, b2 = 81.0, 21.0, 71.0, 31.0
    exact = integrate.quad(lambda t: stats.beta.pdf(t, a1, b1) * stats.beta.cdf(t, a2, b2), 0, 1)[0]
    d = P.accuracy_draws([80, 70], [100, 100], 40_000, seed=9)
    r = P.prob_worsens(d, higher_is_worse=False)
    assert r["step"][0] == pytest.approx(exact, abs=4 * np.sqrt(exact * (1 - exact) / 40_000))
    assert r["monotone"] == r["step"][0] == r["first_to_last"]


def test_prob_worsens_is_calibrated_on_simulations_with_no_shift():
    """Known truth: with equal accuracy at both levels P(worse) is uniform over repetitions."""
    rng = np.random.default_rng(10)
    probs = []
    for _ in range(300):
        k = rng.binomial(400, 0.85, size=2)
        probs.append(P.prob_worsens(P.accuracy_draws(k, [400, 400], 400, seed=rng), higher_is_worse=False)["step"][0])
    probs = np.array(probs)
    assert abs(probs.mean() - 0.5) < 0.06  # sd of the mean of 300 uniforms: 0.017
    assert abs((probs > 0.95).mean() - 0.05) < 0.04


def test_prob_worsens_validates_shape():
    with pytest.raises(ConfigError, match="at least two levels"):
        P.prob_worsens(np.zeros((10, 1)))


def _ece_counts(rng, n, overconfidence):
    from pbassess.stats.counts import bin_edges, binned_counts

    conf = rng.uniform(0.5, 1.0, size=n)
    correct = rng.random(n) < np.clip(conf - overconfidence, 0, 1)
    return binned_counts(conf, correct, bin_edges(bins=10))


def test_prob_ece_worsens_detects_growing_miscalibration():
    """Known truth: the true ECE is 0 at level 1 and 0.1 at level 2."""
    rng = np.random.default_rng(11)
    a, b = _ece_counts(rng, 3000, 0.0), _ece_counts(rng, 3000, 0.1)
    draws = np.column_stack([ece_draws(c["n"], c["correct"], c["score_sum"], 2000, seed=rng) for c in (a, b)])
    assert P.prob_worsens(draws)["step"][0] > 0.99


def test_prob_ece_worsens_is_undecided_without_shift():
    """Known truth: both levels equally (mildly) miscalibrated; P(worse) averages 1/2 over repetitions."""
    rng = np.random.default_rng(12)
    probs = []
    for _ in range(60):
        a, b = _ece_counts(rng, 2000, 0.05), _ece_counts(rng, 2000, 0.05)
        d = np.column_stack([ece_draws(c["n"], c["correct"], c["score_sum"], 500, seed=rng) for c in (a, b)])
        probs.append(P.prob_worsens(d)["step"][0])
    # sd of the mean of 60 roughly uniform values: 0.037; 3 sd
    assert abs(np.mean(probs) - 0.5) < 0.12
