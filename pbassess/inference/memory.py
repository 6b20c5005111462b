"""Size checks before allocating: estimate the memory an assessment needs and refuse in one line.

Posterior draws are dense float64 arrays (``draws x regions x 8`` bytes), and a few options
multiply that: many calibration bins, many classes for classwise calibration or a cost matrix
(K x K), many draws. :func:`check_memory` compares an estimate with the limit
(:func:`memory_limit`: ``PBASSESS_MEMORY_LIMIT`` in bytes or with a unit such as ``8GiB``;
default 2 GiB, or less when ``ulimit -v`` leaves the process less address space) and raises :class:`~pbassess.errors.ConfigError` naming what to change.
"""

from __future__ import annotations

import os
import re
from typing import Any

import numpy as np

from pbassess.errors import ConfigError

__all__ = ["DEFAULT_MEMORY_LIMIT", "MAX_COUNT", "check_count", "check_memory", "format_bytes", "memory_limit"]

#: Default memory budget of one assessment's arrays (2 GiB).
DEFAULT_MEMORY_LIMIT: int = 2 * 1024**3
#: Largest draw count / size option (int32: PyTensor, numba and PyMC index with it).
MAX_COUNT: int = 2**31 - 1
_UNITS = {"": 1, "b": 1, "k": 1e3, "kb": 1e3, "kib": 1024, "m": 1e6, "mb": 1e6, "mib": 1024**2,
          "g": 1e9, "gb": 1e9, "gib": 1024**3, "t": 1e12, "tb": 1e12, "tib": 1024**4}


def format_bytes(n_bytes: float) -> str:
    """``3.2 GiB``-style text.

    Parameters
    ----------
    n_bytes : float

    Returns
    -------
    str

    Examples
    --------
    >>> format_bytes(3 * 1024**3), format_bytes(2048)
    ('3.0 GiB', '2.0 KiB')
    """
    value = float(n_bytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.1f} {unit}" if unit != "B" else f"{value:.0f} B"
        value /= 1024
    return f"{value:.1f} TiB"  # pragma: no cover


def memory_limit() -> int:
    """The memory budget in bytes (``PBASSESS_MEMORY_LIMIT``; default 2 GiB, or what ``ulimit -v`` leaves if less).

    Returns
    -------
    int

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"PBASSESS_MEMORY_LIMIT": "4GiB"}):
    ...     memory_limit()
    4294967296
    >>> with mock.patch.dict(os.environ, {"PBASSESS_MEMORY_LIMIT": "lots"}):
    ...     memory_limit()
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: PBASSESS_MEMORY_LIMIT must be a size like 4GiB or 4000000000, got 'lots'
    """
    raw = os.environ.get("PBASSESS_MEMORY_LIMIT", "").strip().lower().replace(" ", "")
    if not raw:
        return min(DEFAULT_MEMORY_LIMIT, _address_space_left())
    match = re.fullmatch(r"([0-9.]+)([a-z]*)", raw)
    if not match or match.group(2) not in _UNITS:
        raise ConfigError(f"PBASSESS_MEMORY_LIMIT must be a size like 4GiB or 4000000000, got {raw!r}")
    return int(float(match.group(1)) * _UNITS[match.group(2)])


def _address_space_left() -> int:
    """What the process may still map under ``ulimit -v`` (``RLIMIT_AS``); a huge number without a limit."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ImportError, OSError, ValueError):  # pragma: no cover - platforms without resource limits
        return 2**62
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return 2**62
    try:
        with open("/proc/self/statm") as fh:
            in_use = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):  # pragma: no cover - no /proc
        in_use = 0
    return max(int(soft) - in_use, 0)


def check_count(value: Any, option: str, *, minimum: int = 1) -> int:
    """An integer option (draws, bins, ...) between ``minimum`` and ``MAX_COUNT``.

    Parameters
    ----------
    value : int
        The option's value.
    option : str
        The option's name (for the error message).
    minimum : int
        Smallest allowed value.

    Returns
    -------
    int

    Examples
    --------
    >>> check_count(10_000_000_000, "draws")
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: draws=10,000,000,000 is too large (at most 2,147,483,647)
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ConfigError(f"{option} must be an integer, got {value!r}")
    if value < minimum:
        raise ConfigError(f"{option} must be at least {minimum}, got {value!r}")
    if value > MAX_COUNT:
        raise ConfigError(f"{option}={int(value):,} is too large (at most {MAX_COUNT:,})")
    return int(value)


def check_memory(n_bytes: float, what: str, advice: str) -> None:
    """Raise one line when ``what`` would need more than :func:`memory_limit` bytes.

    Parameters
    ----------
    n_bytes : float
        Memory the computation would need.
    what : str
        What would need it (for the message).
    advice : str
        How to need less (for the message).

    Examples
    --------
    >>> check_memory(8 * 4000 * 1_000_000, "calibration with 1,000,000 bins and 4,000 draws", "use fewer bins")
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: calibration with 1,000,000 bins and 4,000 draws needs about 29.8 GiB (limit 2.0 GiB): use fewer bins (or raise PBASSESS_MEMORY_LIMIT)
    """
    limit = memory_limit()
    if n_bytes > limit:
        raise ConfigError(f"{what} needs about {format_bytes(n_bytes)} (limit {format_bytes(limit)}): {advice} "
                          "(or raise PBASSESS_MEMORY_LIMIT)")
