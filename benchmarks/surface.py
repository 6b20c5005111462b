"""Accuracy-surface estimators on the ACS employment set (real data, 277,677 people) and on a
surface whose confidence is miscalibrated by attribute (known truth).

Arms (``--data acs``): the combinations of SEX, DIS, NATIVITY, DEAR, DEYE, DREM, MIG, CIT, MAR,
RAC1P (2,554 non-empty arms). Truth: each arm's accuracy from all labels. For each label budget
(default 500 / 2,000 / 10,000 random labels) and seed, every estimator is fitted on the kept
labels and scored on the arms with at least 50 items (296 arms): macro MSE, MSE on the 50 worst
arms, micro (support-weighted) MSE, MSE on the 50 least frequent arms, each raw and minus the
truth's own sampling variance t (1 - t) / support; plus fit seconds (wall, and ``cpu``: this
process's CPU seconds over all its threads, the figure to read on a contended machine), max
R-hat, min bulk ESS and divergences. Under each row with posterior draws (and the confidence's, a
point) the share of scored arms whose truth lies in its 94% HDI and the HDIs' mean width
(:func:`pbassess.surface.evaluate.interval_coverage`; for an empirical truth the HDI of the pool's
own accuracy, the arm's unlabeled items drawn from each draw; ``--no-coverage`` skips it).

``--data miscalibrated``: :func:`pbassess.surface.synthetic.miscalibrated_surface` (100,000
items, 8 binary attributes, 256 arms; the confidence is calibrated item by item except on 3
attribute combinations, over-confident by 0.05-0.2); truth = each arm's known accuracy (no
sampling noise: the ``-c`` columns equal the raw ones); scored on arms with >= 50 items.
``--data digits-shift``: the built-in digits-shift set, arms = environments (7), truth from all
labels, every labeled arm scored.

Estimators: ``confidence`` is the label-free baseline (each arm's mean model confidence);
``anchored`` (= ``additive+conf``, the grid's name) the confidence-anchored additive model
(``covariate="confidence"``: calibrated confidence + residual effects that can shrink to zero), its
posterior alone (``stack_confidence=False``); ``anchored+stack`` the anchored fit stacked with the
confidence, ``fit_surface``'s default for the anchored model on a pool (``stack_confidence=True``: when the
fit's PSIS-LOO ELPD on the labeled items exceeds the confidence's by more than 4, a fraction, the
confidence's stacking weight, of the accuracy draws becomes the confidence model's, the fit's draws
moved to the arm's mean confidence; else all of them: :mod:`pbassess.surface.stacking`; listed after ``anchored`` it stacks that row's fit, its seconds
include the fit's; the weights and the ELPD difference are printed below its row);
``anchored-indicator`` the same with a coefficient per level and per pair cell
(``model_options={"coding": "indicator"}``); ``anchored-loose`` the indicator design with residual
scales twice the defaults (``main_scale=0.1, interaction_scale=0.05``: the option set for subgroups
that are off) and ``anchored-loose+stack`` it stacked (after ``anchored-loose``, that row's fit);
``additive+linconf`` the earlier additive model with the confidence as a linear covariate
(``covariate="confidence-linear"``); ``betagp-slp+anchor`` and ``berngp+anchor`` BetaGP-SLP and
BernGP with the anchored mean function; ``additive(advi)`` the additive model's ADVI fast path, printed with its error against
NUTS (RMS gap of the posterior means on the scored arms, on arms with < 5 labels and on the 50
least frequent scored arms, and the median ratio of posterior sds ADVI / NUTS). ``--first-seed``
lets seeds run in parallel jobs.

Run: ``PBASSESS_DATA_DIR=/work/shared/data python benchmarks/surface.py [--data acs] [--budgets
500,2000,10000] [--seeds 1] [--estimators ...] [--draws N --tune 500 --chains 4]`` (the
defaults are the surface fit's own: 4 chains x 250 draws, 750 for the anchored model, after 500
tuning steps; a GP estimator whose arms are a categorical grid, exact in the grid eigenbasis, 4 x 1,000
after 1,000 at target_accept 0.95).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

# a script in benchmarks/ named like a package (coverage.py) would shadow it: drop this folder from the path
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from pbassess import load_data  # noqa: E402
from pbassess.grid.surface_cells import LOOSE_ANCHORED_OPTIONS  # noqa: E402
from pbassess.surface import count_arms, fit_surface, hide_labels  # noqa: E402
from pbassess.surface.evaluate import interval_coverage, surface_errors, truth_from_pool  # noqa: E402
from pbassess.surface.stacking import compare_with_confidence, stack_accuracy_draws  # noqa: E402

ATTRIBUTES = ["SEX", "DIS", "NATIVITY", "DEAR", "DEYE", "DREM", "MIG", "CIT", "MAR", "RAC1P"]
ESTIMATORS = {
    "confidence": None,
    "cpredictor": ("cpredictor", {}),
    "beta-i": ("beta-i", {}),
    "additive": ("additive", {}),
    "anchored": ("additive", {"covariate": "confidence", "stack_confidence": False}),
    "additive+conf": ("additive", {"covariate": "confidence", "stack_confidence": False}),
    "anchored+stack": ("additive", {"covariate": "confidence", "stack_confidence": True}),
    "anchored-indicator": ("additive", {"covariate": "confidence", "model_options": {"coding": "indicator"},
                                        "stack_confidence": False}),
    "anchored-loose": ("additive", {"covariate": "confidence", "model_options": LOOSE_ANCHORED_OPTIONS,
                                    "stack_confidence": False}),
    "anchored-loose+stack": ("additive", {"covariate": "confidence", "model_options": LOOSE_ANCHORED_OPTIONS,
                                      "stack_confidence": True}),
    "additive+linconf": ("additive", {"covariate": "confidence-linear"}),
    "additive(advi)": ("additive", {"inference": "advi"}),
    "betagp-slp": ("betagp-slp", {}),
    "betagp-slp+anchor": ("betagp-slp", {"covariate": "confidence"}),
    "betagp-sl": ("betagp-sl", {}),
    "betagp": ("betagp", {}),
    "berngp": ("berngp", {}),
    "berngp+anchor": ("berngp", {"covariate": "confidence"}),
}


def print_row(budget: int, seed: int, name: str, e: dict, seconds: float, rhat: float, divergences: int,
              ess: float = float("nan"), cpu: float = float("nan")) -> None:
    """One table row (the same in process and from a grid)."""
    print(f"{budget:6d} {seed:4d} {name:18s} {e['macro_mse']:8.5f} {e.get('macro_mse_corrected', e['macro_mse']):8.5f} "
          f"{e['worst_mse']:8.5f} {e['micro_mse']:8.5f} {e['rare_mse']:8.5f} "
          f"{e.get('rare_mse_corrected', e['rare_mse']):8.5f} {seconds:6.1f} {cpu:6.1f} {rhat:6.3f} {ess:6.0f} "
          f"{divergences:4d}", flush=True)


def print_gap(mean: np.ndarray, nuts_mean: np.ndarray, keep: np.ndarray, rare: np.ndarray,
              var: np.ndarray | None = None, nuts_var: np.ndarray | None = None,
              pool_n: np.ndarray | None = None) -> None:
    """ADVI against NUTS: RMS gap of the posterior means on scored arms, on arms with few labels and
    on the 50 least frequent scored arms; median ratio of posterior sds (ADVI / NUTS)."""
    gap = np.sqrt(np.mean((mean[keep] - nuts_mean[keep]) ** 2))
    gap_rare = np.sqrt(np.mean((mean[rare] - nuts_mean[rare]) ** 2)) if rare.any() else float("nan")
    line = f"{'':12s}ADVI vs NUTS posterior means: RMS gap {gap:.4f} on scored arms, {gap_rare:.4f} on arms with < 5 labels"
    if pool_n is not None:
        scored = np.flatnonzero(keep)
        rarest = scored[np.argsort(pool_n[scored], kind="stable")[:50]]
        line += f", {np.sqrt(np.mean((mean[rarest] - nuts_mean[rarest]) ** 2)):.4f} on the 50 rarest scored arms"
    if var is not None and nuts_var is not None:
        ratio = np.sqrt(var / nuts_var)
        line += (f"; posterior sd ADVI/NUTS median {np.median(ratio[keep]):.2f} (scored), "
                 f"{np.median(ratio[rare]) if rare.any() else float('nan'):.2f} (< 5 labels)")
    print(line, flush=True)


def print_coverage(draws: np.ndarray, truth: np.ndarray, support: np.ndarray, arms, min_support: float,
                   empirical: bool, seed: int) -> None:
    """How often the row's 94% HDIs hold the truth on the scored arms (``interval_coverage``: for an
    empirical truth, the HDI of the pool's own accuracy, its unlabeled items drawn from each draw)."""
    c = interval_coverage(draws, truth, support, min_support=min_support, truth_is_empirical=empirical,
                          labeled=arms.n, correct=arms.correct, seed=seed)
    print(f"{'':12s}94% HDI coverage {c['coverage']:.3f} on {c['n_arms_scored']} scored arms "
          f"(mean width {c['mean_width']:.4f})", flush=True)


