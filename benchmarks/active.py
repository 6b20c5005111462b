"""Benchmark of the compiled active-assessment engine (Thompson sampling, least-accurate class).

Cases (targets from the project brief, 2 cores):

1. the real CIFAR-100 ResNet-110 pool (N = 10,000, K = 100): 100 runs x the full pool, <= 0.5 s;
2. a synthetic ImageNet-size pool in top-1 form (N = 50,000, K = 1,000): 100 runs x the full
   pool, <= 25 s and < 2 GiB.

Each case also runs a plain per-step NumPy loop of the same algorithm (all runs vectorised,
one ``Generator.beta`` call over (runs, K) per label, argmin, bookkeeping, MRR every L labels)
and prints the ratio. For the ImageNet case the NumPy loop is timed on ``--numpy-steps``
labels and extrapolated linearly (its cost per label is constant: it redraws all K arms),
unless ``--full-numpy``. Reported: wall seconds, CPU seconds (both threads), compile (or
cache-load) seconds, the engine's Beta-draw throughput expressed as "naive-equivalent" draws
per second (R x labels x active arms / wall time), the raw speed of one exact Beta draw on
this machine and the lower bound it implies for any algorithm that draws every arm each label,
and the peak resident memory.

Run: ``python benchmarks/active.py [--runs 100] [--numpy-steps 2000] [--full-numpy] [--cold]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time

import numpy as np


def _args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=100)
    p.add_argument("--numpy-steps", type=int, default=2000, help="labels of the ImageNet NumPy loop (extrapolated)")
    p.add_argument("--full-numpy", action="store_true", help="run the ImageNet NumPy loop on the whole pool")
    p.add_argument("--cold", action="store_true", help="compile into a fresh cache (measures the real compile time)")
    p.add_argument("--skip-imagenet", action="store_true")
    return p.parse_args()


def numpy_ts(inputs, runs: int, seed: int, steps: int | None = None, log_every: int = 100) -> tuple[float, np.ndarray]:
    """Per-step NumPy Thompson sampling (least-accurate, m = 1), all runs vectorised; returns (seconds, mrr)."""
    rng = np.random.default_rng(seed)
    start = inputs.arm_start
    counts = np.diff(start)
    K = counts.size
    n = int(start[-1])
    steps = n if steps is None else min(steps, n)
    # per-run shuffled outcome lists, as offsets into the arm-sorted item order
    order = np.empty((runs, n), dtype=np.int64)
    for r in range(runs):
        for k in range(K):
            order[r, start[k]:start[k + 1]] = start[k] + rng.permutation(counts[k])
    success = inputs.item_success
    a = np.repeat(inputs.prior_a[:, 0][None, :], runs, axis=0)
    b = np.repeat(inputs.prior_b[:, 0][None, :], runs, axis=0)
    taken = np.zeros((runs, K), dtype=np.int64)
    rows = np.arange(runs)
    top = np.flatnonzero(inputs.true_top)[0]
    mrr = []
    t0 = time.perf_counter()
    for step in range(steps):
        theta = rng.beta(a, b)
        theta[taken >= counts] = np.inf
        arm = theta.argmin(axis=1)
        item = order[rows, start[arm] + taken[rows, arm]]
        ok = success[item]
        a[rows, arm] += ok
        b[rows, arm] += ~ok
        taken[rows, arm] += 1
        if (step + 1) % log_every == 0:
            mean = a / (a + b)
            ahead = (mean < mean[:, [top]]).sum(axis=1) + ((mean == mean[:, [top]]) & (np.arange(K) < top)).sum(axis=1)
            mrr.append((1.0 / (1 + ahead)).mean())
    return time.perf_counter() - t0, np.array(mrr)


def synthetic_imagenet(seed: int = 0):
    """A top-1 pool of ImageNet size: 1,000 classes x 50 items, class accuracies ~ Beta(7.6, 2.4)."""
    from pbassess import Predictions

    rng = np.random.default_rng(seed)
    K, per = 1000, 50
    acc = rng.beta(7.6, 2.4, K)
    pred = np.repeat(np.arange(K), per)
    correct = rng.random(pred.size) < acc[pred]
    other = (pred + 1 + rng.integers(0, K - 1, pred.size)) % K
    labels = np.where(correct, pred, other)
    conf = np.clip(acc[pred] + rng.normal(0, 0.1, pred.size), 0.01, 1.0)
    return Predictions.from_top1(pred, conf, labels, classes=[str(k) for k in range(K)], name="synthetic-imagenet")


def raw_beta_ns(a: float = 60.0, b: float = 20.0, n: int = 2_000_000) -> float:
    """Nanoseconds per exact Beta draw of the engine's inlined sampler (one thread)."""
    import numba as nb

    from pbassess.active import rng as R
    from pbassess.active.engine import seed_states

    @nb.njit
    def loop(n, a, b, state):
        spare = np.zeros(2)
        acc = 0.0
        for _ in range(n):
            acc += R.draw_beta(state, spare, a, b)
        return acc

    state = seed_states(0, 1)[0]
    loop(10, a, b, state)
    t0 = time.perf_counter()
    loop(n, a, b, state)
    return (time.perf_counter() - t0) / n * 1e9


