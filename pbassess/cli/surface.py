"""``pbassess surface`` and ``pbassess surface-explore``: accuracy surfaces over attribute combinations.

* ``pbassess surface DATA --attributes A,B,... --estimator E [--covariate confidence]
  [--continuous AGEP,...] [--subsample-labels N] [--[no-]stack-confidence] [--min-elpd-gain G]
  [--confidence-combination select|stack] [--[no-]widen-scales]
  [--coding contrast|indicator] [--residual-scales MAIN,PAIR]`` and the data, inference
  (``conjugate``/``nuts``/``advi``), seed, interval, output, strict and progress options fits the
  surface and prints, with ``--json``, ``{"attributes", "arms", "n", "pool_n", "mean", "var",
  "hdi", "hdi_low", "hdi_high", "n_labeled", "n_pool", "confidence", "anchor", "diagnostics", "seed",
  ...}``; ``--covariate confidence`` anchors the surface at the calibrated confidence; when the fit fails its diagnostics the sentence says
  which quantity and what to try, and ``--strict`` exits with status 3.
* ``pbassess surface-explore DATA --attributes ... --estimator E --budget N [--arms-per-round N]
  [--strategy variance|variance-reduction|design|thompson|bayes-ucb|random] [--seeds N] [--seed SEED] [--json]`` runs the
  exploration loop on a fully labeled pool (``--seeds`` replicate runs with seeds ``SEED``,
  ``SEED+1``, ...) and prints the error curves.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

from pbassess.cli import emit_json
from pbassess.cli import options as opt
from pbassess.errors import ConfigError

__all__ = ["register", "run_explore", "run_surface"]


def _common(parser: argparse.ArgumentParser) -> None:
    from pbassess.surface.estimators import ESTIMATORS

    opt.add_data(parser)
    parser.add_argument("--attributes", required=True, metavar="A,B,...",
                        help="comma-separated attribute columns defining the arms")
    parser.add_argument("--estimator", default="beta-i", choices=ESTIMATORS, help="surface estimator (default beta-i)")
    parser.add_argument("--continuous", default="", metavar="A,B,...",
                        help="comma-separated ordinal attributes used as continuous inputs")
    parser.add_argument("--covariate", choices=["confidence", "confidence-linear"], default=None,
                        help="confidence: anchor the surface at the model's calibrated confidence (the labels move "
                             "arms only through residual effects that can shrink to zero; additive / GP); "
                             "confidence-linear: the earlier additive model with the mean confidence as a linear "
                             "covariate")
    opt.add_inference(parser, choices=("conjugate", "nuts", "advi"), default=None,
                      default_note="conjugate for cpredictor and beta-i, nuts otherwise",
                      draws_default="the surface fit's: 4 chains x 250 draws (750 for the confidence-anchored model) after 500 tuning steps")
    opt.add_seed(parser)
    opt.add_quiet(parser)


def register(subparsers: Any) -> None:
    """Add the ``surface`` and ``surface-explore`` subcommands."""
    p = opt.add_command(
        subparsers, "surface", fits=True, help="accuracy surface over attribute combinations (arms)",
        description="Posterior accuracy of every combination of attribute values.",
        examples=("pbassess surface adult-sex --attributes race,sex --estimator beta-i --seed 1 --json",
                  "pbassess surface adult-sex --attributes race,sex --estimator beta-i --subsample-labels 2000 "
                  "--seed 1 --out surface-out"))
    _common(p)
    p.add_argument("--subsample-labels", type=opt.checked_number("--subsample-labels", integer=True, minimum=1), default=None, metavar="N",
                   help="keep the labels of N random items and hide the rest (evaluation)")
    p.add_argument("--stack-confidence", action=argparse.BooleanOptionalAction, default=None,
                   help="with --estimator additive --covariate confidence (the default there): stack the anchored "
                        "surface with the label-free confidence (PSIS-LOO on the labeled items), so that labels "
                        "that show no miscalibration leave the surface on the confidence, with the fit's "
                        "uncertainty; --no-stack-confidence reports the anchored posterior alone")
    p.add_argument("--min-elpd-gain", type=_elpd_gain, default=None, metavar="G",
                   help="where the surface is stacked: leave the confidence only when the fit's LOO ELPD gain over it "
                        "exceeds G (default 4; with --confidence-combination stack, --min-elpd-gain=-inf is plain "
                        "stacking)")
    p.add_argument("--confidence-combination", choices=["select", "stack"], default=None,
                   help="where the surface is stacked and the fit's gain exceeds --min-elpd-gain: report the "
                        "anchored fit alone (select, the default) or its mixture with the confidence at the stacking "
                        "weight (stack)")
    p.add_argument("--widen-scales", action=argparse.BooleanOptionalAction, default=None,
                   help="where the anchored surface is stacked with the confidence at its default residual prior: "
                        "when the labels show the confidence wrong (the fit's LOO ELPD gain over it exceeds "
                        "--min-elpd-gain), refit with the wider residual prior (--coding indicator "
                        "--residual-scales 0.1,0.05) and report that fit (default: on; --no-widen-scales: off)")
    p.add_argument("--coding", choices=["contrast", "indicator"], default=None,
                   help="the anchored surface's residual design: sum-to-zero contrasts (default) or a coefficient "
                        "per attribute level and per pair cell (a subgroup that is off is then one coefficient)")
    p.add_argument("--residual-scales", type=_residual_scales, default=None, metavar="MAIN,PAIR",
                   help="the anchored surface's prior scales of the main-effect and pair-effect scales "
                        "(default 0.05,0.025; 0 drops a term)")
    opt.add_interval(p)
    opt.add_output(p)
    opt.add_strict(p)
    p.set_defaults(func=run_surface)
    e = opt.add_command(
        subparsers, "surface-explore", help="simulate active exploration of an accuracy surface",
        description="Exploration loop on a fully labeled pool; prints MSE curves (mean and spread over seeds).",
        examples=("pbassess surface-explore adult-sex --attributes race,sex --estimator beta-i --budget 60 "
                  "--arms-per-round 5 --seeds 2 --seed 1 --json",
                  "pbassess surface-explore adult-sex --attributes race,sex --estimator beta-i --budget 60 "
                  "--strategy thompson --seed 7 --out explore-out"))
    _common(e)
    e.add_argument("--budget", type=opt.checked_number("--budget", integer=True, minimum=1), required=True, metavar="N", help="labels to spend")
    e.add_argument("--arms-per-round", dest="batch_size", type=opt.checked_number("--arms-per-round", integer=True, minimum=1), default=10, metavar="N",
                   help="arms labeled per round (default 10)")
    opt.add_deprecated_alias(e, "--batch-size", "--arms-per-round", "batch_size",
                             type=opt.checked_number("--batch-size", integer=True, minimum=1))
    e.add_argument("--strategy", default="variance",
                   choices=["variance", "variance-reduction", "design", "thompson", "bayes-ucb", "random"],
                   help="how to choose the next arms: highest posterior variance, largest expected reduction of "
                        "the surface's summed variance, Thompson sampling or Bayes-UCB for the worst arms, or at "
                        "random (default: variance)")
    e.add_argument("--seeds", type=opt.checked_number("--seeds", integer=True, minimum=1), default=3, metavar="N",
                   help="number of replicate runs, with seeds SEED, SEED+1, ... (default 3)")
    e.add_argument("--min-support", type=opt.checked_number("--min-support", minimum=0), default=0.0, metavar="N",
                   help="score only arms with at least this many pool items (a count, at least 0; default 0: every "
                        "arm)")
    opt.add_interval(e, "the posterior intervals of each round's fit")
    opt.add_output(e, "the curves (.nc), their figure and report.md")
    e.set_defaults(func=run_explore)


def _split(text: str) -> list[str]:
    return [t.strip() for t in (text or "").split(",") if t.strip()]


def _fit_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """``inference`` and ``sample_kwargs`` of fit_surface (the draws go to NUTS when the estimator samples)."""
    kw: dict[str, Any] = {"inference": args.inference}
    sample = opt.sample_kwargs_value(args)
    if args.inference == "conjugate" and set(sample) - {"draws"}:
        raise ConfigError(f"--{sorted(set(sample) - {'draws'})[0].replace('_', '-')} applies to --inference nuts")
    if sample:
        kw["sample_kwargs"] = sample
    return kw


def _elpd_gain(text: str) -> float:
    """``--min-elpd-gain``: a finite number or -inf (plain stacking), else one line."""
    if text.strip().lower() in ("-inf", "-infinity"):
        return float("-inf")
    return float(opt.checked_number("--min-elpd-gain")(text))


def _residual_scales(text: str) -> tuple[float, float]:
    """``--residual-scales MAIN,PAIR``: two non-negative numbers, else one line."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2:
        raise opt.BadValue(f"--residual-scales takes two numbers MAIN,PAIR (e.g. 0.1,0.05), got {text!r}")
    main, pair = (float(opt.checked_number("--residual-scales", minimum=0)(p)) for p in parts)
    return main, pair


