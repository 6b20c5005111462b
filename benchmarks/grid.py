"""Experiment grid on a 2-worker LocalCluster against the same grid in one process.

Runs ``benchmarks/grids/active_paper.toml`` (the 100-run CIFAR-100 + SVHN least-accurate table of
Ji et al. 2021) twice, into fresh folders: in this process (the numba engine uses both cores through
its threads) and on a ``LocalCluster`` of 2 worker processes with one thread each (cluster start-up
and the workers' numba cache loads included). Prints both wall times, their ratio (target <= 1.2)
and whether every number is identical.

Run: ``python benchmarks/grid.py [--config FILE] [--workers 2]`` (needs the public sets; see README).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(Path(__file__).parent / "grids" / "active_paper.toml"))
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    from pbassess.active.engine import warm_up
    from pbassess.grid import load_grid, run_grid

    cells = load_grid(args.config)
    warm_up()  # compile (or load from the cache) once, so neither run pays the cold compilation
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        here = run_grid(cells, os.path.join(tmp, "process"), progress=False)
        t_process = time.perf_counter() - t0
        t0 = time.perf_counter()
        there = run_grid(cells, os.path.join(tmp, "cluster"), scheduler=f"local:{args.workers}", progress=False)
        t_cluster = time.perf_counter() - t0
    identical = all(np.array_equal(here[v].values, there[v].values, equal_nan=True)
                    for v in ("labels_to_mrr", "labels_to_mrr_low", "labels_to_mrr_high", "final_mrr", "mrr_curve"))
    print(f"grid: {len(cells)} cells from {args.config}")
    print(f"one process          : {t_process:7.1f} s")
    print(f"LocalCluster ({args.workers} x 1) : {t_cluster:7.1f} s (start-up included)")
    print(f"ratio cluster/process: {t_cluster / t_process:7.2f} (target <= 1.2)")
    print(f"identical numbers    : {identical}")
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
