"""Shared fixtures: Agg backend, seeded rng, real data from ../shared/data (read in place), tiny MCMC settings."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

_DEFAULT_SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
if "PBASSESS_DATA_DIR" not in os.environ and _DEFAULT_SHARED.is_dir():
    os.environ["PBASSESS_DATA_DIR"] = str(_DEFAULT_SHARED)


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    """The real prediction sets (../shared/data); tests that need them skip when absent."""
    path = os.environ.get("PBASSESS_DATA_DIR")
    if not path or not Path(path).is_dir():
        pytest.skip("real data folder (PBASSESS_DATA_DIR / ../shared/data) not available")
    return Path(path)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261121)


@pytest.fixture(scope="session")
def cifar100(shared_data_dir):
    from pbassess import load_data

    return load_data("cifar100-resnet110")


@pytest.fixture(scope="session")
def svhn(shared_data_dir):
    from pbassess import load_data

    return load_data("svhn-resnet")


@pytest.fixture(scope="session")
def sample_kwargs() -> dict:
    """Tiny NUTS settings for unit tests that check plumbing, not statistics."""
    return {"tune": 200, "draws": 200, "chains": 2, "cores": 1, "random_seed": 7, "progressbar": False}


# The longest test files run first. `make test` gives each pytest-xdist worker one test file at a time
# (--dist loadfile) in collection order, and the notebooks (tests/test_notebooks.py: every notebook executed,
# about five minutes) are collected near the end: started last, they ran alone while the other core idled.
_LONGEST_FILES_FIRST = ("test_notebooks.py", "test_sbc.py")


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: item.path.name not in _LONGEST_FILES_FIRST)  # stable: the rest keep their order
