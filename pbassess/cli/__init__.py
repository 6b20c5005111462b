"""The ``pbassess`` command line: ``data``, ``assess``, ``demo``, ``simulate``, ``session``,
``compare`` and ``hierarchical`` (the last two both registered by :mod:`pbassess.cli.compare`).

Each subcommand lives in its own module exposing ``register(subparsers)``, which adds a parser
whose ``func(args) -> int`` runs it. Errors a user can trigger (:class:`PbassessError`) print
one line on stderr and exit with status 2; ``--json`` output is one JSON object on stdout.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Any

from pbassess._json import to_jsonable
from pbassess.errors import PbassessError

__all__ = ["emit_json", "main"]

SUBCOMMAND_MODULES = ("data", "assess", "demo", "simulate", "session", "compare", "grid", "estimate", "shift", "surface",
                      "recalibrate")


def emit_json(obj: Any) -> None:
    """Print exactly one JSON object on stdout (NaN becomes null)."""
    print(json.dumps(to_jsonable(obj), allow_nan=False))


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser (one sub-parser per subcommand module)."""
    from pbassess import __version__

    parser = argparse.ArgumentParser(prog="pbassess", description="Bayesian assessment of black-box classifiers.")
    parser.add_argument("--version", action="version", version=f"pbassess {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(f"pbassess.cli.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``pbassess`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except PbassessError as exc:
        print(f"pbassess {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"pbassess {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `pbassess session status | head`
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
