"""``pbassess assess``: the posterior accuracy, calibration or misclassification cost of one data set.

::

    pbassess assess DATA [--metric accuracy|calibration|cost] [--prior uniform|informed]
                         [--pseudocount PC] [--bins B] [--cost-matrix zero-one|people|superclass|FILE]
                         [--by predicted|true|GROUP] [--chunk-size N]
                         [data, inference, seed, interval, output, strict and progress options]

``DATA`` is a prediction file (any format of :mod:`pbassess.data.readers`) or a registered
name (``pbassess data list``). Without ``--json`` the command prints the result's sentence,
the summary table and the seed. ``--out DIR`` writes the figures (PNG), the posterior
(netCDF) and ``report.md``; ``--json`` prints exactly one JSON object, the result's
``to_json()`` with the ``seed``, and shows no progress bar. The shared options are those of
:mod:`pbassess.cli.options`. Bad input or options print one line on stderr and exit with
status 2; with ``--strict`` a fit that fails its diagnostics exits with status 3 (without it,
a warning is printed and the sentence says so).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from pbassess.cli import options as opt
from pbassess.cli.loading import LAZY_SUFFIXES, load_predictions  # noqa: F401  (public here too)
from pbassess.constants import DEFAULT_BINS, DEFAULT_DRAWS, DEFAULT_PSEUDOCOUNT
from pbassess.errors import ConfigError, PbassessError

__all__ = ["METRICS", "assess_predictions", "load_predictions", "read_cost_matrix", "register", "run"]

METRICS = ("accuracy", "calibration", "cost")
PRIORS = ("uniform", "informed")
NAMED_COSTS = ("zero-one", "people", "superclass")


EXAMPLES = ("pbassess assess digits-logreg --metric calibration --seed 1 --json",
            "pbassess assess digits-shift --by environment --seed 1 --out reports/digits-shift")


def register(subparsers: Any) -> None:
    """Add the ``assess`` subcommand."""
    p = opt.add_command(
        subparsers, "assess", fits=True, help="posterior accuracy, calibration or cost of a prediction set",
        description="Bayesian assessment of one prediction set: accuracy per predicted class, calibration "
                    "(reliability diagram and ECE) or expected misclassification cost.",
        examples=EXAMPLES,
    )
    opt.add_data(p)
    p.add_argument("--metric", default="accuracy", choices=METRICS, help="what to assess (default: accuracy)")
    p.add_argument("--prior", default=None, metavar="{uniform,informed}",
                   help="Beta/Dirichlet prior of accuracy and cost: uniform (default) or informed by the "
                        "model's own confidence")
    p.add_argument("--pseudocount", default=None, metavar="PC",
                   help=f"prior strength, a positive number (default {DEFAULT_PSEUDOCOUNT:g})")
    p.add_argument("--bins", default=None, metavar="B",
                   help=f"number of equal-width calibration bins (default {DEFAULT_BINS}; calibration only)")
    opt.add_inference(p, draws_default=f"{DEFAULT_DRAWS}")
    opt.add_seed(p)
    opt.add_interval(p)
    opt.add_output(p)
    opt.add_strict(p)
    opt.add_quiet(p)
    p.add_argument("--chunk-size", dest="batch_size", default=None, metavar="N",
                   help="Parquet or Zarr data: items read and counted per chunk (default: the reader's)")
    opt.add_deprecated_alias(p, "--batch-size", "--chunk-size", "batch_size")
    opt.add_cost_matrix(p)
    p.add_argument("--by", default=None, metavar="{predicted,true,GROUP}",
                   help="accuracy only: regions to compare, by predicted class (default), true class or a group column")
    p.set_defaults(func=run)


# ------------------------------------------------------------------------------ option parsing
def _choice(value: str | None, choices: tuple[str, ...], option: str, default: str) -> str:
    if value is None:
        return default
    if value not in choices:
        raise ConfigError(f"{option} must be one of {', '.join(choices)}, got {value!r}")
    return value


def _options(args: argparse.Namespace) -> dict[str, Any]:
    """Validate the command-line options into keyword arguments (ConfigError on bad ones)."""
    metric = _choice(args.metric, METRICS, "--metric", "accuracy")
    prior = _choice(args.prior, PRIORS, "--prior", "uniform")
    pseudocount = opt.number_value(args.pseudocount, "--pseudocount", default=DEFAULT_PSEUDOCOUNT)
    if pseudocount <= 0:
        raise ConfigError(f"--pseudocount must be positive, got {args.pseudocount}")
    bins = opt.number_value(args.bins, "--bins", integer=True, default=DEFAULT_BINS)
    if bins < 1:
        raise ConfigError(f"--bins must be at least 1, got {args.bins}")
    for option, value, wanted in (("--bins", args.bins, "calibration"), ("--cost-matrix", args.cost_matrix, "cost"),
                                  ("--by", args.by, "accuracy")):
        if value is not None and metric != wanted:
            raise ConfigError(f"{option} applies only to --metric {wanted} (this is --metric {metric})")
    if metric == "calibration" and prior != "uniform":
        raise ConfigError("--prior informed applies to accuracy and cost; calibration uses its own per-bin prior")
    batch_size = opt.number_value(args.batch_size, "--chunk-size", integer=True, minimum=1)
    return {"metric": metric, "prior": prior, "pseudocount": pseudocount, "bins": bins,
            "seed": opt.seed_value(args), "threshold": args.threshold, "models": args.models,
            "cost": args.cost_matrix or "zero-one", "by": args.by or "predicted",
            "ci_prob": opt.ci_prob_value(args), "batch_size": batch_size, **opt.inference_kwargs(args)}


def read_cost_matrix(path: str | Path, classes: tuple[str, ...]) -> np.ndarray:
    """A K x K cost matrix (rows predicted, columns true class) from a CSV file.

    The file holds K rows of K numbers, optionally with a header row of class names and a
    first column of class names (then rows and columns are put in the order of ``classes``).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "cost.csv"
    >>> _ = f.write_text(",b,a\\nb,0,5\\na,1,0\\n")
    >>> read_cost_matrix(f, ("a", "b")).tolist()
    [[0.0, 1.0], [5.0, 0.0]]
    """
    from pbassess.stats.cost import read_cost_matrix_file  # the one cost-matrix reader

    if not Path(path).exists():
        raise ConfigError(f"--cost-matrix: file not found: {path}")
    try:
        return read_cost_matrix_file(path, [str(c) for c in classes])
    except ConfigError as exc:
        raise ConfigError(f"--cost-matrix: {exc}") from None


def _cost_argument(cost: str, preds) -> Any:
    if cost == "zero-one":
        return None
    if cost in ("people", "superclass"):
        return cost
    if cost.lower().endswith(".csv"):
        return read_cost_matrix(cost, preds.classes)
    if Path(cost).exists() or cost.lower().endswith((".npy", ".json")):
        from pbassess.stats.cost import resolve_cost_matrix

        if not Path(cost).exists():
            raise ConfigError(f"--cost-matrix: file not found: {cost}")
        return resolve_cost_matrix(cost, tuple(preds.classes))
    raise ConfigError(f"--cost-matrix must be zero-one, people, superclass or a file, got {cost!r}")


# ------------------------------------------------------------------------------ assessment
def assess_predictions(preds, *, metric: str = "accuracy", prior: str = "uniform",
                       pseudocount: float = DEFAULT_PSEUDOCOUNT, bins: int = DEFAULT_BINS,
                       inference: str = "conjugate", draws: int | None = None, seed: int | None = None,
                       cost_matrix: str = "zero-one", by: str = "predicted", ci_prob: float | None = None,
                       sample_kwargs: dict[str, Any] | None = None):
    """Run one assessment with the command line's options (the inference-specific plumbing in one place).

    ``draws`` is the number of posterior draws per chain (4 chains) in either inference;
    ``sample_kwargs`` (``tune``, ``chains``, ``target_accept``) go to the NUTS sampler; ``None``
    keeps each inference's default.

    Examples
    --------
    >>> from pbassess import load_data
    >>> assess_predictions(load_data(), metric="accuracy", draws=200, seed=1).metric
    'accuracy'
    """
    from pbassess.inference import resolve_inference

    inference = resolve_inference(inference)
    common: dict[str, Any] = {"pseudocount": pseudocount, "inference": inference, "seed": seed, "draws": draws}
    if ci_prob is not None:
        common["ci_prob"] = ci_prob
    if sample_kwargs:
        common["sample_kwargs"] = dict(sample_kwargs)
    if metric == "accuracy":
        from pbassess.assess.accuracy import assess_accuracy

        return assess_accuracy(preds, by=by, prior=prior, **common)
    if metric == "calibration":
        from pbassess.assess.calibration import assess_calibration

        return assess_calibration(preds, bins=bins, **common)
    if metric == "cost":
        if prior == "informed" and not preds.has_probs:
            raise ConfigError(f"--prior informed for cost needs full probability vectors, but {preds.name!r} is in "
                              "top-1 form; use --prior uniform")
        cost_matrix = _cost_argument(cost_matrix, preds)
        from pbassess.assess.cost import assess_confusion

        return assess_confusion(preds, prior=prior, cost_matrix=cost_matrix, **common)
    raise ConfigError(f"unknown metric {metric!r} (choose {', '.join(METRICS)})")


def run(args: argparse.Namespace) -> int:
    """Run ``pbassess assess``."""
    import pandas as pd

    from pbassess.report import save_result, write_report

    opts = _options(args)
    preds, name = load_predictions(args.data, models=opts["models"], threshold=opts["threshold"],
                                   normalize=args.normalize, ties=args.ties, batch_size=opts["batch_size"],
                                   chunk_option=getattr(args, "pb_alias_batch_size", "--chunk-size"))
    with opt.progress(args):
        result = assess_predictions(
            preds, metric=opts["metric"], prior=opts["prior"], pseudocount=opts["pseudocount"], bins=opts["bins"],
            inference=opts["inference"], draws=opts.get("draws"), seed=opts["seed"], cost_matrix=opts["cost"],
            by=opts["by"], ci_prob=opts["ci_prob"], sample_kwargs=opts.get("sample_kwargs"),
        )
    if args.out is not None:
        from pbassess._atomic import os_failure
        from pbassess.cli.output import prepare_out_dir

        out = prepare_out_dir(args.out)
        try:
            files = save_result(result, out)
            write_report({result.metric: result}, out, saved={result.metric: files},
                         title=f"pbassess assess: {name}", intro=f"Seed {opts['seed']}.")
        except OSError as exc:
            raise PbassessError(f"could not write --out {out}: {os_failure(exc)}") from None

    opt.save_outputs(result, argparse.Namespace(out=None, plot=args.plot), result.metric)  # --plot FILE

    def table() -> None:
        with pd.option_context("display.max_rows", 120, "display.width", 160, "display.precision", 3):
            print(result.summary().to_string())

    return opt.finish(result, args, "assess", name=result.metric, text=table, save=False)
