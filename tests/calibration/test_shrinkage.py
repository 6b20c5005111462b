"""The shrinkage calibration model: integration engine vs NUTS, prior-only check, and the decision "calibrated"."""

from __future__ import annotations

import numpy as np
import pytest

from pbassess.calibration.posterior import calibration_decision, pool_bins
from pbassess.calibration.shrinkage import MU_SCALE, P_CALIBRATED, TAU_SCALE, shrinkage_posterior
from pbassess.calibration.simulate import synthetic_pool
from pbassess.errors import ConfigError


def test_without_labels_the_posterior_is_the_prior():
    from scipy.stats import norm

    post = shrinkage_posterior([0, 0], [0, 0], [0.7, 0.9], [0.5, 0.5], n_draws=20000, seed=1)
    # no data: P(spike) is its prior probability, but for the slab's prior mass outside the grid's
    # |delta| <= 4 (tau's Cauchy tail: about 4% here), which any labels give a likelihood of ~0
    assert P_CALIBRATED <= post["p_spike"] <= P_CALIBRATED / (P_CALIBRATED + (1 - P_CALIBRATED) * 0.94)
    # 20,000 draws: Monte Carlo SE of a share <= 0.0035
    assert post["spike"].mean() == pytest.approx(post["p_spike"], abs=0.012)
    assert np.all(post["ece"][post["spike"]] == 0) and np.all(post["ece"][~post["spike"]] > 0)
    slab = ~post["spike"]
    for x in (0.1, 0.3, 0.6):  # mu ~ Normal(0, MU_SCALE) on the slab (the grid keeps |mu| <= 4)
        assert np.mean(np.abs(post["mu"][slab]) < x) == pytest.approx(2 * norm.cdf(x / MU_SCALE) - 1, abs=0.015), x
    # tau takes the values of its log grid (11% apart): the half-Cauchy's median is its scale
    assert np.median(post["tau"][slab]) == pytest.approx(TAU_SCALE, rel=0.12)


def test_spike_probability_is_the_bayes_factor_against_a_slab_without_spread():
    # one bin: the slab's marginal likelihood is a 1-D integral over mu (tau only spreads one bin's delta
    # around mu, so delta ~ Normal(0, sqrt(MU_SCALE^2 + tau^2)), integrated over tau ~ HalfCauchy)
    from scipy.integrate import quad
    from scipy.special import expit, logit
    from scipy.stats import binom, norm

    n, k, s = 400, 300, 0.8
    def slab_density(d):
        return quad(lambda t: 2 / (np.pi * TAU_SCALE * (1 + (t / TAU_SCALE) ** 2))
                    * norm.pdf(d, 0, np.sqrt(MU_SCALE**2 + t**2)), 0, np.inf, limit=200)[0]
    slab = quad(lambda d: binom.pmf(k, n, expit(logit(s) + d)) * slab_density(d), -3, 3, limit=200, points=[-0.3])[0]
    spike = binom.pmf(k, n, s)
    expected = P_CALIBRATED * spike / (P_CALIBRATED * spike + (1 - P_CALIBRATED) * slab)
    post = shrinkage_posterior([n], [k], [s], [1.0], n_draws=2000, seed=0)
    # the grid's cells (0.0025 logit, tau on an 11% log grid) move it by well under 2% relative
    assert post["p_spike"] == pytest.approx(expected, rel=0.02)


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
    import arviz as az

    from pbassess.calibration.shrinkage import sample_shrinkage

    n = np.array([20, 60, 150, 300, 500])
    k = np.array([10, 40, 115, 255, 470])
    s = np.array([0.55, 0.65, 0.75, 0.85, 0.95])
    w = np.array([0.1, 0.15, 0.2, 0.25, 0.3])
    quad = shrinkage_posterior(n, k, s, w, n_draws=8000, seed=3)
    idata = sample_shrinkage(n, k, s, w, seed=4, sample_kwargs={"draws": 300, "tune": 300, "chains": 2})
    post = idata["posterior"]
    ece = post["ece"].to_numpy().ravel()
    ess = float(az.ess(post["ece"].to_dataset(name="ece"))["ece"])
    se = np.sqrt(ece.var() / ess + quad["ece"].var() / 8000)
    assert abs(ece.mean() - quad["ece"].mean()) < 4 * se
    # P(spike | data): the mean over NUTS draws of p_spike given the slab's parameters
    p_spike = post["p_spike"].to_numpy().ravel()
    ess_p = float(az.ess(post["p_spike"].to_dataset(name="p"))["p"])
    assert abs(p_spike.mean() - quad["p_spike"]) < 4 * np.sqrt(p_spike.var() / ess_p) + 0.01
    slab = ~quad["spike"]
    mu = post["mu"].to_numpy().ravel()
    ess_mu = float(az.ess(post["mu"].to_dataset(name="mu"))["mu"])
    # the slab's mu under NUTS is weighted by 1 - p_spike relative to the grid's slab draws
    weights = 1 - p_spike
    mu_nuts = np.sum(weights * mu) / weights.sum()
    assert abs(mu_nuts - quad["mu"][slab].mean()) < 4 * np.sqrt(mu.var() / ess_mu + quad["mu"][slab].var() / slab.sum())
    for eps in (0.02, 0.05):
        assert abs(np.mean(ece < eps) - np.mean(quad["ece"] < eps)) < 0.08


