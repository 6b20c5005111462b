"""How many labels the best possible labeling needs to match random labels on the miscalibrated surface.

Issue 21 asks exploration on the anchored posterior to reach the random-label MSE with half the
labels. This script asks what any strategy could do: it linearises the anchored surface around
the known truth (:func:`pbassess.surface.design_bound.anchored_linearisation`), where the posterior
covariance does not depend on the labels' values, so the best fixed allocation of N labels over the
arms (:meth:`~pbassess.surface.design_bound.LinearSurfaceDesign.optimal_allocation`) bounds every
adaptive strategy. Per budget N it prints the expected macro MSE of random labels (64 hypergeometric
draws), of the optimal design with N and N/2 labels, and the fewest labels an optimal design needs to
match N random labels (``match``, and its share of N). Two priors: the model's own residual scales
(``model``) and scales sized to the truth's residual effects (``oracle``).

``--fits S`` then checks the linearisation against real fits: for S label seeds, the anchored
model (``fit_surface(..., estimator="additive", covariate="confidence")``, its defaults) is
fitted on N random labels, N/2 random labels and N/2 and N labels placed by the optimal design
(the allocation rounded at random, items drawn at random within an arm), and scored against the
truth (macro MSE over the scored arms).

Surfaces: ``explore`` (the surface of ``benchmarks/surface_explore.py --surface miscalibrated``:
10,000 items, 6 attributes, 64 arms, every arm scored) and ``benchmark`` (the one of
``benchmarks/surface.py --data miscalibrated``: 100,000 items, 8 attributes, arms with >= 50 items
scored).

Run: ``python benchmarks/surface_design_bound.py [--surface explore|benchmark] [--budgets 100,140,300]
[--priors model,oracle] [--fits 5 --fit-budget 300]``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from pbassess.surface import count_arms, fit_surface, hide_labels
from pbassess.surface.design_bound import anchored_linearisation
from pbassess.surface.evaluate import surface_errors
from pbassess.surface.synthetic import miscalibrated_surface

SURFACES = {"explore": (10_000, 6, 0, 0.0), "benchmark": (100_000, 8, 2021, 50.0)}


def design_labels(preds, item_arm: np.ndarray, allocation: np.ndarray, rng):
    """The pool with labels kept on ``round(allocation)`` random items per arm (rounded at random)."""
    total = int(round(allocation.sum()))
    counts = np.floor(allocation).astype(np.int64)
    rest = total - counts.sum()
    frac = allocation - counts
    if rest > 0:
        counts[rng.choice(allocation.size, size=rest, replace=False, p=frac / frac.sum())] += 1
    keep = np.concatenate([rng.choice(np.flatnonzero(item_arm == a), size=counts[a], replace=False)
                           for a in np.flatnonzero(counts)])
    labels = np.full(preds.n_items, -1, dtype=np.int64)
    labels[keep] = preds.labels[keep]
    return preds.with_labels(labels)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--surface", default="explore", choices=sorted(SURFACES))
    parser.add_argument("--budgets", default="100,140,300")
    parser.add_argument("--priors", default="model,oracle")
    parser.add_argument("--fits", type=int, default=0, help="label seeds of the check with real fits (0: none)")
    parser.add_argument("--fit-budget", type=int, default=300)
    parser.add_argument("--fit-prior", default="oracle", choices=["model", "oracle"])
    parser.add_argument("--design-from", default="truth", choices=["truth", "confidence"],
                        help="linearise the design at the true accuracies or at the arms' mean confidence "
                             "(label-free: with --fit-prior model nothing in the design uses a label)")
    args = parser.parse_args()
    n_items, n_attributes, seed, min_support = SURFACES[args.surface]
    mis = miscalibrated_surface(n_items, n_attributes, seed=seed)
    attributes = list(mis.attributes)
    arms = count_arms(mis.preds, attributes)
    truth = mis.arm_truth(arms.values)
    scored = arms.pool_n >= max(min_support, 1)
    conf_mse = float(np.mean((np.asarray(arms.confidence) - truth)[scored] ** 2))
    print(f"miscalibrated surface '{args.surface}': {n_items} items, {arms.n_arms} arms ({scored.sum()} scored), "
          f"rules {mis.rules}; the confidence's macro MSE {conf_mse:.5f}", flush=True)
    print(f"{'prior':7s} {'N':>6s} {'random':>9s} {'opt(N)':>9s} {'opt(N/2)':>9s} {'match':>6s} {'share':>6s} "
          f"{'arms':>5s} {'sec':>5s}")
    for prior in args.priors.split(","):
        design = anchored_linearisation(arms, truth, prior=prior, min_support=min_support)
        for budget in (int(b) for b in args.budgets.split(",")):
            start = time.perf_counter()
            random = design.random_risk(budget, seed=0)
            best = design.optimal_allocation(budget)
            half = design.risk(design.optimal_allocation(budget // 2))
            match = design.labels_to_match(random, upper=budget)
            print(f"{prior:7s} {budget:6d} {random:9.5f} {design.risk(best):9.5f} {half:9.5f} {match:6d} "
                  f"{match / budget:6.2f} {int(np.sum(best >= 0.5)):5d} {time.perf_counter() - start:5.0f}",
                  flush=True)
    if args.fits:
        fit_check(mis, arms, truth, attributes, args, min_support)


def fit_check(mis, arms, truth, attributes, args, min_support: float) -> None:
    budget = args.fit_budget
    at = truth if args.design_from == "truth" else np.asarray(arms.confidence, float)
    design = anchored_linearisation(arms, at, prior=args.fit_prior, min_support=min_support)
    allocation = {n: design.optimal_allocation(n) for n in (budget // 2, budget)}
    rows: dict[str, list[float]] = {}
    print(f"\nanchored fits ({args.fits} label seeds; design from the {args.fit_prior} prior at the "
          f"{args.design_from}): macro MSE", flush=True)
    for seed in range(args.fits):
        rng = np.random.default_rng(seed)
        pools = {f"random {budget}": hide_labels(mis.preds, budget, seed=seed),
                 f"random {budget // 2}": hide_labels(mis.preds, budget // 2, seed=seed),
                 f"design {budget // 2}": design_labels(mis.preds, arms.item_arm, allocation[budget // 2], rng),
                 f"design {budget}": design_labels(mis.preds, arms.item_arm, allocation[budget], rng)}
        for name, pool in pools.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = fit_surface(pool, attributes, estimator="additive", covariate="confidence", seed=seed)
            err = surface_errors(result.mean, truth, arms.pool_n, min_support=min_support, truth_is_empirical=False)
            rows.setdefault(name, []).append(err["macro_mse"])
            print(f"  seed {seed} {name:12s} {err['macro_mse']:.5f} ({result.fit_seconds:.0f} s)", flush=True)
    for name, values in rows.items():
        v = np.asarray(values)
        se = v.std(ddof=1) / np.sqrt(v.size) if v.size > 1 else float("nan")
        print(f"{name:12s} macro MSE {v.mean():.5f} +- {se:.5f}  per seed {' '.join(f'{x:.5f}' for x in v)}")


if __name__ == "__main__":
    main()
