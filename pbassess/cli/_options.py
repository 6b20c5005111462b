"""Options shared by the subcommands: one spelling, one help text, one validation for each.

``--seed``, ``--ci-prob``, ``--out``, ``--json``, ``--inference`` (alias ``--engine``),
``--cost-matrix`` (alias ``--cost``), ``--batch-size`` and ``--strict``. Each ``add_*`` adds the
option to a parser; each ``*_value`` turns the parsed text into a checked value or raises
:class:`~pbassess.errors.ConfigError` with one line naming the option.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from pbassess.constants import CI_PROB
from pbassess.errors import ConfigError

__all__ = [
    "STRICT_EXIT", "add_batch_size", "add_ci_prob", "add_cost_matrix", "add_inference", "add_json", "add_out",
    "add_seed", "add_strict", "batch_size_value", "ci_prob_value", "finish_diagnostics", "inference_value",
    "number_value", "seed_value",
]

#: Exit status of a command whose fit failed its diagnostics under ``--strict``.
STRICT_EXIT: int = 3


def add_seed(p: argparse.ArgumentParser, default: Any = None) -> None:
    """``--seed S``: a non-negative integer seed of the random draws."""
    note = f" (default {default})" if default is not None else " (default: fresh randomness)"
    p.add_argument("--seed", default=None if default is None else str(default), metavar="S",
                   help=f"random seed, a non-negative integer, for reproducible draws{note}")


def add_ci_prob(p: argparse.ArgumentParser) -> None:
    """``--ci-prob P``: credible mass of the HDIs."""
    p.add_argument("--ci-prob", default=None, metavar="P",
                   help=f"credible mass of the reported HDIs, in (0, 1) (default {CI_PROB:g})")


def add_out(p: argparse.ArgumentParser, what: str = "figures and the netCDF result", default: str | None = None) -> None:
    """``--out DIR``: where files go."""
    text = f"folder for the {what}" + (f" (default {default})" if default else "")
    p.add_argument("--out", default=None, metavar="DIR", help=text)


def add_json(p: argparse.ArgumentParser) -> None:
    """``--json``: one JSON object on stdout, no progress bar."""
    p.add_argument("--json", action="store_true",
                   help="print one JSON object on stdout (the result's to_json()) and no progress bar")


def add_inference(p: argparse.ArgumentParser, default: str = "conjugate") -> None:
    """``--inference {conjugate,nuts}`` with ``--engine`` as an alias (``mcmc`` means ``nuts``)."""
    p.add_argument("--inference", "--engine", dest="inference", default=None, metavar="{conjugate,nuts}",
                   help=f"exact conjugate posterior or NUTS via PyMC; --engine and mcmc are accepted aliases "
                        f"(default {default})")


def add_cost_matrix(p: argparse.ArgumentParser) -> None:
    """``--cost-matrix SPEC`` with ``--cost`` as an alias."""
    p.add_argument("--cost-matrix", "--cost", dest="cost_matrix", default=None,
                   metavar="{zero-one,people,superclass,FILE}",
                   help="cost matrix: zero-one (default), the CIFAR-100 people or superclass matrices, or a K x K "
                        "CSV, .npy or .json file (rows predicted, columns true class); --cost is an alias")


def add_batch_size(p: argparse.ArgumentParser, help_text: str) -> None:
    """``--batch-size N``: a positive integer whose meaning the subcommand states."""
    p.add_argument("--batch-size", default=None, metavar="N", help=help_text)


def add_strict(p: argparse.ArgumentParser) -> None:
    """``--strict``: exit with status 3 when a NUTS fit fails its diagnostics."""
    p.add_argument("--strict", action="store_true",
                   help=f"exit with status {STRICT_EXIT} when the NUTS fit fails its diagnostics (R-hat, ESS, "
                        "divergences) instead of only warning")


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


def seed_value(value: Any) -> int | None:
    """``--seed``: None or a non-negative integer."""
    return number_value(value, "--seed", integer=True, minimum=0)


def ci_prob_value(value: Any) -> float:
    """``--ci-prob``: a number in (0, 1)."""
    prob = number_value(value, "--ci-prob", default=CI_PROB)
    if not 0 < prob < 1:
        raise ConfigError(f"--ci-prob must be in (0, 1), got {value!r}")
    return float(prob)


def batch_size_value(value: Any) -> int | None:
    """``--batch-size``: None or a positive integer."""
    return number_value(value, "--batch-size", integer=True, minimum=1)


def inference_value(value: Any, default: str = "conjugate") -> str:
    """``--inference``/``--engine``: ``conjugate`` or ``nuts`` (``mcmc`` accepted)."""
    from pbassess.inference import resolve_inference

    try:
        return resolve_inference(value, default=default)
    except ConfigError:
        raise ConfigError(f"--inference must be conjugate or nuts (mcmc is an alias), got {value!r}") from None


def finish_diagnostics(result: Any, args: argparse.Namespace, command: str) -> int:
    """Warn on stderr when a NUTS fit failed its diagnostics; the exit status (``STRICT_EXIT`` under --strict)."""
    diag = getattr(result, "diagnostics", None) or {}
    if diag.get("ok", True):
        if diag.get("rhat_note") and not getattr(args, "json", False):
            print(f"pbassess {command}: note: {diag['rhat_note']}", file=sys.stderr)
        return 0
    problems = "; ".join(diag.get("problems") or []) or "see diagnostics"
    print(f"pbassess {command}: warning: the NUTS fit failed its diagnostics ({problems})", file=sys.stderr)
    return STRICT_EXIT if getattr(args, "strict", False) else 0
