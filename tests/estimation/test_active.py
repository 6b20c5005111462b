"""Active estimation: labeling probabilities, unbiasedness and coverage under the adaptive rule."""

import numpy as np
import pytest

from pbassess.errors import ConfigError, DataError
from pbassess.estimation.active import (
    active_sample,
    inclusion_probabilities,
    ipw_mean_interval,
    uncertainty_weights,
)


def test_inclusion_probabilities_sum_to_budget_and_cap_at_one():
    rng = np.random.default_rng(0)
    w = rng.exponential(size=500) ** 3
    pi = inclusion_probabilities(w, 60)
    assert pi.sum() == pytest.approx(60)
    assert pi.max() == 1.0 and (pi > 0).all()
    free = pi < 1
    np.testing.assert_allclose(pi[free] / w[free], (pi[free] / w[free])[0])  # proportional below the cap


def test_weights_prefer_uncertain_items():
    w = uncertainty_weights([0.5, 0.75, 0.99], uniform_share=0.2)
    assert w.mean() == pytest.approx(1.0)
    assert w[0] > w[1] > w[2] > 0.2 - 1e-12
    with pytest.raises(ConfigError):
        uncertainty_weights([0.5], uniform_share=1.5)


def _pool(rng, n_items=4000):
    conf = rng.beta(5, 1.2, n_items).clip(0.3, 1.0)
    correct = rng.random(n_items) < np.clip(conf - 0.05, 0, 1)  # a little overconfident
    return conf, correct.astype(float)


def test_unbiased_and_covering_under_the_adaptive_rule():
    """Known truth: the pool's accuracy. 300 replicate runs (fixed pool, fresh selections) of a 90%
    interval: coverage MC sd 0.017, so 0.85 is 3 sd below 0.9; the mean of the estimates must be
    within 4 standard errors of the truth (unbiasedness of inverse-probability weighting)."""
    rng = np.random.default_rng(1)
    conf, y = _pool(rng)
    truth = y.mean()
    est, hits, n_lab = [], 0, []
    for r in range(300):
        labeled, pi = active_sample(conf, 150, seed=r)
        m, lo, hi, _ = ipw_mean_interval(y, conf, pi, labeled, 0.9)
        est.append(m)
        hits += lo <= truth <= hi
        n_lab.append(labeled.sum())
    est = np.array(est)
    assert abs(est.mean() - truth) < 4 * est.std() / np.sqrt(est.size)
    assert hits / 300 > 0.85
    assert abs(np.mean(n_lab) - 150) < 15  # the budget holds in expectation (floor adds < 25%)


def test_active_is_narrower_than_uniform_sampling_when_confidence_is_informative():
    """Most items are near-certain, a third are not: labels spent on the uncertain third pay off."""
    rng = np.random.default_rng(2)
    conf = np.where(rng.random(6000) < 0.67, rng.uniform(0.97, 1.0, 6000), rng.uniform(0.4, 0.8, 6000))
    y = (rng.random(6000) < conf).astype(float)
    w_active, w_uniform = [], []
    for r in range(40):
        labeled, pi = active_sample(conf, 200, seed=r)
        w_active.append(np.subtract(*ipw_mean_interval(y, conf, pi, labeled)[2:0:-1]))
        pi_u = np.full(conf.size, 200 / conf.size)
        lab_u = np.random.default_rng(100 + r).random(conf.size) < pi_u
        w_uniform.append(np.subtract(*ipw_mean_interval(y, conf, pi_u, lab_u)[2:0:-1]))
    assert np.mean(w_active) < 0.9 * np.mean(w_uniform)


def test_bad_input():
    with pytest.raises(ConfigError, match="budget"):
        active_sample([0.9, 0.8], 5)
    with pytest.raises(DataError, match="one value per item"):
        ipw_mean_interval([1, 0], [0.9], [0.5, 0.5], [True, True])
    with pytest.raises(DataError, match="probabilities"):
        ipw_mean_interval([1, 0], [0.9, 0.8], [0.0, 0.5], [True, True])
