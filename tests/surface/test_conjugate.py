"""Closed-form estimators, arm counting, pooling and error metrics."""

import numpy as np
import pytest
from scipy import stats

from pbassess import Predictions
from pbassess.errors import ConfigError, DataError
from pbassess.surface import ArmCounts, count_arms, fit_surface
from pbassess.surface.conjugate import beta_mixture_summary, pool_sparse_counts
from pbassess.surface.evaluate import interval_coverage, surface_errors


def _pool():
    return Predictions.from_binary_scores(
        [0.9, 0.8, 0.3, 0.7, 0.6, 0.4, 0.2], [1, 0, 0, 1, -1, 1, 0],
        groups={"sex": [1, 1, 2, 2, 2, 1, 1], "dis": [0, 1, 0, 0, 0, 0, 1]})


def test_count_arms_by_hand():
    arms = count_arms(_pool(), ["sex", "dis"])
    assert arms.values.tolist() == [[1, 0], [1, 1], [2, 0]]
    assert arms.pool_n.tolist() == [2, 2, 3]
    assert arms.n.tolist() == [2, 2, 2]  # item 5 (sex 2) is unlabeled
    # predicted = score >= 0.5: items 0 (1,1) ok, 5 (0 vs 1) wrong; 1 (1 vs 0) wrong, 6 (0,0) ok;
    # sex 2: 2 (0,0) ok, 3 (1,1) ok
    assert arms.correct.tolist() == [1, 1, 2]
    conf = np.array([0.9, 0.8, 0.7, 0.7, 0.6, 0.6, 0.8])
    assert np.allclose(arms.confidence, [(0.9 + 0.6) / 2, (0.8 + 0.8) / 2, (0.7 + 0.7 + 0.6) / 3])
    assert conf.shape == (7,)


def test_fractional_counts_from_arm_probabilities():
    p = _pool()
    w = np.tile([0.25, 0.75], (p.n_items, 1))
    arms = count_arms(p, ["sex"], arm_probs=w, arm_values=[[1], [2]])
    assert np.allclose(arms.pool_n, [7 * 0.25, 7 * 0.75])
    assert np.allclose(arms.n, [1.5, 4.5]) and np.allclose(arms.correct, [1.0, 3.0])


def test_bad_attributes_are_one_line_errors():
    with pytest.raises(DataError, match="attribute column 'age' not found"):
        count_arms(_pool(), ["age"])
    with pytest.raises(ConfigError, match="at least one attribute"):
        count_arms(_pool(), [])
    with pytest.raises(ConfigError, match="unknown estimator"):
        fit_surface(ArmCounts.from_arrays([1], [1]), estimator="gp")
    with pytest.raises(ConfigError, match="no conjugate form"):
        fit_surface(ArmCounts.from_arrays([1], [1]), estimator="additive", inference="conjugate")


def test_beta_i_matches_closed_form_and_hdi():
    arms = ArmCounts.from_arrays([1, 20, 0, 5], [0, 15, 0, 5])
    r = fit_surface(arms, estimator="beta-i", ci_prob=0.9)
    p0 = 20 / 26
    a = np.array([0, 15, 0, 5]) + 0.1 * p0
    b = np.array([1, 5, 0, 0]) + 0.1 * (1 - p0)
    assert np.allclose(r.mean, a / (a + b))
    assert np.allclose(r.var, stats.beta(a, b).var())
    lo, hi = r.surface["hdi_lower"].values, r.surface["hdi_upper"].values
    cover = stats.beta(a, b).cdf(hi) - stats.beta(a, b).cdf(lo)
    assert np.allclose(cover[[0, 1, 3]], 0.9, atol=1e-6)  # arm 2 (a, b < 1): U-shaped, central interval
    # the draws behind Thompson sampling follow the same Beta (Monte Carlo tolerance: 5 SE)
    d = r.draws("accuracy")
    assert np.all(np.abs(d.mean(0) - r.mean) < 5 * np.sqrt(r.var / d.shape[0]) + 1e-9)


def test_cpredictor_is_the_global_beta():
    r = fit_surface(ArmCounts.from_arrays([3, 7], [1, 6]), estimator="cpredictor")
    assert np.allclose(r.mean, 8 / 12) and np.allclose(r.var, stats.beta(8, 4).var())


