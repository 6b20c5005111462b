"""Classical and PPI++ intervals against ppi_py on the same inputs, and coverage with known truth."""

import numpy as np
import pytest

from pbassess import Predictions
from pbassess.errors import ConfigError, DataError
from pbassess.estimation import classical_interval, estimate, ppi_lambda, ppi_mean_interval

ppi_py = pytest.importorskip("ppi_py")


def _data(seed, n=150, big_n=3000, miscal=0.0):
    rng = np.random.default_rng(seed)
    f = rng.uniform(0.4, 1.0, n + big_n)
    y = (rng.random(n + big_n) < np.clip(f - miscal, 0, 1)).astype(float)
    return y[:n], f[:n], f[n:]


@pytest.mark.parametrize("seed, miscal", [(0, 0.0), (1, 0.1), (2, 0.3)])
@pytest.mark.parametrize("ci_prob", [0.9, 0.95])
def test_ppi_matches_ppi_py(seed, miscal, ci_prob):
    y, f, fu = _data(seed, miscal=miscal)
    mean, lo, hi, lam = ppi_mean_interval(y, f, fu, ci_prob)
    ref_mean = ppi_py.ppi_mean_pointestimate(y, f, fu, lam=None)
    ref_lo, ref_hi = ppi_py.ppi_mean_ci(y, f, fu, alpha=1 - ci_prob, lam=None)
    np.testing.assert_allclose(mean, np.squeeze(ref_mean), rtol=0, atol=1e-12)
    np.testing.assert_allclose([lo, hi], np.squeeze([ref_lo, ref_hi]), rtol=0, atol=1e-12)
    assert 0.0 <= lam <= 1.0


def test_ppi_fixed_lambda_and_classical_match_ppi_py():
    y, f, fu = _data(5)
    for lam in (0.0, 0.5, 1.0):
        _, lo, hi, _ = ppi_mean_interval(y, f, fu, 0.9, lam=lam)
        ref = ppi_py.ppi_mean_ci(y, f, fu, alpha=0.1, lam=lam)
        np.testing.assert_allclose([lo, hi], np.squeeze(ref), atol=1e-12)
    m, lo, hi = classical_interval(y, 0.9, "wald")   # the default for 0/1 values is Clopper-Pearson
    np.testing.assert_allclose([lo, hi], np.squeeze(ppi_py.classical_mean_ci(y, alpha=0.1)), atol=1e-12)
    assert m == pytest.approx(y.mean())


def test_lambda_is_large_for_informative_and_zero_for_useless_predictions():
    rng = np.random.default_rng(0)
    f = rng.uniform(0.2, 1.0, 2000)
    y = (rng.random(2000) < f).astype(float)
    assert ppi_lambda(y[:500], f[:500], f[500:]) > 0.6
    noise = rng.uniform(0.2, 1.0, 2000)
    assert ppi_lambda(y[:500], noise[:500], noise[500:]) < 0.15


def test_wilson_and_clopper_pearson_against_statsmodels():
    from statsmodels.stats.proportion import proportion_confint

    y = np.r_[np.ones(17), np.zeros(6)]
    for kind, sm in (("wilson", "wilson"), ("beta", "beta"), ("exact", "beta"), ("auto", "beta"),
                     ("agresti-coull", "agresti_coull")):
        _, lo, hi = classical_interval(y, 0.95, kind)
        np.testing.assert_allclose([lo, hi], proportion_confint(17, 23, 0.05, method=sm), atol=1e-10)
    assert classical_interval([1, 1, 1], 0.95, "beta")[2] == 1.0
    with pytest.raises(DataError, match="0/1"):
        classical_interval([0.5, 1.0], kind="wilson")
    with pytest.raises(ConfigError, match="interval kind"):
        classical_interval([1, 0], kind="clopper")


def test_ppi_coverage_and_gain_by_simulation():
    """Known truth: the pool is drawn from a model with E[Y | f] = f - 0.05 (miscalibrated).

    400 replicate label draws; the coverage of a 90% interval has Monte Carlo sd 0.015, so
    0.855 is a 3-sd lower bound (4,000 draws gave 0.90). PPI++ must be narrower than classical on average because the
    confidence explains much of Y's variance.
    """
    rng = np.random.default_rng(11)
    truth = 0.7 - 0.05
    hits, widths = 0, []
    for _ in range(400):
        f = rng.uniform(0.4, 1.0, 2100)
        y = (rng.random(2100) < f - 0.05).astype(float)
        m, lo, hi, _ = ppi_mean_interval(y[:100], f[:100], f[100:], 0.9)
        _, clo, chi = classical_interval(y[:100], 0.9, "wald")
        hits += lo <= truth <= hi
        widths.append((hi - lo) / (chi - clo))
    assert hits / 400 > 0.855
    assert np.mean(widths) < 0.95


