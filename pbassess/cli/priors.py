"""``pbassess priors``: several priors for one assessment, compared by LOO, sensitivity and prior checks.

::

    pbassess priors DATA [--metric accuracy|environments] [--by predicted|true|GROUP]
                         --prior uniform --prior informed [--prior "beta(20,2)"] [--pseudocount PC]
                         [data, inference, seed, interval, output, strict and progress options]

Without ``--json`` the command prints the sentence, then one row per prior: the leave-one-item-out
ELPD (exact for conjugate fits) with its standard error and difference to the best, the weight,
the largest prior and likelihood sensitivity (power scaling) with the number of flagged regions,
and the prior predictive check. ``--json`` prints one object with ``priors`` (a list of rows,
each with ``prior``, ``elpd_loo``, ``se``, ``elpd_diff``, ``dse``, ``weight``, ``p_loo``,
``prior_sensitivity``, ``likelihood_sensitivity``, ``prior_check_p``, ...), ``best`` and ``seed``.
"""

from __future__ import annotations

import argparse
from typing import Any

from pbassess.cli import options as opt
from pbassess.constants import DEFAULT_PSEUDOCOUNT

__all__ = ["register", "run"]

EXAMPLES = ("pbassess priors digits-logreg --prior uniform --prior informed --prior 'beta(20,2)' --seed 1",
            "pbassess priors digits-shift --by environment --prior uniform --prior informed --seed 1 --json")

_COLUMNS = ("elpd_loo", "se", "elpd_diff", "dse", "weight", "prior_sensitivity", "likelihood_sensitivity",
            "sensitivity_flagged", "prior_check_p")


def register(subparsers: Any) -> None:
    """Add the ``priors`` subcommand.

    Examples
    --------
    >>> import argparse
    >>> sub = argparse.ArgumentParser().add_subparsers()
    >>> register(sub)
    >>> "priors" in sub.choices
    True
    """
    p = opt.add_command(
        subparsers, "priors", fits=True, help="compare priors: LOO, prior sensitivity, prior predictive checks",
        description="Fit the same labeled counts under several priors and compare them: leave-one-item-out ELPD "
                    "(exact for conjugate fits; az.compare), prior sensitivity by power scaling (az.psense) and "
                    "a prior predictive check of the number correct.",
        examples=EXAMPLES,
    )
    opt.add_data(p)
    p.add_argument("--metric", default="accuracy", choices=("accuracy", "environments"),
                   help="accuracy per predicted class / true class / group (default), or environments with "
                        "uniform, informed and hierarchical priors (NUTS)")
    p.add_argument("--by", default="predicted", metavar="BY",
                   help="predicted (default), true, or a group column (for environments: the environment column)")
    p.add_argument("--prior", action="append", default=None, metavar="PRIOR",
                   help="a prior to compare (repeat): uniform, informed, informed(PC) or beta(A,B) "
                        "(default: --prior uniform --prior informed)")
    p.add_argument("--pseudocount", default=None, metavar="PC",
                   help=f"prior strength of uniform and informed (default {DEFAULT_PSEUDOCOUNT:g})")
    opt.add_inference(p)
    opt.add_seed(p)
    opt.add_interval(p)
    opt.add_output(p)
    opt.add_strict(p)
    opt.add_quiet(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``pbassess priors``."""
    from pbassess.assess.priors import compare_priors

    preds = opt.load_data_args(args)
    seed = opt.seed_value(args)
    priors = args.prior or ["uniform", "informed"]
    with opt.progress(args):
        pseudocount = opt.number_value(args.pseudocount, "--pseudocount", default=DEFAULT_PSEUDOCOUNT)
        result = compare_priors(preds, metric=args.metric, priors=priors, by=args.by, pseudocount=pseudocount,
                                seed=seed, ci_prob=opt.ci_prob_value(args), **opt.inference_kwargs(args))
    return opt.finish(result, args, "priors", name="priors", text=lambda: _print_table(result))


def _print_table(result: Any) -> None:
    table = result.summary()
    shown = [c for c in _COLUMNS if c in table.columns]
    import pandas as pd

    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(table[shown].round(3).to_string())
