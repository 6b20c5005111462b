"""Active comparison of groups: decision probabilities, martingale property, simulation with known truth."""

import numpy as np
import pytest
from scipy import special, stats

from pbassess.errors import ConfigError
from pbassess.estimation.compare_active import decision_probabilities, label_value, next_group


def test_decision_probabilities_match_closed_form_for_normal_differences():
    rng = np.random.default_rng(0)
    draws = np.column_stack([rng.normal(0.03, 0.01, 200_000), np.zeros(200_000)])
    p = decision_probabilities(draws, 0.02)[(0, 1)]
    ref = [stats.norm.cdf(0.02, 0.03, 0.01) - stats.norm.cdf(-0.02, 0.03, 0.01), stats.norm.sf(0.02, 0.03, 0.01),
           stats.norm.cdf(-0.02, 0.03, 0.01)]
    np.testing.assert_allclose(p, ref, atol=0.003)  # MC sd of a probability near 0.84: 0.0008


def test_expected_updated_probabilities_equal_current_ones():
    """Bayesian updating is a martingale: averaging the lookahead's decision probabilities over the
    predictive gives back today's (exactly in expectation; common random numbers keep MC error tiny)."""
    from pbassess.estimation.compare_active import _draws

    k, n, lookahead = np.array([40.0, 45.0]), np.array([60.0, 60.0]), 8
    a, b = 1 + k, 1 + n - k
    u = np.random.default_rng(1).random((40_000, 2))
    now = decision_probabilities(_draws(a, b, u), 0.03)[(0, 1)]
    ys = np.arange(lookahead + 1)
    w = np.exp(special.gammaln(lookahead + 1) - special.gammaln(ys + 1) - special.gammaln(lookahead - ys + 1)
               + special.betaln(a[0] + ys, b[0] + lookahead - ys) - special.betaln(a[0], b[0]))
    assert w.sum() == pytest.approx(1.0)
    expected = np.zeros(3)
    for y, wy in zip(ys, w, strict=True):
        moved = _draws(a, b, u)
        moved[:, 0] = _draws(a[0] + y, b[0] + lookahead - y, u[:, 0])
        expected += wy * decision_probabilities(moved, 0.03)[(0, 1)]
    np.testing.assert_allclose(expected, now, atol=0.01)


def test_settled_groups_score_zero_and_open_ones_are_chosen():
    v = label_value([95, 50, 52, 20], [100, 100, 100, 100], rope=0.05, seed=0)
    assert v[3] == 0.0 or v[3] < 0.05 * v.max()  # 3 is far below everyone: settled
    assert int(np.argmax(v)) in (1, 2)
    assert next_group([95, 50, 52, 20], [100, 100, 100, 100], available=[True, False, True, True],
                      rope=0.05, seed=0) == 2


def _run(truth, strategy, budget, rope, seed):
    rng = np.random.default_rng(seed)
    g = truth.size
    k, n = np.zeros(g), np.zeros(g)
    for t in range(budget // 10):  # rounds of 10 labels to one group (the lookahead)
        grp = t % g if strategy == "uniform" or t < g else next_group(k, n, rope=rope, draws=1000, seed=rng,
                                                                      lookahead=10)
        k[grp] += (rng.random(10) < truth[grp]).sum()
        n[grp] += 10
    draws = stats.beta.rvs(1 + k, 1 + n - k, size=(4000, g), random_state=rng)
    probs = decision_probabilities(draws, rope)
    return np.mean([p.max() >= 0.95 for p in probs.values()])


@pytest.mark.slow
def test_active_comparison_settles_more_pairs_than_uniform_labeling():
    """Known truth: four groups, accuracies 0.95, 0.80, 0.70, 0.62; ROPE 0.02. With 240 labels in rounds of 10,
    the active rule spends them on the pairs still open and settles more of the six decisions
    than round-robin labeling, averaged over 8 paired runs."""
    truth = np.array([0.95, 0.80, 0.70, 0.62])
    active = np.mean([_run(truth, "active", 240, 0.02, s) for s in range(8)])
    uniform = np.mean([_run(truth, "uniform", 240, 0.02, s) for s in range(8)])
    assert active > uniform


def test_bad_input():
    with pytest.raises(ConfigError, match="two groups"):
        label_value([1], [2])
    with pytest.raises(ConfigError, match="successes <= trials"):
        label_value([3, 1], [2, 2])
    with pytest.raises(ConfigError, match="ROPE"):
        label_value([1, 1], [2, 2], rope=0)
