"""The names of the recalibration methods, importable without SciPy (the command line's choices).

Examples
--------
>>> "platt" in METHODS
True
"""

from __future__ import annotations

__all__ = ["METHODS"]

#: Recalibration methods by name (fitted by :func:`pbassess.calibration.recalibration.fit_recalibrator`).
METHODS: tuple[str, ...] = ("temperature", "platt", "histogram", "isotonic", "beta")
