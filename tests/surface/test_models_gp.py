"""The GP surface models: the whitened inducing-point latent against pymc_extras, and the SL scale term."""

import numpy as np
import pytest
from scipy.stats import gamma

from pbassess.pymc_models.surface import (
    berngp_model,
    betagp_model,
    kernel_similarity,
    whitened_projected_latent,
)
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


def _components_up_to(basis, order):
    """The columns of a full grid eigenbasis that are contrasts in at most ``order`` attributes."""
    keep = basis.pattern[:, 1::2].sum(axis=1) <= order
    return basis.vectors[:, keep], basis.pattern[keep]


def test_truncated_basis_keeps_the_exact_low_order_components_of_the_kernel():
    """The truncated basis spans the same ANOVA subspaces as the full eigenbasis's columns of at most
    ``max_order`` contrasts, with the same eigenvalues: the two kernels agree to 1e-10 at every order
    (a different basis inside each subspace, the same projection); at the full order it is the exact kernel."""
    import pymc as pm

    from pbassess.pymc_models.surface import arm_inputs, grid_eigenbasis, grid_log_eigenvalues

    X, owner = arm_inputs(_grid_arms())
    full = grid_eigenbasis(X, owner)
    for lengthscale in (np.array([0.7, 1.3, 2.0, 0.5]), np.array([3.0, 0.4, 1.0, 9.0])):
        log_eig = grid_log_eigenvalues(lengthscale, full.n_levels).eval()
        exact = pm.gp.cov.ExpQuad(X.shape[1], ls=lengthscale[owner])(X).eval()
        for order in (0, 1, 2, 3, 4):
            truncated = grid_eigenbasis(X, owner, max_order=order)
            vectors, pattern = _components_up_to(full, order)
            assert truncated.vectors.shape[1] == vectors.shape[1]  # 1, 1 + 1 + 2 + 3, ...: sum of prod (L_k - 1)
            kernel = (truncated.vectors * np.exp(truncated.pattern @ log_eig)) @ truncated.vectors.T
            np.testing.assert_allclose(kernel, (vectors * np.exp(pattern @ log_eig)) @ vectors.T, atol=1e-10)
        np.testing.assert_allclose(kernel, exact, atol=1e-10)  # order 4 = every attribute: the exact kernel


def _large_grid_arms():
    """330 arms over four categorical attributes (5 x 4 x 6 x 3 = 360 cells): the full eigenbasis applies;
    with its entry cap lowered (as on ACS, where the grid is too large) the truncated one does."""
    rng = np.random.default_rng(3)
    cells = np.array(np.unravel_index(rng.choice(360, 330, replace=False), (5, 4, 6, 3))).T
    n = rng.integers(0, 4, 330).astype(float)
    return ArmCounts.from_arrays(n, np.floor(0.8 * n), values=cells, attributes=("a", "b", "c", "d"))


def test_large_categorical_grids_take_the_truncated_basis(monkeypatch):
    from pbassess.errors import ConfigError
    from pbassess.pymc_models import surface as models

    arms = _large_grid_arms()
    assert models.gp_latent_form(arms) == "eigenbasis"
    monkeypatch.setattr(models, "GRID_BASIS_MAX_ENTRIES", 1000)  # as ACS: the full grid is too large
    assert models.gp_latent_form(arms) == "truncated"
    assert models.gp_latent_form(arms, "exact") == "cholesky" and models.gp_latent_form(arms, "projected") == "projected"
    model = berngp_model(arms, seed=0)
    # main effects and pairs: 1 + (4 + 3 + 5 + 2) + (4*3 + 4*5 + 4*2 + 3*5 + 3*2 + 5*2)
    assert model.initial_point()["f_z"].shape == (1 + 14 + 71,)
    spec = models.SurfaceModelSpec(arms, "berngp", model_seed=0)
    assert spec.sample_defaults == {"draws": 1000, "tune": 1000}
    assert set(spec.nuts_var_names) == {v.name for v in model.free_RVs}  # p is evaluated after NUTS
    assert models.gp_latent_form(_grid_arms(), "truncated") == "truncated"
    continuous = ArmCounts.from_arrays([1, 2, 3], [1, 1, 2], values=[[0, 1.5], [1, 2.5], [1, 4.0]],
                                       attributes=("a", "x"), continuous=("x",))
    with pytest.raises(ConfigError, match="categorical attributes"):
        models.gp_latent_form(continuous, "truncated")


@pytest.mark.parametrize("covariate", [None, "confidence"])
def test_berngp_likelihood_from_the_labeled_rows_equals_the_full_latent(covariate):
    """The likelihood uses only the labeled arms' rows of the basis: at any point it equals the
    Bernoulli log-likelihood of the counts under the model's own ``p`` at every arm."""
    import pytensor

    arms = _large_grid_arms()
    if covariate:
        arms = ArmCounts.from_arrays(arms.n, arms.correct, values=arms.values, attributes=arms.attributes,
                                     confidence=np.linspace(0.6, 0.95, arms.n_arms))
    model = berngp_model(arms, gp="truncated", covariate=covariate, seed=0)
    fn = pytensor.function(model.value_vars, [model["p"], model["likelihood"]], on_unused_input="ignore")
    rng = np.random.default_rng(5)
    for _ in range(3):
        point = {k: v + rng.normal(0, 0.5, size=np.shape(v)) for k, v in model.initial_point().items()}
        p, likelihood = fn(**point)
        expected = (arms.correct * np.log(p) + (arms.n - arms.correct) * np.log1p(-p)).sum()
        np.testing.assert_allclose(likelihood, expected, rtol=1e-9)


