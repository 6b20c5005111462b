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

import numpy as np

from pbassess.cli import _options as opt
from pbassess.errors import ConfigError, DataError

__all__ = ["register", "run", "run_hierarchical"]

_COMPARE_DESCRIPTION = (
    "Compare a metric between the groups of a column (every pair), or between two or more models scored on "
    "the same items (--models score_A,score_B: a paired model; with --by as well, also within each group). "
    "Prints each group's posterior mean and HDI, each pair's difference, P(difference > 0) and the ROPE "
    "probabilities; --json prints one object with groups, mean, hdi and pairs."
)
_HIERARCHICAL_DESCRIPTION = (
    "Fit the hierarchical accuracy model across the environments of a column (NUTS) and print each "
    "environment's posterior, the population posterior and the fit's diagnostics. --calibration fits the "
    "hierarchical reliability and ECE model instead; --compare-pooling also compares independent, pooled and "
    "hierarchical fits by LOO. --strict exits with status 3 when the fit fails its diagnostics."
)


def _models(value: str | None) -> list[str]:
    if not value:
        return []
    names = [m.strip() for m in value.split(",") if m.strip()]
    return [m if m.startswith("score_") else f"score_{m}" for m in names]


def _load(data: str, model: str | None, threshold: float | None, ties: str | None = None):
    from pbassess.data.registry import load_data

    options: dict[str, Any] = {}
    if model is not None:
        options["model"] = model
    if threshold is not None:
        options["threshold"] = threshold
    if ties is not None:
        options["ties"] = ties
    try:
        return load_data(data, **options)
    except TypeError:
        raise DataError(f"{data}: --models/--threshold apply only to binary-score data with score_* columns") from None


def _add_data_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("data", metavar="DATA", help="prediction file or registered name (see pbassess data list)")
    p.add_argument("--models", default=None,
                   help="score column(s), comma separated: one picks the classifier, several compare models")
    p.add_argument("--threshold", type=float, default=None,
                   help="decision threshold of binary scores: positive where score > T (default 0.5)")
    p.add_argument("--ties", default=None, choices=("negative", "positive"),
                   help="class of a score equal to the threshold (default negative, as scikit-learn's predict)")
    opt.add_seed(p, default=0)
    opt.add_ci_prob(p)
    opt.add_json(p)
    opt.add_strict(p)
    opt.add_out(p, what="result (netCDF) and its figure")
    p.add_argument("--plot", default=None, metavar="PNG", help="save the figure to this file")
    p.add_argument("--save", default=None, metavar="NC", help="save the result to this netCDF file")


def register(subparsers: Any) -> None:
    """Add the ``compare`` and ``hierarchical`` subcommands."""
    p = subparsers.add_parser("compare", help="posterior difference of a metric between groups or models",
                              description=_COMPARE_DESCRIPTION)
    _add_data_args(p)
    p.add_argument("--by", default=None, help="group column (required unless several --models)")
    p.add_argument("--metric", default="accuracy", help="accuracy, tpr, fpr, ece or calibration-bias (default accuracy)")
    p.add_argument("--rope", type=float, default=0.0,
                   help="half-width r of the region of practical equivalence of a difference (default 0)")
    p.add_argument("--groups", default=None, help="comma-separated groups to compare (default all)")
    p.add_argument("--prior", default="uniform", choices=("uniform", "informed"),
                   help="Beta prior per group: uniform (default) or informed by the model's confidence")
    p.add_argument("--pseudocount", type=float, default=2.0, help="prior strength, a positive number (default 2)")
    p.add_argument("--bins", type=int, default=10, help="equal-width confidence bins of the ece metric (default 10)")
    p.add_argument("--draws", default=None, metavar="D",
                   help="posterior draws: conjugate Monte Carlo draws (default 4000) or NUTS draws per chain")
    opt.add_inference(p)
    p.set_defaults(func=run)

    h = subparsers.add_parser("hierarchical", help="accuracy per environment with partial pooling (NUTS)",
                              description=_HIERARCHICAL_DESCRIPTION)
    _add_data_args(h)
    h.add_argument("--by", required=True, help="environment column")
    h.add_argument("--per-class", action="store_true", help="cells are environment x predicted class")
    h.add_argument("--kind", default="logit-normal", choices=("logit-normal", "beta"),
                   help="population distribution of the environments (default logit-normal)")
    h.add_argument("--pooling", default="hierarchical", choices=("hierarchical", "independent", "pooled"),
                   help="partial pooling (default), no pooling or complete pooling")
    h.add_argument("--prior", default="uniform", choices=("uniform", "informed"),
                   help="centre the population on 0.5 (uniform, default) or on the model's confidence")
    h.add_argument("--calibration", action="store_true", help="hierarchical reliability and ECE instead")
    h.add_argument("--bins", type=int, default=10, help="confidence bins of --calibration (default 10)")
    h.add_argument("--compare-pooling", action="store_true",
                   help="also compare independent / pooled / hierarchical fits by LOO")
    opt.add_inference(h, default="nuts")
    h.add_argument("--draws", type=int, default=None, help="NUTS draws per chain (default 1000)")
    h.add_argument("--tune", type=int, default=None, help="NUTS tuning steps per chain (default 1000)")
    h.add_argument("--chains", type=int, default=None, help="NUTS chains (default 4)")
    h.add_argument("--target-accept", type=float, default=None, help="NUTS target acceptance rate (default 0.95)")
    h.add_argument("--sampler", default=None, choices=("nutpie", "pymc"), help="NUTS implementation (default nutpie)")
    h.set_defaults(func=run_hierarchical)


