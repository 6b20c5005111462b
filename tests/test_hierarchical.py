"""Hierarchical multi-environment models, result objects, model comparison and the CLI."""

from __future__ import annotations

import json
import warnings

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from pbassess import Predictions
from pbassess.assess.hierarchical import (
    HierarchicalCalibrationResult,
    HierarchicalResult,
    assess_hierarchical,
    assess_hierarchical_calibration,
    fit_accuracy_counts,
)
from pbassess.assess.pooling import compare_variants, prior_predictive_check
from pbassess.errors import ConfigError, DataError
from pbassess.hierarchical.models import (
    EnvironmentCounts,
    accuracy_model,
    calibration_counts,
    calibration_model,
    centered_cells,
    environment_counts,
    population_draws,
    spread_estimate,
)
from pbassess.results import AssessmentResult

# Small, fast NUTS for plumbing checks (PyMC's own sampler: its C code is cached on disk).
FAST = {"draws": 300, "tune": 300, "chains": 2, "sampler": "pymc", "target_accept": 0.9}


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _pool(rng, acc_by_env: dict[str, float], n_by_env: dict[str, int], n_unlabeled: int = 0) -> Predictions:
    envs, correct, labels = [], [], []
    for env, acc in acc_by_env.items():
        n = n_by_env[env]
        envs += [env] * (n + n_unlabeled)
        c = rng.random(n) < acc
        correct += list(c) + [True] * n_unlabeled
        labels += ["x"] * n + [None] * n_unlabeled
    correct = np.array(correct)
    return Predictions.from_top1(np.where(correct, "x", "y"), rng.uniform(0.5, 1.0, correct.size), labels,
                                 classes=["x", "y"], groups={"env": envs})


# ---------------------------------------------------------------------------- counts
def test_environment_counts_match_direct_counting(rng):
    p = _pool(rng, {"a": 0.9, "b": 0.6, "c": 0.7}, {"a": 50, "b": 20, "c": 3}, n_unlabeled=4)
    c = environment_counts(p, "env")
    env = p.group("env")
    for i, e in enumerate(c.environments):
        m = (env == e) & p.labeled
        assert c.n[i] == m.sum() and c.k[i] == p.correct[m].sum()
        assert c.n_items[i] == (env == e).sum()
        assert c.mean_confidence[i] == pytest.approx(p.confidence[env == e].mean())
    pc = environment_counts(p, "env", per_class=True)
    assert pc.n.shape == (3, 2) and pc.n.sum() == c.n.sum() and np.array_equal(pc.k.sum(axis=1), c.k)


def test_environment_counts_errors(rng):
    p = _pool(rng, {"a": 0.9, "b": 0.6}, {"a": 5, "b": 5})
    with pytest.raises(DataError, match="group column 'nope'"):
        environment_counts(p, "nope")
    with pytest.raises(DataError, match="not among the environments"):
        environment_counts(p, "env", environments=["a"])
    c = environment_counts(p, "env", environments=["a", "b", "empty"])
    assert c.n.tolist()[2] == 0 and np.isnan(c.raw_accuracy[2])


def test_calibration_counts_weights_sum_to_one(rng):
    p = _pool(rng, {"a": 0.9, "b": 0.6}, {"a": 40, "b": 30}, n_unlabeled=5)
    c = calibration_counts(p, "env", bins=5)
    assert np.allclose(c.weight.sum(axis=1), 1.0)
    assert c.n.sum() == p.n_labeled and c.n_items.sum() == p.n_items


def test_centering_rule():
    # Large, different environments are centred; agreeing ones are not (spread floor 0.05).
    assert centered_cells([5, 400, 900], [4, 300, 850]).tolist() == [False, True, True]
    assert not centered_cells([500, 500], [300, 300]).any()
    assert centered_cells([5, 5], [1, 4], "centered").all()
    assert not centered_cells([500, 500], [100, 400], "noncentered").any()
    with pytest.raises(ConfigError):
        centered_cells([1], [1], "sideways")
    # Moment estimate of the spread: two environments at logits -1.1 and +1.1 (n large) -> ~1.56.
    assert spread_estimate([10000, 10000], [2500, 7500]) == pytest.approx(np.sqrt(2) * np.log(3), rel=0.02)


