"""The confidence-informed Bayesian estimate: EB fast path vs NUTS, and simulations with known truth."""

import numpy as np
import pytest
from scipy import special

from pbassess.errors import ConfigError
from pbassess.estimation import bayes_estimate, cell_counts, fit_confidence_prior
from pbassess.estimation.eb import marginal_log_likelihood


def _pool(seed, n_items=6000, n_groups=3, offset=0.0, slope=1.0, strength=300.0, label_share=0.05):
    """Pool whose bins' true accuracies follow the model: Beta(mu tau, (1 - mu) tau) around the confidence."""
    rng = np.random.default_rng(seed)
    conf = rng.beta(6, 1.5, n_items).clip(0.3, 0.999)
    group = rng.integers(0, n_groups, n_items)
    edges = np.quantile(conf, np.linspace(0, 1, 11)[1:-1])
    cell = group * 10 + np.searchsorted(edges, conf, side="right")
    mean_conf = np.bincount(cell, conf, minlength=n_groups * 10) / np.maximum(np.bincount(cell, minlength=n_groups * 10), 1)
    mu = special.expit(offset + slope * special.logit(np.clip(mean_conf, 1e-4, 1 - 1e-4)))
    theta = rng.beta(mu * strength, (1 - mu) * strength)
    correct = rng.random(n_items) < theta[cell]
    labeled = rng.random(n_items) < label_share
    return conf, group, labeled, correct


def test_marginal_likelihood_matches_scipy_betabinom():
    from scipy.stats import betabinom

    n, k, c = np.array([10, 4, 30]), np.array([7, 1, 29]), np.array([0.7, 0.4, 0.95])
    params = np.array([0.3, 0.8, np.log(12.0)])
    mu = special.expit(0.3 + 0.8 * special.logit(c))
    ref = betabinom.logpmf(k, n, mu * 12, (1 - mu) * 12) - np.log(special.comb(n, k))
    assert marginal_log_likelihood(params, n, k, c) == pytest.approx(ref.sum(), abs=1e-9)


def test_well_calibrated_model_gets_a_strong_prior_and_a_narrow_interval():
    # 30 cells x ~60 labels: enough to tell tau = 1000 from the hyperprior's median 20
    conf, group, labeled, correct = _pool(0, strength=1000.0, label_share=0.3)
    cells = cell_counts(conf, group, 3, labeled, correct)
    fit = fit_confidence_prior(cells.n, cells.correct, cells.mean_conf)
    assert abs(float(fit.offset)) < 0.4 and abs(float(fit.slope) - 1) < 0.4
    assert float(fit.strength) > 100
    out = bayes_estimate(cells, seed=0)
    truth = np.bincount(group, correct, minlength=3) / np.bincount(group, minlength=3)
    lo, hi = out["ci"].T
    assert np.all((lo <= truth) & (truth <= hi))
    # narrower than a Wilson interval from the same labels
    n_lab = np.bincount(group, labeled, minlength=3)
    assert np.all(hi - lo < 2 * 1.96 * np.sqrt(0.25 / n_lab) * 0.7)


def test_miscalibrated_model_is_corrected():
    """Overconfident model: true logit accuracy = logit(confidence) - 1. The fit recovers the offset
    and the Bayesian estimate covers the truth while the label-free estimate (mean confidence) is off."""
    conf, group, labeled, correct = _pool(1, offset=-1.0, strength=500.0, label_share=0.1)
    cells = cell_counts(conf, group, 3, labeled, correct)
    fit = fit_confidence_prior(cells.n, cells.correct, cells.mean_conf)
    assert float(fit.offset) == pytest.approx(-1.0, abs=0.35)
    out = bayes_estimate(cells, seed=1)
    truth = np.bincount(group, correct, minlength=3) / np.bincount(group, minlength=3)
    label_free = np.bincount(group, conf, minlength=3) / np.bincount(group, minlength=3)
    lo, hi = out["ci"].T
    assert np.all((lo <= truth) & (truth <= hi))
    assert np.all(np.abs(label_free - truth) > 0.05)
    assert np.all(np.abs(out["mean"] - truth) < np.abs(label_free - truth))


