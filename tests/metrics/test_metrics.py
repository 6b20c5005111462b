"""The metric registry, its reductions against direct computations, and the conjugate posteriors."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss, confusion_matrix, log_loss

from pbassess import Predictions
from pbassess.errors import ConfigError, DataError
from pbassess.metrics import (
    Metric,
    bayesian_bootstrap,
    bootstrap_moments,
    get_metric,
    list_metrics,
    metric_posterior,
    metric_statistics,
    register_metric,
)


@pytest.fixture(scope="module")
def pool() -> Predictions:
    rng = np.random.default_rng(11)
    n, k = 2000, 3
    probs = rng.dirichlet([1.0, 1.0, 1.0], size=n)
    labels = np.array([rng.choice(k, p=row) for row in probs])
    labels[rng.random(n) < 0.3] = -1
    return Predictions.from_probs(probs, labels, classes=["x", "y", "z"],
                                  groups={"site": rng.choice(["a", "b"], n)})


def test_builtin_entries_and_fields():
    names = set(list_metrics())
    assert {"accuracy", "error_rate", "tpr", "fpr", "precision", "calibration_bias", "nll", "brier", "entropy",
            "confidence"} <= names
    assert get_metric("accuracy").family == "beta-binomial"
    assert get_metric("brier").family == "bayesian-bootstrap" and get_metric("brier").direction == "lower"
    assert get_metric("confusion").family == "dirichlet-multinomial"
    assert get_metric("calibration_bias").direction == "zero"
    assert not get_metric("entropy").needs_labels and get_metric("entropy").needs_probs
    assert get_metric("error-rate") is get_metric("error_rate")
    with pytest.raises(ConfigError, match="unknown metric"):
        get_metric("f1-macro")


def test_rates_match_a_confusion_matrix(pool):
    lab = pool.labeled
    y, p = pool.labels[lab], pool.predicted[lab]
    cm = confusion_matrix(y, p, labels=[0, 1, 2])          # rows true, columns predicted
    acc = metric_statistics(pool, "accuracy")
    assert int(acc["successes"]) == np.trace(cm) and int(acc["trials"]) == cm.sum()
    err = metric_statistics(pool, "error_rate")
    assert int(err["successes"]) == cm.sum() - np.trace(cm)
    tpr = metric_statistics(pool, "tpr")
    np.testing.assert_array_equal(tpr["successes"], np.diag(cm))
    np.testing.assert_array_equal(tpr["trials"], cm.sum(axis=1))
    prec = metric_statistics(pool, "precision")
    np.testing.assert_array_equal(prec["trials"], cm.sum(axis=0))
    fpr = metric_statistics(pool, "fpr")
    np.testing.assert_array_equal(fpr["successes"], cm.sum(axis=0) - np.diag(cm))
    np.testing.assert_array_equal(fpr["trials"], cm.sum() - cm.sum(axis=1))
    assert fpr["class"].values.tolist() == ["x", "y", "z"]
    conf = metric_statistics(pool, "confusion")["counts"]
    np.testing.assert_array_equal(conf.transpose("predicted", "category"), cm.T)


def test_bootstrap_statistics_match_sklearn(pool):
    lab = pool.labeled
    y, probs = pool.labels[lab], pool.probs[lab]
    nll = metric_statistics(pool, "nll")
    assert float(nll["total"] / nll["n"]) == pytest.approx(log_loss(y, probs, labels=[0, 1, 2]), rel=1e-12)
    brier = metric_statistics(pool, "brier")
    onehot = np.eye(3)[y]
    assert float(brier["total"] / brier["n"]) == pytest.approx(((probs - onehot) ** 2).sum(1).mean(), rel=1e-12)
    # the binary Brier score of sklearn is half of the two-class sum-of-squares form
    two = Predictions.from_binary_scores([0.2, 0.7, 0.9, 0.4], [0, 1, 0, 0])
    b2 = metric_statistics(two, "brier")
    assert float(b2["total"] / b2["n"]) == pytest.approx(2 * brier_score_loss([0, 1, 0, 0], [0.2, 0.7, 0.9, 0.4]))
    bias = metric_statistics(pool, "calibration_bias", "site")
    for site in ("a", "b"):
        m = lab & (pool.groups["site"] == site)
        want = (pool.confidence[m] - pool.correct[m]).mean()
        got = bias.sel(site=site)
        assert float(got["total"] / got["n"]) == pytest.approx(want, rel=1e-12)
    ent = metric_statistics(pool, "entropy")          # needs no labels: all items
    assert int(ent["n"]) == pool.n_items
    assert float(ent["total"]) == pytest.approx(-(pool.probs * np.log(pool.probs)).sum(), rel=1e-12)


def test_metric_errors(pool):
    top1 = Predictions.from_top1(["a", "b"], [0.9, 0.8], ["a", None])
    with pytest.raises(DataError, match="full probability vectors"):
        metric_statistics(top1, "nll")
    with pytest.raises(DataError, match="needs true labels"):
        metric_statistics(Predictions.from_top1(["a", "b"], [0.9, 0.8]), "accuracy")
    with pytest.raises(ConfigError, match="leave it out of by"):
        metric_statistics(pool, "tpr", "true")
    with pytest.raises(ConfigError, match="unknown posterior family"):
        register_metric(Metric("bad", "correct", "mean", "gaussian", "higher", True))


def test_a_new_metric_is_one_entry(pool):
    register_metric(Metric("top_margin", lambda it: it["confidence"] - np.sort(it["probs"], axis=1)[:, -2],
                           "mean", "bayesian-bootstrap", "higher", needs_labels=False, needs_probs=True, bound=1.0),
                    overwrite=True)
    stats = metric_statistics(pool, "top_margin", "site")
    srt = np.sort(pool.probs, axis=1)
    want = (srt[:, -1] - srt[:, -2])[pool.groups["site"] == "b"].mean()
    assert float(stats.sel(site="b")["total"] / stats.sel(site="b")["n"]) == pytest.approx(want, rel=1e-12)
    draws = metric_posterior("top_margin", stats, n_draws=500, seed=0)
    assert draws.dims == ("draw", "site") and np.isfinite(draws).all()


def test_beta_and_dirichlet_posteriors_match_closed_forms():
    import xarray as xr

    s = xr.Dataset({"successes": ("g", [3, 40]), "trials": ("g", [10, 50])})
    d = metric_posterior("accuracy", s, n_draws=40_000, pseudocount=2.0, seed=1)
    a, b = np.array([4, 41]), np.array([8, 11])
    mean, var = a / (a + b), a * b / ((a + b) ** 2 * (a + b + 1))
    # Monte Carlo standard error of the mean is sqrt(var / 40000); allow 4 of them
    np.testing.assert_array_less(np.abs(d.mean("draw") - mean), 4 * np.sqrt(var / 40_000))
    np.testing.assert_allclose(d.var("draw"), var, rtol=0.05)
    c = xr.Dataset({"counts": (("predicted", "category"), [[5, 1, 0], [2, 2, 2]])})
    dd = metric_posterior("confusion", c, n_draws=40_000, pseudocount=3.0, seed=2)
    alpha = np.array([[5, 1, 0], [2, 2, 2]]) + 1.0
    np.testing.assert_allclose(dd.mean("draw"), alpha / alpha.sum(1, keepdims=True), atol=0.01)
    np.testing.assert_allclose(dd.sum("category"), 1.0, atol=1e-12)


def test_bootstrap_moments_closed_form_and_simulation():
    rng = np.random.default_rng(5)
    x = rng.gamma(0.7, 2.0, size=60)
    mean, var = bootstrap_moments(x.size, x.sum(), (x * x).sum())
    # brute force: Dirichlet(1,...,1) weights with numpy's sampler
    w = rng.dirichlet(np.ones(x.size), size=200_000)
    sims = w @ x
    assert float(mean) == pytest.approx(x.mean(), rel=1e-12)
    assert float(var) == pytest.approx(x.var() / (x.size + 1), rel=1e-12)
    assert float(var) == pytest.approx(sims.var(), rel=0.02)      # 200k draws: sd of a variance ~0.6 %
    exact = bayesian_bootstrap(x, n_draws=200_000, seed=6, method="exact")
    assert exact.mean() == pytest.approx(sims.mean(), abs=4 * np.sqrt(var / 200_000))
    assert exact.var() == pytest.approx(sims.var(), rel=0.02)


def test_normal_approximation_quantiles_at_n_400():
    rng = np.random.default_rng(7)
    x = -np.log(rng.beta(4, 1, size=400))              # NLL-like, skewed
    exact = bayesian_bootstrap(x, n_draws=100_000, seed=8, method="exact")
    approx = bayesian_bootstrap(n=x.size, total=x.sum(), sq_total=(x * x).sum(), n_draws=100_000, seed=9)
    q = np.array([0.025, 0.25, 0.5, 0.75, 0.975])
    sd = exact.std()
    # Cornish-Fisher: the normal quantiles are off by about skew/6 * (z^2 - 1) sd, where the
    # skewness of a Dirichlet(1)-weighted mean is 2 * skew(x) / sqrt(n) (exponential weights);
    # 100k draws add a Monte Carlo error below 0.02 sd at these quantiles.
    from scipy import stats

    z = stats.norm.ppf(q)
    skew = 2 * stats.skew(x) / np.sqrt(x.size)
    predicted_gap = np.abs(skew / 6 * (z**2 - 1)) * sd
    gap = np.abs(np.quantile(approx, q) - np.quantile(exact, q))
    np.testing.assert_array_less(gap, 1.3 * predicted_gap + 0.02 * sd)
    assert gap[2] < 0.05 * sd and gap.max() < 0.15 * sd
    empty = bayesian_bootstrap(n=[0, 3], total=[0.0, 3.0], sq_total=[0.0, 3.0], n_draws=5, seed=0)
    assert np.isnan(empty[:, 0]).all() and np.allclose(empty[:, 1], 1.0)   # zero spread: point mass


def test_statistics_of_a_lazy_pool_equal_in_memory(pool):
    import xarray as xr

    lazy = Predictions.from_dataset(pool.dataset.chunk({"item": 300}))
    assert lazy.is_lazy
    for name in ("accuracy", "fpr", "nll", "entropy", "confusion"):
        xr.testing.assert_identical(metric_statistics(lazy, name, ()), metric_statistics(pool, name, ()))


def test_dataframe_goes_straight_in():
    import pandas as pd

    frame = pd.DataFrame({"item_id": ["a", "b", "c"], "label": ["x", None, "y"], "p_x": [0.8, 0.3, 0.6],
                          "p_y": [0.2, 0.7, 0.4]})
    stats = metric_statistics(frame, "accuracy")
    assert int(stats["successes"]) == 1 and int(stats["trials"]) == 2
