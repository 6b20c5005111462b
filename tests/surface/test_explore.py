"""Warm-started exploration refits: the previous posterior reaches the next NUTS call, and the result stays right."""

from unittest import mock

import numpy as np
import pytest
import xarray as xr
from scipy.special import expit, logit
from scipy.stats import halfnorm, norm

from pbassess.surface import ArmCounts, fit_surface
from pbassess.surface.explore import explore_surface, warm_start_kwargs
from pbassess.surface.synthetic import synthetic_surface


class _FakeNutsResult:
    """What explore needs from a NUTS fit: mean, var, engine, fit time and a DataTree with draws."""

    engine = "nuts"
    fit_seconds = 0.5

    def __init__(self, n_arms: int, level: float, step: float) -> None:
        self.mean = np.full(n_arms, 0.8)
        self.var = np.linspace(0.01, 0.02, n_arms)
        draws = level + np.arange(6.0).reshape(2, 3)  # posterior mean: level + 2.5
        post = xr.Dataset({"intercept": (("chain", "draw"), draws),
                           "mu": (("chain", "draw", "arm"), np.full((2, 3, n_arms), 0.8))})
        stats = xr.Dataset({"step_size": (("chain", "draw"), np.full((2, 3), step))})
        self.idata = xr.DataTree.from_dict({"/posterior": post, "/sample_stats": stats})


def test_each_refit_starts_from_the_previous_posterior():
    syn = synthetic_surface(400, 2, seed=0)
    calls = []

    def fake_fit(arms, *, estimator, seed, sample_kwargs=None, **kwargs):
        calls.append(sample_kwargs)
        return _FakeNutsResult(arms.n_arms, level=float(len(calls)), step=0.1 * len(calls))

    base = {"draws": 100, "tune": 300, "chains": 2, "nuts_sampler": "nutpie"}
    with mock.patch("pbassess.surface.explore.fit_surface", fake_fit):
        ds = explore_surface(syn.preds, syn.attributes, estimator="additive", budget=12, batch_size=4,
                             initial_labels=4, seeds=[0], fit_kwargs={"sample_kwargs": base}, refit=False)
    assert len(calls) == 3 and ds["n_labels"].values[0].tolist() == [4, 8, 12]
    assert calls[0] == base  # the first fit is cold
    for i, kw in enumerate(calls[1:], start=1):  # round i starts where round i - 1 ended
        assert kw["initvals"]["intercept"] == pytest.approx(i + 2.5)
        assert kw["nuts"]["initial_step"] == pytest.approx(0.1 * i)
        assert kw["compile_kwargs"]["jitter_rvs"] == set()
        assert kw["tune"] == 300 and kw["draws"] == 100
    assert np.allclose(ds["fit_seconds"].values, 0.5)

    calls.clear()
    with mock.patch("pbassess.surface.explore.fit_surface", fake_fit):
        explore_surface(syn.preds, syn.attributes, estimator="additive", budget=12, batch_size=4, initial_labels=4,
                        seeds=[0], fit_kwargs={"sample_kwargs": base}, warm_start=False, refit=False)
    assert all(kw == base for kw in calls)


def test_nutpie_loops_compile_once_and_refit_every_round():
    syn = synthetic_surface(400, 2, seed=0)
    made, events = [], []

    class FakeRefitter:
        def __init__(self, arms, estimator, **kwargs):
            made.append((arms.n_arms, estimator, kwargs["sample_kwargs"]))

        def reset(self):
            events.append("reset")

        def fit(self, n, c, *, seed, warm_start):
            events.append((int(n.sum()), warm_start))
            return _FakeNutsResult(len(n), level=0.0, step=0.1)

    base = {"draws": 100, "tune": 300, "chains": 2, "nuts_sampler": "nutpie"}
    with mock.patch("pbassess.surface.refit.SurfaceRefitter", FakeRefitter), \
            mock.patch("pbassess.surface.explore.fit_surface", side_effect=AssertionError("rebuilt a model")):
        ds = explore_surface(syn.preds, syn.attributes, estimator="additive", budget=12, batch_size=4,
                             initial_labels=4, seeds=[0, 1], fit_kwargs={"sample_kwargs": base})
    assert made == [(4, "additive", base)]  # one model for both seeds and all rounds
    assert events == ["reset", (4, True), (8, True), (12, True)] * 2
    assert ds.attrs["refit"] == 1
    # The PyMC sampler and conjugate estimators keep rebuilding (no compiled model to reuse).
    rebuilt = mock.Mock(side_effect=lambda arms, **kw: _FakeNutsResult(arms.n_arms, level=0.0, step=0.1))
    with mock.patch("pbassess.surface.refit.SurfaceRefitter", FakeRefitter), \
            mock.patch("pbassess.surface.explore.fit_surface", rebuilt):
        explore_surface(syn.preds, syn.attributes, estimator="beta-i", budget=8, batch_size=4, initial_labels=4)
        explore_surface(syn.preds, syn.attributes, estimator="additive", budget=4, batch_size=4, initial_labels=4,
                        fit_kwargs={"sample_kwargs": {**base, "nuts_sampler": "pymc", "draws": 20, "tune": 20,
                                                      "chains": 1}})
    assert len(made) == 1 and rebuilt.call_count == 3


