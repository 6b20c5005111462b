"""The GP surface models: the whitened inducing-point latent against pymc_extras, and the SL scale term."""

import numpy as np
import pytest
from scipy.stats import gamma

from pbassess.pymc_models.surface import berngp_model, betagp_model, whitened_projected_latent
from pbassess.surface import ArmCounts


def test_whitened_latent_is_the_pymc_extras_projected_process():
    import pymc as pm
    import pytensor.tensor as pt
    from pymc_extras.gp import ProjectedProcess

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    U = X[rng.choice(40, size=8, replace=False)]
    ls, amp, v = np.array([0.7, 1.3, 2.0]), 1.4, rng.normal(size=8)
    with pm.Model() as model:
        f = ProjectedProcess(cov_func=amp**2 * pm.gp.cov.ExpQuad(3, ls=ls)).prior("f", X=X, X_inducing=U, jitter=1e-5)
    from pytensor.graph import graph_replace

    reference = graph_replace(f, {model["f_u_rotated_"]: pt.as_tensor_variable(v)}).eval()
    ours = whitened_projected_latent(X, U, amp, ls, v).eval()
    assert np.allclose(ours, reference, rtol=1e-7, atol=1e-9)


def _many_arms(a=40):
    rng = np.random.default_rng(1)
    values = np.column_stack([rng.integers(0, 4, a), rng.integers(0, 3, a), np.arange(a) % 5])
    n = rng.integers(0, 6, a).astype(float)
    return ArmCounts.from_arrays(n, np.floor(0.7 * n), values=values, attributes=("a", "b", "c"))


def test_projected_models_sample_only_the_inducing_coefficients():
    arms = _many_arms()
    model, _, _ = betagp_model(arms, gp="projected", n_inducing=12, seed=0)
    sizes = {v.name: int(np.prod(model.initial_point()[v.name].shape)) for v in model.value_vars}
    assert sizes["f_v"] == 12 and sizes["g_v"] == 12
    assert not any(name.startswith(("f_z", "g_z")) for name in sizes)  # no per-arm latent
    bern = berngp_model(arms, gp="projected", n_inducing=7, seed=0)
    assert bern.initial_point()["f_v"].shape == (7,)
    exact, _, _ = betagp_model(arms, gp="exact", seed=0)
    assert exact.initial_point()["f_z"].shape == (4 * 3 * 5,)  # the grid eigenbasis: one coefficient per cell


@pytest.mark.slow
def test_slp_scale_term_uses_the_arms_own_label_counts():
    arms = ArmCounts.from_arrays([1, 1, 1, 20, 20, 20, 20, 1, 1, 1], [0, 0, 1, 14, 16, 18, 12, 0, 0, 0],
                                 values=np.arange(10), attributes=("x",), continuous=("x",))
    model, n_pooled, _ = betagp_model(arms, variant="betagp-slp", scale_term="gamma", gp="exact", seed=0)
    assert n_pooled[2] > 1  # the likelihood sees pooled counts ...
    term = next(p for p in model.potentials if p.name == "scale_supervision")
    fn = model.compile_fn([model["scale"], term], inputs=model.value_vars, on_unused_input="ignore", point_fn=True)
    scale, value = fn(model.initial_point())
    # ... but the AAA code's Gamma term is on the arm's own (clamped) label count
    assert np.isclose(value, gamma(scale, scale=1.0).logpdf(np.clip(arms.n, 0.01, 10)).sum())


def _grid_arms():
    """24 of the 2 x 3 x 4 level combinations, plus an attribute with a single level."""
    cells = np.array([[a, b, c, 0] for a in range(2) for b in range(3) for c in range(4)])
    keep = np.sort(np.random.default_rng(0).choice(len(cells), 15, replace=False))
    n = 5.0 * (np.arange(15) % 7) + 5.0
    return ArmCounts.from_arrays(n, np.floor(0.6 * n), values=cells[keep], attributes=("a", "b", "c", "d"))


def test_grid_eigenbasis_gives_the_exact_kernel_of_the_arms():
    import pymc as pm
    import pytensor

    from pbassess.pymc_models.surface import arm_inputs, grid_eigenbasis

    arms = _grid_arms()
    X, owner = arm_inputs(arms)
    basis = grid_eigenbasis(X, owner)
    assert basis.n_levels == (2, 3, 4, 1) and basis.vectors.shape == (15, 24)
    model = berngp_model(arms, gp="exact", seed=0)
    assert model.initial_point()["f_z"].shape == (24,)  # one coefficient per grid cell, no Cholesky factor
    latent = model["p"].owner.inputs[0].owner.inputs[0]  # eta = intercept + f
    fn = pytensor.function([model["f_lengthscale"], model["f_amplitude"], model["f_z"], model["intercept"]], latent)
    for lengthscale, amplitude in [(np.array([0.7, 1.3, 2.0, 0.5]), 1.3), (np.array([3.0, 0.4, 1.0, 9.0]), 0.6)]:
        columns = np.stack([fn(lengthscale, amplitude, e, 0.0) for e in np.eye(24)], axis=1)  # f is linear in z
        kernel = amplitude**2 * pm.gp.cov.ExpQuad(X.shape[1], ls=lengthscale[owner])(X).eval()
        assert np.allclose(columns @ columns.T, kernel, atol=1e-10)


