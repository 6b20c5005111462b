"""Experiment grids on a 2-worker LocalCluster against the same grids in one process.

By default runs ``benchmarks/grids/active_paper.toml`` (the 100-run CIFAR-100 + SVHN least-accurate
table of Ji et al. 2021) twice, into fresh folders: in this process (the numba engine uses both
cores through its threads) and on a ``LocalCluster`` of 2 worker processes with one thread each
(cluster start-up and the workers' numba cache loads included). Prints both wall times, their
ratio (target <= 1.2) and whether every number is identical (every merged variable but the
cells' own timings).

``--small`` instead runs a small estimation grid (``grids/estimation_smoke.toml``, built-in data)
and a small surface grid with NUTS fits (``grids/surface_small.toml``, synthetic pool: nutpie
compiles the models in every worker process); ``--config`` (repeatable) runs any grid files.

Run: ``python benchmarks/grid.py [--small | --config FILE ...] [--workers 2]`` (the paper grid needs
the public sets; see README).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

GRIDS = Path(__file__).parent / "grids"


def compare(config: str, workers: int) -> bool:
    """Run one grid in process and on a LocalCluster; print the times; True when the numbers are identical."""
    from pbassess.grid import load_grid, run_grid

    cells = load_grid(config)
    if cells[0].kind == "active":
        from pbassess.active.targets import warm_up

        warm_up()  # compile (or load from the cache) once, so neither run pays the cold compilation
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        here = run_grid(cells, os.path.join(tmp, "process"), progress=False)
        t_process = time.perf_counter() - t0
        t0 = time.perf_counter()
        there = run_grid(cells, os.path.join(tmp, "cluster"), scheduler=f"local:{workers}", progress=False)
        t_cluster = time.perf_counter() - t0
    identical = here.drop_vars("seconds").identical(there.drop_vars("seconds"))
    print(f"grid: {len(cells)} {cells[0].kind} cells from {config}")
    print(f"one process          : {t_process:7.1f} s")
    print(f"LocalCluster ({workers} x 1) : {t_cluster:7.1f} s (start-up included)")
    print(f"ratio cluster/process: {t_cluster / t_process:7.2f} (target <= 1.2)")
    print(f"identical numbers    : {identical}", flush=True)
    return identical


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", action="append", default=None, help="a grid file (repeatable)")
    parser.add_argument("--small", action="store_true",
                        help="the small estimation and surface grids (grids/estimation_smoke.toml, surface_small.toml)")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    configs = args.config or ([str(GRIDS / "estimation_smoke.toml"), str(GRIDS / "surface_small.toml")] if args.small
                              else [str(GRIDS / "active_paper.toml")])
    ok = [compare(config, args.workers) for config in configs]
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
