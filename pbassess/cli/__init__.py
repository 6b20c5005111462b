"""The ``pbassess`` command line.

Each subcommand lives in its own module exposing ``register(subparsers)``, which adds a parser
(with :func:`pbassess.cli.options.add_command` and the option groups of
:mod:`pbassess.cli.options`) whose ``func(args) -> int`` runs it. ``pbassess --help`` lists the
commands by task (:data:`COMMAND_GROUPS`). Errors a user can trigger (:class:`PbassessError`
and bad option values) print one line on stderr and exit with status 2; an unknown option, a
missing argument or an invalid choice prints the subcommand's usage and one line (status 2).
``--json`` output is one JSON object on stdout; ``--strict`` exits with status 3 when a fit
fails its diagnostics.

Faults (issue 23): a closed standard output is refused before anything runs; a write the system
refuses (full disk, ``ulimit -f``, a read-only or missing folder, standard output on ``/dev/full``)
and running out of memory print one line and exit 2 (``SIGXFSZ`` is ignored, so a file-size limit
is an ``OSError``, never a kill or a crash). Files are written atomically (:mod:`pbassess._atomic`)
and sizes are checked before allocating (:func:`pbassess.inference.check_memory`, naming the option
to change).

Adding a subcommand: write its module (see :mod:`pbassess.cli.options`), add the module to
:data:`SUBCOMMAND_MODULES`, its command name to a task of :data:`COMMAND_GROUPS` and its line of
``pbassess --help`` to :data:`COMMAND_HELP` (a test checks that the line equals the parser's).

Start-up: :func:`main` registers only the module of the command named on the command line (the
modules import their computing libraries inside their ``run`` functions), and ``pbassess --help``
is built from :data:`COMMAND_HELP` without importing any subcommand module.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys
import warnings
from typing import Any

from pbassess.cli.output import emit_json
from pbassess.errors import PbassessError

__all__ = ["COMMAND_GROUPS", "COMMAND_HELP", "COMMAND_MODULES", "SUBCOMMAND_MODULES", "build_parser", "emit_json", "main",
           "run", "subcommand_parsers"]

#: Modules that register subcommands (``compare`` also registers ``hierarchical``; ``surface``
#: also ``surface-explore``).
SUBCOMMAND_MODULES = ("data", "assess", "demo", "simulate", "session", "label", "compare", "grid", "estimate", "shift", "surface",
                      "recalibrate", "priors")

#: ``pbassess --help``: the commands by task (every registered command appears once).
COMMAND_GROUPS: dict[str, tuple[str, ...]] = {
    "data": ("data",),
    "assess a classifier": ("assess", "compare", "hierarchical", "shift", "surface", "recalibrate"),
    "check the model and its priors": ("priors",),
    "estimate from few labels": ("estimate",),
    "choose what to label": ("session", "label", "simulate", "surface-explore"),
    "run many or show everything": ("grid", "demo"),
}

#: The module (in :data:`SUBCOMMAND_MODULES`) that registers each command.
COMMAND_MODULES: dict[str, str] = {
    "data": "data", "assess": "assess", "demo": "demo", "simulate": "simulate", "session": "session", "label": "label",
    "compare": "compare", "hierarchical": "compare", "grid": "grid", "estimate": "estimate", "shift": "shift",
    "surface": "surface", "surface-explore": "surface", "recalibrate": "recalibrate", "priors": "priors",
}

#: The line of each command in ``pbassess --help`` (equal to its parser's ``pb_help``; a test checks
#: it), so that the top-level help imports no subcommand module.
COMMAND_HELP: dict[str, str] = {
    "data": "list, show and fetch the registered prediction sets",
    "assess": "posterior accuracy, calibration or cost of a prediction set",
    "demo": "assess the built-in data (accuracy, calibration, cost) and write a report",
    "simulate": "replay active assessment strategies on a fully labeled pool",
    "session": "label a pool batch by batch (resumable, crash-safe state file)",
    "label": "label in the browser: the session served as a web page",
    "compare": "posterior difference of a metric between groups or models",
    "hierarchical": "accuracy per environment with partial pooling (NUTS)",
    "grid": "run an experiment grid (TOML) in process or on a dask cluster",
    "estimate": "estimate a metric per group from few labels and many predictions",
    "shift": "dataset-shift metrics per level and model (Ovadia et al. 2019)",
    "surface": "accuracy surface over attribute combinations (arms)",
    "surface-explore": "simulate active exploration of an accuracy surface",
    "recalibrate": "fit a recalibration map on labeled items and measure it on held-out ones",
    "priors": "compare priors: LOO, prior sensitivity, prior predictive checks",
}


def _commands_epilog(sub: argparse._SubParsersAction) -> str:
    lines = ["commands by task:"]
    listed: set[str] = set()
    width = max(len(n) for n in sub.choices) + 2
    for task, names in COMMAND_GROUPS.items():
        present = [n for n in names if n in sub.choices]
        if not present:
            continue
        lines.append(f"  {task}:")
        for n in present:
            lines.append(f"    {n.ljust(width)}{getattr(sub.choices[n], 'pb_help', '')}")
            listed.add(n)
    others = [n for n in sub.choices if n not in listed]
    if others:
        lines.append("  other:")
        lines += [f"    {n.ljust(width)}{getattr(sub.choices[n], 'pb_help', '')}" for n in others]
    lines += ["", "Run pbassess COMMAND --help for a command's options and two examples."]
    return "\n".join(lines)


def subcommand_parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """Every subcommand parser below ``parser``, depth first, as ``(path of names, parser)``.

    Examples
    --------
    >>> paths = [p for p, _ in subcommand_parsers(build_parser())]
    >>> ("assess",) in paths and ("session", "start") in paths
    True
    """
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield path + (name,), sub
                yield from subcommand_parsers(sub, path + (name,))


def build_parser(modules: tuple[str, ...] | None = None) -> argparse.ArgumentParser:
    """The argument parser: one sub-parser per command of ``modules`` (default: every subcommand module).

    With ``modules=()`` every command gets an empty placeholder parser carrying only its line of
    ``pbassess --help`` (:data:`COMMAND_HELP`): the top-level help, ``--version`` and the error
    for an unknown command are the same as the full parser's and import no subcommand module.

    Parameters
    ----------
    modules : tuple of str, optional
        Names from :data:`SUBCOMMAND_MODULES` to register; ``None`` registers them all.

    Returns
    -------
    argparse.ArgumentParser

    Examples
    --------
    >>> "assess" in build_parser().format_help()
    True
    >>> build_parser(()).format_help() == build_parser().format_help()
    True
    """
    from pbassess._version import __version__
    from pbassess.cli.options import CommandHelpFormatter, CommandParser

    parser = CommandParser(prog="pbassess", description="Bayesian assessment of black-box classifiers.",
                           formatter_class=CommandHelpFormatter)
    parser.add_argument("--version", action="version", version=f"pbassess {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=CommandParser,
                                help="one of the commands below")
    for name in SUBCOMMAND_MODULES if modules is None else modules:
        importlib.import_module(f"pbassess.cli.{name}").register(sub)
    if modules is not None:  # placeholders, in registration order, for the commands not registered
        for module in SUBCOMMAND_MODULES:
            for command, owner in COMMAND_MODULES.items():
                if owner == module and command not in sub.choices:
                    sub.add_parser(command, help=COMMAND_HELP[command]).pb_help = COMMAND_HELP[command]
    parser.epilog = _commands_epilog(sub)
    sub._choices_actions = []  # the commands are listed by task in the epilog instead of in one flat list
    return parser


def _modules_for(argv: list[str]) -> tuple[str, ...]:
    """The subcommand module to register for ``argv`` (none when no command is named).

    The top-level parser has only flags without values (``--help``, ``--version``), so the
    first token that is not an option names the command.
    """
    for token in argv:
        if token == "--":
            break
        if not token.startswith("-"):
            return (COMMAND_MODULES[token],) if token in COMMAND_MODULES else ()
    return ()


def _innermost(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.ArgumentParser:
    """The (sub)parser of the command named in ``argv`` (for its usage on an error)."""
    current = parser
    for token in argv:
        subs = [a for a in current._actions if isinstance(a, argparse._SubParsersAction)]
        if subs and token in subs[0].choices:
            current = subs[0].choices[token]
    return current


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``pbassess`` command (returns the exit status)."""
    from pbassess.cli.options import BadValue

    argv = list(sys.argv[1:] if argv is None else argv)
    _ignore_file_size_signal()
    parser = build_parser(_modules_for(argv))
    try:
        args, extras = parser.parse_known_args(argv)
        if extras:
            _innermost(parser, argv).error(f"unrecognized arguments: {' '.join(extras)}")
    except BadValue as exc:  # a bad option value: one line
        print(f"{_innermost(parser, argv).prog}: error: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help, --version, or a usage error (already printed after the usage)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    if _stdout_closed():  # every command prints its result there: refuse before doing anything
        print(f"pbassess {args.command}: error: standard output is closed, so the result could not be written "
              "(redirect it to a file or /dev/null instead of closing it); nothing was run", file=sys.stderr)
        return 2
    watched = _WatchedStdout.install()
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _one_line_warning(args.command)
            status = int(args.func(args) or 0)
    except PbassessError as exc:
        print(f"pbassess {args.command}: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"pbassess {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `pbassess session status | head`
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:  # a write (or read) the system refused: full disk, ulimit -f, read-only folder, ...
        return _os_error(args.command, exc, stdout_failed=watched is not None and watched.failed is exc)
    except MemoryError:  # the size checks (pbassess.inference.memory) missed a case: still one line
        _drop_stdout()
        print(f"pbassess {args.command}: error: ran out of memory; use smaller options (fewer draws, bins, runs, "
              "groups or items) or set PBASSESS_MEMORY_LIMIT to what the machine has", file=sys.stderr)
        return 2
    finally:
        if watched is not None:
            watched.uninstall()
    return _flushed(args.command, status)


def run() -> int:
    """The ``pbassess`` script: :func:`main` on ``sys.argv``, then an exit without a last sweep of every object.

    A process that has fitted a model holds millions of objects (PyTensor's graphs, numba's and
    PyMC's state), and the garbage collections of the interpreter's shutdown took 1.2-1.4 s after
    a NUTS fit (0.2 s after ``pbassess assess``), all after the result was written. So ``run``
    freezes the collector (:func:`gc.freeze`) once ``main`` has returned: by then every file the
    command wrote is closed and standard output flushed, and objects still go when their last
    reference does. :func:`main` stays a plain function for a caller whose process goes on.

    Returns
    -------
    int
        The exit status (:func:`main`'s).

    Examples
    --------
    >>> import subprocess, sys
    >>> code = "import sys; from pbassess.cli import run; sys.exit(run())"
    >>> done = subprocess.run([sys.executable, "-c", code, "--version"], capture_output=True, text=True)
    >>> done.returncode, done.stdout.split()[0]
    (0, 'pbassess')
    """
    import gc

    status = main()
    gc.freeze()
    return status


def _one_line_warning(command: str):
    """A ``warnings.showwarning`` that prints ``pbassess COMMAND: warning: MESSAGE`` on one line.

    Python's default shows the source file and line of the ``warnings.warn`` call, which is
    noise to a user of the command; the message is what they need.
    """

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        text = " ".join(str(message).split())
        try:
            print(f"pbassess {command}: warning: {text}", file=sys.stderr if file is None else file)
        except (OSError, ValueError):  # a closed stderr: nothing to show it on
            pass

    return show


class _WatchedStdout:
    """``sys.stdout`` that remembers the ``OSError`` a write to it raised (to tell it from a file's)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.failed: OSError | None = None

    @classmethod
    def install(cls) -> _WatchedStdout | None:
        if sys.stdout is None:
            return None
        watched = cls(sys.stdout)
        sys.stdout = watched
        return watched

    def uninstall(self) -> None:
        if sys.stdout is self:
            sys.stdout = self._stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as exc:
            self.failed = exc
            raise

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            self.failed = exc
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _ignore_file_size_signal() -> None:
    """Make a write past ``ulimit -f`` raise ``OSError`` (EFBIG), reported in one line, instead of killing the process."""
    import signal
    import threading

    if hasattr(signal, "SIGXFSZ") and threading.current_thread() is threading.main_thread():
        with contextlib.suppress(OSError, ValueError):
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def _drop_stdout() -> None:
    """Discard what is still buffered for standard output (so that exiting does not fail on it again)."""
    import os

    with contextlib.suppress(OSError, ValueError, AttributeError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _os_error(command: str, exc: OSError, *, stdout_failed: bool) -> int:
    """One line for an ``OSError`` out of a command (status 2): standard output, or the file, that failed."""
    from pbassess._atomic import os_failure

    if stdout_failed:
        message = f"could not write the result to standard output: {os_failure(exc)}"
    else:
        message = f"could not write or read a file: {os_failure(exc)}"
    if stdout_failed:
        _drop_stdout()
    print(f"pbassess {command}: error: {message}", file=sys.stderr)
    return 2


def _flushed(command: str, status: int) -> int:
    """``status``, or 2 with one line on stderr when what was printed cannot reach standard output (full disk, ...)."""
    import os

    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return status
    except OSError as exc:
        from pbassess._atomic import os_failure

        print(f"pbassess {command}: error: could not write the result to standard output: {os_failure(exc)}",
              file=sys.stderr)
        with contextlib.suppress(OSError, ValueError):  # drop the unwritten rest so that the exit does not fail again
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 2
    return status


def _stdout_closed() -> bool:
    """True when standard output is closed (``>&-``): Python then has no ``sys.stdout``, or its descriptor is gone."""
    import os

    stream = sys.stdout
    if stream is None:
        return True
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # a stream without a descriptor (tests capture into memory)
        return bool(getattr(stream, "closed", False))
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
