"""Errors of an estimated surface against a known (or all-labels) truth.

Metrics over arms (Piratla et al. 2021): macro MSE (every arm equal), MSE on the ``k`` arms of
lowest true accuracy, micro MSE (arms weighted by their pool support) and MSE on the ``k``
least frequent arms. When the truth is itself an empirical accuracy of ``support`` items it
carries a sampling variance ~ t (1 - t) / support; :func:`surface_errors` reports each metric
raw and minus that noise floor (``*_corrected``). :func:`interval_coverage` asks whether a
surface's intervals are honest: the share of scored arms whose truth they hold.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.errors import DataError
from pbassess.seeds import as_generator
from pbassess.stats.intervals import hdi_from_draws

__all__ = ["interval_coverage", "surface_errors", "truth_from_pool"]


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


def interval_coverage(draws: Any, truth: Any, support: Any, *, min_support: float = 0.0, prob: float = 0.94,
                      truth_is_empirical: bool = True, labeled: Any = None, correct: Any = None,
                      seed: Any = None) -> dict[str, float]:
    """The share of scored arms whose truth lies in the surface's ``prob`` HDI, and the HDIs' mean width.

    A known truth (``truth_is_empirical=False``: the arms' expected accuracies) is compared with the
    HDI of the accuracy draws themselves. An empirical truth (the accuracy of the arm's ``support``
    pool items, all labeled) also holds the items' own Bernoulli noise, so it is compared with the
    HDI of the pool's accuracy predicted from each draw: the arm's ``labeled`` items with their
    ``correct`` outcomes known, its other items' outcomes drawn as Binomial(support - labeled, draw).

    Parameters
    ----------
    draws : array_like, shape (S, A)
        Posterior draws of the arms' accuracies.
    truth, support : array_like, shape (A,)
        True accuracy and the number of pool items behind it.
    min_support : float
        Only arms with at least this support are scored.
    prob : float
        The HDI's mass (0.94, the surface's own).
    truth_is_empirical : bool
    labeled, correct : array_like, shape (A,), optional
        The fit's labeled items and correct ones per arm (an empirical truth only; default none).
    seed : int or numpy.random.Generator, optional
        For the unlabeled items' outcomes.

    Returns
    -------
    dict
        ``coverage``, ``mean_width`` and ``n_arms_scored``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.uniform(0.6, 0.9, size=400)
    >>> centre = truth + rng.normal(0.0, 0.02, size=400)     # a posterior mean off by its own sd
    >>> spread = rng.normal(0.0, 0.02, size=(4000, 400))
    >>> honest, too_sure = centre + spread, centre + 0.2 * spread
    >>> c = [interval_coverage(d, truth, np.full(400, 100), truth_is_empirical=False)["coverage"] for d in (honest, too_sure)]
    >>> bool(0.85 < c[0] < 0.99), bool(c[1] < 0.5)
    (True, True)
    """
    x = np.asarray(draws, dtype=float)
    tru, sup = (np.asarray(v, float).ravel() for v in (truth, support))
    if x.ndim != 2 or not x.shape[1] == tru.size == sup.size:
        raise DataError(f"draws (S, A) and A truths and supports are needed, got {x.shape}, {tru.size}, {sup.size}")
    keep = np.isfinite(tru) & (sup >= min_support) & (sup > 0) & np.all(np.isfinite(x), axis=0)
    if not keep.any():
        raise DataError("no arm has a truth value with enough support to score")
    x, tru, sup = x[:, keep], tru[keep], sup[keep]
    if truth_is_empirical:
        n_lab = np.zeros_like(sup) if labeled is None else np.asarray(labeled, float).ravel()[keep]
        n_right = np.zeros_like(sup) if correct is None else np.asarray(correct, float).ravel()[keep]
        rest = np.maximum(sup - n_lab, 0).astype(np.int64)
        outcomes = as_generator(seed).binomial(np.broadcast_to(rest, x.shape), np.clip(x, 0.0, 1.0))
        x = (outcomes + n_right) / sup
    bounds = hdi_from_draws(x, prob, axis=0)
    inside = (tru >= bounds[:, 0]) & (tru <= bounds[:, 1])
    return {"coverage": float(inside.mean()), "mean_width": float((bounds[:, 1] - bounds[:, 0]).mean()),
            "n_arms_scored": int(keep.sum())}
