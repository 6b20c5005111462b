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
    assert exact.initial_point()["f_z"].shape == (arms.n_arms,)


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
