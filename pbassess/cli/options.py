"""The option groups of the ``pbassess`` subcommands: one spelling, one meaning, one default each.

Every flag that more than one subcommand takes is written here once, in a group, and a
subcommand adds the groups it applies to:

=============  ==========================================================================
group          flags
=============  ==========================================================================
``data``       ``DATA``, ``--models``, ``--threshold``, ``--ties``, ``--normalize``
``inference``  ``--inference`` (the choices the command has; ``mcmc`` = ``nuts``),
               ``--draws``; with NUTS also ``--tune``, ``--chains``, ``--target-accept``
               (passed to the Python API as ``sample_kwargs``)
``seed``       ``--seed SEED`` (default: a fresh seed drawn with NumPy and recorded in
               every output, JSON key ``seed``)
``interval``   ``--ci-prob P`` (default 0.95)
``output``     ``--json``, ``--out DIR`` (the result's ``.nc``, its figures and
               ``report.md``), ``--plot FILE``
``strict``     ``--strict`` (exit status 3 when the fit fails its diagnostics)
``progress``   ``--quiet`` (no progress bar; ``--json`` implies it)
=============  ==========================================================================

Every parser is made with ``allow_abbrev=False`` (``--seed`` is never read as ``--seeds``)
and ends its ``--help`` with two examples that run as written.

Adding a subcommand
-------------------
1. Write ``pbassess/cli/<name>.py`` with ``register(subparsers)``::

       from pbassess.cli import options as opt

       def register(subparsers):
           p = opt.add_command(subparsers, "priors", fits=True, help="one line for pbassess --help",
                               description="what it does", examples=(
                                   "pbassess priors digits-logreg", "pbassess priors digits-logreg --json"))
           opt.add_data(p)
           opt.add_inference(p)            # choices=("nuts",) for a NUTS-only command
           opt.add_seed(p)
           opt.add_interval(p)
           opt.add_output(p)
           opt.add_strict(p)
           opt.add_quiet(p)
           p.set_defaults(func=run)

       def run(args):
           preds = opt.load_data_args(args)
           seed = opt.seed_value(args)                  # drawn when not given
           with opt.progress(args):
               result = fit(preds, seed=seed, ci_prob=opt.ci_prob_value(args), **opt.inference_kwargs(args))
           return opt.finish(result, args, "priors", name="priors")   # prints / saves / exit status

2. Add the module to ``SUBCOMMAND_MODULES`` and the command to a task of ``COMMAND_GROUPS`` in
   :mod:`pbassess.cli`. The tests in ``tests/cli`` then check its flags against the groups and
   run its two examples.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
from typing import Any

# the finishing half (a failed fit in words, the --out/--plot files, printing) lives in pbassess.cli.output
from pbassess.cli.output import (
    STRICT_EXIT,
    diagnostics_message,
    finish,
    finish_diagnostics,
    save_outputs,
)
from pbassess.constants import CI_PROB
from pbassess.errors import ConfigError

__all__ = [
    "FITTING_GROUPS", "GROUPS", "STRICT_EXIT", "BadValue", "CommandHelpFormatter", "CommandParser", "add_command", "add_cost_matrix", "add_data", "add_deprecated_alias",
    "add_inference",
    "add_interval", "add_output", "add_quiet", "add_seed", "add_strict", "checked_number", "ci_prob_value",
    "diagnostics_message",
    "finish", "finish_diagnostics", "inference_kwargs", "inference_value", "load_data_args", "number_value",
    "positive_number", "progress", "sample_kwargs_value", "save_outputs", "seed_value",
]

#: The option groups and their flags (the test of the vocabulary is generated from this).
GROUPS: dict[str, tuple[str, ...]] = {
    "data": ("--models", "--threshold", "--ties", "--normalize"),
    "inference": ("--inference", "--draws"),
    "nuts": ("--tune", "--chains", "--target-accept"),
    "seed": ("--seed",),
    "interval": ("--ci-prob",),
    "output": ("--json", "--out", "--plot"),
    "strict": ("--strict",),
    "progress": ("--quiet",),
}

#: The groups every command that fits a posterior adds (``add_command(..., fits=True)``).
FITTING_GROUPS: tuple[str, ...] = ("data", "inference", "seed", "interval", "output", "strict", "progress")

#: Metavars used for the same things everywhere.
METAVARS = {"data": "DATA", "seed": "SEED", "pseudocount": "PC", "draws": "D", "prob": "P", "dir": "DIR"}


class CommandHelpFormatter(argparse.HelpFormatter):
    """Wraps descriptions to the terminal; keeps the examples and the task list as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith(("examples:", "commands by task:")):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


class CommandParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors print its own usage and one line (exit status 2)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # noqa: D401 - argparse API
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {' '.join(str(message).split())}\n")


def _mark(p: argparse.ArgumentParser, group: str) -> None:
    groups = getattr(p, "pb_groups", None)
    if groups is None:
        groups = []
        p.pb_groups = groups  # type: ignore[attr-defined]
    groups.append(group)


def add_command(subparsers: Any, name: str, *, help: str, description: str, examples: tuple[str, ...] = (),
                fits: bool = False, **kwargs: Any) -> argparse.ArgumentParser:
    """Add a subcommand parser: no abbreviations, its own usage on errors, two examples at the end of --help.

    ``help`` is the line of ``pbassess --help`` (which lists commands by task); ``examples`` are
    command lines that run as written on the built-in or shared data (a test runs them). A
    command that ``fits`` a posterior must add every group of :data:`FITTING_GROUPS` (a test
    checks it).

    Examples
    --------
    >>> top = CommandParser(prog="pbassess")
    >>> sub = top.add_subparsers(dest="command")
    >>> p = add_command(sub, "x", help="an example", description="Does x.", examples=("pbassess x",))
    >>> p.allow_abbrev, p.pb_help, p.format_help().rstrip().splitlines()[-1]
    (False, 'an example', '  pbassess x')
    """
    epilog = ("examples:\n" + "\n".join(f"  {e}" for e in examples)) if examples else None
    p = subparsers.add_parser(name, help=help, description=description, epilog=epilog,
                              formatter_class=CommandHelpFormatter, allow_abbrev=False, **kwargs)
    p.pb_help = help  # type: ignore[attr-defined]
    p.pb_examples = tuple(examples)  # type: ignore[attr-defined]
    p.pb_groups = []  # type: ignore[attr-defined]
    p.pb_fits = fits  # type: ignore[attr-defined]
    return p


class _DeprecatedAlias(argparse.Action):
    """Store into another option's destination and say on stderr that the spelling is old."""

    def __init__(self, option_strings, dest, new: str = "", **kwargs):
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        import warnings

        # a DeprecationWarning (silent on the command line, seen by tests): errors stay one line on stderr
        warnings.warn(f"{parser.prog}: {option_string} is deprecated; use {self.new}", DeprecationWarning,
                      stacklevel=2)
        setattr(namespace, self.dest, values)
        setattr(namespace, f"pb_alias_{self.dest}", option_string)  # messages can name the flag the user typed


def add_deprecated_alias(p: argparse.ArgumentParser, old: str, new: str, dest: str, **kwargs: Any) -> None:
    """A hidden old spelling ``old`` of the option ``new`` (same destination), kept for one release."""
    p.add_argument(old, dest=dest, action=_DeprecatedAlias, new=new, help=argparse.SUPPRESS,
                   default=argparse.SUPPRESS, **kwargs)


# ------------------------------------------------------------------------------ value parsing
def number_value(value: Any, option: str, *, integer: bool = False, minimum: float | None = None,
                 default: Any = None) -> Any:
    """Parse a number option (None gives ``default``); ConfigError names the option.

    Examples
    --------
    >>> number_value("10", "--bins", integer=True, minimum=1), number_value(None, "--x", default=3)
    (10, 3)
    >>> number_value("1e10", "--draws", integer=True)
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: --draws=10,000,000,000 is too large (at most 2,147,483,647)
    """
    if value is None:
        return default
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{option} must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise ConfigError(f"{option} must be finite, got {value!r}")
    if integer:
        if not number.is_integer():
            raise ConfigError(f"{option} must be an integer, got {value!r}")
        if number > 2**31 - 1:
            raise ConfigError(f"{option}={int(number):,} is too large (at most {2**31 - 1:,})")
        number = int(number)
    if minimum is not None and number < minimum:
        raise ConfigError(f"{option} must be at least {minimum:g}, got {value!r}")
    return number


class BadValue(Exception):  # noqa: N818 - not a ValueError on purpose: argparse must not swallow it
    """A bad option value, raised by the option parsers; ``main`` prints it as one line and exits with status 2."""