@pytest.mark.slow
def test_hdi_covers_the_true_ece_at_500_labels():
    """A small version of ``benchmarks/calibration_decision.py --coverage`` (issue 20).

    12 simulations per true ECE (0, 0.03, 0.05), 500 labels, a 20,000-item synthetic pool: the
    benchmark measures coverage 0.90-1.00 with 30 simulations each; the old prior (horseshoe
    scales 0.03 / 0.02) gave 27/40 and 29/40 at 0.03 and 0.05. With coverage 0.9 the chance of
    9 or fewer hits in 12 is 0.11, of 8 or fewer 0.026: at least 9 of 12 each, and at least 32
    of 36 together (P = 0.09 at coverage 0.9; 0.0004 at the old 0.7).
    """
    from pbassess.stats import hdi_from_draws

    hits_total = 0
    for delta in (0.0, 0.03, 0.05):
        pool = synthetic_pool(20_000, "shifted", delta, seed=0)
        truth = pool.true_ece()
        hits = 0
        for r in range(12):
            idx, correct = pool.draw_labels(500, seed=500 + r)
            labeled = np.zeros(pool.confidence.size, bool)
            labeled[idx] = True
            y = np.zeros(pool.confidence.size, bool)
            y[idx] = correct
            b = pool_bins(pool.confidence, y, labeled)
            ece = shrinkage_posterior(b["n"], b["correct"], b["bin_score"], b["bin_weight"], n_draws=1000, seed=r,
                                      grid_step=0.01)["ece"]
            lo, hi = hdi_from_draws(ece, 0.95)
            hits += bool(lo <= truth <= hi)
        assert hits >= 9, (delta, hits)
        hits_total += hits
    assert hits_total >= 32


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


def test_a_coarse_grid_moves_the_probabilities_little(rng):
    # the operating characteristics refit on a delta grid of step 0.02 (8 x coarser than the default)
    s = np.linspace(0.15, 0.95, 10)
    n = np.array([5, 10, 20, 30, 50, 60, 80, 100, 150, 300])
    for delta in (0.0, 0.01, 0.03):
        k = rng.binomial(n, s - delta)
        fine = shrinkage_posterior(n, k, s, n / n.sum(), n_draws=4000, seed=0)
        coarse = shrinkage_posterior(n, k, s, n / n.sum(), n_draws=4000, seed=0, grid_step=0.02)
        assert coarse["p_spike"] == pytest.approx(fine["p_spike"], abs=0.01)
        for eps in (0.01, 0.02, 0.05):
            # 4,000 draws each: Monte Carlo SE of the difference <= 0.011; measured differences <= 0.01
            assert np.mean(coarse["ece"] < eps) == pytest.approx(np.mean(fine["ece"] < eps), abs=0.04)
