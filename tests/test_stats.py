"""Closed-form checks of the conjugate statistics layer (pbassess.stats)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from pbassess.errors import ConfigError
from pbassess.stats import (
    beta_draws,
    beta_hdi,
    beta_posterior,
    beta_prior,
    dirichlet_draws,
    ece_from_draws,
    frequentist_ece,
    hdi_from_draws,
    prob_extreme,
    prob_in_extreme_m,
    rank_draws,
)


@pytest.mark.parametrize(("a", "b"), [(2.0, 3.0), (30.5, 4.2), (101.0, 31.0), (1.5, 1.5)])
def test_beta_hdi_is_the_equal_density_interval_of_the_right_mass(a, b):
    lo, hi = beta_hdi(a, b, 0.9)
    dist = stats.beta(a, b)
    assert dist.cdf(hi) - dist.cdf(lo) == pytest.approx(0.9, abs=1e-7)
    # For a unimodal density the HDI endpoints have equal density.
    assert dist.pdf(lo) == pytest.approx(dist.pdf(hi), rel=1e-4)


def test_beta_hdi_of_monotone_densities_touches_the_boundary():
    lo, hi = beta_hdi(1.0, 5.0, 0.8)
    assert lo == 0.0 and hi == pytest.approx(stats.beta(1, 5).ppf(0.8))
    lo, hi = beta_hdi(5.0, 1.0, 0.8)
    assert hi == 1.0 and lo == pytest.approx(stats.beta(5, 1).ppf(0.2))


def test_beta_hdi_is_vectorised_and_rejects_bad_mass():
    out = beta_hdi(np.array([2.0, 10.0]), np.array([2.0, 1.0]), 0.5)
    assert out.shape == (2, 2)
    with pytest.raises(ConfigError, match="credible mass"):
        beta_hdi(2.0, 2.0, 1.5)


def test_beta_prior_forms():
    a, b = beta_prior("uniform", 3, pseudocount=2)
    assert a.tolist() == [1, 1, 1] and b.tolist() == [1, 1, 1]
    a, b = beta_prior("informed", 2, pseudocount=4, mean=[0.75, 0.5])
    np.testing.assert_allclose(a, [3.0, 2.0])
    np.testing.assert_allclose(b, [1.0, 2.0])
    with pytest.raises(ConfigError, match="pseudocount"):
        beta_prior("uniform", 2, pseudocount=0)
    with pytest.raises(ConfigError, match="unknown prior"):
        beta_prior("flat", 2)
    with pytest.raises(ConfigError, match="mean confidence"):
        beta_prior("informed", 2)


def test_beta_posterior_conjugate_update_and_validation():
    a, b = beta_posterior([3, 0], [10, 0], [1.0, 2.0], [1.0, 2.0])
    assert a.tolist() == [4.0, 2.0] and b.tolist() == [8.0, 2.0]
    with pytest.raises(ConfigError, match="between 0 and the number of trials"):
        beta_posterior([5], [3], [1.0], [1.0])


def test_beta_draws_match_the_closed_form_moments():
    a, b = np.array([2.0, 40.0, 0.5]), np.array([5.0, 10.0, 0.5])
    d = beta_draws(a, b, 40_000, seed=1)
    mean = a / (a + b)
    var = a * b / ((a + b) ** 2 * (a + b + 1))
    # 5 standard errors of a Monte Carlo mean over 40,000 independent draws.
    np.testing.assert_array_less(np.abs(d.mean(axis=0) - mean), 5 * np.sqrt(var / 40_000))
    assert np.all((d >= 0) & (d <= 1))


def test_draws_are_reproducible_from_a_seed():
    np.testing.assert_array_equal(beta_draws([2, 3], [4, 5], 10, seed=9), beta_draws([2, 3], [4, 5], 10, seed=9))
    g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
    np.testing.assert_array_equal(dirichlet_draws([[1, 2, 3]], 5, g1), dirichlet_draws([[1, 2, 3]], 5, g2))


def test_beta_draws_reject_non_positive_parameters():
    with pytest.raises(ConfigError, match="positive"):
        beta_draws([0.0], [1.0], 10, seed=0)
    with pytest.raises(ConfigError, match="one shape"):
        beta_draws([1.0, 2.0], [1.0], 10, seed=0)


def test_dirichlet_draws_match_the_closed_form_means():
    alpha = np.array([[1.0, 2.0, 7.0], [5.0, 5.0, 10.0]])
    d = dirichlet_draws(alpha, 40_000, seed=2)
    assert d.shape == (40_000, 2, 3)
    np.testing.assert_allclose(d.sum(axis=-1), 1.0, atol=1e-12)
    mean = alpha / alpha.sum(axis=1, keepdims=True)
    a0 = alpha.sum(axis=1, keepdims=True)
    sd = np.sqrt(mean * (1 - mean) / (a0 + 1))
    np.testing.assert_array_less(np.abs(d.mean(axis=0) - mean), 5 * sd / np.sqrt(40_000))


def test_hdi_from_draws_agrees_with_the_exact_beta_hdi():
    d = beta_draws([20.0, 3.0], [5.0, 9.0], 200_000, seed=3)
    exact = beta_hdi(np.array([20.0, 3.0]), np.array([5.0, 9.0]), 0.9)
    # With 200k draws the empirical quantiles near the HDI ends move by ~1e-3.
    np.testing.assert_allclose(hdi_from_draws(d, 0.9), exact, atol=4e-3)


def test_rankings_on_hand_examples():
    draws = np.array([[0.1, 0.5, 0.3], [0.6, 0.2, 0.1], [0.2, 0.4, 0.9], [0.3, 0.1, 0.2]])
    assert rank_draws(draws)[0].tolist() == [1, 3, 2]
    assert rank_draws(draws, lowest_first=False)[0].tolist() == [3, 1, 2]
    np.testing.assert_allclose(prob_extreme(draws), [0.5, 0.25, 0.25])
    np.testing.assert_allclose(prob_extreme(draws, lowest=False), [0.5, 0.25, 0.25])
    np.testing.assert_allclose(prob_extreme(draws, valid=[True, True, False]), [0.5, 0.5, 0.0])
    # lowest two per draw: {0,2}, {1,2}, {0,1}, {1,2}
    np.testing.assert_allclose(prob_in_extreme_m(draws, 2), [0.5, 0.75, 0.75])
    np.testing.assert_allclose(prob_in_extreme_m(draws, 3), [1.0, 1.0, 1.0])


def test_ece_of_draws_and_frequentist_ece():
    theta = np.array([[0.2, 0.9], [0.4, 0.7]])
    # 0.25*|0.2-0.3| + 0.75*|0.9-0.8| = 0.1 and 0.25*|0.4-0.3| + 0.75*|0.7-0.8| = 0.1
    np.testing.assert_allclose(ece_from_draws(theta, [0.25, 0.75], [0.3, 0.8]), [0.1, 0.1])
    # bins: (n=4, 2 correct, mean score 0.75), (n=0), (n=6, 6 correct, mean score 0.9)
    assert frequentist_ece([4, 0, 6], [2, 0, 6], [3.0, 0.0, 5.4]) == pytest.approx(0.4 * 0.25 + 0.6 * 0.1)
    assert np.isnan(frequentist_ece([0, 0], [0, 0], [0.0, 0.0]))


def test_a_shared_generator_advances_between_calls():
    g = np.random.default_rng(0)
    first, second = beta_draws([1.0, 2.0], [1.0, 2.0], 5, g), beta_draws([1.0, 2.0], [1.0, 2.0], 5, g)
    assert not np.array_equal(first, second)
    d1, d2 = dirichlet_draws([[1.0, 1.0]], 5, g), dirichlet_draws([[1.0, 1.0]], 5, g)
    assert not np.array_equal(d1, d2)


def test_ranking_helpers_respect_valid_regions():
    draws = np.array([[0.1, 0.5, 0.3], [0.6, 0.2, 0.1]])
    np.testing.assert_allclose(prob_extreme(draws, valid=[False, False, False]), [0.0, 0.0, 0.0])
    np.testing.assert_allclose(prob_in_extreme_m(draws, 1, valid=[False, True, True]), [0.0, 0.0, 1.0])


def test_beta_hdi_vectorised_matches_a_grid_search():
    a = np.array([3.0, 50.0, 200.0, 1.2])
    b = np.array([7.0, 2.0, 180.0, 30.0])
    out = beta_hdi(a, b, 0.95)
    for i in range(a.size):
        u = np.linspace(0, 0.05, 20001)
        widths = stats.beta.ppf(u + 0.95, a[i], b[i]) - stats.beta.ppf(u, a[i], b[i])
        best = u[np.nanargmin(widths)]
        np.testing.assert_allclose(out[i], stats.beta.ppf([best, best + 0.95], a[i], b[i]), atol=2e-5)
