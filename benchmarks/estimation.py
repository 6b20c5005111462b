"""Estimating a classifier's accuracy from n labels and a pool of predictions, on the real data.

For every pool (ACS employment per year, SVHN, CIFAR-100, the fairness sets with their LR
classifier) and n in (100, 200, 500, 1000) (only n <= N / 3), R random label draws; per draw:

* classical: n items drawn uniformly, the exact Clopper-Pearson interval of their mean correctness;
* PPI++: the same n labels plus the confidences of the other N - n items, power-tuned lambda,
  boundary-aware (the hull with Clopper-Pearson with fewer than 10 labeled errors);
* Bayes: the same labels, cells = 10 equal-mass confidence bins, confidence-informed prior
  with offset / slope / strength learned from the labels (EB mode + Laplace, exact Beta
  posteriors, finite-pool posterior predictive), 95% equal-tailed credible interval;
* active: n labels in expectation chosen by the uncertainty rule (sqrt(c (1 - c)) mixed 80/20
  with uniform, 10 adaptive batches) and the inverse-probability-weighted PPI estimator with its
  skewness-corrected (Johnson) interval.

The per-pool computation is :func:`pbassess.estimation.experiment.pool_intervals` (the Bayesian fits
of all draws batched, :func:`pbassess.estimation.bayes.bayes_estimate_batch`). The full run
(R = 1,000, 36 cells) took 881 s on 2 cores shared with other jobs.

The truth is the pool's accuracy (every item is labeled). Printed: coverage of the nominal 95%
intervals (Monte Carlo sd about 0.007 at R = 1,000, 0.022 at R = 100), the mean width, and the
effective labels = n (mean classical width / mean width)^2 - the labels the classical interval
needs for the same width (CLT scaling) - with the gain over n.

Run: ``python benchmarks/estimation.py [--runs 1000] [--quick] [--only cifar100,svhn,...]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

SIZES = (100, 200, 500, 1000)
METHODS = ("classical", "ppi", "bayes", "active")
STATS = ("width", "coverage", "effective_labels")


def pools(only: set[str] | None) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(name, confidence, correct) of every available real pool."""
    from pbassess.estimation.experiment import benchmark_pools, load_pool

    specs = benchmark_pools(only, on_skip=lambda name, exc: print(f"skip {name}: {exc}", file=sys.stderr))
    return [(spec.name, *load_pool(spec)) for spec in specs]


def run_pool(conf: np.ndarray, correct: np.ndarray, n: int, runs: int, seed: int) -> dict[str, np.ndarray]:
    """Intervals (runs, 2) of every method for R label draws of size n.

    The computation lives in ``pbassess.estimation.experiment.pool_intervals`` (dask workers of
    ``--scheduler`` import it from there): change the methods there, once, for both paths.
    """
    from pbassess.estimation.experiment import pool_intervals

    return pool_intervals(conf, correct, n, runs, seed, METHODS)


def print_row(name: str, size: int, truth: float, n: int, stats: dict[str, dict[str, float]]) -> None:
    """One table row from width / coverage / effective_labels per method (the same for both paths)."""
    width, cover, eff = (stats[s] for s in STATS)
    cells = " | ".join(f"{width[m]:.4f} ({cover[m]:.3f})" for m in METHODS)
    gains = " / ".join(f"{eff[m]:.0f} ({eff[m] / n:.1f}x)" for m in ("ppi", "bayes", "active"))
    print(f"| {name} | {size} | {truth:.4f} | {n} | {cells} | {gains} |", flush=True)


def grid_cells(only: set[str] | None, runs: int, seed: int) -> list:
    """The table's (pool, n) cells as estimation cells of pbassess.grid, in table order."""
    from pbassess.estimation.experiment import benchmark_pools, load_pool
    from pbassess.grid import EstimationCell

    specs = benchmark_pools(only, on_skip=lambda name, exc: print(f"skip {name}: {exc}", file=sys.stderr))
    return [EstimationCell(s.dataset, labels=n, model=s.model, subset=s.subset, methods=METHODS, runs=runs, seed=seed)
            for s in specs for n in SIZES if n <= load_pool(s)[0].size / 3]


def run_on_grid(only: set[str] | None, runs: int, seed: int, scheduler: str, out: str | None) -> None:
    """Run the cells through pbassess.grid.run_grid (e.g. on a LocalCluster) and print the merged table."""
    import tempfile

    from pbassess.grid import run_grid

    cells = grid_cells(only, runs, seed)
    if not cells:
        return
    with tempfile.TemporaryDirectory() as tmp:
        merged = run_grid(cells, out or tmp, scheduler=scheduler, progress=False)
    for i in range(merged.sizes["cell"]):
        row = merged.isel(cell=i)
        stats = {s: {str(m): float(v) for m, v in zip(merged["method"].values, row[s].values, strict=True)}
                 for s in STATS}
        print_row(str(row["pool"].values), int(row["n_items"].values), float(row["truth"].values),
                  int(row["labels"].values), stats)
        print(f"  {row['pool'].values} n={int(row['labels'].values)}: {float(row['seconds'].values):.0f} s",
              file=sys.stderr)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=1000, help="label draws per pool and n")
    p.add_argument("--quick", action="store_true", help="100 draws (coverage sd about 0.02)")
    p.add_argument("--only", default=None, help="comma-separated substrings of pool names")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run the (pool, n) cells through pbassess.grid.run_grid: 'local:N' (a LocalCluster of N "
                        "worker processes) or a scheduler address (default: in this process, row by row)")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="with --scheduler: the grid's folder (finished cells are skipped; default: a temporary one)")
    args = p.parse_args()
    runs = 100 if args.quick else args.runs
    from pbassess.estimation.experiment import interval_summary

    os.environ.setdefault("PBASSESS_DATA_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"))
    only = None if args.only is None else set(args.only.split(","))
    print(f"\n### Accuracy from n labels: coverage of nominal 95% intervals, mean width, effective labels "
          f"({runs} label draws per cell)\n")
    print("| data | N | accuracy | n | classical width (cov.) | PPI++ width (cov.) | Bayes width (cov.) "
          "| active width (cov.) | effective labels PPI++ / Bayes / active |")
    print("|---|---|---|---|---|---|---|---|---|")
    t_all = time.perf_counter()
    if args.scheduler:
        run_on_grid(only, runs, args.seed, args.scheduler, args.out)
        print(f"\n(total {time.perf_counter() - t_all:.0f} s wall)")
        return 0
    for name, conf, correct in pools(only):
        truth = correct.mean()
        for n in SIZES:
            if n > conf.size / 3:
                continue
            t0 = time.perf_counter()
            ivs = run_pool(conf, correct, n, runs, args.seed)
            summary = interval_summary(ivs, truth, n)
            print_row(name, conf.size, truth, n, {s: {m: summary[m][s] for m in METHODS} for s in STATS})
            print(f"  {name} n={n}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    print(f"\n(total {time.perf_counter() - t_all:.0f} s wall)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
