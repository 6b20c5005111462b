"""Classwise accuracy: counts, exact Beta posteriors, rankings, JSON contract, save/load, NUTS, plots."""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from scipy import stats

from pbassess import ConfigError, DataError, Predictions
from pbassess.assess.accuracy import AccuracyResult, assess_accuracy
from pbassess.plots.accuracy import plot_accuracy, plot_p_extreme, plot_rank_intervals
from pbassess.results import AssessmentResult

CONTRACT_KEYS = {"metric", "classes", "n", "correct", "mean", "hdi", "hdi_prob", "p_lowest"}


@pytest.fixture
def toy() -> Predictions:
    """Three classes; 'c' is a label but never predicted; two items unlabeled.

    Labeled counts per predicted class: a: n=4, correct=3; b: n=3, correct=1.
    """
    predicted = ["a", "a", "a", "a", "b", "b", "b", "a", "b"]
    confidence = [0.9, 0.8, 0.7, 0.6, 0.5, 0.9, 0.7, 0.35, 0.4]
    labels = ["a", "a", "a", "b", "b", "c", "c", None, None]
    return Predictions.from_top1(predicted, confidence, labels, classes=["a", "b", "c"],
                                 groups={"site": ["x", "x", "y", "y", "y", "x", "y", "x", "y"]})


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# ------------------------------------------------------------------ counts and exact posteriors
def test_counts_use_only_labeled_items(toy):
    res = assess_accuracy(toy, seed=0)
    table = res.summary()
    assert list(table.index) == ["a", "b", "c"]
    assert table["n"].tolist() == [4, 3, 0]
    assert table["correct"].tolist() == [3, 1, 0]
    assert res.counts["n_pool"].values.tolist() == [5, 4, 0]
    assert list(table.columns) == ["n", "correct", "mean", "hdi_low", "hdi_high", "p_lowest", "p_highest", "mean_rank"]


def test_uniform_posterior_mean_is_closed_form(toy):
    # Beta(1, 1) prior (pc = 2): posterior Beta(1 + k, 1 + n - k), mean (1 + k) / (2 + n).
    res = assess_accuracy(toy, seed=0)
    np.testing.assert_allclose(res.summary()["mean"], [4 / 6, 2 / 5, 1 / 2], rtol=1e-12)
    # pc = 6: Beta(3, 3) prior.
    res6 = assess_accuracy(toy, pseudocount=6, seed=0)
    np.testing.assert_allclose(res6.mean(), [(3 + 3) / (6 + 4), (3 + 1) / (6 + 3), 0.5], rtol=1e-12)


def test_hdi_of_flat_prior_and_of_a_posterior(toy):
    res = assess_accuracy(toy, seed=0, ci_prob=0.9)
    hdi = res.hdi()
    # Class 'c' has no labeled item: its posterior is Beta(1, 1), whose 90% HDI is reported centrally.
    np.testing.assert_allclose(hdi[2], [0.05, 0.95], atol=1e-9)
    # Class 'a' is Beta(4, 2): an HDI holds the credible mass and has equal density at both ends.
    lo, hi = hdi[0]
    dist = stats.beta(4, 2)
    assert dist.cdf(hi) - dist.cdf(lo) == pytest.approx(0.9, abs=1e-7)
    assert dist.pdf(lo) == pytest.approx(dist.pdf(hi), rel=1e-4)


def test_informed_prior_uses_mean_confidence_of_all_pool_items(toy):
    pc = 10.0
    res = assess_accuracy(toy, prior="informed", pseudocount=pc, seed=0)
    # Class a: pool confidences (labeled and unlabeled) 0.9, 0.8, 0.7, 0.6, 0.35 -> s = 0.67.
    # Class b: 0.5, 0.9, 0.7, 0.4 -> s = 0.625. Class c is never predicted: the pool mean 0.6333...
    s = np.array([0.67, 0.625, np.mean([0.9, 0.8, 0.7, 0.6, 0.5, 0.9, 0.7, 0.35, 0.4])])
    np.testing.assert_allclose(res.counts["prior_alpha"], pc * s, rtol=1e-12)
    np.testing.assert_allclose(res.counts["prior_beta"], pc * (1 - s), rtol=1e-12)
    n, k = np.array([4, 3, 0]), np.array([3, 1, 0])
    np.testing.assert_allclose(res.mean(), (pc * s + k) / (pc + n), rtol=1e-12)
    assert res.prior == {"kind": "informed", "pseudocount": pc}


