"""Exploration of an accuracy surface on the synthetic surface with known truth: MSE curves over labels.

Strategies (``pbassess.surface.explore``): ``variance`` (label the arms of highest posterior
variance of the chosen estimator), ``random`` (random items, same estimator), ``beta-i`` (the
paper's Beta-I exploration: Beta-I's own variance loop and estimate), and for finding the worst
arms ``thompson`` / ``bayes-ucb``. Printed per strategy and round: the mean number of labels and
the macro MSE and worst-arm MSE against the true surface, as mean with a band (min-max over seeds).
Then the time of the variance loop with and without warm-started NUTS refits (seed 0), with the
final MSEs of both (they should agree within Monte Carlo error).

Run: ``python benchmarks/surface_explore.py [--estimator berngp] [--seeds 3] [--budget 60]
[--batch-size 10] [--initial 10] [--attributes 3] [--items 3000] [--draws 200 --tune 200 --chains 2]
[--sampler pymc|nutpie] [--strategies variance,random,beta-i,thompson,bayes-ucb] [--no-timing]``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from pbassess.surface import count_arms
from pbassess.surface.explore import explore_surface
from pbassess.surface.synthetic import synthetic_surface


def curves(syn, args, strategy: str, *, seeds: list[int], warm_start: bool | str = True):
    """The exploration Dataset of one strategy (``beta-i``: Beta-I's own variance loop)."""
    estimator, strat = ("beta-i", "variance") if strategy == "beta-i" else (args.estimator, strategy)
    arms = count_arms(syn.preds, syn.attributes)
    sample_kwargs = {"draws": args.draws, "tune": args.tune, "chains": args.chains, "cores": 1,
                     "nuts_sampler": args.sampler}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return explore_surface(syn.preds, syn.attributes, estimator=estimator, strategy=strat, budget=args.budget,
                               batch_size=args.batch_size, initial_labels=args.initial, seeds=seeds,
                               truth=syn.truth_for(arms.values), k=args.worst, warm_start=warm_start,
                               fit_kwargs={"sample_kwargs": sample_kwargs})


def band(values: np.ndarray) -> str:
    return f"{np.nanmean(values):.4f} [{np.nanmin(values):.4f}, {np.nanmax(values):.4f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--estimator", default="berngp")
    parser.add_argument("--strategies", default="variance,random,beta-i,thompson,bayes-ucb")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--items", type=int, default=3000)
    parser.add_argument("--attributes", type=int, default=3)
    parser.add_argument("--budget", type=int, default=60)
    parser.add_argument("--batch-size", type=int, default=10)
    parser.add_argument("--initial", type=int, default=10)
    parser.add_argument("--worst", type=int, default=3, help="number of worst arms scored")
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--tune", type=int, default=200)
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--sampler", default="pymc", choices=["pymc", "nutpie"])
    parser.add_argument("--no-timing", action="store_true")
    parser.add_argument("--warm-point", default="mean", choices=["mean", "draw"],
                        help="warm start from the previous posterior mean or one of its draws")
    args = parser.parse_args()
    syn = synthetic_surface(args.items, args.attributes, seed=0)
    print(f"synthetic surface: {2 ** args.attributes} arms, {args.items} items; estimator {args.estimator}, "
          f"NUTS {args.chains} x {args.draws} (+{args.tune} tune, {args.sampler}); budget {args.budget}, batch "
          f"{args.batch_size}, {args.initial} initial random labels, {args.seeds} seeds; band = min-max over seeds; "
          "shared 2-core machine under contention (times inflated)", flush=True)
    seeds = list(range(args.seeds))
    for strategy in [s for s in args.strategies.split(",") if s]:
        start = time.perf_counter()
        ds = curves(syn, args, strategy, seeds=seeds)
        print(f"\n{strategy} ({time.perf_counter() - start:.0f} s)\n{'labels':>7s} {'macro MSE':>27s} "
              f"{'worst-' + str(args.worst) + ' MSE':>27s}", flush=True)
        for r in range(ds.sizes["round"]):
            n = ds["n_labels"].values[:, r]
            print(f"{np.mean(n[n >= 0]):7.0f} {band(ds['macro_mse'].values[:, r]):>27s} "
                  f"{band(ds['worst_mse'].values[:, r]):>27s}", flush=True)
    if args.no_timing:
        return
    print("\nvariance loop, seed 0: warm-started vs cold NUTS refits", flush=True)
    for warm in (args.warm_point, False):
        start = time.perf_counter()
        ds = curves(syn, args, "variance", seeds=[0], warm_start=warm)
        fit = ds["fit_seconds"].values[0]
        print(f"{'warm' if warm else 'cold':5s} total {time.perf_counter() - start:6.1f} s, fits {np.nansum(fit):6.1f} s "
              f"(first {fit[0]:.1f} s, later rounds mean {np.nanmean(fit[1:]):.1f} s); final macro MSE "
              f"{ds['macro_mse'].values[0, -1]:.4f}", flush=True)


if __name__ == "__main__":
    main()
