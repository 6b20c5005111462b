"""Errors of an estimated surface against a known (or all-labels) truth.

Metrics over arms (Piratla et al. 2021): macro MSE (every arm equal), MSE on the ``k`` arms of
lowest true accuracy, micro MSE (arms weighted by their pool support) and MSE on the ``k``
least frequent arms. When the truth is itself an empirical accuracy of ``support`` items it
carries a sampling variance ~ t (1 - t) / support; :func:`surface_errors` reports each metric
raw and minus that noise floor (``*_corrected``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.errors import DataError

__all__ = ["surface_errors", "truth_from_pool"]


def truth_from_pool(arms: Any) -> np.ndarray:
    """Empirical accuracy of every arm from all its labeled items (NaN where none).

    Examples
    --------
    >>> from pbassess.surface import ArmCounts
    >>> truth_from_pool(ArmCounts.from_arrays([4, 0], [3, 0])).tolist()
    [0.75, nan]
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(arms.n > 0, arms.correct / np.where(arms.n > 0, arms.n, 1), np.nan)


def surface_errors(estimate: Any, truth: Any, support: Any, *, min_support: float = 0.0, k: int = 50,
                   truth_is_empirical: bool = True) -> dict[str, float]:
    """Macro, worst-k, micro and least-frequent-k MSE of a surface estimate.

    Parameters
    ----------
    estimate, truth, support : array (A,)
        Estimated and true arm accuracy, and the number of items behind each truth value.
    min_support : float
        Only arms with at least this support are scored (e.g. 50 on ACS).
    k : int
        Number of worst / least frequent arms.
    truth_is_empirical : bool
        Also report each metric minus the truth's own sampling variance t (1 - t) / support.

    Examples
    --------
    >>> e = surface_errors([0.5, 0.9], [0.6, 0.8], [100, 10], k=1)
    >>> round(e["macro_mse"], 4), round(e["worst_mse"], 4), round(e["micro_mse"], 4)
    (0.01, 0.01, 0.01)
    """
    est, tru, sup = (np.asarray(x, float).ravel() for x in (estimate, truth, support))
    if not est.shape == tru.shape == sup.shape:
        raise DataError(f"estimate, truth and support differ in length: {est.size}, {tru.size}, {sup.size}")
    keep = np.isfinite(tru) & (sup >= min_support) & (sup > 0)
    if not keep.any():
        raise DataError("no arm has a truth value with enough support to score")
    est, tru, sup = est[keep], tru[keep], sup[keep]
    err = (est - tru) ** 2
    floor = tru * (1 - tru) / sup if truth_is_empirical else np.zeros_like(tru)
    kk = min(k, tru.size)
    worst = np.argsort(tru, kind="stable")[:kk]
    rare = np.argsort(sup, kind="stable")[:kk]
    out = {
        "macro_mse": float(err.mean()), "worst_mse": float(err[worst].mean()),
        "micro_mse": float(np.average(err, weights=sup)), "rare_mse": float(err[rare].mean()),
        "n_arms_scored": int(keep.sum()),
    }
    if truth_is_empirical:
        out.update({
            "macro_mse_corrected": out["macro_mse"] - float(floor.mean()),
            "worst_mse_corrected": out["worst_mse"] - float(floor[worst].mean()),
            "micro_mse_corrected": out["micro_mse"] - float(np.average(floor, weights=sup)),
            "rare_mse_corrected": out["rare_mse"] - float(floor[rare].mean()),
        })
    return out
