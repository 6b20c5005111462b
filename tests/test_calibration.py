"""Calibration: bin counts, exact bin posteriors, ECE posterior, classwise ECE and bias, JSON, NUTS, plots."""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from pbassess import ConfigError, DataError, Predictions
from pbassess.assess.calibration import CalibrationResult, assess_calibration
from pbassess.errors import NotFittedError
from pbassess.plots.calibration import plot_classwise_ece, plot_ece, plot_reliability
from pbassess.results import AssessmentResult

PC = 2.0
CLIP = 1e-3  # pbassess.stats.beta_prior clips prior means to [1e-3, 1 - 1e-3]


@pytest.fixture
def toy() -> Predictions:
    """Eight items, 4 uniform bins [0, .25), [.25, .5), [.5, .75), [.75, 1]; scores 0 and 1 included.

    item  pred  score  label   bin
    0     a     0.0    b       0   (wrong)
    1     a     1.0    a       3
    2     b     0.3    b       1
    3     b     0.6    a       2   (wrong)
    4     a     0.8    a       3
    5     b     0.9    -       3   (unlabeled)
    6     a     0.55   a       2
    7     b     0.1    -       0   (unlabeled)
    """
    return Predictions.from_top1(
        ["a", "a", "b", "b", "a", "b", "a", "b"], [0.0, 1.0, 0.3, 0.6, 0.8, 0.9, 0.55, 0.1],
        ["b", "a", "b", "a", "a", None, "a", None], classes=["a", "b"],
    )


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# ------------------------------------------------------------------ counts and exact posteriors
def test_bin_counts_and_edge_scores(toy):
    res = assess_calibration(toy, bins=4, seed=0)
    table = res.summary()
    np.testing.assert_allclose(res.edges, [0, 0.25, 0.5, 0.75, 1])
    # The score 0.0 lands in the first bin and 1.0 in the last.
    assert table["n_pool"].tolist() == [2, 1, 2, 3]
    assert table["n_labeled"].tolist() == [1, 1, 2, 2]
    assert res.counts["correct"].values.tolist() == [0, 1, 1, 2]
    np.testing.assert_allclose(table["mean_score"], [0.05, 0.3, 0.575, 0.9])
    np.testing.assert_allclose(table["frequentist_accuracy"], [0, 1, 0.5, 1])
    assert list(table.columns) == ["bin_low", "bin_high", "n_pool", "n_labeled", "mean_score", "accuracy_mean",
                                   "accuracy_hdi_low", "accuracy_hdi_high", "frequentist_accuracy"]


def test_bin_posterior_is_the_diagonal_centred_beta(toy):
    res = assess_calibration(toy, bins=4, seed=0)
    s = np.array([0.05, 0.3, 0.575, 0.9])
    n, k = np.array([1, 1, 2, 2]), np.array([0, 1, 1, 2])
    # Prior Beta(pc s, pc (1 - s)); posterior mean (pc s + k) / (pc + n).
    np.testing.assert_allclose(res.counts["prior_alpha"], PC * s)
    np.testing.assert_allclose(res.summary()["accuracy_mean"], (PC * s + k) / (PC + n), rtol=1e-12)
    # An empty bin's prior is centred on the bin centre.
    empty = assess_calibration(toy, bins=[0, 0.2, 0.4, 0.45, 1.0], seed=0)
    assert empty.summary()["n_pool"].tolist()[2] == 0
    assert empty.counts["bin_score"].values[2] == pytest.approx(0.425)
    assert empty.summary()["accuracy_mean"].iloc[2] == pytest.approx(0.425)


def test_ece_draws_and_frequentist_ece(toy):
    res = assess_calibration(toy, bins=4, seed=1)
    theta = res.draws("accuracy")
    p = np.array([2, 1, 2, 3]) / 8
    s = np.array([0.05, 0.3, 0.575, 0.9])
    # ECE of each draw is exactly sum_b p_b |theta_b - s_b| with the pool's weights and scores.
    np.testing.assert_allclose(res.draws("ece"), np.abs(theta - s) @ p, rtol=1e-12)
    # Frequentist ECE over the 6 labeled items: (0 + 0.7 + 2 * 0.075 + 2 * 0.1) / 6.
    assert res.frequentist_ece == pytest.approx(1.05 / 6, abs=1e-12)
    summ = res.ece_summary()
    assert summ["hdi_low"] <= summ["mean"] <= summ["hdi_high"]
    assert summ["n_labeled"] == 6


