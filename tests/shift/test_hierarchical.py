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
    return shift_table(preds, by="intensity", n_draws=0, bins=5)


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


# ---------------------------------------------------------------------------- the fit layer (issue 18)
@pytest.mark.slow
def test_accuracy_trend_on_the_fit_layer_matches_sampling_the_model_directly(tmp_path):
    """The fit layer samples the same model as before (sampled by itself): theta within Monte Carlo error;
    the result holds the DataTree contract and reloads whole."""
    import arviz as az

    import pbassess as pb
    from pbassess.inference import sample_model

    rng = np.random.default_rng(7)
    n = np.array([200, 200, 50, 200, 200])
    k = rng.binomial(n, [0.95, 0.9, 0.85, 0.75, 0.7])
    kw = {"draws": 500, "tune": 500, "chains": 4, "progressbar": False}
    fit = fit_accuracy_trend(k, n, seed=1, sample_kwargs=kw)
    res = fit["result"]
    tree = fit["idata"]
    assert {"posterior", "prior", "log_likelihood", "log_prior", "observed_data", "constant_data",
            "sample_stats"} <= set(tree.children)
    assert tree["log_likelihood"]["correct"].sizes["item"] == int(n.sum())
    assert res.loo().n_data_points == int(n.sum())
    direct = sample_model(accuracy_trend_model(k, n), seed=2, sample_kwargs={**kw, "target_accept": 0.95},
                          log_likelihood=False)
    ours = fit["theta"].mean(axis=0)
    theirs = direct["posterior"]["theta"].mean(("chain", "draw")).to_numpy()
    sd = fit["theta"].std(axis=0)
    # no divergences and R-hat near 1 (with 4 x 500 draws the split R-hat of a converged fit spreads
    # to about 1.01 over seeds, so the bound is 1.02; ESS is checked below, which the means need)
    assert fit["diagnostics"]["divergences"] == 0 and fit["diagnostics"]["max_rhat"] < 1.02, fit["diagnostics"]
    ess = float(az.ess(direct["posterior"]["theta"].to_dataset(), method="bulk")["theta"].min())
    assert ess >= 100
    # the difference of two means with ESS >= 100 each has sd <= sd * sqrt(2 / 100)
    assert np.all(np.abs(ours - theirs) < 4 * sd * np.sqrt(2 / 100))
    assert abs(fit["p_decreasing"] - float((direct["posterior"]["beta"].to_numpy() < 0).mean())) < 0.05
    back = pb.load_result(res.save(tmp_path / "trend.nc"))
    assert back.sentence() == res.sentence() and back.summary().equals(res.summary())
    back._model = None
    assert back.model.named_vars_to_dims["theta"] == ("level",)


def test_trend_specs_validate_and_imply_items():
    from pbassess.pymc_models.shift import AccuracyTrendSpec, CalibrationTrendSpec

    spec = AccuracyTrendSpec([3, 1], [4, 2], [0.0, 2.0])
    assert spec.observations.size == 6 and spec.levels == ["0.0", "2.0"] and not spec.has_conjugate
    assert np.bincount(spec.observations.cell).tolist() == [4, 2]
    cal = CalibrationTrendSpec([[0, 4], [3, 0]], [[0, 2], [1, 0]], [[0.0, 3.2], [2.1, 0.0]], levels=["a", "b"],
                               bins=["lo", "hi"])
    assert cal.cell_names == ["a|hi", "b|lo"] and cal.n.tolist() == [4, 3] and cal.observations.size == 7
    with pytest.raises(ConfigError, match="at least two levels"):
        AccuracyTrendSpec([1], [2])
