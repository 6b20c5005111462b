"""Seeds: the project's one seed handler, :func:`as_generator`, and :func:`generator_is_own`.

It depends on NumPy and :mod:`pbassess.errors` only, so every layer (the data generators of
:mod:`pbassess.data` included) can use it; :mod:`pbassess.stats` re-exports it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.errors import ConfigError

__all__ = ["as_generator", "generator_is_own"]


def as_generator(seed: Any = None) -> np.random.Generator:
    """A :class:`numpy.random.Generator` from a seed, a Generator, or None (fresh entropy).

    A seed is ``None`` (fresh entropy), a non-negative integer, a
    :class:`numpy.random.Generator`, :class:`~numpy.random.SeedSequence` or bit generator;
    anything else (``-1``, ``"abc"``, ``1.5``, ``True``) raises one
    :class:`~pbassess.errors.ConfigError` line.

    Examples
    --------
    >>> int(as_generator(3).integers(10)) == int(as_generator(3).integers(10))
    True
    >>> as_generator(-1)
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: seed must be a non-negative integer or a numpy.random.Generator, got -1
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.RandomState):
        raise ConfigError("pass a seed or numpy.random.Generator, not a legacy RandomState")
    if seed is None or isinstance(seed, (np.random.SeedSequence, np.random.BitGenerator)):
        return np.random.default_rng(seed)
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ConfigError(f"seed must be a non-negative integer or a numpy.random.Generator, got {seed!r}")
    return np.random.default_rng(int(seed))


def generator_is_own(seed: Any) -> bool:
    """Whether :func:`as_generator` makes a new Generator from ``seed`` that no caller holds.

    True for ``None``, an integer or a :class:`~numpy.random.SeedSequence`: work drawn from the
    generator later (a deferred group of a fit) cannot change a caller's stream. False for a
    Generator (the caller's own) or a bit generator (it may be shared).

    Examples
    --------
    >>> generator_is_own(0), generator_is_own(None), generator_is_own(np.random.default_rng(0))
    (True, True, False)
    """
    return seed is None or isinstance(seed, (int, np.integer, np.random.SeedSequence))
