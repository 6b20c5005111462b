"""``pbassess label``: the labeling app, a session served as a web page for one or several annotators.

::

    pbassess label serve DATA --target least-accurate [--state FILE] [--store FILE] [--host 127.0.0.1]
        [--port 8765] [--token TOKEN] [--strategy ts] [--prior uniform] [--top-m M] [--seed SEED]
        [--image-column COL] [--text-column COL] [--stop-at 0.95] [--double-label SHARE] [--check]
    pbassess label serve --state FILE            # continue a session (also one started by `pbassess session start`)
    pbassess label status --state FILE [--json]  # labels, annotators, agreement, the answer

The session's state file defaults to ``labeling/<DATA>.<target>.json`` (continued when it
exists) and the label store to the same name with ``.sqlite``. The server listens on
127.0.0.1; another ``--host`` requires a token (generated and printed unless ``--token`` gives
one). ``--check`` prepares the session and the store, checks the port and exits without serving.
Errors (a missing pool, a busy port, a store in use by another server) are one line, exit 2.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from pbassess.cli import options as opt
from pbassess.constants import DEFAULT_PSEUDOCOUNT

__all__ = ["register", "run"]

DEFAULT_PORT = 8765


def register(subparsers: Any) -> None:
    """Add the ``label`` command and its actions."""
    from pbassess.active.model import PRIORS, TARGETS
    from pbassess.active.strategies import STRATEGIES

    parser = opt.add_command(
        subparsers, "label", help="label in the browser: the session served as a web page",
        description="The labeling app: the next item chosen from the posterior, one key per class, the question's "
                    "progress after each label; labels stored in SQLite with who and when.",
        examples=("pbassess label serve digits-logreg --target least-accurate --seed 1 --check",
                  "pbassess label status --state labeling/digits-logreg.least-accurate.json"),
    )
    sub = parser.add_subparsers(dest="label_command", required=True, metavar="ACTION", parser_class=type(parser))

    serve = opt.add_command(sub, "serve", help="serve the labeling page",
                            description="Start (or continue) a labeling session on DATA and serve it as a web page.")
    serve.add_argument("pool", metavar="DATA", nargs="?", default=None,
                       help="a prediction file or a registered name (optional when --state exists)")
    opt.add_data(serve, positional=False)
    serve.add_argument("--state", metavar="FILE", default=None,
                       help="the session's JSON state file (default labeling/<DATA>.<target>.json; continued if it exists)")
    serve.add_argument("--store", metavar="FILE", default=None,
                       help="the SQLite label store (default: the state file with .sqlite)")
    serve.add_argument("--target", default=None, choices=TARGETS,
                       help="the question the labels should answer (needed for a new session)")
    serve.add_argument("--strategy", default="ts", choices=STRATEGIES,
                       help="how the session chooses items (default ts)")
    serve.add_argument("--prior", default="uniform", choices=PRIORS, help="prior of a new session (default uniform)")
    serve.add_argument("--pseudocount", type=float, default=DEFAULT_PSEUDOCOUNT, metavar="PC",
                       help=f"prior strength (default {DEFAULT_PSEUDOCOUNT:g})")
    serve.add_argument("--top-m", type=int, default=1, metavar="M", help="size of the answer set (default 1)")
    opt.add_seed(serve, "the session's choices (recorded in the state file)")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default 127.0.0.1; any other requires a token)")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: a free one)")
    serve.add_argument("--token", default=None, help="access token (at least 16 characters; generated off loopback)")
    serve.add_argument("--image-column", default=None, metavar="COL",
                       help="column of image paths, relative to the pool file's folder (default: image, path, ...)")
    serve.add_argument("--text-column", default=None, metavar="COL", help="column of texts (default: text)")
    serve.add_argument("--stop-at", type=float, default=0.95, metavar="P",
                       help="the stopping rule: P(answer) at which the page says you can stop (default 0.95)")
    serve.add_argument("--double-label", type=float, default=0.0, metavar="SHARE",
                       help="share of items shown to a second annotator, for the agreement report (default 0)")
    serve.add_argument("--check", action="store_true",
                       help="prepare the session and the store, check the port, print the URL and exit")
    serve.set_defaults(func=run, label_func=_serve)

    status = opt.add_command(sub, "status", help="labels, annotators, agreement and the answer",
                             description="The labels in the store: per annotator, their agreement, and the answer.")
    status.add_argument("--state", required=True, metavar="FILE", help="the session's JSON state file")
    status.add_argument("--store", metavar="FILE", default=None, help="the SQLite label store (default: beside the state)")
    status.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    status.set_defaults(func=run, label_func=_status)


def run(args: argparse.Namespace) -> int:
    """Dispatch to the chosen action."""
    return int(args.label_func(args) or 0)


def _pool_options(args: argparse.Namespace) -> dict[str, Any] | None:
    opts = {"model": getattr(args, "models", None), "threshold": getattr(args, "threshold", None),
            "ties": getattr(args, "ties", None), "normalize": getattr(args, "normalize", False) or None}
    opts = {k: v for k, v in opts.items() if v is not None}
    return opts or None


def default_state_path(pool: str, target: str) -> Path:
    """``labeling/<name>.<target>.json`` for a registered name or a file's stem.

    Examples
    --------
    >>> default_state_path("digits-logreg", "least-accurate").as_posix()
    'labeling/digits-logreg.least-accurate.json'
    >>> default_state_path("data/my preds.csv", "most-accurate").as_posix()
    'labeling/my_preds.most-accurate.json'
    """
    name = Path(pool).stem if ("/" in pool or "\\" in pool or Path(pool).suffix) else pool
    return Path("labeling") / f"{re.sub(r'[^A-Za-z0-9._-]+', '_', name)}.{target}.json"


def _session(args: argparse.Namespace):
    from pbassess.active.session import LabelingSession
    from pbassess.errors import ConfigError

    if args.state is None:
        if args.pool is None or args.target is None:
            raise ConfigError("give DATA and --target for a new session, or --state FILE to continue one")
        args.state = str(default_state_path(args.pool, args.target))
    state = Path(args.state)
    if state.exists():
        session = LabelingSession.load(state, pool=args.pool, pool_options=_pool_options(args) if args.pool else None)
        if args.target is not None and session.config["target"] != args.target:
            raise ConfigError(f"the session in {state} has target {session.config['target']!r}, not {args.target!r}: "
                              "give another --state to start a new one")
        return session, False
    if args.pool is None or args.target is None:
        raise ConfigError(f"state file {state} does not exist: give DATA and --target to start a session there")
    state.parent.mkdir(parents=True, exist_ok=True)
    session = LabelingSession.start(args.pool, state, target=args.target, strategy=args.strategy, batch_size=1,
                                    prior=args.prior, pseudocount=args.pseudocount, top_m=args.top_m,
                                    seed=opt.seed_value(args), pool_options=_pool_options(args))
    return session, True


def _serve(args: argparse.Namespace) -> int:
    from pbassess.active.web import LabelServer, bind_socket, prepare
    from pbassess.errors import ConfigError

    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port must lie in 0..65535, got {args.port}")
    session, new = _session(args)
    service, guard = prepare(session, host=args.host, token=args.token, store=args.store,
                             image_column=args.image_column, text_column=args.text_column, stop_at=args.stop_at,
                             double_label=args.double_label, seed=session.config["seed"])
    try:
        sock = bind_socket(args.host, args.port)
    except BaseException:
        service.close()
        raise
    server = LabelServer(service, guard, sock, args.host)
    what = "started" if new else "continuing"
    print(f"{what} the session {session.state_path} ({session.n_labeled} of {session.pool.n_items} items labeled, "
          f"target {session.config['target']}); labels in {service.store.path}", file=sys.stderr)
    if guard.token and args.token is None:
        print(f"access token (give it to the annotators): {guard.token}", file=sys.stderr)
    if args.check:
        server.stop()
        print(f"ready to serve {server.url} (--check: the session, the store and the port are ready; not serving)",
              flush=True)
        return 0
    print(f"serving {server.url}", flush=True)
    print("press Ctrl-C to stop", file=sys.stderr, flush=True)
    server.run()
    return 0


def _status(args: argparse.Namespace) -> int:
    from pbassess.active.session import LabelingSession
    from pbassess.active.web import default_store_path, open_store
    from pbassess.active.web.service import panel_status

    session = LabelingSession.load(args.state)
    store = open_store(args.store or default_store_path(args.state), readonly=True)
    try:
        status = panel_status(session.posterior(), store)
    finally:
        store.close()
    if args.json:
        from pbassess.cli import emit_json

        emit_json(status)
        return 0
    print(status["sentence"])
    print(status["rule"])
    per = ", ".join(f"{a} {n}" for a, n in status["store"]["annotators"].items()) or "none"
    print(f"{status['labeled']} of {status['pool_items']} items labeled; by annotator: {per}; "
          f"{status['store']['skip']} skipped, {status['store']['unsure']} not sure")
    agree = status["agreement"]
    if agree["items"]:
        kappa = "" if agree["kappa"] is None else f", Cohen's kappa {agree['kappa']:.2f}"
        print(f"agreement on {agree['items']} items labeled twice: {agree['agree']} agree "
              f"({100 * agree['rate']:.0f}%){kappa}")
    else:
        print("no item labeled by two annotators yet")
    return 0
