"""Accuracy-surface estimators on the ACS employment set (real data, 277,677 people).

Arms: the combinations of SEX, DIS, NATIVITY, DEAR, DEYE, DREM, MIG, CIT, MAR, RAC1P (2,554
non-empty arms). Truth: each arm's accuracy from all labels. For each label budget (default
500 / 2,000 / 10,000 random labels) and seed, every estimator is fitted on the kept labels
and scored on the arms with at least 50 items (296 arms): macro MSE, MSE on the 50 worst
arms, micro (support-weighted) MSE, MSE on the 50 least frequent arms, each raw and minus the
truth's own sampling variance t (1 - t) / support; plus fit time, max R-hat and divergences.
``confidence`` is the label-free baseline: each arm's mean model confidence.
``additive+conf`` is the additive model with the confidence covariate; ``additive(advi)``
its ADVI fast path (error against NUTS printed).

Run: ``PBASSESS_DATA_DIR=/work/shared/data python benchmarks/surface.py [--budgets 500,2000,10000]
[--seeds 1] [--estimators ...] [--draws 500 --tune 500 --chains 2]``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from pbassess import load_data
from pbassess.surface import count_arms, fit_surface, hide_labels
from pbassess.surface.evaluate import surface_errors, truth_from_pool

ATTRIBUTES = ["SEX", "DIS", "NATIVITY", "DEAR", "DEYE", "DREM", "MIG", "CIT", "MAR", "RAC1P"]
ESTIMATORS = {
    "confidence": None,
    "cpredictor": ("cpredictor", {}),
    "beta-i": ("beta-i", {}),
    "additive": ("additive", {}),
    "additive+conf": ("additive", {"covariate": "confidence"}),
    "additive(advi)": ("additive", {"inference": "advi"}),
    "betagp-slp": ("betagp-slp", {}),
    "betagp-sl": ("betagp-sl", {}),
    "betagp": ("betagp", {}),
    "berngp": ("berngp", {}),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budgets", default="500,2000,10000")
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--estimators", default="confidence,cpredictor,beta-i,additive,additive+conf,additive(advi)")
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--tune", type=int, default=500)
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--min-support", type=float, default=50)
    args = parser.parse_args()
    preds = load_data("acs-employment")
    full = count_arms(preds, ATTRIBUTES)
    truth = truth_from_pool(full)
    print(f"ACS employment: {full.n_arms} arms, {int((full.pool_n >= args.min_support).sum())} with >= "
          f"{args.min_support:.0f} items; NUTS {args.chains} x {args.draws} (+{args.tune} tune); "
          "shared 2-core machine under heavy contention (times inflated)", flush=True)
    header = (f"{'labels':>6s} {'seed':>4s} {'estimator':16s} {'macro':>8s} {'macro-c':>8s} {'worst50':>8s} "
              f"{'micro':>8s} {'rare50':>8s} {'rare-c':>8s} {'sec':>6s} {'rhat':>6s} {'div':>4s}")
    print(header, flush=True)
    sample_kwargs = {"draws": args.draws, "tune": args.tune, "chains": args.chains}
    for budget in [int(b) for b in args.budgets.split(",")]:
        for seed in range(args.seeds):
            kept = hide_labels(preds, budget, seed=seed)
            arms = count_arms(kept, ATTRIBUTES)
            nuts_mean = None
            for name in args.estimators.split(","):
                start = time.perf_counter()
                diag: dict = {}
                if ESTIMATORS[name] is None:
                    mean = arms.confidence
                else:
                    estimator, options = ESTIMATORS[name]
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        r = fit_surface(arms, estimator=estimator, seed=seed, sample_kwargs=sample_kwargs, **options)
                    mean, diag = r.mean, r.diagnostics or {}
                    if name == "additive":
                        nuts_mean = mean
                seconds = time.perf_counter() - start
                e = surface_errors(mean, truth, full.n, min_support=args.min_support)
                rhat = diag.get("max_rhat")
                print(f"{budget:6d} {seed:4d} {name:16s} {e['macro_mse']:8.5f} {e['macro_mse_corrected']:8.5f} "
                      f"{e['worst_mse']:8.5f} {e['micro_mse']:8.5f} {e['rare_mse']:8.5f} "
                      f"{e['rare_mse_corrected']:8.5f} {seconds:6.1f} {rhat if rhat is not None else float('nan'):6.3f} "
                      f"{int(diag.get('divergences') or 0):4d}", flush=True)
                if name == "additive(advi)" and nuts_mean is not None:
                    keep = full.pool_n >= args.min_support
                    gap = np.sqrt(np.mean((mean[keep] - nuts_mean[keep]) ** 2))
                    rare = arms.n < 5
                    gap_rare = np.sqrt(np.mean((mean[rare] - nuts_mean[rare]) ** 2)) if rare.any() else float("nan")
                    print(f"{'':12s}ADVI vs NUTS posterior means: RMS gap {gap:.4f} on scored arms, "
                          f"{gap_rare:.4f} on arms with < 5 labels", flush=True)


if __name__ == "__main__":
    main()
