"""Confusion probabilities and expected misclassification cost: stats, PyMC model, result, plots.

Monte Carlo tolerances: a posterior mean estimated from n independent draws has standard error
sd / sqrt(n) (from MCMC: sd / sqrt(ESS), i.e. ArviZ's mcse_mean). Tests compare |estimate - exact|
with 4.5 standard errors: the chance that any of 100 classes exceeds it by accident is
100 * P(|Z| > 4.5) ~ 7e-4, so a failure means a bug, not bad luck.
"""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from pbassess import Predictions
from pbassess.assess.cost import CostResult, assess_confusion
from pbassess.data.cifar100 import CIFAR100_CLASSES, CIFAR100_PEOPLE, CIFAR100_SUPERCLASSES
from pbassess.errors import ConfigError, DataError
from pbassess.results import AssessmentResult
from pbassess.stats import beta_posterior, confusion_counts, dirichlet_draws
from pbassess.stats.cost import (
    cost_groups,
    dirichlet_prior,
    expected_cost_draws,
    expected_cost_posterior_draws,
    mean_probs_by_predicted,
    people_cost_matrix,
    superclass_cost_matrix,
    validate_cost_matrix,
    zero_one_cost,
)

Z = 4.5  # standard errors allowed between a Monte Carlo estimate and the exact value (see module docstring)


@pytest.fixture
def small_preds(rng):
    """60 labeled and 20 unlabeled items over 4 classes, with full probability vectors."""
    k, n = 4, 80
    labels = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k))
    logits[np.arange(n), labels] += 2.0
    probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    lab = [int(v) if i < 60 else None for i, v in enumerate(labels)]
    return Predictions.from_probs(probs, lab, classes=["w", "x", "y", "z"])


# ------------------------------------------------------------------------------ priors
def test_uniform_prior_is_pc_over_k_and_flat_is_reachable():
    np.testing.assert_allclose(dirichlet_prior("uniform", 5), np.full((5, 5), 2.0 / 5))
    np.testing.assert_allclose(dirichlet_prior("uniform", 5, pseudocount=5), np.ones((5, 5)))


def test_informed_prior_is_pc_times_mean_probs_with_uniform_fallback():
    mean_probs = mean_probs_by_predicted([0, 0, 2], [[0.6, 0.3, 0.1], [0.8, 0.1, 0.1], [0.2, 0.2, 0.6]], 3)
    np.testing.assert_allclose(mean_probs[0], [0.7, 0.2, 0.1])
    assert np.isnan(mean_probs[1]).all()  # class 1 is never predicted
    alpha = dirichlet_prior("informed", 3, pseudocount=10, mean_probs=mean_probs)
    np.testing.assert_allclose(alpha[0], [7.0, 2.0, 1.0])
    np.testing.assert_allclose(alpha[1], np.full(3, 10 / 3))
    np.testing.assert_allclose(alpha.sum(axis=1), 10.0)
    zero = dirichlet_prior("informed", 2, pseudocount=2, mean_probs=[[1.0, 0.0], [0.5, 0.5]])
    assert (zero > 0).all()


def test_prior_errors():
    with pytest.raises(ConfigError, match="unknown prior"):
        dirichlet_prior("flat", 3)
    with pytest.raises(ConfigError, match="pseudocount"):
        dirichlet_prior("uniform", 3, pseudocount=0)
    with pytest.raises(ConfigError, match="mean probability"):
        dirichlet_prior("informed", 3)


# ------------------------------------------------------------------------------ exact posterior
def test_conjugate_posterior_means_are_exact(small_preds):
    res = assess_confusion(small_preds, seed=1)
    lab = small_preds.labeled
    counts = confusion_counts(small_preds.predicted[lab], small_preds.labels[lab], 4)
    post = counts + 0.5  # uniform prior, pc = 2, K = 4
    np.testing.assert_allclose(res.confusion_probabilities().to_numpy(), post / post.sum(1, keepdims=True), rtol=1e-12)
    assert res.confusion_probabilities().dims == ("predicted", "true")
    # expected 0-1 cost = 1 - P(true = k | predicted = k), closed form
    np.testing.assert_allclose(res.mean(), 1 - np.diag(post) / post.sum(1), rtol=1e-12)
    np.testing.assert_array_equal(res.counts["n"].to_numpy(), counts.sum(1))
    assert res.counts["n"].sum() == 60  # only labeled items count


