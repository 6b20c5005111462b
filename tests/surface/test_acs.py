"""The ACS employment set against the facts in /work/shared/data/README.md (skips without the data)."""

import os
from pathlib import Path

import numpy as np
import pytest

from pbassess.errors import DataError

ACS = Path(os.environ.get("PBASSESS_DATA_DIR", "/nonexistent")) / "acs_employment_ma"
needs_data = pytest.mark.skipif(not (ACS / "employment_MA_analysis.pq").exists(), reason="ACS data absent")
TEN = ["SEX", "DIS", "NATIVITY", "DEAR", "DEYE", "DREM", "MIG", "CIT", "MAR", "RAC1P"]


@pytest.fixture(scope="module")
def acs():
    from pbassess import load_data

    return load_data("acs-employment")


@needs_data
def test_items_labels_and_accuracy_by_year(acs):
    assert acs.n_items == 277_677 and acs.n_labeled == acs.n_items
    year = acs.groups["year"]
    got = [round(float(acs.correct[year == y].mean()), 4) for y in (2015, 2016, 2017, 2018)]
    assert got == [0.8272, 0.8253, 0.8292, 0.8282]
    assert np.issubdtype(np.asarray(acs.groups["SEX"]).dtype, np.integer)
    # predicted class 1 = employed with probability P(employed) >= 0.5
    assert np.all((acs.probs[:, 1] >= 0.5) == (acs.predicted == 1))


@needs_data
def test_arm_counts_over_ten_attributes(acs):
    from pbassess.surface import count_arms

    arms = count_arms(acs, TEN)
    assert arms.n_arms == 2554
    assert (arms.pool_n >= 5).sum() == 1049 and (arms.pool_n >= 20).sum() == 501
    assert (arms.pool_n >= 50).sum() == 296
    acc = arms.correct / arms.n
    # README: "arm accuracy from 0.50 to 1.00" holds over the arms with at least 20 items
    big = arms.pool_n >= 20
    assert np.isclose(acc[big].min(), 0.5) and acc[big].max() == 1.0


@needs_data
def test_card_checksums_match_the_mirror():
    import hashlib

    from pbassess.data.registry import model_card

    files = model_card("acs-employment").extra["files"]
    for entry in files.values():
        path = Path(os.environ["PBASSESS_DATA_DIR"]) / entry["mirror_path"]
        assert hashlib.sha256(path.read_bytes()).hexdigest() == entry["sha256"]


def test_missing_files_give_one_line_error(tmp_path):
    from pbassess.data.acs import read_acs_employment

    with pytest.raises(DataError, match="ACS employment file missing"):
        read_acs_employment(tmp_path)


def test_join_on_id_and_missing_target(tmp_path):
    import pandas as pd

    from pbassess.data.acs import read_acs_employment

    cols = {"SEX": pd.Categorical(["1", "2"]), "year": [2015, 2015], "prediction": [1, 0],
            "predicted_probability": [0.8, 0.3]}
    pd.DataFrame({"id": [0, 1], **cols, "employed": [1, 1]}).to_parquet(tmp_path / "employment_MA_reference.pq")
    ana = {"id": [5, 6], "SEX": pd.Categorical(["2", "1"]), "year": [2016, 2017], "prediction": [0, 1],
           "predicted_probability": [0.1, 0.9]}
    pd.DataFrame(ana).to_parquet(tmp_path / "employment_MA_analysis.pq")
    pd.DataFrame({"id": [6, 5], "employed": [0, 0]}).to_parquet(tmp_path / "employment_MA_analysis_target.pq")
    p = read_acs_employment(tmp_path)
    # id 5 -> employed 0 (correct: predicted 0), id 6 -> employed 0 (wrong: predicted 1)
    assert p.correct.tolist() == [True, False, True, False]
    assert list(p.groups["SEX"]) == [1, 2, 2, 1]
    pd.DataFrame({"id": [6], "employed": [0]}).to_parquet(tmp_path / "employment_MA_analysis_target.pq")
    with pytest.raises(DataError, match="id 5 has no entry"):
        read_acs_employment(tmp_path)