def _anchored_options(args: argparse.Namespace) -> dict[str, Any]:
    """``model_options`` from --coding and --residual-scales (the anchored surface's only), or a one-line error."""
    options: dict[str, Any] = {}
    if args.coding is not None:
        options["coding"] = args.coding
    if args.residual_scales is not None:
        options["main_scale"], options["interaction_scale"] = args.residual_scales
    if options and (args.estimator != "additive" or args.covariate != "confidence"):
        flag = "--coding" if args.coding is not None else "--residual-scales"
        raise ConfigError(f"{flag} applies to the confidence-anchored surface: --estimator additive --covariate "
                          "confidence")
    for flag, value in (("--min-elpd-gain", args.min_elpd_gain), ("--confidence-combination", args.confidence_combination)):
        if value is not None and (args.stack_confidence is False or args.estimator != "additive"
                                  or args.covariate != "confidence"):
            raise ConfigError(f"{flag} applies where the anchored surface is stacked with the confidence "
                              "(--estimator additive --covariate confidence, not --no-stack-confidence)")
    if args.widen_scales and (args.stack_confidence is False or args.estimator != "additive"
                              or args.covariate != "confidence"):
        raise ConfigError("--widen-scales applies where the anchored surface is stacked with the confidence "
                          "(--estimator additive --covariate confidence, not --no-stack-confidence)")
    if args.widen_scales and options:
        flag = "--coding" if args.coding is not None else "--residual-scales"
        raise ConfigError(f"--widen-scales refits with the wider residual prior, and {flag} sets that prior already "
                          "(drop one of them)")
    return options


