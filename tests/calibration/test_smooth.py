"""Smooth ECE and the smooth reliability curve against relplot (Blasiok and Nakkiran's package)."""

from __future__ import annotations

import numpy as np
import pytest
import relplot

from pbassess.calibration import smooth_ece, smooth_reliability_curve
from pbassess.calibration.smooth import smooth_ece_at
from pbassess.errors import ConfigError


@pytest.mark.parametrize("n", [200, 1500])
def test_smooth_ece_matches_relplot_away_from_the_boundary(rng, n):
    f = rng.beta(5, 2, size=n) * 0.98 + 0.01  # no score within relplot's grid step of 0 or 1
    y = (rng.uniform(size=n) < f**1.4).astype(float)
    value, sigma = smooth_ece(f, y, return_sigma=True)
    ref, ref_sigma = relplot.smECE(f, y, return_width=True)
    assert sigma == ref_sigma
    # relplot rounds scores onto a grid of step ~1e-3 (linear split): a second-order error
    assert value == pytest.approx(ref, abs=2e-5)
    assert smooth_ece_at(f, y, 0.05) == pytest.approx(relplot.smECE_sigma(f, y, 0.05), abs=2e-5)


@pytest.mark.slow
def test_smooth_ece_on_cifar100_both_endpoint_rules(cifar100):
    c, y = cifar100.confidence, cifar100.correct.astype(float)
    assert int(np.sum(c == 1.0)) == 1134
    ref = relplot.smECE(c, y)
    assert round(ref, 4) == 0.1083
    # the default follows relplot (issue 20): equal up to relplot's grid rounding of the scores
    assert smooth_ece(c, y) == pytest.approx(ref, abs=2e-5)
    assert smooth_ece(c, y, endpoints="relplot") == smooth_ece(c, y)
    # the reflection principle gives the 1,134 confidences equal to 1 their mirror image too: 0.010 lower
    assert round(smooth_ece(c, y, endpoints="reflect"), 4) == 0.0982


def test_default_follows_relplot_with_many_scores_exactly_one(rng):
    # a quarter of the scores exactly 1.0 (as CIFAR-100's 1,134 of 10,000), the rest well inside
    f = np.concatenate([np.ones(500), rng.uniform(0.3, 0.98, 1500)])
    y = (rng.uniform(size=2000) < np.where(f == 1.0, 0.9, f)).astype(float)
    ref, ref_sigma = relplot.smECE(f, y, return_width=True)
    value, sigma = smooth_ece(f, y, return_sigma=True)
    assert sigma == ref_sigma
    assert value == pytest.approx(ref, abs=2e-5)  # relplot's grid rounding (second order)
    # the other convention is a different number here (mirror images of the 500 scores at 1)
    assert abs(smooth_ece(f, y, endpoints="reflect") - ref) > 1e-3


def test_smooth_curve_matches_relplot_and_a_calibrated_model_is_flat(rng):
    f = rng.uniform(0.02, 0.98, 4000)
    y = (rng.uniform(size=4000) < f).astype(float)
    ours = smooth_reliability_curve(f, y)
    theirs = relplot.prepare_rel_diagram(f, y, plot_confidence_band=False, report_CE_std=False)
    np.testing.assert_allclose(ours["curve"], theirs["mu"], atol=2e-4)
    assert ours["sigma"] == theirs["sigma"]
    inner = (ours["mesh"] > 0.2) & (ours["mesh"] < 0.8)
    # calibrated: near the diagonal (the self-consistent bandwidth is small, so the curve wiggles by ~0.02)
    assert np.mean(np.abs(ours["curve"][inner] - ours["mesh"][inner])) < 0.02
    assert np.trapezoid(ours["density"], ours["mesh"]) == pytest.approx(1.0, abs=0.01)


def test_smooth_ece_closed_form_for_constant_predictions():
    # all scores at 0.8, accuracy 0.5: the residual is 0.3 everywhere the kernel has mass
    assert smooth_ece_at([0.8] * 100, [1, 0] * 50, 0.1) == pytest.approx(0.3, rel=1e-9)


def test_smooth_bad_input():
    with pytest.raises(ConfigError, match="endpoints"):
        smooth_ece([0.5], [1], endpoints="x")
    with pytest.raises(ConfigError, match="at least one"):
        smooth_ece([], [])


def test_grid_split_of_many_distinct_scores_changes_nothing_visible(rng, monkeypatch):
    import pbassess.calibration.smooth as smooth_module

    f = rng.uniform(size=1500)
    y = rng.uniform(size=1500) < f**1.2
    exact = smooth_ece(f, y)
    monkeypatch.setattr(smooth_module, "GRID_POINTS", 501)  # step 0.002 instead of 2.5e-4
    # second-order error (step / sigma)^2 / 8 ~ 1e-4 relative at sigma ~ 0.05
    assert smooth_ece(f, y) == pytest.approx(exact, rel=1e-3)
