"""The sum-to-zero additive surface model: design algebra, exact log densities, NUTS on a small instance."""

import itertools

import numpy as np
import pytest
from scipy.special import betaln, expit, logit
from scipy.stats import norm

from pbassess.errors import ConfigError
from pbassess.pymc_models.surface import additive_design, additive_model, sum_to_zero_basis
from pbassess.surface import ArmCounts, count_arms, fit_surface, hide_labels
from pbassess.surface.evaluate import surface_errors
from pbassess.surface.synthetic import synthetic_surface


def _grid_arms(levels=(2, 3, 4), seed=0):
    values = np.array(list(itertools.product(*[range(k) for k in levels])))
    rng = np.random.default_rng(seed)
    n = rng.integers(0, 12, size=len(values)).astype(float)
    n[:3] = 0  # some unlabeled arms
    correct = np.floor(n * rng.uniform(0.5, 1.0, size=len(values)))
    return ArmCounts.from_arrays(n, correct, values=values, attributes=tuple(f"x{k}" for k in range(len(levels))))


def _at_point(model, outputs, point):
    """Evaluate model quantities at a point of the free (value) variables."""
    import pytensor

    outs = model.replace_rvs_by_values(outputs)
    fn = pytensor.function(model.value_vars, outs, on_unused_input="ignore")
    return fn(**{v.name: point[v.name] for v in model.value_vars})


def _random_point(model, seed):
    rng = np.random.default_rng(seed)
    point = model.initial_point()
    return {k: v + rng.normal(0, 0.7, size=np.shape(v)) for k, v in point.items()}


def test_sum_to_zero_basis_gives_the_centred_covariance():
    for levels in (2, 3, 9):
        q = sum_to_zero_basis(levels)
        np.testing.assert_allclose(q @ q.T, np.eye(levels) - 1.0 / levels, atol=1e-12)


def test_design_columns_sum_to_zero_on_a_full_grid():
    arms = _grid_arms()
    d = additive_design(arms)
    assert d.matrix.shape == (24, 1 + 2 + 3 + 1 * 2 + 1 * 3 + 2 * 3)
    assert d.names == ("x0", "x1", "x2", "x0:x1", "x0:x2", "x1:x2") and d.n_main == 3
    np.testing.assert_allclose(d.matrix.sum(axis=0), 0.0, atol=1e-12)
    # a pair's columns also sum to zero over either attribute with the other held fixed
    pair = d.matrix[:, d.block == 5].reshape(2, 3, 4, 6)
    np.testing.assert_allclose(pair.sum(axis=1), 0.0, atol=1e-12)
    np.testing.assert_allclose(pair.sum(axis=2), 0.0, atol=1e-12)
    assert additive_design(arms, interactions=False).matrix.shape == (24, 6)


def test_effects_average_to_zero_so_the_intercept_is_the_grid_mean():
    arms = _grid_arms()
    model, _, _ = additive_model(arms)
    point = _random_point(model, 1)
    mu, scale = _at_point(model, [model["mu"], model["scale"]], point)
    # the grid mean of logit mu is the intercept exactly (no ridge between intercept and effects)
    assert np.isclose(logit(mu).mean(), point["intercept"], atol=1e-9)
    log_s = np.log(scale)
    if log_s.max() < 8:  # far below the soft cap at log 1e5, where softcap(x) ~ x - 1e-5 x-scale terms
        assert np.isclose(log_s.mean(), point["log_scale"], atol=1e-2)


def test_likelihood_is_the_beta_binomial_of_the_labeled_arms():
    arms = _grid_arms(seed=3)
    model, n, c = additive_model(arms, covariate=None)
    point = _random_point(model, 2)
    mu, s, value = _at_point(model, [model["mu"], model["scale"], model.potentials[0]], point)
    obs = n > 0
    a, b = mu * s, (1 - mu) * s
    expected = (betaln(a + c, b + n - c) - betaln(a, b))[obs].sum()
    assert np.isclose(value, expected, rtol=1e-8)  # PyTensor betaln is a gammaln difference: ~1e-10 relative


