"""Simulation study: can the ECE posterior say "calibrated"? And the plug-in ECE's error (Fig. 3).

Part 1, the decision ``P(ECE < 0.02) > 0.9`` of the shrinkage calibration model
(:mod:`pbassess.calibration.shrinkage`, numerical-integration engine, 10 equal-width bins):
for synthetic classifiers with known calibration (:mod:`pbassess.calibration.simulate`; pools
of 20,000 items) and for the CIFAR-100 ResNet-110 (its 10,000 labeled items as the pool, true
ECE 0.0987), label ``n`` random items (100 to 10,000), fit, decide, repeat. Prints per model and
``n``: the true ECE, the share of repetitions called "calibrated" (the rule with at least 1,000
labels, :func:`pbassess.calibration.posterior.calibration_decision`), the share with
``P(ECE < 0.02) > 0.9`` whatever the number of labels, the mean ``P(ECE < 0.02)`` and posterior
mean ECE, and the share of *right* calls ("calibrated" is right iff the true ECE is below 0.02;
"too few labels" counts as not calibrated). For contrast it also prints the share called calibrated by the independent
Beta posterior (pseudocount 2) under the same rule.

Part 0 (``--coverage``, issue 20): the 95% HDI of the shrinkage ECE posterior against the true
(binned, pool) ECE. Pools of 20,000 synthetic items with accuracy = confidence - delta (delta 0,
0.01, 0.03, 0.05, so the pool's binned ECE is delta) on two confidence distributions: the
project's synthetic pool (``1/10 + 0.9 Beta(4, 1)``, skewed towards 1) and U(0.5, 1); 500
labels drawn at random, the posterior refitted (integration engine), ``--coverage-reps`` times.
Prints per truth the share of HDIs containing the truth with its Monte Carlo sd
``sqrt(c (1 - c) / reps)``, how often the truth lay below / above the HDI, and the mean
``P(ECE < 0.02)``; then the operating characteristics of the rule ``P(ECE < 0.02) > 0.9`` at
500 and 2,000 labels on each distribution
(:func:`pbassess.calibration.posterior.operating_characteristics`, on a pool's design).

Part 2 (``--fig3``), Fig. 3 of Ji, Smyth and Steyvers (2020): mean absolute error of the
frequentist ECE and of the plug-in Bayesian ECE (posterior-mean bin accuracies) against the
ECE of the full labeled set, at 100 and 500 labels on CIFAR-100 and SVHN (400 repetitions).

Usage::

    python benchmarks/calibration_decision.py [--reps 20] [--sizes 100,500,2000,10000] [--fig3]
    python benchmarks/calibration_decision.py --coverage [--coverage-reps 100] [--oc-reps 100]

Wall time under contention (2 shared cores, other jobs running): about 2 s per fit.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pbassess.calibration.posterior import (  # noqa: E402
    beta_metric_draws,
    calibration_decision,
    compare_ece_estimators,
    pool_bins,
)
from pbassess.calibration.simulate import synthetic_pool  # noqa: E402

DECIDE_EPS = 0.02
LEVEL = 0.9


def _models(seed: int):
    models = [
        ("calibrated", synthetic_pool(20_000, "calibrated", seed=seed)),
        ("shifted-0.03", synthetic_pool(20_000, "shifted", 0.03, seed=seed)),
        ("shifted-0.05", synthetic_pool(20_000, "shifted", 0.05, seed=seed)),
        ("overconfident-T1.5", synthetic_pool(20_000, "overconfident", 0.5, seed=seed)),
    ]
    cifar = _cifar()
    if cifar is not None:
        models.append(("cifar100-resnet110", cifar))
    return models


class _LabeledPool:
    """A fully labeled real data set used as a pool whose labels are revealed on demand."""

    def __init__(self, confidence, correct):
        self.confidence = confidence
        self.correct = correct

    def true_ece(self) -> float:
        b = pool_bins(self.confidence, self.correct, np.ones(self.confidence.size, bool))
        occ = b["n"] > 0
        return float(np.sum(b["bin_weight"][occ] * np.abs(b["correct"][occ] - b["score_sum"][occ]) / b["n"][occ]))

    def draw_labels(self, n, seed):
        rng = np.random.default_rng(seed)
        idx = rng.choice(self.confidence.size, size=n, replace=False)
        return idx, self.correct[idx]


def _cifar():
    if not os.environ.get("PBASSESS_DATA_DIR") and not (Path(__file__).resolve().parents[2] / "shared" / "data").is_dir():
        return None
    os.environ.setdefault("PBASSESS_DATA_DIR", str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    import pbassess

    p = pbassess.load_data("cifar100-resnet110")
    return _LabeledPool(p.confidence, p.correct)


def decision_table(sizes, reps: int, seed: int = 0) -> list[dict]:
    rows = []
    for name, pool in _models(seed):
        truth = pool.true_ece()
        for n in sizes:
            called, raw, p02, means, beta_called = [], [], [], [], []
            for r in range(reps):
                idx, correct = pool.draw_labels(n, seed=1000 * r + n)
                labeled = np.zeros(pool.confidence.size, bool)
                labeled[idx] = True
                y = np.zeros(pool.confidence.size, bool)
                y[idx] = correct
                bins = pool_bins(pool.confidence, y, labeled)
                out = calibration_decision(bins, n_draws=2000, seed=r, decide_eps=DECIDE_EPS, level=LEVEL)
                called.append(out["calibrated"])
                raw.append(out["p_below"][DECIDE_EPS] > LEVEL)
                p02.append(out["p_below"][DECIDE_EPS])
                means.append(out["ece_mean"])
                beta = beta_metric_draws(bins, n_draws=2000, seed=r)
                beta_called.append(np.mean(beta["ece"] < DECIDE_EPS) > LEVEL)
            right = np.mean(np.asarray(called) == (truth < DECIDE_EPS))
            rows.append({"model": name, "true_ece": truth, "n": n, "called": np.mean(called), "raw": np.mean(raw),
                         "p02": np.mean(p02), "ece_mean": np.mean(means), "right": right,
                         "beta_called": np.mean(beta_called)})
            r_ = rows[-1]
            print(f"{name:20s} {truth:8.4f} {n:6d} {r_['called']:8.2f} {r_['raw']:8.2f} {r_['p02']:8.3f} "
                  f"{r_['ece_mean']:9.4f} {r_['right']:7.2f} {r_['beta_called']:10.2f}", flush=True)
    return rows


def _labeled_bins(pool, n, seed):
    idx, correct = pool.draw_labels(n, seed=seed)
    labeled = np.zeros(pool.confidence.size, bool)
    labeled[idx] = True
    y = np.zeros(pool.confidence.size, bool)
    y[idx] = correct
    return pool_bins(pool.confidence, y, labeled)


DISTRIBUTIONS = {"synthetic Beta(4,1)": {}, "U(0.5, 1)": {"n_classes": 2, "a": 1.0, "b": 1.0}}


def coverage_table(reps: int, n_labels: int = 500, seed: int = 0, prior: dict | None = None) -> list[dict]:
    from pbassess.calibration.shrinkage import shrinkage_posterior
    from pbassess.stats import hdi_from_draws

    prior = prior or {}
    rows = []
    print(f"\n95% HDI coverage of the true ECE at {n_labels} labels, {reps} simulations each "
          f"(prior {prior or 'default'})")
    print(f"{'confidences':20s} {'true ECE':>8s} {'coverage':>9s} {'MC sd':>6s} {'below':>6s} {'above':>6s} {'P<0.02':>7s}")
    for dist, kwargs in DISTRIBUTIONS.items():
        for delta in (0.0, 0.01, 0.03, 0.05):
            pool = synthetic_pool(20_000, "shifted", delta, seed=seed, **kwargs)
            truth = pool.true_ece()
            hit = below = above = 0
            p02 = []
            for r in range(reps):
                b = _labeled_bins(pool, n_labels, seed=10_000 + r)
                ece = shrinkage_posterior(b["n"], b["correct"], b["bin_score"], b["bin_weight"], n_draws=2000,
                                          seed=r, **prior)["ece"]
                lo, hi = hdi_from_draws(ece, 0.95)
                hit += lo <= truth <= hi
                below += truth < lo
                above += truth > hi
                p02.append(np.mean(ece < DECIDE_EPS))
            c = hit / reps
            rows.append({"dist": dist, "truth": truth, "coverage": c, "sd": np.sqrt(c * (1 - c) / reps)})
            print(f"{dist:20s} {truth:8.4f} {c:9.3f} {rows[-1]['sd']:6.3f} {below / reps:6.3f} {above / reps:6.3f} "
                  f"{np.mean(p02):7.3f}", flush=True)
    return rows


def oc_table(reps: int, seed: int = 0, prior: dict | None = None) -> None:
    from pbassess.calibration.posterior import operating_characteristics

    print(f"\noperating characteristics of P(ECE < eps) > {LEVEL} ({reps} simulated label sets per truth; "
          f"MC sd <= {0.5 / np.sqrt(reps):.3f})")
    print(f"{'confidences':20s} {'labels':>6s} {'eps':>5s} {'power':>6s} {'false calibrated':>17s} "
          f"{'mean P | calibrated':>20s} {'mean P | ECE = eps':>19s}")
    for dist, kwargs in DISTRIBUTIONS.items():
        pool = synthetic_pool(20_000, "calibrated", seed=seed, **kwargs)
        for n in (500, 2000):
            b = _labeled_bins(pool, n, seed=seed)
            oc = operating_characteristics(b, eps=(0.01, 0.02, 0.05), level=LEVEL, reps=reps, seed=seed,
                                           **(prior or {}))
            for e, row in oc["by_eps"].items():
                print(f"{dist:20s} {n:6d} {e:>5s} {row['power']:6.3f} {row['false_calibrated_rate']:17.3f} "
                      f"{row['mean_p_calibrated']:20.3f} {row['mean_p_boundary']:19.3f}", flush=True)


def fig3(reps: int = 100, seed: int = 0) -> None:
    import pbassess

    print("\nFig. 3 (Ji et al. 2020): mean |estimate - full-set ECE| over", reps, "random labeled sets")
    print(f"{'data':20s} {'labels':>6s} {'truth':>8s} {'frequentist':>12s} {'plug-in':>9s}")
    for name in ("cifar100-resnet110", "svhn-resnet"):
        p = pbassess.load_data(name)
        for n in (100, 500):
            out = compare_ece_estimators(p.confidence, p.correct, n, reps=reps, seed=seed)
            print(f"{name:20s} {n:6d} {out['truth']:8.4f} {out['error_frequentist'].mean():12.4f} "
                  f"{out['error_plugin'].mean():9.4f}", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--sizes", default="100,200,500,1000,2000,5000,10000")
    parser.add_argument("--fig3", action="store_true", help="also print the Fig. 3 comparison")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--coverage", action="store_true", help="only the HDI coverage and operating characteristics")
    parser.add_argument("--coverage-reps", type=int, default=100)
    parser.add_argument("--oc-reps", type=int, default=100)
    args = parser.parse_args(argv)
    if args.coverage:
        start = time.perf_counter()
        coverage_table(args.coverage_reps, seed=args.seed)
        oc_table(args.oc_reps, seed=args.seed)
        print(f"\nwall time {time.perf_counter() - start:.0f} s (shared 2-core machine, under contention)")
        return 0
    sizes = [int(v) for v in args.sizes.split(",")]
    start = time.perf_counter()
    print(f"decision: P(ECE < {DECIDE_EPS}) > {LEVEL}, shrinkage model, 10 equal-width bins, {args.reps} repetitions")
    print(f"{'model':20s} {'true ECE':>8s} {'labels':>6s} {'called':>8s} {'P>0.9':>8s} {'P<0.02':>8s} "
          f"{'post ECE':>9s} {'right':>7s} {'beta called':>10s}")
    decision_table(sizes, args.reps, args.seed)
    if args.fig3:
        fig3(reps=400, seed=args.seed)
    print(f"\nwall time {time.perf_counter() - start:.0f} s (shared 2-core machine, under contention)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