def test_user_prior_tuple(toy):
    res = assess_accuracy(toy, prior=([2.0, 3.0, 4.0], 1.0), seed=0)
    np.testing.assert_allclose(res.mean(), [(2 + 3) / (3 + 4), (3 + 1) / (4 + 3), 4 / 5], rtol=1e-12)
    with pytest.raises(ConfigError, match="positive"):
        assess_accuracy(toy, prior=([1.0, -1.0, 1.0], 1.0))
    with pytest.raises(ConfigError, match="shapes"):
        assess_accuracy(toy, prior=([1.0, 1.0], 1.0))


def test_conjugate_draws_match_exact_moments(toy):
    res = assess_accuracy(toy, draws=5000, seed=3)
    d = res.accuracy_draws()
    assert res.posterior["accuracy"].dims == ("chain", "draw", "class")
    assert d.shape == (4 * 5000, 3)  # draws are per chain: 4 chains
    a, b = np.array([4.0, 2.0, 1.0]), np.array([2.0, 3.0, 1.0])
    sd = np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    # Independent draws: the Monte Carlo error of each mean is sd / sqrt(20000); allow 4.5 of them.
    assert np.all(np.abs(d.mean(axis=0) - a / (a + b)) < 4.5 * sd / np.sqrt(20000))


def test_by_true_group_and_array(toy):
    true = assess_accuracy(toy, by="true", seed=0)
    # Per true class (recall): a: 3 labeled, 3 correct; b: 2 labeled, 1 correct; c: 2 labeled, 0 correct.
    assert true.summary()["n"].tolist() == [3, 2, 2]
    assert true.summary()["correct"].tolist() == [3, 1, 0]
    assert true.dim == "class" and true.noun == "true class"
    site = assess_accuracy(toy, by="site", seed=0)
    assert site.dim == "group" and site.regions == ["x", "y"]
    # Labeled x: items 0, 1 (correct), 5 (wrong); y: items 2, 4 (correct), 3, 6 (wrong).
    assert site.summary()["n"].tolist() == [3, 4]
    assert site.summary()["correct"].tolist() == [2, 2]
    region = assess_accuracy(toy, by=np.array([1, 1, 1, 2, 2, 2, 2, 1, 1]), seed=0)
    assert region.dim == "region" and region.regions == ["1", "2"]
    assert region.summary()["n"].tolist() == [3, 4]
    assert region.summary()["correct"].tolist() == [3, 1]


def test_never_predicted_class_cannot_be_lowest(toy):
    res = assess_accuracy(toy, seed=1)
    # 'c' keeps its flat prior (mean 0.5, above b's 0.4) but is never predicted: it may not win.
    assert res.p_lowest[2] == 0 and res.p_highest[2] == 0
    assert res.p_lowest.sum() == pytest.approx(1.0)
    assert res.p_highest.sum() == pytest.approx(1.0)
    assert np.isnan(res.summary().loc["c", "mean_rank"])
    np.testing.assert_allclose(res.p_in_lowest(1), res.p_lowest)
    np.testing.assert_allclose(res.p_in_lowest(2), [1.0, 1.0, 0.0])
    np.testing.assert_allclose(res.p_in_highest(1), res.p_highest)
    ranks = res.rank_draws()
    assert ranks.shape == (4000, 3)
    assert np.all(np.sort(ranks, axis=1) == [1, 2, 3])
    assert np.all(ranks[:, 2] == 3)  # regions without items rank last
    with pytest.raises(ConfigError, match="between 1 and 3"):
        res.p_in_lowest(0)


