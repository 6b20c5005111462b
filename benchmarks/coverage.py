"""Coverage and width of every interval pbassess reports for a proportion, at the boundary.

Every interval of :func:`pbassess.estimate` for an accuracy (and the active estimator's) is run
on R uniform label draws (without replacement) from a pool whose accuracy is known, and its
coverage of the pool's accuracy and mean width are printed:

* ``wald``: the classical Wald interval (``ppi_py.classical_mean_ci``; ``classical`` before 0.x);
* ``wilson``, ``agresti-coull``: score-type intervals of the labels;
* ``classical``: the default classical interval (Clopper-Pearson for 0/1 values);
* ``ppi-wald``: PPI++ with its CLT interval (``ppi_py.ppi_mean_ci``; ``ppi`` before 0.x);
* ``ppi``: the default, boundary-aware PPI++ (the hull with Clopper-Pearson when fewer than 10
  labeled errors or successes, :mod:`pbassess.estimation.frequentist`);
* ``bayes``: the conjugate Bayesian equal-tailed interval (10 equal-mass confidence bins, one region;
  :func:`pbassess.estimation.bayes.bayes_estimate_batch`, all draws batched);
* ``active``: n labels in expectation by the uncertainty rule, the IPW PPI estimator with its
  skewness-corrected interval (:func:`pbassess.estimation.active.ipw_mean_interval`).

Synthetic grid: true accuracy {0.5, 0.9, 0.99, 0.995, 1.0} x labels {20, 50, 200, 1000}; the
pool has N = 10,000 items with confidences ~ Beta(30 m, 30 (1 - m)), m = min(accuracy, 0.998)
(clipped to [0.5, 0.9999]), and exactly round((1 - accuracy) N) errors, put on items with
probability proportional to 1 - confidence (so the confidence is informative, as for a real
classifier). Real cases: ACS employment (Massachusetts) subgroups by age band and race
(``RAC1P``), each its own pool, labels n <= N / 3.

The coverage of a 90% interval has Monte Carlo sd sqrt(0.9 * 0.1 / R) = 0.0067 at R = 2,000
(0.021 at ``--quick``'s R = 200). A cell is flagged ``*`` when coverage < nominal - 0.02 and
``0w`` counts zero-width intervals (there must be none); ``n/a`` is the share of draws without
an interval (NaN bounds: the method says it cannot give one).

Labels to target: the interval of :func:`pbassess.active.evaluation.labels_to_mrr_interval` (the
first log point where the expected MRR curve reaches 0.99) on a process whose expected curve is
exact (a run's MRR is 1 from a random step on, 1/2 before; P(not yet at step t) = 0.3 exp(-t / 4)),
batches of 50 and 400 runs; coverage of the true crossing over ``--runs`` batches. (The same check
through the simulation engine, truth from 20,000 runs: ``tests/active/test_labels_to_target.py``.)

The printout ends with one verdict line: the minimum coverage of each method over every cell, the
cells below nominal - 0.02 (none is the goal) and the number of zero-width intervals (must be 0).

Run: ``python benchmarks/coverage.py [--runs 2000] [--quick] [--ci-prob 0.9] [--no-acs | --no-synthetic]
[--labels-to-target-only]``.
"""

from __future__ import annotations

if __name__ != "__main__":
    # Run from this folder, any script sees this file as the module ``coverage`` (its folder is first on
    # sys.path), and numba probes ``import coverage`` at import time and then uses the real package's
    # ``coverage.types``. Imported under that name, this script steps aside as an absent package would.
    raise ImportError("benchmarks/coverage.py is a script, not the coverage package")

import argparse
import os
import sys
import time
import warnings

import numpy as np

ACCURACIES = (0.5, 0.9, 0.99, 0.995, 1.0)
LABELS = (20, 50, 200, 1000)
METHODS = ("wald", "wilson", "agresti-coull", "classical", "ppi-wald", "ppi", "bayes", "active")
POOL_SIZE = 10_000


def synthetic_pool(accuracy: float, seed: int, size: int = POOL_SIZE) -> tuple[np.ndarray, np.ndarray]:
    """(confidence, correct) of a pool with exactly round(accuracy * size) correct items."""
    rng = np.random.default_rng(seed)
    m = min(accuracy, 0.998)
    conf = np.clip(rng.beta(30 * m, 30 * (1 - m), size), 0.5, 0.9999)
    n_err = int(round((1 - accuracy) * size))
    correct = np.ones(size, dtype=bool)
    if n_err:
        w = 1.0 - conf
        correct[rng.choice(size, n_err, replace=False, p=w / w.sum())] = False
    return conf, correct


