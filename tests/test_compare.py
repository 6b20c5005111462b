"""Group and model comparisons, ROPE probabilities, the fairness table and the labeling simulation."""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from pbassess import Predictions
from pbassess.assess.compare import (
    ComparisonResult,
    active_rope_scores,
    compare_groups,
    compare_models,
    rope_decision,
    rope_probabilities,
    rope_probabilities_beta,
    simulate_rope_labeling,
)
from pbassess.assess.fairness import fairness_comparisons, fairness_table, score_columns
from pbassess.errors import ConfigError, DataError
from pbassess.results import AssessmentResult
from pbassess.stats import beta_draws


def _binary_pool(rng, n=2000, shift=0.0):
    sex = rng.choice(["F", "M"], n, p=[0.4, 0.6])
    y = (rng.random(n) < 0.4).astype(int)
    score = np.clip(0.5 + (y - 0.5) * 0.5 + rng.normal(0, 0.25, n) + np.where(sex == "M", shift, 0), 0, 1)
    labels = np.where(rng.random(n) < 0.8, y.astype(str), None)
    return Predictions.from_binary_scores(score, labels, groups={"sex": sex}), y


# ---------------------------------------------------------------------------- ROPE helpers
def test_rope_probabilities_from_draws():
    d = np.array([-0.3, -0.05, 0.0, 0.05, 0.051, 0.4])
    assert rope_probabilities(d, 0.05).tolist() == pytest.approx([1 / 6, 3 / 6, 2 / 6])
    assert rope_probabilities(d, 0.0)[1] == pytest.approx(1 / 6)
    with pytest.raises(ConfigError, match="non-negative"):
        rope_probabilities(d, -0.1)


def test_rope_probabilities_beta_matches_monte_carlo():
    params = (30.0, 10.0, 50.0, 30.0)
    exact = rope_probabilities_beta(*params, 0.05)
    d = beta_draws(params[0:1], params[1:2], 200_000, seed=1)[:, 0] - beta_draws(params[2:3], params[3:4], 200_000,
                                                                                seed=2)[:, 0]
    # 200k draws: binomial SE of each probability <= 0.0011; tolerance 0.005 (> 4 SE).
    assert exact == pytest.approx(rope_probabilities(d, 0.05), abs=0.005)
    assert exact.sum() == pytest.approx(1.0)


def test_rope_decision_codes():
    assert rope_decision([[0.96, 0.04, 0], [0, 0.95, 0.05], [0.1, 0.1, 0.8]]).tolist() == [0, 1, -1]


# ---------------------------------------------------------------------------- groups
def test_accuracy_groups_match_conjugate_posterior(rng):
    p, _ = _binary_pool(rng)
    r = compare_groups(p, "sex", rope=0.03, seed=0, draws=10_000)  # per chain: 40k draws
    sex = p.group("sex")
    for i, g in enumerate(r.groups):
        m = (sex == g) & p.labeled
        n, k = m.sum(), p.correct[m].sum()
        assert r.counts["n"].to_numpy()[i] == n and r.counts["successes"].to_numpy()[i] == k
        # Exact posterior mean (k + 1)/(n + 2); 4 x 10k draws of a Beta with sd ~0.015: SE < 1e-4.
        assert r.group_summary()["mean"][i] == pytest.approx((k + 1) / (n + 2), abs=5e-4)
    d = r.draws("difference")[:, 0]
    assert np.allclose(d, r.draws("value")[:, 0] - r.draws("value")[:, 1])
    pair = r.to_json()["pairs"][0]
    assert pair["p_greater"] == pytest.approx((d > 0).mean())
    assert sum(pair["rope"]) == pytest.approx(1.0)


@pytest.mark.parametrize("metric", ["tpr", "fpr"])
def test_rates_count_the_right_items(rng, metric):
    p, _ = _binary_pool(rng)
    r = compare_groups(p, "sex", metric=metric, seed=0)
    sex = p.group("sex")
    truth = 1 if metric == "tpr" else 0
    for i, g in enumerate(r.groups):
        m = (sex == g) & p.labeled & (p.labels == truth)
        assert r.counts["n"].to_numpy()[i] == m.sum()
        assert r.counts["successes"].to_numpy()[i] == (p.predicted[m] == 1).sum()


