"""Every subcommand's ``--help`` (issue 7): no raw markup, every option documented, one spelling per flag.

The test walks the real parser (every module in SUBCOMMAND_MODULES, nested sub-subcommands
included), so a new subcommand is checked without being listed here.
"""

from __future__ import annotations

import argparse

import pytest

from pbassess.cli import build_parser, subcommand_parsers

# Raw reStructuredText / Markdown that must not reach a terminal.
MARKUP = ("`", "::", ":func:", ":class:", ":mod:", ":meth:", ":attr:", ":ref:", ":doc:", "**")

# The flag spellings the project uses everywhere (COMMON standards, issue 7), and the old
# spellings that may only appear as aliases of the canonical flag on the same option.
CANONICAL = {"--cost": "--cost-matrix", "--engine": "--inference"}
# Concepts that must never be spelled differently from these canonical flags.
FORBIDDEN = {"--output": "--out", "--ci": "--ci-prob", "--random-seed": "--seed", "--cost_matrix": "--cost-matrix",
             "--batch_size": "--chunk-size", "--ci_prob": "--ci-prob", "--cred-prob": "--ci-prob",
             "--batch-size": "--chunk-size, --picks-per-round, --items-per-batch or --arms-per-round"}


PARSERS = dict(subcommand_parsers(build_parser()))
IDS = [" ".join(p) for p in PARSERS]


def _options(parser, *, deprecated: bool = False):
    """The parser's options; hidden deprecated aliases (kept for one release) only with ``deprecated=True``."""
    from pbassess.cli.options import _DeprecatedAlias

    skip = (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction)
    return [a for a in parser._actions if not isinstance(a, skip)
            and (deprecated or not isinstance(a, _DeprecatedAlias))]


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
    """--seed, --ci-prob, --out, --json, --cost-matrix, --inference: one dest each."""
    dests: dict[str, set[str]] = {}
    for parser in PARSERS.values():
        for action in _options(parser):
            for flag in ("--seed", "--ci-prob", "--json", "--cost-matrix", "--inference", "--out", "--draws"):
                if flag in action.option_strings:
                    dests.setdefault(flag, set()).add(action.dest)
    assert dests["--seed"] == {"seed"} and dests["--ci-prob"] == {"ci_prob"} and dests["--json"] == {"json"}
    assert dests["--cost-matrix"] == {"cost_matrix"} and dests["--inference"] == {"inference"}
    assert dests["--out"] == {"out"} and dests["--draws"] == {"draws"}


@pytest.mark.parametrize("path", list(PARSERS), ids=IDS)
def test_batch_size_is_only_a_hidden_deprecated_alias(path):
    """--batch-size had four meanings; each command now names what it batches and keeps --batch-size hidden."""
    for action in _options(PARSERS[path], deprecated=True):
        if "--batch-size" in action.option_strings:
            assert action.help == argparse.SUPPRESS, f"pbassess {' '.join(path)}: --batch-size is shown"
            assert "--batch-size" not in PARSERS[path].format_help()


@pytest.mark.parametrize("path", list(PARSERS), ids=IDS)
def test_no_abbreviations(path):
    assert PARSERS[path].allow_abbrev is False, f"pbassess {' '.join(path)} accepts abbreviated options"


@pytest.mark.parametrize("path", list(PARSERS), ids=IDS)
def test_one_metavar_per_concept(path):
    """DATA, SEED, PC, P, DIR for the same things everywhere."""
    wanted = {"--seed": "SEED", "--pseudocount": "PC", "--ci-prob": "P", "--out": "DIR", "--pool": "DATA"}
    for action in _options(PARSERS[path]):
        for flag, metavar in wanted.items():
            if flag in action.option_strings:
                assert action.metavar == metavar, f"pbassess {' '.join(path)} {flag} shows {action.metavar}"
        if not action.option_strings and action.dest in ("data", "pool"):
            assert action.metavar == "DATA", f"pbassess {' '.join(path)}: {action.dest} shows {action.metavar}"


def test_top_level_help_groups_the_commands_by_task():
    from pbassess.cli import COMMAND_GROUPS

    text = build_parser().format_help()
    assert "commands by task:" in text
    grouped = [n for names in COMMAND_GROUPS.values() for n in names]
    top = {p[0] for p in PARSERS}
    assert sorted(grouped) == sorted(top), "every command appears in exactly one task of COMMAND_GROUPS"
    for task in COMMAND_GROUPS:
        assert f"  {task}:" in text
