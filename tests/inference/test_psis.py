"""The vectorised PSIS-LOO against arviz-stats' own, observation by observation."""

import warnings

import numpy as np
import pytest
import xarray as xr

from pbassess.errors import ConfigError
from pbassess.inference import pareto_smoothed_loo
from pbassess.inference.psis import psis_tail_length


def _arviz(ll: np.ndarray, reff: float):
    import arviz as az

    chains, draws, n = ll.shape
    tree = xr.DataTree.from_dict({"posterior": xr.Dataset({"t": (("chain", "draw"), np.zeros((chains, draws)))}),
                                  "log_likelihood": xr.Dataset({"y": (("chain", "draw", "item"), ll)})})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loo = az.loo(tree, pointwise=True, reff=reff)
    return np.asarray(loo.elpd_i, float).ravel(), np.asarray(loo.pareto_k, float).ravel()


@pytest.mark.parametrize(("chains", "draws", "reff"), [(4, 750, 0.8), (2, 100, 1.0), (1, 2000, 0.3)])
def test_equals_arviz_on_light_and_heavy_tails(chains, draws, reff):
    """Logistic log-likelihoods with a spread of influence (k from below 0 to above 1; the short-chain
    case takes the S / 5 tail): ELPD and k equal az.loo's to 1e-10."""
    rng = np.random.default_rng(7)
    theta = rng.normal(size=(chains, draws, 1))
    x = np.concatenate([rng.normal(size=40), rng.normal(0, 6, size=10)])
    noise = rng.standard_t(2, size=(chains, draws, x.size)) * 0.3 * (np.abs(x) > 4)
    ll = -np.logaddexp(0.0, -(1.0 + theta * x + noise))
    elpd, k = pareto_smoothed_loo(ll.reshape(-1, x.size), reff)
    want_elpd, want_k = _arviz(ll, reff)
    np.testing.assert_allclose(elpd, want_elpd, rtol=0, atol=1e-10)
    np.testing.assert_allclose(k, want_k, rtol=0, atol=1e-10)
    assert k.min() < 0.5 and k.max() > 0.7  # both kinds of tail were exercised


def test_an_unestimable_tail_is_nan_and_unsmoothed_as_in_arviz():
    """Most of the tail tied at the cutoff (its first quartile at its minimum): k is NaN, as arviz-stats'."""
    rng = np.random.default_rng(0)
    ll = np.zeros((1, 1000, 2))
    ll[0, :, 1] = rng.normal(size=1000) * 0.2
    ll[0, :50, 0] = -np.sort(rng.exponential(size=50)) - 0.1  # 50 larger ratios above 950 tied ones
    elpd, k = pareto_smoothed_loo(ll.reshape(-1, 2), 1.0)
    want_elpd, want_k = _arviz(ll, 1.0)
    assert np.isnan(k[0]) and np.isnan(want_k[0]) and np.isfinite(k[1])
    np.testing.assert_allclose(elpd, want_elpd, rtol=0, atol=1e-12)


def test_large_inputs_are_fitted_in_blocks_with_the_same_answer(monkeypatch):
    import pbassess.inference.psis as psis

    rng = np.random.default_rng(2)
    ll = np.log(rng.beta(5, 2, size=(1200, 30)))
    whole = pareto_smoothed_loo(ll, 0.9)
    monkeypatch.setattr(psis, "PSIS_BLOCK_VALUES", 1)  # one observation a block
    blocks = pareto_smoothed_loo(ll, 0.9)
    np.testing.assert_array_equal(whole[0], blocks[0])
    np.testing.assert_array_equal(whole[1], blocks[1])
    tail = psis_tail_length(1200, 0.9)
    per_observation = max(1200, psis._gpd_grid_size(tail) * tail)  # its Pareto fit's grid, here
    monkeypatch.setattr(psis, "PSIS_BLOCK_VALUES", 7 * per_observation)  # 7 observations a block, the last one 2
    outer = pareto_smoothed_loo(ll, 0.9)
    np.testing.assert_array_equal(whole[0], outer[0])
    np.testing.assert_array_equal(whole[1], outer[1])


def test_bad_input_is_refused_in_one_line():
    with pytest.raises(ConfigError, match="non-finite"):
        pareto_smoothed_loo(np.array([[0.0, -np.inf]] * 100), 1.0)
    with pytest.raises(ConfigError, match=r"at least 5 draws in the Pareto tail \(25 draws in all\); 20 draws give 4"):
        pareto_smoothed_loo(np.zeros((20, 3)) - np.arange(20)[:, None] / 10, 1.0)
    with pytest.raises(ConfigError, match="all equal"):
        pareto_smoothed_loo(np.zeros((500, 2)), 1.0)
    with pytest.raises(ConfigError, match=r"\(draws, observations\)"):
        pareto_smoothed_loo(np.zeros(10), 1.0)
    for bad in (0.0, -1.0, float("nan"), "fast", None):
        with pytest.raises(ConfigError, match="r_eff must be a positive number"):
            pareto_smoothed_loo(np.log(np.full((100, 2), 0.5)), bad)
    assert psis_tail_length(3000, 1.0) == 164