def _check_surface_memory(preds: Any, args: argparse.Namespace) -> None:
    """Refuse in one line, before fitting, a sampled surface whose draws x arms would not fit in memory."""
    from pbassess.inference import total_draws
    from pbassess.inference.memory import check_memory

    inference = args.inference or ("conjugate" if args.estimator in ("cpredictor", "beta-i") else "nuts")
    try:
        import pandas as pd

        attributes = _split(args.attributes)
        n_arms = len(pd.DataFrame({a: preds.group(a) for a in attributes}).drop_duplicates())
        draws = total_draws(inference, opt.sample_kwargs_value(args).get("draws"), opt.sample_kwargs_value(args))
    except Exception:  # noqa: BLE001 - bad attributes or options are reported by the fit itself, in one line
        return
    # the trace of the per-arm latent values and accuracies, their DataTree copies and summaries: ~8 draws x arms
    check_memory(64.0 * draws * n_arms, f"the {args.estimator} surface over {n_arms:,} arms with {draws:,} draws",
                 "use fewer --attributes (fewer arms), a smaller --draws, or --estimator beta-i")


def run_surface(args: argparse.Namespace) -> int:
    """Fit and print one surface."""
    from pbassess.surface import fit_surface, hide_labels

    model_options = _anchored_options(args)
    preds = opt.load_data_args(args)
    seed = opt.seed_value(args)
    if args.subsample_labels is not None:
        if args.subsample_labels > preds.n_labeled:
            print(f"pbassess surface: note: --subsample-labels {args.subsample_labels:,} is more than the "
                  f"{preds.n_labeled:,} labeled items, so all of them are kept", file=sys.stderr)
        preds = hide_labels(preds, args.subsample_labels, seed=seed)
    _check_surface_memory(preds, args)
    with opt.progress(args):
        result = fit_surface(preds, _split(args.attributes), estimator=args.estimator, covariate=args.covariate,
                             continuous=_split(args.continuous), seed=seed, ci_prob=opt.ci_prob_value(args),
                             stack_confidence=args.stack_confidence, model_options=model_options or None,
                             widen_scales=args.widen_scales,
                             **({} if args.min_elpd_gain is None else {"min_elpd_gain": args.min_elpd_gain}),
                             **({} if args.confidence_combination is None
                                else {"confidence_combination": args.confidence_combination}),
                             **_fit_kwargs(args))

    def table() -> None:
        frame = result.summary().sort_values("mean")
        cols = [*result.arms.attributes, "n", "pool_n", "mean", "hdi_low", "hdi_high"]
        print(frame[cols].head(20).to_string(index=False, float_format=lambda x: f"{x:.3f}"))
        diag = result.diagnostics or {}
        shown = {k: diag[k] for k in ("max_rhat", "min_ess_bulk", "divergences") if diag.get(k) is not None}
        if shown:
            print("diagnostics: " + ", ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}"
                                              for k, v in shown.items()))

    return opt.finish(result, args, "surface", text=table)