def test_calibration_bias_and_ece(rng):
    p, _ = _binary_pool(rng)
    acc = compare_groups(p, "sex", seed=4, draws=500)
    bias = compare_groups(p, "sex", metric="calibration-bias", seed=4, draws=500)
    sex = p.group("sex")
    mean_conf = np.array([p.confidence[sex == g].mean() for g in acc.groups])
    # Same seed, same Beta draws: bias = mean confidence - accuracy, draw by draw.
    assert np.allclose(bias.draws("value"), mean_conf - acc.draws("value"))
    ece = compare_groups(p, "sex", metric="ece", bins=10, seed=0)
    v = ece.draws("value")
    assert (v >= 0).all() and (v <= 1).all()
    assert ece.counts["n"].to_numpy().sum() == p.n_labeled


def test_many_groups_all_pairs(rng):
    g = rng.choice(["a", "b", "c", "d"], 400)
    p = Predictions.from_binary_scores(rng.random(400), rng.integers(0, 2, 400), groups={"g": g})
    r = compare_groups(p, "g", seed=0)
    out = r.to_json()
    assert [(x["a"], x["b"]) for x in out["pairs"]] == [("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"),
                                                        ("b", "d"), ("c", "d")]
    r2 = compare_groups(p, "g", groups=["d", "a"], seed=0)
    assert r2.groups == ["d", "a"]


def test_group_errors(rng):
    p, _ = _binary_pool(rng, n=100)
    with pytest.raises(DataError, match="no value 'X'"):
        compare_groups(p, "sex", groups=["F", "X"])
    with pytest.raises(ConfigError, match="unknown metric"):
        compare_groups(p, "sex", metric="f1")
    with pytest.raises(TypeError, match="engine"):  # no old keywords: inference= only
        compare_groups(p, "sex", engine="mcmc")
    with pytest.raises(TypeError, match="tune"):  # NUTS settings go in sample_kwargs
        compare_groups(p, "sex", inference="nuts", tune=100)
    multi = Predictions.from_top1(["a", "b", "c"], [0.9, 0.8, 0.7], ["a", "b", "a"], groups={"g": ["x", "y", "y"]})
    with pytest.raises(DataError, match="binary classifier"):
        compare_groups(multi, "g", metric="tpr")
    with pytest.raises(DataError, match="at least two groups"):
        compare_groups(multi, "g", groups=["x"])


def test_mcmc_engine_agrees_with_conjugate(rng):
    p, _ = _binary_pool(rng, n=600)
    exact = compare_groups(p, "sex", seed=0, draws=5000).group_summary()["mean"].to_numpy()
    mcmc = compare_groups(p, "sex", inference="nuts", seed=0, draws=500,
                          sample_kwargs={"tune": 300, "chains": 2, "cores": 1, "sampler": "pymc"})
    # Posterior sds ~0.02; MCMC SE with ESS >= 300 is < 0.0015: tolerance 0.006.
    assert mcmc.group_summary()["mean"].to_numpy() == pytest.approx(exact, abs=0.006)
    assert mcmc.posterior.sizes["chain"] == 2


def test_result_roundtrip_and_plot(rng, tmp_path):
    p, _ = _binary_pool(rng, n=300)
    r = compare_groups(p, "sex", rope=0.05, seed=0)
    back = AssessmentResult.load(r.save(tmp_path / "cmp.nc"))
    assert isinstance(back, ComparisonResult)
    a_json, b_json = r.to_json(), back.to_json()
    assert b_json["groups"] == a_json["groups"] and b_json["mean"] == pytest.approx(a_json["mean"])
    assert b_json["pairs"][0]["rope"] == pytest.approx(a_json["pairs"][0]["rope"])
    assert back.rope == 0.05 and "sex" in back.sentence()
    assert len(r.plot().axes) == 2


