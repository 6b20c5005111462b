"""The one Beta-binomial log marginal likelihood (pbassess.stats.betabinom) against SciPy."""

import numpy as np
import pytest
from scipy import special
from scipy.stats import betabinom

from pbassess.stats import beta_binomial_log_marginal, beta_binomial_log_marginal_grad


def _cases():
    rng = np.random.default_rng(0)
    n = rng.integers(0, 200, 500)
    k = rng.binomial(n, rng.uniform(0, 1, 500))
    a = np.exp(rng.uniform(-3, 8, 500))          # from very weak to very strong priors
    b = np.exp(rng.uniform(-3, 8, 500))
    return k, n, a, b


def test_equals_scipy_betabinom_logpmf():
    k, n, a, b = _cases()
    np.testing.assert_allclose(beta_binomial_log_marginal(k, n, a, b), betabinom.logpmf(k, n, a, b),
                               rtol=1e-9, atol=1e-9)


def test_without_the_binomial_coefficient():
    k, n, a, b = _cases()
    log_coef = special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)
    np.testing.assert_allclose(beta_binomial_log_marginal(k, n, a, b, coefficient=False),
                               betabinom.logpmf(k, n, a, b) - log_coef, rtol=1e-9, atol=1e-9)


def test_batched_broadcasting_and_no_trials():
    k = np.array([[0, 3, 5], [1, 2, 0]])
    n = np.array([5, 5, 5])
    a = np.array([[1.0], [4.0]])
    out = beta_binomial_log_marginal(k, n, a, 2.0)
    assert out.shape == (2, 3)
    np.testing.assert_allclose(out, betabinom.logpmf(k, n, a, 2.0), rtol=1e-12)
    assert beta_binomial_log_marginal(0, 0, 3.0, 0.5) == 0.0  # no trials: probability one
    # the probabilities of k = 0..n sum to one
    assert np.exp(beta_binomial_log_marginal(np.arange(31), 30, 0.7, 2.5)).sum() == pytest.approx(1.0, abs=1e-12)


def test_strength_given_equals_strength_summed():
    k, n, a, b = _cases()
    np.testing.assert_allclose(beta_binomial_log_marginal(k, n, a, b, strength=a + b),
                               beta_binomial_log_marginal(k, n, a, b), rtol=0, atol=0)


def test_gradient_by_central_differences():
    k, n, a, b = _cases()
    da, db, dab = beta_binomial_log_marginal_grad(k, n, a, b)
    h_a, h_b = 1e-6 * a, 1e-6 * b
    num_a = (betabinom.logpmf(k, n, a + h_a, b) - betabinom.logpmf(k, n, a - h_a, b)) / (2 * h_a)
    num_b = (betabinom.logpmf(k, n, a, b + h_b) - betabinom.logpmf(k, n, a, b - h_b)) / (2 * h_b)
    # rounding error of the differences: ~|logpmf| * 1e-16 / h with h = 1e-6 a, up to ~1e-5 for the
    # strongest priors (a ~ 3000, |logpmf| ~ 10); the analytic gradient is exact
    tol = 1e-9 * np.abs(betabinom.logpmf(k, n, a, b)) / np.minimum(h_a, h_b) + 1e-6
    assert np.all(np.abs(da + dab - num_a) <= tol + 1e-4 * np.abs(num_a))
    assert np.all(np.abs(db + dab - num_b) <= tol + 1e-4 * np.abs(num_b))