def test_dirichlet_draws_have_the_exact_means():
    alpha = np.array([[3.0, 1.0, 0.02], [0.5, 0.5, 9.0]])
    d = dirichlet_draws(alpha, 20000, seed=3)
    mean = alpha / alpha.sum(1, keepdims=True)
    # Dirichlet marginal variance: m (1 - m) / (A + 1)
    se = np.sqrt(mean * (1 - mean) / (alpha.sum(1, keepdims=True) + 1) / d.shape[0])
    assert np.all(np.abs(d.mean(0) - mean) < Z * se)


def test_zero_one_expected_cost_is_one_minus_beta_accuracy(svhn):
    """Dirichlet aggregation: 1 - theta_kk ~ Beta(A_k - a_kk, a_kk) for the posterior a = alpha + counts."""
    k = svhn.n_classes
    counts = confusion_counts(svhn.predicted, svhn.labels, k)
    alpha = dirichlet_prior("uniform", k)
    # Beta posterior of the accuracy of predicted class k with the aggregated prior
    a, b = beta_posterior(np.diag(counts), counts.sum(1), np.diag(alpha), alpha.sum(1) - np.diag(alpha))
    acc_mean = a / (a + b)
    acc_var = a * b / ((a + b) ** 2 * (a + b + 1))
    n = 20000
    full = expected_cost_draws(dirichlet_draws(alpha + counts, n, seed=4), zero_one_cost(k))  # per-cell draws
    grouped = expected_cost_posterior_draws(alpha + counts, zero_one_cost(k), n, seed=5)  # aggregated draws
    se = np.sqrt(acc_var / n)
    for draws in (full, grouped):
        assert np.all(np.abs(draws.mean(0) - (1 - acc_mean)) < Z * se)
        # sample variance: relative standard error about sqrt(2 / n) = 1% for these near-normal Betas
        np.testing.assert_allclose(draws.var(0), acc_var, rtol=0.06)
    res = assess_confusion(svhn, seed=6)
    np.testing.assert_allclose(res.mean(), 1 - acc_mean, rtol=1e-12)


def test_cifar100_cost_matrices_draws_match_exact_means(cifar100):
    """Aggregating cells of equal cost before drawing leaves the expected cost's posterior unchanged."""
    for name in ("people", "superclass"):
        res = assess_confusion(cifar100, cost_matrix=name, draws=1000, seed=7)
        draws = res.cost_draws()
        assert draws.shape == (4 * 1000, 100)  # 4 chains of 1000
        se = draws.std(0) / np.sqrt(draws.shape[0])
        assert np.all(np.abs(draws.mean(0) - res.mean()) < Z * se), name
        assert res.to_json()["cost"] == name
    # CIFAR-100 fact: accuracy 0.7414, i.e. 7414 correct of 10,000; the pooled expected 0-1 cost is
    # 0.2586 plus the uniform prior's pull: pc = 2 pseudo-items per class at prior mean cost 0.99
    zero_one = assess_confusion(cifar100, seed=8)
    confusion = zero_one.counts["confusion"].to_numpy()
    n = confusion.sum(1)
    assert np.trace(confusion) == 7414 and n.sum() == 10000
    assert 78 <= n.min() and n.max() <= 131  # predicted-class sizes from the data README
    pooled = np.sum(n * zero_one.mean()) / n.sum()
    assert pooled == pytest.approx(np.sum(n * (n - np.diag(confusion) + 2 * 0.99) / (n + 2)) / 10000, rel=1e-12)
    assert 0.2586 < pooled < 0.2586 + 2 * 0.99 / 78


def test_expected_cost_draws_convention():
    theta = np.array([[[0.7, 0.2, 0.1], [0.0, 1.0, 0.0], [0.5, 0.0, 0.5]]])
    cost = np.array([[0, 1, 10], [2, 0, 2], [3, 3, 0]], dtype=float)  # cost[predicted, true]
    np.testing.assert_allclose(expected_cost_draws(theta, cost), [[1.2, 0.0, 1.5]])
    alpha, costs, n_groups = cost_groups(np.ones((3, 3)), cost)
    np.testing.assert_allclose(alpha, [[1, 1, 1], [1, 2, 0], [1, 2, 0]])
    np.testing.assert_array_equal(n_groups, [3, 2, 2])