# ---------------------------------------------------------------------------- model structure
@pytest.mark.parametrize(
    ("pooling", "kind", "free"),
    [("hierarchical", "logit-normal", {"mu", "sigma", "u_z", "u_c"}),
     ("hierarchical", "beta", {"phi", "kappa", "accuracy"}),
     ("independent", "logit-normal", {"accuracy"}),
     ("pooled", "logit-normal", {"pooled_accuracy"})],
)
def test_accuracy_model_variants(pooling, kind, free):
    m = accuracy_model([5, 900, 400], [4, 850, 300], environments=["a", "b", "c"], pooling=pooling, kind=kind)
    assert {v.name for v in m.free_RVs} == free
    assert m.named_vars_to_dims["accuracy"] == ("environment",)
    assert list(m.coords["cell"]) == ["a", "b", "c"]


def test_accuracy_model_per_class_and_unlabeled_cells():
    n = np.array([[10, 0], [5, 7]])
    m = accuracy_model(n, [[8, 0], [2, 7]], environments=["e1", "e2"], classes=["c1", "c2"])
    assert m.named_vars_to_dims["accuracy"] == ("environment", "class")
    # only labeled cells are observed
    assert list(m.coords["cell"]) == ["e1|c1", "e2|c1", "e2|c2"]


def test_accuracy_model_errors():
    with pytest.raises(ConfigError, match="pooling"):
        accuracy_model([1], [1], environments=["a"], pooling="partial")
    with pytest.raises(ConfigError, match="0 <= k <= n"):
        accuracy_model([1], [2], environments=["a"])
    with pytest.raises(DataError, match="no item of any environment is labeled"):
        accuracy_model([0, 0], [0, 0], environments=["a", "b"])
    with pytest.raises(ConfigError, match="informed prior needs"):
        accuracy_model([3], [2], environments=["a"], pooling="independent", prior="informed")
    with pytest.raises(ConfigError, match="2 names"):
        accuracy_model([3], [2], environments=["a", "b"])


def test_population_draws_closed_forms():
    import xarray as xr

    # sigma -> 0: every environment has accuracy sigmoid(mu).
    post = xr.Dataset({"mu": (("chain", "draw"), [[1.0, -2.0]]), "sigma": (("chain", "draw"), [[1e-9, 1e-9]])})
    out = population_draws(post, "logit-normal", seed=0)
    assert np.allclose(out["population_mean"], 1 / (1 + np.exp(-np.array([[1.0, -2.0]]))), atol=1e-9)
    assert np.allclose(out["population_sd"], 0.0, atol=1e-6)
    # mu = 0: the logit-normal is symmetric about 1/2 for any sigma.
    post = xr.Dataset({"mu": (("chain", "draw"), [[0.0]]), "sigma": (("chain", "draw"), [[2.0]])})
    assert population_draws(post, "logit-normal")["population_mean"][0, 0] == pytest.approx(0.5, abs=1e-12)
    # Beta(phi kappa, (1 - phi) kappa): mean phi, sd sqrt(phi (1 - phi) / (kappa + 1)).
    post = xr.Dataset({"phi": (("chain", "draw"), [[0.8]]), "kappa": (("chain", "draw"), [[19.0]])})
    out = population_draws(post, "beta", seed=0)
    assert out["population_mean"][0, 0] == 0.8 and out["population_sd"][0, 0] == pytest.approx(np.sqrt(0.16 / 20))


# ---------------------------------------------------------------------------- fits
def test_independent_fit_matches_conjugate_posterior():
    """NUTS on the independent uniform-prior model reproduces Beta(k + 1, n - k + 1)."""
    c = EnvironmentCounts("g", ("a", "b"), np.array([40, 12]), np.array([30, 3]), np.array([40, 12]),
                          np.array([0.8, 0.5]))
    r = _quiet(fit_accuracy_counts, c, pooling="independent", seed=3, sample_kwargs={**FAST, "draws": 500})
    mean = r.posterior["accuracy"].mean(("chain", "draw")).to_numpy()
    exact = (c.k + 1) / (c.n + 2)
    # Posterior sds ~0.066 and ~0.11; with ESS >= ~300 the Monte Carlo SE of the mean is < 0.007,
    # so 0.025 is > 3.5 SE.
    assert np.allclose(mean, exact, atol=0.025)


