"""``pbassess compare`` and ``pbassess hierarchical``.

``pbassess compare DATA --by COLUMN [--models score_X[,score_Y...]] [--metric accuracy|tpr|fpr|calibration-bias|ece]
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

from pbassess.cli import options as opt
from pbassess.errors import ConfigError

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


def _load(args: argparse.Namespace, model: str | None):
    return opt.load_data_args(argparse.Namespace(**{**vars(args), "models": model}))


def _add_common(p: argparse.ArgumentParser, several_models: bool = True) -> None:
    opt.add_data(p, several_models=several_models)
    opt.add_seed(p)
    opt.add_interval(p)
    opt.add_output(p)
    opt.add_strict(p)
    opt.add_quiet(p)
    opt.add_deprecated_alias(p, "--save", "--out DIR", "save")


def register(subparsers: Any) -> None:
    """Add the ``compare`` and ``hierarchical`` subcommands."""
    p = opt.add_command(subparsers, "compare", fits=True, help="posterior difference of a metric between groups or models",
                        description=_COMPARE_DESCRIPTION, examples=(
                            "pbassess compare digits-shift --by environment --seed 1 --json",
                            "pbassess compare digits-shift --by environment --metric ece --rope 0.02 --seed 1 "
                            "--out compare-out"))
    _add_common(p)
    p.add_argument("--by", default=None, metavar="COLUMN", help="group column (required unless several --models)")
    p.add_argument("--metric", default="accuracy", metavar="{accuracy,tpr,fpr,calibration-bias,ece}",
                   help="metric to compare (default accuracy)")
    p.add_argument("--rope", type=float, default=0.0, metavar="R",
                   help="half-width R of the region of practical equivalence of a difference (default 0)")
    p.add_argument("--groups", default=None, metavar="G1,G2", help="comma-separated groups to compare (default all)")
    p.add_argument("--prior", default="uniform", choices=("uniform", "informed"),
                   help="Beta prior per group: uniform (default) or informed by the model's confidence")
    p.add_argument("--pseudocount", type=float, default=2.0, metavar="PC",
                   help="prior strength, a positive number (default 2)")
    p.add_argument("--bins", type=int, default=10, metavar="B",
                   help="equal-width confidence bins of the ece metric (default 10)")
    opt.add_inference(p, draws_default="4000 conjugate draws; NUTS: the fit's")
    p.set_defaults(func=run)

    h = opt.add_command(subparsers, "hierarchical", fits=True, help="accuracy per environment with partial pooling (NUTS)",
                        description=_HIERARCHICAL_DESCRIPTION, examples=(
                            "pbassess hierarchical digits-shift --by environment --draws 200 --tune 200 --chains 2 "
                            "--seed 1 --json",
                            "pbassess hierarchical digits-shift --by environment --kind beta --draws 200 --tune 200 "
                            "--chains 2 --seed 1 --out hierarchical-out"))
    _add_common(h, several_models=False)
    h.add_argument("--by", required=True, metavar="COLUMN", help="environment column")
    h.add_argument("--per-class", action="store_true", help="cells are environment x predicted class")
    h.add_argument("--kind", default="logit-normal", choices=("logit-normal", "beta"),
                   help="population distribution of the environments (default logit-normal)")
    h.add_argument("--pooling", default="hierarchical", choices=("hierarchical", "independent", "pooled"),
                   help="partial pooling (default), no pooling or complete pooling")
    h.add_argument("--prior", default="uniform", choices=("uniform", "informed"),
                   help="centre the population on 0.5 (uniform, default) or on the model's confidence")
    h.add_argument("--calibration", action="store_true", help="hierarchical reliability and ECE instead")
    h.add_argument("--bins", type=int, default=10, metavar="B", help="confidence bins of --calibration (default 10)")
    h.add_argument("--compare-pooling", action="store_true",
                   help="also compare independent / pooled / hierarchical fits by LOO")
    opt.add_inference(h, choices=("nuts",), default="nuts", draws_default="the fit's, 1000")
    h.add_argument("--sampler", default=None, choices=("nutpie", "pymc"), help="NUTS implementation (default nutpie)")
    h.set_defaults(func=run_hierarchical)


def _ci(args: argparse.Namespace) -> dict[str, Any]:
    return {} if args.ci_prob is None else {"ci_prob": opt.ci_prob_value(args)}


def _finish(result: Any, args: argparse.Namespace, payload: dict[str, Any], command: str = "compare") -> int:
    save = getattr(args, "save", None)
    if save:  # the old --save NC
        result.save(save)
    opt.save_outputs(result, args, result.metric)

    def table() -> None:
        import pandas as pd

        with pd.option_context("display.width", 160, "display.max_columns", 20):
            print(result.summary().round(4).to_string(index=False))
            pairs = result.summary().attrs.get("pairs")
            if pairs is not None and len(pairs):
                print(pairs.round(4).to_string(index=False))
            if "comparison" in payload:
                print("LOO comparison of independent / pooled / hierarchical fits:")
                print(pd.DataFrame(payload["comparison"]["table"]).round(3).to_string(index=False))

    return opt.finish(result, args, command, name=result.metric, payload=payload, text=table, save=False)


def run(args: argparse.Namespace) -> int:
    """Run ``pbassess compare``."""
    from pbassess.assess.compare import compare_groups, compare_models

    models = _models(args.models)
    common = {"metric": args.metric, "rope": args.rope, "pseudocount": args.pseudocount, "bins": args.bins,
              "seed": opt.seed_value(args), **opt.inference_kwargs(args), **_ci(args)}
    with opt.progress(args):
        if len(models) >= 2:
            if args.prior != "uniform":
                raise ConfigError("--prior informed is not available for the paired model comparison")
            preds = {m[6:]: _load(args, m) for m in models}
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
        pred = _load(args, models[0] if models else None)
        groups = args.groups.split(",") if args.groups else None
        result = compare_groups(pred, args.by, groups=groups, prior=args.prior, **common)
    return _finish(result, args, result.to_json())


def run_hierarchical(args: argparse.Namespace) -> int:
    """Run ``pbassess hierarchical``."""
    import warnings

    from pbassess.assess.hierarchical import assess_hierarchical, assess_hierarchical_calibration

    seed = opt.seed_value(args)
    models = _models(args.models)
    if len(models) > 1:
        raise ConfigError("pbassess hierarchical takes one classifier: --models score_X")
    pred = _load(args, models[0] if models else None)
    sampler = opt.sample_kwargs_value(args)
    if args.sampler is not None:
        sampler["sampler"] = args.sampler

    with warnings.catch_warnings(record=True) as caught, opt.progress(args):
        warnings.simplefilter("always", UserWarning)
        if args.calibration:
            result = assess_hierarchical_calibration(pred, args.by, bins=args.bins, prior=args.prior, seed=seed,
                                                     **_ci(args), sample_kwargs=sampler)
        else:
            result = assess_hierarchical(pred, args.by, per_class=args.per_class, kind=args.kind,
                                         pooling=args.pooling, prior=args.prior, seed=seed, **_ci(args),
                                         sample_kwargs=sampler)
        payload = result.to_json()
        if args.compare_pooling:
            from pbassess.assess.pooling import compare_pooling

            cmp = compare_pooling(pred, args.by, per_class=args.per_class, seed=seed, sample_kwargs=sampler)
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
        if not message.startswith("MCMC diagnostics failed"):  # said in words by the sentence and the warning
            print(f"pbassess hierarchical: warning: {message}", file=sys.stderr)
    return _finish(result, args, payload, "hierarchical")
