"""PSIS-LOO's relative efficiency from the posterior's small variables."""

from __future__ import annotations

import arviz as az
import numpy as np
import pytest
import xarray as xr

from pbassess.inference import psis_relative_efficiency


def _tree(post: dict, n_items: int = 30, seed: int = 0) -> xr.DataTree:
    rng = np.random.default_rng(seed)
    chains, draws = next(iter(post.values()))[1].shape[:2]
    p = 1 / (1 + np.exp(-rng.normal(0.5, 0.3, size=(chains, draws, 1))))
    y = rng.random(n_items) < 0.6
    loglik = np.where(y, np.log(p), np.log1p(-p))
    return xr.DataTree.from_dict({
        "posterior": xr.Dataset(post),
        "log_likelihood": xr.Dataset({"correct": (("chain", "draw", "item"), loglik)}),
        "observed_data": xr.Dataset({"correct": ("item", y.astype(float))}),
    })


def test_equals_arviz_default_when_every_variable_is_small():
    rng = np.random.default_rng(1)
    walk = np.cumsum(rng.normal(size=(4, 400, 3)), axis=1) * 0.05 + rng.normal(size=(4, 400, 3))  # autocorrelated
    tree = _tree({"a": (("chain", "draw"), rng.normal(size=(4, 400))), "b": (("chain", "draw", "k"), walk)})
    reff = psis_relative_efficiency(tree)
    ess = az.ess(tree["posterior"].to_dataset(), method="mean")
    expected = np.hstack([np.ravel(ess[v].values) for v in ("a", "b")]).mean() / 1600
    assert reff == pytest.approx(expected, rel=1e-12)
    assert az.loo(tree, reff=reff).elpd == pytest.approx(az.loo(tree).elpd, rel=1e-12)


def test_large_variables_are_left_out_and_edge_cases():
    rng = np.random.default_rng(2)
    small = rng.normal(size=(4, 300))
    tree = _tree({"s": (("chain", "draw"), small), "theta": (("chain", "draw", "arm"), rng.normal(size=(4, 300, 500)))})
    only_small = _tree({"s": (("chain", "draw"), small)})
    assert psis_relative_efficiency(tree) == pytest.approx(psis_relative_efficiency(only_small), rel=1e-12)
    assert psis_relative_efficiency(tree, max_values=1000) != psis_relative_efficiency(tree)
    big_only = _tree({"theta": (("chain", "draw", "arm"), rng.normal(size=(4, 300, 500)))})
    assert psis_relative_efficiency(big_only) is None
    one_chain = _tree({"s": (("chain", "draw"), small[:1])})
    assert psis_relative_efficiency(one_chain) == 1.0