def run_explore(args: argparse.Namespace) -> int:
    """Run the exploration loop and print the MSE curves (mean and spread over seeds)."""
    from pbassess.surface.explore import explore_surface

    if args.seeds < 1:
        raise ConfigError(f"--seeds must be positive, got {args.seeds}")
    seed = opt.seed_value(args)
    fit_kwargs: dict[str, Any] = {"covariate": args.covariate, "continuous": _split(args.continuous),
                                  "ci_prob": opt.ci_prob_value(args), **_fit_kwargs(args)}
    seeds = list(range(seed, seed + args.seeds))
    with opt.progress(args):
        curves = explore_surface(opt.load_data_args(args), _split(args.attributes), estimator=args.estimator,
                                 strategy=args.strategy, budget=args.budget, batch_size=args.batch_size, seeds=seeds,
                                 min_support=args.min_support, fit_kwargs=fit_kwargs)
    n_labels = curves["n_labels"].where(curves["n_labels"] >= 0).mean("seed").values
    out = {"estimator": args.estimator, "strategy": args.strategy, "budget": args.budget,
           "batch_size": args.batch_size, "arms_per_round": args.batch_size, "seeds": args.seeds,
           "seed_list": seeds, "seed": seed, "n_labels": [float(x) for x in n_labels]}
    for metric in ("macro_mse", "worst_mse", "micro_mse", "rare_mse"):
        values = curves[metric].values
        out[metric] = {"mean": np.nanmean(values, axis=0).tolist(), "sd": np.nanstd(values, axis=0).tolist()}
    sentence = (f"{args.estimator} / {args.strategy}: macro MSE {out['macro_mse']['mean'][-1]:.5f} after "
                f"{out['n_labels'][-1]:.0f} labels (mean over {args.seeds} seeds from {seed})")
    opt.save_outputs(curves, args, "surface-explore", payload=out, sentence=sentence)
    if args.json:
        emit_json(out)
        return 0
    print(f"{args.estimator} / {args.strategy}: macro MSE by labels (mean over {args.seeds} seeds from {seed})")
    for n, m, s in zip(out["n_labels"], out["macro_mse"]["mean"], out["macro_mse"]["sd"], strict=False):
        print(f"{n:8.0f}  {m:.5f} +- {s:.5f}")
    print(f"seed {seed}" + (f"; written to {args.out}" if args.out else ""))
    return 0
