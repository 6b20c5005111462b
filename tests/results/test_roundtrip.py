"""Results are ArviZ DataTrees for both inferences, and save/load keeps every group (issue 7).

Every concrete result class, found by importing every pbassess module and walking
``AssessmentResult.__subclasses__()`` (not by reading the registry), saves and reloads whole:
same ``summary()``, ``sentence()`` and ``to_json()`` (issue 18). A new result class without a
factory in :data:`FACTORIES` fails :func:`test_every_result_class_has_a_factory`.
"""

from __future__ import annotations

import functools
import importlib
import json
import pkgutil
import subprocess
import sys
import warnings

import arviz as az
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pymc
import pytest

import pbassess as pb
from pbassess.inference import mock_pymc_sample

FITS = {
    "accuracy": (pb.assess_accuracy, {}, "correct"),
    "calibration": (pb.assess_calibration, {"bins": 5}, "correct"),
    "cost": (pb.assess_confusion, {}, "confusion"),
}


@pytest.fixture(scope="module")
def digits():
    return pb.load_data()


@pytest.fixture
def mocked(monkeypatch):
    """Plumbing only: pm.sample returns prior draws shaped like its output."""
    monkeypatch.setattr(pymc, "sample", mock_pymc_sample)


def _fit(name, preds, inference):
    fn, options, _ = FITS[name]
    extra = {"sample_kwargs": {"draws": 60, "chains": 2}} if inference == "nuts" else {"draws": 400}
    if inference == "nuts" and name == "calibration":
        extra["classwise"] = False  # plumbing only: the small model compiles in seconds
    return fn(preds, seed=0, inference=inference, **options, **extra)


@pytest.mark.parametrize("name", sorted(FITS))
def test_conjugate_loglik_survives_save_and_loo_agrees(digits, name, tmp_path):
    """Issue 7 defect: save() dropped the log-likelihood group and accuracy/calibration/cost fits had none."""
    res = _fit(name, digits, "conjugate")
    assert "log_likelihood" in res.idata.children and res.idata["log_likelihood"].data_vars
    loaded = pb.load_result(res.save(tmp_path / f"{name}.nc"))
    assert type(loaded).__qualname__ == type(res).__qualname__
    for var in res.idata["log_likelihood"].data_vars:
        np.testing.assert_allclose(loaded.idata["log_likelihood"][var].to_numpy(),
                                   res.idata["log_likelihood"][var].to_numpy())
    before, after = az.loo(res.idata), az.loo(loaded.idata)
    assert after.elpd == pytest.approx(before.elpd, rel=1e-12)
    table = az.compare({"fit": before, "reloaded": after})  # the ELPDs above (not computed twice more)
    assert table["elpd_diff"].abs().max() == pytest.approx(0.0, abs=1e-9)
    before_json, after_json = res.to_json(), loaded.to_json()
    shared = {"metric", "inference", "ci_prob", "diagnostics", "sentence"}
    assert {k: after_json[k] for k in shared} == {k: before_json[k] for k in shared}


def test_conjugate_accuracy_loglik_is_the_bernoulli_of_each_item(digits):
    """One log-likelihood value per labeled item: log accuracy[its class] if correct, else log(1 - it)."""
    res = _fit("accuracy", digits, "conjugate")
    theta = res.idata["posterior"]["accuracy"]
    cells = res.idata["constant_data"]["item_cell"]
    correct = res.idata["observed_data"]["correct"].to_numpy()
    per_item = theta.sel({res.dim: cells}).transpose("chain", "draw", "item").to_numpy()
    expected = np.where(correct == 1, np.log(per_item), np.log1p(-per_item))
    np.testing.assert_allclose(res.idata["log_likelihood"]["correct"].to_numpy(), expected, rtol=1e-12)
    # summed over each class's items, the Bernoulli terms are the Binomial of its counts less log C(n, k)
    from scipy import stats
    from scipy.special import gammaln

    n, k = res.counts["n"].to_numpy(), res.counts["correct"].to_numpy()
    ll = res.idata["log_likelihood"]["correct"].isel(chain=0)
    for i, name in enumerate(res.regions):
        if n[i] == 0:
            continue
        summed = ll.isel(item=np.flatnonzero(cells.to_numpy() == name)).sum("item").to_numpy()
        binom = stats.binom.logpmf(k[i], n[i], theta.isel(chain=0).sel({res.dim: name}).to_numpy())
        coef = gammaln(n[i] + 1) - gammaln(k[i] + 1) - gammaln(n[i] - k[i] + 1)
        np.testing.assert_allclose(summed + coef, binom, rtol=1e-9)