def test_estimate_by_group_matches_per_group_ppi():
    rng = np.random.default_rng(4)
    n = 4000
    conf = rng.uniform(0.5, 1.0, n)
    truth = np.where(rng.random(n) < conf, 0, 1)
    grp = np.where(rng.random(n) < 0.3, "f", "m")
    labels = np.where(rng.random(n) < 0.1, truth, -1)
    p = Predictions.from_top1(np.zeros(n, int), conf, labels, classes=["a", "b"], groups={"sex": grp})
    res = estimate(p, by="sex", methods="classical,ppi", ci_prob=0.9)
    for g in ("f", "m"):
        lab = (grp == g) & (labels >= 0)
        unl = (grp == g) & (labels < 0)
        y = (truth[lab] == 0).astype(float)
        m, lo, hi = (np.squeeze(v) for v in (ppi_py.ppi_mean_pointestimate(y, conf[lab], conf[unl]),
                                               *ppi_py.ppi_mean_ci(y, conf[lab], conf[unl], alpha=0.1)))
        sel = res.posterior.sel(estimator="ppi", group=g)
        np.testing.assert_allclose([sel["mean"], sel["lower"], sel["upper"]], [m, lo, hi], atol=1e-12)
    out = res.to_json()
    assert out["groups"] == ["f", "m"] and set(out["methods"]) == {"classical", "ppi"}
    assert out["n_labeled"] + out["n_unlabeled"] == n


def test_estimate_brier_and_bad_input():
    rng = np.random.default_rng(2)
    probs = rng.dirichlet(np.ones(3) * 0.5, 1500)
    labels = np.array([rng.choice(3, p=row) for row in probs])  # calibrated by construction
    labels = np.where(np.arange(1500) < 300, labels, -1)
    p = Predictions.from_probs(probs, labels=labels, classes=["a", "b", "c"])
    res = estimate(p, metric="brier", methods="classical,ppi")
    onehot = np.eye(3)[np.where(labels >= 0, labels, 0)]
    brier = ((probs - onehot) ** 2).sum(axis=1)[:300].mean()
    assert float(res.posterior["mean"].sel(estimator="classical", group="all")) == pytest.approx(brier)
    with pytest.raises(ConfigError, match="Beta-binomial"):
        estimate(p, metric="brier", methods="bayes")
    with pytest.raises(ConfigError, match="unknown estimation method"):
        estimate(p, methods="magic")
    with pytest.raises(ConfigError, match="unknown metric"):
        estimate(p, metric="fscore")
    with pytest.raises(DataError, match="not found"):
        estimate(p, by="nosuchcolumn")


def test_registered_metric_of_the_counting_layer():
    """COUNT's registry: `error_rate` is the mean of the per-item error; its model prediction is 1 - c."""
    pytest.importorskip("pbassess.metrics")
    rng = np.random.default_rng(8)
    conf = rng.uniform(0.5, 1.0, 3000)
    truth = np.where(rng.random(3000) < conf, 0, 1)
    labels = np.where(np.arange(3000) < 300, truth, -1)
    p = Predictions.from_top1(np.zeros(3000, int), conf, labels, classes=["a", "b"])
    err = estimate(p, metric="error_rate", methods="classical,ppi", ci_prob=0.9).posterior
    acc = estimate(p, metric="accuracy", methods="classical,ppi", ci_prob=0.9).posterior
    np.testing.assert_allclose(err["mean"].values, 1 - acc["mean"].values, atol=1e-12)
    np.testing.assert_allclose(err["upper"].values, 1 - acc["lower"].values, atol=1e-12)
    with pytest.raises(ConfigError, match="not the mean of a per-item"):
        estimate(p, metric="tpr")


def test_result_saves_and_loads(tmp_path):
    import pbassess

    rng = np.random.default_rng(0)
    conf = rng.uniform(0.5, 1, 500)
    truth = np.where(rng.random(500) < conf, 0, 1)
    p = Predictions.from_top1(np.zeros(500, int), conf, np.where(np.arange(500) < 100, truth, -1), classes=["a", "b"])
    res = estimate(p, methods="all", seed=0)
    back = pbassess.load_result(res.save(tmp_path / "estimate.nc"))
    assert type(back).__name__ == "EstimationResult" and back.to_json() == res.to_json()
