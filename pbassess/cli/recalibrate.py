"""``pbassess recalibrate``: fit a recalibration map on labeled items and measure it on held-out ones.

::

    pbassess recalibrate DATA --method temperature|platt|histogram|isotonic|beta
                              [--fit-fraction F] [--bins B] [--draws D] [--seed S] [--json]

The labeled items of ``DATA`` are split at random: ``F`` (default 0.5) to fit the map, the rest
to evaluate it. ``--json`` prints one object::

    {"method": ..., "params": {...}, "before": {"ece": ..., "nll": ..., "brier": ...},
     "after": {...}, "posterior": {"before": {"ece": {"mean", "hdi"}, ...}, "after": {...}},
     "p_improved": {"ece": ..., "nll": ..., "brier": ...}, "n_fit": ..., "n_eval": ..., "scoring": ...}

measured on the held-out part (see :func:`pbassess.calibration.evaluation.recalibrate`).
Temperature scaling needs full probability vectors; the other methods also work on top-1 data.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from pbassess.errors import ConfigError

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``recalibrate`` subcommand."""
    from pbassess.calibration.recalibration import METHODS

    p = subparsers.add_parser(
        "recalibrate", help="fit a recalibration map on labeled items and measure it on held-out ones",
        description="Fit temperature scaling, Platt scaling, histogram binning, isotonic regression or beta "
                    "calibration on a random share of the labeled items; report ECE, NLL and Brier score "
                    "before and after on the rest, with posteriors.",
    )
    p.add_argument("data", metavar="DATA", help="a prediction file or a registered name (see: pbassess data list)")
    p.add_argument("--method", required=True, metavar="{" + ",".join(METHODS) + "}", help="recalibration method")
    p.add_argument("--fit-fraction", default="0.5", metavar="F",
                   help="share of the labeled items used to fit (default 0.5)")
    p.add_argument("--bins", default="10", metavar="B", help="equal-width bins of the ECE and of histogram binning")
    p.add_argument("--draws", default="2000", metavar="D", help="posterior draws (default 2000)")
    p.add_argument("--seed", default=None, metavar="S", help="random seed (an integer) of the split and the draws")
    p.add_argument("--ci-prob", default=None, metavar="P", help="credible mass of the HDIs (default 0.95)")
    p.add_argument("--models", default=None, metavar="score_X",
                   help="binary-score CSV data: the classifier column to recalibrate")
    p.add_argument("--json", action="store_true", help="print one JSON object only")
    p.set_defaults(func=run)


def _number(value: str | None, option: str, *, integer: bool = False) -> Any:
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        raise ConfigError(f"{option} must be a number, got {value!r}") from None
    if not math.isfinite(number) or (integer and not number.is_integer()):
        raise ConfigError(f"{option} must be {'an integer' if integer else 'a finite number'}, got {value!r}")
    return int(number) if integer else number


def run(args: argparse.Namespace) -> int:
    """Run ``pbassess recalibrate``."""
    from pbassess.calibration.evaluation import recalibrate
    from pbassess.calibration.recalibration import METHODS
    from pbassess.cli import emit_json
    from pbassess.cli.assess import load_predictions
    from pbassess.constants import CI_PROB

    if args.method not in METHODS:
        raise ConfigError(f"--method must be one of {', '.join(METHODS)}, got {args.method!r}")
    fraction = _number(args.fit_fraction, "--fit-fraction")
    bins = _number(args.bins, "--bins", integer=True)
    draws = _number(args.draws, "--draws", integer=True)
    seed = _number(args.seed, "--seed", integer=True)
    ci_prob = _number(args.ci_prob, "--ci-prob")
    if bins < 1:
        raise ConfigError(f"--bins must be at least 1, got {args.bins}")
    if draws < 1:
        raise ConfigError(f"--draws must be a positive integer, got {args.draws}")
    if seed is not None and seed < 0:
        raise ConfigError(f"--seed must be a non-negative integer, got {args.seed}")
    preds, _ = load_predictions(args.data, models=args.models)
    out = recalibrate(preds, args.method, fit_fraction=fraction, seed=seed, bins=bins, draws=draws,
                      ci_prob=CI_PROB if ci_prob is None else ci_prob)
    if args.json:
        emit_json(out)
        return 0
    print(f"{args.method} recalibration of {args.data}: fitted on {out['n_fit']:,} labeled items, "
          f"measured on {out['n_eval']:,} ({out['scoring']} scoring)")
    shown = [f"{k}={v:.4g}" if isinstance(v, float) else f"{k}: {len(v)} values" for k, v in out["params"].items()]
    print("params: " + ", ".join(shown))
    pct = f"{100 * out['ci_prob']:.10g}%"
    for key in ("ece", "nll", "brier"):
        b, a = out["posterior"]["before"][key], out["posterior"]["after"][key]
        print(f"{key:6s} before {out['before'][key]:.4f} ({pct} HDI {b['hdi'][0]:.4f}-{b['hdi'][1]:.4f})  "
              f"after {out['after'][key]:.4f} ({pct} HDI {a['hdi'][0]:.4f}-{a['hdi'][1]:.4f})  "
              f"P(improved) {out['p_improved'][key]:.3f}")
    return 0
