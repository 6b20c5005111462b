"""``pbassess compare`` and ``pbassess hierarchical``.

``pbassess compare DATA --by COLUMN [--models score_X[,score_Y...]] [--metric accuracy|tpr|fpr|ece|calibration-bias]
[--rope r] [--json]`` compares a metric between the groups of a column (all pairs), or, with two
or more ``--models``, between models scored on the same items (paired model; with ``--by`` as
well, the models are also compared within each group, under ``"by_group"``). ``--json`` prints
``{"groups": [...], "mean": [...], "hdi": [...], "pairs": [{"a", "b", "diff_mean",
"p_greater", "rope": [below, inside, above]}, ...]}``.

``pbassess hierarchical DATA --by COLUMN [--json]`` fits the hierarchical accuracy model across
the environments of a column and prints per-environment posteriors, the population posterior
and ``{"diagnostics": {"max_rhat", "min_ess_bulk", "divergences"}}`` (``--calibration``: the
hierarchical reliability / ECE model instead; ``--compare-pooling``: also the LOO comparison of
independent, pooled and hierarchical fits).

DATA is a prediction file or a registered name (``pbassess data list``); fairness names take
``--models score_LR`` to pick the classifier.
"""

from __future__ import annotations

import argparse
from typing import Any

from pbassess.errors import ConfigError, DataError

__all__ = ["register", "run", "run_hierarchical"]


def _models(value: str | None) -> list[str]:
    if not value:
        return []
    names = [m.strip() for m in value.split(",") if m.strip()]
    return [m if m.startswith("score_") else f"score_{m}" for m in names]


def _load(data: str, model: str | None, threshold: float | None):
    from pbassess.data.registry import load_data

    options: dict[str, Any] = {}
    if model is not None:
        options["model"] = model
    if threshold is not None:
        options["threshold"] = threshold
    try:
        return load_data(data, **options)
    except TypeError:
        raise DataError(f"{data}: --models/--threshold apply only to binary-score data with score_* columns") from None


def _add_data_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("data", metavar="DATA", help="prediction file or registered name")
    p.add_argument("--models", default=None,
                   help="score column(s), comma separated: one picks the classifier, several compare models")
    p.add_argument("--threshold", type=float, default=None, help="decision threshold of binary scores")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--ci-prob", type=float, default=None, help="credible mass of the HDIs (default 0.95)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--plot", default=None, metavar="PNG", help="save the figure here")
    p.add_argument("--save", default=None, metavar="NC", help="save the result (netCDF)")


def register(subparsers: Any) -> None:
    """Add the ``compare`` and ``hierarchical`` subcommands."""
    p = subparsers.add_parser("compare", help="posterior difference of a metric between groups or models",
                              description=__doc__.split("\n\n")[1])
    _add_data_args(p)
    p.add_argument("--by", default=None, help="group column (required unless several --models)")
    p.add_argument("--metric", default="accuracy", help="accuracy, tpr, fpr, ece or calibration-bias")
    p.add_argument("--rope", type=float, default=0.0, help="half-width r of the region of practical equivalence")
    p.add_argument("--groups", default=None, help="comma-separated groups to compare (default all)")
    p.add_argument("--prior", default="uniform", choices=("uniform", "informed"))
    p.add_argument("--pseudocount", type=float, default=2.0)
    p.add_argument("--bins", type=int, default=10, help="confidence bins for ece")
    p.add_argument("--draws", type=int, default=None, help="posterior draws (conjugate) or NUTS draws (mcmc)")
    p.add_argument("--engine", default="conjugate", choices=("conjugate", "mcmc"))
    p.set_defaults(func=run)

    h = subparsers.add_parser("hierarchical", help="accuracy per environment with partial pooling (NUTS)",
                              description=__doc__.split("\n\n")[2])
    _add_data_args(h)
    h.add_argument("--by", required=True, help="environment column")
    h.add_argument("--per-class", action="store_true", help="cells are environment x predicted class")
    h.add_argument("--kind", default="logit-normal", choices=("logit-normal", "beta"))
    h.add_argument("--pooling", default="hierarchical", choices=("hierarchical", "independent", "pooled"))
    h.add_argument("--prior", default="uniform", choices=("uniform", "informed"))
    h.add_argument("--calibration", action="store_true", help="hierarchical reliability and ECE instead")
    h.add_argument("--bins", type=int, default=10)
    h.add_argument("--compare-pooling", action="store_true",
                   help="also compare independent / pooled / hierarchical fits by LOO")
    h.add_argument("--draws", type=int, default=None)
    h.add_argument("--tune", type=int, default=None)
    h.add_argument("--chains", type=int, default=None)
    h.add_argument("--target-accept", type=float, default=None)
    h.add_argument("--sampler", default=None, choices=("nutpie", "pymc"))
    h.set_defaults(func=run_hierarchical)


