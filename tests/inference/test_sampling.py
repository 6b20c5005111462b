"""The inference layer: one merge of sampler options, the progress-bar rule, the DataTree shape, diagnostics."""

from __future__ import annotations

import io

import numpy as np
import pymc
import pytest
import xarray as xr

from pbassess.errors import ConfigError
from pbassess.inference import (
    diagnostics,
    merge_sample_kwargs,
    mock_pymc_sample,
    quiet_progress,
    resolve_inference,
    sample_model,
)
from pbassess.pymc_models.accuracy import beta_binomial_model, sample_posterior


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def captured(monkeypatch):
    """pm.sample replaced by the mock; the options it received are recorded."""
    calls: list[dict] = []

    def fake(*args, **kwargs):
        calls.append(kwargs)
        return mock_pymc_sample(*args, **kwargs)

    monkeypatch.setattr(pymc, "sample", fake)
    return calls


def test_progress_bar_shows_when_a_person_watches(captured, monkeypatch):
    """Issue 7 defect: progressbar=False was hard-coded in three samplers."""
    monkeypatch.setattr(pymc, "compute_log_likelihood", lambda *args, **kwargs: None)  # plumbing only
    with pymc.Model() as model:  # the smallest model: only the options handed to pm.sample matter here
        pymc.Normal("x")
    small = {"draws": 10, "tune": 10, "chains": 1}
    monkeypatch.setattr("sys.stderr", _Terminal())
    sample_posterior(model, seed=1, sample_kwargs=small)           # the old entry point
    sample_model(model, seed=1, sample_kwargs=small)
    with quiet_progress():                                          # what --json uses
        sample_model(model, seed=1, sample_kwargs=small)
    monkeypatch.setattr("sys.stderr", io.StringIO())               # stderr redirected to a file
    sample_model(model, seed=1, sample_kwargs=small)
    sample_model(model, seed=1, sample_kwargs=small, progressbar=True)
    assert [c["progressbar"] for c in captured] == [True, True, False, False, True]


def test_hierarchical_and_confusion_samplers_use_the_same_rule(captured, monkeypatch):
    from pbassess.pymc_models.confusion import confusion_model, sample_confusion_model
    from pbassess.pymc_models.hierarchical import HIERARCHICAL_NUTS_DEFAULTS, accuracy_model

    monkeypatch.setattr(pymc, "compute_log_likelihood", lambda *args, **kwargs: None)  # plumbing only
    monkeypatch.setattr("sys.stderr", _Terminal())
    sample_model(accuracy_model([30, 4], [27, 2], environments=["a", "b"]), seed=1,
                 sample_kwargs={"draws": 10, "tune": 10, "chains": 1}, defaults=HIERARCHICAL_NUTS_DEFAULTS)
    sample_confusion_model(confusion_model([[8, 2], [1, 9]], np.ones((2, 2))), seed=1,
                           sample_kwargs={"draws": 10, "tune": 10, "chains": 1})
    assert [c["progressbar"] for c in captured] == [True, True]
    assert captured[0]["target_accept"] == 0.95  # the hierarchical default survives the merge


def test_merge_sample_kwargs_user_wins_and_is_checked():
    kw = merge_sample_kwargs({"draws": 200, "sampler": "pymc"}, defaults={"target_accept": 0.9}, seed=3,
                             progressbar=False)
    assert (kw["draws"], kw["tune"], kw["chains"], kw["nuts_sampler"], kw["target_accept"], kw["random_seed"]) == \
        (200, 1000, 4, "pymc", 0.9, 3)
    assert isinstance(merge_sample_kwargs(seed=np.random.default_rng(0))["random_seed"], int)
    for bad, match in (({"draws": -1}, "draws must be a positive"), ({"tune": 1.5}, "tune must be"),
                       ({"draws": 10_000_000_000}, "too large"), ({"sampler": "gibbs"}, "unknown sampler"),
                       ({"return_inferencedata": False}, "not supported"), ("fast", "must be a dict")):
        with pytest.raises(ConfigError, match=match):
            merge_sample_kwargs(bad)


