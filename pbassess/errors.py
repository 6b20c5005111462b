"""Errors that speak the user's language.

Every error a user can trigger with bad input is a :class:`PbassessError` (a ``ValueError``)
whose message is one line naming the column, row or argument and what is wrong with it.
The command-line interface prints that line to stderr and exits non-zero.
"""

from __future__ import annotations


class PbassessError(ValueError):
    """Base class of every error pbassess raises on bad input."""


class DataError(PbassessError):
    """A prediction set, label file or pool fails validation."""


class ConfigError(PbassessError):
    """An option (prior, bins, strategy, cost matrix, ...) is invalid."""


class NotFittedError(PbassessError):
    """A result was asked for before the assessment was computed."""


class StateError(PbassessError):
    """A labeling-session state file is missing, corrupt, or does not match its pool."""
