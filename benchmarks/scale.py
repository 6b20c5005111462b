"""Out-of-core assessment: 10^7 / 10^8 predictions from Parquet against the in-memory floor.

For each size a synthetic top-1 pool (K = 1,000 classes, partial labels) is written to a
temporary folder (generation is not timed; the folder is removed afterwards). Then, each in a
fresh process so that peak RSS is its own:

* pbassess: ``read_lazy_predictions(folder)``, one ``count_tables`` pass giving the accuracy
  (per predicted class), calibration (15 equal-width bins) and cost (predicted x true) counts,
  and the conjugate posteriors (Beta per class and per bin, the expected 0-1 cost per
  predicted class from its Dirichlet row) with 4,000 draws;
* the floor: pyarrow reads the same three columns into memory and ``np.bincount`` counts the
  same tables (plain float sums), no posteriors.

Both are timed after one untimed read that warms the page cache. Printed: wall seconds, CPU
seconds (user + system: less inflated than wall time on a shared machine), peak RSS, the ratio
pbassess / floor, and the 10^9 extrapolation from the measured per-row cost.
Targets (issue 12): 10^8 rows under 20 s, peak RSS under 2 GiB, within 3x of the floor.

Run: ``.venv/bin/python benchmarks/scale.py --rows 10000000 [100000000]`` (2 cores). The
machine may be shared: the load average at start and end is printed next to the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

K = 1000
BINS = 15
DRAWS = 4000
COLUMNS = ["predicted", "confidence", "label"]


def _cpu_seconds() -> float:
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


def run_pbassess(folder: str) -> dict:
    import dask.array  # noqa: F401  (imports and sampler compilation are not timed)
    import numpy as np
    import pyarrow.parquet  # noqa: F401
    import xarray  # noqa: F401

    from pbassess.counting import count_tables
    from pbassess.data.lazy import read_lazy_predictions
    from pbassess.stats.cost import expected_cost_posterior_draws, zero_one_cost
    from pbassess.stats.sampling import beta_draws

    beta_draws([1.0], [1.0], 1, seed=0)
    expected_cost_posterior_draws(np.ones((2, 2)), zero_one_cost(2), 1, seed=0)
    cpu0, start = _cpu_seconds(), time.perf_counter()
    preds = read_lazy_predictions(folder)
    opened = time.perf_counter()
    tables = count_tables(preds, {"accuracy": "predicted", "calibration": {"by": "bin", "bin_edges": BINS},
                                  "cost": ("predicted", "true")})
    counted = time.perf_counter()
    acc, cal, cost = tables["accuracy"], tables["calibration"], tables["cost"]
    a_post = beta_draws(1 + acc["correct"].values, 1 + acc["n"].values - acc["correct"].values, DRAWS, seed=1)
    c_post = beta_draws(1 + cal["correct"].values, 1 + cal["n"].values - cal["correct"].values, DRAWS, seed=2)
    alpha = cost["n"].values + 2.0 / K
    cost_draws = expected_cost_posterior_draws(alpha, zero_one_cost(K), DRAWS, seed=3)
    done = time.perf_counter()
    return {"seconds": done - start, "open": opened - start, "count": counted - opened, "posterior": done - counted,
            "cpu": _cpu_seconds() - cpu0,
            "rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
            "n_labeled": int(acc["n"].sum()), "accuracy": float(acc["correct"].sum() / acc["n"].sum()),
            "mean_cost_draw": float(np.mean(cost_draws)), "shapes": [a_post.shape, c_post.shape]}


def run_floor(folder: str) -> dict:
    import numpy as np
    import pyarrow.parquet as pq

    cpu0, start = _cpu_seconds(), time.perf_counter()
    files = sorted(Path(folder).glob("*.parquet"))
    tables = [pq.read_table(f, columns=COLUMNS) for f in files]
    pred = np.concatenate([t["predicted"].to_numpy() for t in tables])
    conf = np.concatenate([t["confidence"].to_numpy() for t in tables])
    lab = np.concatenate([t["label"].fill_null(-1).to_numpy() for t in tables])
    del tables
    read = time.perf_counter()
    m = lab >= 0
    pl, yl, cl = pred[m], lab[m], conf[m]
    hit = pl == yl
    bins = np.minimum((conf * BINS).astype(np.int64), BINS - 1)
    out = [np.bincount(pred, minlength=K), np.bincount(pred, weights=conf, minlength=K),
           np.bincount(pl, minlength=K), np.bincount(pl, weights=hit, minlength=K),
           np.bincount(pl, weights=cl, minlength=K),
           np.bincount(bins, minlength=BINS), np.bincount(bins[m], weights=hit, minlength=BINS),
           np.bincount(bins[m], weights=cl, minlength=BINS), np.bincount(pl * K + yl, minlength=K * K)]
    done = time.perf_counter()
    return {"seconds": done - start, "read": read - start, "count": done - read, "cpu": _cpu_seconds() - cpu0,
            "rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
            "accuracy": float(out[3].sum() / out[2].sum())}


def _child(kind: str, folder: str) -> dict:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    res = subprocess.run([sys.executable, __file__, "--child", kind, "--folder", folder], capture_output=True,
                         text=True, env=env, check=False)
    if res.returncode:
        raise SystemExit(f"{kind} run failed:\n{res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def _warm(folder: str) -> None:
    import pyarrow.parquet as pq

    for f in sorted(Path(folder).glob("*.parquet")):
        pq.read_table(f, columns=COLUMNS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000_000])
    parser.add_argument("--labeled", type=float, default=0.1, help="share of items with a label")
    parser.add_argument("--child", choices=["pbassess", "floor"], help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps((run_pbassess if args.child == "pbassess" else run_floor)(args.folder), default=str))
        return
    from pbassess.data.synthetic import write_synthetic_pool

    per_row = []
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (shared machine: contention "
          "inflates both pbassess and the floor)")
    for n in args.rows:
        with tempfile.TemporaryDirectory(prefix="pbassess-scale-") as tmp:
            t0 = time.perf_counter()
            pool = write_synthetic_pool(Path(tmp) / "pool", n, K, labeled_fraction=args.labeled, seed=0)
            gen = time.perf_counter() - t0
            size = sum(f.stat().st_size for f in pool.path.glob("*.parquet")) / 2**30
            _warm(str(pool.path))
            ours = _child("pbassess", str(pool.path))
            floor = _child("floor", str(pool.path))
        ratio = ours["seconds"] / floor["seconds"]
        per_row.append((n, ours["seconds"] / n))
        cpu_per_row = ours["cpu"] / n
        print(f"\nN = {n:.0e} rows (K = {K}, {args.labeled:.0%} labeled, {size:.2f} GiB Parquet; generated in {gen:.0f} s,"
              " not counted)")
        print(f"  pbassess: {ours['seconds']:6.2f} s  (open {ours['open']:.2f}, one counting pass {ours['count']:.2f}, "
              f"posteriors {ours['posterior']:.2f})  CPU {ours['cpu']:.1f} s  peak RSS {ours['rss_gib']:.2f} GiB")
        print(f"  floor   : {floor['seconds']:6.2f} s  (read {floor['read']:.2f}, bincount {floor['count']:.2f})"
              f"  CPU {floor['cpu']:.1f} s  peak RSS {floor['rss_gib']:.2f} GiB")
        print(f"  ratio pbassess / floor: {ratio:.2f}x wall, {ours['cpu'] / floor['cpu']:.2f}x CPU   "
              f"accuracy {ours['accuracy']:.4f} vs floor {floor['accuracy']:.4f}")
        print(f"  estimate on 2 idle cores (CPU time / 2 threads): pbassess {ours['cpu'] / 2:.1f} s; "
              f"the single-threaded floor {floor['cpu']:.1f} s")
        target = "" if n != 10**8 else (f"   targets: <20 s {'met' if ours['seconds'] < 20 else 'MISSED'}, "
                                        f"<2 GiB {'met' if ours['rss_gib'] < 2 else 'MISSED'}, "
                                        f"<=3x {'met' if ratio <= 3 else 'MISSED'}")
        if target:
            print(target)
    n_big, cost = per_row[-1]
    how = f"the per-row cost measured at N = {n_big:.0e}, {cost * 1e9:.0f} ns/row (fixed costs included)"
    if len(per_row) >= 2:
        (n1, c1), (n2, c2) = per_row[-2], per_row[-1]
        slope = (c2 * n2 - c1 * n1) / (n2 - n1)
        print(f"marginal cost between N = {n1:.0e} and {n2:.0e}: {slope * 1e9:.0f} ns/row")
    fixed, slope = 0.0, cost
    print(f"\n10^9 rows extrapolated from {how}: {fixed + slope * 1e9:.0f} s wall on this shared machine; "
          f"from the CPU time, {cpu_per_row * 1e9:.0f} CPU s, i.e. {cpu_per_row * 1e9 / 2:.0f}-{cpu_per_row * 1e9:.0f} s "
          "on 2 idle cores (memory stays at a few chunks)")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