@pytest.mark.slow
def test_truncated_berngp_matches_the_exact_one_on_an_additive_surface():
    """The miscalibrated surface's truth is additive on the logit scale (plus rules of one or two
    attributes), so the order-2 truncation leaves out only components the truth does not have: NUTS
    fits of both forms on the same 1,500 labels (64 arms) converge and agree. Measured (seed 0): RMS
    difference of the arms' posterior means 0.004 (max 0.012), macro MSE 0.00268 exact vs 0.00274
    truncated; tolerances 2.5x the RMS and 20% of the MSE."""
    from pbassess.surface import count_arms, fit_surface, hide_labels
    from pbassess.surface.evaluate import surface_errors
    from pbassess.surface.synthetic import miscalibrated_surface

    s = miscalibrated_surface(30000, 6, seed=3)
    arms = count_arms(hide_labels(s.preds, 1500, seed=0), s.attributes)
    truth, support = s.arm_truth(arms.values), count_arms(s.preds, s.attributes).pool_n
    fits = {gp: fit_surface(arms, estimator="berngp", seed=0, model_options={"gp": gp}) for gp in ("exact", "truncated")}
    assert fits["truncated"].idata["posterior"]["f_z"].shape[-1] == 1 + 6 + 15  # main effects and pairs of 6 binaries
    mse = {gp: surface_errors(r.mean, truth, support, truth_is_empirical=False)["macro_mse"] for gp, r in fits.items()}
    for r in fits.values():
        assert r.diagnostics["max_rhat"] < 1.02
    assert mse["truncated"] < 1.2 * mse["exact"]
    gap = (fits["exact"].mean - fits["truncated"].mean)[support >= 50]
    assert np.sqrt(np.mean(gap**2)) < 0.01


def test_betagp_takes_the_truncated_basis_on_large_grids_with_its_own_sampler_defaults(monkeypatch):
    """BetaGP, like BernGP, takes the truncated basis where the full grid is too large (on ACS 128-139 s,
    R-hat <= 1.013, where the projected process took 361 s with R-hat 1.13), sampled at its own defaults."""
    from pbassess.pymc_models import surface as models

    arms = _large_grid_arms()
    monkeypatch.setattr(models, "GRID_BASIS_MAX_ENTRIES", 1000)
    assert models.gp_latent_form(arms) == "truncated"
    model, _, _ = betagp_model(arms, seed=0)
    assert model.initial_point()["f_z"].shape == (86,) and model.initial_point()["g_z"].shape == (86,)
    model, _, _ = betagp_model(arms, gp="projected", seed=0)
    assert "f_v" in model.named_vars and "f_z" not in model.named_vars
    spec = models.SurfaceModelSpec(arms, "betagp-slp", model_seed=0)
    assert spec.sample_defaults == {"draws": 600, "tune": 300}
    assert spec.nuts_defaults == {"target_accept": 0.9}
    assert models.SurfaceModelSpec(arms, "berngp", model_seed=0).sample_defaults == {"draws": 1000, "tune": 1000}
    assert models.SurfaceModelSpec(arms, "betagp", model_seed=0, model_options={"gp": "projected"}).sample_defaults == {}

def test_kernel_similarity_is_the_squared_exponential_of_the_arms_inputs():
    """One matrix product in place of the arms x arms x inputs differences (7 s and 1.9 GB on ACS)."""
    from pbassess.pymc_models.surface import arm_inputs

    rng = np.random.default_rng(0)
    values = np.column_stack([rng.integers(0, 3, 200), rng.normal(size=200), rng.integers(0, 5, 200)])
    arms = ArmCounts.from_arrays(np.ones(200), np.ones(200), values=values, attributes=("a", "x", "b"),
                                 continuous=("x",))
    X, _ = arm_inputs(arms)
    direct = np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1) / 0.7**2)
    similarity = kernel_similarity(arms, lengthscale=0.7)
    np.testing.assert_allclose(similarity, direct, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(np.diag(similarity), 1.0)


@pytest.mark.parametrize("counts_as_data", [False, True])
def test_betagp_potentials_are_the_beta_binomial_closed_forms(counts_as_data):
    """BetaGP's likelihood (labeled arms) and warm start (every arm, WARM_START_WEIGHT pseudo-labels at the
    global accuracy) against scipy's log-beta functions at a point away from the initial one; the two share
    each arm's log B(alpha, beta), which must not change either term."""
    import pytensor
    from scipy.special import betaln

    from pbassess.pymc_models.surface import WARM_START_WEIGHT

    values = np.array([[i, j] for i in range(3) for j in range(2)])
    n = np.array([4.0, 0.0, 7.0, 1.0, 0.0, 12.0])
    c = np.array([3.0, 0.0, 5.0, 1.0, 0.0, 9.0])
    arms = ArmCounts.from_arrays(n, c, values=values, attributes=("a", "b"))
    model, n_used, c_used = betagp_model(arms, seed=0, counts_as_data=counts_as_data)
    point = {k: v + 0.37 for k, v in model.initial_point().items()}
    outputs = model.replace_rvs_by_values([model[name] for name in ("mu", "scale", "likelihood", "warm_start")])
    evaluate = pytensor.function(model.value_vars, outputs, on_unused_input="ignore")
    mu, scale, lik, warm = evaluate(**point)
    a, b = mu * scale, (1 - mu) * scale
    obs = n_used > 0
    p0 = c.sum() / n.sum()
    assert np.isclose(lik, (betaln(a + c_used, b + n_used - c_used) - betaln(a, b))[obs].sum(), rtol=1e-8)
    w = WARM_START_WEIGHT
    assert np.isclose(warm, (betaln(a + w * p0, b + w * (1 - p0)) - betaln(a, b)).sum(), rtol=1e-8)