def test_classwise_counts_ece_and_bias(toy):
    res = assess_calibration(toy, bins=4, seed=0)
    c = res.counts
    assert c["class_bin_n_pool"].values.tolist() == [[1, 0, 1, 2], [1, 1, 1, 1]]
    assert c["class_bin_n"].values.tolist() == [[1, 0, 1, 2], [0, 1, 1, 0]]
    assert c["class_bin_correct"].values.tolist() == [[0, 0, 1, 2], [0, 1, 0, 0]]
    np.testing.assert_allclose(c["class_bin_weight"].values, [[0.25, 0, 0.25, 0.5], [0.25] * 4])
    # Class a's empty bin 1 is centred on 0.375; its bin 0 has the single score 0.0 (prior mean clipped).
    np.testing.assert_allclose(c["class_bin_score"].values[0], [0.0, 0.375, 0.55, 0.9])
    np.testing.assert_allclose(c["class_bin_alpha"].values[0, 0], PC * CLIP)
    table = res.classwise_summary()
    assert list(table.index) == ["a", "b"]
    # Bias = s_k - theta_k with theta_k ~ Beta(pc s_k + c_k, pc (1 - s_k) + n_k - c_k), exactly.
    s_k = np.array([(0 + 1 + 0.8 + 0.55) / 4, (0.3 + 0.6 + 0.9 + 0.1) / 4])
    n_k, c_k = np.array([4, 2]), np.array([3, 1])
    np.testing.assert_allclose(table["mean_score"], s_k)
    np.testing.assert_allclose(table["bias_mean"], s_k - (PC * s_k + c_k) / (PC + n_k), rtol=1e-12)
    assert table.loc["a", "bias_frequentist"] == pytest.approx(0.5875 - 0.75)
    # Classwise ECE draws = sum_b p_kb |theta_kb - s_kb| with p_kb summing to one per class.
    ece = res.draws("classwise_ece")
    assert ece.shape == (4000, 2)
    assert np.all(ece >= 0) and np.all(ece <= 1)
    assert table["p_most_miscalibrated"].sum() == pytest.approx(1.0)
    assert res.posterior["classwise_ece"].dims == ("chain", "draw", "class")


def test_quantile_bins_have_near_equal_pool_mass(rng):
    scores = rng.beta(8, 2, size=1000)
    p = Predictions.from_top1(np.where(rng.random(1000) < 0.5, "a", "b"), scores, classes=["a", "b"])
    res = assess_calibration(p, bins=8, binning="quantile", seed=0)
    # Distinct continuous scores: np.quantile edges split 1000 items into 8 bins of 125 +- 1.
    assert np.all(np.abs(res.summary()["n_pool"].to_numpy() - 125) <= 1)
    assert res.options["binning"] == "quantile"


def test_no_labels_gives_a_prior_only_result():
    p = Predictions.from_top1(["a", "b", "a"], [0.95, 0.65, 0.7])
    res = assess_calibration(p, bins=2, seed=0)
    assert np.isnan(res.frequentist_ece)
    # Prior means equal the bin mean scores: the prior is centred on the diagonal.
    np.testing.assert_allclose(res.counts["bin_score"].values, [0.25, (0.95 + 0.65 + 0.7) / 3])
    np.testing.assert_allclose(res.summary()["accuracy_mean"], res.counts["bin_score"].values, rtol=1e-12)
    out = res.to_json()
    assert out["ece"]["frequentist"] is None
    json.dumps(out, allow_nan=False)
    assert "no labeled items" in res.sentence()


# ------------------------------------------------------------------ JSON, persistence, errors
def test_json_contract(toy):
    res = assess_calibration(toy, bins=4, seed=0)
    out = res.to_json()
    assert {"metric", "ece", "bins", "classwise_ece"} <= set(out)
    assert out["metric"] == "calibration"
    assert {"mean", "hdi", "frequentist"} <= set(out["ece"])
    assert {"edges", "n", "mean_score", "accuracy_mean", "accuracy_hdi"} <= set(out["bins"])
    assert {"classes", "mean"} <= set(out["classwise_ece"])
    assert out["bins"]["n"] == [1, 1, 2, 2]  # labeled counts
    assert out["bins"]["n_pool"] == [2, 1, 2, 3]
    assert out["bins"]["edges"] == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert len(out["bins"]["accuracy_hdi"]) == 4 and all(len(pair) == 2 for pair in out["bins"]["accuracy_hdi"])
    assert out["ece"]["frequentist"] == pytest.approx(0.175)
    assert len(out["ece"]["hdi"]) == 2
    assert out["classwise_ece"]["classes"] == ["a", "b"] and len(out["classwise_ece"]["mean"]) == 2
    json.dumps(out, allow_nan=False)
    plain = assess_calibration(toy, bins=4, seed=0, classwise=False).to_json()
    assert plain["classwise_ece"] == {"classes": [], "mean": []}


