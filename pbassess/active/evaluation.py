"""Evaluation of active assessment as in Ji et al. (2021): MRR, success rate, labels to MRR.

The kernel computes these per run inside its loop (:func:`pbassess.active.scores.evaluate_ranking`);
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
  a threshold (0.99), NaN if it never does. Its estimand is the first log point at which the
  *expected* MRR curve (the average over infinitely many runs) reaches the threshold; the
  interval (:func:`labels_to_mrr_interval`) inverts a pointwise confidence band of that curve.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.errors import ConfigError

__all__ = ["agreement", "labels_to_mrr", "labels_to_mrr_interval", "mean_bounds", "mean_reciprocal_rank",
           "success", "summary_table"]


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


def mean_bounds(values: Any, prob: float = 0.9) -> tuple[np.ndarray, np.ndarray]:
    """Wilson-type score bounds of the mean of [0, 1]-valued runs, per log point (columns).

    For a variable in [0, 1] with mean mu the variance is at most mu (1 - mu) (equality for
    0/1), so the Wilson score interval of the run average with that variance bound is a
    (conservative) interval for the expected value; it has width > 0 even when every run is 1,
    where the Wald interval has none. Each bound is one-sided at level ``(1 + prob) / 2``.

    Examples
    --------
    >>> lo, hi = mean_bounds(np.ones((20, 1)), 0.9)     # 20 runs, all at 1: mean >= 0.88
    >>> round(float(lo[0]), 3), float(hi[0])
    (0.881, 1.0)
    """
    from scipy import stats

    x = np.clip(np.asarray(values, dtype=float), 0.0, 1.0)
    if x.ndim == 1:
        x = x[:, None]
    runs = x.shape[0]
    z = float(stats.norm.ppf((1 + prob) / 2))
    m = x.mean(axis=0)
    centre = (m + z**2 / (2 * runs)) / (1 + z**2 / runs)
    half = z / (1 + z**2 / runs) * np.sqrt(m * (1 - m) / runs + z**2 / (4 * runs**2))
    lo = np.where(m <= 0, 0.0, np.clip(centre - half, 0.0, 1.0))
    hi = np.where(m >= 1, 1.0, np.clip(centre + half, 0.0, 1.0))
    return lo, hi


def labels_to_mrr_interval(mrr: Any, labels: Any, n_items: int, threshold: float = 0.99, *, prob: float = 0.9,
                           n_boot: int = 400, seed: Any = 0, method: str = "band") -> tuple[float, float]:
    """Confidence interval of the labels to MRR (:func:`labels_to_mrr`) of the expected MRR curve.

    The estimand is the first log point t* at which the expected (infinitely-many-run) MRR
    curve mu(t) reaches ``threshold``. ``method="band"`` (default) inverts pointwise bounds
    ``L(t) <= mu(t) <= U(t)`` (:func:`mean_bounds`, one-sided at ``(1 + prob) / 2`` each):

    * low = the first log point with ``U(t) >= threshold`` (before it, mu is below the threshold);
    * high = the first log point with ``L(t) >= threshold`` (there mu has reached it), or 1 (the
      whole pool) when no log point certifies it.

    For an increasing mu, t* < low needs ``U(t*) < threshold <= mu(t*)`` - a miss of one
    one-sided bound at the one point t*; t* > high needs ``L(t) >= threshold > mu(t)`` at some
    t before t*, which for a curve rising to the threshold is dominated by the log points next
    to t*. As ``U >= mean >= L``, ``low <= labels_to_mrr <= high`` always, and the interval can
    extend on both sides of the estimate. With few runs it is honest rather than short: 20 runs
    that all reach MRR 1 still only show mu >= 0.88 (90%), so a threshold of 0.99 is not
    certified (high = 1). Coverage by simulation: ``tests/active/test_labels_to_target.py``.

    ``method="bootstrap"`` is the construction before 0.x (resample runs, first crossing of the
    resampled mean curve, percentile interval; ``n_boot`` replicates from ``seed``). It measures
    the Monte Carlo spread of the estimate, not the estimand: where every run has reached MRR 1
    at the estimate, no replicate can cross later, so its upper end equals the estimate.

    Returns
    -------
    (low, high) : tuple of float
        Fractions of the pool; ``(nan, nan)`` when even ``U(t)`` never reaches the threshold.

    Examples
    --------
    >>> import numpy as np
    >>> curves = np.array([[0.0, 1.0, 1.0]] * 39 + [[0.0, 0.0, 1.0]])  # one slow run in 40
    >>> labels_to_mrr(curves, [10, 20, 30], 30), labels_to_mrr_interval(curves, [10, 20, 30], 30)
    (1.0, (0.6666666666666666, 1.0))
    >>> many = np.array([[0.5, 1.0, 1.0, 1.0]] * 400)                  # 400 runs, all at 1 from step 2
    >>> labels_to_mrr(many, [10, 20, 30, 40], 40), labels_to_mrr_interval(many, [10, 20, 30, 40], 40)
    (0.5, (0.5, 0.5))
    """
    curves = np.asarray(mrr, dtype=float)
    if curves.ndim != 2:
        raise ConfigError("the interval needs per-run curves (runs x steps)")
    if method == "bootstrap":
        return _bootstrap_interval(curves, labels, n_items, threshold, prob, n_boot, seed)
    if method != "band":
        raise ConfigError(f"unknown labels-to-MRR interval method {method!r} (choose 'band' or 'bootstrap')")
    steps = np.asarray(labels, dtype=float)
    lower, upper = mean_bounds(curves, prob)
    reach_hi = np.flatnonzero(upper >= threshold - 1e-12)
    if reach_hi.size == 0:
        return float("nan"), float("nan")
    reach_lo = np.flatnonzero(lower >= threshold - 1e-12)
    high = float(steps[reach_lo[0]] / n_items) if reach_lo.size else 1.0
    return float(steps[reach_hi[0]] / n_items), high


def _bootstrap_interval(curves: np.ndarray, labels: Any, n_items: int, threshold: float, prob: float, n_boot: int,
                        seed: Any) -> tuple[float, float]:
    """The percentile bootstrap over runs (``method="bootstrap"`` of :func:`labels_to_mrr_interval`)."""
    from pbassess.stats import as_generator

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

    Columns: ``labels_to_mrr`` (fraction of the pool) with its 90% confidence interval
    (:func:`labels_to_mrr_interval`; ``labels_to_mrr_low``, ``labels_to_mrr_high``), ``mrr_at_10pct``, ``success_at_10pct`` and
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
