"""PyMC surface models: plumbing with mocked sampling, and NUTS against closed forms / known truth."""

from unittest import mock

import numpy as np
import pytest
from scipy.special import betaln, expit, logit

from pbassess.inference.sampling import mock_pymc_sample
from pbassess.pymc_models.surface import arm_inputs, betagp_model
from pbassess.surface import ArmCounts, fit_surface
from pbassess.surface.evaluate import surface_errors
from pbassess.surface.synthetic import synthetic_surface

TINY = {"draws": 30, "tune": 0, "chains": 1}


def _arms():
    return ArmCounts.from_arrays([1, 1, 1, 20, 20, 20, 20, 1, 1, 1], [0, 0, 1, 14, 16, 18, 12, 0, 0, 0],
                                 values=np.arange(10), attributes=("x",), continuous=("x",))


@pytest.mark.slow  # compiling the prior-predictive graph: ~10 s alone, minutes under contention
@pytest.mark.parametrize("estimator", ["additive", pytest.param("berngp", marks=pytest.mark.slow),
                                       pytest.param("betagp-slp", marks=pytest.mark.slow)])
def test_plumbing_with_prior_draws(estimator):
    with mock.patch("pymc.sample", mock_pymc_sample):
        r = fit_surface(_arms(), estimator=estimator, seed=0, sample_kwargs=TINY)
    assert r.surface.sizes["arm"] == 10 and r.draws("accuracy").shape == (30, 10)
    assert np.all((r.mean > 0) & (r.mean < 1)) and np.all(r.var > 0)
    lo, hi = r.surface["hdi_lower"].values, r.surface["hdi_upper"].values
    assert np.all(lo <= r.mean) and np.all(r.mean <= hi)
    assert set(r.to_json()) >= {"attributes", "arms", "n", "pool_n", "mean", "var", "hdi", "diagnostics"}


def test_slp_model_uses_pooled_counts_and_both_scale_terms():
    arms = _arms()
    _, n, c = betagp_model(arms, variant="betagp-slp", scale_term="dirichlet", seed=0)
    assert n[3:7].tolist() == [20, 20, 20, 20]  # well-labeled arms keep their counts
    assert n[2] > 1 and n[7] > 1  # sparse arms next to labeled ones borrow from them
    assert n[0] == 1  # arm 0's three nearest observed arms (0, 1, 2) hold one label each
    for term in ("gamma", "dirichlet"):
        model, _, _ = betagp_model(arms, variant="betagp-sl", scale_term=term, seed=0)
        assert "scale_supervision" in [p.name for p in model.potentials]


@pytest.mark.slow
def test_gamma_scale_term_is_the_codes_formula():
    import pymc as pm

    arms = _arms()
    model, _, _ = betagp_model(arms, variant="betagp-sl", scale_term="gamma", gp="exact", seed=0)
    point = model.initial_point()
    fn = model.compile_fn([model["scale"], model.potentials[-1]], inputs=model.value_vars,
                          on_unused_input="ignore", point_fn=True)
    scale, value = fn(point)
    x = np.clip(arms.n, 0.01, 10)
    from scipy.stats import gamma

    assert np.isclose(value, gamma(scale, scale=1.0).logpdf(x).sum())
    assert pm is not None


def test_one_hot_inputs_share_a_lengthscale_per_attribute():
    arms = ArmCounts.from_arrays([1, 1, 1], [1, 1, 0], values=[[0, 1], [1, 2], [2, 1]], attributes=("a", "b"))
    X, owner = arm_inputs(arms)
    assert X.shape == (3, 5) and owner.tolist() == [0, 0, 0, 1, 1]


def _pooled_grid_posterior(n, c):
    """Exchangeable Beta-binomial posterior of the additive model with zero effect scales, by quadrature."""
    p0 = c.sum() / n.sum()
    eta = np.linspace(logit(p0) - 5, logit(p0) + 5, 301)[:, None]
    lsc = np.linspace(np.log(30) - 7, np.log(30) + 7, 301)[None, :]
    mu, s = expit(eta), np.exp(lsc)
    logp = -0.5 * ((eta - logit(p0)) / 1.5) ** 2 - 0.5 * ((lsc - np.log(30)) / 1.5) ** 2
    for ni, ci in zip(n, c, strict=False):
        logp = logp + betaln(mu * s + ci, (1 - mu) * s + ni - ci) - betaln(mu * s, (1 - mu) * s)
    w = np.exp(logp - logp.max())
    w /= w.sum()
    return np.array([(w * (mu * s + ci) / (s + ni)).sum() for ni, ci in zip(n, c, strict=False)])


@pytest.mark.slow
def test_additive_with_zero_effect_scales_is_the_pooled_model():
    n = np.array([1, 3, 10, 40, 0, 25, 2, 8.0])
    c = np.array([0, 3, 6, 31, 0, 24, 1, 8.0])
    arms = ArmCounts.from_arrays(n, c)
    r = fit_surface(arms, estimator="additive", seed=3, model_options={"main_scale": 0.0, "interaction_scale": 0.0,
                    "scale_main_scale": 0.0}, sample_kwargs={"draws": 600, "tune": 400, "chains": 2})
    exact = _pooled_grid_posterior(n, c)
    # Monte Carlo error of the posterior means is ~0.003 at ~500 effective draws; 0.015 is 5 SE.
    assert np.max(np.abs(r.mean - exact)) < 0.015, (r.mean.round(3), exact.round(3), r.diagnostics)
    assert r.diagnostics["divergences"] == 0


@pytest.mark.slow
def test_additive_beats_beta_i_on_a_known_surface():
    syn = synthetic_surface(6000, 5, seed=11, effect_sd=0.7)
    from pbassess.surface import count_arms, hide_labels

    preds = hide_labels(syn.preds, 250, seed=1)
    arms = count_arms(preds, syn.attributes)
    truth = syn.truth_for(arms.values)
    beta_i = fit_surface(arms, estimator="beta-i")
    additive = fit_surface(arms, estimator="additive", seed=2, sample_kwargs={"draws": 300, "tune": 300, "chains": 2})
    e_b = surface_errors(beta_i.mean, truth, arms.pool_n, truth_is_empirical=False)
    e_a = surface_errors(additive.mean, truth, arms.pool_n, truth_is_empirical=False)
    assert e_a["macro_mse"] < 0.7 * e_b["macro_mse"], (e_a, e_b)
