"""Conjugate draws with NumPy's generators (issue 25): no PyTensor, the same streams.

PyTensor's Beta and Dirichlet variables drew with NumPy's algorithms (its numba backend ports
them, to within a few ulp); these tests pin the NumPy form: ``Generator.beta`` exactly, and
the Dirichlet equal to ``Generator.dirichlet`` row by row, with the caller's Generator moved
past the draws. The 0.4 s compile of a PyTensor sampler is gone: docs/sampling.md has the
measurement (``benchmarks/interactive.py``), never timed here.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from pbassess.errors import ConfigError
from pbassess.stats.sampling import beta_draws, dirichlet_draws


def test_drawing_imports_no_pytensor():
    code = ("import sys\nfrom pbassess.stats.sampling import beta_draws, dirichlet_draws\n"
            "beta_draws([1.0], [2.0], 10, seed=0)\ndirichlet_draws([[1.0, 2.0]], 10, seed=0)\n"
            "print('pytensor' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-1000:]
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize("seed", [0, 1, 12345])
def test_beta_draws_are_numpy_beta_and_advance_the_generator(seed):
    a, b = np.array([0.3, 2.0, 50.0, 1e4]), np.array([0.7, 8.0, 3.0, 2e4])
    rng = np.random.default_rng(seed)
    got = beta_draws(a, b, 500, rng)
    ref = np.random.default_rng(seed)
    np.testing.assert_array_equal(got, ref.beta(a, b, size=(500, 4)))
    assert rng.random() == ref.random()
    np.testing.assert_array_equal(beta_draws(a, b, 500, seed), got)


@pytest.mark.parametrize(("shape", "scale"), [((1, 3), 1.0), ((4, 2), 0.5), ((3, 12), 30.0), ((2, 1), 5.0)])
def test_dirichlet_draws_equal_numpy_dirichlet_row_by_row(shape, scale):
    alpha = np.random.default_rng(9).gamma(2.0, scale, shape) + 0.1
    rng = np.random.default_rng(3)
    got = dirichlet_draws(alpha, 200, rng)
    ref = np.random.default_rng(3)
    want = np.empty((200, *shape))
    for d in range(200):
        for k in range(shape[0]):
            want[d, k] = ref.dirichlet(alpha[k])
    np.testing.assert_array_equal(got, want)
    assert rng.random() == ref.random()
    np.testing.assert_allclose(got.sum(axis=-1), 1.0, rtol=1e-14)


def test_empty_and_invalid_inputs():
    assert beta_draws([1.0], [1.0], 0, seed=0).shape == (0, 1)
    assert dirichlet_draws([[1.0, 1.0]], 0, seed=0).shape == (0, 1, 2)
    assert dirichlet_draws(np.ones((0, 3)), 5, seed=0).shape == (5, 0, 3)
    with pytest.raises(ConfigError):
        beta_draws([1.0, -1.0], [1.0, 1.0], 3)
    with pytest.raises(ConfigError):
        dirichlet_draws([[1.0, np.nan]], 3)


def test_draws_batch_over_leading_dimensions():
    a = np.random.default_rng(1).gamma(2.0, 1.0, (3, 4)) + 0.2
    np.testing.assert_array_equal(beta_draws(a, a + 1, 7, seed=5), np.random.default_rng(5).beta(a, a + 1, (7, 3, 4)))
    alpha = np.random.default_rng(2).gamma(2.0, 1.0, (2, 3, 4)) + 0.2
    batched = dirichlet_draws(alpha, 6, seed=4)
    flat = dirichlet_draws(alpha.reshape(6, 4), 6, seed=4)
    np.testing.assert_array_equal(batched, flat.reshape(6, 2, 3, 4))