def test_hierarchical_result_contract_and_roundtrip(rng, tmp_path):
    p = _pool(rng, {"a": 0.9, "b": 0.7, "c": 0.8}, {"a": 60, "b": 60, "c": 0}, n_unlabeled=5)
    r = _quiet(assess_hierarchical, p, "env", seed=1, sample_kwargs=FAST)
    assert isinstance(r, HierarchicalResult)
    out = r.to_json()
    assert out["environments"] == ["a", "b", "c"] and out["n_labeled"] == [60, 60, 0]
    assert set(out["population"]) == {"mean", "sd", "new_environment"}
    assert {"max_rhat", "min_ess_bulk", "divergences", "ok"} <= set(out["diagnostics"])
    json.dumps(out, allow_nan=True)
    # The unlabeled environment's posterior is the population's (same centre, similar width).
    table = r.summary()
    pop = table.set_index("environment").loc["new environment"]
    c_row = table.set_index("environment").loc["c"]
    assert abs(c_row["mean"] - pop["mean"]) < 0.03
    assert {"r_hat", "ess_bulk"} <= set(table.columns) and "diagnostics" in table.attrs
    assert "population mean" in r.sentence()
    path = r.save(tmp_path / "h.nc")
    back = AssessmentResult.load(path)
    assert isinstance(back, HierarchicalResult) and back.to_json()["mean"] == pytest.approx(out["mean"])
    fig = r.plot()
    assert fig.axes


def test_per_class_fit_and_plot(rng):
    n = 300
    env = rng.choice(["e1", "e2"], n)
    pred = rng.integers(0, 3, n)
    labels = np.where(rng.random(n) < 0.8, pred, (pred + 1) % 3)
    p = Predictions.from_top1(pred, rng.uniform(0.4, 1, n), labels, classes=["0", "1", "2"], groups={"env": env})
    r = _quiet(assess_hierarchical, p, "env", per_class=True, seed=2, sample_kwargs={**FAST, "draws": 150, "tune": 150})
    out = r.to_json()
    assert out["classes"] == ["0", "1", "2"] and np.shape(out["mean"]) == (2, 3)
    assert r.plot().axes


def test_calibration_fit_consistency(rng, tmp_path):
    conf = rng.uniform(0.5, 1, 600)
    correct = rng.random(600) < conf  # calibrated model
    env = np.repeat(["x", "y", "z"], 200)
    p = Predictions.from_top1(np.where(correct, "a", "b"), conf, np.full(600, "a"), classes=["a", "b"],
                              groups={"env": env})
    r = _quiet(assess_hierarchical_calibration, p, "env", bins=5, seed=0, sample_kwargs=FAST)
    assert isinstance(r, HierarchicalCalibrationResult)
    # The ECE deterministic equals sum_b w_b |theta_b - s_b| recomputed from the draws.
    from pbassess.stats import ece_from_draws

    theta = r.draws("bin_accuracy")
    w = r.counts["weight"].to_numpy()
    s = np.nan_to_num(r.counts["score"].to_numpy())
    assert np.allclose(ece_from_draws(theta, w, s), r.draws("ece"), atol=1e-10)
    # A calibrated model's ECE posterior is small (posterior mean well under 0.1 with 200 labels each).
    assert (r.summary()["ece_mean"] < 0.1).all()
    out = r.to_json()
    assert {"max_rhat", "min_ess_bulk", "divergences", "ok"} <= set(out["diagnostics"]) and len(out["ece"]["mean"]) == 3
    back = AssessmentResult.load(r.save(tmp_path / "c.nc"))
    assert isinstance(back, HierarchicalCalibrationResult)
    fig = r.plot()
    # What is drawn is the result's own posterior summary (the plot computes nothing): the
    # error-bar points of each panel are the bin-accuracy posterior means, titles carry the ECE.
    acc = r.interval("bin_accuracy")
    assert np.allclose(acc["mean"], theta.mean(axis=0)) and acc["hdi"].shape == theta.shape[1:] + (2,)
    ece_mean = r.interval("ece")["mean"]
    for i, env in enumerate(r.environments):
        ax = fig.axes[i]
        ok = np.isfinite(r.counts["score"].to_numpy()[i])
        points = [c for c in ax.containers if hasattr(c, "lines") and c.lines[0] is not None]
        assert np.allclose(points[0].lines[0].get_ydata(), acc["mean"][i][ok])
        assert ax.get_title() == f"{env}\nECE {ece_mean[i]:.3f}, n={int(r.counts['n_labeled'].to_numpy()[i].sum())}"