def test_grid_eigenbasis_applies_to_categorical_grids_of_bounded_size_only():
    from pbassess.pymc_models.surface import arm_inputs, grid_eigenbasis

    X, owner = arm_inputs(_grid_arms())
    assert grid_eigenbasis(X, owner, max_entries=15 * 24 - 1) is None
    sparse = ArmCounts.from_arrays([1, 2], [1, 1], values=[[0, 0, 0, 0], [1, 1, 1, 1]], attributes=("a", "b", "c", "d"))
    assert grid_eigenbasis(*arm_inputs(sparse)) is None  # 16 cells for 2 arms: z's draws would outgrow the arms'
    continuous = ArmCounts.from_arrays([1, 2, 3], [1, 1, 2], values=[[0, 1.5], [1, 2.5], [1, 4.0]],
                                       attributes=("a", "x"), continuous=("x",))
    assert grid_eigenbasis(*arm_inputs(continuous)) is None
    exact = berngp_model(continuous, gp="exact", seed=0)  # the Cholesky form: one coefficient per arm
    assert exact.initial_point()["f_z"].shape == (3,)


@pytest.mark.slow
def test_berngp_posterior_is_the_same_with_the_grid_eigenbasis_and_the_cholesky_factor(monkeypatch):
    """Two parametrisations of one posterior: NUTS's posterior means of every arm's accuracy agree
    within five Monte Carlo standard errors of their difference."""
    import arviz as az

    from pbassess.pymc_models import surface as models
    from pbassess.surface import fit_surface

    arms = _grid_arms()
    kwargs = {"draws": 1000, "tune": 1000, "chains": 4}
    eigen = fit_surface(arms, estimator="berngp", seed=1, sample_kwargs=kwargs)
    monkeypatch.setattr(models, "GRID_BASIS_MAX_ENTRIES", 0)
    cholesky = fit_surface(arms, estimator="berngp", seed=2, sample_kwargs=kwargs)
    assert cholesky.idata["posterior"]["f_z"].sizes["f_z_dim_0"] == arms.n_arms
    se = []
    for r in (eigen, cholesky):
        accuracy = r.idata["posterior"]["accuracy"]
        assert float(az.rhat(accuracy).max()) < 1.01  # the arms' accuracies are identified (the intercept is not)
        se.append(accuracy.std(("chain", "draw")).values / np.sqrt(az.ess(accuracy).values))
    gap = np.abs(eigen.mean - cholesky.mean)
    assert np.all(gap < 5 * np.hypot(*se)), (gap, np.hypot(*se))


def test_gp_estimators_in_the_eigenbasis_sample_longer_unless_told():
    from pbassess.pymc_models.surface import GRID_GP_SAMPLE_KWARGS, SurfaceModelSpec, gp_latent_form
    from pbassess.surface.fit import _draws_and_kwargs

    grid, continuous = _grid_arms(), ArmCounts.from_arrays([1, 2, 3], [1, 1, 2], values=[[0, 1.5], [1, 2.5], [1, 4.0]],
                                                           attributes=("a", "x"), continuous=("x",))
    assert [gp_latent_form(grid), gp_latent_form(continuous), gp_latent_form(grid, "projected")] == [
        "eigenbasis", "cholesky", "projected"]
    spec = SurfaceModelSpec(grid, "berngp", model_seed=0)
    assert spec.sample_defaults == {"draws": 1000, "tune": 1000}
    assert spec.nuts_defaults == {"target_accept": GRID_GP_SAMPLE_KWARGS["target_accept"]}
    assert _draws_and_kwargs(None, None, spec.sample_defaults)[:2] == (1000, {"tune": 1000, "chains": 4})
    assert _draws_and_kwargs(None, {"draws": 200, "tune": 300}, spec.sample_defaults)[:2] == (200, {"tune": 300, "chains": 4})
    for estimator in ("berngp", "betagp-slp"):  # the Cholesky and projected forms keep the surface defaults
        assert SurfaceModelSpec(continuous, estimator, model_seed=0).sample_defaults == {}
        assert SurfaceModelSpec(grid, estimator, model_seed=0, model_options={"gp": "projected"}).sample_defaults == {}
    assert SurfaceModelSpec(grid, "additive").sample_defaults == {}
