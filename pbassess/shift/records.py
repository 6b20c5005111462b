"""The rows and columns of a shift table: its JSON records and the scalar metrics it holds.

Shared by the table's builder (:mod:`pbassess.shift.table`) and its result
(:mod:`pbassess.shift.result`), so that neither imports the other back.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.metrics.registry import metrics_used_by

__all__ = ["SCALARS", "shift_records", "table_of"]

#: Scalar metrics of one (level, model) cell of the shift table.
SCALARS = ("n", "n_items", "accuracy", "nll", "brier", "brier_reliability", "brier_resolution",
           "brier_uncertainty", "brier_cross", "ece", "entropy", "confidence", "auroc_ood",
           "auroc_ood_entropy")


def table_of(ds: Any) -> Any:
    """The :class:`xarray.Dataset` of a shift result (a Dataset is returned as it is).

    Examples
    --------
    >>> import xarray as xr
    >>> ds = xr.Dataset()
    >>> table_of(ds) is ds
    True
    """
    import xarray as xr

    return ds if isinstance(ds, xr.Dataset) else getattr(ds, "table", ds)


def shift_records(ds) -> list[dict[str, Any]]:
    """One JSON-able dict per (level, model), the output of ``pbassess shift --json``.

    Parameters
    ----------
    ds : xarray.Dataset or ShiftTableResult
        A :func:`shift_table`.

    Returns
    -------
    list of dict

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_probs([[0.9, 0.1], [0.2, 0.8]], [0, 0])
    >>> from pbassess.shift import shift_table
    >>> r = shift_records(shift_table(p, n_draws=100, seed=0))[0]
    >>> r["level"], r["n"], r["accuracy"], "auroc_ood" in r
    ('all', 2, 0.5, False)
    """
    ds = table_of(ds)
    keys = ("n", "accuracy", "nll", "brier", "brier_reliability", "brier_resolution", "brier_uncertainty",
            "brier_cross", "ece", "entropy")
    has_ood = bool(ds.attrs.get("n_ood"))
    out = []
    for level in ds["level"].values.tolist():
        for model in ds["model"].values.tolist():
            cell = ds.sel(level=level, model=model)
            row: dict[str, Any] = {"level": level, "model": model}
            for key in keys:
                v = float(cell[key])
                row[key] = int(v) if key == "n" else (None if np.isnan(v) else v)
            if has_ood:
                row["auroc_ood"] = float(cell["auroc_ood"])
                row["auroc_ood_entropy"] = float(cell["auroc_ood_entropy"])
            for metric in metrics_used_by("shift"):
                if f"{metric}_hdi" in ds:
                    row[f"{metric}_hdi"] = [float(v) for v in cell[f"{metric}_hdi"].values]
            out.append(row)
    return out