def test_weak_prior_when_confidence_does_not_predict_accuracy():
    rng = np.random.default_rng(3)
    mean_conf = rng.uniform(0.6, 0.95, 40)
    theta = rng.uniform(0.3, 0.99, 40)  # unrelated to the confidence
    n = np.full(40, 50)
    fit = fit_confidence_prior(n, rng.binomial(n, theta), mean_conf)
    assert float(fit.strength) < 15


def test_batched_fit_equals_separate_fits():
    rng = np.random.default_rng(5)
    c = rng.uniform(0.5, 0.99, 20)
    n = rng.integers(0, 40, (3, 20))
    k = rng.binomial(n, c)
    batch = fit_confidence_prior(n, k, c)
    for r in range(3):
        one = fit_confidence_prior(n[r], k[r], c)
        np.testing.assert_allclose([batch.offset[r], batch.slope[r], np.log(batch.strength[r])],
                                   [one.offset, one.slope, np.log(one.strength)], atol=2e-3)


@pytest.mark.slow
def test_coverage_of_the_fast_path_by_simulation():
    """Pools from the model, 4% labeled (~4 per cell); 90% HDIs of 3 group accuracies each.

    80 pools = 240 intervals (MC sd 0.019; 900 intervals gave 0.892); 0.84 is 3 sd below 0.9.
    The plug-in mode alone (no Laplace step) gave 0.71 here. One shared map (the pools are drawn
    from it); the region-offset path is checked in test_regional.py."""
    hits = total = 0
    for seed in range(80):
        conf, group, labeled, correct = _pool(100 + seed, n_items=3000, strength=80.0, label_share=0.04)
        cells = cell_counts(conf, group, 3, labeled, correct)
        out = bayes_estimate(cells, ci_prob=0.9, draws=250, seed=seed, region_offsets=False)  # 4 x 250
        truth = np.bincount(group, correct, minlength=3) / np.bincount(group, minlength=3)
        hits += int(np.sum((out["ci"][:, 0] <= truth) & (truth <= out["ci"][:, 1])))
        total += 3
    assert hits / total > 0.84


@pytest.mark.slow
def test_fast_path_agrees_with_nuts_on_the_same_counts():
    """With 30 cells and ~600 labels the hyperparameters are well determined, so the EB plug-in
    and the full NUTS posterior agree: means within 0.01, HDI bounds within 0.015 (Monte Carlo
    error of 500 NUTS draws on an HDI bound ~0.003)."""
    conf, group, labeled, correct = _pool(7, strength=200.0, label_share=0.1)
    cells = cell_counts(conf, group, 3, labeled, correct)
    fast = bayes_estimate(cells, seed=0)
    nuts = bayes_estimate(cells, inference="mcmc", seed=0,
                          sample_kwargs={"draws": 250, "tune": 250, "chains": 2})
    np.testing.assert_allclose(nuts["mean"], fast["mean"], atol=0.01)
    np.testing.assert_allclose(nuts["ci"], fast["ci"], atol=0.015)
    assert nuts["idata"] is not None and "offset" in nuts["idata"]["posterior"]
    assert nuts["prior"]["offset"] == pytest.approx(fast["prior"]["offset"], abs=0.3)


def test_bad_input():
    cells = cell_counts([0.9, 0.8], [0, 0], 1, [False, False], [0, 0], bins=1)
    with pytest.raises(ConfigError, match="at least one labeled"):
        bayes_estimate(cells)
    with pytest.raises(ConfigError, match="inference"):
        bayes_estimate(cell_counts([0.9], [0], 1, [True], [1], bins=1), inference="vi")
    with pytest.raises(ConfigError, match="correct <= n"):
        fit_confidence_prior([2], [3], [0.9])