def checked_number(option: str, **rules: Any):
    """An argparse ``type`` that parses with :func:`number_value` (a bad value: :class:`BadValue`, one line).

    Examples
    --------
    >>> checked_number("--runs", integer=True, minimum=1)("20")
    20
    """

    def parse(text: str) -> Any:
        try:
            return number_value(text, option, **rules)
        except ConfigError as exc:
            if rules.get("integer") and rules.get("minimum") == 0 and "at least" in str(exc):
                # both wordings are pinned by tests of older commands; kept on one line
                raise BadValue(f"{option} must be a non-negative integer ({option} must be at least 0), "
                               f"got {text!r}") from None
            raise BadValue(str(exc)) from None

    parse.__name__ = option.lstrip("-").replace("-", "_")
    return parse


def _prob(text: str) -> float:
    value = checked_number("--ci-prob")(text)
    if not 0 < value < 1:
        raise BadValue(f"--ci-prob is out of range, got {text!r}: --ci-prob must be in (0, 1) (ci_prob must be a "
                       "number strictly between 0 and 1)")
    return float(value)


def positive_number(option: str):
    """An argparse ``type``: a finite number > 0 (a bad value: :class:`BadValue`, one line naming ``option``).

    Examples
    --------
    >>> positive_number("--pseudocount")("2.5")
    2.5
    """

    def parse(text: str) -> float:
        value = checked_number(option)(text)
        if not value > 0:
            raise BadValue(f"{option} must be a number > 0, got {text!r}")
        return float(value)

    parse.__name__ = option.lstrip("-").replace("-", "_")
    return parse


def _unit_interval(option: str):
    def parse(text: str) -> float:
        value = checked_number(option)(text)
        if not 0 < value < 1:
            raise BadValue(f"{option} must be strictly between 0 and 1, got {text!r}")
        return float(value)

    parse.__name__ = option.lstrip("-").replace("-", "_")
    return parse


# ------------------------------------------------------------------------------ data
def add_data(p: argparse.ArgumentParser, *, several_models: bool = False, positional: bool = True) -> None:
    """``DATA --models --threshold --ties --normalize``: what to read and how to read binary scores."""
    from pbassess.constants import DEFAULT_THRESHOLD

    _mark(p, "data")
    if positional:
        p.add_argument("data", metavar="DATA",
                       help="a prediction file or a registered name (see pbassess data list)")
    p.add_argument("--models", default=None, metavar="score_X",
                   help="binary-score CSV data: the classifier column" + (
                       "(s), comma separated (several compare models)" if several_models else " to use (e.g. score_LR)"))
    p.add_argument("--threshold", default=None, type=_unit_interval("--threshold"), metavar="T",
                   help=f"binary-score CSV data: decision threshold, positive where score > T "
                        f"(default {DEFAULT_THRESHOLD:g})")
    p.add_argument("--ties", default=None, choices=("negative", "positive"),
                   help="binary-score CSV data: the class of a score exactly at the threshold (default negative, "
                        "as scikit-learn's predict)")
    p.add_argument("--normalize", action="store_true",
                   help="rescale probability rows that do not sum to one instead of rejecting them")


def load_data_args(args: argparse.Namespace, *, chunk_size: int | None = None, model: str | None = None):
    """The Predictions named by the data group of ``args`` (``model`` overrides ``--models``).

    Examples
    --------
    >>> ns = argparse.Namespace(data="digits-logreg", models=None, threshold=None, ties=None, normalize=False)
    >>> load_data_args(ns).n_items
    899
    """
    from pbassess.cli.loading import load_predictions

    preds, _ = load_predictions(args.data, models=model if model is not None else getattr(args, "models", None),
                                threshold=getattr(args, "threshold", None), ties=getattr(args, "ties", None),
                                normalize=bool(getattr(args, "normalize", False)), batch_size=chunk_size)
    return preds


# ------------------------------------------------------------------------------ inference
def _inference_type(choices: tuple[str, ...]):
    def parse(text: str) -> str:
        value = str(text).lower()
        if value == "mcmc" and "nuts" in choices:  # the old spelling, kept for one release
            return "nuts"
        if value not in choices:
            if len(choices) == 1:
                only = {"nuts": "NUTS", "conjugate": "the exact conjugate posterior"}.get(choices[0], choices[0])
                raise BadValue(f"this command fits with {only} only: --inference must be {choices[0]}, got {text!r}")
            listed = f"{', '.join(choices[:-1])} or {choices[-1]}"
            raise BadValue(f"--inference must be {listed} for this command"
                           + (" (mcmc is an old spelling of nuts)" if "nuts" in choices else "") + f", got {text!r}")
        return value

    parse.__name__ = "inference"
    return parse


