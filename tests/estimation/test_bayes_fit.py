"""The Bayesian estimate on the fit layer: ConfidencePriorSpec through pbassess.inference.fit (real NUTS)."""

import warnings

import numpy as np
import pytest
from scipy import special

import pbassess as pb
from pbassess.cli.estimate import hide_labels
from pbassess.errors import ConfigError
from pbassess.estimation import (
    BayesEstimateResult,
    MeanEstimand,
    cell_counts,
    confidence_prior_spec,
    estimate,
)
from pbassess.estimation.items import region_codes
from pbassess.inference import fit

NUTS = {"draws": 500, "tune": 600}


@pytest.fixture(scope="module")
def pool():
    return hide_labels(pb.load_data(), 300, seed=0)


@pytest.fixture(scope="module")
def nuts(pool):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimate(pool, methods="classical,bayes", inference="nuts", seed=0, sample_kwargs=NUTS)


def test_nuts_estimate_agrees_with_the_fast_path(pool, nuts):
    """The fast path (EB mode + Laplace) and NUTS on digits with 300 labels in 10 bins: the pool
    accuracy's posterior sd is ~0.012, so the means agree within 0.01 and the HDI bounds within
    0.015 (Monte Carlo error of 2,000 NUTS draws on a bound ~0.002, plus the Laplace approximation's)."""
    fast = estimate(pool, methods="bayes", seed=0)
    np.testing.assert_allclose(nuts.posterior["mean"].sel(estimator="bayes"),
                               fast.posterior["mean"].sel(estimator="bayes"), atol=0.01)
    for bound in ("lower", "upper"):
        np.testing.assert_allclose(nuts.posterior[bound].sel(estimator="bayes"),
                                   fast.posterior[bound].sel(estimator="bayes"), atol=0.015)
    assert fast.bayes is None and isinstance(nuts.bayes, BayesEstimateResult)
    assert nuts.diagnostics["ok"], nuts.diagnostics


def test_the_bayesian_part_holds_the_contract(pool, nuts):
    res = nuts.bayes
    tree = res.idata
    assert {"posterior", "prior", "log_likelihood", "log_prior", "observed_data", "constant_data",
            "sample_stats"} <= set(tree.children)
    ll = tree["log_likelihood"]["correct"]
    assert ll.dims == ("chain", "draw", "item") and ll.sizes["item"] == pool.n_labeled
    # each item's log-likelihood is Bernoulli given its cell's accuracy
    cell = tree["constant_data"]["item_cell"].to_numpy()
    y = tree["observed_data"]["correct"].to_numpy()
    theta = tree["posterior"]["cell_accuracy"].isel(chain=0, draw=slice(0, 3)).to_numpy()[:, cell]
    with np.errstate(divide="ignore"):  # (the branch np.where drops)
        expected = np.where(y == 1, np.log(theta), np.log1p(-theta))
    # a draw of theta = 1.0 is clipped just below 1 (log-likelihood -1e-16 instead of 0)
    np.testing.assert_allclose(ll.isel(chain=0, draw=slice(0, 3)).to_numpy(), expected, rtol=1e-12, atol=1e-15)
    # the estimate's bayes row is the posterior of the pool accuracy
    acc = res.draws("accuracy")[:, 0]
    assert float(nuts.posterior["mean"].sel(estimator="bayes", group="all")) == pytest.approx(acc.mean(), rel=1e-12)
    # the labeled items are known: the pool accuracy is at least their share of correct ones
    n_correct = int(pool.correct[pool.labeled].sum())
    assert acc.min() >= n_correct / pool.n_items


def test_cell_accuracy_is_the_exact_conditional_beta(pool):
    """Given the hyperparameters, each cell's accuracy is Beta(mu tau + k, (1 - mu) tau + n - k)."""
    codes, names = region_codes(pool, None)
    cells = cell_counts(pool.confidence, codes, len(names), pool.labeled, pool.correct)
    spec = confidence_prior_spec(cells, regions=names, seed=0)
    draws = {"offset": np.full((1, 20000), -0.3), "slope": np.full((1, 20000), 0.8),
             "log_strength": np.full((1, 20000), np.log(50.0))}
    theta = spec.complete(draws)["cell_accuracy"][1][0]
    x = special.logit(np.clip(cells.mean_conf, 1e-4, 1 - 1e-4))
    mu = special.expit(-0.3 + 0.8 * x)
    a, b = 50 * mu + cells.correct, 50 * (1 - mu) + cells.n - cells.correct
    sd = np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    assert np.all(np.abs(theta.mean(axis=0) - a / (a + b)) < 5 * sd / np.sqrt(20000))


def test_prior_draws_follow_the_hyperpriors(pool):
    codes, names = region_codes(pool, None)
    cells = cell_counts(pool.confidence, codes, len(names), pool.labeled, pool.correct)
    spec = confidence_prior_spec(cells, regions=names, seed=0)
    prior = spec.prior_draws(20000, np.random.default_rng(1))
    for name, (mean, sd) in {"offset": (0.0, 1.5), "slope": (1.0, 1.0), "log_strength": (3.0, 2.0)}.items():
        assert abs(prior[name].mean() - mean) < 5 * sd / np.sqrt(20000)
        assert prior[name].std() == pytest.approx(sd, rel=0.03)
    assert prior["accuracy"].shape == (20000, 1) and np.all((prior["accuracy"] >= 0) & (prior["accuracy"] <= 1))


def test_the_spec_has_no_conjugate_inference(pool):
    codes, names = region_codes(pool, None)
    cells = cell_counts(pool.confidence, codes, len(names), pool.labeled, pool.correct)
    with pytest.raises(ConfigError, match="no conjugate posterior"):
        fit(confidence_prior_spec(cells, regions=names), inference="conjugate")


def test_save_and_load_keep_the_bayesian_fit(nuts, tmp_path):
    back = pb.load_result(nuts.save(tmp_path / "estimate.nc"))
    assert isinstance(back.bayes, BayesEstimateResult)
    assert back.bayes.sentence() == nuts.bayes.sentence() and back.sentence() == nuts.sentence()
    assert sorted(v.name for v in back.bayes.model.free_RVs) == ["log_strength", "offset", "slope"]


def test_names(pool):
    with pytest.raises(TypeError):
        estimate(pool, method="classical")           # the alias is gone: methods=
    import pbassess.estimation as est

    assert not hasattr(est, "ItemStatistic") and est.item_statistic("accuracy").__class__ is MeanEstimand
