"""The item-level calibration extras are computed when asked for, not at fit time (issue 25)."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from pbassess import Predictions
from pbassess.assess.calibration import assess_calibration
from pbassess.calibration import extras


@pytest.fixture(autouse=True)
def _few_operating_simulations(monkeypatch):
    """These tests are about when entries are computed: 4 simulations per truth keep the JSON's
    operating characteristics (tested in test_extras.py and test_posterior.py) cheap here."""
    from pbassess.calibration import posterior

    monkeypatch.setattr(posterior, "OC_REPS", 4)


def _result(probs: bool = True):
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(3), 400)
    labels = rng.integers(0, 3, 400)
    preds = (Predictions.from_probs(p, labels, classes=["a", "b", "c"]) if probs else
             Predictions.from_top1(p.argmax(axis=1), p.max(axis=1), labels, classes=["a", "b", "c"]))
    return assess_calibration(preds, bins=5, seed=0)


def test_fitting_does_not_compute_them(monkeypatch):
    calls = []
    real = extras._item_level_values
    monkeypatch.setattr(extras, "_item_level_values", lambda r: calls.append(1) or real(r))
    result = _result()
    assert calls == []
    stored = result.options["item_level_json"]
    assert isinstance(stored, extras.ItemLevelJson) and not stored.computed
    first = result.to_json()
    second = result.to_json()
    assert calls == [1]                       # once, shared by the JSON and the stored entries
    assert first == second
    assert first["classwise_ece_one_vs_rest"]["frequentist"] is not None


def test_the_json_equals_the_entries_computed_eagerly():
    result = _result()
    eager = extras._item_level_values(result)
    out = result.to_json()
    for key, value in eager.items():
        assert out[key] == value
    assert dict(result.options["item_level_json"]) == eager


def test_a_saved_result_keeps_them(tmp_path):
    import pbassess

    result = _result(probs=False)
    path = result.save(tmp_path / "calibration.nc")
    loaded = pbassess.load_result(path)
    assert loaded.to_json()["top_label_ece"] == result.to_json()["top_label_ece"]
    assert loaded.to_json()["smooth_ece"] == result.to_json()["smooth_ece"]


def test_the_lazy_entries_behave_as_a_dict():
    result = _result()
    lazy = extras.item_level_json(result)
    assert sorted(lazy) == ["ace", "classwise_ece_one_vs_rest", "marginal_calibration_error", "smooth_ece",
                            "top_label_ece"]
    assert len(lazy) == 5 and "smooth_ece" in lazy and lazy.get("nope", 1) == 1
    for clone in (pickle.loads(pickle.dumps(extras.item_level_json(result))), copy.deepcopy(extras.item_level_json(result)),
                  copy.copy(extras.item_level_json(result)), extras.item_level_json(result).copy()):
        assert type(clone) is dict and clone == lazy.resolve()