def test_save_load_round_trip(toy, tmp_path):
    res = assess_calibration(toy, bins=4, seed=0)
    back = AssessmentResult.load(res.save(tmp_path / "cal.nc"))
    assert isinstance(back, CalibrationResult)
    assert back.engine == "conjugate" and back.options == res.options and back.prior == res.prior
    np.testing.assert_allclose(back.summary().to_numpy(dtype=float), res.summary().to_numpy(dtype=float))
    np.testing.assert_allclose(back.classwise_summary().to_numpy(dtype=float),
                               res.classwise_summary().to_numpy(dtype=float))
    assert back.to_json() == res.to_json()


def test_bad_inputs_raise_clear_errors(toy):
    with pytest.raises(ConfigError, match="bins must be at least 1"):
        assess_calibration(toy, bins=0)
    with pytest.raises(ConfigError, match="whole number"):
        assess_calibration(toy, bins=2.5)
    with pytest.raises(ConfigError, match="unknown binning 'log'"):
        assess_calibration(toy, binning="log")
    with pytest.raises(ConfigError, match="cover"):
        assess_calibration(toy, bins=[0.2, 0.5, 1.0])
    with pytest.raises(ConfigError, match="increasing"):
        assess_calibration(toy, bins=[0.0, 0.5, 0.5, 1.0])
    with pytest.raises(ConfigError, match="unknown inference 'gibbs'"):
        assess_calibration(toy, inference="gibbs")
    with pytest.raises(ConfigError, match="pseudocount"):
        assess_calibration(toy, pseudocount=-1)
    with pytest.raises(DataError, match="Predictions"):
        assess_calibration([0.3, 0.9])
    with pytest.raises(NotFittedError, match="classwise=True"):
        assess_calibration(toy, bins=4, classwise=False).classwise_summary()


# ------------------------------------------------------------------ real data
def test_svhn_ece_concentrates_near_frequentist(svhn):
    res = assess_calibration(svhn, seed=0)
    assert res.counts["n_labeled"].values.sum() == 26032
    acc = res.counts["correct"].values.sum() / 26032
    assert acc == pytest.approx(0.968, abs=0.001)
    summ = res.ece_summary()
    # With every item labeled, theta_b has posterior sd ~ sqrt(theta (1 - theta) / n_b), so the ECE
    # posterior sd is ~ sqrt(sum_b p_b^2 var_b) ~ 1e-3; its mean differs from the plug-in ECE by prior
    # shrinkage pc / (n_b + pc) and the upward bias of |.| (at most ~ one posterior sd). Monte Carlo
    # error of the mean is sd / sqrt(4000) ~ 1.5e-5, negligible.
    assert summ["sd"] < 0.002
    assert abs(summ["mean"] - summ["frequentist"]) < 2 * summ["sd"]
    assert summ["hdi_low"] <= summ["frequentist"] <= summ["hdi_high"]
    # With 300 labels the same posterior is much wider (sd ~ 1/sqrt(n): about 9 times).
    few = svhn.with_labels(np.where(np.arange(svhn.n_items) % 87 == 0, svhn.labels, None))
    assert few.n_labeled == 300
    assert assess_calibration(few, seed=0).ece_summary()["sd"] > 3 * summ["sd"]
    # Classwise: 10 classes; biases are s_k - (pc s_k + c_k)/(pc + n_k), within 2 / n_k of the plug-in.
    table = res.classwise_summary()
    assert table.shape[0] == 10 and res.draws("classwise_ece").shape == (4000, 10)
    gap = np.abs(table["bias_mean"] - table["bias_frequentist"]).to_numpy()
    assert np.all(gap < 2 / table["n_labeled"].to_numpy())


def test_svhn_quantile_bins_equal_mass(svhn):
    res = assess_calibration(svhn, bins=10, binning="quantile", seed=0, classwise=False)
    n_pool = res.summary()["n_pool"].to_numpy()
    assert n_pool.size == 10 and n_pool.sum() == 26032
    # 26032 / 10 = 2603.2 items per bin; ties of rounded scores could shift a few items only.
    assert np.all(np.abs(n_pool - 2603.2) <= 5)


def test_cifar100_facts_through_counts(cifar100):
    res = assess_calibration(cifar100, seed=0)
    c = res.counts
    assert c["n_pool"].values.sum() == 10000
    assert c["correct"].values.sum() / c["n_labeled"].values.sum() == pytest.approx(0.7414, abs=1e-12)
    assert c["class_n_pool"].values.min() == 78 and c["class_n_pool"].values.max() == 131
    assert res.classwise_summary().shape[0] == 100