def test_no_labels_gives_the_prior():
    p = Predictions.from_top1(["a", "b", "b"], [0.9, 0.6, 0.7])
    res = assess_accuracy(p, seed=0)
    np.testing.assert_allclose(res.mean(), [0.5, 0.5])
    assert res.summary()["n"].tolist() == [0, 0]
    assert "no labeled items" in res.sentence()


# ------------------------------------------------------------------ reports and persistence
def test_sentence_and_json_contract(toy):
    res = assess_accuracy(toy, seed=0)
    sentence = res.sentence()
    assert sentence.startswith("The least accurate predicted class is 'b' (posterior mean 0.40, 95% HDI ")
    assert sentence.endswith(" of being the lowest.")
    out = res.to_json()
    assert CONTRACT_KEYS <= set(out)
    assert out["metric"] == "accuracy"
    assert out["classes"] == ["a", "b", "c"]
    assert out["n"] == [4, 3, 0] and out["correct"] == [3, 1, 0]
    assert out["hdi_prob"] == 0.95
    assert len(out["hdi"]) == 3 and all(len(pair) == 2 for pair in out["hdi"])
    assert out["mean"] == pytest.approx([4 / 6, 2 / 5, 1 / 2])
    assert out["p_lowest"] == pytest.approx(res.p_lowest.tolist())
    json.dumps(out, allow_nan=False)


def test_save_load_round_trip(toy, tmp_path):
    res = assess_accuracy(toy, prior="informed", by="site", seed=0)
    path = res.save(tmp_path / "acc.nc")
    back = AssessmentResult.load(path)
    assert isinstance(back, AccuracyResult)
    assert back.engine == "conjugate" and back.prior == res.prior and back.options == res.options
    assert back.regions == res.regions
    np.testing.assert_allclose(back.summary().to_numpy(dtype=float), res.summary().to_numpy(dtype=float))
    assert back.to_json() == res.to_json()


# ------------------------------------------------------------------ bad inputs
def test_bad_inputs_raise_clear_errors(toy):
    with pytest.raises(DataError, match="group column 'nope' not found"):
        assess_accuracy(toy, by="nope")
    with pytest.raises(DataError, match="3 region labels for 9 items"):
        assess_accuracy(toy, by=[1, 2, 3])
    with pytest.raises(ConfigError, match="unknown inference 'stan'"):
        assess_accuracy(toy, inference="stan")
    with pytest.raises(ConfigError, match="unknown prior 'flat'"):
        assess_accuracy(toy, prior="flat")
    with pytest.raises(ConfigError, match="pseudocount"):
        assess_accuracy(toy, pseudocount=0)
    with pytest.raises(ConfigError, match="draws"):
        assess_accuracy(toy, draws=0)
    with pytest.raises(ConfigError, match="ci_prob"):
        assess_accuracy(toy, ci_prob=1.5)
    with pytest.raises(ConfigError, match="sample_kwargs"):
        assess_accuracy(toy, inference="nuts", sample_kwargs=[("draws", 10)])
    with pytest.raises(DataError, match="Predictions"):
        assess_accuracy({"predicted": [0, 1]})


# ------------------------------------------------------------------ MCMC engine
@pytest.mark.filterwarnings("ignore:MCMC diagnostics:UserWarning")  # 2 x 200 draws: R-hat noise
def test_mcmc_engine_plumbing(toy, sample_kwargs, monkeypatch):
    """Plumbing only (mocked sampling: prior draws shaped like pm.sample's)."""
    import pymc

    from pbassess.inference import mock_pymc_sample

    monkeypatch.setattr(pymc, "sample", mock_pymc_sample)
    res = assess_accuracy(toy, inference="nuts", sample_kwargs=sample_kwargs, seed=0)
    assert res.engine == "mcmc" and res.inference == "nuts"
    assert res.posterior["accuracy"].dims == ("chain", "draw", "class")
    assert res.posterior["accuracy"].shape == (2, 200, 3)
    assert {"max_rhat", "min_ess_bulk", "min_ess_tail", "divergences", "ok"} <= set(res.diagnostics)
    assert "accuracy_asinh_logit" in res.idata["posterior"]  # the free variable stays beside it (pm.compute_log_prior)
    # One log-likelihood value per labeled item (class 'c' has none, so none of its items appear).
    assert res.idata["log_likelihood"]["correct"].dims == ("chain", "draw", "item")
    assert res.idata["log_likelihood"]["correct"].shape == (2, 200, int(res.counts["n"].sum()))
    assert res.to_json()["engine"] == "mcmc" and res.to_json()["inference"] == "nuts"