# ---------------------------------------------------------------------------- models (paired)
def test_paired_model_counts_and_mean(rng):
    n = 3000
    y = rng.integers(0, 2, n)
    base = np.clip(y * 0.6 + 0.2 + rng.normal(0, 0.2, n), 0, 1)
    a = Predictions.from_binary_scores(base, y)
    b = Predictions.from_binary_scores(np.clip(base + rng.normal(0, 0.02, n), 0, 1), y)
    r = compare_models({"A": a, "B": b}, rope=0.01, seed=0, draws=5000)  # per chain: 20k draws
    joint = r.counts["joint"].sel(pair="A - B").to_numpy()
    ca, cb = a.correct, b.correct
    assert joint.tolist() == [int((ca & cb).sum()), int((ca & ~cb).sum()), int((~ca & cb).sum()),
                              int((~ca & ~cb).sum())]
    # Posterior mean of pi_onlyA - pi_onlyB under Dirichlet(0.5 + counts): (c1 - c2)/(n + 2).
    d = r.draws("difference")[:, 0]
    assert d.mean() == pytest.approx((joint[1] - joint[2]) / (n + 2), abs=5e-4)
    # Pairing: the correlated models' difference is far more precise than independent Betas imply
    # (and the rates come from the same joint posterior: their difference is the paired one, draw by draw).
    va, vb = r.draws("value").T
    assert d.std() < 0.5 * np.sqrt(va.var() + vb.var())
    np.testing.assert_allclose(va - vb, d, atol=1e-12)


def test_model_comparison_errors(rng):
    a = Predictions.from_binary_scores([0.2, 0.8], [0, 1])
    b = Predictions.from_binary_scores([0.2, 0.8, 0.5], [0, 1, 1])
    with pytest.raises(DataError, match="same items"):
        compare_models({"A": a, "B": b})
    c = Predictions.from_binary_scores([0.2, 0.8], [1, 1])
    with pytest.raises(DataError, match="different labels"):
        compare_models({"A": a, "C": c})
    with pytest.raises(DataError, match="at least two"):
        compare_models({"A": a})
    with pytest.raises(TypeError, match="engine"):
        compare_models({"A": a, "B": a}, engine="mcmc")
    with pytest.raises(TypeError, match="chains"):
        compare_models({"A": a, "B": a}, inference="nuts", chains=2)
    with pytest.raises(ConfigError, match="at most 12 models"):
        compare_models({f"m{i}": a for i in range(13)})


def _models_on_same_items(rng, n, n_models=3, flip=(0.0, 0.08, 0.15)):
    """Binary classifiers on the same n items whose errors are correlated (each flips a few of a base model's scores)."""
    y = rng.integers(0, 2, n)
    base = np.clip(y * 0.6 + 0.2 + rng.normal(0, 0.2, n), 0.01, 0.99)
    out = {}
    for m in range(n_models):
        score = np.where(rng.random(n) < flip[m], 1 - base, base)
        out["ABCDEFGH"[m]] = Predictions.from_binary_scores(score, y)
    return out


