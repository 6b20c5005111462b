"""Estimating a classifier's accuracy from n labels and a pool of predictions, on the real data.

For every pool (ACS employment per year, SVHN, CIFAR-100, the fairness sets with their LR
classifier) and n in (100, 200, 500, 1000) (only n <= N / 3), R random label draws; per draw:

* classical: n items drawn uniformly, Wald (CLT) interval of their mean correctness;
* PPI++: the same n labels plus the confidences of the other N - n items, power-tuned lambda;
* Bayes: the same labels, cells = 10 equal-mass confidence bins, confidence-informed prior
  with offset / slope / strength learned from the labels (EB mode + Laplace, exact Beta
  posteriors, finite-pool posterior predictive), 95% HDI;
* active: n labels in expectation chosen by the uncertainty rule (sqrt(c (1 - c)) mixed 80/20
  with uniform, 10 adaptive batches) and the inverse-probability-weighted PPI estimator.

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


def pools(only: set[str] | None) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(name, confidence, correct) of every available real pool."""
    from pbassess import load_data
    from pbassess.errors import PbassessError

    out = []

    def add(name, preds):
        if only is None or any(o in name for o in only):
            out.append((name, np.asarray(preds.confidence, dtype=float), np.asarray(preds.correct, dtype=bool)))

    for name in ("cifar100-resnet110", "svhn-resnet"):
        try:
            add(name, load_data(name))
        except PbassessError as exc:
            print(f"skip {name}: {exc}", file=sys.stderr)
    try:
        acs = load_data("acs-employment")
        years = acs.group("year")
        for year in np.unique(years):
            if only is None or any(o in f"acs-{year}" for o in only):
                add(f"acs-employment {year}", acs.subset(years == year))
    except PbassessError as exc:
        print(f"skip acs-employment: {exc}", file=sys.stderr)
    for name in ("adult-sex", "bank-age", "compas-race", "german-sex"):
        try:
            add(f"{name} (LR)", load_data(name, model="score_LR"))
        except PbassessError as exc:
            print(f"skip {name}: {exc}", file=sys.stderr)
    return out


def run_pool(conf: np.ndarray, correct: np.ndarray, n: int, runs: int, seed: int) -> dict[str, np.ndarray]:
    """Intervals (runs, 2) of every method for R label draws of size n."""
    from pbassess.estimation.active import active_sample, ipw_mean_interval
    from pbassess.estimation.bayes import CellCounts, bayes_estimate, cell_counts
    from pbassess.estimation.frequentist import classical_interval, ppi_mean_interval

    big_n = conf.size
    y = correct.astype(float)
    base = cell_counts(conf, np.zeros(big_n, dtype=np.int64), 1, np.zeros(big_n, bool), correct, bins=10)
    # the cell of every item (same equal-mass bins as cell_counts)
    edges = np.unique(np.quantile(conf, np.linspace(0, 1, 11)[1:-1]))
    cell_of_bin = np.full(edges.size + 1, -1)
    cell_of_bin[np.unique(np.searchsorted(edges, conf, side="right"))] = np.arange(base.n_pool.size)
    item_cell = cell_of_bin[np.searchsorted(edges, conf, side="right")]
    out = {m: np.full((runs, 2), np.nan) for m in METHODS}
    for r in range(runs):
        rng = np.random.default_rng([seed, n, r])
        idx = rng.choice(big_n, n, replace=False)
        lab = np.zeros(big_n, bool)
        lab[idx] = True
        out["classical"][r] = classical_interval(y[idx], 0.95)[1:]
        out["ppi"][r] = ppi_mean_interval(y[idx], conf[idx], conf[~lab], 0.95)[1:3]
        cells = CellCounts(region=base.region, n_pool=base.n_pool,
                           n=np.bincount(item_cell[idx], minlength=base.n_pool.size),
                           correct=np.bincount(item_cell[idx], weights=y[idx], minlength=base.n_pool.size).astype(int),
                           mean_conf=base.mean_conf, n_regions=1)
        out["bayes"][r] = bayes_estimate(cells, draws=1000, seed=rng)["ci"][0]
        chosen, pi = active_sample(conf, n, seed=rng)
        out["active"][r] = ipw_mean_interval(y, conf, pi, chosen, 0.95)[1:3]
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=1000, help="label draws per pool and n")
    p.add_argument("--quick", action="store_true", help="100 draws (coverage sd about 0.02)")
    p.add_argument("--only", default=None, help="comma-separated substrings of pool names")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    runs = 100 if args.quick else args.runs
    os.environ.setdefault("PBASSESS_DATA_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"))
    only = None if args.only is None else set(args.only.split(","))
    print(f"\n### Accuracy from n labels: coverage of nominal 95% intervals, mean width, effective labels "
          f"({runs} label draws per cell)\n")
    print("| data | N | accuracy | n | classical width (cov.) | PPI++ width (cov.) | Bayes width (cov.) "
          "| active width (cov.) | effective labels PPI++ / Bayes / active |")
    print("|---|---|---|---|---|---|---|---|---|")
    t_all = time.perf_counter()
    for name, conf, correct in pools(only):
        truth = correct.mean()
        for n in SIZES:
            if n > conf.size / 3:
                continue
            t0 = time.perf_counter()
            ivs = run_pool(conf, correct, n, runs, args.seed)
            width = {m: float(np.nanmean(ivs[m][:, 1] - ivs[m][:, 0])) for m in METHODS}
            cover = {m: float(np.nanmean((ivs[m][:, 0] <= truth) & (truth <= ivs[m][:, 1]))) for m in METHODS}
            eff = {m: n * (width["classical"] / width[m]) ** 2 for m in METHODS}
            cells = " | ".join(f"{width[m]:.4f} ({cover[m]:.3f})" for m in METHODS)
            gains = " / ".join(f"{eff[m]:.0f} ({eff[m] / n:.1f}x)" for m in ("ppi", "bayes", "active"))
            print(f"| {name} | {conf.size} | {truth:.4f} | {n} | {cells} | {gains} |", flush=True)
            print(f"  {name} n={n}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    print(f"\n(total {time.perf_counter() - t_all:.0f} s wall)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