# ------------------------------------------------------------------------------ cost matrices
def test_superclass_cost_matrix_structure():
    cost = superclass_cost_matrix(CIFAR100_CLASSES)
    assert cost.shape == (100, 100)
    assert np.all(np.diag(cost) == 0)
    assert np.array_equal(cost, cost.T)
    assert (cost == 10).sum() == 100 * 100 - 100 * 5  # every pair outside the 5-class superclass
    assert (cost == 1).sum() == 100 * 4
    i, j = CIFAR100_CLASSES.index("maple_tree"), CIFAR100_CLASSES.index("oak_tree")
    assert cost[i, j] == 1 and cost[i, CIFAR100_CLASSES.index("baby")] == 10
    assert set(np.unique(cost)) == {0.0, 1.0, 10.0}
    assert len(CIFAR100_SUPERCLASSES) == 20


def test_people_cost_matrix_structure():
    cost = people_cost_matrix(CIFAR100_CLASSES)
    people = [CIFAR100_CLASSES.index(c) for c in CIFAR100_PEOPLE]
    assert np.all(np.diag(cost) == 0)
    assert (cost == 10).sum() == 5 * 99  # true class is a person, prediction is anything else
    assert (cost == 1).sum() == 100 * 99 - 5 * 99
    assert np.all(cost[:, people][~np.eye(100, dtype=bool)[:, people]] == 10)
    assert not np.array_equal(cost, cost.T)  # "predicted a person" mistakes cost 1 under side="true"
    either = people_cost_matrix(CIFAR100_CLASSES, side="either")
    assert np.array_equal(either, either.T)
    assert (either == 10).sum() == 2 * 5 * 99 - 5 * 4  # person rows or columns, pairs of two people counted once


def test_cost_matrix_errors_name_the_problem():
    with pytest.raises(ConfigError, match="'cat', 'dog'"):
        people_cost_matrix(["baby", "cat", "dog"])
    with pytest.raises(ConfigError, match="'robot'"):
        superclass_cost_matrix(["baby", "robot"])
    with pytest.raises(ConfigError, match="side"):
        people_cost_matrix(["baby"], side="predicted")
    with pytest.raises(ConfigError, match=r"shape \(2, 3\)"):
        validate_cost_matrix(np.zeros((2, 3)), 2)
    with pytest.raises(ConfigError, match=r"cost_matrix\[1, 0\] is nan"):
        validate_cost_matrix([[0, 1], [np.nan, 0]], 2)
    with pytest.raises(ConfigError, match="non-negative"):
        validate_cost_matrix([[0, 1], [-2, 0]], 2)


def test_assess_confusion_bad_inputs(small_preds, cifar100):
    with pytest.raises(ConfigError, match="shape"):
        assess_confusion(small_preds, cost_matrix=np.ones((3, 3)))
    with pytest.raises(ConfigError, match="non-negative"):
        assess_confusion(small_preds, cost_matrix=-np.ones((4, 4)))
    with pytest.raises(ConfigError, match="finite"):
        assess_confusion(small_preds, cost_matrix=np.full((4, 4), np.nan))
    with pytest.raises(ConfigError, match="cost matrix 'expensive'"):
        assess_confusion(small_preds, cost_matrix="expensive")
    with pytest.raises(ConfigError, match="not known"):  # people needs CIFAR-100 class names
        assess_confusion(small_preds, cost_matrix="people")
    with pytest.raises(ConfigError, match="unknown prior"):
        assess_confusion(small_preds, prior="flat")
    with pytest.raises(ConfigError, match="unknown inference 'gibbs'"):
        assess_confusion(small_preds, inference="gibbs")
    with pytest.raises(DataError, match="full probability vectors"):
        assess_confusion(cifar100, prior="informed")


def test_informed_prior_uses_pool_probabilities(small_preds):
    res = assess_confusion(small_preds, prior="informed", pseudocount=8, seed=2)
    alpha = res.counts["prior_alpha"].to_numpy()
    expected = 8 * mean_probs_by_predicted(small_preds.predicted, small_preds.probs, 4)  # all 80 pool items
    np.testing.assert_allclose(alpha, expected, rtol=1e-6)
    assert res.prior == {"kind": "informed", "pseudocount": 8.0}


# ------------------------------------------------------------------------------ result
def test_to_json_keys_and_summary(small_preds):
    res = assess_confusion(small_preds, cost_matrix=np.arange(16.0).reshape(4, 4) * (1 - np.eye(4)), seed=3)
    out = res.to_json()
    assert {"metric", "classes", "mean", "hdi", "p_highest"} <= set(out)
    assert out["metric"] == "cost" and out["classes"] == ["w", "x", "y", "z"] and out["cost"] == "user"
    assert len(out["mean"]) == len(out["p_highest"]) == len(out["hdi"]) == 4
    assert all(lo <= m <= hi for (lo, hi), m in zip(out["hdi"], out["mean"], strict=True))
    assert abs(sum(out["p_highest"]) - 1) < 1e-12
    json.dumps(out)
    table = res.summary()
    assert list(table.columns) == ["n", "mean", "hdi_low", "hdi_high", "p_highest", "confused_with", "p_confused"]
    assert "highest expected cost" in res.sentence()


