"""``pbassess shift``: accuracy, NLL, Brier (decomposed), ECE and entropy per shift level and model.

::

    pbassess shift DATA [--by COLUMN] [--models M1,M2] [--model-column COLUMN]
                        [--ood COLUMN=VALUE|none] [--bins B] [--draws D] [--ci-prob P]
                        [--seed S] [--json]

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
(Bayesian bootstrap). Without ``--json`` a table and, for ordered levels, the probability that
the ECE worsens from level to level are printed.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pbassess.constants import CI_PROB, DEFAULT_BINS, DEFAULT_DRAWS
from pbassess.errors import ConfigError, DataError

__all__ = ["load_shift_data", "register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``shift`` subcommand."""
    p = subparsers.add_parser(
        "shift", help="dataset-shift metrics per level and model (Ovadia et al. 2019)",
        description="Accuracy, NLL, Brier score and its decomposition, ECE, entropy and OOD AUROC per shift "
                    "level and model, with posteriors.",
    )
    p.add_argument("data", metavar="DATA", help="a prediction file or a registered name (see: pbassess data list)")
    p.add_argument("--by", default=None, metavar="COLUMN", help="attribute column holding the shift level")
    p.add_argument("--models", default=None, metavar="M1,M2",
                   help="models to report: score columns of a binary-score CSV, else values of --model-column")
    p.add_argument("--model-column", default="auto", metavar="COLUMN",
                   help="attribute column naming each row's model (default: method or model if present)")
    p.add_argument("--ood", default="auto", metavar="COLUMN=VALUE",
                   help="the out-of-distribution items (default: a column holding 'ood'; 'none' for none)")
    p.add_argument("--bins", default=None, metavar="B", help=f"ECE bins (default {DEFAULT_BINS})")
    p.add_argument("--draws", default=None, metavar="D", help=f"posterior draws per cell (default {DEFAULT_DRAWS})")
    p.add_argument("--ci-prob", default=None, metavar="P", help=f"credible mass of the HDIs (default {CI_PROB})")
    p.add_argument("--seed", default=None, metavar="S", help="random seed (an integer)")
    p.add_argument("--json", action="store_true", help="print the list of (level, model) objects as JSON")
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


def load_shift_data(data: str, models: list[str] | None) -> tuple[Any, bool]:
    """``(predictions or {model: predictions}, models_handled)`` for ``DATA``.

    A binary-score CSV is read once per score column (``models_handled`` is then True);
    any other format is read once and split later by its model column.
    """
    from pbassess.data import registry
    from pbassess.data.readers import detect_format

    registered = data in {c.name for c in registry.list_models()}
    if registered:
        fmt = registry.model_card(data).format
    else:
        path = Path(data)
        if not path.exists():
            raise DataError(f"DATA {data!r} is neither a file nor a registered data set (see `pbassess data list`)")
        if path.is_dir():
            raise DataError(f"DATA {data!r} is a folder, not a prediction file")
        fmt = detect_format(path)
    if fmt != "binary-scores-csv":
        return registry.load_data(data), False
    names = models or _score_columns(registry.resolve_path(data) if registered else Path(data))
    table = {}
    for name in names:
        column = name if name.startswith("score_") else f"score_{name}"
        table[column[6:]] = registry.load_data(data, model=column)
    return table, True


def _score_columns(path: Path) -> list[str]:
    import pandas as pd

    return [c for c in pd.read_csv(path, nrows=0).columns if str(c).startswith("score_")]


def run(args: argparse.Namespace) -> int:
    """Run ``pbassess shift``."""
    from pbassess.cli import emit_json
    from pbassess.shift.table import shift_records, shift_table, worsening

    bins = _number(args.bins, "--bins", int, DEFAULT_BINS, 1)
    draws = _number(args.draws, "--draws", int, DEFAULT_DRAWS, 0)
    ci_prob = _number(args.ci_prob, "--ci-prob", float, CI_PROB, 0.0, 1.0)
    seed = _number(args.seed, "--seed", int, None, 0)
    models = [m.strip() for m in args.models.split(",") if m.strip()] if args.models else None
    data, handled = load_shift_data(args.data, models)
    model_column = None if handled else (None if args.model_column == "none" else args.model_column)
    ds = shift_table(data, by=args.by, model_column=model_column, models=None if handled else models,
                     ood=args.ood, bins=bins, ci_prob=ci_prob, draws=draws, seed=seed)
    records = shift_records(ds)
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
    return 0


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
