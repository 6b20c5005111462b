"""The shrinkage calibration model: integration engine vs NUTS, prior-only check, and the decision "calibrated"."""

from __future__ import annotations

import numpy as np
import pytest

from pbassess.calibration.posterior import calibration_decision, pool_bins
from pbassess.calibration.shrinkage import MU_SCALE, TAU_SCALE, shrinkage_model, shrinkage_posterior
from pbassess.calibration.simulate import synthetic_pool
from pbassess.errors import ConfigError


def test_without_labels_the_posterior_is_the_prior():
    from scipy.integrate import quad
    from scipy.stats import norm

    post = shrinkage_posterior([0, 0], [0, 0], [0.7, 0.9], [0.5, 0.5], n_draws=20000, seed=1)

    def horseshoe_cdf(x):  # P(|mu| < x), mu ~ Normal(0, lam), lam ~ HalfCauchy(MU_SCALE)
        return quad(lambda lam: 2 / (np.pi * MU_SCALE * (1 + (lam / MU_SCALE) ** 2)) * (2 * norm.cdf(x / lam) - 1),
                    0, np.inf, limit=200)[0]

    # 20,000 draws: Monte Carlo SE <= 0.0035; the grid keeps |mu| <= 4 (0.6% of the prior mass is beyond)
    for x in (0.01, 0.03, 0.1, 0.3):
        assert np.mean(np.abs(post["mu"]) < x) == pytest.approx(horseshoe_cdf(x), abs=0.015), x
    # tau takes the values of its log grid (11% apart): the half-Cauchy's median is its scale
    assert np.median(post["tau"]) == pytest.approx(TAU_SCALE, rel=0.12)
    # delta = mu + tau z: its spread is at least mu's
    assert np.quantile(np.abs(post["delta"][:, 0]), 0.5) >= np.quantile(np.abs(post["mu"]), 0.5)


def test_posterior_concentrates_on_the_truth_with_many_labels():
    # 4 bins, true logit shift -0.4 everywhere (overconfident), 20,000 labels per bin
    s = np.array([0.6, 0.7, 0.8, 0.9])
    theta = 1 / (1 + np.exp(-(np.log(s / (1 - s)) - 0.4)))
    n = np.full(4, 20000)
    k = np.round(n * theta).astype(int)
    post = shrinkage_posterior(n, k, s, np.full(4, 0.25), n_draws=4000, seed=2)
    assert post["mu"].mean() == pytest.approx(-0.4, abs=0.03)
    true_ece = np.mean(np.abs(theta - s))
    assert post["ece"].mean() == pytest.approx(true_ece, abs=0.003)


@pytest.mark.slow
def test_integration_engine_agrees_with_nuts():
    from pbassess.pymc_models.accuracy import sample_posterior

    n = np.array([20, 60, 150, 300, 500])
    k = np.array([10, 40, 115, 255, 470])
    s = np.array([0.55, 0.65, 0.75, 0.85, 0.95])
    w = np.array([0.1, 0.15, 0.2, 0.25, 0.3])
    quad = shrinkage_posterior(n, k, s, w, n_draws=8000, seed=3)
    idata = sample_posterior(shrinkage_model(n, k, s, w), seed=4,
                             sample_kwargs={"draws": 300, "tune": 300, "chains": 2, "target_accept": 0.95})
    import arviz as az

    ece = idata["posterior"]["ece"].to_numpy().ravel()
    ess = float(az.ess(idata, var_names=["ece"])["ece"])
    se = np.sqrt(ece.var() / ess + quad["ece"].var() / 8000)
    assert abs(ece.mean() - quad["ece"].mean()) < 4 * se
    mu = idata["posterior"]["mu"].to_numpy().ravel()
    ess_mu = float(az.ess(idata, var_names=["mu"])["mu"])
    assert abs(mu.mean() - quad["mu"].mean()) < 4 * np.sqrt(mu.var() / ess_mu + quad["mu"].var() / 8000)
    for eps in (0.02, 0.05):
        assert abs(np.mean(ece < eps) - np.mean(quad["ece"] < eps)) < 0.08


def _decide(pool, n, seed):
    idx, correct = pool.draw_labels(n, seed=seed)
    labeled = np.zeros(pool.confidence.size, bool)
    labeled[idx] = True
    y = np.zeros(pool.confidence.size, bool)
    y[idx] = correct
    return calibration_decision(pool_bins(pool.confidence, y, labeled), n_draws=1500, seed=seed)


@pytest.mark.slow
def test_decision_right_for_synthetic_models_from_2000_labels():
    """A small version of benchmarks/calibration_decision.py (20 repetitions there: 95-100% right)."""
    calibrated = synthetic_pool(20_000, "calibrated", seed=0)
    miscalibrated = synthetic_pool(20_000, "shifted", 0.05, seed=0)
    assert calibrated.true_ece() == 0.0 and miscalibrated.true_ece() == pytest.approx(0.05)
    said = [_decide(calibrated, n, seed)["calibrated"] for n in (2000, 10000) for seed in (1, 2, 3)]
    assert sum(said) >= 5  # at most one miss in six (the benchmark measures 95% right at 2,000 labels)
    assert not any(_decide(miscalibrated, n, seed)["calibrated"] for n in (2000, 10000) for seed in (1, 2))


@pytest.mark.slow
def test_decision_never_calls_cifar100_calibrated(cifar100):
    class Pool:
        confidence = cifar100.confidence

        @staticmethod
        def draw_labels(n, seed):
            idx = np.random.default_rng(seed).choice(cifar100.n_items, size=n, replace=False)
            return idx, cifar100.correct[idx]

    for n in (100, 500, 2000, 10000):
        out = _decide(Pool, n, seed=n)
        assert not out["calibrated"], n
        assert out["decision"] == ("too few labels" if n < 1000 else "not calibrated")
        if n >= 500:  # from 500 labels on the posterior puts most of its mass above 0.02
            assert out["p_below"][0.02] < 0.2, n


def test_bad_bins_are_config_errors():
    with pytest.raises(ConfigError, match="0 <= correct <= n"):
        shrinkage_posterior([5], [6], [0.5], [1.0])
    with pytest.raises(ConfigError, match="strictly between"):
        shrinkage_posterior([5], [3], [1.0], [1.0])
    with pytest.raises(ConfigError, match="sum to one"):
        shrinkage_posterior([5], [3], [0.5], [0.5])