def test_mixture_summary_is_the_law_of_total_variance():
    a = np.array([[2.0], [8.0]])
    b = np.array([[8.0], [2.0]])
    mean, var, _, _ = beta_mixture_summary(a, b, seed=0)
    # equal mixture of Beta(2, 8) and Beta(8, 2): mean 0.5, var = E[var] + var[mean]
    within = 2 * 8 / (100 * 11)
    assert np.isclose(mean[0], 0.5) and np.isclose(var[0], within + 0.09)


def test_slp_pooling_uses_three_nearest_observed_arms():
    arms = ArmCounts.from_arrays([2, 10, 6, 0, 40], [0, 10, 3, 0, 20])
    sim = np.eye(5) + 0.0
    sim[0] = [1.0, 0.2, 0.9, 0.99, 0.5]  # arm 3 is the most similar but unobserved
    n, c = pool_sparse_counts(arms, sim, max_labels=5, k=3)
    assert np.isclose(n[0], (2 + 6 + 40) / 3) and np.isclose(c[0], (0 + 3 + 20) / 3)
    assert n[1:].tolist() == [10, 6, 0, 40]


def test_surface_errors_and_noise_floor():
    truth = np.array([0.5, 0.9, 0.8, 0.6])
    support = np.array([100.0, 10.0, 1000.0, 20.0])
    est = truth + np.array([0.1, -0.1, 0.0, 0.2])
    e = surface_errors(est, truth, support, k=2, min_support=15)
    kept = [0, 2, 3]
    err = (est - truth)[kept] ** 2
    assert np.isclose(e["macro_mse"], err.mean())
    assert np.isclose(e["worst_mse"], (0.01 + 0.04) / 2)  # truths 0.5 and 0.6
    assert np.isclose(e["rare_mse"], (0.04 + 0.01) / 2)  # supports 20 and 100
    floor = truth[kept] * (1 - truth[kept]) / support[kept]
    assert np.isclose(e["macro_mse_corrected"], err.mean() - floor.mean())
    assert np.isclose(e["micro_mse"], np.average(err, weights=support[kept]))


def test_interval_coverage_of_an_exact_posterior_is_nominal_and_of_a_point_is_not():
    """Arms of known accuracy p, pool of 200 items each, 20 labeled: the exact Beta(1 + y, 1 + n - y)
    posterior of p, turned into the pool's accuracy, covers the pool's empirical accuracy at the
    nominal 94% (400 arms: Monte Carlo sd 0.012, bound 0.04), and so do draws fixed at the true p (the
    oracle: only the unlabeled items' noise, a narrower interval); draws fixed at the labeled share (a
    point estimate taken for the truth) cover far less; a known truth p is covered by the Beta draws
    themselves."""
    rng = np.random.default_rng(7)
    arms, pool, lab = 400, 200, 20
    p = rng.uniform(0.55, 0.95, size=arms)
    right = rng.random((arms, pool)) < p[:, None]
    y = right[:, :lab].sum(1)
    truth = right.mean(1)
    post = rng.beta(1 + y, 1 + lab - y, size=(3000, arms))
    kw = {"labeled": np.full(arms, lab), "correct": y, "seed": 0}
    exact = interval_coverage(post, truth, np.full(arms, pool), **kw)
    assert abs(exact["coverage"] - 0.94) < 0.04 and exact["n_arms_scored"] == arms
    at_p = interval_coverage(np.broadcast_to(p, (3000, arms)), truth, np.full(arms, pool), **kw)
    share = interval_coverage(np.broadcast_to(y / lab, (3000, arms)), truth, np.full(arms, pool), **kw)
    assert abs(at_p["coverage"] - 0.94) < 0.04 and at_p["mean_width"] < 0.5 * exact["mean_width"]
    assert share["coverage"] < 0.7
    known = interval_coverage(post, p, np.full(arms, pool), truth_is_empirical=False)
    assert abs(known["coverage"] - 0.94) < 0.04
    with pytest.raises(DataError, match="draws"):
        interval_coverage(post[:, :3], truth, np.full(arms, pool))
