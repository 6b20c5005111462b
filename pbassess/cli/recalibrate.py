"""``pbassess recalibrate``: fit a recalibration map on labeled items and measure it on held-out ones.

::

    pbassess recalibrate DATA --method temperature|platt|histogram|isotonic|beta
                              [--fit-fraction F] [--bins B] [--draws D] [--clip EPS]
                              [data, seed, interval, output, strict and progress options]

The labeled items of ``DATA`` are split at random: ``F`` (default 0.5) to fit the map, the rest
to evaluate it. Each part needs at least 20 items
(:data:`pbassess.calibration.evaluation.MIN_SPLIT_ITEMS`): a map fitted, or an ECE measured, on
fewer is noise, so fewer is an error naming the minimum. ``--json`` prints one object::

    {"method": ..., "params": {...}, "before": {"ece": ..., "nll": ..., "brier": ...},
     "after": {...}, "posterior": {"before": {"ece": {"mean", "hdi"}, ...}, "after": {...}},
     "p_improved": {"ece": ..., "nll": ..., "brier": ...}, "n_fit": ..., "n_eval": ..., "scoring": ...,
     "seed": ...}

measured on the held-out part (see :func:`pbassess.calibration.evaluation.recalibrate`).
Temperature scaling needs full probability vectors; the other methods also work on top-1 data.
``--clip EPS`` (Platt only) clips the scores into ``[EPS, 1 - EPS]`` before the logit (default
1e-12; it sets the leverage of confidences printed as 1.0, see
:func:`pbassess.calibration.recalibration.fit_platt`). ``p_improved`` compares paired draws of
the same held-out items (:func:`pbassess.calibration.evaluation.paired_ece_draws` for the ECE).
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from pbassess.cli import options as opt
from pbassess.errors import ConfigError

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``recalibrate`` subcommand."""
    from pbassess.calibration.methods import METHODS

    p = opt.add_command(
        subparsers, "recalibrate", fits=True, help="fit a recalibration map on labeled items and measure it on held-out ones",
        description="Fit temperature scaling, Platt scaling, histogram binning, isotonic regression or beta "
                    "calibration on a random share of the labeled items; report ECE, NLL and Brier score "
                    "before and after on the rest, with posteriors.",
        examples=("pbassess recalibrate digits-logreg --method temperature --seed 1 --json",
                  "pbassess recalibrate digits-logreg --method isotonic --fit-fraction 0.3 --seed 1 "
                  "--out recalibrate-out"),
    )
    opt.add_data(p)
    p.add_argument("--method", required=True, metavar="{" + ",".join(METHODS) + "}", help="recalibration method")
    p.add_argument("--fit-fraction", default="0.5", metavar="F",
                   help="share of the labeled items used to fit (default 0.5); each part needs at least 20 items")
    p.add_argument("--bins", default="10", metavar="B", help="equal-width bins of the ECE and of histogram binning")
    p.add_argument("--clip", default=None, metavar="EPS",
                   help="Platt scaling only: clip scores into [EPS, 1 - EPS] before the logit (default 1e-12)")
    opt.add_inference(p, choices=("conjugate",), draws_default="2000", draws_help="Monte Carlo draws of each before/after posterior (no chains)")
    opt.add_seed(p, "the split and the posterior draws")
    opt.add_interval(p)
    opt.add_output(p, "the result (.json), report.md")
    opt.add_strict(p)
    opt.add_quiet(p)
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
    from types import SimpleNamespace

    from pbassess.calibration.evaluation import recalibrate
    from pbassess.calibration.methods import METHODS
    from pbassess.cli import emit_json

    if args.method not in METHODS:
        raise ConfigError(f"--method must be one of {', '.join(METHODS)}, got {args.method!r}")
    fraction = _number(args.fit_fraction, "--fit-fraction")
    bins = _number(args.bins, "--bins", integer=True)
    clip = _number(args.clip, "--clip")
    if clip is not None and args.method != "platt":
        raise ConfigError(f"--clip is an option of --method platt only, not of {args.method}")
    if clip is not None and not 0 < clip < 0.5:
        raise ConfigError(f"--clip must lie strictly between 0 and 0.5, got {args.clip}")
    draws = 2000 if args.draws is None else args.draws
    if bins < 1:
        raise ConfigError(f"--bins must be at least 1, got {args.bins}")
    from pbassess.inference.memory import check_memory

    # before and after: the ECE's draws x bins, the bootstraps' draws, the bins' sums (checked before reading the data)
    check_memory(8.0 * draws * (4 * bins + 16) + 64.0 * bins,
                 f"recalibration with --draws {draws:,} and --bins {bins:,}", "use a smaller --draws or --bins")
    seed = opt.seed_value(args)
    preds = opt.load_data_args(args)
    with opt.progress(args):
        out = recalibrate(preds, args.method, fit_fraction=fraction, seed=seed, bins=bins, n_draws=draws,
                          ci_prob=opt.ci_prob_value(args), clip=clip)
    out["seed"] = seed
    sentence = (f"{args.method} recalibration of {args.data}: fitted on {out['n_fit']:,} labeled items, "
                f"measured on {out['n_eval']:,} ({out['scoring']} scoring)")
    if args.out:
        opt.save_outputs(SimpleNamespace(), args, "recalibrate", payload=out, sentence=sentence)
    if args.plot:
        raise ConfigError("--plot: pbassess recalibrate draws no figure; use --json or --out")
    if args.json:
        emit_json(out)
        return 0
    print(sentence)
    shown = [f"{k}={v:.4g}" if isinstance(v, float) else f"{k}: {len(v)} values" for k, v in out["params"].items()]
    print("params: " + ", ".join(shown))
    pct = f"{100 * out['ci_prob']:.10g}%"
    for key in ("ece", "nll", "brier"):
        b, a = out["posterior"]["before"][key], out["posterior"]["after"][key]
        print(f"{key:6s} before {out['before'][key]:.4f} ({pct} HDI {b['hdi'][0]:.4f}-{b['hdi'][1]:.4f})  "
              f"after {out['after'][key]:.4f} ({pct} HDI {a['hdi'][0]:.4f}-{a['hdi'][1]:.4f})  "
              f"P(improved) {out['p_improved'][key]:.3f}")
    print(f"seed {seed}" + (f"; written to {args.out}" if args.out else ""))
    return 0