def test_paired_spec_is_the_exact_dirichlet_posterior(rng):
    """Three models: every rate and pairwise difference has the closed-form Dirichlet(pc/8 + counts) mean and sd."""
    models = _models_on_same_items(rng, 400)
    r = compare_models(models, seed=1, draws=10_000)  # 40k exact draws
    right = np.stack([p.correct for p in models.values()])
    # the joint outcome counts, directly: index = sum_m wrong_m 2**(2 - m)
    cell = (~right[0]) * 4 + (~right[1]) * 2 + (~right[2]) * 1
    counts = np.bincount(cell, minlength=8)
    np.testing.assert_array_equal(r.idata["constant_data"]["joint_counts"].to_numpy(), counts)
    a = 2.0 / 8 + counts  # default pseudocount 2
    total = a.sum()
    mean_pi = a / total
    var_pi = mean_pi * (1 - mean_pi) / (total + 1)
    # model m's rate is the sum of pi over the outcomes where m is right: a Beta(pc/2 + k, pc/2 + n - k)
    rights = np.array([[not (c >> (2 - m)) & 1 for m in range(3)] for c in range(8)], dtype=float)
    rate_mean = mean_pi @ rights
    np.testing.assert_allclose(rate_mean, (1 + right.sum(axis=1)) / (400 + 2), rtol=1e-12)
    # 40k independent draws, posterior sd ~0.02: Monte Carlo SE of a mean ~1e-4; tolerance 6e-4
    assert r.group_summary()["mean"].to_numpy() == pytest.approx(rate_mean, abs=6e-4)
    d = r.draws("difference")
    for col, (i, j) in enumerate([(0, 1), (0, 2), (1, 2)]):
        only_i = (rights[:, i] == 1) & (rights[:, j] == 0)
        only_j = (rights[:, i] == 0) & (rights[:, j] == 1)
        ai, aj = a[only_i].sum(), a[only_j].sum()
        exact_mean = (ai - aj) / total
        # Var(X - Y) of two Dirichlet components (each a sum of cells): Var X + Var Y + 2 ai aj / (A^2 (A + 1))
        var = (ai * (total - ai) + aj * (total - aj) + 2 * ai * aj) / (total**2 * (total + 1))
        assert d[:, col].mean() == pytest.approx(exact_mean, abs=6e-4)
        assert d[:, col].std() == pytest.approx(np.sqrt(var), rel=0.02)
        # each pair's outcomes are Dirichlet(pc/4 + pair counts): the pairwise counts agree
        joint = r.counts["joint"].isel(pair=col).to_numpy()
        assert joint[1] == right[i][~right[j]].sum() and joint[2] == right[j][~right[i]].sum()
        assert (ai, aj) == pytest.approx((2.0 / 4 + joint[1], 2.0 / 4 + joint[2]))
    # the pairing: far tighter than independent Betas of the two rates would say
    va, vb = r.draws("value")[:, 0], r.draws("value")[:, 1]
    indep_sd = np.sqrt(va.var() + vb.var())
    assert d[:, 0].std() < 0.7 * indep_sd
    # the joint outcome probabilities themselves (posterior sd < 0.03: Monte Carlo SE < 1.5e-4)
    assert np.sqrt(var_pi).max() < 0.03
    np.testing.assert_allclose(r.idata["posterior"]["outcome_prob"].mean(("chain", "draw")).to_numpy(), mean_pi,
                               atol=1e-3)


def test_paired_exact_loo_is_brute_force_leave_one_out(rng):
    """Refit compare_models without each item (mask=): the held-out joint outcome's posterior predictive."""
    models = _models_on_same_items(rng, 24, flip=(0.0, 0.2, 0.3))
    full = compare_models(models, seed=0, draws=50)
    loo = full.loo()
    assert loo.n_data_points == 24 and float(loo.pareto_k.max()) == 0.0
    outcome = full.idata["observed_data"]["outcome"].to_numpy()
    brute = []
    for i in range(24):
        keep = np.arange(24) != i
        refit = compare_models(models, mask=keep, seed=0, draws=2000)
        const = refit.idata["constant_data"]
        a = const["prior_alpha"].to_numpy() + const["joint_counts"].to_numpy()
        assert a.sum() == pytest.approx(2.0 + 23)
        brute.append(np.log(a[outcome[i]] / a.sum()))  # E[pi_k] under the refit's Dirichlet posterior
        # and the refit's own draws say the same, up to Monte Carlo error (8000 draws; sd of pi_k < 0.1)
        mc = refit.idata["posterior"]["outcome_prob"].isel(joint=outcome[i]).mean().item()
        assert mc == pytest.approx(np.exp(brute[-1]), abs=0.01)
    np.testing.assert_allclose(loo.elpd_i.to_numpy(), brute, rtol=1e-12)
    assert loo.elpd == pytest.approx(sum(brute))


