"""One command-line vocabulary (issue 19), generated from the option groups of ``pbassess.cli.options``.

Every subcommand registered with ``add_command(..., fits=True)`` must add every group of
``FITTING_GROUPS``, and a flag means the same thing (destination, default, metavar, parser)
wherever it appears. Every ``--help`` example runs as written. A new subcommand is checked
without being listed here.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
from pathlib import Path

import pytest

from pbassess.cli import build_parser, main, subcommand_parsers
from pbassess.cli import options as opt

ROOT = Path(__file__).resolve().parents[2]


PARSERS = dict(subcommand_parsers(build_parser()))
FITTING = {p: parser for p, parser in PARSERS.items() if getattr(parser, "pb_fits", False)}
EXAMPLES = {p: parser.pb_examples for p, parser in PARSERS.items() if getattr(parser, "pb_examples", ())}
#: Examples that sample with NUTS or run a grid: seconds to tens of seconds.
SLOW = {("hierarchical",), ("grid",), ("demo",)}
#: Examples on the shared data (skipped without PBASSESS_DATA_DIR).
SHARED = {("surface",), ("surface-explore",)}


def _flag_actions(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {flag: a for a in parser._actions if not isinstance(a, opt._DeprecatedAlias) for flag in a.option_strings}


def _signature(action: argparse.Action) -> tuple:
    kind = getattr(action.type, "__name__", None) if action.type is not None else None
    return (action.dest, action.default, action.metavar, kind, type(action).__name__)


def concept_table() -> dict[str, dict[str, str]]:
    """flag -> {command: "default, metavar"} for every flag of the option groups (the report's table)."""
    table: dict[str, dict[str, str]] = {}
    for path, parser in PARSERS.items():
        actions = _flag_actions(parser)
        for flags in opt.GROUPS.values():
            for flag in flags:
                if flag in actions:
                    a = actions[flag]
                    shown = "on/off" if a.nargs == 0 else f"{a.metavar or a.dest.upper()} (default {a.default})"
                    table.setdefault(flag, {})[" ".join(path)] = shown
    return table


def test_the_fitting_commands_are_found():
    assert {("assess",), ("compare",), ("hierarchical",), ("estimate",), ("surface",), ("shift",),
            ("recalibrate",)} <= set(FITTING)


@pytest.mark.parametrize("path", list(FITTING), ids=[" ".join(p) for p in FITTING])
def test_every_fitting_command_has_every_group(path):
    parser = FITTING[path]
    missing = [g for g in opt.FITTING_GROUPS if g not in parser.pb_groups]
    assert not missing, f"pbassess {' '.join(path)} lacks the option groups {missing}"
    actions = _flag_actions(parser)
    for group in opt.FITTING_GROUPS:
        for flag in opt.GROUPS[group]:
            assert flag in actions, f"pbassess {' '.join(path)}: {flag} of group {group} is missing"


@pytest.mark.parametrize("flag", [f for flags in opt.GROUPS.values() for f in flags])
def test_a_flag_means_the_same_everywhere(flag):
    """Same destination, default, metavar and parser on every command (--inference: same parser, own choices)."""
    group = next(g for g, flags in opt.GROUPS.items() if flag in flags)
    group = "inference" if group == "nuts" else group
    seen = {}
    for path, parser in PARSERS.items():
        action = _flag_actions(parser).get(flag)
        if action is not None and group in getattr(parser, "pb_groups", ()):  # demo's and grid's --out are their own
            sig = _signature(action)
            if flag == "--inference":  # the default is the command's (hierarchical: nuts only; surface: estimator's)
                sig = (sig[0], sig[3])
            seen.setdefault(sig, []).append(" ".join(path))
    assert len(seen) <= 1, f"{flag} has several meanings: {seen}"


@pytest.mark.parametrize("path", list(FITTING), ids=[" ".join(p) for p in FITTING])
def test_inference_offers_only_what_the_command_has(path):
    parser = FITTING[path]
    choices = parser.get_default("pb_inference_choices")
    assert choices and set(choices) <= {"conjugate", "nuts", "advi"}
    parse = _flag_actions(parser)["--inference"].type
    if "nuts" in choices:
        assert parse("mcmc") == "nuts"  # the old spelling, kept for one release
    for choice in choices:
        assert parse(choice) == choice
    with pytest.raises(opt.BadValue, match="--inference must be"):
        parse("gibbs")
    nuts_flags = {"--tune", "--chains", "--target-accept"}
    present = nuts_flags & set(_flag_actions(parser))
    assert present == (nuts_flags if "nuts" in choices else set())


def test_seed_is_not_read_as_seeds_and_seeds_is_separate(capsys):
    parser = PARSERS[("surface-explore",)]
    args = parser.parse_args(["d", "--attributes", "a", "--budget", "10", "--seed", "7"])
    assert args.seed == 7 and args.seeds == 3
    args = parser.parse_args(["d", "--attributes", "a", "--budget", "10", "--seeds", "2"])
    assert args.seed is None and args.seeds == 2
    with pytest.raises(SystemExit):
        parser.parse_args(["d", "--attributes", "a", "--budget", "10", "--see", "2"])


def test_an_unknown_option_prints_the_subcommands_usage_and_one_line(capsys):
    assert main(["estimate", "digits-logreg", "--no-such-flag"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("usage: pbassess estimate ") and len([line for line in err if "error:" in line]) == 1
    assert err[-1] == "pbassess estimate: error: unrecognized arguments: --no-such-flag"


def test_the_seed_is_fresh_and_recorded(capsys):
    assert main(["assess", "digits-logreg", "--draws", "200", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert isinstance(first["seed"], int)
    assert main(["assess", "digits-logreg", "--draws", "200", "--json", "--seed", str(first["seed"])]) == 0
    assert json.loads(capsys.readouterr().out) == first


def test_batch_size_is_a_deprecated_alias(capsys):
    with pytest.warns(DeprecationWarning, match="deprecated; use --picks-per-round"):
        args = PARSERS[("simulate",)].parse_args(["d", "--strategy", "ts", "--batch-size", "4"])
    assert args.batch_size == 4
    with pytest.warns(DeprecationWarning, match="use --arms-per-round"):
        args = PARSERS[("surface-explore",)].parse_args(["d", "--attributes", "a", "--budget", "9", "--batch-size",
                                                         "3"])
    assert args.batch_size == 3


class _FailedFit:
    diagnostics = {"ok": False, "max_rhat": 1.026, "rhat_threshold": 1.01, "min_ess_bulk": 96.0, "min_ess": 100.0,
                   "divergences": 4, "problems": ["R-hat 1.026 > 1.01"]}

    def sentence(self):
        return "The worst arm has accuracy 0.71."

    def to_json(self):
        return {"sentence": self.sentence(), "diagnostics": self.diagnostics}


@pytest.mark.parametrize("strict,status", [(False, 0), (True, opt.STRICT_EXIT)])
def test_a_failed_fit_says_why_in_its_sentence(capsys, strict, status):
    args = argparse.Namespace(json=True, strict=strict, seed=5, out=None, plot=None)
    assert opt.finish(_FailedFit(), args, "surface") == status
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert "pbassess surface: warning: the NUTS fit failed its diagnostics" in captured.err
    assert out["seed"] == 5 and out["sentence"].startswith("The worst arm has accuracy 0.71. The NUTS fit failed")
    for words in ("R-hat 1.026", "effective sample size 96", "4 divergent transitions", "--target-accept"):
        assert words in out["sentence"] and words in out["diagnostics_message"]


def test_a_results_own_short_note_is_explained_not_repeated(capsys):
    class Noted(_FailedFit):
        def sentence(self):
            return "Accuracy 0.9. Warning: the MCMC fit failed its diagnostics (R-hat 1.026 > 1.01)."

    args = argparse.Namespace(json=True, strict=False, seed=1, out=None, plot=None)
    assert opt.finish(Noted(), args, "assess") == 0
    captured = capsys.readouterr()
    sentence = json.loads(captured.out)["sentence"]
    assert sentence.count("failed its diagnostics") == 1 and "In words: the chains disagree" in sentence
    assert "pbassess assess: warning: the NUTS fit failed its diagnostics" in captured.err


def test_grid_paths_are_relative_to_the_grid_file(tmp_path, monkeypatch):
    from pbassess.grid import load_grid

    (tmp_path / "grids").mkdir()
    pool = tmp_path / "grids" / "pool.csv"
    pool.write_text("x\n")
    (tmp_path / "grids" / "g.toml").write_text('[[experiment]]\ndatasets = ["pool.csv", "digits-logreg"]\n'
                                               'strategies = ["ts"]\n')
    monkeypatch.chdir(tmp_path)
    cells = load_grid("grids/g.toml")
    assert {c.dataset for c in cells} == {str(pool.resolve()), "digits-logreg"}


def _example_params():
    for path, examples in EXAMPLES.items():
        marks = [pytest.mark.slow] if path in SLOW else []
        yield pytest.param(path, examples, marks=marks, id=" ".join(path))


def test_every_command_has_two_examples():
    top = {p for p in PARSERS if len(p) == 1}
    assert {p for p in top if len(EXAMPLES.get(p, ())) == 2} == top
    for path, examples in EXAMPLES.items():
        text = PARSERS[path].format_help().rstrip()
        assert text.endswith(examples[-1]) and all(e.startswith(f"pbassess {' '.join(path)} ") or
                                                   e.startswith(f"pbassess {path[0]} ") for e in examples)


@pytest.mark.parametrize(("path", "examples"), list(_example_params()))
def test_help_examples_run_as_written(path, examples, tmp_path, monkeypatch, capsys, request):
    if path in SHARED:
        request.getfixturevalue("shared_data_dir")
    monkeypatch.chdir(tmp_path)
    os.symlink(ROOT / "benchmarks", tmp_path / "benchmarks")  # grid examples name files under benchmarks/
    for example in examples:  # in order: a session's status follows its start
        argv = shlex.split(example)
        assert argv[0] == "pbassess"
        code = main(argv[1:])
        captured = capsys.readouterr()
        assert code == 0, f"{example!r} exited {code}: {captured.err[-500:]}"
        if "--json" in argv:
            assert isinstance(json.loads(captured.out.strip().splitlines()[-1]), (dict, list))
