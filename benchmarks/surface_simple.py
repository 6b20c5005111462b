"""The simple setting of Piratla et al. (2021): 10 arms on a line, few observations on most.

True accuracy 0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 0.6, 0.4, 0.3, 0.2; labels per arm 1, 1, 1, 20, 20,
20, 20, 1, 1, 1. For each seed the correct counts are drawn from the truth and every estimator
is fitted (the arm index is the one continuous input of the GP / additive models). Printed per
estimator: the fitted Beta scale per arm (mean over seeds; BetaGP family and additive), and
bias^2, variance and MSE of the per-arm posterior mean, averaged over the ten arms, with the
fit time.

Run: ``python benchmarks/surface_simple.py [--seeds 20] [--draws 500] [--tune 500] [--chains 2]
[--estimators beta-i,betagp,...] [--sampler pymc|nutpie]``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from pbassess.surface import ArmCounts, fit_surface

TRUTH = np.array([0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 0.6, 0.4, 0.3, 0.2])
LABELS = np.array([1, 1, 1, 20, 20, 20, 20, 1, 1, 1])
VARIANTS = {
    "cpredictor": ("cpredictor", {}),
    "beta-i": ("beta-i", {}),
    "berngp": ("berngp", {}),
    "betagp": ("betagp", {}),
    "betagp-sl(gamma)": ("betagp-sl", {"scale_term": "gamma"}),
    "betagp-sl(dirichlet)": ("betagp-sl", {"scale_term": "dirichlet"}),
    "betagp-slp": ("betagp-slp", {}),
    "additive": ("additive", {}),
}


def run(seeds: int, sample_kwargs: dict, names: list[str], report_every: int = 0) -> dict[str, dict]:
    """Fit every estimator on every seed; returns per-estimator arrays of means, scales and times.

    With ``report_every`` > 0 the table so far is printed after every that many seeds.
    """
    out = {name: {"mean": [], "scale": [], "seconds": [], "divergences": 0, "max_rhat": 0.0} for name in names}
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        correct = rng.binomial(LABELS, TRUTH)
        arms = ArmCounts.from_arrays(LABELS, correct, values=np.arange(10), attributes=("x",), continuous=("x",))
        for name in names:
            estimator, options = VARIANTS[name]
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = fit_surface(arms, estimator=estimator, seed=seed, sample_kwargs=sample_kwargs,
                                model_options=options or None)
            rec = out[name]
            rec["seconds"].append(time.perf_counter() - start)
            rec["mean"].append(r.mean)
            rec["scale"].append(r.surface["scale"].values if "scale" in r.surface else np.full(10, np.nan))
            diag = r.diagnostics or {}
            rec["divergences"] += int(diag.get("divergences") or 0)
            rec["max_rhat"] = max(rec["max_rhat"], float(diag.get("max_rhat") or 0.0))
        print(f"seed {seed} done", flush=True)
        if report_every and (seed + 1) % report_every == 0 and seed + 1 < seeds:
            print(f"-- after {seed + 1} seeds --")
            table(out, names)
    return out


def table(results: dict[str, dict], names: list[str]) -> None:
    """Print bias^2 / variance / MSE, time, divergences, R-hat and fitted scales per estimator."""
    print(f"{'estimator':22s} {'bias^2':>8s} {'variance':>9s} {'MSE':>8s} {'sec/fit':>8s} {'div':>4s} {'Rhat':>6s}  "
          "fitted scale per arm (mean over seeds)")
    for name in names:
        rec = results[name]
        means = np.array(rec["mean"])
        bias2 = float(((means.mean(0) - TRUTH) ** 2).mean())
        variance = float(means.var(0).mean())
        mse = float(((means - TRUTH) ** 2).mean())
        scale = np.nanmean(np.array(rec["scale"]), axis=0)
        scale_txt = " ".join(f"{s:5.1f}" for s in scale) if np.isfinite(scale).any() else "-"
        print(f"{name:22s} {bias2:8.4f} {variance:9.4f} {mse:8.4f} {np.mean(rec['seconds']):8.1f} "
              f"{rec['divergences']:4d} {rec['max_rhat']:6.3f}  {scale_txt}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--tune", type=int, default=500)
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--sampler", default="pymc", choices=["pymc", "nutpie"])
    parser.add_argument("--estimators", default=",".join(VARIANTS))
    parser.add_argument("--report-every", type=int, default=5, help="print the table so far every N seeds")
    args = parser.parse_args()
    names = [n for n in args.estimators.split(",") if n]
    sample_kwargs = {"draws": args.draws, "tune": args.tune, "chains": args.chains, "nuts_sampler": args.sampler,
                     "cores": 1}
    results = run(args.seeds, sample_kwargs, names, report_every=args.report_every)
    print(f"\nsimple setting, {args.seeds} seeds, NUTS {args.chains} x {args.draws} (+{args.tune} tune), "
          f"sampler {args.sampler}; shared 2-core machine under contention (times inflated)")
    table(results, names)


if __name__ == "__main__":
    main()
