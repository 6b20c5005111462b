"""The explicit registry of result classes: metric name -> ``"module:Class"`` (imported lazily).

:func:`pbassess.load_result` reads the ``metric`` attribute of a saved file and imports the
class named here, so loading works in a fresh process without importing every assessment
first and without classes registering themselves as an import side effect. Other packages add
their classes with :func:`register_result_class`; a saved file also records its class as
``result_class``, which is used when the metric is not in the table.
"""

from __future__ import annotations

import importlib
from typing import Any

from pbassess.errors import DataError

__all__ = ["RESULT_CLASSES", "register_result_class", "result_class"]

#: metric -> "module:Class" of every result pbassess ships.
RESULT_CLASSES: dict[str, str] = {
    "accuracy": "pbassess.results.accuracy:AccuracyResult",
    "calibration": "pbassess.results.calibration:CalibrationResult",
    "cost": "pbassess.results.cost:CostResult",
    "compare": "pbassess.results.compare:ComparisonResult",
    "hierarchical": "pbassess.results.hierarchical:HierarchicalResult",
    "hierarchical-calibration": "pbassess.results.hierarchical:HierarchicalCalibrationResult",
    "labeling-session": "pbassess.active.session_result:SessionPosterior",
    "active-simulation": "pbassess.active.result:SimulationResult",
}


def register_result_class(metric: str, target: str) -> None:
    """Register ``target`` (``"package.module:ClassName"``) as the result class of ``metric``.

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
    module, _, name = target.partition(":")
    obj: Any = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def result_class(metric: str, fallback: str | None = None) -> type:
    """The result class of ``metric`` (imported on demand), else of ``fallback`` ("module:Class").

    Examples
    --------
    >>> result_class("cost").__name__
    'CostResult'
    >>> result_class("nonsense")
    Traceback (most recent call last):
    ...
    pbassess.errors.DataError: not a pbassess result (metric 'nonsense')
    """
    for target in (RESULT_CLASSES.get(str(metric)), fallback):
        if not target:
            continue
        try:
            return _import(target)
        except (ImportError, AttributeError):
            continue
    raise DataError(f"not a pbassess result (metric {metric!r})")
