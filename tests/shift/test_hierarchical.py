"""The hierarchical accuracy-trend model on simulations with known truth (tiny NUTS settings)."""

from __future__ import annotations

import numpy as np
import pytest

from pbassess.errors import ConfigError
from pbassess.shift.hierarchical import accuracy_trend_model, fit_accuracy_trend

SAMPLE = {"draws": 250, "tune": 250, "chains": 2, "progressbar": False}


@pytest.mark.slow
def test_trend_recovers_a_falling_accuracy():
    rng = np.random.default_rng(0)
    truth = np.array([0.95, 0.9, 0.82, 0.7, 0.6, 0.5])
    n = np.full(6, 150)
    k = rng.binomial(n, truth)
    fit = fit_accuracy_trend(k, n, np.arange(6), seed=1, sample_kwargs=SAMPLE)
    assert fit["p_decreasing"] > 0.99
    mean = fit["theta"].mean(axis=0)
    # posterior sd of each theta is about sqrt(0.2 / 150) = 0.04; 3 sd
    assert np.all(np.abs(mean - truth) < 0.12)


@pytest.mark.slow
def test_no_trend_gives_an_undecided_probability():
    rng = np.random.default_rng(2)
    n = np.full(5, 200)
    k = rng.binomial(n, 0.85)
    fit = fit_accuracy_trend(k, n, seed=3, sample_kwargs=SAMPLE)
    assert 0.02 < fit["p_decreasing"] < 0.98


def test_model_validates_counts():
    with pytest.raises(ConfigError, match="at least two levels"):
        accuracy_trend_model([1], [2])
    with pytest.raises(ConfigError, match="between 0"):
        accuracy_trend_model([3, 1], [2, 2])
    with pytest.raises(ConfigError, match="not all equal"):
        accuracy_trend_model([1, 1], [2, 2], intensity=[1, 1])


def _calibration_table(rng, offsets, n=400):
    """A shift table whose level l has logit accuracy = logit(confidence) + offsets[l]."""
    from pbassess import Predictions
    from pbassess.shift.table import shift_table

    probs, labels, level = [], [], []
    for lv, off in enumerate(offsets):
        conf = rng.uniform(0.55, 0.99, size=n)
        p = np.column_stack([conf, 1 - conf])
        acc = 1 / (1 + np.exp(-(np.log(conf / (1 - conf)) + off)))
        right = rng.random(n) < acc
        probs.append(p)
        labels += np.where(right, 0, 1).tolist()
        level += [str(lv)] * n
    preds = Predictions.from_probs(np.vstack(probs), labels, groups={"intensity": level})
    return shift_table(preds, by="intensity", draws=0, bins=5)


@pytest.mark.slow
def test_calibration_trend_detects_growing_overconfidence():
    from pbassess.shift.hierarchical import fit_calibration_trend

    rng = np.random.default_rng(4)
    table = _calibration_table(rng, [0.0, -0.6, -1.2, -1.8])
    fit = fit_calibration_trend(table, table["model"].values[0], seed=5,
                                sample_kwargs={"draws": 200, "tune": 200, "chains": 2, "progressbar": False})
    assert fit["p_more_overconfident"] > 0.95
    ece = fit["ece"].mean(axis=0)
    assert ece[-1] > ece[0] + 0.1  # the true ECE is about 0, 0.11, 0.23, 0.36
    assert np.all(np.abs(ece - table["ece"].sel(model=table["model"].values[0]).values) < 0.06)


def test_calibration_model_validates_counts():
    from pbassess.shift.hierarchical import calibration_trend_model

    with pytest.raises(ConfigError, match="at least two levels"):
        calibration_trend_model([[1, 2]], [[1, 1]], [[0.5, 1.5]])
    with pytest.raises(ConfigError, match="every level needs"):
        calibration_trend_model([[1, 2], [0, 0]], [[1, 1], [0, 0]], [[0.5, 1.5], [0, 0]])