def add_inference(p: argparse.ArgumentParser, choices: tuple[str, ...] = ("conjugate", "nuts"),
                  default: str | None = "conjugate", default_note: str | None = None,
                  draws_default: str = "the fit's", draws_minimum: int = 1, draws_help: str | None = None) -> None:
    """``--inference`` (only the choices the command has), ``--draws`` and, with NUTS, ``--tune``, ``--chains``,
    ``--target-accept``.

    ``--engine`` is an old spelling of ``--inference`` and ``mcmc`` of ``nuts`` (kept for one release).
    """
    _mark(p, "inference")
    shown = default_note or default
    words = {"conjugate": "exact conjugate posterior", "nuts": "NUTS via PyMC", "advi": "ADVI (fast, over-smooths)"}
    p.add_argument("--inference", "--engine", dest="inference", default=default, type=_inference_type(choices),
                   metavar="{" + ",".join(choices) + "}",
                   help=f"{'; '.join(words.get(c, c) for c in choices)} (default {shown}); "
                        "--engine and mcmc are old spellings")
    p.set_defaults(pb_inference_choices=choices)
    p.add_argument("--draws", default=None, type=checked_number("--draws", integer=True, minimum=draws_minimum), metavar="D",
                   help=f"{draws_help or 'posterior draws per chain (4 chains), in either inference'} "
                        f"(default {draws_default})")
    if "nuts" in choices:
        _mark(p, "nuts")
        p.add_argument("--tune", default=None, type=checked_number("--tune", integer=True, minimum=0), metavar="T",
                       help="NUTS tuning steps per chain (default the fit's)")
        p.add_argument("--chains", default=None, type=checked_number("--chains", integer=True, minimum=1), metavar="C",
                       help="NUTS chains (default the fit's)")
        p.add_argument("--target-accept", default=None, type=_unit_interval("--target-accept"), metavar="A",
                       help="NUTS target acceptance rate in (0, 1); raise it (e.g. 0.99) against divergences "
                            "(default the fit's)")


def inference_value(value: Any, default: str = "conjugate") -> str:
    """``conjugate`` or ``nuts`` from a parsed ``--inference`` (``mcmc`` accepted).

    Examples
    --------
    >>> inference_value("mcmc"), inference_value(None)
    ('nuts', 'conjugate')
    """
    from pbassess.inference import resolve_inference

    try:
        return resolve_inference(value, default=default)
    except ConfigError:
        raise ConfigError(f"--inference must be conjugate or nuts (mcmc is an old spelling), got {value!r}") from None


def sample_kwargs_value(args: argparse.Namespace) -> dict[str, Any]:
    """The NUTS options given on the command line (``draws``, ``tune``, ``chains``, ``target_accept``).

    Examples
    --------
    >>> sample_kwargs_value(argparse.Namespace(draws=100, tune=None, chains=2, target_accept=None))
    {'draws': 100, 'chains': 2}
    """
    keys = ("draws", "tune", "chains", "target_accept")
    return {k: getattr(args, k) for k in keys if getattr(args, k, None) is not None}


def inference_kwargs(args: argparse.Namespace, *, default: str | None = "conjugate") -> dict[str, Any]:
    """Keyword arguments of the Python API from the inference group: ``inference``, ``draws`` (per chain, either
    inference) and, for NUTS, ``sample_kwargs``. NUTS-only flags with a conjugate fit are an error.

    Examples
    --------
    >>> ns = argparse.Namespace(inference="nuts", draws=200, tune=100, chains=None, target_accept=None)
    >>> inference_kwargs(ns)
    {'inference': 'nuts', 'draws': 200, 'sample_kwargs': {'tune': 100}}
    >>> inference_kwargs(argparse.Namespace(inference="conjugate", draws=500))
    {'inference': 'conjugate', 'draws': 500}
    """
    inference = getattr(args, "inference", None) or default
    out: dict[str, Any] = {} if inference is None else {"inference": inference}
    sample = sample_kwargs_value(args)
    if "draws" in sample:
        out["draws"] = sample.pop("draws")
    if inference == "nuts" or (inference is None and sample):
        if sample:
            out["sample_kwargs"] = sample
        return out
    nuts_only = [k for k in ("tune", "chains", "target_accept") if k in sample]
    if nuts_only:
        flag = "--" + nuts_only[0].replace("_", "-")
        raise ConfigError(f"{flag} applies to --inference nuts (this fit is {inference})")
    return out