def _ci(args: argparse.Namespace) -> dict[str, Any]:
    if args.ci_prob is None:
        return {}
    if not 0 < args.ci_prob < 1:
        raise ConfigError(f"--ci-prob must be in (0, 1), got {args.ci_prob}")
    return {"ci_prob": args.ci_prob}


def _finish(result: Any, args: argparse.Namespace, payload: dict[str, Any]) -> int:
    from pbassess.cli import emit_json

    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        result.plot().savefig(args.plot, dpi=120, bbox_inches="tight")
    if args.save:
        result.save(args.save)
    if args.json:
        emit_json(payload)
    else:
        import pandas as pd

        print(result.sentence())
        with pd.option_context("display.width", 160, "display.max_columns", 20):
            print(result.summary().round(4).to_string(index=False))
            pairs = result.summary().attrs.get("pairs")
            if pairs is not None and len(pairs):
                print(pairs.round(4).to_string(index=False))
            if "comparison" in payload:
                print("LOO comparison of independent / pooled / hierarchical fits:")
                print(pd.DataFrame(payload["comparison"]["table"]).round(3).to_string(index=False))
    return 0


def run(args: argparse.Namespace) -> int:
    """Run ``pbassess compare``."""
    from pbassess.assess.compare import compare_groups, compare_models

    models = _models(args.models)
    common = {"metric": args.metric, "rope": args.rope, "pseudocount": args.pseudocount, "bins": args.bins,
              "engine": args.engine, "seed": args.seed, **_ci(args)}
    if args.draws is not None:
        if args.draws < 1:
            raise ConfigError(f"--draws must be positive, got {args.draws}")
        common["n_draws" if args.engine == "conjugate" else "draws"] = args.draws
    if len(models) >= 2:
        if args.prior != "uniform":
            raise ConfigError("--prior informed is not available for the paired model comparison")
        preds = {m[6:]: _load(args.data, m, args.threshold) for m in models}
        result = compare_models(preds, **common)
        payload = result.to_json()
        if args.by:
            first = next(iter(preds.values()))
            values = first.group(args.by)
            wanted = args.groups.split(",") if args.groups else sorted(set(values.tolist()))
            payload["by_group"] = {
                g: compare_models(preds, mask=values == g, **common).to_json() for g in wanted
            }
        return _finish(result, args, payload)
    if not args.by:
        raise ConfigError("--by COLUMN is required (unless several --models are compared)")
    pred = _load(args.data, models[0] if models else None, args.threshold)
    groups = args.groups.split(",") if args.groups else None
    result = compare_groups(pred, args.by, groups=groups, prior=args.prior, **common)
    return _finish(result, args, result.to_json())


def run_hierarchical(args: argparse.Namespace) -> int:
    """Run ``pbassess hierarchical``."""
    import warnings

    from pbassess.assess.hierarchical import assess_hierarchical, assess_hierarchical_calibration

    models = _models(args.models)
    if len(models) > 1:
        raise ConfigError("pbassess hierarchical takes one classifier: --models score_X")
    pred = _load(args.data, models[0] if models else None, args.threshold)
    sampler = {"draws": args.draws, "tune": args.tune, "chains": args.chains, "target_accept": args.target_accept,
               "sampler": args.sampler}
    sampler = {k: v for k, v in sampler.items() if v is not None}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        if args.calibration:
            result = assess_hierarchical_calibration(pred, args.by, bins=args.bins, prior=args.prior, seed=args.seed,
                                                     **_ci(args), **sampler)
        else:
            result = assess_hierarchical(pred, args.by, per_class=args.per_class, kind=args.kind,
                                         pooling=args.pooling, prior=args.prior, seed=args.seed, **_ci(args),
                                         **sampler)
        payload = result.to_json()
        if args.compare_pooling:
            from pbassess.assess.pooling import compare_pooling

            cmp = compare_pooling(pred, args.by, per_class=args.per_class, seed=args.seed, **sampler)
            table = cmp.table.reset_index(names="variant")
            keep = ["variant", "rank", "elpd", "elpd_diff", "dse", "weight", "pareto_k_bad", "max_rhat",
                    "min_ess_bulk", "divergences", "prior_check_extreme"]
            payload["comparison"] = {"table": table[[c for c in keep if c in table]].to_dict(orient="records"),
                                     "warnings": cmp.warnings}
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)
                and ("MCMC" in str(w.message) or "Pareto" in str(w.message))]
    if messages:
        payload["warnings"] = messages
    import sys

    for message in messages:
        print(f"pbassess hierarchical: warning: {message}", file=sys.stderr)
    return _finish(result, args, payload)