def _ci(args: argparse.Namespace) -> dict[str, Any]:
    return {} if args.ci_prob is None else {"ci_prob": opt.ci_prob_value(args.ci_prob)}


def _finish(result: Any, args: argparse.Namespace, payload: dict[str, Any], command: str = "compare") -> int:
    from pathlib import Path

    from pbassess.cli import emit_json

    plot, save = args.plot, args.save
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        plot = plot or out / f"{result.metric}.png"
        save = save or out / f"{result.metric}.nc"
    if plot:
        import matplotlib

        matplotlib.use("Agg")
        result.plot().savefig(plot, dpi=120, bbox_inches="tight")
    if save:
        result.save(save)
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
    return opt.finish_diagnostics(result, args, command)


def run(args: argparse.Namespace) -> int:
    """Run ``pbassess compare``."""
    import contextlib

    from pbassess.assess.compare import compare_groups, compare_models
    from pbassess.inference import quiet_progress

    models = _models(args.models)
    draws = opt.number_value(args.draws, "--draws", integer=True, minimum=1)
    common = {"metric": args.metric, "rope": args.rope, "pseudocount": args.pseudocount, "bins": args.bins,
              "inference": opt.inference_value(args.inference), "seed": opt.seed_value(args.seed), "draws": draws,
              **_ci(args)}
    ties = getattr(args, "ties", None)
    with quiet_progress() if args.json else contextlib.nullcontext():
        if len(models) >= 2:
            if args.prior != "uniform":
                raise ConfigError("--prior informed is not available for the paired model comparison")
            preds = {m[6:]: _load(args.data, m, args.threshold, ties) for m in models}
            result = compare_models(preds, **common)
            payload = result.to_json()
            if args.by:
                first = next(iter(preds.values()))
                values = first.group(args.by)
                text = np.array([str(v) for v in values])
                wanted = args.groups.split(",") if args.groups else sorted(set(text.tolist()))
                payload["by_group"] = {g: compare_models(preds, mask=text == g, **common).to_json() for g in wanted}
            return _finish(result, args, payload)
        if not args.by:
            raise ConfigError("--by COLUMN is required (unless several --models are compared)")
        pred = _load(args.data, models[0] if models else None, args.threshold, ties)
        groups = args.groups.split(",") if args.groups else None
        result = compare_groups(pred, args.by, groups=groups, prior=args.prior, **common)
    return _finish(result, args, result.to_json())


def run_hierarchical(args: argparse.Namespace) -> int:
    """Run ``pbassess hierarchical``."""
    import contextlib
    import warnings

    from pbassess.assess.hierarchical import assess_hierarchical, assess_hierarchical_calibration

    opt.inference_value(args.inference, default="nuts")
    if args.inference is not None and opt.inference_value(args.inference) != "nuts":
        raise ConfigError("pbassess hierarchical fits its models with NUTS only: --inference nuts")
    seed = opt.seed_value(args.seed)
    models = _models(args.models)
    if len(models) > 1:
        raise ConfigError("pbassess hierarchical takes one classifier: --models score_X")
    pred = _load(args.data, models[0] if models else None, args.threshold, getattr(args, "ties", None))
    sampler = {"draws": args.draws, "tune": args.tune, "chains": args.chains, "target_accept": args.target_accept,
               "sampler": args.sampler}
    sampler = {k: v for k, v in sampler.items() if v is not None}
    from pbassess.inference import quiet_progress

    with warnings.catch_warnings(record=True) as caught, quiet_progress() if args.json else contextlib.nullcontext():
        warnings.simplefilter("always", UserWarning)
        if args.calibration:
            result = assess_hierarchical_calibration(pred, args.by, bins=args.bins, prior=args.prior, seed=seed,
                                                     **_ci(args), **sampler)
        else:
            result = assess_hierarchical(pred, args.by, per_class=args.per_class, kind=args.kind,
                                         pooling=args.pooling, prior=args.prior, seed=seed, **_ci(args),
                                         **sampler)
        payload = result.to_json()
        if args.compare_pooling:
            from pbassess.assess.pooling import compare_pooling

            cmp = compare_pooling(pred, args.by, per_class=args.per_class, seed=seed, **sampler)
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
    return _finish(result, args, payload, "hierarchical")
