"""The ``prior`` and ``log_prior`` groups computed on first read hold exactly an eager fit's numbers (issue 25).

A fit whose generator is its own (seed None, an integer or a SeedSequence) defers the prior
draws and the log prior; a caller's Generator keeps the eager path, so it ends where it always
did. Both are compared here bit for bit, through reading, pickling and saving.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import xarray as xr

from pbassess import Predictions
from pbassess.assess.calibration import assess_calibration
from pbassess.inference import fit
from pbassess.inference.deferred import Deferred
from pbassess.pymc_models.accuracy import BetaBernoulliSpec
from pbassess.results import AssessmentResult


def _deferred(ds: xr.Dataset) -> Deferred:
    """The Deferred source behind a lazily read variable of ``ds``."""
    data = next(iter(ds.data_vars.values())).variable._data
    while not hasattr(data, "source"):
        data = data.array
    return data.source


def _assert_bitwise(a: xr.DataTree, b: xr.DataTree) -> None:
    assert list(a.children) == list(b.children)
    for group in a.children:
        xr.testing.assert_identical(a[group].to_dataset(), b[group].to_dataset())
        for name in a[group].data_vars:
            np.testing.assert_array_equal(a[group][name].to_numpy(), b[group][name].to_numpy())


def test_a_private_seed_defers_the_prior_groups_and_gives_the_eager_numbers():
    spec = BetaBernoulliSpec(n=[30, 12, 0], correct=[21, 3, 0], alpha=[2.0, 0.5, 1.0], beta=[1.0, 0.5, 3.0])
    lazy = fit(spec, draws=300, seed=7).idata
    sources = [_deferred(lazy[group].to_dataset()) for group in ("prior", "log_prior")]
    assert all(s._values is None for s in sources)                    # nothing computed yet
    eager = fit(spec, draws=300, seed=np.random.default_rng(7)).idata  # a caller's Generator: eager
    _assert_bitwise(lazy, eager)
    assert all(s._values is not None for s in sources)
    # the caller's generator ends past the posterior and the prior draws, as before
    rng, again = np.random.default_rng(3), np.random.default_rng(3)
    fit(spec, draws=50, seed=rng)
    spec.conjugate_draws(200, again)
    spec.prior_draws(200, again)
    assert rng.bit_generator.state == again.bit_generator.state


def test_deferred_groups_pickle_and_save_as_their_values(tmp_path):
    rng = np.random.default_rng(0)
    conf = rng.uniform(0.4, 1.0, 2000)
    pred = rng.integers(0, 3, 2000)
    label = np.where(rng.random(2000) < conf, pred, rng.integers(0, 3, 2000))
    label[:500] = -1
    pool = Predictions.from_top1(pred, conf, label, classes=["a", "b", "c"])
    eager = assess_calibration(pool, bins=10, seed=np.random.default_rng(4), draws=200).idata
    _assert_bitwise(pickle.loads(pickle.dumps(assess_calibration(pool, bins=10, seed=4, draws=200).idata)), eager)
    path = assess_calibration(pool, bins=10, seed=4, draws=200).save(tmp_path / "cal.nc")
    loaded = AssessmentResult.load(path).idata
    for group in ("prior", "log_prior"):
        for name in eager[group].data_vars:
            np.testing.assert_array_equal(loaded[group][name].to_numpy(), eager[group][name].to_numpy())


@pytest.mark.filterwarnings("ignore:MCMC diagnostics failed")
def test_a_nuts_surface_fit_defers_its_prior_from_the_posterior_layout_and_pymc_log_prior():
    """A surface spec's deferred ``prior`` takes its layout from the posterior (no probe draws, which
    compile the model's prior graph) and its PyMC ``log_prior`` is computed on first read: the
    numbers are an eager fit's, bit for bit (real NUTS, the same seeds)."""
    from pbassess.pymc_models.surface import SurfaceModelSpec
    from pbassess.surface import ArmCounts

    arms = ArmCounts.from_arrays([6, 4, 0, 5, 3, 2], [5, 2, 0, 4, 1, 2],
                                 values=[[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]], attributes=("a", "b"))
    spec = SurfaceModelSpec(arms, "berngp", model_seed=0)
    assert spec.prior_layout_is_posterior
    options = {"draws": 60, "tune": 60, "chains": 2}
    lazy = fit(spec, inference="nuts", seed=7, sample_kwargs=options).idata
    sources = [_deferred(lazy[group].to_dataset()) for group in ("prior", "log_prior")]
    assert all(s._values is None for s in sources)
    assert dict(lazy["prior"]["p"].sizes) == {"chain": 4, "draw": 60, "arm": 6}
    assert set(lazy["log_prior"].data_vars) == {v.name for v in spec.model().free_RVs}
    eager = fit(spec, inference="nuts", seed=np.random.default_rng(7), sample_kwargs=options).idata
    for group in ("prior", "log_prior"):
        xr.testing.assert_identical(lazy[group].to_dataset(), eager[group].to_dataset())
    assert all(s._values is not None for s in sources)


def test_prior_draws_that_break_the_announced_layout_fail_when_read():
    class OneClassPrior(BetaBernoulliSpec):  # announces the posterior's layout, draws one class of three
        prior_layout_is_posterior = True

        def prior_draws(self, n_draws, rng):
            return {name: value[:, :1] for name, value in super().prior_draws(n_draws, rng).items()}

    spec = OneClassPrior(n=[30, 12, 4], correct=[21, 3, 2], alpha=1.0, beta=1.0)
    prior = fit(spec, draws=50, seed=7).idata["prior"]
    assert dict(prior["accuracy"].sizes) == {"chain": 4, "draw": 50, "class": 3}  # the posterior's, announced
    with pytest.raises(RuntimeError, match="layout announced"):
        prior["accuracy"].to_numpy()
