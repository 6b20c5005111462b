"""Evaluation of active assessment as in Ji et al. (2021): MRR, success rate, labels to MRR.

The kernel computes these per run inside its loop (:func:`pbassess.active.engine._evaluate`);
the functions here are the plain-NumPy reference definitions (tests compare the two) and the
summaries of a finished experiment.

* **MRR of the top-m** (mean reciprocal rank): rank the arms by their estimated metric; for
  each true top-m class i its rank ignores the *other* true top-m classes ranked ahead of it;
  ``MRR = (1/m) sum_i 1/rank_i``, which is 1 exactly when the estimated top-m set is right.
* **Success**: the estimated top-m set is the true one (for m = 1: the estimated worst class
  is the true worst), i.e. MRR = 1.
* **Agreement**: the share of the true top-m set among the estimated top m (partial credit
  where success is all or nothing; the same as success for m = 1). The engine reports it at
  every log point beside success (``agreement`` in the ``simulate`` Dataset and JSON).
* **Labels to MRR**: the fraction of the pool labeled when the run-averaged MRR first reaches
  a threshold (0.99), NaN if it never does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.errors import ConfigError

__all__ = ["agreement", "labels_to_mrr", "labels_to_mrr_interval", "mean_reciprocal_rank", "success",
           "summary_table"]


def mean_reciprocal_rank(estimate: Any, true_top: Any) -> float:
    """MRR of the true top-m set under the ranking of ``estimate`` (smallest first).

    Ties are broken by the arm index (like a stable sort).

    Parameters
    ----------
    estimate : array_like, shape (K,)
        Estimated score of each arm; the sought arms have the *smallest* scores.
    true_top : array_like of bool, shape (K,) or array of int
        The true top-m set, as a mask or as indices.

    Examples
    --------
    >>> mean_reciprocal_rank([0.1, 0.2, 0.3, 0.4], [0, 1])   # the right set
    1.0
    >>> mean_reciprocal_rank([0.3, 0.1, 0.2, 0.4], [0, 1])   # class 0 behind one wrong class
    0.75
    """
    est = np.asarray(estimate, dtype=float)
    mask = _as_mask(true_top, est.shape[0])
    m = int(mask.sum())
    if m == 0:
        raise ConfigError("the true top-m set is empty")
    order = np.lexsort((np.arange(est.shape[0]), est))
    wrong_ahead = np.cumsum(~mask[order]) - ~mask[order]
    ranks = 1 + wrong_ahead[mask[order]]
    return float(np.mean(1.0 / ranks))


def success(estimate: Any, true_top: Any) -> bool:
    """Whether the m smallest estimates are exactly the true top-m set.

    Examples
    --------
    >>> success([0.3, 0.1, 0.2], [1])
    True
    """
    return mean_reciprocal_rank(estimate, true_top) == 1.0


def agreement(estimate: Any, true_top: Any) -> float:
    """Share of the true top-m set among the m smallest estimates (1 exactly when :func:`success`).

    Examples
    --------
    >>> agreement([0.3, 0.1, 0.2, 0.4], [0, 1])   # one of the two found
    0.5
    """
    est = np.asarray(estimate, dtype=float)
    mask = _as_mask(true_top, est.shape[0])
    m = int(mask.sum())
    if m == 0:
        raise ConfigError("the true top-m set is empty")
    return float(mask[np.lexsort((np.arange(est.shape[0]), est))[:m]].mean())


def _as_mask(true_top: Any, n: int) -> np.ndarray:
    arr = np.asarray(true_top)
    if arr.dtype == bool:
        if arr.shape != (n,):
            raise ConfigError(f"true_top mask has shape {arr.shape}, expected ({n},)")
        return arr
    mask = np.zeros(n, dtype=bool)
    mask[arr.astype(int)] = True
    return mask


def labels_to_mrr(mrr: Any, labels: Any, n_items: int, threshold: float = 0.99) -> float:
    """Fraction of the pool labeled when the run-averaged MRR first reaches ``threshold``.

    Parameters
    ----------
    mrr : array_like, shape (runs, steps) or (steps,)
        MRR per run at each log point (averaged over runs when 2-D).
    labels : array_like, shape (steps,)
        Number of labels at each log point.
    n_items : int
        Pool size.

    Returns
    -------
    float
        NaN when the threshold is never reached.

    Examples
    --------
    >>> labels_to_mrr([[0.5, 0.99, 1.0], [0.5, 1.0, 1.0]], [100, 200, 300], 1000)
    0.2
    """
    curve = np.asarray(mrr, dtype=float)
    if curve.ndim == 2:
        curve = curve.mean(axis=0)
    hit = np.flatnonzero(curve >= threshold - 1e-12)
    if hit.size == 0:
        return float("nan")
    return float(np.asarray(labels)[hit[0]] / n_items)


def labels_to_mrr_interval(mrr: Any, labels: Any, n_items: int, threshold: float = 0.99, *, prob: float = 0.9,
                           n_boot: int = 400, seed: Any = 0) -> tuple[float, float]:
    """Bootstrap interval (resampling runs) of :func:`labels_to_mrr`: its Monte Carlo uncertainty.

    The first crossing of a run-averaged curve that creeps towards 1 is sensitive to the few
    runs that are still wrong, so the same strategy can land a few log points apart in two
    batches of runs; this interval says how far.

    Returns
    -------
    (low, high) : tuple of float
        Central ``prob`` interval; a bootstrap replicate that never reaches the threshold
        counts as 1 (the whole pool) and the bound is NaN when that is all that is known.

    Examples
    --------
    >>> import numpy as np
    >>> curves = np.array([[0.0, 1.0, 1.0]] * 9 + [[0.0, 0.0, 1.0]])  # one slow run in ten
    >>> labels_to_mrr(curves, [10, 20, 30], 30), labels_to_mrr_interval(curves, [10, 20, 30], 30)
    (1.0, (0.6666666666666666, 1.0))
    """
    from pbassess.stats import as_generator

    curves = np.asarray(mrr, dtype=float)
    if curves.ndim != 2:
        raise ConfigError("the bootstrap needs per-run curves (runs x steps)")
    rng = as_generator(seed)
    runs = curves.shape[0]
    reps = np.empty(n_boot)
    for b in range(n_boot):
        v = labels_to_mrr(curves[rng.integers(0, runs, runs)], labels, n_items, threshold)
        reps[b] = 1.0 if v != v else v
    low, high = np.quantile(reps, [(1 - prob) / 2, (1 + prob) / 2])
    return float(low), float(high)


def summary_table(ds: Any, threshold: float = 0.99):
    """The label-efficiency table of an experiment Dataset: one row per (strategy, prior).

    Columns: ``labels_to_mrr`` (fraction of the pool) with its 90% bootstrap interval over runs
    (``labels_to_mrr_low``, ``labels_to_mrr_high``), ``mrr_at_10pct``, ``success_at_10pct`` and
    ``agreement_at_10pct`` (run averages after 10% of the pool), ``final_mrr``, ``seconds``.

    Examples
    --------
    >>> import numpy as np
    >>> from pbassess import Predictions
    >>> from pbassess.active.experiment import simulate
    >>> p = Predictions.from_top1([0, 0, 1, 1], [0.9, 0.8, 0.7, 0.6], [0, 1, 1, 1], classes=["a", "b"])
    >>> summary_table(simulate(p, strategies=["ts"], runs=2, log_every=1)).shape[0]
    1
    """
    import pandas as pd

    ds = getattr(ds, "dataset", ds)  # a SimulationResult or its Dataset
    rows = []
    labels = ds["labels"].values
    n_items = int(ds.attrs["n_items"])
    tenth = int(np.searchsorted(labels, 0.1 * n_items))
    tenth = min(tenth, labels.size - 1)
    for strategy in ds["strategy"].values:
        for prior in ds["prior"].values:
            sel = ds.sel(strategy=strategy, prior=prior)
            low, high = labels_to_mrr_interval(sel["mrr"].values, labels, n_items, threshold, n_boot=200)
            rows.append({
                "strategy": str(strategy), "prior": str(prior),
                "labels_to_mrr": labels_to_mrr(sel["mrr"].values, labels, n_items, threshold),
                "labels_to_mrr_low": low, "labels_to_mrr_high": high,
                "mrr_at_10pct": float(sel["mrr"].values[:, tenth].mean()),
                "success_at_10pct": float(sel["success"].values[:, tenth].mean()),
                "agreement_at_10pct": (float(sel["agreement"].values[:, tenth].mean()) if "agreement" in sel
                                       else float("nan")),
                "final_mrr": float(sel["mrr"].values[:, -1].mean()),
                "seconds": float(sel["seconds"].values),
            })
    return pd.DataFrame(rows)
