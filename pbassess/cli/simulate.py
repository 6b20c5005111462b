"""``pbassess simulate``: replay active assessment on a fully labeled pool.

::

    pbassess simulate DATA --target least-accurate|most-accurate|most-miscalibrated|highest-cost|estimation
        --strategy NAME[,NAME...] [--prior uniform|informed|eb[,...]] [--pseudocount X] [--top-m M] [--runs R]
        [--log-every L] [--budget N] [--picks-per-round N] [--bins B]
        [--cost-matrix zero-one|people|superclass|FILE] [data, seed, interval, output and progress options]

``--prior adaptive`` and ``--target estimation`` run their own replays: an option such a path does
not use (``--pseudocount``, ``--picks-per-round``, ``--bins``, ``--cost-matrix``, ``--out``, ``--plot``;
``--ci-prob`` with the adaptive prior; ``--prior``, ``--top-m`` and ``--log-every`` with estimation) is
an error naming it, never ignored.

DATA is a registered name or a prediction file (top-1 form is enough: predicted class,
probability, true label). A progress bar goes to stderr. ``--json`` prints one object::

    {"target": ..., "top_m": m, "log_every": L, "seconds": s, "compile_seconds": c,
     "strategies": {"<name>": {"labels_to_mrr": fraction, "labels_to_mrr_interval": [lo, hi],
                               "mrr": [...], "success": [...], "agreement": [...]}},
     "priors": {"<prior>": {...same per prior...}},
     "metric": ..., "inference": "conjugate", "ci_prob": P, "diagnostics": {"ok": true, ...}, "sentence": ..., "seed": S}

where ``mrr[i]``/``success[i]``/``agreement[i]`` are run averages after ``(i + 1) * L`` labels
(``agreement``: the share of the true top-m set among the estimated top m; ``strategies``:
the first prior), ``seconds`` is the wall time of the runs and ``compile_seconds`` the one-time
compilation (or cache load). ``--out DIR`` writes ``simulation.nc`` (the result; read it back
with ``pbassess.load_result``), ``labels_to_mrr.csv``, ``report.md`` and ``active.png`` (MRR curves, success
curves, label efficiency).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pbassess.cli import emit_json
from pbassess.cli import options as opt
from pbassess.constants import DEFAULT_BINS, DEFAULT_PSEUDOCOUNT
from pbassess.errors import PbassessError

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``simulate`` subcommand."""
    # the active engine loads with this command only
    from pbassess.active.model import PRIORS, TARGETS
    from pbassess.active.strategies import STRATEGIES

    p = opt.add_command(
        subparsers, "simulate", help="replay active assessment strategies on a fully labeled pool",
        description="Simulate active Bayesian assessment (Ji et al., 2021): R runs of each strategy label the "
                    "pool one item at a time; report MRR, success rate and labels to MRR 0.99.",
        examples=("pbassess simulate digits-logreg --strategy ts,random-item --runs 10 --seed 1 --json",
                  "pbassess simulate digits-logreg --target most-miscalibrated --strategy ts --prior informed "
                  "--runs 10 --seed 1 --out simulate-out"),
    )
    opt.add_data(p)
    p.add_argument("--target", default="least-accurate", choices=TARGETS, help="what to look for")
    p.add_argument("--strategy", required=True, metavar="NAME[,NAME...]",
                   help=f"comma-separated strategies: {', '.join(STRATEGIES)}; for --target estimation also "
                        "uncertainty (labels where the model is unsure, inverse-probability weighted)")
    p.add_argument("--prior", default=None, metavar="NAME[,NAME...]",
                   help=f"prior of every arm, or several comma-separated: {', '.join(PRIORS)} "
                        "(eb: empirical Bayes across classes; accuracy targets and 0-1 cost), or adaptive (TS with the "
                        "confidence-to-accuracy prior learned online; simulation only); default uniform")
    p.add_argument("--pseudocount", type=opt.positive_number("--pseudocount"), default=None, metavar="PC",
                   help=f"prior strength, > 0 (default {DEFAULT_PSEUDOCOUNT:g}; not with --prior adaptive or "
                        "--target estimation)")
    p.add_argument("--top-m", type=opt.checked_number("--top-m", integer=True, minimum=1), default=None, metavar="M",
                   help="size of the sought set of classes (default 1; not with --target estimation)")
    p.add_argument("--runs", type=opt.checked_number("--runs", integer=True, minimum=1), default=100, metavar="R",
                   help="independent replicate runs (default 100)")
    p.add_argument("--log-every", type=opt.checked_number("--log-every", integer=True, minimum=1), default=None,
                   metavar="L", help="evaluate after every L labels (default 100; not with --target estimation)")
    p.add_argument("--budget", type=opt.checked_number("--budget", integer=True, minimum=1), default=None, metavar="N",
                   help="labels per run (default: the whole pool; for --target estimation the budgets 100, 200, "
                        "500 and 1000 that fit in the pool)")
    picks = opt.checked_number("--picks-per-round", integer=True, minimum=1)
    p.add_argument("--picks-per-round", dest="batch_size", type=picks, default=None, metavar="N",
                   help="items picked per round from the same posterior, as for a labeling team (default 1; not "
                        "with --prior adaptive or --target estimation)")
    opt.add_deprecated_alias(p, "--batch-size", "--picks-per-round", "batch_size",
                             type=opt.checked_number("--batch-size", integer=True, minimum=1))
    p.add_argument("--bins", type=opt.checked_number("--bins", integer=True, minimum=1), default=None, metavar="B",
                   help=f"confidence bins inside each class for most-miscalibrated (default {DEFAULT_BINS})")
    opt.add_cost_matrix(p)
    opt.add_seed(p, "every run (the runs get independent streams from it)")
    opt.add_interval(p, "the interval of labels to MRR (a Wilson band on the expected MRR curve)")
    opt.add_output(p, "the result (simulation.nc), labels_to_mrr.csv, the figure and report.md")
    opt.add_quiet(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the simulation described by the parsed arguments."""
    from pbassess.active.experiment import simulate

    seed = opt.seed_value(args)
    # every estimation run goes to the estimation replay (the engine would read it as another target)
    if args.prior == "adaptive" or args.target == "estimation":
        from pbassess.cli.estimate import run_simulation  # ESTIM: adaptive prior, active estimation

        return run_simulation(args)
    _fill_defaults(args)
    pred = opt.load_data_args(args)
    result = simulate(
        pred, args.target, args.strategy, args.prior, pseudocount=args.pseudocount, top_m=args.top_m,
        runs=args.runs, log_every=args.log_every, budget=args.budget, seed=seed, bins=args.bins,
        cost_matrix=args.cost_matrix, batch_size=args.batch_size, ci_prob=opt.ci_prob_value(args),
        progress=False if (args.quiet or args.json) else None,
    )
    if args.out:
        _write_outputs(result, Path(args.out))
    opt.save_outputs(result, argparse.Namespace(out=None, plot=args.plot), "simulation")
    payload = result.to_json()
    payload.setdefault("seed", seed)
    if args.json:
        emit_json(payload)
    else:
        _print_table(result, args)
        print(f"seed {seed}")
    return 0


#: The defaults of the options that apply to some paths only (None on the parsed arguments = not given).
PATH_DEFAULTS: dict[str, Any] = {"prior": "uniform", "pseudocount": DEFAULT_PSEUDOCOUNT, "top_m": 1, "log_every": 100, "batch_size": 1,
                                 "bins": DEFAULT_BINS}


def _fill_defaults(args: argparse.Namespace) -> None:
    for dest, default in PATH_DEFAULTS.items():
        if getattr(args, dest, None) is None:
            setattr(args, dest, default)


def _print_table(result, args: argparse.Namespace) -> None:
    import numpy as np

    opts = result.options
    table = result.summary()
    pct = int(round(100 * result.ci_prob))
    print(f"{opts['name']}: {opts['direction']} {opts['metric']}, top-{opts['top_m']} (true: {opts['true_top']}), "
          f"pseudocount {opts['pseudocount']:g}, {result.posterior.sizes['run']} runs")
    several = table["prior"].nunique() > 1
    print(f"{'strategy':<28s} {'labels to MRR 0.99':>20s} {f'({pct}% over runs)':>16s} {'MRR @10%':>9s} "
          f"{'success @10%':>13s} {'agreement @10%':>15s}")
    for row in table.itertuples():
        name = f"{row.strategy} ({row.prior})" if several else row.strategy
        frac = row.labels_to_mrr
        shown = "never" if frac != frac else f"{frac:.1%}"
        low, high = row.labels_to_mrr_low, row.labels_to_mrr_high
        interval = "-" if not np.isfinite([low, high]).all() else f"{low:.0%}-{high:.0%}"
        print(f"{name:<28s} {shown:>20s} {interval:>16s} {row.mrr_at_10pct:9.3f} {row.success_at_10pct:13.2f} "
              f"{row.agreement_at_10pct:15.2f}")
    print(result.sentence())
    print(f"runs: {float(result.counts['seconds'].sum()):.2f} s, compile: {opts['compile_seconds']:.2f} s"
          + (f"; written to {args.out}" if args.out else ""))


def _write_outputs(result, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pbassess._atomic import atomic_path, atomic_write_bytes, os_failure
    from pbassess.active.experiment import labels_to_mrr_table
    from pbassess.cli.output import prepare_out_dir
    from pbassess.report import markdown_table

    out = prepare_out_dir(out)
    try:
        result.save(out / "simulation.nc")
        atomic_write_bytes(out / "report.md", f"# pbassess simulate\n\n{result.sentence()}\n\n"
                                              f"{markdown_table(result.summary())}\n\n![active](active.png)\n")
        atomic_write_bytes(out / "labels_to_mrr.csv",
                           labels_to_mrr_table(result).to_dataframe().reset_index().to_csv(index=False))
        fig = result.plot()
        try:
            with atomic_path(out / "active.png") as tmp:
                fig.savefig(tmp, dpi=120)
        finally:
            plt.close(fig)
    except OSError as exc:
        raise PbassessError(f"--out: could not write to {out}: {os_failure(exc)}") from None
