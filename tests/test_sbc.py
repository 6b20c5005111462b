"""Simulation-based calibration in the suite (issue 20): a fast version of benchmarks/sbc.py.

Each check is one seeded SBC run; under a correct posterior the model's Bonferroni p-value is
uniform (or conservative), so ``p >= 0.001`` fails a correct model with probability at most
0.001. The wrong posteriors below (the prior's pseudocounts doubled in the conjugate update;
an update that sees half of the labels, too wide) are flagged at ``p < 0.001``: their ranks
pile up at the ends or in the middle. With 400 simulations and 5 rank bins, over seeds 0-4 the
largest p-value was 1.1e-4 (doubled prior) and 1.4e-9 (half the labels), so the test has
power, not just a pass.
"""

import numpy as np
import pytest

from pbassess.errors import ConfigError
from pbassess.inference.sbc import rank_uniformity_pvalue, simulation_based_calibration
from pbassess.pymc_models.accuracy import BetaBernoulliSpec, GroupComparisonSpec

N = np.array([3, 10, 30])
ALPHA, BETA = np.array([1.0, 2.0, 0.5]), np.array([1.0, 5.0, 0.5])


def correct_factory(obs):
    k = N // 2 if obs is None else obs["correct"]
    return BetaBernoulliSpec(N, k, ALPHA, BETA)


class DoubledPrior(BetaBernoulliSpec):
    """The deliberate bug: the conjugate update counts the prior's pseudocounts twice."""

    def conjugate_draws(self, n_draws, rng):
        a = 2 * self.alpha + self.correct
        b = 2 * self.beta + self.n - self.correct
        return {self.var_name: rng.beta(a, b, size=(n_draws, a.size))}


def test_the_whole_fit_path_agrees():
    # the same check through pbassess.inference.fit (DataTree, 4 chains) instead of the spec's draws
    from pbassess.inference import fit

    res = simulation_based_calibration(correct_factory, 100, seed=4, fit_fn=fit)
    assert res.ranks["accuracy"].shape == (100, 3) and res.p_value >= 0.001


class HalfTheLabels(BetaBernoulliSpec):
    """Another bug: the update sees half of the labels (a posterior too wide)."""

    def conjugate_draws(self, n_draws, rng):
        a = self.alpha + self.correct / 2
        b = self.beta + (self.n - self.correct) / 2
        return {self.var_name: rng.beta(a, b, size=(n_draws, a.size))}


def wrong_factory(cls):
    # the doubled prior matters where labels are few next to the prior; half the labels where they are many
    n = N if cls is DoubledPrior else np.array([100, 200])
    alpha, beta = (ALPHA, BETA) if cls is DoubledPrior else (1.0, 1.0)

    def factory(obs):
        k = n // 2 if obs is None else obs["correct"]
        return cls(n, k, alpha, beta)
    return factory


def test_exact_conjugate_posterior_passes():
    res = simulation_based_calibration(correct_factory, 200, seed=1)
    assert res.ranks["accuracy"].shape == (200, 3)
    assert res.ranks["accuracy"].min() >= 0 and res.ranks["accuracy"].max() <= res.n_ranks - 1
    assert res.n_tests == 3
    assert res.p_value >= 0.001 and res.passed(0.001)


@pytest.mark.parametrize("cls", [DoubledPrior, HalfTheLabels])
def test_wrong_posterior_is_flagged(cls):
    res = simulation_based_calibration(wrong_factory(cls), 400, n_bins=5, seed=1)
    assert res.p_value < 0.001 and not res.passed(0.001)


def test_derived_quantities_are_ranked_too():
    # value and difference are not variables of the PyMC model: their true values are derived from the
    # prior draws by the spec's own ``complete``
    def factory(obs):
        k = np.array([5, 20]) if obs is None else obs["correct"]
        cells = BetaBernoulliSpec([10, 40], k, 1.0, 1.0, dim="cell", coords=["A", "B"])
        return GroupComparisonSpec(cells, ["A", "B"], [(0, 1)])

    res = simulation_based_calibration(factory, 150, seed=2)
    assert set(res.ranks) == {"value", "difference"} and res.p_value >= 0.001


@pytest.mark.slow
def test_nuts_refits_pass_loosely():
    # NUTS on the asinh-logit Beta model: few simulations (each a NUTS fit), two bins of 6 expected each;
    # it fails only when the NUTS posterior sits on one side of the truth far more often than not
    def factory(obs):
        k = np.array([4]) if obs is None else obs["correct"]
        return BetaBernoulliSpec([8], k, 2.0, 2.0)

    res = simulation_based_calibration(factory, 12, inference="nuts", n_bins=2, seed=3, draws=100,
                                       sample_kwargs={"tune": 200, "chains": 2, "progressbar": False})
    assert res.ranks["accuracy"].shape == (12, 1)
    assert res.p_value >= 0.001


def test_rank_uniformity_pvalue():
    rng = np.random.default_rng(0)
    # under uniform ranks the p-value is uniform: about 1% of 400 runs fall below 0.01 (sd 0.5%)
    p = np.array([rank_uniformity_pvalue(rng.integers(0, 100, 200), 100, 10) for _ in range(400)])
    assert 0.0 <= (p < 0.01).mean() <= 0.03
    assert rank_uniformity_pvalue(np.r_[np.zeros(50, int), np.full(50, 99)], 100, 10) < 1e-20
    with pytest.raises(ConfigError):
        rank_uniformity_pvalue([1, 2], 100, 7)


def test_options_are_checked():
    with pytest.raises(ConfigError):
        simulation_based_calibration(correct_factory, 10, n_ranks=100, n_bins=7, seed=0)
    with pytest.raises(ConfigError):
        simulation_based_calibration(correct_factory, 0, seed=0)