@pytest.mark.parametrize("name", sorted(FITS))
@pytest.mark.filterwarnings("ignore:MCMC diagnostics failed:UserWarning")  # mocked draws are not a sound fit
def test_arviz_functions_on_nuts_fits_and_after_reload(digits, name, tmp_path, mocked):
    res = _fit(name, digits, "nuts")
    loaded = pb.load_result(res.save(tmp_path / f"{name}.nc"))
    for fit in (res, loaded):
        # the reported quantities; the posterior also holds the model's free variables (pm.compute_log_prior)
        summary = az.summary(fit.idata, var_names=list(fit.posterior.data_vars))
        assert not any("asinh_logit" in str(i) or str(i).startswith("gamma") for i in summary.index)
        az.loo(fit.idata)
        axes = az.plot_forest(fit.idata)
        assert axes is not None
        ess = fit.idata.azstats.ess(group="posterior")
        assert set(ess.data_vars) == set(fit.idata["posterior"].data_vars)
        plt.close("all")
    assert loaded.diagnostics == res.diagnostics and loaded.inference == "nuts"
    assert {"metric", "inference", "ci_prob", "diagnostics", "sentence"} <= set(loaded.to_json())


def test_result_model_and_summary_names(digits):
    res = _fit("accuracy", digits, "conjugate")
    model = res.model
    assert isinstance(model, pymc.Model) and "accuracy" in model.named_vars
    assert list(az.summary(res.idata).index)[0] == "accuracy[0]"


_FRESH = """
import sys, pbassess
r = pbassess.load_result(sys.argv[1])
print(type(r).__name__, r.metric, r.inference)
"""