def test_most_confused_with_reports_ties_as_none():
    p = Predictions.from_top1(["a", "a", "a", "b"], [0.9] * 4, ["a", "c", "c", "b"], classes=["a", "b", "c"])
    res = assess_confusion(p, seed=0)
    names, prob = res.most_confused_with()
    assert names[0] == "c" and names[1] is None and names[2] is None
    assert prob[0] == pytest.approx((2 + 2 / 3) / (3 + 2))


def test_save_load_round_trip(small_preds, tmp_path):
    res = assess_confusion(small_preds, cost_matrix=1 - np.eye(4), draws=500, seed=4)
    loaded = AssessmentResult.load(res.save(tmp_path / "cost.nc"))
    assert isinstance(loaded, CostResult)
    assert loaded.to_json() == res.to_json()
    np.testing.assert_array_equal(loaded.confusion_probabilities(), res.confusion_probabilities())
    assert loaded.confusion_probabilities()["true"].to_numpy().tolist() == ["w", "x", "y", "z"]


# ------------------------------------------------------------------------------ PyMC model
def test_confusion_model_categories_preserve_counts_and_alpha():
    from pbassess.pymc_models.confusion import confusion_categories

    counts = np.array([[5, 0, 0, 1], [0, 0, 0, 0], [2, 0, 3, 0], [0, 4, 0, 9]])
    alpha = np.full((4, 4), 0.25)
    cost = np.array([[0, 1, 10, 1], [1, 0, 1, 1], [5, 5, 0, 5], [1, 1, 1, 0]], dtype=float)
    for collapse in (True, False):
        cats = confusion_categories(counts, alpha, cost, list("abcd"), collapse=collapse)
        assert np.bincount(cats.row, weights=cats.alpha, minlength=4) == pytest.approx(alpha.sum(1))
        assert np.array_equal(np.bincount(cats.row, weights=cats.count, minlength=4), counts.sum(1))
        assert np.all(cats.cost[cats.cell_category] == cost)  # every cell lands in a category of its cost
        assert np.allclose(np.bincount(cats.cell_category.ravel(), weights=cats.cell_share.ravel()), 1.0)
        assert np.array_equal(cats.boosted, (cats.count == 0) & (cats.alpha < 1))
    assert len(cats.labels) == 16  # no collapsing: one category per cell


def test_boosted_gamma_parametrisation_has_the_dirichlet_prior():
    """g = h exp(-e / a), h ~ Gamma(a + 1), e ~ Exp(1) is Gamma(a): forward draws of a row with one
    boosted (a = 0.3) and one plain (b = 2.5) category give theta ~ Beta(0.3, 2.5) exactly."""
    import pymc as pm
    from scipy import stats

    from pbassess.pymc_models.confusion import confusion_model

    alpha = np.array([[0.3, 2.5], [1.0, 1.0]])
    model = confusion_model(np.zeros((2, 2), dtype=int), alpha, classes=["a", "b"])
    assert model.categories.boosted.tolist() == [False, False, False, True]  # row a: "a -> b" plain, "a -> a" boosted
    theta = pm.draw(model["confusion"], draws=20000, random_seed=11)[:, 0, 0]
    # KS test against the exact Beta; p < 1e-4 would be a 1-in-10,000 accident
    assert stats.kstest(theta, stats.beta(0.3, 2.5).cdf).pvalue > 1e-4


def test_mcmc_engine_plumbing(small_preds, sample_kwargs, monkeypatch):
    """Plumbing only: mocked sampling (prior draws shaped like pm.sample's); the SVHN test runs NUTS."""
    import pymc

    from pbassess.inference import mock_pymc_sample

    monkeypatch.setattr(pymc, "sample", mock_pymc_sample)
    res = assess_confusion(small_preds, inference="nuts", seed=1, sample_kwargs={**sample_kwargs, "nuts_sampler": "pymc"})
    assert res.posterior["expected_cost"].dims == ("chain", "draw", "predicted")
    assert res.posterior["expected_cost"].shape == (2, 200, 4)
    assert {"max_rhat", "min_ess_bulk", "min_ess_tail", "divergences", "ok"} <= set(res.diagnostics)
    # one log-likelihood value per labeled item: the log probability of its true class given its prediction
    assert res.idata["log_likelihood"]["true_class"].shape == (2, 200, int(res.counts["n"].sum()))
    np.testing.assert_allclose(res.confusion_probabilities().sum("true"), 1.0)
    assert res.to_json()["engine"] == "mcmc"


