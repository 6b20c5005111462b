"""``pbassess assess``: the posterior accuracy, calibration or misclassification cost of one data set.

::

    pbassess assess DATA [--metric accuracy|calibration|cost] [--prior uniform|informed]
                         [--pseudocount X] [--bins B] [--inference conjugate|nuts] [--draws D]
                         [--seed S] [--ci-prob P] [--out DIR] [--json] [--strict] [--batch-size N]
                         [--models score_X] [--threshold T] [--cost-matrix zero-one|people|superclass|FILE]
                         [--by predicted|true|GROUP]

``DATA`` is a prediction file (any format of :mod:`pbassess.data.readers`) or a registered
name (``pbassess data list``). Without ``--json`` the command prints the summary table and the
result's sentence and writes the figures (PNG) and the posterior (netCDF) to ``--out``
(default ``reports/<data-name>``). With ``--json`` it prints exactly one JSON object, the
result's ``to_json()``, writes files only when ``--out`` is given, and shows no progress bar.
Bad input or options print one line on stderr and exit with status 2; with ``--strict`` a NUTS
fit that fails its diagnostics exits with status 3 (without it, a warning is printed and the
sentence says so).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from pbassess.cli import _options as opt
from pbassess.constants import DEFAULT_BINS, DEFAULT_DRAWS, DEFAULT_PSEUDOCOUNT, DEFAULT_THRESHOLD
from pbassess.errors import ConfigError, DataError

__all__ = ["METRICS", "assess_predictions", "load_predictions", "read_cost_matrix", "register", "run"]

METRICS = ("accuracy", "calibration", "cost")
PRIORS = ("uniform", "informed")
ENGINES = ("conjugate", "mcmc")
NAMED_COSTS = ("zero-one", "people", "superclass")
LAZY_SUFFIXES = (".parquet", ".pq", ".zarr")


def register(subparsers: Any) -> None:
    """Add the ``assess`` subcommand."""
    p = subparsers.add_parser(
        "assess", help="posterior accuracy, calibration or cost of a prediction set",
        description="Bayesian assessment of one prediction set: accuracy per predicted class, calibration "
                    "(reliability diagram and ECE) or expected misclassification cost.",
    )
    p.add_argument("data", metavar="DATA", help="a prediction file or a registered name (see pbassess data list)")
    p.add_argument("--metric", default="accuracy", metavar="{accuracy,calibration,cost}",
                   help="what to assess (default: accuracy)")
    p.add_argument("--prior", default=None, metavar="{uniform,informed}",
                   help="Beta/Dirichlet prior of accuracy and cost: uniform (default) or informed by the "
                        "model's own confidence")
    p.add_argument("--pseudocount", default=None, metavar="X",
                   help=f"prior strength, a positive number (default {DEFAULT_PSEUDOCOUNT:g})")
    p.add_argument("--bins", default=None, metavar="B",
                   help=f"number of equal-width calibration bins (default {DEFAULT_BINS}; calibration only)")
    opt.add_inference(p)
    p.add_argument("--draws", default=None, metavar="D",
                   help=f"conjugate: Monte Carlo draws (default {DEFAULT_DRAWS}); nuts: draws per chain, after as "
                        "many tuning steps (default 1000 each, 4 chains)")
    opt.add_seed(p)
    opt.add_ci_prob(p)
    opt.add_out(p, default="reports/<data-name>")
    opt.add_json(p)
    opt.add_strict(p)
    opt.add_batch_size(p, "Parquet or Zarr data: items read and counted per chunk (default: the reader's)")
    p.add_argument("--models", default=None, metavar="score_X",
                   help="binary-score CSV data: the classifier column to assess (e.g. score_LR)")
    p.add_argument("--threshold", default=None, metavar="T",
                   help=f"binary-score CSV data: the decision threshold of the positive class (default "
                        f"{DEFAULT_THRESHOLD:g})")
    p.add_argument("--ties", default=None, choices=("negative", "positive"),
                   help="binary-score CSV data: the class of a score exactly at the threshold (default negative: "
                        "predict positive only above it)")
    p.add_argument("--normalize", action="store_true",
                   help="rescale probability rows that do not sum to one instead of rejecting them")
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
    inference = opt.inference_value(args.inference)
    prior = _choice(args.prior, PRIORS, "--prior", "uniform")
    pseudocount = opt.number_value(args.pseudocount, "--pseudocount", default=DEFAULT_PSEUDOCOUNT)
    if pseudocount <= 0:
        raise ConfigError(f"--pseudocount must be positive, got {args.pseudocount}")
    bins = opt.number_value(args.bins, "--bins", integer=True, default=DEFAULT_BINS)
    if bins < 1:
        raise ConfigError(f"--bins must be at least 1, got {args.bins}")
    draws = opt.number_value(args.draws, "--draws", integer=True)
    if draws is not None and draws < 1:
        raise ConfigError(f"--draws must be a positive integer, got {args.draws}")
    seed = opt.number_value(args.seed, "--seed", integer=True)
    if seed is not None and seed < 0:
        raise ConfigError(f"--seed must be a non-negative integer, got {args.seed}")
    threshold = opt.number_value(args.threshold, "--threshold")
    if threshold is not None and not 0 < threshold < 1:
        raise ConfigError(f"--threshold must be strictly between 0 and 1, got {args.threshold}")
    for option, value, wanted in (("--bins", args.bins, "calibration"), ("--cost-matrix", args.cost_matrix, "cost"),
                                  ("--by", args.by, "accuracy")):
        if value is not None and metric != wanted:
            raise ConfigError(f"{option} applies only to --metric {wanted} (this is --metric {metric})")
    if metric == "calibration" and prior != "uniform":
        raise ConfigError("--prior informed applies to accuracy and cost; calibration uses its own per-bin prior")
    return {"metric": metric, "inference": inference, "prior": prior, "pseudocount": pseudocount, "bins": bins,
            "draws": draws, "seed": seed, "threshold": threshold, "models": args.models,
            "cost": args.cost_matrix or "zero-one", "by": args.by or "predicted",
            "ci_prob": opt.ci_prob_value(args.ci_prob), "batch_size": opt.batch_size_value(args.batch_size)}


# ------------------------------------------------------------------------------ data
def load_predictions(data: str, *, models: str | None = None, threshold: float | None = None,
                     normalize: bool = False, ties: str | None = None, batch_size: int | None = None):
    """Load ``DATA`` (a registered name or a file) with the binary-score options.

    Returns
    -------
    (Predictions, str)
        The predictions and a short name for the default output folder.

    Examples
    --------
    >>> preds, name = load_predictions("digits-logreg")
    >>> name, preds.n_items
    ('digits-logreg', 899)
    """
    from pbassess.data import registry
    from pbassess.data.readers import detect_format

    registered = data in {c.name for c in registry.list_models()}
    if registered:
        fmt = registry.model_card(data).format
        name = data
    else:
        path = Path(data)
        if not path.exists():
            raise DataError(f"DATA {data!r} is neither a file nor a registered data set (see `pbassess data list`)")
        lazy = path.is_dir() or path.suffix.lower() in LAZY_SUFFIXES  # read chunk by chunk (Parquet, Zarr)
        fmt = "parquet/zarr" if lazy else detect_format(path)
        name = path.name.split(".")[0]
    options: dict[str, Any] = {}
    if fmt == "binary-scores-csv":
        if models is not None:
            if "," in models:
                raise ConfigError(f"--models takes one classifier column, got {models!r} (use `pbassess compare` for several)")
            options["model"] = models if models.startswith("score_") else f"score_{models}"
            name = f"{name}-{options['model'][6:]}"
        if threshold is not None:
            options["threshold"] = threshold
        if ties is not None:
            options["ties"] = ties
    elif models is not None or threshold is not None or ties is not None:
        option = "--models" if models is not None else "--threshold" if threshold is not None else "--ties"
        raise ConfigError(f"{option} applies only to binary-score CSV data; {data!r} is {fmt}")
    if normalize:
        if fmt not in ("label-probs-text", "pbassess-csv"):
            raise ConfigError(f"--normalize applies to files with probability columns; {data!r} is {fmt}")
        options["normalize"] = True
    if batch_size is not None:
        if not str(data).lower().rstrip("/").endswith(LAZY_SUFFIXES):
            raise ConfigError(f"--batch-size applies to Parquet or Zarr data read in chunks; {data!r} is {fmt}")
        options["rows_per_chunk"] = batch_size
    return registry.load_data(data, **options), name


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
                       cost: str = "zero-one", by: str = "predicted", ci_prob: float | None = None,
                       engine: str | None = None):
    """Run one assessment with the command line's options (the inference-specific plumbing in one place).

    ``draws`` is the number of conjugate Monte Carlo draws, or for ``inference="nuts"`` the draws
    per chain (with as many tuning steps); ``None`` keeps each inference's default. ``engine``
    is the old name of ``inference``.

    Examples
    --------
    >>> from pbassess import load_data
    >>> assess_predictions(load_data(), metric="accuracy", draws=200, seed=1).metric
    'accuracy'
    """
    from pbassess.inference import resolve_inference

    inference = resolve_inference(inference if engine is None else None, engine)
    common: dict[str, Any] = {"pseudocount": pseudocount, "inference": inference, "seed": seed}
    if ci_prob is not None:
        common["ci_prob"] = ci_prob
    if inference == "conjugate":
        common["draws"] = DEFAULT_DRAWS if draws is None else draws
    elif draws is not None:
        common["sample_kwargs"] = {"draws": draws, "tune": draws}
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
        cost_matrix = _cost_argument(cost, preds)
        from pbassess.assess.cost import assess_confusion

        return assess_confusion(preds, prior=prior, cost_matrix=cost_matrix, **common)
    raise ConfigError(f"unknown metric {metric!r} (choose {', '.join(METRICS)})")


def run(args: argparse.Namespace) -> int:
    """Run ``pbassess assess``."""
    import contextlib

    import pandas as pd

    from pbassess.cli import emit_json
    from pbassess.inference import quiet_progress
    from pbassess.report import save_result

    opts = _options(args)
    preds, name = load_predictions(args.data, models=opts["models"], threshold=opts["threshold"],
                                   normalize=args.normalize, ties=args.ties, batch_size=opts["batch_size"])
    with quiet_progress() if args.json else contextlib.nullcontext():
        result = assess_predictions(
            preds, metric=opts["metric"], prior=opts["prior"], pseudocount=opts["pseudocount"], bins=opts["bins"],
            inference=opts["inference"], draws=opts["draws"], seed=opts["seed"], cost=opts["cost"], by=opts["by"],
            ci_prob=opts["ci_prob"],
        )
    out = Path(args.out) if args.out is not None else Path("reports") / name
    if args.json:
        if args.out is not None:
            save_result(result, out)
        emit_json(result.to_json())
        return opt.finish_diagnostics(result, args, "assess")
    with pd.option_context("display.max_rows", 120, "display.width", 160, "display.precision", 3):
        print(result.summary().to_string())
    print()
    print(result.sentence())
    files = save_result(result, out)
    print()
    print(f"wrote {len(files['figures'])} figure(s) and {files['netcdf'].name} to {out}")
    return opt.finish_diagnostics(result, args, "assess")
