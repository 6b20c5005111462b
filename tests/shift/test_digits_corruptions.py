"""The committed digits-corruptions benchmark: its file, its card and its generator's corruptions."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

FOLDER = Path(__file__).resolve().parents[2] / "models" / "digits-corruptions"


def _recipe():
    spec = importlib.util.spec_from_file_location("digits_corruptions_recipe", FOLDER / "make_predictions.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def preds():
    import pbassess

    return pbassess.load_data("digits-corruptions")


def test_layout_of_the_committed_file(preds):
    recipe = _recipe()
    assert set(preds.groups) >= {"corruption", "intensity", "method"}
    corr = preds.group("corruption").astype(str)
    inten = preds.group("intensity").astype(str)
    meth = preds.group("method").astype(str)
    assert sorted(set(meth)) == sorted(recipe.METHODS)
    assert set(corr) == {"none", "ood", *recipe.INTENSITIES}
    n_test = int(((corr == "none") & (meth == "vanilla")).sum())
    assert n_test == 1797 - recipe.N_TRAIN - recipe.N_VALID
    for kind in recipe.INTENSITIES:
        assert sorted(set(inten[corr == kind])) == ["1", "2", "3", "4", "5"]
    ood = corr == "ood"
    assert ood.sum() == 4 * recipe.N_OOD and not np.asarray(preds.labeled)[ood].any()
    assert np.asarray(preds.labeled)[~ood].all()
    assert preds.n_items == 4 * (31 * n_test + recipe.N_OOD)
    assert (FOLDER / "predictions.csv.gz").stat().st_size < 4e6


def test_card_numbers_match_the_file(preds):
    card = json.loads((FOLDER / "card.json").read_text())
    assert card["n_items"] == preds.n_items
    corr = preds.group("corruption").astype(str)
    inten = preds.group("intensity").astype(str)
    meth = preds.group("method").astype(str)
    for key in ("none-0/vanilla", "rotation-5/ensemble", "gaussian-noise-3/bayes-logreg"):
        c, m = key.split("/")
        kind, level = c.rsplit("-", 1)
        mask = (corr == kind) & (inten == level) & (meth == m)
        accuracy = float(np.asarray(preds.correct)[mask].mean())
        assert accuracy == pytest.approx(card["sets"][key]["accuracy"], abs=5e-5)


def test_corruptions_do_what_the_card_says():
    recipe = _recipe()
    rng = np.random.default_rng(0)
    x = np.clip(rng.normal(8, 4, size=(50, 64)), 0, 16)
    # contrast: each image's deviations from its mean shrink by the stated factor (no clipping needed)
    out = recipe.corrupt(x, "contrast", 5)
    np.testing.assert_allclose(out.std(axis=1), 0.1 * x.std(axis=1), rtol=1e-10)
    # salt-and-pepper: about 20 % of the pixels become 0 or 16
    sp = recipe.corrupt(x, "salt-and-pepper", 5)
    changed = sp != x
    assert 0.15 < changed.mean() < 0.25 and set(np.unique(sp[changed])) <= {0.0, 16.0}
    # every corruption is deterministic and stays in the pixel range
    for kind in recipe.INTENSITIES:
        a, b = recipe.corrupt(x, kind, 3), recipe.corrupt(x, kind, 3)
        assert np.array_equal(a, b) and a.min() >= 0 and a.max() <= 16


def test_temperature_fit_recovers_a_known_temperature():
    recipe = _recipe()
    rng = np.random.default_rng(1)
    logits = rng.normal(0, 3, size=(4000, 5))
    p_true = recipe._softmax(logits / 2.0)  # labels drawn at temperature 2
    y = np.array([rng.choice(5, p=q) for q in p_true])
    assert recipe.fit_temperature(logits, y) == pytest.approx(2.0, rel=0.1)
