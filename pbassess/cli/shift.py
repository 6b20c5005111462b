"""``pbassess shift``: accuracy, NLL, Brier (decomposed), ECE and entropy per shift level and model.

::

    pbassess shift DATA [--by COLUMN] [--models M1,M2] [--model-column COLUMN]
                        [--ood COLUMN=VALUE|none] [--bins B] [--draws D]
                        [seed, interval, output, strict and progress options]

``DATA`` is a prediction file with full probability vectors or a registered name.

* ``--by COLUMN``: the attribute column whose values are the shift levels (e.g. ``intensity``
  or ``corruption`` of ``digits-corruptions``, ``year`` of ``acs-employment``); without it
  the whole set is one level, ``"all"``.
* Models: in a binary-score CSV (the fairness format) every ``score_<name>`` column is a model
  and ``--models LR,RF`` picks some (default: all). Otherwise the rows of each model are
  marked by an attribute column: ``--model-column`` (default: ``method`` or ``model`` when
  present, e.g. ``method`` of ``digits-corruptions``), and ``--models`` keeps some of its
  values; a set without such a column is one model named after the data.
* ``--ood COLUMN=VALUE``: the out-of-distribution items (default: the first attribute column
  holding the value ``ood``; ``none`` for no OOD set). They are left out of every level and
  give ``auroc_ood`` (from the confidence) and ``auroc_ood_entropy`` (from the entropy).

``--json`` prints a list with one object per (level, model): ``level``, ``model``, ``n``
(labeled items), ``accuracy``, ``nll``, ``brier`` (mean squared distance to the one-hot
label; the paper's code reports this minus 1), ``brier_reliability``, ``brier_resolution``,
``brier_uncertainty``, ``brier_cross`` (brier = reliability - resolution + uncertainty +
cross), ``ece`` (10 equal-width bins), ``entropy``, ``auroc_ood`` (with an OOD set) and the
HDIs ``accuracy_hdi`` (exact Beta), ``ece_hdi`` (Beta per bin), ``nll_hdi`` and ``brier_hdi``
(Bayesian bootstrap), and the ``seed``. Without ``--json`` a table and, for ordered levels, the probability that
the ECE worsens from level to level are printed.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pbassess.cli import options as opt
from pbassess.constants import DEFAULT_BINS, DEFAULT_N_DRAWS
from pbassess.errors import ConfigError, DataError

__all__ = ["load_shift_data", "register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``shift`` subcommand."""
    p = opt.add_command(
        subparsers, "shift", fits=True, help="dataset-shift metrics per level and model (Ovadia et al. 2019)",
        description="Accuracy, NLL, Brier score and its decomposition, ECE, entropy and OOD AUROC per shift "
                    "level and model, with posteriors.",
        examples=("pbassess shift digits-shift --by environment --seed 1 --json",
                  "pbassess shift digits-shift --by environment --draws 500 --seed 1 --out shift-out"),
    )
    opt.add_data(p, several_models=True)
    p.add_argument("--by", default=None, metavar="COLUMN", help="attribute column holding the shift level")
    p.add_argument("--model-column", default="auto", metavar="COLUMN",
                   help="attribute column naming each row's model (default: method or model if present); --models "
                        "then keeps some of its values")
    p.add_argument("--ood", default="auto", metavar="COLUMN=VALUE",
                   help="the out-of-distribution items (default: a column holding 'ood'; 'none' for none)")
    p.add_argument("--bins", default=None, metavar="B", help=f"ECE bins (default {DEFAULT_BINS})")
    opt.add_inference(p, choices=("conjugate",), draws_default=f"{DEFAULT_N_DRAWS} per cell; 0 for none",
                      draws_minimum=0, draws_help="Monte Carlo draws of each posterior (no chains: the table has exact conjugate and bootstrap draws)")
    opt.add_seed(p)
    opt.add_interval(p)
    opt.add_output(p, "the table (.nc), its figure and report.md")
    opt.add_strict(p)
    opt.add_quiet(p)
    p.set_defaults(func=run)


def _number(value: str | None, option: str, kind: type, default: Any, low: float, high: float | None = None) -> Any:
    if value is None:
        return default
    try:
        out = kind(value)
    except ValueError:
        raise ConfigError(f"{option} must be a number, got {value!r}") from None
    if out < low or (high is not None and out >= high) or (kind is float and out <= low):
        raise ConfigError(f"{option} is out of range: {value!r}")
    return out