def test_calibration_model_drops_empty_bins(rng):
    p = _pool(rng, {"a": 0.9, "b": 0.6}, {"a": 40, "b": 30})
    c = calibration_counts(p, "env", bins=10)  # confidences in [0.5, 1): bins below 0.5 empty
    m = calibration_model(c)
    assert len(m.coords["bin"]) == int((c.n_items.sum(axis=0) > 0).sum()) <= 5


def test_prior_predictive_check_uniform_prior():
    """Under Beta(1, 1) the prior predictive of k is uniform on 0..n: P(k' <= k) = (k + 1)/(n + 1)."""
    c = EnvironmentCounts("g", ("a", "b"), np.array([9, 9]), np.array([2, 8]), np.array([9, 9]),
                          np.array([0.5, 0.5]))
    r = _quiet(fit_accuracy_counts, c, pooling="independent", seed=0, prior_predictive=4000,
               sample_kwargs={**FAST, "draws": 100, "tune": 100})
    check = prior_predictive_check(r.idata, c)
    # 4000 draws: binomial SE of a proportion <= 0.008; tolerance 0.03 (> 3.5 SE).
    assert check["tail_prob"].to_numpy() == pytest.approx([3 / 10, 9 / 10], abs=0.03)
    assert check["prior_mean"].to_numpy() == pytest.approx([0.5, 0.5], abs=0.03)