def test_mcmc_agrees_with_conjugate_on_cifar100(cifar100):
    import arviz as az

    exact = assess_accuracy(cifar100)
    res = assess_accuracy(cifar100, inference="nuts", seed=11,
                          sample_kwargs={"tune": 500, "draws": 1000, "chains": 2, "cores": 1})
    assert res.diagnostics["divergences"] == 0
    assert res.diagnostics["max_rhat"] < 1.01
    a, b = exact._posterior_params()
    sd = np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    ess = az.ess(res.idata, var_names=["accuracy"])["accuracy"].to_numpy()
    # The MCMC mean of class k has Monte Carlo standard error sd_k / sqrt(ESS_k) around the exact
    # Beta mean (a/(a+b)); over 100 classes, |z| > 4.5 anywhere has probability ~100 * 7e-6.
    z = (res.mean() - exact.mean()) / (sd / np.sqrt(ess))
    assert np.max(np.abs(z)) < 4.5
    # Posterior sds agree too: the relative MC error of an sd is ~ 1/sqrt(2 ESS), 2.2% at ESS 1000
    # (typically ~2,500 here), so 12% is > 5 standard errors for every class.
    np.testing.assert_allclose(res.accuracy_draws().std(axis=0), sd, rtol=0.12)


# ------------------------------------------------------------------ real-data facts
def test_cifar100_facts_through_counts(cifar100):
    res = assess_accuracy(cifar100, seed=0)
    n = res.counts["n"].to_numpy()
    assert n.sum() == 10000
    assert res.counts["correct"].to_numpy().sum() / n.sum() == pytest.approx(0.7414, abs=1e-12)
    assert n.min() == 78 and n.max() == 131
    assert len(res.regions) == 100 and res.valid.all()
    assert res.p_lowest.sum() == pytest.approx(1.0)


# ------------------------------------------------------------------ plots
def test_plot_accuracy_forest(toy):
    res = assess_accuracy(toy, seed=0)
    fig = plot_accuracy(res)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["b", "c", "a"]  # least accurate at the top
    assert len(ax.collections) == 1 and len(ax.collections[0].get_segments()) == 3
    fig2 = plot_accuracy(res, top=1, bottom=1)
    assert [t.get_text() for t in fig2.axes[0].get_yticklabels()] == ["b", "a"]
    _, given = plt.subplots()
    assert plot_accuracy(res, ax=given, sort=False) is given
    assert [t.get_text() for t in given.get_yticklabels()] == ["a", "b", "c"]
    assert isinstance(res.plot(), matplotlib.figure.Figure)
    with pytest.raises(ConfigError, match="top"):
        plot_accuracy(res, top=0)


def test_plot_p_extreme_and_rank_intervals(cifar100):
    res = assess_accuracy(cifar100, seed=0)
    fig = plot_p_extreme(res, top=15)
    ax = fig.axes[0]
    assert len(ax.patches) == 15
    heights = [bar.get_width() for bar in ax.patches]
    assert heights == sorted(heights, reverse=True)
    assert ax.get_yticklabels()[0].get_text() == res.summary()["p_lowest"].idxmax()
    assert len(plot_p_extreme(res, which="highest", top=5).axes[0].patches) == 5
    with pytest.raises(ConfigError, match="which"):
        plot_p_extreme(res, which="middle")
    fig = plot_rank_intervals(res, top=10)
    assert len(fig.axes[0].get_yticks()) == 10
    assert len(plot_rank_intervals(res).axes[0].get_yticks()) == 100