def _load_in_fresh_process(path) -> str:
    done = subprocess.run([sys.executable, "-c", _FRESH, str(path)], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_load_result_in_a_fresh_process(digits, tmp_path):
    """Issue 7 defect: load_result relied on result classes registering themselves at import."""
    path = _fit("cost", digits, "conjugate").save(tmp_path / "cost.nc")
    assert _load_in_fresh_process(path) == "CostResult cost conjugate"


def test_load_a_saved_surface_in_a_fresh_process(digits, tmp_path):
    """Issue 18 defect: a reloaded SurfaceResult lost its arms, so its summary and sentence raised."""
    path = _surface(digits, tmp_path).save(tmp_path / "surface.nc")
    assert _load_in_fresh_process(path) == "SurfaceResult accuracy-surface conjugate"


def test_load_a_saved_session_posterior_in_a_fresh_process(digits, tmp_path):
    from pbassess.active import LabelingSession

    session = LabelingSession.start(digits, tmp_path / "state.json", target="least-accurate", seed=0)
    path = session.posterior(200, seed=0).save(tmp_path / "session.nc")
    assert _load_in_fresh_process(path) == "SessionPosterior labeling-session conjugate"


# ---------------------------------------------------------------------------- every result class round-trips (issue 18)
def _concrete_result_classes() -> dict[str, type]:
    """Every concrete AssessmentResult subclass pbassess defines, found by importing all its modules."""
    from pbassess.results.base import AssessmentResult

    for info in pkgutil.walk_packages(pb.__path__, "pbassess."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    found: dict[str, type] = {}
    stack = list(AssessmentResult.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if cls.__module__.startswith("pbassess.") and "<locals>" not in cls.__qualname__ \
                and not cls.__dict__.get("_abstract", False):
            found[cls.__name__] = cls
    return found


#: Tiny NUTS settings: plumbing, not statistics.
TINY_NUTS = {"draws": 50, "tune": 50, "chains": 2, "sampler": "pymc", "cores": 1}


@functools.cache
def _sites(n_sites: int = 2):
    """Synthetic pool: one classifier over ``n_sites`` sites of 40 items with different accuracies."""
    from pbassess import Predictions

    rng = np.random.default_rng(0)
    site = np.repeat([f"s{i}" for i in range(n_sites)], 40)
    right = rng.random(site.size) < np.linspace(0.9, 0.6, n_sites).repeat(40)
    return Predictions.from_top1(np.where(right, "x", "y"), rng.uniform(0.5, 1.0, site.size), np.full(site.size, "x"),
                                 classes=["x", "y"], groups={"site": site})


def _estimation(digits, tmp_path):
    from pbassess import Predictions
    from pbassess.estimation import estimate

    labels = np.where(np.arange(digits.n_items) < 150, digits.labels, -1)
    pool = Predictions.from_probs(digits.probs, labels, classes=digits.classes)
    return estimate(pool, methods="classical,ppi,bayes", seed=0)


def _surface(digits, tmp_path):
    from pbassess.surface import ArmCounts, fit_surface

    arms = ArmCounts.from_arrays([10, 10, 10, 4], [9, 5, 8, 1], values=[[0, "a"], [0, "b"], [1, "a"], [1, "b"]],
                                 attributes=("x", "y"), pool_n=[100, 300, 50, 20])
    return fit_surface(arms, estimator="beta-i")


def _session(digits, tmp_path):
    from pbassess.active import LabelingSession

    session = LabelingSession.start(digits, tmp_path / "state.json", target="least-accurate", seed=0)
    return session.posterior(200, seed=0)


def _simulation(digits, tmp_path):
    from pbassess.active import simulate

    return simulate(digits, strategies="ts,random-item", runs=3, log_every=100, seed=0)


def _model_comparison(digits, tmp_path):
    from pbassess.assess.pooling import POOLING_VARIANTS, compare_variants
    from pbassess.hierarchical.models import environment_counts

    counts = environment_counts(_sites(3), "site")
    two = {name: POOLING_VARIANTS[name] for name in ("independent", "pooled")}
    return compare_variants(counts, two, prior_draws=50, seed=0, warn=False, sample_kwargs=TINY_NUTS)


def _rope_labeling(digits, tmp_path):
    from pbassess.assess import simulate_rope_labeling

    return simulate_rope_labeling(_sites(2), "site", rope=0.05, n_runs=5, seed=0)


def _shift(digits, tmp_path):
    from pbassess import Predictions
    from pbassess.shift import shift_table

    level = np.where(np.arange(digits.n_items) % 2, "clean", "noisy")
    preds = Predictions.from_probs(digits.probs, digits.labels, classes=digits.classes, groups={"level": level})
    return shift_table(preds, by="level", n_draws=200, seed=0)


def _hierarchical(digits, tmp_path):
    from pbassess.assess import assess_hierarchical

    return assess_hierarchical(_sites(3), "site", seed=0, sample_kwargs=TINY_NUTS)


def _hierarchical_calibration(digits, tmp_path):
    from pbassess.assess import assess_hierarchical_calibration

    return assess_hierarchical_calibration(_sites(3), "site", bins=3, seed=0, sample_kwargs=TINY_NUTS)


def _shift_trend(digits, tmp_path):
    from pbassess.shift.hierarchical import fit_accuracy_trend

    return fit_accuracy_trend([90, 80, 60], [100, 100, 100], seed=0, sample_kwargs=TINY_NUTS)["result"]


def _bayes_estimate(digits, tmp_path):
    labels = np.where(np.arange(digits.n_items) < 150, digits.labels, -1)
    pool = pb.Predictions.from_probs(digits.probs, labels, classes=digits.classes)
    return pb.estimate(pool, methods="bayes", inference="nuts", seed=0, sample_kwargs=TINY_NUTS).bayes


def _shrinkage(digits, tmp_path):
    from pbassess.calibration.shrinkage import assess_calibration_shrinkage

    return assess_calibration_shrinkage(digits, bins=5, seed=0, sample_kwargs=TINY_NUTS)


#: class name -> factory(digits, tmp_path) of a small real instance.
FACTORIES = {
    "AccuracyResult": lambda digits, tmp_path: pb.assess_accuracy(digits, seed=0),
    "CalibrationResult": lambda digits, tmp_path: pb.assess_calibration(digits, bins=5, seed=0),
    "CostResult": lambda digits, tmp_path: pb.assess_confusion(digits, seed=0),
    "ComparisonResult": lambda digits, tmp_path: pb.compare_groups(_sites(3), "site", rope=0.05, seed=0),
    "EstimationResult": _estimation,
    "SurfaceResult": _surface,
    "SessionPosterior": _session,
    "SimulationResult": _simulation,
    "RopeLabelingSimulation": _rope_labeling,
    "ShiftResult": _shift,
    "HierarchicalResult": _hierarchical,
    "HierarchicalCalibrationResult": _hierarchical_calibration,
    "ModelComparison": _model_comparison,
    "ShiftTrendResult": _shift_trend,
    "BayesEstimateResult": _bayes_estimate,
    "ShrinkageResult": _shrinkage,
    "PriorComparison": lambda digits, tmp_path: pb.compare_priors(digits, priors=["uniform", "informed"], seed=0),
}

#: Factories that take more than 5 s with a cold PyTensor cache (18 s and 10 s; about 2 s warm).
SLOW = {"HierarchicalCalibrationResult", "ModelComparison", "ShiftTrendResult", "BayesEstimateResult", "ShrinkageResult"}


def test_every_result_class_has_a_factory():
    """A result class added without a factory below (or a factory of a removed class) fails here."""
    assert set(_concrete_result_classes()) == set(FACTORIES)


def _json(obj):
    return json.loads(json.dumps(obj))


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in sorted(FACTORIES)])
@pytest.mark.filterwarnings("ignore::UserWarning")  # tiny NUTS runs fail their diagnostics: no ranking is read
def test_every_result_class_reloads_whole(digits, name, tmp_path):
    """Issue 18 defect: load rebuilt AssessmentResult.__init__ only, so subclass state was lost."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = FACTORIES[name](digits, tmp_path)
    assert type(result).__name__ == name
    loaded = pb.load_result(result.save(tmp_path / "x.nc"))
    # by name: pytest's doctest collection (--import-mode=importlib) may import a module a second time
    assert (type(loaded).__module__, type(loaded).__qualname__) == (type(result).__module__, name)
    pd.testing.assert_frame_equal(loaded.summary(), result.summary())
    assert loaded.sentence() == result.sentence()
    assert _json(loaded.to_json()) == _json(result.to_json())


def test_a_second_class_with_a_taken_metric_is_refused():
    from pbassess.errors import ConfigError
    from pbassess.results import AssessmentResult, result_class
    from pbassess.results.accuracy import AccuracyResult  # defined first: it owns "accuracy"

    with pytest.raises(ConfigError, match="metric name 'accuracy'"):
        class Duplicate(AssessmentResult):
            metric = "accuracy"
    assert result_class("accuracy").__qualname__ == AccuracyResult.__qualname__


def test_a_nuts_surface_saves_and_reloads_whole(tmp_path, shared_data_dir):
    """A surface keeps its draws stacked in one chain beside a 2-chain NUTS trace: both survive the file."""
    from pbassess.surface import fit_surface

    preds = pb.load_data("adult-sex", model="score_LR")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = fit_surface(preds, attributes=["race", "sex"], estimator="additive", seed=0,
                          sample_kwargs={"draws": 50, "tune": 50, "chains": 2})
    back = pb.load_result(res.save(tmp_path / "surface.nc"))
    pd.testing.assert_frame_equal(back.summary(), res.summary())
    assert back.sentence() == res.sentence()
    assert json.loads(json.dumps(back.to_json())) == json.loads(json.dumps(res.to_json()))
    assert back.idata["posterior"].sizes["chain"] == 2
