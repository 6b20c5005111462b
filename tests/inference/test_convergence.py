"""The vectorised R-hat and ESS equal ArviZ's per-element functions on chains of known behaviour."""

import numpy as np
import pytest
import xarray as xr

from pbassess.inference.convergence import ess_bulk, ess_tail, rhat_rank


def _chains(seed: int, draws: int = 400) -> np.ndarray:
    """Elements (E, 4, draws): independent, AR(1) at 0.9, one chain shifted, heavy-tailed, a few ties."""
    rng = np.random.default_rng(seed)
    iid = rng.normal(size=(4, draws))
    ar = np.zeros((4, draws))
    for t in range(1, draws):
        ar[:, t] = 0.9 * ar[:, t - 1] + rng.normal(size=4)
    stuck = rng.normal(size=(4, draws))
    stuck[0] += 1.5
    heavy = rng.standard_cauchy(size=(4, draws))
    ties = np.round(rng.normal(size=(4, draws)), 1)
    odd = rng.normal(size=(4, draws))
    return np.stack([iid, ar, stuck, heavy, ties, odd])


@pytest.mark.parametrize("draws", [400, 401, 57])
def test_equal_to_arviz_stats(draws):
    import arviz_stats

    x = _chains(draws, draws)
    ds = xr.Dataset({"x": (("e", "chain", "draw"), x)})
    np.testing.assert_allclose(rhat_rank(x), arviz_stats.rhat(ds, method="rank")["x"].to_numpy(), rtol=1e-8)
    np.testing.assert_allclose(ess_bulk(x), arviz_stats.ess(ds, method="bulk")["x"].to_numpy(), rtol=1e-8)
    np.testing.assert_allclose(ess_tail(x), arviz_stats.ess(ds, method="tail")["x"].to_numpy(), rtol=1e-8)


def test_constant_and_non_finite_elements_as_arviz():
    import arviz_stats

    x = _chains(0)[:2].copy()
    x[0] = 3.0  # constant: ESS is the number of draws
    x = np.concatenate([x, x[1:2].copy()])
    x[2, 1, 7] = np.nan
    ds = xr.Dataset({"x": (("e", "chain", "draw"), x)})
    for ours, method in ((ess_bulk, "bulk"), (ess_tail, "tail")):
        np.testing.assert_allclose(ours(x), arviz_stats.ess(ds, method=method)["x"].to_numpy(), rtol=1e-8)
    theirs = arviz_stats.rhat(ds, method="rank")["x"].to_numpy()
    ours = rhat_rank(x)
    assert np.isnan(ours[2]) and np.isnan(theirs[2])
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-8)
    assert np.isnan(rhat_rank(x[:, :1])).all()  # one chain: no R-hat


@pytest.mark.parametrize("workers", [1, 2])
def test_rank_diagnostics_equal_the_three_functions(workers, monkeypatch):
    """Shared normal scores and blocks on threads change nothing: block edges, constant, non-finite, one chain."""
    import pbassess.inference.convergence as conv

    monkeypatch.setattr(conv, "BLOCK_ELEMENTS", 4)  # several blocks, and edges inside the special elements
    x = np.concatenate([_chains(s) for s in range(3)])  # 18 elements
    x[5] = 2.0
    x[9, 2, 11] = np.inf
    got = conv.rank_diagnostics(x, workers=workers)
    np.testing.assert_allclose(got["rhat"], rhat_rank(x), rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(got["ess_bulk"], ess_bulk(x), rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(got["ess_tail"], ess_tail(x), rtol=1e-12, equal_nan=True)
    assert np.isnan(got["rhat"][9]) and np.isnan(got["ess_bulk"][9])
    one = conv.rank_diagnostics(x[:, :1], workers=workers)
    assert np.isnan(one["rhat"]).all()
    np.testing.assert_allclose(one["ess_bulk"], ess_bulk(x[:, :1]), rtol=1e-12, equal_nan=True)
    assert {k: v.shape for k, v in conv.rank_diagnostics(x[:0], workers=workers).items()} == {
        "rhat": (0,), "ess_bulk": (0,), "ess_tail": (0,)}