# ------------------------------------------------------------------ MCMC engine
# Short chains (2 x 200-500 draws) make the max R-hat over ~100 quantities reach 1.01-1.03 by chance
# even at ESS > 1000, so its warning is silenced here; 4 x 1000 draws on CIFAR-100 give R-hat < 1.01.
SHORT_CHAINS = pytest.mark.filterwarnings("ignore:MCMC diagnostics:UserWarning")


@SHORT_CHAINS
def test_mcmc_engine_plumbing(toy, sample_kwargs, monkeypatch):
    """Plumbing only: mocked sampling (prior draws shaped like pm.sample's); the SVHN test runs NUTS."""
    import pymc

    from pbassess.inference import mock_pymc_sample

    monkeypatch.setattr(pymc, "sample", mock_pymc_sample)
    res = assess_calibration(toy, bins=4, inference="nuts", sample_kwargs=sample_kwargs, seed=0)
    assert res.engine == "mcmc" and res.inference == "nuts"
    # one log-likelihood value per labeled item of the reliability diagram
    assert res.idata["log_likelihood"]["correct"].shape == (2, 200, int(res.counts["n_labeled"].sum()))
    assert res.posterior["ece"].dims == ("chain", "draw")
    assert res.posterior["accuracy"].shape == (2, 200, 4)
    assert res.posterior["classwise_ece"].shape == (2, 200, 2)
    assert "classwise_accuracy" in res.idata["posterior"]
    assert res.diagnostics["divergences"] == 0
    # The ECE deterministic is sum_b p_b |theta_b - s_b| of the sampled bin accuracies.
    p = np.array([2, 1, 2, 3]) / 8
    s = np.array([0.05, 0.3, 0.575, 0.9])
    np.testing.assert_allclose(res.draws("ece"), np.abs(res.draws("accuracy") - s) @ p, rtol=1e-10)


@SHORT_CHAINS
def test_mcmc_agrees_with_conjugate_on_svhn(svhn):
    import arviz as az

    exact = assess_calibration(svhn, seed=0)
    res = assess_calibration(svhn, inference="nuts", seed=5,
                             sample_kwargs={"tune": 500, "draws": 500, "chains": 2, "cores": 1})
    assert res.diagnostics["divergences"] == 0
    ess = az.ess(res.idata, var_names=["accuracy", "ece", "classwise_ece"])
    # Bin accuracies: exact Beta means vs MCMC means, MC standard error sd / sqrt(ESS) per bin.
    a = res.counts["prior_alpha"].values + res.counts["correct"].values
    b = res.counts["prior_beta"].values + res.counts["n_labeled"].values - res.counts["correct"].values
    sd = np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    z = (res.bin_accuracy()[0] - exact.bin_accuracy()[0]) / (sd / np.sqrt(ess["accuracy"].to_numpy()))
    assert np.max(np.abs(z)) < 4.5
    # ECEs: both sides are Monte Carlo (4000 independent conjugate draws, ESS for MCMC); 4.5 combined SEs.
    for var in ("ece", "classwise_ece"):
        d_exact, d_mcmc = exact.draws(var), res.draws(var)
        se = np.sqrt(d_exact.var(axis=0) / d_exact.shape[0] + d_mcmc.var(axis=0) / ess[var].to_numpy())
        assert np.all(np.abs(d_mcmc.mean(axis=0) - d_exact.mean(axis=0)) < 4.5 * se)


# ------------------------------------------------------------------ plots
def test_plot_reliability(toy):
    res = assess_calibration(toy, bins=4, seed=0)
    fig = plot_reliability(res)
    main, hist = fig.axes
    assert len(hist.patches) == 4  # one histogram bar per bin
    assert [bar.get_height() for bar in hist.patches] == [2, 1, 2, 3]
    assert len(main.containers) == 1 and len(main.containers[0].lines[0].get_xdata()) == 4
    _, ax = plt.subplots()
    assert plot_reliability(res, ax=ax) is ax
    assert len(ax.figure.axes) == 2  # the twin axis holding the histogram
    assert isinstance(res.plot(), matplotlib.figure.Figure)


def test_plot_ece_and_classwise(svhn):
    res = assess_calibration(svhn, seed=0)
    ax = plot_ece(res).axes[0]
    assert len(ax.lines) == 1 and ax.lines[0].get_xdata()[0] == pytest.approx(res.frequentist_ece)
    assert len(ax.patches) == 61  # 60 histogram bars and the HDI band
    fig = plot_classwise_ece(res, top=4)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert len(labels) == 4
    assert labels[0] == res.classwise_summary()["ece_mean"].idxmax()
    with pytest.raises(ConfigError, match="top"):
        plot_classwise_ece(res, top=0)
