"""Surfaces on the one fit layer: items in the log-likelihood, exact and PSIS LOO, the same variables every way."""

from __future__ import annotations

import warnings

import arviz as az
import numpy as np
import pytest
import xarray as xr

import pbassess as pb
from pbassess.surface import ArmCounts, count_arms, fit_surface, hide_labels
from pbassess.surface.synthetic import synthetic_surface

SMALL = {"draws": 150, "tune": 200, "chains": 4}


def _signature(ds: xr.Dataset) -> dict[str, tuple[str, ...]]:
    return {str(k): tuple(v.dims) for k, v in ds.data_vars.items()}


@pytest.fixture(scope="module")
def pool():
    syn = synthetic_surface(3000, 3, seed=5)
    return syn, hide_labels(syn.preds, 240, seed=1)


def test_a_pool_gives_one_loglik_value_per_labeled_item(pool):
    syn, preds = pool
    r = fit_surface(preds, syn.attributes, estimator="beta-i", seed=0)
    ll = r.idata["log_likelihood"]["correct"]
    labeled = np.flatnonzero(preds.labels >= 0)
    assert ll.dims == ("chain", "draw", "item") and ll.sizes["item"] == labeled.size == int(r.arms.n.sum())
    assert set(ll["item"].values.tolist()) == set(np.asarray(preds.item_ids)[labeled].tolist())
    # each value is log Bernoulli(correct_i | accuracy of the item's arm) at that draw
    item = labeled[7]
    arm = int(r.arms.item_arm[item])
    theta = r.posterior["accuracy"].isel(arm=arm).to_numpy()
    y = float(preds.predicted[item] == preds.labels[item])
    expected = y * np.log(theta) + (1 - y) * np.log1p(-theta)
    np.testing.assert_allclose(ll.sel(item=preds.item_ids[item]).to_numpy(), expected, rtol=1e-12)


def test_counts_imply_items_and_fractional_counts_give_one_value_per_arm():
    whole = fit_surface(ArmCounts.from_arrays([3, 0, 2], [2, 0, 2]), estimator="cpredictor", seed=0)
    assert whole.idata["log_likelihood"]["correct"].sizes["item"] == 5
    soft = fit_surface(ArmCounts.from_arrays([1.5, 2.5], [1.0, 2.0]), estimator="beta-i", seed=0)
    assert soft.idata["log_likelihood"]["correct"].dims == ("chain", "draw", "arm")
    with pytest.raises(pb.ConfigError, match="closed-form"):
        soft.loo(exact=True)


def test_exact_loo_is_the_leave_one_out_of_the_beta_posteriors_and_survives_save(tmp_path):
    n, c = np.array([6, 3, 0, 9]), np.array([5, 1, 0, 9])
    r = fit_surface(ArmCounts.from_arrays(n, c), estimator="beta-i", seed=0, draws=1000)
    loo = r.loo()
    assert loo.n_data_points == 18 and float(loo.pareto_k.max()) == 0.0
    # brute force: drop each item, Beta-I's posterior of its arm (prior held fixed), predict the item
    a0, b0 = 0.1 * c.sum() / n.sum(), 0.1 * (1 - c.sum() / n.sum())
    brute = []
    for arm in range(4):
        for y in [1] * c[arm] + [0] * (n[arm] - c[arm]):
            a, b = a0 + c[arm] - y, b0 + n[arm] - c[arm] - (1 - y)
            brute.append(np.log((a if y else b) / (a + b)))
    assert loo.elpd == pytest.approx(sum(brute), rel=1e-12)
    psis = az.loo(r.idata)
    assert abs(psis.elpd - loo.elpd) < psis.se
    back = pb.load_result(r.save(tmp_path / "s.nc"))
    assert back.loo().elpd == pytest.approx(loo.elpd, rel=1e-12)
    assert {v.name for v in back.model.free_RVs} == {"accuracy_asinh_logit"}


@pytest.mark.slow  # two NUTS fits and an ADVI fit of small models: ~1 min on the shared machine
def test_nuts_advi_and_refits_hold_the_same_variables(pool):
    syn, preds = pool
    arms = count_arms(preds, syn.attributes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nuts = fit_surface(preds, syn.attributes, estimator="additive", seed=1, sample_kwargs=SMALL)
        advi = fit_surface(preds, syn.attributes, estimator="additive", inference="advi", seed=1,
                           sample_kwargs={"draws": 150, "advi_iterations": 3000})
        from pbassess.surface.refit import SurfaceRefitter

        refit = SurfaceRefitter(arms, "additive", sample_kwargs=SMALL, seed=1).fit(arms.n, arms.correct, seed=2)
    assert nuts.idata.attrs["inference"] == "nuts" and advi.idata.attrs["inference"] == "advi"
    for group in ("posterior", "prior", "log_prior", "constant_data"):
        assert _signature(nuts.idata[group].to_dataset()) == _signature(advi.idata[group].to_dataset()), group
    assert _signature(refit.idata["posterior"].to_dataset()) == _signature(nuts.idata["posterior"].to_dataset())
    assert "sample_stats" in refit.idata.children and "sample_stats" not in advi.idata.children
    assert advi.estimator == refit.estimator == "additive"
    # a refit's model is rebuilt over its own counts (the compiled one holds the first round's data)
    assert "labels" not in refit.model.named_vars and {"mu", "scale"} <= set(refit.model.named_vars)
    # the refit's items are the ones the counts imply; the pool fit's are the pool's: same number
    for r in (nuts, advi, refit):
        assert r.idata["log_likelihood"]["correct"].sizes["item"] == int(arms.n.sum())
        assert r.loo().n_data_points == int(arms.n.sum())
    # the Rao-Blackwellised mean and the mean of the accuracy draws agree (Monte Carlo error of 600 draws)
    draws = nuts.posterior["accuracy"].mean(("chain", "draw")).to_numpy()
    sd = nuts.posterior["accuracy"].std(("chain", "draw")).to_numpy()
    assert np.all(np.abs(draws - nuts.mean) < 5 * sd / np.sqrt(100))
    assert nuts.diagnostics["divergences"] == 0
