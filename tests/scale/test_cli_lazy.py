"""`pbassess assess DIR` reads a folder of Parquet files lazily, like a file."""

from __future__ import annotations

import json

import numpy as np

from pbassess.cli import main
from pbassess.data.synthetic import write_synthetic_pool


def test_assess_a_parquet_folder(tmp_path, capsys):
    pool = write_synthetic_pool(tmp_path / "pool", 20_000, 4, labeled_fraction=0.25, rows_per_file=6000,
                                row_group_size=3000, seed=7)
    code = main(["assess", str(tmp_path / "pool"), "--json", "--seed", "1"])
    out = json.loads(capsys.readouterr().out)
    assert code in (0, None)
    np.testing.assert_array_equal(out["n"], pool.counts["n"])
    np.testing.assert_array_equal(out["correct"], pool.counts["correct"])
    # the 95 % intervals cover the known per-class accuracy (4 classes; seeded, so not flaky)
    lo, hi = np.array(out["hdi"]).T
    assert np.all((lo <= pool.accuracy) & (pool.accuracy <= hi))
