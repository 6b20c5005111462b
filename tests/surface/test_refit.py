"""Counts in data containers give the same model; the refitter swaps counts without recompiling."""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytest

from pbassess.errors import ConfigError, DataError
from pbassess.pymc_models.surface import additive_model, berngp_model, betagp_model
from pbassess.surface import ArmCounts

VALUES = [[a, b, c] for a in (0, 1) for b in (0, 1) for c in (0, 1, 2)]


def _arms(seed: int, empty: int = 3) -> ArmCounts:
    rng = np.random.default_rng(seed)
    n = rng.integers(0, 9, size=len(VALUES)).astype(float)
    n[rng.choice(len(VALUES), size=empty, replace=False)] = 0.0
    n[0] = 7.0
    correct = np.floor(n * rng.uniform(0.4, 1.0, size=n.size))
    return ArmCounts.from_arrays(n, correct, values=VALUES, attributes=("a", "b", "c"),
                                 pool_n=n + 20, confidence=rng.uniform(0.6, 0.95, size=n.size))


def _build(kind: str, arms: ArmCounts, as_data: bool):
    if kind == "additive":
        return additive_model(arms, counts_as_data=as_data)[0]
    if kind == "additive+conf":
        return additive_model(arms, covariate="confidence", counts_as_data=as_data)[0]
    if kind == "berngp":
        return berngp_model(arms, seed=0, counts_as_data=as_data)
    variant, _, term = kind.partition(":")
    return betagp_model(arms, variant=variant, scale_term=term or "gamma", seed=0, counts_as_data=as_data)[0]


def _logps(model, points):
    logp = model.compile_logp(mode="FAST_COMPILE")  # python linker: no numba compile in a unit test
    return np.array([logp(p) for p in points])


def _points(model, seed: int, k: int = 4):
    rng = np.random.default_rng(seed)
    start = model.initial_point()
    return [{name: value + 0.3 * rng.normal(size=np.shape(value)) for name, value in start.items()} for _ in range(k)]


KINDS = ["additive", "additive+conf", "berngp", "betagp", "betagp-sl:gamma", "betagp-sl:dirichlet",
         "betagp-slp:gamma", "betagp-slp:dirichlet"]


@pytest.mark.parametrize("kind", KINDS)
def test_counts_as_data_is_the_same_density_before_and_after_new_counts(kind):
    first, other = _arms(0), _arms(1, empty=5)
    second = first.with_counts(other.n, other.correct)  # the same arms and pool, new labels
    data_model = _build(kind, first, True)
    points = _points(data_model, 2)
    np.testing.assert_allclose(_logps(data_model, points), _logps(_build(kind, first, False), points), rtol=1e-10)
    new = {"labels": second.n, "correct": second.correct, "own_labels": second.n,
           "global_accuracy": second.global_accuracy}
    if kind.startswith("betagp-slp"):
        from pbassess.pymc_models.surface import kernel_similarity, pool_sparse_counts

        new["labels"], new["correct"] = pool_sparse_counts(second, kernel_similarity(second))
    with data_model:
        pm.set_data({k: v for k, v in new.items() if k in data_model.named_vars})
    np.testing.assert_allclose(_logps(data_model, points), _logps(_build(kind, second, False), points), rtol=1e-10)


def test_refitter_fits_new_counts_and_warm_starts(monkeypatch):
    from pbassess.surface.refit import SurfaceRefitter

    arms = _arms(0)
    refit = SurfaceRefitter(arms, "additive", sample_kwargs={"draws": 60, "tune": 60, "chains": 1}, seed=0)
    calls = []
    import nutpie

    real = nutpie.sample

    def spy(compiled, **kwargs):
        calls.append(kwargs.get("init_mean"))
        return real(compiled, **kwargs)

    monkeypatch.setattr(nutpie, "sample", spy)
    second = _arms(1)
    r1 = refit.fit(arms.n, arms.correct, seed=0)
    r2 = refit.fit(second.n, second.correct, seed=1)
    assert calls[0] is None and calls[1] is not None and calls[1].shape == refit.compiled.unconstrained_mean.shape
    np.testing.assert_array_equal(r2.arms.n, second.n)
    # The likelihood saw the new counts: an arm's posterior mean moves with its own data.
    assert r1.engine == r2.engine == "nuts" and np.all((r2.mean > 0) & (r2.mean < 1))
    with pytest.raises(DataError, match="no labeled items"):
        refit.fit(np.zeros(arms.n_arms), np.zeros(arms.n_arms))


def test_refitter_refuses_conjugate_estimators():
    from pbassess.surface.refit import SurfaceRefitter

    with pytest.raises(ConfigError, match="only the NUTS estimators"):
        SurfaceRefitter(_arms(0), "beta-i")