def run_on_grid(args: argparse.Namespace) -> None:
    """The same table from surface cells run through pbassess.grid.run_grid (e.g. on a LocalCluster)."""
    import tempfile

    from pbassess.grid import SurfaceCell, run_grid
    from pbassess.grid.surface_cells import parse_estimator

    names = args.estimators.split(",")
    for name in names:  # a grid cell names its estimator; it must mean what ESTIMATORS means here
        if parse_estimator(name) != (ESTIMATORS[name] or (None, {})):
            raise SystemExit(f"--scheduler: {name!r} means {ESTIMATORS[name]} here but {parse_estimator(name)} "
                             "in pbassess.grid.surface_cells.parse_estimator")
    cells = [SurfaceCell("acs-employment", tuple(ATTRIBUTES), name, budget=int(budget), seed=seed, draws=args.draws or 250,
                         tune=args.tune or 500, chains=args.chains, min_support=args.min_support)
             for budget in args.budgets.split(",") for seed in range(args.seeds) for name in names]
    with tempfile.TemporaryDirectory() as tmp:
        merged = run_grid(cells, args.out or tmp, scheduler=args.scheduler, progress=False)
    nuts_mean = {}
    for i, cell in enumerate(cells):
        row = merged.isel(cell=i)
        n_arms = int(np.isfinite(row["arm_pool"].values).sum())
        mean = row["arm_mean"].values[:n_arms]
        errors = {k: float(row[k].values) for k in ("macro_mse", "macro_mse_corrected", "worst_mse", "micro_mse",
                                                     "rare_mse", "rare_mse_corrected")}
        print_row(cell.budget, cell.seed, cell.estimator, errors, float(row["seconds"].values),
                  float(row["max_rhat"].values), int(row["divergences"].values))
        if cell.estimator == "additive":
            nuts_mean[cell.budget, cell.seed] = mean
        if cell.estimator == "additive(advi)" and (cell.budget, cell.seed) in nuts_mean:
            print_gap(mean, nuts_mean[cell.budget, cell.seed], row["arm_pool"].values[:n_arms] >= args.min_support,
                      row["arm_labels"].values[:n_arms] < 5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budgets", default="500,2000,10000")
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--estimators", default="confidence,anchored,cpredictor,beta-i,additive,betagp-slp,berngp")
    parser.add_argument("--draws", type=int, default=0, help="draws per chain (default 0: each estimator's own "
                        "default, 250, or 750 for the anchored model)")
    parser.add_argument("--tune", type=int, default=0, help="tuning steps per chain (default 0: each estimator's own, "
                        "500, or 1,000 for a GP estimator in the grid eigenbasis)")
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--target-accept", type=float, default=0.0,
                        help="NUTS target acceptance (default 0: each estimator's own, 0.95 for the anchored model)")
    parser.add_argument("--min-support", type=float, default=50)
    parser.add_argument("--no-coverage", dest="coverage", action="store_false",
                        help="skip the 94%% HDI coverage line under each row")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="run the (budget, seed, estimator) cells through pbassess.grid.run_grid: 'local:N' "
                             "(a LocalCluster of N worker processes) or a scheduler address (default: in process)")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="with --scheduler: the grid's folder (finished cells are skipped; default: temporary)")
    parser.add_argument("--data", choices=["acs", "miscalibrated", "digits-shift"], default="acs")
    args = parser.parse_args()
    attributes = ATTRIBUTES
    empirical = True
    if args.data == "acs":
        preds = load_data("acs-employment")
        full = count_arms(preds, ATTRIBUTES)
        truth = truth_from_pool(full)
        label = "ACS employment"
    elif args.data == "digits-shift":
        preds = load_data("digits-shift")
        attributes = ["environment"]
        full = count_arms(preds, attributes)
        truth = truth_from_pool(full)
        label = "digits-shift by environment"
    else:
        from pbassess.surface.synthetic import miscalibrated_surface

        surface = miscalibrated_surface(100_000, 8, seed=2021)
        preds, attributes, empirical = surface.preds, list(surface.attributes), False
        full = count_arms(preds, attributes)
        truth = surface.arm_truth(full.values)
        rules = "; ".join(" & ".join(f"a{i}={v}" for i, v in rule) + f" +{shift:.2f}" for rule, shift in surface.rules)
        label = f"miscalibrated synthetic surface (over-confident: {rules})"
    support = full.pool_n if not empirical else full.n
    print(f"{label}: {full.n_arms} arms, {int((support >= args.min_support).sum())} with >= "
          f"{args.min_support:.0f} items; NUTS {args.chains} x {args.draws or 'default'} (+{args.tune or 'default'} tune); "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start (other work inflates `sec`; "
          "`cpu` counts this process only)", flush=True)
    header = (f"{'labels':>6s} {'seed':>4s} {'estimator':18s} {'macro':>8s} {'macro-c':>8s} {'worst50':>8s} "
              f"{'micro':>8s} {'rare50':>8s} {'rare-c':>8s} {'sec':>6s} {'cpu':>6s} {'rhat':>6s} {'ess':>6s} {'div':>4s}")
    print(header, flush=True)
    if args.scheduler:
        if args.data != "acs":
            raise SystemExit("--scheduler runs the ACS cells only")
        run_on_grid(args)
        return
    sample_kwargs = {"chains": args.chains, **({"draws": args.draws} if args.draws else {}),
                     **({"tune": args.tune} if args.tune else {}),
                     **({"target_accept": args.target_accept} if args.target_accept else {})}
    for budget in [int(b) for b in args.budgets.split(",")]:
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            kept = hide_labels(preds, budget, seed=seed)
            arms = count_arms(kept, attributes)
            nuts_mean = nuts_var = None
            fits: dict = {}  # an anchored row's fit, for its "+stack" row
            for name in args.estimators.split(","):
                start, cpu_start = time.perf_counter(), time.process_time()
                diag: dict = {}
                draws = None
                if ESTIMATORS[name] is None:
                    mean = arms.confidence
                    draws = np.broadcast_to(np.asarray(arms.confidence, float), (1000, arms.n_arms))  # a point
                elif name.endswith("+stack") and name.removesuffix("+stack") in fits:  # that row's fit, not a refit
                    r, fit_seconds, fit_cpu = fits[name.removesuffix("+stack")]
                    comparison = compare_with_confidence(r.idata, arms)
                    tree = stack_accuracy_draws(r.idata, arms.confidence, comparison.weight)
                    mean = tree["posterior"]["accuracy"].mean(("chain", "draw")).to_numpy()
                    draws = tree["posterior"]["accuracy"].to_numpy().reshape(-1, arms.n_arms)
                    diag = {**(r.diagnostics or {}), **comparison.as_dict()}
                    start, cpu_start = start - fit_seconds, cpu_start - fit_cpu
                else:
                    estimator, options = ESTIMATORS[name]
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        r = fit_surface(arms, estimator=estimator, seed=seed, sample_kwargs=sample_kwargs, **options)
                    mean, diag = r.mean, r.diagnostics or {}
                    if r.idata is not None and "accuracy" in r.idata["posterior"]:
                        draws = r.idata["posterior"]["accuracy"].to_numpy().reshape(-1, arms.n_arms)
                    if name + "+stack" in ESTIMATORS:
                        fits[name] = (r, time.perf_counter() - start, time.process_time() - cpu_start)
                    if name == "additive":
                        nuts_mean, nuts_var = mean, r.var
                seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
                e = surface_errors(mean, truth, support, min_support=args.min_support, truth_is_empirical=empirical)
                rhat, ess = diag.get("max_rhat"), diag.get("min_ess_bulk")
                print_row(budget, seed, name, e, seconds, rhat if rhat is not None else float("nan"),
                          int(diag.get("divergences") or 0), ess if ess is not None else float("nan"), cpu)
                if "confidence_weight" in diag:
                    print(f"{'':12s}confidence weight {diag['confidence_weight']:.2f} (stacking weight "
                          f"{diag['confidence_stacking_weight']:.2f}), ELPD anchored - confidence "
                          f"{diag['elpd_diff_vs_confidence']:+.1f} +- {diag['elpd_diff_vs_confidence_se']:.1f} "
                          f"over {diag['stacking_items']} labels (max Pareto k {diag['stacking_max_pareto_k']:.2f})",
                          flush=True)
                if diag.get("widened_scales"):
                    print(f"{'':12s}widened: the default residual scales' fit had ELPD "
                          f"{diag['default_scales_elpd_diff_vs_confidence']:+.1f} over the confidence (max R-hat "
                          f"{diag.get('default_scales_max_rhat', float('nan')):.3f}, "
                          f"{diag.get('default_scales_divergences', 0)} divergences); the row is the refit with "
                          "the wider prior, its seconds both fits'", flush=True)
                if draws is not None and args.coverage:
                    print_coverage(draws, truth, support, arms, args.min_support, empirical, seed)
                if name == "additive(advi)" and nuts_mean is not None:
                    print_gap(mean, nuts_mean, full.pool_n >= args.min_support, arms.n < 5, r.var, nuts_var, full.pool_n)


if __name__ == "__main__":
    main()
