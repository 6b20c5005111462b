"""Lazy exports of a package: a name is imported from its module the first time it is read.

A package ``__init__`` that lists its public names with :func:`lazy_exports` costs nothing to
import, so ``pbassess <command> --help`` and ``import pbassess.active.model`` do not pull in the
whole package (numba kernels, scipy, PyMC). ``from package import name``, ``package.name``,
``from package import *`` and ``dir(package)`` behave as with eager imports.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for a package whose public names live in the modules ``exports`` maps them to.

    Examples
    --------
    >>> getattr_, dir_ = lazy_exports("demo", {"sqrt": "math"})
    >>> getattr_("sqrt")(9.0), "sqrt" in dir_()
    (3.0, True)
    >>> getattr_("nope")
    Traceback (most recent call last):
    ...
    AttributeError: module 'demo' has no attribute 'nope'
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    def __dir__() -> list[str]:
        return sorted(set(exports))

    return __getattr__, __dir__
