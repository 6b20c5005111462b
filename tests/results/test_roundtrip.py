"""Results are ArviZ DataTrees for both inferences, and save/load keeps every group (issue 7)."""

from __future__ import annotations

import subprocess
import sys

import arviz as az
import matplotlib.pyplot as plt
import numpy as np
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
    var = FITS[name][2]
    assert "log_likelihood" in res.idata.children and var in res.idata["log_likelihood"]
    loaded = pb.load_result(res.save(tmp_path / f"{name}.nc"))
    assert type(loaded) is type(res)
    np.testing.assert_allclose(loaded.idata["log_likelihood"][var].to_numpy(),
                               res.idata["log_likelihood"][var].to_numpy())
    before, after = az.loo(res.idata), az.loo(loaded.idata)
    assert after.elpd == pytest.approx(before.elpd, rel=1e-12)
    table = az.compare({"fit": res.idata, "reloaded": loaded.idata})
    assert table["elpd_diff"].abs().max() == pytest.approx(0.0, abs=1e-9)
    before_json, after_json = res.to_json(), loaded.to_json()
    shared = {"metric", "inference", "ci_prob", "diagnostics", "sentence"}
    assert {k: after_json[k] for k in shared} == {k: before_json[k] for k in shared}


def test_conjugate_accuracy_loglik_is_the_binomial_of_the_counts(digits):
    from scipy import stats

    res = _fit("accuracy", digits, "conjugate")
    theta = res.idata["posterior"]["accuracy"].to_numpy()
    n, k = res.counts["n"].to_numpy(), res.counts["correct"].to_numpy()
    np.testing.assert_allclose(res.idata["log_likelihood"]["correct"].to_numpy(), stats.binom.logpmf(k, n, theta))


@pytest.mark.parametrize("name", sorted(FITS))
@pytest.mark.filterwarnings("ignore:MCMC diagnostics failed:UserWarning")  # mocked draws are not a sound fit
def test_arviz_functions_on_nuts_fits_and_after_reload(digits, name, tmp_path, mocked):
    res = _fit(name, digits, "nuts")
    loaded = pb.load_result(res.save(tmp_path / f"{name}.nc"))
    for fit in (res, loaded):
        summary = az.summary(fit.idata)
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


def test_load_a_saved_session_posterior_in_a_fresh_process(digits, tmp_path):
    from pbassess.active import LabelingSession

    session = LabelingSession.start(digits, tmp_path / "state.json", target="least-accurate", seed=0)
    path = session.posterior(200, seed=0).save(tmp_path / "session.nc")
    assert _load_in_fresh_process(path) == "SessionPosterior labeling-session conjugate"


def test_registry_names_every_result_class():
    from pbassess.results.registry import RESULT_CLASSES, result_class

    for metric in RESULT_CLASSES:
        assert result_class(metric).metric == metric
