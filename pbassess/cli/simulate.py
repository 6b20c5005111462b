"""``pbassess simulate``: replay active assessment on a fully labeled pool.

::

    pbassess simulate DATA --target least-accurate|most-accurate|most-miscalibrated|highest-cost|estimation
        --strategy NAME[,NAME...] [--prior uniform|informed|eb] [--pseudocount X] [--top-m M] [--runs R]
        [--log-every L] [--seed S] [--budget B] [--batch-size b] [--bins NB] [--cost-matrix FILE|people|superclass]
        [--models NAME] [--threshold T] [--out DIR] [--json]

DATA is a registered name or a prediction file (top-1 form is enough: predicted class,
probability, true label). A progress bar goes to stderr. ``--json`` prints one object::

    {"target": ..., "top_m": m, "log_every": L, "seconds": s, "compile_seconds": c,
     "strategies": {"<name>": {"labels_to_mrr": fraction, "mrr": [...], "success": [...]}}}

where ``mrr[i]``/``success[i]`` are run averages after ``(i + 1) * L`` labels, ``seconds`` is the
wall time of the runs and ``compile_seconds`` the one-time compilation (or cache load).
``--out DIR`` writes ``simulation.nc`` (the full Dataset), ``labels_to_mrr.csv`` and
``active.png`` (MRR curves, success curves, label efficiency).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

from pbassess.constants import DEFAULT_BINS, DEFAULT_PSEUDOCOUNT
from pbassess.errors import ConfigError

__all__ = ["register", "run"]

_TARGETS = ("least-accurate", "most-accurate", "most-miscalibrated", "highest-cost", "estimation")


def register(subparsers: Any) -> None:
    """Add the ``simulate`` subcommand."""
    p = subparsers.add_parser(
        "simulate", help="replay active assessment strategies on a fully labeled pool",
        description="Simulate active Bayesian assessment (Ji et al., 2021): R runs of each strategy label the "
                    "pool one item at a time; report MRR, success rate and labels to MRR 0.99.",
    )
    p.add_argument("data", metavar="DATA", help="a registered name (pbassess data list) or a prediction file")
    p.add_argument("--target", default="least-accurate", choices=_TARGETS, help="what to look for")
    p.add_argument("--strategy", required=True, metavar="NAME[,NAME...]",
                   help="random-item, random-arm, ts, ttts, mpts, bayes-ucb, epsilon-greedy (and greedy)")
    p.add_argument("--prior", default="uniform", choices=("uniform", "informed", "eb"),
                   help="prior of every arm (eb: empirical Bayes across classes, accuracy targets)")
    p.add_argument("--pseudocount", type=float, default=DEFAULT_PSEUDOCOUNT, metavar="X", help="prior strength")
    p.add_argument("--top-m", type=int, default=1, metavar="M", help="size of the sought set of classes")
    p.add_argument("--runs", type=int, default=100, metavar="R", help="independent replicate runs")
    p.add_argument("--log-every", type=int, default=100, metavar="L", help="evaluate after every L labels")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="the one seed of every run")
    p.add_argument("--budget", type=int, default=None, metavar="B", help="labels per run (default: whole pool)")
    p.add_argument("--batch-size", type=int, default=1, metavar="b", help="picks per round (labeling team)")
    p.add_argument("--bins", type=int, default=DEFAULT_BINS, help="confidence bins inside each class (ECE)")
    p.add_argument("--cost-matrix", default=None, metavar="FILE|people|superclass",
                   help="K x K cost matrix (.npy, or text/CSV; rows predicted, columns true), or the paper's "
                        "CIFAR-100 matrices 'people' / 'superclass'; default 0-1")
    p.add_argument("--models", default=None, metavar="NAME", help="classifier column of a binary-score CSV")
    p.add_argument("--threshold", type=float, default=None, metavar="T", help="decision threshold of binary scores")
    p.add_argument("--out", default=None, metavar="DIR", help="write the Dataset, table and figure here")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.set_defaults(func=run)


def _load_cost(path: str | None, classes) -> np.ndarray | None:
    if path is None:
        return None
    if path in ("people", "superclass"):
        from pbassess.stats.cost import people_cost_matrix, superclass_cost_matrix

        return (people_cost_matrix if path == "people" else superclass_cost_matrix)(list(classes))
    f = Path(path)
    if not f.exists():
        raise ConfigError(f"--cost-matrix: file not found: {f}")
    try:
        if f.suffix == ".npy":
            return np.load(f)
        return np.loadtxt(f, delimiter="," if f.suffix == ".csv" else None)
    except ValueError as exc:
        raise ConfigError(f"--cost-matrix: {f} is not a numeric matrix ({exc})") from None


def run(args: argparse.Namespace) -> int:
    """Run the simulation described by the parsed arguments."""
    from pbassess.active.experiment import simulate
    from pbassess.active.strategies import StrategyOptions
    from pbassess.cli import emit_json
    from pbassess.data.registry import load_data

    options: dict[str, Any] = {}
    if args.models is not None:
        options["model"] = args.models
    if args.threshold is not None:
        options["threshold"] = args.threshold
    pred = load_data(args.data, **options)
    sys.stderr.write(f"pbassess simulate: {pred.name}, {pred.n_items} items, {pred.n_classes} classes; "
                     f"compiling the engine (cached after the first run)...\n")
    sys.stderr.flush()
    ds = simulate(
        pred, args.target, args.strategy, args.prior, pseudocount=args.pseudocount, top_m=args.top_m,
        runs=args.runs, log_every=args.log_every, budget=args.budget, seed=args.seed, bins=args.bins,
        cost=_load_cost(args.cost_matrix, pred.classes), options=StrategyOptions(batch_size=args.batch_size), progress=True,
    )
    from pbassess.active.experiment import labels_to_mrr_table

    table = labels_to_mrr_table(ds)
    prior = str(ds["prior"].values[0])
    strategies = {}
    for s in ds["strategy"].values:
        sel = ds.sel(strategy=s, prior=prior)
        strategies[str(s)] = {
            "labels_to_mrr": float(table.sel(strategy=s, prior=prior)),
            "mrr": sel["mrr"].mean("run").values.round(6).tolist(),
            "success": sel["success"].mean("run").values.round(6).tolist(),
        }
    if args.out:
        _write_outputs(ds, table, Path(args.out))
    if args.json:
        emit_json({
            "target": args.target, "top_m": int(args.top_m), "log_every": int(args.log_every),
            "seconds": float(ds["seconds"].sum()), "compile_seconds": float(ds.attrs["compile_seconds"]),
            "strategies": strategies,
        })
    else:
        print(f"{pred.name}: {ds.attrs['direction']} {ds.attrs['metric']}, top-{args.top_m} "
              f"(true: {ds.attrs['true_top']}), prior {prior} (pseudocount {args.pseudocount:g}), "
              f"{args.runs} runs")
        print(f"{'strategy':<16s} {'labels to MRR 0.99':>20s} {'MRR @10%':>9s} {'success @10%':>13s}")
        tenth = min(int(np.searchsorted(ds['fraction'].values, 0.1)), ds.sizes['step'] - 1)
        for name, row in strategies.items():
            frac = row["labels_to_mrr"]
            shown = "never" if frac != frac else f"{frac:.1%}"
            print(f"{name:<16s} {shown:>20s} {row['mrr'][tenth]:9.3f} {row['success'][tenth]:13.2f}")
        print(f"runs: {float(ds['seconds'].sum()):.2f} s, compile: {ds.attrs['compile_seconds']:.2f} s"
              + (f"; written to {args.out}" if args.out else ""))
    return 0


def _write_outputs(ds, table, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pbassess.plots.active import plot_active

    out.mkdir(parents=True, exist_ok=True)
    ds.to_netcdf(out / "simulation.nc", engine="h5netcdf")
    table.to_dataframe().reset_index().to_csv(out / "labels_to_mrr.csv", index=False)
    fig = plot_active(ds)
    fig.savefig(out / "active.png", dpi=120)
    plt.close(fig)