def test_nuts_options_in_a_nested_dict_are_the_users_and_survive_a_second_fit():
    """pm.sample moves target_accept into the ``nuts`` dict it is handed: the user's dict must not be
    that dict (a second fit with the same options, such as a widened refit, would hold it twice), and a
    target_accept in ``nuts`` replaces the model's default instead of colliding with it."""
    user = {"draws": 10, "nuts": {"target_accept": 0.9, "adaptation": "diag"}}
    first = merge_sample_kwargs(user, defaults={"target_accept": 0.95})
    first["nuts"]["target_accept"] = 0.5                      # what pm.sample may do to the dict it gets
    second = merge_sample_kwargs(user, defaults={"target_accept": 0.95})
    assert "target_accept" not in first and user["nuts"] == {"target_accept": 0.9, "adaptation": "diag"}
    assert second["nuts"] == {"target_accept": 0.9, "adaptation": "diag"}
    mixed = merge_sample_kwargs({"nuts": {"adaptation": "diag"}}, defaults={"target_accept": 0.95})
    assert mixed["target_accept"] == 0.95 and mixed["nuts"] == {"adaptation": "diag"}  # pm.sample merges these
    for bad, match in (({"target_accept": 0.9, "nuts": {"target_accept": 0.8}}, "target_accept is given twice"),
                       ({"nuts": {"target_accept": 1.2}}, r"target_accept must be in \(0, 1\)"),
                       ({"target_accept": "high"}, r"target_accept must be in \(0, 1\), got 'high'")):
        with pytest.raises(ConfigError, match=match):
            merge_sample_kwargs(bad)