def test_paired_nuts_agrees_with_conjugate(rng):
    """Real NUTS (nutpie) on the Poisson-Gamma model, an empty joint outcome included (boosted variables)."""
    y = np.tile([1, 0], 30)
    a_score = np.where(rng.random(60) < 0.85, np.where(y == 1, 0.8, 0.2), np.where(y == 1, 0.3, 0.7))
    b_score = np.where((a_score > 0.5) == (y == 1), a_score, np.where(rng.random(60) < 0.5, 1 - a_score, a_score))
    models = {"A": Predictions.from_binary_scores(a_score, y), "B": Predictions.from_binary_scores(b_score, y)}
    exact = compare_models(models, seed=0, draws=10_000)
    joint = exact.counts["joint"].to_numpy()[0]
    assert joint[1] == 0  # B is never wrong where A is right: "only A right" is empty, so it is boosted
    nuts = compare_models(models, inference="nuts", seed=0, draws=400, sample_kwargs={"tune": 400})
    assert nuts.inference == "nuts" and nuts.diagnostics["ok"], nuts.diagnostics
    assert {"boost_gamma", "boost_exponential", "gamma"} <= set(nuts.idata["posterior"].data_vars)
    ess = nuts.diagnostics["min_ess_bulk"]
    for var in ("value", "difference"):
        c = exact.posterior[var].mean(("chain", "draw")).to_numpy()
        n = nuts.posterior[var].mean(("chain", "draw")).to_numpy()
        sd = exact.posterior[var].std(("chain", "draw")).to_numpy()
        assert np.all(np.abs(c - n) <= 4 * sd / np.sqrt(ess)), (var, c, n, sd, ess)
    # the same closed-form LOO for both inferences (it is the model's, not the draws')
    assert nuts.loo().elpd == pytest.approx(exact.loo().elpd, rel=1e-12)


def test_paired_result_roundtrip_and_metrics(rng, tmp_path):
    models = _models_on_same_items(rng, 300)
    r = compare_models(models, rope=0.02, seed=0, draws=300)
    back = AssessmentResult.load(r.save(tmp_path / "models.nc"))
    assert isinstance(back, ComparisonResult) and back.to_json() == r.to_json()
    assert back.loo().elpd == pytest.approx(r.loo().elpd, rel=1e-12)
    assert [(x["a"], x["b"]) for x in r.to_json()["pairs"]] == [("A", "B"), ("A", "C"), ("B", "C")]
    assert sorted(v.name for v in back.model.free_RVs) == sorted(v.name for v in r.model.free_RVs)
    # calibration bias: mean confidence minus the paired accuracy, draw by draw (same seed, same draws)
    bias = compare_models(models, metric="calibration-bias", seed=0, draws=300)
    conf = np.array([p.confidence.mean() for p in models.values()])
    np.testing.assert_allclose(bias.draws("value"), conf - r.draws("value"), atol=1e-12)
    # TPR: the trials are the labeled positives
    tpr = compare_models(models, metric="tpr", seed=0, draws=300)
    pos = models["A"].labels == 1
    assert tpr.counts["n"].to_numpy().tolist() == [int(pos.sum())] * 3
    assert tpr.idata["log_likelihood"].sizes["item"] == int(pos.sum())
    # ECE: independent bin posteriors per model, one observation per (model, labeled item)
    ece = compare_models(models, metric="ece", bins=5, seed=0, draws=300)
    v = ece.draws("value")
    assert (v >= 0).all() and (v <= 1).all()
    assert ece.idata["log_likelihood"].sizes["item"] == 3 * 300 and ece.loo().n_data_points == 900
    back = AssessmentResult.load(ece.save(tmp_path / "ece.nc"))
    assert back.to_json() == ece.to_json()


# ---------------------------------------------------------------------------- labeling simulation
def test_active_scores_prefer_the_uncertain_group():
    s = active_rope_scores(np.array([[3.0, 800.0]]), np.array([[2.0, 200.0]]), 0.05)
    assert s[0, 0] > s[0, 1]


def test_labeling_simulation_mechanics(rng):
    g = np.repeat(["a", "b"], [240, 160])
    correct = rng.random(400) < np.where(g == "a", 0.92, 0.62)
    p = Predictions.from_top1(np.where(correct, "x", "y"), np.full(400, 0.8), np.full(400, "x"),
                              classes=["x", "y"], groups={"g": g})
    sim = simulate_rope_labeling(p, "g", rope=0.05, n_runs=12, seed=3, checkpoints=[10, 40, 100, 200, 400])
    assert sim.full_decision == "above" and sim.n_items == 400
    for strategy in ("random", "active"):
        # With every label revealed, each run's decision is the full-data one.
        assert sim.match_rate[strategy][-1] == 1.0
        assert sim.labels_needed[strategy] is not None and sim.labels_needed[strategy] <= 400
    # Random acquisition samples the groups in proportion to their sizes (240 / 400 = 0.6);
    # at 200 labels the share's sd per run is ~0.025, over 12 runs ~0.007.
    assert sim.group_share["random"][3] == pytest.approx(0.6, abs=0.04)
    assert list(sim.summary()["strategy"]) == ["random", "active"]
    assert "labels needed" in sim.sentence().lower() and sim.plot().axes
    with pytest.raises(DataError, match="exactly two groups"):
        simulate_rope_labeling(p, "g", groups=["a"])


