"""``pbassess grid``: run an experiment grid described in a TOML file, resumably, in process or on dask.

::

    pbassess grid CONFIG.toml [--scheduler local|local:N|ADDRESS] [--out DIR] [--json]

Cells already stored in ``DIR/cells`` are skipped, so an interrupted grid resumes where it
stopped. The merged results go to ``DIR/grid.zarr``. A grid holds cells of one kind (``active``,
``estimation`` or ``surface``; see :mod:`pbassess.grid.kinds`). ``--json`` prints one object::

    {"out": DIR, "kind": kind, "n_cells": n, "computed": c, "skipped": s, "cells": [row, ...]}

with the rows of the kind: for ``active`` {"key", "dataset", "target", "top_m", "strategy",
"prior", "seed", "runs", "labels_to_mrr", "labels_to_mrr_interval": [lo, hi], "final_mrr",
"seconds"}; for ``estimation`` one row per cell and method ({"pool", "labels", "method",
"width", "coverage", "effective_labels", ...}); for ``surface`` one per cell ({"estimator",
"budget", "macro_mse", ..., "max_rhat", "divergences"}).
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``grid`` subcommand."""
    from pbassess.cli import options as opt

    p = opt.add_command(
        subparsers, "grid", help="run an experiment grid (TOML) in process or on a dask cluster",
        description="Run every cell of an experiment grid (active assessment: data sets x targets x strategies "
                    "x priors x seeds; estimation; or accuracy surfaces) not yet stored under --out, in this "
                    "process or on a dask cluster, and merge them into one Zarr store. Paths inside the grid "
                    "file are relative to the file. See pbassess.grid for the file format.",
        examples=("pbassess grid benchmarks/grids/smoke.toml --out grid-out --json",
                  "pbassess grid benchmarks/grids/estimation_smoke.toml --out grid-estimation-out"),
    )
    p.add_argument("config", metavar="CONFIG.toml", help="the grid file ([[experiment]] tables)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="'local' or 'local:N' (a local cluster of N worker processes), a scheduler address "
                        "such as tcp://host:8786, or nothing to run in this process "
                        "(default: $PBASSESS_DASK_SCHEDULER)")
    p.add_argument("--out", default="grid-results", metavar="DIR",
                   help="folder of the cells and the merged grid.zarr (default: grid-results)")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.set_defaults(func=run)


def _fmt(x: float) -> str:
    return "never" if not math.isfinite(x) else f"{100 * x:.0f}%"


def _print_rows(rows: list[dict[str, Any]]) -> None:
    """A Markdown table of estimation or surface rows (every field but the cell key)."""
    columns = [c for c in rows[0] if c != "key"]

    def cell(value: Any) -> str:
        if value is None:
            return ""
        return f"{value:.4g}" if isinstance(value, float) else str(value)

    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for r in rows:
        print("| " + " | ".join(cell(r[c]) for c in columns) + " |")


def run(args: argparse.Namespace) -> int:
    """Run the subcommand (returns the exit status)."""
    from pbassess.cli import emit_json
    from pbassess.grid import KINDS, done_cells, load_grid, run_grid

    cells = load_grid(args.config)
    skipped = len(done_cells(cells, args.out))
    merged = run_grid(cells, args.out, scheduler=args.scheduler, progress=None if not args.json else False)
    kind = cells[0].kind
    rows = KINDS[kind].rows(merged)
    if args.json:
        emit_json({"out": str(args.out), "kind": kind, "n_cells": len(cells), "computed": len(cells) - skipped,
                   "skipped": skipped, "cells": rows})
        return 0
    print(f"{len(cells)} {kind} cells ({len(cells) - skipped} computed, {skipped} already done); merged into "
          f"{args.out}/grid.zarr\n")
    if kind != "active":
        _print_rows(rows)
        sys.stdout.flush()
        return 0
    print("| data | target | m | strategy | prior | seed | runs | labels to MRR 0.99 | final MRR |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        lo, hi = r["labels_to_mrr_interval"]
        interval = "" if not math.isfinite(r["labels_to_mrr"]) else f" ({_fmt(lo)}-{_fmt(hi)})"
        print(f"| {r['dataset']} | {r['target']} | {r['top_m']} | {r['strategy']} | {r['prior']} | {r['seed']} "
              f"| {r['runs']} | {_fmt(r['labels_to_mrr'])}{interval} | {r['final_mrr']:.3f} |")
    sys.stdout.flush()
    return 0
