"""``pbassess demo``: assess the built-in default data end to end and write a report.

Runs the accuracy, calibration and cost assessments of the built-in digits classifier
(``digits-logreg``, no network and no ``../shared`` needed) with the exact conjugate inference and
``--seed`` (default: a fresh seed, recorded in the report), and writes into ``--out`` (default ``reports/demo``): one netCDF file per
assessment, their figures (PNG) and ``report.md`` with the summary tables, the sentences and
links to the figures. It prints the sentences and the path of the report.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from pbassess.cli import options as opt
from pbassess.constants import DEFAULT_DRAWS

__all__ = ["register", "run", "run_demo"]

DEMO_SEED = 20240601


def register(subparsers: Any) -> None:
    """Add the ``demo`` subcommand."""
    p = opt.add_command(
        subparsers, "demo", help="assess the built-in data (accuracy, calibration, cost) and write a report",
        description="Assess the built-in default prediction set end to end: accuracy per predicted class, "
                    "calibration and expected cost, with figures, netCDF files and report.md.",
        examples=("pbassess demo --out demo-out --seed 1", "pbassess demo --out demo-out --quiet"),
    )
    p.add_argument("--out", default="reports/demo", metavar="DIR",
                   help="write the results (.nc), figures and report.md into this folder (default reports/demo)")
    opt.add_seed(p)
    opt.add_quiet(p)
    p.set_defaults(func=run)


def run_demo(out_dir: str | Path = "reports/demo", *, data: str | None = None, seed: int = DEMO_SEED,
             draws: int = DEFAULT_DRAWS) -> dict[str, Any]:
    """Assess accuracy, calibration and cost of a data set and write the report.

    Parameters
    ----------
    out_dir : path
        Folder for the figures, netCDF files and ``report.md``.
    data : str, optional
        A registered name or file (default: the built-in default data).
    seed : int
        Seed of the Monte Carlo draws (each assessment gets its own stream from it).
    draws : int
        Posterior draws per chain (4 chains) of each assessment.

    Returns
    -------
    dict
        ``results`` (metric -> result), ``saved`` (metric -> files), ``report`` (Path),
        ``seconds`` (wall time of the assessments and files).

    Examples
    --------
    >>> import tempfile
    >>> out = run_demo(tempfile.mkdtemp(), draws=500)
    >>> sorted(out["results"]), out["report"].name
    (['accuracy', 'calibration', 'cost'], 'report.md')
    """
    import numpy as np

    from pbassess.assess.accuracy import assess_accuracy
    from pbassess.assess.calibration import assess_calibration
    from pbassess.assess.cost import assess_confusion
    from pbassess.data.registry import default_name, list_models, load_data
    from pbassess.report import save_result, write_report

    start = time.perf_counter()
    name = data or default_name()
    preds = load_data(name)
    streams = np.random.SeedSequence(seed).spawn(3)
    rngs = [np.random.default_rng(s) for s in streams]
    results = {
        "accuracy": assess_accuracy(preds, inference="conjugate", draws=draws, seed=rngs[0]),
        "calibration": assess_calibration(preds, inference="conjugate", draws=draws, seed=rngs[1]),
        "cost": assess_confusion(preds, inference="conjugate", draws=draws, seed=rngs[2]),
    }
    out = Path(out_dir)
    saved = {metric: save_result(result, out) for metric, result in results.items()}
    cards = {c.name: c for c in list_models()}
    about = f"`{name}`: {cards[name].task}. {cards[name].provenance}" if name in cards else f"`{name}`"
    d = preds.describe()
    intro = (
        f"Data: {about}\n\n"
        f"{d['n_items']:,} items, {d['n_classes']} classes, {d['n_labeled']:,} labeled "
        f"(observed accuracy {d['accuracy_labeled']:.4f}). All three assessments use the exact conjugate "
        f"posterior with the default priors (pseudocount {results['accuracy'].prior['pseudocount']:g}; uniform "
        f"for accuracy and cost) and 4 chains of {draws:,} exact draws, seed {seed}; intervals are "
        f"{100 * results['accuracy'].ci_prob:g}% highest-density intervals. Regenerate with "
        f"`pbassess demo --out {out} --seed {seed}`."
    )
    report = write_report(results, out, saved=saved, title=f"pbassess demo: {preds.name}", intro=intro)
    return {"results": results, "saved": saved, "report": report, "seconds": time.perf_counter() - start}


def run(args: argparse.Namespace) -> int:
    """Run ``pbassess demo``."""
    seed = opt.seed_value(args)
    with opt.progress(args):
        out = run_demo(args.out, seed=seed)
    for result in out["results"].values():
        print(result.sentence())
    print(f"report written to {out['report']}")
    print(f"seed {seed}")
    return 0
