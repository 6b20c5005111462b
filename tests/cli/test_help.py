"""Every subcommand's ``--help`` (issue 7): no raw markup, every option documented, one spelling per flag.

The test walks the real parser (every module in SUBCOMMAND_MODULES, nested sub-subcommands
included), so a new subcommand is checked without being listed here.
"""

from __future__ import annotations

import argparse

import pytest

from pbassess.cli import build_parser

# Raw reStructuredText / Markdown that must not reach a terminal.
MARKUP = ("`", "::", ":func:", ":class:", ":mod:", ":meth:", ":attr:", ":ref:", ":doc:", "**")

# The flag spellings the project uses everywhere (COMMON standards, issue 7), and the old
# spellings that may only appear as aliases of the canonical flag on the same option.
CANONICAL = {"--cost": "--cost-matrix", "--batch": "--batch-size", "--engine": "--inference"}
# Concepts that must never be spelled differently from these canonical flags.
FORBIDDEN = {"--output": "--out", "--ci": "--ci-prob", "--random-seed": "--seed", "--cost_matrix": "--cost-matrix",
             "--batch_size": "--batch-size", "--ci_prob": "--ci-prob", "--cred-prob": "--ci-prob"}


def _walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield path + (name,), sub
                yield from _walk(sub, path + (name,))


PARSERS = dict(_walk(build_parser()))
IDS = [" ".join(p) for p in PARSERS]


def _options(parser):
    skip = (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction)
    return [a for a in parser._actions if not isinstance(a, skip)]


def test_the_walk_finds_every_subcommand():
    names = {p[0] for p in PARSERS}
    assert {"data", "assess", "demo", "simulate", "session", "compare", "hierarchical"} <= names
    assert ("session", "start") in PARSERS and ("data", "show") in PARSERS


@pytest.mark.parametrize("path", list(PARSERS), ids=IDS)
def test_help_has_no_raw_markup(path):
    text = PARSERS[path].format_help()
    found = [m for m in MARKUP if m in text]
    assert not found, f"pbassess {' '.join(path)} --help shows raw markup {found}"


@pytest.mark.parametrize("path", list(PARSERS), ids=IDS)
def test_every_option_has_help_text(path):
    missing = [a.option_strings or [a.dest] for a in _options(PARSERS[path])
               if not a.help or a.help == argparse.SUPPRESS or not str(a.help).strip()]
    assert not missing, f"pbassess {' '.join(path)}: options without help text {missing}"


@pytest.mark.parametrize("path", list(PARSERS), ids=IDS)
def test_flag_names_are_the_projects(path):
    for action in _options(PARSERS[path]):
        flags = set(action.option_strings)
        for old, canonical in CANONICAL.items():
            if old in flags:
                assert canonical in flags, f"pbassess {' '.join(path)}: {old} without {canonical} on the same option"
        for bad, canonical in FORBIDDEN.items():
            assert bad not in flags, f"pbassess {' '.join(path)}: {bad} should be spelled {canonical}"


def test_shared_flags_mean_the_same_destination_everywhere():
    """--seed, --ci-prob, --out, --json, --cost-matrix, --batch-size, --inference: one dest each."""
    dests: dict[str, set[str]] = {}
    for parser in PARSERS.values():
        for action in _options(parser):
            for flag in ("--seed", "--ci-prob", "--json", "--cost-matrix", "--batch-size", "--inference"):
                if flag in action.option_strings:
                    dests.setdefault(flag, set()).add(action.dest)
    assert dests["--seed"] == {"seed"} and dests["--ci-prob"] == {"ci_prob"} and dests["--json"] == {"json"}
    assert dests["--cost-matrix"] == {"cost_matrix"} and dests["--inference"] == {"inference"}
    assert dests["--batch-size"] == {"batch_size"}