def case(name, pred, runs, numpy_steps, full_numpy, beta_ns):
    from pbassess.active.engine import run_engine
    from pbassess.active.targets import build_inputs

    inputs = build_inputs(pred, "least-accurate", prior="uniform", pseudocount=2.0)
    n, K = inputs.n_items, inputs.n_arms
    cpu0 = time.process_time()
    out = run_engine(inputs, "ts", runs=runs, seed=0)
    cpu = time.process_time() - cpu0
    wall = out.seconds
    steps = None if full_numpy or numpy_steps >= n else numpy_steps
    np_sec, np_mrr = numpy_ts(inputs, runs, seed=0, steps=steps)
    np_total = np_sec * (n / (steps or n))
    # naive-equivalent draws: a plain TS draws every arm (K) at every label of every run
    naive_draws = float(runs) * n * K
    lower = naive_draws * beta_ns * 1e-9 / 2  # 2 cores drawing every arm every label
    ts_mrr = out.mrr.mean(axis=0)
    frac = (np.argmax(ts_mrr >= 0.99) + 1) * 100 / n if ts_mrr.max() >= 0.99 else float("nan")
    print(f"\n== {name}: N = {n:,}, K = {K:,}, {runs} runs x full pool of TS")
    print(f"engine      : {wall:8.2f} s wall, {cpu:8.2f} s CPU (both threads)")
    print(f"numpy loop  : {np_total:8.2f} s{f' (extrapolated from {steps} labels)' if steps else ''}"
          f"   ratio numpy/engine = {np_total / wall:6.1f}x")
    print(f"naive-equivalent Beta draws per second: {naive_draws / wall:.3g} (R x N x K / wall)")
    print(f"raw exact Beta draw: {beta_ns:.1f} ns/core -> drawing every arm every label needs >= {lower:.1f} s "
          f"on 2 cores ({lower / wall:.1f}x the engine)")
    print(f"TS labels to MRR 0.99: {frac:.1%} of the pool; numpy loop final MRR {np_mrr[-1] if np_mrr.size else float('nan'):.3f}")
    return wall


def main() -> int:
    args = _args()
    if args.cold:
        os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="pbassess-numba-")
    os.environ.setdefault("PBASSESS_DATA_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"))
    import numba

    from pbassess import load_data
    from pbassess.active.targets import warm_up

    t0 = time.perf_counter()
    compile_s = warm_up()
    print(f"numba {numba.__version__}, {numba.get_num_threads()} threads; compile {'(cold)' if args.cold else 'or cache load'}: "
          f"{compile_s:.2f} s (import + first call {time.perf_counter() - t0:.2f} s)")
    beta_ns = raw_beta_ns()
    try:
        cifar = load_data("cifar100-resnet110")
    except Exception as exc:  # noqa: BLE001 - the mirror may be absent
        print(f"CIFAR-100 not available ({exc}); skipping", file=sys.stderr)
    else:
        wall = case("CIFAR-100 ResNet-110 (real)", cifar, args.runs, 10**9, True, beta_ns)
        print(f"target <= 0.5 s: {'met' if wall <= 0.5 else 'NOT met'}")
    if not args.skip_imagenet:
        wall = case("synthetic ImageNet-size pool", synthetic_imagenet(), args.runs, args.numpy_steps,
                    args.full_numpy, beta_ns)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
        print(f"target <= 25 s: {'met' if wall <= 25 else 'NOT met'}; peak resident memory of the whole process "
              f"{peak:.2f} GiB (target < 2 GiB: {'met' if peak < 2 else 'NOT met'})")
    print(f"load average now: {os.getloadavg()[0]:.1f} (other processes share these 2 cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
