"""``pbassess assess``: the posterior accuracy, calibration or misclassification cost of one data set.

::

    pbassess assess DATA [--metric accuracy|calibration|cost] [--prior uniform|informed]
                         [--pseudocount X] [--bins B] [--engine conjugate|mcmc] [--draws D]
                         [--seed S] [--out DIR] [--json]
                         [--models score_X] [--threshold T] [--cost zero-one|people|superclass|FILE.csv]
                         [--by predicted|true|GROUP]

``DATA`` is a prediction file (any format of :mod:`pbassess.data.readers`) or a registered
name (``pbassess data list``). Without ``--json`` the command prints the summary table and the
result's sentence and writes the figures (PNG) and the posterior (netCDF) to ``--out``
(default ``reports/<data-name>``). With ``--json`` it prints exactly one JSON object, the
result's ``to_json()``, and writes files only when ``--out`` is given. Bad input or options
print one line on stderr and exit with status 2.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

import numpy as np

from pbassess.constants import DEFAULT_BINS, DEFAULT_DRAWS, DEFAULT_PSEUDOCOUNT, DEFAULT_THRESHOLD
from pbassess.errors import ConfigError, DataError

__all__ = ["METRICS", "assess_predictions", "load_predictions", "read_cost_matrix", "register", "run"]

METRICS = ("accuracy", "calibration", "cost")
PRIORS = ("uniform", "informed")
ENGINES = ("conjugate", "mcmc")
NAMED_COSTS = ("zero-one", "people", "superclass")


def register(subparsers: Any) -> None:
    """Add the ``assess`` subcommand."""
    p = subparsers.add_parser(
        "assess", help="posterior accuracy, calibration or cost of a prediction set",
        description="Bayesian assessment of one prediction set: accuracy per predicted class, calibration "
                    "(reliability diagram and ECE) or expected misclassification cost.",
    )
    p.add_argument("data", metavar="DATA", help="a prediction file or a registered name (see `pbassess data list`)")
    p.add_argument("--metric", default="accuracy", metavar="{accuracy,calibration,cost}",
                   help="what to assess (default: accuracy)")
    p.add_argument("--prior", default=None, metavar="{uniform,informed}",
                   help="Beta/Dirichlet prior of accuracy and cost: uniform (default) or informed by the "
                        "model's own confidence")
    p.add_argument("--pseudocount", default=None, metavar="X",
                   help=f"prior strength, a positive number (default {DEFAULT_PSEUDOCOUNT:g})")
    p.add_argument("--bins", default=None, metavar="B",
                   help=f"number of equal-width calibration bins (default {DEFAULT_BINS}; calibration only)")
    p.add_argument("--engine", default="conjugate", metavar="{conjugate,mcmc}",
                   help="exact conjugate posterior (default) or NUTS via PyMC")
    p.add_argument("--draws", default=None, metavar="D",
                   help=f"conjugate: Monte Carlo draws (default {DEFAULT_DRAWS}); mcmc: draws per chain, after as "
                        "many tuning steps (default 1000 each, 4 chains)")
    p.add_argument("--seed", default=None, metavar="S", help="random seed (an integer) for reproducible draws")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="folder for figures and the netCDF result (default reports/<data-name>)")
    p.add_argument("--json", action="store_true", help="print one JSON object (the result's to_json()) only")
    p.add_argument("--models", default=None, metavar="score_X",
                   help="binary-score CSV data: the classifier column to assess (e.g. score_LR)")
    p.add_argument("--threshold", default=None, metavar="T",
                   help=f"binary-score CSV data: predict the positive class at score >= T (default {DEFAULT_THRESHOLD:g})")
    p.add_argument("--normalize", action="store_true",
                   help="rescale probability rows that do not sum to one instead of rejecting them")
    p.add_argument("--cost", default=None, metavar="{zero-one,people,superclass,FILE.csv}",
                   help="cost matrix of --metric cost: zero-one (default), the CIFAR-100 people or superclass "
                        "matrices, or a K x K CSV (rows predicted, columns true class)")
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


def _number(value: str | None, option: str, *, integer: bool = False, default: Any = None) -> Any:
    if value is None:
        return default
    try:
        number = float(value)
    except ValueError:
        raise ConfigError(f"{option} must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise ConfigError(f"{option} must be finite, got {value!r}")
    if integer:
        if not number.is_integer():
            raise ConfigError(f"{option} must be an integer, got {value!r}")
        return int(number)
    return number


def _options(args: argparse.Namespace) -> dict[str, Any]:
    """Validate the command-line options into keyword arguments (ConfigError on bad ones)."""
    metric = _choice(args.metric, METRICS, "--metric", "accuracy")
    engine = _choice(args.engine, ENGINES, "--engine", "conjugate")
    prior = _choice(args.prior, PRIORS, "--prior", "uniform")
    pseudocount = _number(args.pseudocount, "--pseudocount", default=DEFAULT_PSEUDOCOUNT)
    if pseudocount <= 0:
        raise ConfigError(f"--pseudocount must be positive, got {args.pseudocount}")
    bins = _number(args.bins, "--bins", integer=True, default=DEFAULT_BINS)
    if bins < 1:
        raise ConfigError(f"--bins must be at least 1, got {args.bins}")
    draws = _number(args.draws, "--draws", integer=True)
    if draws is not None and draws < 1:
        raise ConfigError(f"--draws must be a positive integer, got {args.draws}")
    seed = _number(args.seed, "--seed", integer=True)
    if seed is not None and seed < 0:
        raise ConfigError(f"--seed must be a non-negative integer, got {args.seed}")
    threshold = _number(args.threshold, "--threshold")
    if threshold is not None and not 0 < threshold < 1:
        raise ConfigError(f"--threshold must be strictly between 0 and 1, got {args.threshold}")
    for option, value, wanted in (("--bins", args.bins, "calibration"), ("--cost", args.cost, "cost"),
                                  ("--by", args.by, "accuracy")):
        if value is not None and metric != wanted:
            raise ConfigError(f"{option} applies only to --metric {wanted} (this is --metric {metric})")
    if metric == "calibration" and prior != "uniform":
        raise ConfigError("--prior informed applies to accuracy and cost; calibration uses its own per-bin prior")
    return {"metric": metric, "engine": engine, "prior": prior, "pseudocount": pseudocount, "bins": bins,
            "draws": draws, "seed": seed, "threshold": threshold, "models": args.models,
            "cost": args.cost or "zero-one", "by": args.by or "predicted"}


# ------------------------------------------------------------------------------ data
def load_predictions(data: str, *, models: str | None = None, threshold: float | None = None,
                     normalize: bool = False):
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
        if path.is_dir():
            raise DataError(f"DATA {data!r} is a folder, not a prediction file")
        fmt = detect_format(path)
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
    elif models is not None or threshold is not None:
        option = "--models" if models is not None else "--threshold"
        raise ConfigError(f"{option} applies only to binary-score CSV data; {data!r} is {fmt}")
    if normalize:
        if fmt not in ("label-probs-text", "pbassess-csv"):
            raise ConfigError(f"--normalize applies to files with probability columns; {data!r} is {fmt}")
        options["normalize"] = True
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
    import pandas as pd

    path = Path(path)
    if not path.exists():
        raise ConfigError(f"--cost: file not found: {path}")
    try:
        raw = pd.read_csv(path, header=None, dtype=str, skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ConfigError(f"--cost: {path} is not a CSV table ({str(exc).splitlines()[0]})") from None

    def numeric(values) -> bool:
        return bool(pd.to_numeric(pd.Series(values), errors="coerce").notna().all())

    table = raw.fillna("")
    row_names = col_names = None
    if not numeric(table.iloc[0, 1:]):
        col_names = [str(v).strip() for v in table.iloc[0]]
        table = table.iloc[1:]
    if not numeric(table.iloc[:, 0]):
        row_names = [str(v).strip() for v in table.iloc[:, 0]]
        table = table.iloc[:, 1:]
        if col_names is not None:
            col_names = col_names[1:]
    try:
        matrix = table.astype(float).to_numpy()
    except ValueError:
        raise ConfigError(f"--cost: {path} holds non-numeric costs") from None
    k = len(classes)
    if matrix.shape != (k, k):
        raise ConfigError(f"--cost: {path} is {matrix.shape[0]} x {matrix.shape[1]}, expected {k} x {k} for {k} classes")
    if not np.all(np.isfinite(matrix)) or (matrix < 0).any():
        raise ConfigError(f"--cost: {path} must hold finite, non-negative costs")
    order = {c: i for i, c in enumerate(classes)}
    for what, names in (("row", row_names), ("column", col_names)):
        if names is None:
            continue
        unknown = [n for n in names if n not in order]
        if unknown or len(set(names)) != k:
            bad = unknown[0] if unknown else "a repeated name"
            raise ConfigError(f"--cost: {path} has {what} name {bad!r}; expected each of the classes once")
    if row_names is not None:
        fixed = np.empty_like(matrix)
        fixed[[order[n] for n in row_names]] = matrix
        matrix = fixed
    if col_names is not None:
        fixed = np.empty_like(matrix)
        fixed[:, [order[n] for n in col_names]] = matrix
        matrix = fixed
    return matrix


def _cost_argument(cost: str, preds) -> Any:
    if cost == "zero-one":
        return None
    if cost in ("people", "superclass"):
        return cost
    if cost.lower().endswith(".csv") or Path(cost).exists():
        return read_cost_matrix(cost, preds.classes)
    raise ConfigError(f"--cost must be zero-one, people, superclass or a CSV file, got {cost!r}")


# ------------------------------------------------------------------------------ assessment
def assess_predictions(preds, *, metric: str = "accuracy", prior: str = "uniform",
                       pseudocount: float = DEFAULT_PSEUDOCOUNT, bins: int = DEFAULT_BINS,
                       engine: str = "conjugate", draws: int | None = None, seed: int | None = None,
                       cost: str = "zero-one", by: str = "predicted"):
    """Run one assessment with the command line's options (the engine-specific plumbing in one place).

    ``draws`` is the number of conjugate Monte Carlo draws, or for ``engine="mcmc"`` the draws
    per chain (with as many tuning steps); ``None`` keeps each engine's default.

    Examples
    --------
    >>> from pbassess import load_data
    >>> assess_predictions(load_data(), metric="accuracy", draws=200, seed=1).metric
    'accuracy'
    """
    common: dict[str, Any] = {"pseudocount": pseudocount, "engine": engine, "seed": seed}
    if engine == "conjugate":
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
    import pandas as pd

    from pbassess.cli import emit_json
    from pbassess.report import save_result

    opts = _options(args)
    preds, name = load_predictions(args.data, models=opts["models"], threshold=opts["threshold"],
                                   normalize=args.normalize)
    result = assess_predictions(
        preds, metric=opts["metric"], prior=opts["prior"], pseudocount=opts["pseudocount"], bins=opts["bins"],
        engine=opts["engine"], draws=opts["draws"], seed=opts["seed"], cost=opts["cost"], by=opts["by"],
    )
    out = Path(args.out) if args.out is not None else Path("reports") / name
    if args.json:
        if args.out is not None:
            save_result(result, out)
        emit_json(result.to_json())
        return 0
    with pd.option_context("display.max_rows", 120, "display.width", 160, "display.precision", 3):
        print(result.summary().to_string())
    print()
    print(result.sentence())
    files = save_result(result, out)
    print()
    print(f"wrote {len(files['figures'])} figure(s) and {files['netcdf'].name} to {out}")
    return 0
