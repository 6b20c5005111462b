"""Per-region coverage of the Bayesian estimate: one shared confidence-to-accuracy map vs region offsets.

A pool whose regions are miscalibrated by different amounts (default: the built-in
``digits-shift``, six noise levels as regions, its 500 unlabeled out-of-distribution items left
unlabeled); R random label draws of n items among the labeled ones; per region the coverage of
the truth (the region's accuracy) and the mean width of the 95% intervals of the classical
(Wald), PPI++ and Bayesian estimates, the last with one shared map
(``region_offsets=False``) and with an offset per region (:mod:`pbassess.estimation.regional`).
Monte Carlo sd of a coverage near 0.95 is 0.011 at R = 400.

Run: ``python benchmarks/estimation_regions.py [--runs 400] [--labels 300] [--data digits-shift --by environment]``
(``--data acs-employment --by year`` checks regions that share one map).

``--many-groups`` times :func:`pbassess.estimation.estimate` ``by=`` a column of many small groups
(issue 23): 899 items in 899 one-item groups with 100 labels (``attr_distinct.csv``: ``--method
bayes`` took 162 s, classical 14 s) and 20,000 items in 8,670 groups with 1,000 labels; wall
seconds per method, and the process's CPU seconds, which do not move with the machine's load (one run
each). Run it with
``PYTHONPATH`` pointing at an older tree to time the code before.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

METHODS = ("classical", "ppi", "bayes shared map", "bayes region offsets")


def region_intervals(data: str, by: str, labels: int, runs: int, seed: int):
    """Intervals (runs, regions, 2) of every method, the regions' names and truths (NaN without labels)."""
    from pbassess import load_data
    from pbassess.estimation.bayes import bayes_estimate, cell_counts
    from pbassess.estimation.frequentist import classical_interval, ppi_mean_interval
    from pbassess.estimation.items import region_codes

    pool = load_data(data)
    codes, names = region_codes(pool, by)
    known = np.asarray(pool.labeled, dtype=bool)
    conf = np.asarray(pool.confidence, dtype=float)
    correct = np.where(known, np.asarray(pool.correct, dtype=float), 0.0)
    full = np.array([known[codes == g].all() for g in range(len(names))])
    truth = np.array([correct[codes == g].mean() if full[g] else np.nan for g in range(len(names))])
    out = {m: np.full((runs, len(names), 2), np.nan) for m in METHODS}
    for r in range(runs):
        rng = np.random.default_rng([seed, labels, r])
        lab = np.zeros(conf.size, bool)
        lab[rng.choice(np.flatnonzero(known), labels, replace=False)] = True
        for g in np.flatnonzero(full):
            inside = codes == g
            out["classical"][r, g] = classical_interval(correct[lab & inside], 0.95)[1:]
            out["ppi"][r, g] = ppi_mean_interval(correct[lab & inside], conf[lab & inside], conf[inside & ~lab], 0.95)[1:3]
        cells = cell_counts(conf, codes, len(names), lab, correct)
        for m, flag in (("bayes shared map", False), ("bayes region offsets", True)):
            out[m][r] = bayes_estimate(cells, draws=250, seed=rng, region_offsets=flag)["ci"]
    return out, names, truth


def many_groups(seed: int = 0) -> None:
    """Seconds of estimate(by=...) over many small groups, per method."""
    import warnings

    from pbassess import Predictions
    from pbassess.estimation import estimate

    print("\n### estimate by a column of many small groups: wall seconds (CPU seconds of this process)\n")
    print("| items | groups | labels | classical | ppi | wald, wilson, ppi-wald | bayes |")
    print("|---|---|---|---|---|---|---|")
    for n_items, n_groups, n_labels in ((899, 899, 100), (20_000, 8_670, 1_000)):
        rng = np.random.default_rng(seed)
        conf = rng.uniform(0.5, 1.0, n_items)
        truth = np.where(rng.random(n_items) < conf, 0, 1)
        labels = np.full(n_items, -1)
        keep = rng.choice(n_items, n_labels, replace=False)
        labels[keep] = truth[keep]
        groups = np.array([f"g{g:05d}" for g in rng.permutation(np.arange(n_items) % n_groups)])
        pool = Predictions.from_top1(np.zeros(n_items, int), conf, labels, classes=["a", "b"], groups={"A": groups})
        cells = []
        for methods in ("classical", "ppi", "wald,wilson,ppi-wald", "bayes"):
            t0, c0 = time.perf_counter(), time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                estimate(pool, by="A", methods=methods, seed=seed)
            cells.append(f"{time.perf_counter() - t0:.2f} ({time.process_time() - c0:.2f})")
        print(f"| {n_items} | {n_groups} | {n_labels} | " + " | ".join(cells) + " |", flush=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default="digits-shift")
    p.add_argument("--by", default="environment")
    p.add_argument("--labels", type=int, default=300)
    p.add_argument("--runs", type=int, default=400)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--many-groups", action="store_true", help="time estimate over many small groups instead")
    args = p.parse_args()
    if args.many_groups:
        many_groups(args.seed)
        return 0
    os.environ.setdefault("PBASSESS_DATA_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"))
    t0 = time.perf_counter()
    ivs, names, truth = region_intervals(args.data, args.by, args.labels, args.runs, args.seed)
    print(f"\n### {args.data} by {args.by}: {args.labels} random labels, {args.runs} draws; coverage (mean width) "
          "of 95% intervals\n")
    print("| region | accuracy | " + " | ".join(METHODS) + " |")
    print("|---|---|" + "---|" * len(METHODS))
    for g, name in enumerate(names):
        if truth[g] != truth[g]:
            continue
        cells = []
        for m in METHODS:
            lo, hi = ivs[m][:, g, 0], ivs[m][:, g, 1]
            cells.append(f"{np.mean((lo <= truth[g]) & (truth[g] <= hi)):.3f} ({np.mean(hi - lo):.3f})")
        print(f"| {name} | {truth[g]:.3f} | " + " | ".join(cells) + " |", flush=True)
    print(f"\n(total {time.perf_counter() - t0:.0f} s wall)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
