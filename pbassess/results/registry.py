"""The registry of result classes: metric name -> ``"module:Class"``, filled by subclassing.

Every concrete subclass of :class:`~pbassess.results.AssessmentResult` records itself here
when it is defined (``AssessmentResult.__init_subclass__``): under its ``metric`` in
:data:`RESULT_CLASSES` and under its ``"module:qualname"``. :func:`pbassess.load_result`
reads the ``metric`` and ``result_class`` attributes of a saved file; in a fresh process,
importing the module named by ``result_class`` defines, and so registers, the class. Other
packages may also name a class lazily with :func:`register_result_class`.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Any

from pbassess.errors import ConfigError, DataError

__all__ = ["RESULT_CLASSES", "register_result_class", "register_subclass", "result_class"]

#: metric -> "module:Class" of every result class defined so far (and of those registered by name).
RESULT_CLASSES: dict[str, str] = {}

#: "module:qualname" -> class, for every concrete result class defined so far.
_DEFINED: dict[str, type] = {}


def _target(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def register_subclass(cls: type) -> None:
    """Record a concrete result class (called by ``AssessmentResult.__init_subclass__`` when it is defined).

    Examples
    --------
    >>> from pbassess.results.accuracy import AccuracyResult
    >>> register_subclass(AccuracyResult)  # already known: recording it again changes nothing
    >>> RESULT_CLASSES["accuracy"]
    'pbassess.results.accuracy:AccuracyResult'
    """
    target = _target(cls)
    metric = cls.__dict__.get("metric")
    known = RESULT_CLASSES.get(str(metric)) if metric is not None else None
    if known is not None and known != target and known in _DEFINED:
        raise ConfigError(f"result class {target} uses the metric name {metric!r} of {known}; choose another")
    _DEFINED[target] = cls
    if metric is not None:  # else it inherits its parent's metric and is found through the saved result_class
        RESULT_CLASSES[str(metric)] = target


def register_result_class(metric: str, target: str) -> None:
    """Register ``target`` (``"package.module:ClassName"``) as the result class of ``metric``.

    Subclasses of :class:`~pbassess.results.AssessmentResult` register themselves when defined;
    this names a class without importing it (an outside package's class, say).

    Parameters
    ----------
    metric : str
        The metric name a saved result carries (e.g. ``"accuracy"``).
    target : str
        The class as ``"package.module:ClassName"``; imported only when a result is loaded.

    Examples
    --------
    >>> register_result_class("my-metric", "pbassess.results.accuracy:AccuracyResult")
    >>> result_class("my-metric").__name__
    'AccuracyResult'
    >>> del RESULT_CLASSES["my-metric"]
    """
    if ":" not in target:
        raise ValueError(f"result class target must look like 'module:Class', got {target!r}")
    RESULT_CLASSES[str(metric)] = target


def _import(target: str) -> Any:
    """The class ``target`` names: from its module as imported (sys.modules), else as defined here."""
    module, _, name = target.partition(":")
    try:
        obj: Any = importlib.import_module(module)
        for part in name.split("."):
            obj = getattr(obj, part)
        return obj
    except (ImportError, AttributeError):
        if target in _DEFINED:  # e.g. a class defined in __main__ or a notebook
            return _DEFINED[target]
        raise


def _import_builtin_results() -> None:
    """Import every module of :mod:`pbassess.results` (defining, so registering, its classes)."""
    # listed from the folder (importing the package here would make registry <-> package a cycle)
    folder = Path(__file__).resolve().parent
    for info in pkgutil.iter_modules([str(folder)], "pbassess.results."):
        importlib.import_module(info.name)


def _lookup(metric: str, fallback: str | None) -> type | None:
    saved = None
    if fallback:  # the class that wrote the file, when it still exists with that metric
        try:
            saved = _import(fallback)
        except (ImportError, AttributeError):
            saved = None
        if saved is not None and getattr(saved, "metric", None) == metric:
            return saved
    target = RESULT_CLASSES.get(str(metric))
    if target:
        try:
            return _import(target)
        except (ImportError, AttributeError):
            pass
    return saved


def result_class(metric: str, fallback: str | None = None) -> type:
    """The result class of ``metric``, or the class ``fallback`` (``"module:Class"``) names.

    The saved class (``fallback``) wins when it still has that metric, so a subclass that
    inherits its parent's metric loads as itself.

    Parameters
    ----------
    metric : str
        The metric name a saved result carries.
    fallback : str, optional
        The saved class as ``"module:Class"``.

    Returns
    -------
    type
        A subclass of :class:`~pbassess.results.AssessmentResult`.

    Examples
    --------
    >>> result_class("cost").__name__
    'CostResult'
    >>> result_class("nonsense")
    Traceback (most recent call last):
    ...
    pbassess.errors.DataError: not a pbassess result (metric 'nonsense')
    """
    found = _lookup(str(metric), fallback)
    if found is None and str(metric) not in RESULT_CLASSES:
        _import_builtin_results()
        found = _lookup(str(metric), fallback)
    if found is None:
        raise DataError(f"not a pbassess result (metric {metric!r})")
    return found
