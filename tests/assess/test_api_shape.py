"""One API shape for every assessment: DataFrames in, inference=/engine=, sample_kwargs, user PyMC priors, ties."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pymc
import pytest

import pbassess as pb
from pbassess.errors import ConfigError
from pbassess.inference import mock_pymc_sample

# Mocked sampling gives prior draws: their diagnostics fail by design where only plumbing is tested.
pytestmark = pytest.mark.filterwarnings("ignore:MCMC diagnostics failed:UserWarning")


@pytest.fixture
def mocked(monkeypatch):
    monkeypatch.setattr(pymc, "sample", mock_pymc_sample)


def _frame(n: int = 240, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    conf = rng.uniform(0.55, 1.0, n)
    predicted = rng.integers(0, 2, n)
    correct = rng.random(n) < conf
    label = np.where(correct, predicted, 1 - predicted).astype(float)
    label[::7] = np.nan  # unlabeled items
    return pd.DataFrame({"item_id": np.arange(n), "predicted": predicted.astype(str), "confidence": conf,
                         "label": pd.Series(label).map(lambda v: None if np.isnan(v) else str(int(v))),
                         "site": np.where(np.arange(n) % 2, "x", "y")})


@pytest.mark.parametrize("call", [
    lambda d: pb.assess_accuracy(d, seed=0, draws=200),
    lambda d: pb.assess_calibration(d, bins=5, seed=0, draws=200),
    lambda d: pb.assess_confusion(d, seed=0, draws=200),
    lambda d: pb.compare_groups(d, "site", seed=0, draws=200),
])
def test_a_dataframe_goes_straight_in(call):
    frame = _frame()
    from_frame = call(frame).to_json()
    from_preds = call(pb.as_predictions(frame)).to_json()
    assert from_frame == from_preds
    assert {"metric", "inference", "ci_prob", "diagnostics", "sentence"} <= set(from_frame)
    assert from_frame["diagnostics"]["ok"] is True  # conjugate fits carry the same diagnostics shape as NUTS fits


def test_a_dataframe_goes_into_every_other_public_function(mocked, tmp_path):
    """simulate, the labeling session, compare_models and assess_hierarchical take a DataFrame as the rest do."""
    frame = _frame()
    keys = {"metric", "inference", "ci_prob", "diagnostics", "sentence"}
    pool = frame.assign(label=frame["label"].fillna("0"))  # a simulation needs every label
    sim = pb.simulate(pool, "least-accurate", "ts", runs=2, seed=0)
    again = pb.simulate(pb.as_predictions(pool), "least-accurate", "ts", runs=2, seed=0)
    np.testing.assert_array_equal(sim.dataset["mrr"].to_numpy(), again.dataset["mrr"].to_numpy())  # timings differ
    session = pb.LabelingSession.start(frame, tmp_path / "s.json", target="least-accurate", seed=0)
    assert session.pool.n_items == len(frame) and len(session.next_batch()) > 0
    other = frame.assign(confidence=np.clip(frame["confidence"] * 0.97, 0.5, 1.0))
    models = pb.compare_models({"a": frame, "b": other}, seed=0, draws=200)
    assert models.to_json() == pb.compare_models({"a": pb.as_predictions(frame), "b": pb.as_predictions(other)},
                                                 seed=0, draws=200).to_json()
    hier = pb.assess_hierarchical(frame, "site", seed=0, sample_kwargs={"draws": 30, "tune": 30, "chains": 1})
    assert hier.environments == ["x", "y"]
    for result in (sim, session.posterior(), models, hier):
        out = result.to_json()
        assert keys <= set(out) and isinstance(out["diagnostics"]["ok"], bool)


def test_compare_groups_nuts_honours_draws_and_returns_a_datatree(mocked):
    """Issue 7 defect: compare_groups(engine="mcmc", draws=200) ignored draws, gave no diagnostics and no DataTree."""
    preds = pb.as_predictions(_frame())
    res = pb.compare_groups(preds, "site", inference="nuts", draws=200, seed=0, sample_kwargs={"chains": 2})
    assert res.posterior.sizes["draw"] == 200 and res.posterior.sizes["chain"] == 2
    assert res.inference == "nuts" and {"ok", "max_rhat", "min_ess_bulk", "divergences"} <= set(res.diagnostics)
    assert {"posterior", "log_likelihood", "observed_data", "sample_stats"} <= set(res.idata.children)
    assert res.to_json()["diagnostics"] == res.diagnostics


def test_inference_spellings_agree():
    preds = pb.as_predictions(_frame())
    a = pb.assess_accuracy(preds, seed=3, draws=300, inference="conjugate").to_json()
    b = pb.assess_accuracy(preds, seed=3, draws=300, inference="conjugate").to_json()
    assert a == b
    with pytest.raises(ConfigError, match="unknown inference"):
        pb.assess_accuracy(preds, inference="laplace")


def test_user_pymc_prior_callable_and_dict(mocked):
    preds = pb.as_predictions(_frame())

    def hierarchical(model, coords):
        mu = pymc.Normal("mu", 0.0, 1.5)
        z = pymc.Normal("z", 0.0, 1.0, dims="class")
        return pymc.math.sigmoid(mu + 0.5 * z)

    res = pb.assess_accuracy(preds, prior=hierarchical, inference="nuts", seed=0, sample_kwargs={"draws": 50, "chains": 2})
    assert {"mu", "z", "accuracy"} <= set(res.model.named_vars) and res.prior["kind"] == "pymc"
    assert res.posterior["accuracy"].shape == (2, 50, 2)
    res = pb.assess_accuracy(preds, prior={"accuracy": pymc.Beta.dist(8.0, 2.0)}, inference="nuts", seed=0,
                             sample_kwargs={"draws": 50, "chains": 1})
    # Mocked draws are prior draws: the Beta(8, 2) mean is 0.8.
    assert abs(float(res.posterior["accuracy"].mean()) - 0.8) < 0.05
    with pytest.raises(ConfigError, match="needs inference='nuts'"):
        pb.assess_accuracy(preds, prior=hierarchical)


def test_tied_regions_are_named_together():
    preds = pb.Predictions.from_top1(["a", "b", "c"] * 40, [0.9] * 120, ["a", "b", "c"] * 20 + ["b", "a", "a"] * 20,
                                     classes=["a", "b", "c"])
    # a, b and c each have 40 labels and 20 correct: exactly tied.
    sentence = pb.assess_accuracy(preds, seed=0).sentence()
    assert sentence.startswith("3 predicted classes are tied for least accurate")
    assert "'a', 'b' and 'c'" in sentence


def test_compare_groups_takes_a_user_pymc_prior(mocked):
    preds = pb.as_predictions(_frame())

    def shared(model, coords):
        mu = pymc.Normal("mu", 1.0, 1.0)
        return pymc.math.sigmoid(mu + pymc.Normal("offset", 0.0, 0.3, dims="cell"))

    res = pb.compare_groups(preds, "site", prior=shared, inference="nuts", draws=40, seed=0,
                            sample_kwargs={"chains": 2})
    assert {"mu", "offset"} <= set(res.model.named_vars) and res.prior["kind"] == "pymc"
    assert res.posterior["difference"].shape == (2, 40, 1)
    with pytest.raises(ConfigError, match="needs inference='nuts'"):
        pb.compare_groups(preds, "site", prior=shared)
