"""Exploration of an accuracy surface on the synthetic surface with known truth: MSE curves over labels.

Strategies (``pbassess.surface.explore``): ``variance`` (label the arms of highest posterior
variance of the chosen estimator), ``variance-reduction`` (the arms whose labels most reduce the
summed posterior variance of all arms, from the posterior covariance), ``design`` (the optimal
design's next labels under the anchored surface linearised at the posterior mean; needs
``--covariate confidence``), ``random`` (random items, same estimator), ``beta-i`` (the
paper's Beta-I exploration: Beta-I's own variance loop and estimate), and for finding the worst
arms ``thompson`` / ``bayes-ucb``. Printed per strategy and round: the mean number of labels and
the macro MSE and worst-arm MSE against the true surface, each as the mean over seeds, its
standard error and the band from the 10th to the 90th percentile of the seeds. With nutpie the
model is compiled once and refitted on each round's counts (``SurfaceRefitter``). Then, for the
variance loop of seed 0, the time of refitting one compiled model against rebuilding the model
every round (warm-started and cold), with the final MSEs (equal within Monte Carlo error).

Run: ``python benchmarks/surface_explore.py [--estimator additive] [--seeds 20] [--budget 300]
[--batch-size 20] [--initial 20] [--attributes 6] [--items 10000] [--draws 300 --tune 300 --chains 2]
[--first-seed 0] [--sampler nutpie|pymc] [--strategies variance,variance-reduction,design,random,beta-i,thompson,bayes-ucb] [--no-timing]
[--surface synthetic|miscalibrated] [--surface-seed 0] [--min-support 0] [--covariate confidence [--loose]]
[--out curves.nc] [--figure curves.png]``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from pbassess.pymc_models.surface import LOOSE_ANCHORED_OPTIONS
from pbassess.surface import count_arms
from pbassess.surface.explore import explore_surface
from pbassess.surface.synthetic import synthetic_surface


def curves(syn, args, strategy: str, *, seeds: list[int], warm_start: bool | str = True, refit: bool = True):
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
                               min_support=args.min_support,
                               fit_kwargs={"sample_kwargs": sample_kwargs,
                                           **({"covariate": args.covariate} if args.covariate and estimator != "beta-i"
                                              else {}),
                                           **({"model_options": LOOSE_ANCHORED_OPTIONS}
                                              if args.loose and estimator != "beta-i" else {})}, refit=refit)


def band(values: np.ndarray) -> str:
    """Mean over seeds with its standard error and the 10-90% band over seeds."""
    v = values[np.isfinite(values)]
    se = v.std(ddof=1) / np.sqrt(v.size) if v.size > 1 else float("nan")
    lo, hi = np.quantile(v, [0.1, 0.9])
    return f"{v.mean():.4f} +-{se:.4f} [{lo:.4f}, {hi:.4f}]"


def print_curves(name: str, ds, seconds: float, worst: int) -> None:
    print(f"\n{name} ({seconds:.0f} s, fits {np.nansum(ds['fit_seconds'].values):.0f} s)\n{'labels':>7s} "
          f"{'macro MSE':>33s} {'worst-' + str(worst) + ' MSE':>33s}", flush=True)
    for r in range(ds.sizes["round"]):
        n = ds["n_labels"].values[:, r]
        print(f"{np.mean(n[n >= 0]):7.0f} {band(ds['macro_mse'].values[:, r]):>33s} "
              f"{band(ds['worst_mse'].values[:, r]):>33s}", flush=True)


def timing(syn, args) -> None:
    """Variance loop, seed 0: one compiled model refitted on new counts vs a model built every round."""
    print("\nvariance loop, seed 0: compiled once and refitted (warm start) vs rebuilt every round", flush=True)
    for label, kwargs in (("refit", {"refit": True}), ("rebuild", {"refit": False, "warm_start": args.warm_point}),
                          ("rebuild cold", {"refit": False, "warm_start": False})):
        start = time.perf_counter()
        ds = curves(syn, args, "variance", seeds=[0], **kwargs)
        fit = ds["fit_seconds"].values[0]
        print(f"{label:12s} total {time.perf_counter() - start:6.1f} s, fits {np.nansum(fit):6.1f} s (mean per round "
              f"{np.nanmean(fit):.2f} s); final macro MSE {ds['macro_mse'].values[0, -1]:.4f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--estimator", default="additive")
    parser.add_argument("--strategies", default="variance,random,beta-i,thompson,bayes-ucb")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=0, help="seeds run from this one on (lets seeds run in parallel jobs)")
    parser.add_argument("--items", type=int, default=10000)
    parser.add_argument("--attributes", type=int, default=6)
    parser.add_argument("--budget", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=20)
    parser.add_argument("--initial", type=int, default=20)
    parser.add_argument("--worst", type=int, default=5, help="number of worst arms scored")
    parser.add_argument("--draws", type=int, default=300)
    parser.add_argument("--tune", type=int, default=300)
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--sampler", default="nutpie", choices=["pymc", "nutpie"])
    parser.add_argument("--no-timing", action="store_true")
    parser.add_argument("--warm-point", default="mean", choices=["mean", "draw"],
                        help="warm start of the rebuilt fits: the previous posterior mean or one of its draws")
    parser.add_argument("--out", default=None, help="write every strategy's curves to this netCDF file")
    parser.add_argument("--figure", default=None, help="save the macro-MSE curves with their bands here")
    parser.add_argument("--surface", default="synthetic", choices=["synthetic", "miscalibrated"],
                        help="the synthetic surface (default) or the one whose confidence is over-confident by "
                             "0.05-0.2 on 3 attribute combinations (pbassess.surface.synthetic.miscalibrated_surface)")
    parser.add_argument("--surface-seed", type=int, default=0,
                        help="seed of the miscalibrated surface (benchmarks/surface.py's: --items 100000 "
                             "--attributes 8 --surface-seed 2021 --min-support 50)")
    parser.add_argument("--min-support", type=float, default=0.0, help="score only arms with this many pool items")
    parser.add_argument("--loose", action="store_true",
                        help="with --covariate confidence: refit with the wider residual prior "
                             "(LOOSE_ANCHORED_OPTIONS: indicator design, scales 0.1 / 0.05; the design strategy "
                             "linearises in that coding)")
    parser.add_argument("--covariate", default=None, choices=["confidence", "confidence-linear"],
                        help="confidence: the anchored model (with --estimator additive)")
    args = parser.parse_args()
    if args.surface == "miscalibrated":
        from types import SimpleNamespace

        from pbassess.surface.synthetic import miscalibrated_surface

        mis = miscalibrated_surface(args.items, args.attributes, seed=args.surface_seed)
        syn = SimpleNamespace(preds=mis.preds, attributes=mis.attributes, truth_for=mis.arm_truth)
    else:
        syn = synthetic_surface(args.items, args.attributes, seed=0)
    arms = count_arms(syn.preds, syn.attributes)
    print(f"{args.surface} surface (covariate {args.covariate}): {2 ** args.attributes} arms ({arms.n_arms} non-empty, items per arm "
          f"{int(arms.pool_n.min())}-{int(arms.pool_n.max())}), {args.items} items; estimator {args.estimator}, "
          f"NUTS {args.chains} x {args.draws} (+{args.tune} tune, {args.sampler}); budget {args.budget}, batch "
          f"{args.batch_size}, {args.initial} initial random labels, {args.seeds} seeds; each cell: mean over seeds "
          "+- its standard error [10%, 90% of seeds]", flush=True)
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    results = {}
    for strategy in [s for s in args.strategies.split(",") if s]:
        start = time.perf_counter()
        results[strategy] = curves(syn, args, strategy, seeds=seeds)
        print_curves(strategy, results[strategy], time.perf_counter() - start, args.worst)
    if args.out:
        import xarray as xr

        xr.concat([ds.expand_dims(strategy=[name]) for name, ds in results.items()], dim="strategy",
                  join="outer").to_netcdf(args.out)
    if args.figure:
        from pbassess.plots.surface import plot_mse_curves

        ax = plot_mse_curves(results, band="se")
        ax.figure.savefig(args.figure, dpi=120, bbox_inches="tight")
    if not args.no_timing:
        timing(syn, args)


if __name__ == "__main__":
    main()