def load_shift_data(data: str, models: list[str] | None, *, threshold: float | None = None,
                    ties: str | None = None, normalize: bool = False) -> tuple[Any, bool]:
    """``(predictions or {model: predictions}, models_handled)`` for ``DATA``.

    A binary-score CSV is read once per score column with ``threshold`` and ``ties``
    (``models_handled`` is then True); any other format is read once (``normalize``: rescale
    probability rows) and split later by its model column.

    Examples
    --------
    >>> preds, handled = load_shift_data("digits-shift", None)
    >>> preds.n_items, handled
    (5894, False)
    """
    from pbassess.cli.loading import LAZY_SUFFIXES
    from pbassess.data import registry
    from pbassess.data.readers import detect_format

    registered = data in {c.name for c in registry.list_models()}
    if registered:
        fmt = registry.model_card(data).format
    else:
        path = Path(data)
        if not path.exists():
            raise DataError(f"DATA {data!r} is neither a file nor a registered data set (see `pbassess data list`)")
        lazy = path.is_dir() or path.suffix.lower() in LAZY_SUFFIXES  # Parquet folder or file, Zarr store
        fmt = "parquet/zarr" if lazy else detect_format(path)
    if fmt != "binary-scores-csv":
        if threshold is not None or ties is not None:
            raise ConfigError(f"--threshold and --ties apply only to binary-score CSV data; {data!r} is {fmt}")
        return registry.load_data(data, **({"normalize": True} if normalize else {})), False
    if normalize:
        raise ConfigError(f"--normalize applies to files with probability columns; {data!r} is {fmt}")
    extra = {k: v for k, v in (("threshold", threshold), ("ties", ties)) if v is not None}
    names = models or _score_columns(registry.resolve_path(data) if registered else Path(data))
    table = {}
    for name in names:
        column = name if name.startswith("score_") else f"score_{name}"
        table[column[6:]] = registry.load_data(data, model=column, **extra)
    return table, True


def _score_columns(path: Path) -> list[str]:
    import pandas as pd

    return [c for c in pd.read_csv(path, nrows=0).columns if str(c).startswith("score_")]


def run(args: argparse.Namespace) -> int:
    """Run ``pbassess shift``."""
    from pbassess.cli import emit_json
    from pbassess.shift.table import shift_records, shift_table, worsening

    bins = _number(args.bins, "--bins", int, DEFAULT_BINS, 1)
    draws = DEFAULT_N_DRAWS if args.draws is None else args.draws
    from pbassess.inference.memory import check_memory

    # per (level, model): 4 metrics x draws, the ECE's draws x bins, the bins' sums (checked before reading the data)
    check_memory(8.0 * draws * (4 * bins + 16) + 48.0 * bins, f"shift metrics with --draws {draws:,} and --bins {bins:,}",
                 "use a smaller --draws (or --bins)")
    ci_prob = opt.ci_prob_value(args)
    seed = opt.seed_value(args)
    models = [m.strip() for m in args.models.split(",") if m.strip()] if args.models else None
    reader = {k: v for k, v in (("threshold", args.threshold), ("ties", args.ties)) if v is not None}
    if args.normalize:
        reader["normalize"] = True
    data, handled = load_shift_data(args.data, models, **reader)
    model_column = None if handled else (None if args.model_column == "none" else args.model_column)
    with opt.progress(args):
        ds = shift_table(data, by=args.by, model_column=model_column, models=None if handled else models,
                         ood=args.ood, bins=bins, ci_prob=ci_prob, n_draws=draws, seed=seed)
    records = shift_records(ds)
    for record in records:  # the output is a list of (level, model) objects: each records the seed
        record["seed"] = seed
    opt.save_outputs(ds, args, "shift", payload=records,
                     sentence=f"Shift metrics of {args.data} by {args.by or 'nothing (one level)'}.",
                     table=_frame(records))
    if args.json:
        emit_json(records)
        return 0
    _print_table(records, ci_prob)
    if draws and ds.sizes["level"] > 1:
        w = worsening(ds, "ece")
        print(f"\nP(ECE worsens from level to level), by {args.by}:")
        for model in w["model"].values.tolist():
            steps = ", ".join(f"{s}: {p:.2f}" for s, p in zip(w["step"].values, w["p_step"].sel(model=model).values,
                                                               strict=True))
            print(f"  {model}: {steps}; P(monotone) = {float(w['p_monotone'].sel(model=model)):.2f}, "
                  f"P(last > first) = {float(w['p_first_to_last'].sel(model=model)):.2f}")
    print(f"seed {seed}" + (f"; written to {args.out}" if args.out else ""))
    return 0


def _frame(records: list[dict[str, Any]]):
    import pandas as pd

    keep = ("level", "model", "n", "accuracy", "nll", "brier", "ece", "entropy", "auroc_ood")
    return pd.DataFrame([{k: r.get(k) for k in keep if k in r} for r in records])


def _print_table(records: list[dict[str, Any]], ci_prob: float) -> None:
    has_ood = any("auroc_ood" in r for r in records)
    head = f"{'level':>16s} {'model':>14s} {'n':>6s} {'accuracy':>8s} {'nll':>7s} {'brier':>7s} {'ece':>7s} " \
           f"{'entropy':>7s}" + (f" {'auroc':>6s}" if has_ood else "") + f"  ECE {ci_prob:.0%} HDI"
    print(head)

    def fmt(v: Any, width: int) -> str:
        return f"{v:{width}.4f}" if v is not None else f"{'-':>{width}s}"

    for r in records:
        hdi = r.get("ece_hdi")
        line = f"{str(r['level'])[:16]:>16s} {str(r['model'])[:14]:>14s} {r['n']:6d} {fmt(r['accuracy'], 8)} " \
               f"{fmt(r['nll'], 7)} {fmt(r['brier'], 7)} {fmt(r['ece'], 7)} {fmt(r['entropy'], 7)}"
        if has_ood:
            line += f" {fmt(r.get('auroc_ood'), 6)}"
        if hdi and hdi[0] == hdi[0]:
            line += f"  [{hdi[0]:.4f}, {hdi[1]:.4f}]"
        print(line)