# ------------------------------------------------------------------------------ seed, interval
def add_seed(p: argparse.ArgumentParser, what: str = "every random draw") -> None:
    """``--seed SEED``: default a fresh seed, drawn with NumPy and recorded in the output (JSON key ``seed``)."""
    _mark(p, "seed")
    p.add_argument("--seed", default=None, type=checked_number("--seed", integer=True, minimum=0), metavar="SEED",
                   help=f"non-negative integer seed of {what} (default: a fresh seed, drawn and recorded in the "
                        "output as seed)")


def seed_value(args: argparse.Namespace) -> int:
    """The seed of ``args``: the given one, or a fresh one drawn with NumPy (stored back on ``args``).

    Examples
    --------
    >>> seed_value(argparse.Namespace(seed=7)), isinstance(seed_value(argparse.Namespace(seed=None)), int)
    (7, True)
    """
    import numpy as np

    if getattr(args, "seed", None) is None:
        args.seed = int(np.random.default_rng().integers(0, 2**31 - 1))
    return int(args.seed)


def add_interval(p: argparse.ArgumentParser, what: str = "the reported highest-density intervals") -> None:
    """``--ci-prob P``: the mass of the intervals, in (0, 1)."""
    _mark(p, "interval")
    p.add_argument("--ci-prob", default=None, type=_prob, metavar="P",
                   help=f"mass of {what}, in (0, 1) (default {CI_PROB:g})")


def ci_prob_value(args_or_value: Any) -> float:
    """The parsed ``--ci-prob`` (default 0.95).

    Examples
    --------
    >>> ci_prob_value(argparse.Namespace(ci_prob=None)), ci_prob_value("0.9")
    (0.95, 0.9)
    """
    value = getattr(args_or_value, "ci_prob", None) if isinstance(args_or_value, argparse.Namespace) else args_or_value
    prob = number_value(value, "--ci-prob", default=CI_PROB)
    if not 0 < prob < 1:
        raise ConfigError(f"--ci-prob must be in (0, 1), got {value!r}")
    return float(prob)


# ------------------------------------------------------------------------------ output, strict, progress
def add_output(p: argparse.ArgumentParser, what: str = "the result (.nc), its figures and report.md") -> None:
    """``--json``, ``--out DIR``, ``--plot FILE``."""
    _mark(p, "output")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object on stdout (with the seed) and no progress bar")
    p.add_argument("--out", default=None, metavar="DIR", help=f"write {what} into this folder (default: write nothing)")
    p.add_argument("--plot", default=None, metavar="FILE", help="save the result's main figure to this file (PNG, PDF, SVG)")


def add_strict(p: argparse.ArgumentParser) -> None:
    """``--strict``: exit with status 3 when the fit fails its diagnostics."""
    _mark(p, "strict")
    p.add_argument("--strict", action="store_true",
                   help=f"exit with status {STRICT_EXIT} when the fit fails its diagnostics (R-hat, effective sample "
                        "size, divergences) instead of only warning")


def add_quiet(p: argparse.ArgumentParser) -> None:
    """``--quiet``: no progress bar (``--json`` implies it)."""
    _mark(p, "progress")
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr (--json implies it)")


def progress(args: argparse.Namespace):
    """A context that silences progress bars under ``--quiet`` or ``--json``."""
    if getattr(args, "quiet", False) or getattr(args, "json", False):
        from pbassess.inference import quiet_progress

        return quiet_progress()
    return contextlib.nullcontext()


def add_cost_matrix(p: argparse.ArgumentParser) -> None:
    """``--cost-matrix SPEC`` with ``--cost`` as an old spelling."""
    p.add_argument("--cost-matrix", "--cost", dest="cost_matrix", default=None,
                   metavar="{zero-one,people,superclass,FILE}",
                   help="cost matrix (rows predicted, columns true class): zero-one (default), the CIFAR-100 people "
                        "or superclass matrices, or a K x K .csv, .npy or .json file; --cost is an old spelling")