def test_pymc_sampler_gets_the_initial_point_and_no_jitter():
    result = _FakeNutsResult(3, level=0.0, step=0.2)
    kw = warm_start_kwargs(result, {"nuts_sampler": "pymc", "tune": 100}, tune_fraction=0.3)
    assert kw["init"] == "adapt_diag" and kw["tune"] == 50  # at least 50 tuning steps
    assert "compile_kwargs" not in kw and "nuts" not in kw and kw["initvals"]["intercept"] == pytest.approx(2.5)
    conjugate = fit_surface(ArmCounts.from_arrays([3, 1], [2, 1]), estimator="beta-i")
    assert warm_start_kwargs(conjugate, {"draws": 10}) == {"draws": 10}


def test_fit_keeps_only_the_free_variables_of_a_warm_start():
    captured = {}

    def capture(*args, **kwargs):
        captured.update(kwargs)
        raise RuntimeError("captured")

    arms = ArmCounts.from_arrays([5, 3], [4, 1])
    with mock.patch("pymc.sample", capture), pytest.raises(RuntimeError, match="captured"):
        fit_surface(arms, estimator="berngp", seed=0,
                    sample_kwargs={"initvals": {"intercept": 1.2, "p": np.array([0.8, 0.4]), "nope": 1.0}})
    assert set(captured["initvals"]) == {"intercept"} and captured["initvals"]["intercept"] == 1.2


def _one_arm_berngp_mean(n: float, y: float) -> float:
    """Posterior mean of sigmoid(eta) for BernGP on one arm, by quadrature.

    eta = intercept + f with intercept ~ N(logit(y / n), 1.5) and f ~ N(0, amplitude^2 + 1e-6),
    amplitude ~ HalfNormal(1): the prior of eta is a scale mixture of normals.
    """
    eta = np.linspace(-12, 12, 4001)
    amp = np.linspace(1e-4, 6, 1501)
    sd = np.sqrt(1.5**2 + amp**2 + 1e-6)
    prior = (norm.pdf(eta[:, None], logit(y / n), sd[None, :]) * halfnorm.pdf(amp)[None, :]).sum(1)
    like = np.exp(y * np.log(expit(eta)) + (n - y) * np.log(expit(-eta)))
    w = prior * like
    return float((w * expit(eta)).sum() / w.sum())


@pytest.mark.slow
def test_warm_started_refit_matches_the_known_posterior():
    arms = ArmCounts.from_arrays([12], [9])
    kw = {"draws": 300, "tune": 200, "chains": 2, "cores": 1, "nuts_sampler": "pymc"}
    cold = fit_surface(arms, estimator="berngp", seed=1, sample_kwargs=kw)
    warm = fit_surface(arms, estimator="berngp", seed=2, sample_kwargs=warm_start_kwargs(cold, kw))
    exact = _one_arm_berngp_mean(12, 9)
    # posterior sd of the accuracy ~0.11; ~400 effective draws give a Monte Carlo SE ~0.006: 0.03 is 5 SE
    assert abs(warm.mean[0] - exact) < 0.03, (warm.mean, exact)
    assert abs(cold.mean[0] - exact) < 0.03, (cold.mean, exact)
    assert warm.diagnostics["divergences"] == 0


def test_warm_start_from_a_posterior_draw():
    from pbassess.errors import ConfigError

    result = _FakeNutsResult(3, level=1.0, step=0.2)
    kw = warm_start_kwargs(result, {"nuts_sampler": "nutpie"}, point="draw")
    assert kw["initvals"]["intercept"] == pytest.approx(3.0)  # the last draw of chain 0
    with pytest.raises(ConfigError, match="warm-start point"):
        warm_start_kwargs(result, {}, point="median")


def test_exploration_shows_progress_only_when_watched(capsys):
    """Issue 18: every wait shows progress when a person watches, none under quiet_progress (--json)."""
    from pbassess import Predictions
    from pbassess.inference import quiet_progress
    from pbassess.surface.explore import explore_surface

    p = Predictions.from_binary_scores([.9, .8, .3, .7, .6, .4], [1, 0, 0, 1, 1, 1], groups={"g": [0, 0, 1, 1, 2, 2]})
    explore_surface(p, ["g"], budget=4, batch_size=2, seeds=[0, 1], progress=True)
    assert "exploring (beta-i)" in capsys.readouterr().err
    with quiet_progress():
        explore_surface(p, ["g"], budget=4, batch_size=2, seeds=[0, 1])
    assert capsys.readouterr().err == ""
