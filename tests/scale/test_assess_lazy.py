"""Assessments of a Parquet pool read lazily equal those of the same pool in memory, to the last digit."""

from __future__ import annotations

import pytest

import pbassess
from pbassess import Predictions
from pbassess.data.lazy import read_lazy_predictions
from pbassess.data.synthetic import write_synthetic_pool

# item-level statistics that are (by design) only computed for pools held in memory
# (Nixon et al.'s ACE needs the labeled items' scores for its equal-count ranges: null out of core)
ITEM_LEVEL_KEYS = {"smooth_ece", "top_label_ece", "classwise_ece_one_vs_rest", "marginal_calibration_error", "ace"}


@pytest.fixture(scope="module")
def pools(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lazy") / "pool"
    write_synthetic_pool(folder, 3000, 4, labeled_fraction=0.3, rows_per_file=1000, row_group_size=500, seed=1)
    lazy = read_lazy_predictions(folder, rows_per_chunk=500)
    return lazy, Predictions.from_dataset(lazy.dataset.compute())


@pytest.mark.parametrize("name", ["assess_accuracy", "assess_calibration", "assess_confusion"])
def test_lazy_assessment_equals_in_memory(pools, name):
    lazy, eager = pools
    assert lazy.is_lazy and not eager.is_lazy and lazy.dataset["predicted"].data.numblocks[0] == 6
    assess = getattr(pbassess, name)
    got = {k: v for k, v in assess(lazy, seed=0).to_json().items() if k not in ITEM_LEVEL_KEYS}
    want = {k: v for k, v in assess(eager, seed=0).to_json().items() if k not in ITEM_LEVEL_KEYS}
    assert got == want