def test_zero_scales_give_the_exchangeable_beta_binomial():
    arms = _grid_arms(seed=4)
    model, n, c = additive_model(arms, main_scale=0.0, interaction_scale=0.0, scale_main_scale=0.0)
    assert sorted(v.name for v in model.free_RVs) == ["intercept", "log_scale"]
    point = {"intercept": 1.3, "log_scale": 2.5}
    logp = model.compile_logp()(point)
    p0 = c.sum() / n.sum()
    mu = expit(1.3)
    s = np.exp(np.log(1e5) - np.logaddexp(0.0, np.log(1e5) - 2.5))  # the soft cap at 1e5
    expected = (norm.logpdf(1.3, logit(p0), 1.5) + norm.logpdf(2.5, np.log(30), 1.5)
                + (betaln(mu * s + c, (1 - mu) * s + n - c) - betaln(mu * s, (1 - mu) * s)).sum())
    assert np.isclose(logp, expected, rtol=1e-8)  # PyTensor betaln is a gammaln difference: ~1e-10 relative


def test_confidence_covariate_and_bad_options():
    arms = ArmCounts.from_arrays([5, 3, 0], [4, 1, 0], values=[[0], [1], [2]], confidence=[0.9, 0.6, 0.8])
    model, _, _ = additive_model(arms, covariate="confidence")
    point = _random_point(model, 5)
    mu, offset = _at_point(model, [model["mu"], model["confidence_offset"]], point)
    conf_logit = logit(np.array([0.9, 0.6, 0.8]))
    # logit mu = offset + slope * logit(confidence) + effects, effects summing to zero over the 3 levels
    assert np.isclose((logit(mu) - point["confidence_slope"] * conf_logit).mean(), offset, atol=1e-9)
    with pytest.raises(ConfigError, match="covariate"):
        additive_model(arms, covariate="age")


def test_shared_pair_scale_multiplies_every_pair_coefficient():
    arms = _grid_arms(seed=5)
    per_pair = additive_model(arms)[0]
    shared = additive_model(arms, pair_scales="shared")[0]
    design = additive_design(arms)
    n_pairs = len(design.names) - design.n_main
    assert per_pair["mean_pair_sd"].type.shape == (n_pairs,) and shared["mean_pair_sd"].type.shape == ()
    # With every per-pair scale equal to the shared one the two models give the same mean surface.
    point = _random_point(shared, 6)
    (mu_shared,) = _at_point(shared, [shared["mu"]], point)
    tau = point["mean_pair_sd_log__"]
    per_point = {**point, "mean_pair_sd_log__": np.full(n_pairs, tau)}
    (mu_per_pair,) = _at_point(per_pair, [per_pair["mu"]], per_point)
    np.testing.assert_allclose(mu_shared, mu_per_pair, rtol=1e-12)
    with pytest.raises(ConfigError, match="pair_scales"):
        additive_model(arms, pair_scales="per-level")


@pytest.mark.slow  # nutpie compile + 2 x 400 iterations: ~15 s alone
def test_nuts_recovers_a_known_surface_without_divergences():
    syn = synthetic_surface(8000, 5, seed=11, effect_sd=0.7)
    arms = count_arms(hide_labels(syn.preds, 300, seed=1), syn.attributes)
    truth = syn.truth_for(arms.values)
    r = fit_surface(arms, estimator="additive", seed=2, sample_kwargs={"draws": 200, "tune": 200, "chains": 2})
    beta_i = fit_surface(arms, estimator="beta-i")
    assert r.diagnostics["divergences"] == 0
    # 2 chains x 200 draws: split R-hat of well-mixed chains stays below ~1.03 (Vehtari et al. 2021);
    # 1.05 leaves room for the max over ~80 quantities
    assert r.diagnostics["max_rhat"] < 1.05, r.diagnostics
    e_a = surface_errors(r.mean, truth, arms.pool_n, truth_is_empirical=False)
    e_b = surface_errors(beta_i.mean, truth, arms.pool_n, truth_is_empirical=False)
    # about 9 labels per arm: Beta-I's error is the per-arm sampling variance (~0.02); sharing
    # strength through the additive structure must cut it by at least 40%
    assert e_a["macro_mse"] < 0.6 * e_b["macro_mse"], (e_a, e_b)