def test_conjugate_and_nuts_agree_on_svhn(svhn):
    """NUTS on the real 10 x 10 SVHN counts against the exact Dirichlet posterior.

    Cost |k - j| (digit distance) so that the rows have many distinct cost levels; the informed
    prior gives unequal alphas within merged zero-count categories. About 5 s on an idle
    2-core machine (nutpie compile included, 4 chains), so not marked slow.
    """
    import arviz as az

    k = svhn.n_classes
    cost = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    # 4 chains, as R-hat's 1.01 threshold assumes (Vehtari et al. 2021): with 2 x 500 draws the max R-hat over the
    # ~100 quantities passed 1.01 on 2 seeds of 0-7 (1.0105, 1.0112: the statistic's own noise), with 4 on none (<= 1.0077)
    kwargs = {"draws": 500, "tune": 500, "chains": 4, "progressbar": False}
    exact = assess_confusion(svhn, prior="informed", cost_matrix=cost, seed=2)
    n_draws = kwargs["draws"] * kwargs["chains"]
    mcmc = assess_confusion(svhn, prior="informed", cost_matrix=cost, inference="nuts", seed=2, sample_kwargs=kwargs)
    assert mcmc.diagnostics["max_rhat"] < 1.01 and mcmc.diagnostics["divergences"] == 0
    mcse = az.summary(mcmc.idata, var_names=["expected_cost"], kind="diagnostics")["mcse_mean"].to_numpy()
    assert np.all(np.abs(mcmc.mean() - exact.mean()) < Z * mcse)
    # cells that are their own category: exact Dirichlet mean vs MCMC estimate, within Z MC standard errors
    cat_mcse = az.mcse(mcmc.idata["posterior"]["category_prob"], method="mean")
    mcse_by_label = dict(zip(cat_mcse["category"].to_numpy().tolist(), cat_mcse.to_numpy(), strict=True))
    m_exact = exact.confusion_probabilities()
    m_mcmc = mcmc.confusion_probabilities()
    checked = 0
    for pred in svhn.classes:
        for true in svhn.classes:
            se = mcse_by_label.get(f"{pred} -> {true}")
            if se is None:
                continue
            shape = float(exact.counts["prior_alpha"].sel(predicted=pred, true=true)
                          + exact.counts["confusion"].sel(predicted=pred, true=true))
            if shape * n_draws < 100:
                # A posterior Gamma shape a << 1 (informed prior, no count): the cell's probability is ~0 in
                # almost every draw and its mean rests on the ~a * n_draws draws of order one, so with fewer
                # than ~100 of them the estimated MCSE is meaningless ('4' -> '0', shape 8e-4: MCSE 1e-9 for a
                # mean of 3e-7; '7' -> '9', shape 0.0032, ~6 such draws in 2,000: off by 4.7 estimated MCSEs).
                continue
            checked += 1
            diff = float(m_mcmc.sel(predicted=pred, true=true) - m_exact.sel(predicted=pred, true=true))
            assert abs(diff) < Z * se + 1e-12, (pred, true)
    assert checked >= 90


# ------------------------------------------------------------------------------ plots
def test_plots_smoke(small_preds):
    import matplotlib.pyplot as plt

    from pbassess.plots.cost import plot_confusion, plot_expected_cost

    res = assess_confusion(small_preds, seed=5)
    fig = plot_confusion(res)
    assert fig.axes[0].images[0].get_array().shape == (4, 4)
    fig2 = plot_expected_cost(res, top=3)
    assert len(fig2.axes[0].get_yticks()) == 3
    labels = [t.get_text() for t in fig2.axes[0].get_yticklabels()]
    order = res.summary()["mean"].sort_values(ascending=False, kind="stable").index[:3].tolist()
    assert labels == order  # most costly class at the top
    _, ax = plt.subplots()
    assert plot_confusion(res, classes=["x", "w"], ax=ax) is ax
    assert res.plot() is not None
    with pytest.raises(ConfigError, match="unknown class"):
        plot_confusion(res, classes=["nope"])
    with pytest.raises(ConfigError, match="top"):
        plot_expected_cost(res, top=0)
    plt.close("all")