# ---------------------------------------------------------------------------- CLI
def test_cli_compare_contract(tmp_path, rng, capsys):
    from pbassess.cli import main

    n = 200
    y = rng.integers(0, 2, n)
    lines = [",sex,y,score_A,score_B"]
    for i in range(n):
        lines.append(f"{i},{'F' if i % 3 else 'M'},{y[i]},{rng.random():.3f},{rng.random():.3f}")
    f = tmp_path / "scores.csv"
    f.write_text("\n".join(lines) + "\n")
    assert main(["compare", str(f), "--by", "sex", "--models", "score_A", "--rope", "0.05", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"groups", "mean", "hdi", "pairs", "metric", "inference", "ci_prob", "diagnostics", "sentence"} <= set(out)
    assert set(out["pairs"][0]) == {"a", "b", "diff_mean", "p_greater", "rope"} and len(out["pairs"][0]["rope"]) == 3
    assert main(["compare", str(f), "--models", "A,B", "--by", "sex", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["groups"] == ["A", "B"] and set(out["by_group"]) == {"F", "M"}
    assert main(["compare", str(f), "--by", "sex", "--models", "A", "--metric", "fpr"]) == 0
    assert "fpr by sex" in capsys.readouterr().out
    assert main(["compare", str(f), "--by", "sex", "--models", "A", "--metric", "nope"]) == 2
    assert "unknown metric" in capsys.readouterr().err
    assert main(["compare", str(f), "--models", "A"]) == 2
    assert "--by" in capsys.readouterr().err


# ---------------------------------------------------------------------------- fairness data
def test_fairness_group_differences_agree_with_direct_counting(shared_data_dir):
    """Adult (10,054 labeled items): posterior means and differences equal the direct rates to
    within the prior's O(1/n) pull (< 3e-4 here) plus Monte Carlo error (SE < 2e-4)."""
    comps = fairness_comparisons("adult-sex", "sex", rope=0.02, seed=0)
    assert len(comps) == 10 and set(score_columns("adult-sex")) == {f"score_{c}" for c in comps}
    table = fairness_table(comps)
    assert np.allclose(table["mean_a"], table["raw_a"], atol=2e-3)
    assert np.allclose(table["mean_b"], table["raw_b"], atol=2e-3)
    assert np.allclose(table["diff_mean"], table["raw_a"] - table["raw_b"], atol=2e-3)
    # Direct counting from the file itself for one classifier.
    import pandas as pd

    frame = pd.read_csv(shared_data_dir / "fairness" / "adult_sex_scores.csv.gz")
    pred = (frame["score_LR"] >= 0.5).astype(int)
    right = pred == frame["income-per-year"]
    direct = right.groupby(frame["sex"]).mean()
    row = table.set_index("classifier").loc["LR"]
    assert row["a"] == "Female" and row["mean_a"] == pytest.approx(direct["Female"], abs=2e-3)
    assert row["diff_mean"] == pytest.approx(direct["Female"] - direct["Male"], abs=2e-3)
    # TPR against direct counting as well.
    tpr = compare_groups(__import__("pbassess").load_data("adult-sex", model="score_LR"), "sex", metric="tpr", seed=0)
    pos = frame["income-per-year"] == 1
    direct_tpr = (pred[pos] == 1).groupby(frame["sex"][pos]).mean()
    assert tpr.group_summary()["mean"].to_numpy() == pytest.approx(direct_tpr[tpr.groups].to_numpy(), abs=6e-3)


def test_fairness_plot(shared_data_dir):
    from pbassess.plots.compare import plot_fairness

    comps = fairness_comparisons("german-sex", "sex", models=["LR", "RandomForest"], seed=0)
    fig = plot_fairness(comps)
    assert len(fig.axes) == 2