@pytest.mark.slow
def test_a_widened_anchored_fit_takes_nested_nuts_options():
    """The default anchored path fits twice where the labels show the confidence wrong; the same
    ``sample_kwargs={"nuts": {...}}`` reaches both real NUTS fits (it raised "target_accept was
    defined twice" in the refit before the options were copied)."""
    import warnings

    from pbassess.surface import fit_surface, hide_labels
    from pbassess.surface.synthetic import miscalibrated_surface

    s = miscalibrated_surface(6000, 3, seed=1, n_rules=1, shift=(0.15, 0.2))
    kept = hide_labels(s.preds, 600, seed=0)
    options = {"tune": 200, "chains": 2, "nuts": {"target_accept": 0.9}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = fit_surface(kept, list(s.attributes), estimator="additive", covariate="confidence", seed=0,
                        draws=200, sample_kwargs=options)
    assert r.diagnostics["widened_scales"] is True and options["nuts"] == {"target_accept": 0.9}
    assert r.idata["sample_stats"].sizes["chain"] == 2


def test_inference_names_and_the_old_spelling():
    assert resolve_inference("nuts") == resolve_inference("mcmc") == resolve_inference("NUTS") == "nuts"
    assert resolve_inference() == "conjugate"
    with pytest.raises(ConfigError, match="unknown inference 'gibbs'"):
        resolve_inference("gibbs")
    with pytest.raises(TypeError):  # the engine= alias is gone (0.2.0)
        resolve_inference(engine="mcmc")


def test_engine_keyword_is_gone_from_every_assessment():
    """Issue 18: the engine= alias is dropped; passing it is Python's TypeError naming it."""
    import pbassess as pb

    for func in (pb.assess_accuracy, pb.assess_calibration, pb.assess_confusion, pb.compare_groups,
                 pb.assess_hierarchical):
        with pytest.raises(TypeError, match="engine"):
            func(pb.load_data(), engine="mcmc")


def test_sample_model_returns_every_group_and_hides_internal_coordinates(captured):
    model = beta_binomial_model([10, 4], [7, 1], 1.0, 1.0, coords=["a", "b"])
    idata = sample_model(model, seed=1, sample_kwargs={"draws": 30, "chains": 2})
    assert {"posterior", "sample_stats", "observed_data", "log_likelihood"} <= set(idata.children)
    assert list(idata["posterior"].data_vars) == ["accuracy"]
    assert "accuracy_asinh_logit" in idata["unconstrained_posterior"]
    assert idata["log_likelihood"]["correct"].dims == ("chain", "draw", "class")
    # The log-likelihood is the Binomial of the counts under each draw.
    from scipy import stats

    theta = idata["posterior"]["accuracy"].to_numpy()
    expected = stats.binom.logpmf([7, 1], [10, 4], theta)
    np.testing.assert_allclose(idata["log_likelihood"]["correct"].to_numpy(), expected, rtol=1e-8)


def _tree(values: np.ndarray, diverging: int = 0) -> xr.DataTree:
    chains, draws = values.shape[:2]
    post = xr.Dataset({"theta": (("chain", "draw", "k"), values)})
    div = np.zeros((chains, draws), dtype=bool)
    div.flat[:diverging] = True
    return xr.DataTree.from_dict({"posterior": post, "sample_stats": xr.Dataset({"diverging": (("chain", "draw"), div)})})


def test_diagnostics_do_not_raise_false_alarms_over_many_parameters():
    """Issue 8: the max of 1,000 element-wise R-hats exceeds 1.01 on sound fits; the summary R-hat does not."""
    rng = np.random.default_rng(3)
    sound = rng.normal(size=(4, 150, 1000))  # exact independent draws: a perfectly mixed fit
    d = diagnostics(_tree(sound), warn=False)
    assert d["max_rhat_elementwise"] > 1.01        # the old check would have failed this fit
    assert d["max_rhat"] < 1.01 and d["ok"]
    assert "worst of mean/min/max" in d["rhat_method"]


def test_diagnostics_catch_a_stuck_chain_and_divergences():
    rng = np.random.default_rng(4)
    stuck = rng.normal(size=(4, 500, 50))
    stuck[0, :, 7] += 4.0                          # one element of one chain elsewhere
    d = diagnostics(_tree(stuck), warn=False)
    assert not d["ok"] and any("R-hat" in p for p in d["problems"])
    with pytest.warns(UserWarning, match="3 divergent transitions"):
        d = diagnostics(_tree(rng.normal(size=(2, 500, 3)), diverging=3))
    assert not d["ok"] and d["divergences"] == 3


def test_one_chain_says_rhat_was_skipped():
    d = diagnostics(_tree(np.random.default_rng(5).normal(size=(1, 500, 3))), warn=False)
    assert d["max_rhat"] is None and "R-hat skipped" in d["rhat_note"] and d["chains"] == 1


def test_plain_slice_errors_shortens_only_the_message_and_only_inside_the_block():
    """Inside the block a size mismatch still raises (numba's fixed message); outside, numba's own hook is back."""
    import numba
    import numba.np.arrayobj as arrayobj

    from pbassess.inference import plain_slice_errors

    original = arrayobj.raise_with_shape_context

    @numba.njit
    def copy_inside(out, values):
        out[...] = values

    @numba.njit
    def copy_outside(out, values):
        out[...] = values

    out = np.zeros(4)
    with plain_slice_errors():
        copy_inside(out, np.arange(4.0))
        assert out.tolist() == [0.0, 1.0, 2.0, 3.0]
        with pytest.raises(ValueError, match="^cannot assign slice from input of different size$"):
            copy_inside(out, np.arange(3.0))
    assert arrayobj.raise_with_shape_context is original
    with pytest.raises(ValueError, match=r"cannot assign slice of shape \(4,\) from input of shape \(3,\)"):
        copy_outside(out, np.arange(3.0))
    try:
        with plain_slice_errors():
            raise KeyError("an error inside the block")
    except KeyError:
        pass
    assert arrayobj.raise_with_shape_context is original