def intervals(conf: np.ndarray, correct: np.ndarray, n: int, runs: int, ci_prob: float, seed: int,
              methods: tuple[str, ...] = METHODS) -> dict[str, np.ndarray]:
    """Intervals (runs, 2) of every method for ``runs`` label draws of n items (NaN: no interval)."""
    from pbassess.estimation.active import active_sample, ipw_mean_interval
    from pbassess.estimation.bayes import bayes_estimate_batch, cell_counts
    from pbassess.estimation.frequentist import classical_interval, ppi_mean_interval

    kinds = {"wald": "wald", "wilson": "wilson", "agresti-coull": "agresti-coull", "classical": "auto"}
    y = correct.astype(float)
    size = y.size
    out = {m: np.full((runs, 2), np.nan) for m in methods}
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence([seed, n]).spawn(runs)]
    cells = cell_counts(conf, np.zeros(size, dtype=np.int64), 1, np.ones(size, dtype=bool), correct, bins=10)
    n_cells = cells.n_pool.size
    bin_of = cells.item_cell.astype(np.int64)   # every item's confidence bin (all counted as labeled)
    counts_n = np.zeros((runs, n_cells), dtype=np.int64)
    counts_k = np.zeros((runs, n_cells), dtype=np.int64)
    for r, rng in enumerate(rngs):
        idx = rng.choice(size, n, replace=False)
        lab = np.zeros(size, dtype=bool)
        lab[idx] = True
        for m in methods:
            if m in kinds:
                out[m][r] = classical_interval(y[idx], ci_prob, kinds[m])[1:]
            elif m in ("ppi", "ppi-wald"):
                out[m][r] = ppi_mean_interval(y[idx], conf[idx], conf[~lab], ci_prob,
                                              kind="auto" if m == "ppi" else "wald")[1:3]
        counts_n[r] = np.bincount(bin_of[idx], minlength=n_cells)
        counts_k[r] = np.bincount(bin_of[idx], weights=y[idx], minlength=n_cells).round().astype(np.int64)
        if "active" in methods:
            chosen, pi = active_sample(conf, n, seed=rng)
            out["active"][r] = ipw_mean_interval(y, conf, pi, chosen, ci_prob)[1:3]
    if "bayes" in methods:
        fit = bayes_estimate_batch(cells, counts_n, counts_k, ci_prob=ci_prob, draws=500, seed=rngs)
        out["bayes"] = fit["ci"][:, 0, :]
    return out


def summarise(ivs: dict[str, np.ndarray], truth: float, ci_prob: float) -> dict[str, dict[str, float]]:
    """Coverage (a draw without an interval counts as a miss), mean width, zero widths, share without interval."""
    res = {}
    for m, iv in ivs.items():
        lo, hi = iv[:, 0], iv[:, 1]
        ok = np.isfinite(lo) & np.isfinite(hi)
        width = hi - lo
        res[m] = {"coverage": float(np.mean(ok & (lo <= truth + 1e-12) & (truth <= hi + 1e-12))),
                  "width": float(np.mean(width[ok])) if ok.any() else float("nan"),
                  "zero": int(np.sum(ok & (width <= 0))), "none": float(np.mean(~ok)),
                  "low": float(np.mean(ok & (lo <= truth + 1e-12) & (truth <= hi + 1e-12))) < ci_prob - 0.02}
    return res


def print_header(title: str, ci_prob: float, runs: int, methods: tuple[str, ...]) -> None:
    print(f"\n### {title}: coverage of nominal {ci_prob:.0%} intervals (mean width) over {runs} label draws\n")
    print("| pool | accuracy | n | " + " | ".join(methods) + " |")
    print("|---|---|---|" + "---|" * len(methods))


def print_row(name: str, truth: float, n: int, summary: dict[str, dict[str, float]]) -> list[str]:
    cells, flags = [], []
    for m, s in summary.items():
        text = f"{s['coverage']:.3f} ({s['width']:.3f})"
        if s["low"]:
            text += " *"
            flags.append(f"{name} n={n} {m}: {s['coverage']:.3f}")
        if s["zero"]:
            text += f" 0w={s['zero']}"
        if s["none"] > 0:
            text += f" n/a={s['none']:.2f}"
        cells.append(text)
    print(f"| {name} | {truth:.4f} | {n} | " + " | ".join(cells) + " |", flush=True)
    return flags


def labels_to_target_coverage(batches: int, runs: int, ci_prob: float, seed: int) -> tuple[float, float]:
    """Coverage of the labels-to-MRR interval of the known process and the share of finite upper ends."""
    from pbassess.active.evaluation import labels_to_mrr_interval

    steps, labels, n_items = 40, np.arange(1, 41) * 10, 400
    not_yet = 0.3 * np.exp(-np.arange(steps) / 4.0)
    truth = labels[np.flatnonzero(1.0 - 0.5 * not_yet >= 0.99)[0]] / n_items
    rng = np.random.default_rng([seed, runs])
    hits = finite = 0
    for _ in range(batches):
        curves = np.where(rng.random((runs, 1)) >= not_yet[None, :], 1.0, 0.5)
        lo, hi = labels_to_mrr_interval(curves, labels, n_items, prob=ci_prob)
        hits += lo <= truth <= hi
        finite += hi < 1.0
    return hits / batches, finite / batches


