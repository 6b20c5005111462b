"""DeterministicEvaluator: a model's deterministics for all draws at once, equal to PyMC's per-draw values."""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytest

from pbassess.errors import ConfigError
from pbassess.inference.deterministics import DeterministicEvaluator


def _model():
    with pm.Model(coords={"arm": range(3)}) as m:
        s = pm.HalfNormal("s")  # a transformed free variable: draws are on its own scale
        z = pm.Normal("z", 0, 1, dims="arm")
        w = pm.Normal("w", 0, 1, shape=(3, 2))
        pm.Deterministic("mu", pm.math.sigmoid(s * z), dims="arm")
        pm.Deterministic("mixed", (w @ np.ones(2)) * s + z.sum())
        pm.Deterministic("fixed", pm.math.constant(np.array([1.0, 2.0])))  # moved by no free variable
    return m


def test_equals_pymc_compute_deterministics_per_draw():
    m = _model()
    rng = np.random.default_rng(0)
    draws = {"s": rng.gamma(2.0, size=(2, 5)), "z": rng.normal(size=(2, 5, 3)), "w": rng.normal(size=(2, 5, 3, 2))}
    got = DeterministicEvaluator(m, chunk=3)(draws)  # chunks of 3 over 10 draws: a partial last chunk
    import xarray as xr

    posterior = xr.Dataset({"s": (("chain", "draw"), draws["s"]), "z": (("chain", "draw", "arm"), draws["z"]),
                            "w": (("chain", "draw", "w0", "w1"), draws["w"])})
    expected = pm.compute_deterministics(posterior, model=m, progressbar=False)
    for name in ("mu", "mixed", "fixed"):
        assert got[name].shape == expected[name].shape
        np.testing.assert_allclose(got[name], expected[name].to_numpy(), rtol=1e-12, err_msg=name)


def test_names_a_subset_and_checks_its_input():
    m = _model()
    evaluate = DeterministicEvaluator(m, ["mu"])
    out = evaluate({"s": np.ones(4), "z": np.zeros((4, 3)), "w": np.zeros((4, 3, 2))})
    assert list(out) == ["mu"] and out["mu"].shape == (4, 3)
    np.testing.assert_allclose(out["mu"], 0.5)
    with pytest.raises(ConfigError, match="lack the free variables w"):
        evaluate({"s": np.ones(4), "z": np.zeros((4, 3))})
    with pytest.raises(ConfigError, match="leading dims"):
        evaluate({"s": np.ones(4), "z": np.zeros((5, 3)), "w": np.zeros((4, 3, 2))})
    with pytest.raises(ConfigError, match="not deterministics of the model: s"):
        DeterministicEvaluator(m, ["s"])
    with pytest.raises(ConfigError, match="chunk"):
        DeterministicEvaluator(m, chunk=0)
