"""The command line starts without the computing libraries (issue 25): lazy subcommands.

``pbassess --help`` is built from :data:`pbassess.cli.COMMAND_HELP` and a subcommand's run
registers only its own module; these tests check what is imported and that the lazy parser
answers exactly as the full one. Speed itself is measured by ``benchmarks/interactive.py``,
never here.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

import pbassess.cli as cli

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("pytensor", "pymc", "numba", "xarray", "scipy", "pandas", "arviz", "matplotlib", "dask")
#: Subcommand modules whose import (and parser) needs no computing library.
LIGHT_MODULES = ("assess", "data", "demo", "grid", "loading", "output", "options", "priors", "recalibrate", "session",
                 "shift", "simulate", "surface")


def _imported_after(code: str) -> list[str]:
    probe = code + f"\nimport json, sys\nprint(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_importing_the_cli_and_its_subcommand_modules_loads_no_computing_library():
    code = "import pbassess.cli\n" + "".join(f"import pbassess.cli.{m}\n" for m in LIGHT_MODULES)
    assert _imported_after(code) == []


@pytest.mark.parametrize("argv", [["--help"], ["assess", "--help"], ["data", "--help"], ["grid", "--help"],
                                  ["demo", "--help"], ["shift", "--help"], ["--version"]])
def test_help_loads_no_computing_library(argv):
    code = ("import contextlib, io\nfrom pbassess.cli import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    main({argv!r})\n")
    assert _imported_after(code) == []


def _full_parser_commands() -> dict[str, argparse.ArgumentParser]:
    return {path[0]: sub for path, sub in cli.subcommand_parsers(cli.build_parser()) if len(path) == 1}


def test_the_top_level_help_lines_are_the_commands_own():
    commands = _full_parser_commands()
    assert set(cli.COMMAND_HELP) == set(commands) == set(cli.COMMAND_MODULES)
    assert {name: sub.pb_help for name, sub in commands.items()} == cli.COMMAND_HELP


@pytest.mark.parametrize("command", sorted(cli.COMMAND_MODULES))
def test_each_command_is_registered_by_its_module(command):
    module = cli.COMMAND_MODULES[command]
    assert module in cli.SUBCOMMAND_MODULES
    parser = cli.build_parser((module,))
    # registered for real (add_command sets pb_examples), not a placeholder of the top-level help
    real = [path for path, sub in cli.subcommand_parsers(parser) if len(path) == 1 and hasattr(sub, "pb_examples")]
    assert (command,) in real


def test_the_placeholder_parser_prints_the_full_help():
    assert cli.build_parser(()).format_help() == cli.build_parser().format_help()


def _answer(argv: list[str], lazy: bool, monkeypatch) -> tuple[int, str, str]:
    if not lazy:
        monkeypatch.setattr(cli, "_modules_for", lambda _argv: None)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(argv))
    monkeypatch.undo()
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("argv", [[], ["--help"], ["-h"], ["--version"], ["bogus"], ["--bogus"], ["assess"],
                                  ["assess", "--help"], ["-h", "assess"], ["assess", "x.csv", "--bogus"],
                                  ["session", "--help"], ["session", "start", "--help"], ["hierarchical", "--help"],
                                  ["surface-explore", "--help"], ["data", "list", "--bogus"], ["--", "assess"]])
def test_the_lazy_parser_answers_as_the_full_one(argv, monkeypatch):
    assert _answer(argv, True, monkeypatch) == _answer(argv, False, monkeypatch)


def test_python_dash_m_pbassess_is_the_command():
    """``python -m pbassess`` answers as the ``pbassess`` script (its version, and a bad option's one line and status)."""
    ran = {spelling: subprocess.run([sys.executable, "-m", spelling, "--version"], capture_output=True, text=True,
                                    cwd=ROOT, timeout=120) for spelling in ("pbassess", "pbassess.cli")}
    assert ran["pbassess"].returncode == 0 and ran["pbassess"].stdout == ran["pbassess.cli"].stdout != ""
    bad = subprocess.run([sys.executable, "-m", "pbassess", "surface", "digits-shift", "--attributes", "environment",
                          "--confidence-combination", "mix"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert bad.returncode == 2 and bad.stderr.strip().splitlines()[-1] == (
        "pbassess surface: error: argument --confidence-combination: invalid choice: 'mix' (choose from 'select', 'stack')")