def acs_pools() -> list[tuple[str, np.ndarray, np.ndarray]]:
    """ACS employment subgroups (age band, race) as (name, confidence, correct); [] without the data."""
    import pbassess as pb

    try:
        p = pb.load_data("acs-employment")
    except Exception as exc:  # noqa: BLE001 - the shared data are optional
        print(f"skip ACS: {exc}", file=sys.stderr)
        return []
    conf, correct = np.asarray(p.confidence, dtype=float), np.asarray(p.correct, dtype=bool)
    age = np.asarray(p.group("AGEP"), dtype=float)
    race = np.asarray(p.group("RAC1P")).astype(int)
    out = []
    for lo, hi in ((0, 20), (20, 35), (35, 50), (50, 65), (65, 75), (75, 200)):
        sel = (age >= lo) & (age < hi)
        out.append((f"ACS age {lo}-{hi - 1 if hi < 200 else '+'}", conf[sel], correct[sel]))
    for code, name in ((1, "White"), (2, "Black"), (6, "Asian"), (8, "other race"), (9, "two or more races")):
        sel = race == code
        out.append((f"ACS race {name}", conf[sel], correct[sel]))
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=2000, help="label draws per cell (coverage sd 0.0067 at 2,000)")
    p.add_argument("--quick", action="store_true", help="200 draws per cell (coverage sd 0.021)")
    p.add_argument("--ci-prob", type=float, default=0.9)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-acs", action="store_true", help="the synthetic grid only")
    p.add_argument("--no-synthetic", action="store_true", help="the ACS subgroups only")
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--labels-to-target-only", action="store_true", help="only the labels-to-target interval check")
    args = p.parse_args()
    runs = 200 if args.quick else args.runs
    methods = tuple(m.strip() for m in args.methods.split(","))
    os.environ.setdefault("PBASSESS_DATA_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"))
    warnings.simplefilter("ignore", RuntimeWarning)
    t_all = time.perf_counter()
    flags: list[str] = []
    zero = 0
    lowest: dict[str, tuple[float, str]] = {}

    def record(name: str, n: int, summary: dict[str, dict[str, float]]) -> None:
        for m, v in summary.items():
            if m not in lowest or v["coverage"] < lowest[m][0]:
                lowest[m] = (v["coverage"], f"{name} n={n}")
    print(f"\n### Labels to target (MRR 0.99): coverage of the nominal {args.ci_prob:.0%} interval over {runs} batches\n")
    l2t = {}
    for batch in (50, 400):
        l2t[batch] = labels_to_target_coverage(runs, batch, args.ci_prob, args.seed)
        flag = " *" if l2t[batch][0] < args.ci_prob - 0.02 else ""
        print(f"- {batch} runs per batch: coverage {l2t[batch][0]:.3f}{flag}, upper end certified before the whole "
              f"pool in {l2t[batch][1]:.0%} of batches", flush=True)
    l2t_text = "labels-to-MRR " + " / ".join(f"{c:.3f} ({b} runs)" for b, (c, _) in l2t.items())
    if args.labels_to_target_only:
        print(f"VERDICT: {l2t_text}")
        return 0
    if not args.no_synthetic:
        print_header("Synthetic pools (N = 10,000)", args.ci_prob, runs, methods)
    for a, acc in enumerate(() if args.no_synthetic else ACCURACIES):
        conf, correct = synthetic_pool(acc, args.seed + a)
        for n in LABELS:
            s = summarise(intervals(conf, correct, n, runs, args.ci_prob, args.seed, methods), correct.mean(),
                          args.ci_prob)
            flags += print_row(f"synthetic {acc}", float(correct.mean()), n, s)
            zero += sum(v["zero"] for v in s.values())
            record(f"synthetic {acc}", n, s)
    if not args.no_acs:
        pools = acs_pools()
        if pools:
            print_header("ACS employment subgroups (real)", args.ci_prob, runs, methods)
        for name, conf, correct in pools:
            for n in LABELS:
                if n > conf.size / 3:
                    continue
                s = summarise(intervals(conf, correct, n, runs, args.ci_prob, args.seed, methods), correct.mean(),
                              args.ci_prob)
                flags += print_row(f"{name} (N={conf.size})", float(correct.mean()), n, s)
                zero += sum(v["zero"] for v in s.values())
                record(name, n, s)
    print(f"\n(total {time.perf_counter() - t_all:.0f} s wall; R = {runs} draws per cell, coverage sd "
          f"{np.sqrt(args.ci_prob * (1 - args.ci_prob) / runs):.4f})")
    minima = ", ".join(f"{m} {c:.3f} ({where})" for m, (c, where) in lowest.items())
    legacy = ("wald", "ppi-wald")         # the Wald constructions, kept by name, known to fail at the boundary
    counts = {m: sum(f.split(": ")[0].endswith(f" {m}") for f in flags) for m in lowest}
    shown = [f for f in flags if f.split(": ")[0].rsplit(" ", 1)[-1] not in legacy]
    print(f"VERDICT: minimum coverage of nominal {args.ci_prob:.0%}: {minima}; cells below "
          f"{args.ci_prob - 0.02:.2f}: " + ", ".join(f"{m} {c}" for m, c in counts.items())
          + (f" ({'; '.join(shown)})" if shown else " (none outside the legacy Wald constructions)")
          + f"; zero-width intervals: {zero}; {l2t_text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
