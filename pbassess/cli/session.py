"""``pbassess session``: a labeling session for a person, batch by batch.

::

    pbassess session start DATA --state FILE --target least-accurate [--strategy ts] [--items-per-batch 10]
        [--prior uniform|informed|eb] [--pseudocount PC] [--top-m M] [--seed SEED]
        [--cost-matrix zero-one|people|superclass|FILE]
    pbassess session start DATA --state FILE --target estimation --strategy uncertainty [--budget N]
    pbassess session add --state FILE LABELS.csv [--relabel]      # columns item_id,label ("-" = stdin)
    pbassess session next --state FILE [--reissue]
    pbassess session pending --state FILE
    pbassess session status --state FILE [--ci-prob P] [--json]
    pbassess session report --state FILE --out DIR [--ci-prob P]

``start``, ``add`` and ``next`` print the next batch as CSV on stdout (``item_id,predicted,score,batch``);
notes go to stderr. Errors are one line on stderr with exit status 2 - including a state file
that cannot be written (disk full): the previous state stays intact and the command can be
repeated. Targets, priors and strategies are those of ``pbassess simulate``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from pbassess.cli import options as opt
from pbassess.constants import DEFAULT_BINS, DEFAULT_PSEUDOCOUNT

__all__ = ["register", "run"]


def _pool_options(args: argparse.Namespace) -> dict[str, Any] | None:
    opts = {"model": getattr(args, "models", None), "threshold": getattr(args, "threshold", None),
            "ties": getattr(args, "ties", None), "normalize": getattr(args, "normalize", False) or None}
    opts = {k: v for k, v in opts.items() if v is not None}
    return opts or None


def _add_state(parser: argparse.ArgumentParser, *, pool_override: bool = True) -> None:
    parser.add_argument("--state", required=True, metavar="FILE", help="the session's JSON state file")
    if pool_override:
        parser.add_argument("--pool", metavar="DATA", default=None,
                            help="the pool's file or name, when it moved since the session started "
                                 "(its fingerprint must match); the data options below describe it")
        opt.add_data(parser, positional=False)


def register(subparsers: Any) -> None:
    """Add the ``session`` command and its subcommands."""
    # the active engine loads with this command only
    from pbassess.active.model import PRIORS, TARGETS
    from pbassess.active.strategies import STRATEGIES

    parser = opt.add_command(
        subparsers, "session", help="label a pool batch by batch (resumable, crash-safe state file)",
        description="A labeling session for a person: choose the next items to label from the current "
                    "posterior, record labels safely, report the answer to the target question.",
        examples=("pbassess session start digits-logreg --state session.json --target least-accurate --seed 1 "
                  "--force",
                  "pbassess session status --state session.json --json"),
    )
    sub = parser.add_subparsers(dest="session_command", required=True, metavar="ACTION", parser_class=type(parser))

    start = opt.add_command(sub, "start", help="create the state file and print the first batch",
                            description="Create a session over DATA and print the first batch as CSV.")
    start.add_argument("pool", metavar="DATA", help="a prediction file or a registered name (see pbassess data list)")
    _add_state(start, pool_override=False)
    opt.add_data(start, positional=False)
    start.add_argument("--target", required=True, choices=TARGETS, help="the question the labels should answer")
    start.add_argument("--strategy", default="ts", choices=STRATEGIES + ("uncertainty",),
                       help="how to choose items (default ts); for --target estimation also uncertainty: active "
                            "estimation with an inverse-probability-weighted estimate")
    start.add_argument("--budget", type=int, default=None, metavar="N",
                       help="strategy uncertainty: expected number of labels (default 10%% of the pool)")
    start.add_argument("--uniform-share", type=float, default=0.2, metavar="ETA",
                       help="strategy uncertainty: uniform share of the labeling probabilities (default 0.2)")
    start.add_argument("--items-per-batch", dest="batch_size", type=int, default=10, metavar="N",
                       help="items per batch (default 10)")
    opt.add_deprecated_alias(start, "--batch-size", "--items-per-batch", "batch_size", type=int)
    opt.add_deprecated_alias(start, "--batch", "--items-per-batch", "batch_size", type=int)
    start.add_argument("--top-m", type=int, default=1, metavar="M", help="size of the answer set (default 1)")
    start.add_argument("--prior", default="uniform", choices=PRIORS,
                       help="uniform (Beta(pc/2, pc/2); pc/K per cell of the cost Dirichlet), informed by the "
                            "model's confidences, or eb (empirical Bayes across classes; accuracy targets and 0-1 cost); "
                            "the same priors as pbassess simulate")
    start.add_argument("--pseudocount", type=float, default=DEFAULT_PSEUDOCOUNT, metavar="PC",
                       help=f"prior strength (default {DEFAULT_PSEUDOCOUNT:g})")
    opt.add_seed(start, "the session's choices (recorded in the state file)")
    start.add_argument("--ttts-beta", "--beta", dest="ttts_beta", type=float, default=0.5,
                       help="top-two TS: probability of labeling the leader (default 0.5)")
    start.add_argument("--epsilon", type=float, default=0.1, help="epsilon-greedy exploration rate (default 0.1)")
    start.add_argument("--bins", type=int, default=DEFAULT_BINS,
                       help=f"confidence bins inside each class for most-miscalibrated (default {DEFAULT_BINS})")
    opt.add_cost_matrix(start)
    start.add_argument("--use-pool-labels", action="store_true",
                       help="count labels present in the pool file as given (default: ignore them)")
    start.add_argument("--force", action="store_true", help="replace an existing state file")
    start.set_defaults(func=run, session_func=_start)

    add = opt.add_command(sub, "add", help="add labels from a CSV (item_id,label) and print the next batch",
                          description="Record the labels of LABELS.csv (columns item_id,label; '-' reads stdin), "
                                     "all or nothing, then print the next batch.")
    _add_state(add)
    add.add_argument("labels", metavar="LABELS.csv", help="CSV with columns item_id,label ('-' for stdin)")
    add.add_argument("--relabel", action="store_true", help="allow changing the label of an item labeled before")
    add.add_argument("--no-next", action="store_true", help="do not issue a new batch")
    add.set_defaults(func=run, session_func=_add)

    nxt = opt.add_command(sub, "next", help="print a new batch", description="Issue and print a new batch.")
    _add_state(nxt)
    nxt.add_argument("--reissue", action="store_true",
                     help="put the items still waiting for labels back into the pool first")
    nxt.set_defaults(func=run, session_func=_next)

    pending = opt.add_command(sub, "pending", help="print the items still waiting for labels",
                              description="Print the items issued and still waiting for labels, as CSV.")
    _add_state(pending)
    pending.set_defaults(func=run, session_func=_pending)

    status = opt.add_command(sub, "status", help="labels so far, posterior summary and the answer",
                             description="Labels so far, the posterior summary and the answer to the target question.")
    _add_state(status)
    opt.add_interval(status, "the credible intervals")
    status.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    status.set_defaults(func=run, session_func=_status)

    report = opt.add_command(sub, "report", help="write the figures and status.json",
                             description="Write the figures and status.json of the session into DIR.")
    _add_state(report)
    report.add_argument("--out", required=True, metavar="DIR", help="output folder")
    opt.add_interval(report, "the credible intervals")
    report.set_defaults(func=run, session_func=_report)


def run(args: argparse.Namespace) -> int:
    """Dispatch to the chosen session action."""
    return int(args.session_func(args) or 0)


def _load(args: argparse.Namespace):
    from pbassess.active.session import LabelingSession

    return LabelingSession.load(args.state, pool=args.pool, pool_options=_pool_options(args) if args.pool else None)


def _print_batch(frame) -> None:
    frame.to_csv(sys.stdout, index=False, lineterminator="\n")
    sys.stdout.flush()


def _note(text: str) -> None:
    print(text, file=sys.stderr)


def _start(args: argparse.Namespace) -> int:
    from pbassess.active.session import LabelingSession

    session = LabelingSession.start(
        args.pool, args.state, target=args.target, strategy=args.strategy, batch_size=args.batch_size, prior=args.prior,
        pseudocount=args.pseudocount, top_m=args.top_m, seed=args.seed, ttts_beta=args.ttts_beta,
        epsilon=args.epsilon, bins=args.bins, cost_matrix=args.cost_matrix, pool_options=_pool_options(args),
        use_pool_labels=args.use_pool_labels, overwrite=args.force, budget=args.budget,
        uniform_share=args.uniform_share,
    )
    batch = session.next_batch()
    _note(f"started a session on {session.pool.name!r} ({session.pool.n_items} items, target {args.target}, "
          f"strategy {args.strategy}, seed {(getattr(session, 'config', None) or {}).get('seed')}); "
          f"state in {args.state}")
    _print_batch(batch)
    return 0


def _add(args: argparse.Namespace) -> int:
    import pandas as pd

    session = _load(args)
    labels = args.labels
    if labels == "-":
        from pbassess.errors import DataError

        try:
            labels = pd.read_csv(sys.stdin, dtype=str, keep_default_na=False, skipinitialspace=True)
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
            raise DataError(f"labels on stdin cannot be read as CSV: {' '.join(str(exc).split())}") from None
        labels.columns = [str(c).strip() for c in labels.columns]
    done = session.add_labels(labels, relabel=args.relabel)
    _note(f"recorded {done['added']} new labels, {done['relabeled']} relabeled, {done['unchanged']} unchanged; "
          f"{done['labeled']} items labeled")
    if args.no_next:
        return 0
    batch = session.next_batch()
    waiting = done["outstanding"]
    if waiting:
        _note(f"{waiting} items of earlier batches still wait for labels (`pbassess session pending`)")
    if batch.empty:
        _note("no items left to issue: every item is labeled or waiting")
    _print_batch(batch)
    return 0


def _next(args: argparse.Namespace) -> int:
    session = _load(args)
    batch = session.next_batch(reissue=args.reissue)
    if batch.empty:
        _note("no items left to issue: every item is labeled or waiting")
    _print_batch(batch)
    return 0


def _pending(args: argparse.Namespace) -> int:
    _print_batch(_load(args).outstanding())
    return 0


def _status(args: argparse.Namespace) -> int:
    from pbassess.cli import emit_json

    session = _load(args)
    result = session.posterior(ci_prob=opt.ci_prob_value(args))
    status = result.to_json()
    if args.json:
        emit_json(status)
        return 0
    print(status["sentence"])
    print(f"{status['labeled']} of {status['pool_items']} items labeled, {status['outstanding']} waiting; "
          f"target {status['target']} (top {status['top_m']}), strategy {status['strategy']}")
    table = result.summary()
    print(table.to_string(float_format=lambda v: f"{v:.3f}"))
    ipw = (status.get("estimate") or {}).get("ipw")
    if ipw is not None:
        shown = ("n/a (too few labels)" if ipw["mean"] is None else
                 f"{ipw['mean']:.3f} (interval {ipw['ci'][0]:.3f} to {ipw['ci'][1]:.3f})")
        print(f"inverse-probability-weighted accuracy: {shown}; {ipw['labels_used']} labels over "
              f"{ipw['items_visited']} visited items, {ipw['waiting']} issued items still waiting")
    return 0


def _report(args: argparse.Namespace) -> int:
    written = _load(args).report(args.out, ci_prob=opt.ci_prob_value(args))
    for name, path in written.items():
        print(f"{name}: {path}")
    return 0
