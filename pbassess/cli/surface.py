"""``pbassess surface`` and ``pbassess surface-explore``: accuracy surfaces over attribute combinations.

* ``pbassess surface DATA --attributes A,B,... --estimator E [--covariate confidence]
  [--continuous AGEP,...] [--subsample-labels N] [--seed S] [--inference nuts|conjugate|advi]
  [--draws D --tune T --chains C] [--ci-prob P] [--json]`` fits the surface and prints, with
  ``--json``, ``{"attributes", "arms", "n", "pool_n", "mean", "var", "hdi", "diagnostics", ...}``.
* ``pbassess surface-explore DATA --attributes ... --estimator E --budget B [--batch-size b]
  [--strategy variance|thompson|bayes-ucb|random] [--seeds S] [--json]`` runs the exploration
  loop on a fully labeled pool and prints the error curves.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from pbassess.cli import emit_json
from pbassess.constants import CI_PROB
from pbassess.errors import ConfigError

__all__ = ["register", "run_explore", "run_surface"]


def _common(parser: argparse.ArgumentParser) -> None:
    from pbassess.surface import ESTIMATORS

    parser.add_argument("data", help="a registered name (e.g. acs-employment) or a prediction file")
    parser.add_argument("--attributes", required=True, help="comma-separated attribute columns defining the arms")
    parser.add_argument("--estimator", default="beta-i", choices=ESTIMATORS, help="surface estimator")
    parser.add_argument("--continuous", default="", help="comma-separated ordinal attributes used as continuous inputs")
    parser.add_argument("--covariate", choices=["confidence"], default=None,
                        help="the model's mean confidence per arm as a covariate of the mean (GP / additive)")
    parser.add_argument("--inference", "--engine", dest="inference", default=None,
                        choices=["nuts", "conjugate", "advi"], help="inference engine")
    parser.add_argument("--draws", type=int, default=None, help="NUTS draws per chain")
    parser.add_argument("--tune", type=int, default=None, help="NUTS tuning steps per chain")
    parser.add_argument("--chains", type=int, default=None, help="NUTS chains")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def register(subparsers: Any) -> None:
    """Add the ``surface`` and ``surface-explore`` subcommands."""
    p = subparsers.add_parser("surface", help="accuracy surface over attribute combinations (arms)",
                              description="Posterior accuracy of every combination of attribute values.")
    _common(p)
    p.add_argument("--subsample-labels", type=int, default=None,
                   help="keep the labels of N random items and hide the rest (evaluation)")
    p.add_argument("--seed", type=int, default=None, help="random seed")
    p.add_argument("--ci-prob", type=float, default=CI_PROB, help="credible mass of the HDIs")
    p.set_defaults(func=run_surface)
    e = subparsers.add_parser("surface-explore", help="simulate active exploration of an accuracy surface",
                              description="Exploration loop on a fully labeled pool; prints MSE curves.")
    _common(e)
    e.add_argument("--budget", type=int, required=True, help="labels to spend")
    e.add_argument("--batch-size", type=int, default=10, help="arms labeled per round")
    e.add_argument("--strategy", default="variance", choices=["variance", "thompson", "bayes-ucb", "random"],
                   help="how to choose the next arms: highest posterior variance, Thompson sampling or Bayes-UCB "
                        "for the worst arms, or at random (default: variance)")
    e.add_argument("--seeds", type=int, default=3, help="number of seeds (0, 1, ...)")
    e.add_argument("--min-support", type=float, default=0.0, help="score only arms with at least this many items")
    e.set_defaults(func=run_explore)


def _split(text: str) -> list[str]:
    return [t.strip() for t in (text or "").split(",") if t.strip()]


def _sample_kwargs(args: argparse.Namespace) -> dict[str, int] | None:
    kw = {k: getattr(args, k) for k in ("draws", "tune", "chains") if getattr(args, k) is not None}
    for key, value in kw.items():
        if value < (0 if key == "tune" else 1):
            raise ConfigError(f"--{key} must be {'non-negative' if key == 'tune' else 'positive'}, got {value}")
    return kw or None


def _load(args: argparse.Namespace):
    from pbassess import load_data

    return load_data(args.data)


def run_surface(args: argparse.Namespace) -> int:
    """Fit and print one surface."""
    from pbassess.surface import fit_surface, hide_labels

    preds = _load(args)
    if args.subsample_labels is not None:
        preds = hide_labels(preds, args.subsample_labels, seed=args.seed)
    result = fit_surface(preds, _split(args.attributes), estimator=args.estimator, inference=args.inference,
                         covariate=args.covariate, continuous=_split(args.continuous), seed=args.seed,
                         sample_kwargs=_sample_kwargs(args), ci_prob=args.ci_prob)
    if args.json:
        emit_json(result.to_json())
        return 0
    print(result.sentence())
    table = result.summary().sort_values("mean")
    cols = [*result.arms.attributes, "n", "pool_n", "mean", "hdi_lower", "hdi_upper"]
    print(table[cols].head(20).to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    if result.diagnostics:
        print({k: v for k, v in result.diagnostics.items() if k in ("max_rhat", "divergences", "min_ess_bulk")})
    return 0


def run_explore(args: argparse.Namespace) -> int:
    """Run the exploration loop and print the MSE curves (mean and spread over seeds)."""
    from pbassess.surface.explore import explore_surface

    if args.seeds < 1:
        raise ConfigError(f"--seeds must be positive, got {args.seeds}")
    fit_kwargs: dict[str, Any] = {"inference": args.inference, "covariate": args.covariate,
                                  "continuous": _split(args.continuous)}
    if _sample_kwargs(args):
        fit_kwargs["sample_kwargs"] = _sample_kwargs(args)
    curves = explore_surface(_load(args), _split(args.attributes), estimator=args.estimator, strategy=args.strategy,
                             budget=args.budget, batch_size=args.batch_size, seeds=list(range(args.seeds)),
                             min_support=args.min_support, fit_kwargs=fit_kwargs)
    n_labels = curves["n_labels"].where(curves["n_labels"] >= 0).mean("seed").values
    out = {"estimator": args.estimator, "strategy": args.strategy, "budget": args.budget,
           "batch_size": args.batch_size, "seeds": args.seeds, "n_labels": [float(x) for x in n_labels]}
    for metric in ("macro_mse", "worst_mse", "micro_mse", "rare_mse"):
        values = curves[metric].values
        out[metric] = {"mean": np.nanmean(values, axis=0).tolist(), "sd": np.nanstd(values, axis=0).tolist()}
    if args.json:
        emit_json(out)
        return 0
    print(f"{args.estimator} / {args.strategy}: macro MSE by labels (mean over {args.seeds} seeds)")
    for n, m, s in zip(out["n_labels"], out["macro_mse"]["mean"], out["macro_mse"]["sd"], strict=False):
        print(f"{n:8.0f}  {m:.5f} +- {s:.5f}")
    return 0