def test_compare_variants_surfaces_diagnostics():
    c = EnvironmentCounts("g", ("a", "b", "c", "d"), np.array([40, 30, 5, 60]), np.array([36, 21, 4, 45]),
                          np.array([40, 30, 5, 60]), np.array([0.9, 0.7, 0.8, 0.75]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cmp = compare_variants(c, seed=0, prior_draws=200, sample_kwargs=FAST)
    assert sorted(cmp.table.index) == ["hierarchical", "independent", "pooled"]
    for col in ("elpd", "pareto_k_bad", "max_rhat", "min_ess_bulk", "divergences", "prior_check_extreme"):
        assert col in cmp.table.columns
    # Every variant whose LOO has bad Pareto k is named in a warning (and raised).
    for name, elpd in cmp.loo.items():
        bad = int(np.sum(np.asarray(elpd.pareto_k) > elpd.good_k))
        assert (bad > 0) == any(w.startswith(f"{name}: Pareto") for w in cmp.warnings)
    raised = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert all(any(m in r for r in raised) for m in cmp.warnings)
    assert "LOO" in cmp.sentence() and cmp.plot().axes


# ---------------------------------------------------------------------------- CLI
def test_cli_hierarchical_json(tmp_path, rng, capsys):
    from pbassess.cli import main

    n = 120
    env = np.repeat(["s1", "s2", "s3"], n // 3)
    correct = rng.random(n) < 0.8
    lines = ["item_id,label,predicted,confidence,site"]
    for i in range(n):
        label = "a" if correct[i] else "b"
        lines.append(f"i{i},{label if i % 5 else ''},a,{rng.uniform(0.5, 1):.3f},{env[i]}")
    f = tmp_path / "pool.csv"
    f.write_text("\n".join(lines) + "\n")
    code = _quiet(main, ["hierarchical", str(f), "--by", "site", "--json", "--draws", "200", "--tune", "200",
                         "--chains", "2", "--sampler", "pymc"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["environments"] == ["s1", "s2", "s3"]
    assert {"max_rhat", "min_ess_bulk", "divergences", "ok"} <= set(out["diagnostics"])
    assert "mean" in out["population"]
    assert main(["hierarchical", str(f), "--by", "nope", "--json"]) == 2
    assert "group column 'nope'" in capsys.readouterr().err


# ---------------------------------------------------------------------------- real data
def test_digits_shift_environments():
    from pbassess.data.registry import load_data, registered_cards

    if "digits-shift" not in registered_cards():
        pytest.skip("digits-shift is not registered yet")
    p = load_data("digits-shift")
    c = environment_counts(p, "environment")
    assert "ood" in c.environments and c.n[c.environments.index("ood")] == 0
    assert len(c.environments) >= 7


@pytest.mark.slow
def test_hierarchical_on_digits_shift_orders_noise_levels():
    """Accuracy falls with the noise level; the unlabeled OOD environment gets the population posterior."""
    from pbassess.data.registry import load_data, registered_cards

    if "digits-shift" not in registered_cards():
        pytest.skip("digits-shift is not registered yet")
    p = load_data("digits-shift")
    r = _quiet(assess_hierarchical, p, "environment", seed=0, draws=500, sample_kwargs={"tune": 500, "chains": 2})
    out = r.to_json()
    mean = dict(zip(out["environments"], out["mean"], strict=True))
    assert mean["clean"] > mean["gaussian-noise-3"] > mean["gaussian-noise-5"]
    raw = dict(zip(out["environments"], out["raw_accuracy"], strict=True))
    # 899 labels each: posterior means within 0.02 of k/n (posterior sd ~0.012-0.017).
    for env in out["environments"]:
        if env != "ood":
            assert abs(mean[env] - raw[env]) < 0.02
    assert out["diagnostics"]["divergences"] == 0


# ---------------------------------------------------------------------------- statistics
def _simulate_counts(rng, mu, sigma, n):
    theta = 1 / (1 + np.exp(-(mu + sigma * rng.standard_normal(len(n)))))
    return theta, rng.binomial(n, theta)


@pytest.mark.slow
def test_hierarchical_recovers_known_parameters():
    rng = np.random.default_rng(11)
    n = np.full(12, 300)
    theta, k = _simulate_counts(rng, 1.2, 0.6, n)
    c = EnvironmentCounts("g", tuple(f"e{i}" for i in range(12)), n, k, n, np.full(12, 0.8))
    r = _quiet(fit_accuracy_counts, c, seed=5, draws=1000, sample_kwargs={"tune": 1000, "chains": 2})
    from pbassess.stats import hdi_from_draws

    for var, truth in (("mu", 1.2), ("sigma", 0.6)):
        lo, hi = hdi_from_draws(r.draws(var), 0.95)
        assert lo <= truth <= hi, (var, lo, hi)
    acc = r.draws("accuracy")
    lo_hi = hdi_from_draws(acc, 0.95, axis=0)
    inside = ((lo_hi[:, 0] <= theta) & (theta <= lo_hi[:, 1])).sum()
    # 95% intervals: P(fewer than 9 of 12 cover) < 0.003 under nominal coverage.
    assert inside >= 9
    assert r.diagnostics["divergences"] == 0


@pytest.mark.slow
def test_partial_pooling_beats_independent_estimates_on_sparse_environments():
    """Over repeated simulations, the hierarchical posterior mean has lower squared error than
    the independent (uniform-prior) posterior mean when most environments have few labels."""
    rng = np.random.default_rng(2026)
    n = np.array([4, 4, 6, 6, 8, 8, 150, 150])
    err_h, err_i = [], []
    for rep in range(5):
        theta, k = _simulate_counts(rng, 1.0, 0.4, n)
        c = EnvironmentCounts("g", tuple(f"e{i}" for i in range(n.size)), n, k, n, np.full(n.size, 0.7))
        r = _quiet(fit_accuracy_counts, c, seed=rep, parameterization="noncentered", sample_kwargs={**FAST, "draws": 400})
        est_h = r.posterior["accuracy"].mean(("chain", "draw")).to_numpy()
        est_i = (k + 1) / (n + 2)
        err_h.append(np.sum((est_h - theta) ** 2))
        err_i.append(np.sum((est_i - theta) ** 2))
    # With sigma = 0.4 the sparse environments' raw rates scatter far more than their true
    # accuracies; shrinkage reduces the summed squared error substantially (expected ratio ~0.4).
    assert np.sum(err_h) < 0.8 * np.sum(err_i), (np.sum(err_h), np.sum(err_i))


# ---------------------------------------------------------------------------- the fit layer (issue 18)
def test_environment_counts_list_the_labeled_items(rng):
    p = _pool(rng, {"a": 0.9, "b": 0.6}, {"a": 12, "b": 7}, n_unlabeled=3)
    c = environment_counts(p, "env")
    obs = c.observations
    assert obs.size == int(c.n.sum())
    assert np.bincount(obs.cell, minlength=2).tolist() == c.n.tolist()
    assert np.bincount(obs.cell, weights=obs.outcome, minlength=2).astype(int).tolist() == c.k.tolist()
    pc = environment_counts(p, "env", per_class=True)
    assert np.bincount(pc.observations.cell, minlength=pc.n.size).tolist() == pc.n.ravel().tolist()


def test_spec_per_item_loglik_sums_to_the_binomial_cells():
    from scipy.special import gammaln

    from pbassess.pymc_models.hierarchical import HierarchicalAccuracySpec, observations_from_counts

    n, k = np.array([5, 0, 3]), np.array([4, 0, 1])
    spec = HierarchicalAccuracySpec(n, k, environments=["a", "b", "c"],
                                    observations=observations_from_counts(n, k, ["a", "b", "c"]))
    assert spec.has_conjugate is False and spec.prior_draws(10, None) is None and spec.log_prior({}) is None
    theta = np.random.default_rng(0).uniform(0.1, 0.9, size=(2, 4, 3))
    dims, items, _ = spec.log_likelihood({"accuracy": theta}, per_item=True)
    assert dims == ("item",) and items.shape == (2, 4, 8)
    dims, cells, coords = spec.log_likelihood({"accuracy": theta}, per_item=False)
    assert coords == {"cell": ["a", "c"]}
    coef = (gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1))[[0, 2]]
    per_cell = np.stack([items[..., spec.observations.cell == i].sum(-1) for i in (0, 2)], axis=-1)
    np.testing.assert_allclose(cells, per_cell + coef, rtol=1e-12)


def test_fit_goes_through_the_fit_layer_with_per_item_loglik(rng):
    import arviz as az

    p = _pool(rng, {"a": 0.9, "b": 0.7, "c": 0.8}, {"a": 40, "b": 30, "c": 6}, n_unlabeled=2)
    r = _quiet(assess_hierarchical, p, "env", seed=4, sample_kwargs={**FAST, "chains": 4})
    tree = r.idata
    assert {"posterior", "prior", "log_likelihood", "log_prior", "observed_data", "constant_data",
            "sample_stats"} <= set(tree.children)
    assert tree["log_likelihood"]["correct"].sizes["item"] == 76 == tree["observed_data"]["correct"].size
    assert r.options["sampler"]["target_accept"] == 0.9  # the user's setting over the spec's 0.95
    loo = _quiet(az.loo, tree)
    assert loo.n_data_points == 76 and float(np.mean(loo.pareto_k.to_numpy() < 0.7)) >= 0.95
    # draws= is per chain; every other sampler option only through sample_kwargs ("sampler" = nuts_sampler)
    r2 = _quiet(fit_accuracy_counts, environment_counts(p, "env"), seed=4, draws=100,
                sample_kwargs={"tune": 100, "chains": 2, "sampler": "pymc"})
    assert r2.posterior.sizes["draw"] == 100 and r2.posterior.sizes["chain"] == 2 and r2.engine == "mcmc-pymc"
    assert r2.options["sampler"]["target_accept"] == 0.95
    with pytest.raises(TypeError):
        fit_accuracy_counts(environment_counts(p, "env"), tune=100)  # the old keywords are gone
    with pytest.raises(TypeError):
        assess_hierarchical(p, "env", engine="mcmc")


def test_conjugate_inference_is_refused(rng):
    p = _pool(rng, {"a": 0.9, "b": 0.7}, {"a": 10, "b": 10})
    with pytest.raises(ConfigError, match="no conjugate posterior"):
        assess_hierarchical(p, "env", inference="conjugate")


def test_calibration_counts_list_the_labeled_items_by_bin(rng):
    p = _pool(rng, {"a": 0.9, "b": 0.6}, {"a": 30, "b": 20}, n_unlabeled=4)
    c = calibration_counts(p, "env", bins=5)
    obs = c.observations
    assert np.bincount(obs.cell, minlength=c.n.size).tolist() == c.n.ravel().tolist()
    assert np.bincount(obs.cell, weights=obs.outcome, minlength=c.n.size).astype(int).tolist() == c.k.ravel().tolist()


def test_calibration_spec_per_item_loglik_sums_to_the_binomial_cells(rng):
    from scipy.special import gammaln

    from pbassess.pymc_models.hierarchical import HierarchicalCalibrationSpec

    p = _pool(rng, {"a": 0.9, "b": 0.6}, {"a": 30, "b": 20})
    c = calibration_counts(p, "env", bins=10)  # confidences in [0.5, 1): the lower bins are left out
    spec = HierarchicalCalibrationSpec(c, observations=c.observations)
    used = c.n_items.sum(axis=0) > 0
    assert spec.bins == [b for b, u in zip(c.bins, used, strict=True) if u] and spec.n.shape == (2, int(used.sum()))
    # the items' cells, renumbered over the kept bins, still count n
    assert np.bincount(spec.observations.cell, minlength=spec.n.size).tolist() == spec.n.ravel().tolist()
    assert spec.has_conjugate is False and spec.prior_draws(10, None) is None and spec.log_prior({}) is None
    theta = rng.uniform(0.1, 0.9, size=(2, 3, *spec.n.shape))
    dims, items, _ = spec.log_likelihood({"bin_accuracy": theta}, per_item=True)
    assert dims == ("item",) and items.shape == (2, 3, 50)
    dims, cells, coords = spec.log_likelihood({"bin_accuracy": theta}, per_item=False)
    labeled = np.flatnonzero(spec.n.ravel() > 0)
    assert coords["cell"] == [spec.cell_names[i] for i in labeled]
    n, k = spec.n.ravel()[labeled], spec.k.ravel()[labeled]
    coef = gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)
    per_cell = np.stack([items[..., spec.observations.cell == i].sum(-1) for i in labeled], axis=-1)
    np.testing.assert_allclose(cells, per_cell + coef, rtol=1e-12)


@pytest.mark.slow
def test_calibration_fit_layer_matches_sampling_the_model_directly(rng, tmp_path):
    """The fit layer samples the same PyMC model as before (the old path: the model sampled by
    itself): ECE posterior means agree within Monte Carlo error; the tree holds the contract."""
    from pbassess.inference import sample_model as sample_directly

    conf = rng.uniform(0.5, 1, 600)
    correct = rng.random(600) < np.clip(conf - np.repeat([0.0, 0.1, 0.2], 200), 0, 1)
    p = Predictions.from_top1(np.where(correct, "a", "b"), conf, np.full(600, "a"), classes=["a", "b"],
                              groups={"env": np.repeat(["x", "y", "z"], 200)})
    kw = {"draws": 500, "tune": 500, "chains": 4, "sampler": "pymc"}
    r = _quiet(assess_hierarchical_calibration, p, "env", bins=5, seed=0, sample_kwargs=kw)
    tree = r.idata
    assert {"posterior", "prior", "log_likelihood", "log_prior", "observed_data", "constant_data",
            "sample_stats"} <= set(tree.children)
    assert tree["log_likelihood"]["correct"].sizes["item"] == 600
    direct = _quiet(sample_directly, calibration_model(calibration_counts(p, "env", bins=5)), seed=1,
                    sample_kwargs={**kw, "target_accept": 0.95})
    ours = r.posterior["ece"].mean(("chain", "draw")).to_numpy()
    theirs = direct["posterior"]["ece"].mean(("chain", "draw")).to_numpy()
    sd = r.posterior["ece"].std(("chain", "draw")).to_numpy()
    # both ESS >= 100 (diagnostics): the difference of two means has sd <= sd * sqrt(2 / 100)
    assert r.diagnostics["ok"], r.diagnostics
    assert np.all(np.abs(ours - theirs) < 4 * sd * np.sqrt(2 / 100))
    back = AssessmentResult.load(r.save(tmp_path / "c.nc"))
    back._model = None
    assert back.model.named_vars_to_dims["ece"] == ("environment",)


def test_cli_sampler_flag_reaches_sample_kwargs(tmp_path, rng, capsys):
    from unittest import mock

    from pbassess.cli import main
    from pbassess.inference import mock_pymc_sample

    lines = ["item_id,label,predicted,confidence,site"]
    for i in range(60):
        lines.append(f"i{i},{'a' if rng.random() < 0.8 else 'b'},a,{rng.uniform(0.5, 1):.3f},{'s1' if i % 2 else 's2'}")
    f = tmp_path / "pool.csv"
    f.write_text("\n".join(lines) + "\n")
    seen = {}

    def sample(*args, **kwargs):
        seen.update(kwargs)
        return mock_pymc_sample(*args, **kwargs)

    with mock.patch("pymc.sample", sample):  # plumbing only: which sampler pm.sample is asked for
        code = _quiet(main, ["hierarchical", str(f), "--by", "site", "--json", "--draws", "30", "--tune", "30",
                             "--chains", "2", "--sampler", "pymc", "--calibration", "--bins", "4"])
    assert code == 0 and seen["nuts_sampler"] == "pymc" and seen["draws"] == 30 and seen["tune"] == 30
    assert json.loads(capsys.readouterr().out)["environments"] == ["s1", "s2"]
