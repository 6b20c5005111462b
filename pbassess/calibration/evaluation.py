"""Fit a recalibration map on a labeled split, measure ECE, NLL and Brier before and after on the rest.

:func:`recalibrate` splits the labeled items at random (``fit_fraction`` to fit, the rest to
evaluate), fits one of :data:`~pbassess.calibration.recalibration.METHODS` and reports, on the
held-out items, the frequentist ECE (10 equal-width bins, ``"left"`` convention), mean NLL and
Brier score before and after, with posteriors:

- ECE: independent Beta posteriors of the bin accuracies (pseudocount 2, centred on the
  diagonal; every held-out item is labeled, so bin weights and scores are the held-out ones);
- NLL and Brier: the Bayesian bootstrap (:func:`pbassess.metrics.bayesian_bootstrap`) of the
  per-item values, and of their paired differences after - before, giving
  ``P(after < before)``;
- ``P(improved)`` of the ECE: paired draws of the same held-out items' accuracies evaluated in
  the before and the after bins (:func:`paired_ece_draws`).

Scoring: with full probability vectors NLL is ``-log p_y`` and Brier ``sum_j (p_j - 1[y = j])^2``
of the whole vector (top-1 maps are put back into the vector by
:func:`~pbassess.calibration.recalibration.apply_top1`); in top-1 form both score the
confidence as a probability of being correct (``-log q`` or ``-log(1 - q)``, ``(q - correct)^2``).
Probabilities are clipped at 1e-12 inside the logarithm.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pbassess.calibration.metrics import expected_calibration_error
from pbassess.calibration.posterior import beta_metric_draws, pool_bins
from pbassess.calibration.recalibration import apply_top1, fit_recalibrator
from pbassess.constants import CI_PROB
from pbassess.errors import ConfigError, DataError
from pbassess.stats import as_generator, hdi_from_draws

__all__ = ["MIN_SPLIT_ITEMS", "paired_ece_draws", "recalibrate", "split_labeled", "top_label_scores"]

_CLIP = 1e-12


#: The fewest items of each part of the split (fitting and evaluation). A recalibration map has
#: up to three parameters (beta calibration) and the ECE is read over ``bins`` (default 10) bins:
#: below about twenty items the fit is noise and the evaluation's posterior is near degenerate
#: (two items to fit and two to measure gave P(improved) 0.990 with an after-ECE HDI of [0, 0]).
MIN_SPLIT_ITEMS = 20


def _labeled_needed(fit_fraction: float) -> int:
    """The fewest labeled items whose split at ``fit_fraction`` leaves :data:`MIN_SPLIT_ITEMS` on each side."""
    n = max(math.ceil(MIN_SPLIT_ITEMS / fit_fraction), math.ceil(MIN_SPLIT_ITEMS / (1 - fit_fraction)))
    for candidate in range(max(n - 2, 2 * MIN_SPLIT_ITEMS), n + 10):
        n_fit = int(round(fit_fraction * candidate))
        if n_fit >= MIN_SPLIT_ITEMS and candidate - n_fit >= MIN_SPLIT_ITEMS:
            return candidate
    return n + 10


def split_labeled(n_labeled_idx: np.ndarray, fit_fraction: float, seed: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Random split of labeled item indices into (fit, evaluate), each with at least :data:`MIN_SPLIT_ITEMS` items.

    Examples
    --------
    >>> fit, ev = split_labeled(np.arange(100), 0.3, seed=0)
    >>> len(fit), len(ev), sorted(np.concatenate([fit, ev]).tolist()) == list(range(100))
    (30, 70, True)
    >>> split_labeled(np.arange(4), 0.5)
    Traceback (most recent call last):
    ...
    pbassess.errors.DataError: 4 labeled items are too few to recalibrate: --fit-fraction 0.5 gives 2 items to fit and 2 to evaluate, and each part needs at least 20 (at least 40 labeled items at this fraction)
    """
    if not 0 < fit_fraction < 1:
        raise ConfigError(f"--fit-fraction must lie strictly between 0 and 1, got {fit_fraction!r}")
    idx = np.asarray(n_labeled_idx)
    n_fit = int(round(fit_fraction * idx.size))
    if n_fit < MIN_SPLIT_ITEMS or idx.size - n_fit < MIN_SPLIT_ITEMS:
        raise DataError(f"{idx.size} labeled items are too few to recalibrate: --fit-fraction {fit_fraction:g} gives "
                        f"{n_fit} items to fit and {idx.size - n_fit} to evaluate, and each part needs at least "
                        f"{MIN_SPLIT_ITEMS} (at least {_labeled_needed(fit_fraction)} labeled items at this fraction)")
    perm = as_generator(seed).permutation(idx)
    return np.sort(perm[:n_fit]), np.sort(perm[n_fit:])


def top_label_scores(q: np.ndarray, correct: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-item NLL and Brier score of a confidence ``q`` as the probability of being correct.

    Examples
    --------
    >>> nll, brier = top_label_scores(np.array([0.8, 0.8]), np.array([True, False]))
    >>> nll.round(4).tolist(), brier.round(4).tolist()  # -log 0.8, -log 0.2; 0.2 ** 2, 0.8 ** 2
    ([0.2231, 1.6094], [0.04, 0.64])
    """
    y = correct.astype(float)
    qc = np.clip(q, _CLIP, 1 - _CLIP)
    return -(y * np.log(qc) + (1 - y) * np.log1p(-qc)), (q - y) ** 2


def _multiclass_scores(p: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    rows = np.arange(labels.size)
    onehot = np.zeros_like(p)
    onehot[rows, labels] = 1.0
    return -np.log(np.clip(p[rows, labels], _CLIP, 1.0)), np.sum((p - onehot) ** 2, axis=1)


def _summary(draws: np.ndarray, ci_prob: float) -> dict[str, Any]:
    lo, hi = hdi_from_draws(draws, ci_prob)
    return {"mean": float(np.mean(draws)), "hdi": [float(lo), float(hi)]}


def _side(confidence, correct, nll, brier, bins, n_draws, ci_prob, rng) -> tuple[dict, dict, dict]:
    from pbassess.metrics import bayesian_bootstrap

    b = pool_bins(confidence, correct, np.ones(confidence.size, bool), bins)
    ece_draws = beta_metric_draws(b, n_draws=n_draws, seed=rng)["ece"]
    point = {"ece": expected_calibration_error(confidence, correct, bins), "nll": float(nll.mean()),
             "brier": float(brier.mean())}
    post = {"ece": _summary(ece_draws, ci_prob),
            "nll": _summary(bayesian_bootstrap(nll, n_draws=n_draws, seed=rng), ci_prob),
            "brier": _summary(bayesian_bootstrap(brier, n_draws=n_draws, seed=rng), ci_prob)}
    return point, post, {"ece": ece_draws}


def paired_ece_draws(conf_before: Any, conf_after: Any, correct: Any, bins: int = 10, *, pseudocount: float = 2.0,
                     n_draws: int = 2000, seed: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Paired posterior draws of the ECE of the same items before and after a recalibration map.

    Each item falls in one equal-width bin before and one after; the items sharing both bins
    form a cell ``c`` whose accuracy has the posterior ``Beta(pc m_c + k_c, pc (1 - m_c) + n_c -
    k_c)``, centred on the mean ``m_c`` of the cell's before and after scores (so the prior
    favours neither map). Each draw of the cell accuracies gives both ECEs: ``ECE = (1/N) sum_b
    |sum_{c in b} n_c theta_c - S_b|`` with ``S_b`` the summed scores of bin b (before-bins for
    the first, after-bins for the second). Draw ``d`` of both therefore describes the same
    items' accuracies, and ``P(after < before)`` compares the two maps on them (independent
    before/after posteriors would add the noise of two draws of the same unknowns).

    Parameters
    ----------
    conf_before, conf_after : array_like, shape (N,)
        The items' confidences before and after the map.
    correct : array_like of bool, shape (N,)
    bins : int
        Equal-width bins (``"left"`` convention).
    pseudocount : float
        Prior strength ``pc``.
    n_draws : int
    seed : int or numpy.random.Generator, optional

    Returns
    -------
    (ndarray, ndarray)
        ECE draws before and after, each shape (n_draws,).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> c = rng.uniform(0.6, 0.95, 2000); y = rng.uniform(size=2000) < c - 0.08
    >>> before, after = paired_ece_draws(c, c - 0.03, y, n_draws=1000, seed=1)
    >>> bool(np.mean(after < before) > 0.99)
    True
    """
    from pbassess.calibration.binning import assign_bins, equal_width_edges
    from pbassess.counting import cell_counts

    sb = np.asarray(conf_before, dtype=float).ravel()
    sa = np.asarray(conf_after, dtype=float).ravel()
    y = np.asarray(correct, dtype=float).ravel()
    if not (sb.shape == sa.shape == y.shape):
        raise ConfigError("conf_before, conf_after and correct must have one value per item")
    edges = equal_width_edges(int(bins))
    ib, n_bins = assign_bins(sb, edges)
    ia, _ = assign_bins(sa, edges)
    cells, cell = np.unique(ib * n_bins + ia, return_inverse=True)
    cell = cell.ravel()
    n = cell_counts(cell, cells.size).astype(float)
    k = cell_counts(cell, cells.size, y)
    m = np.clip((cell_counts(cell, cells.size, sb) + cell_counts(cell, cells.size, sa)) / (2 * n), 1e-6, 1 - 1e-6)
    theta = as_generator(seed).beta(pseudocount * m + k, pseudocount * (1 - m) + n - k, size=(int(n_draws), cells.size))
    expected = theta * n  # expected correct items per cell, per draw

    def ece(bin_of_cell: np.ndarray, scores: np.ndarray, item_bin: np.ndarray) -> np.ndarray:
        summed = cell_counts(np.broadcast_to(bin_of_cell, expected.shape), n_bins, weights=expected)
        return np.abs(summed - cell_counts(item_bin, n_bins, scores)[None, :]).sum(axis=1) / sb.size

    return ece(cells // n_bins, sb, ib), ece(cells % n_bins, sa, ia)


def recalibrate(preds: Any, method: str, *, fit_fraction: float = 0.5, seed: Any = None, bins: int = 10,
                n_draws: int = 2000, ci_prob: float = CI_PROB, clip: float | None = None) -> dict[str, Any]:
    r"""Fit ``method`` on a random share of the labeled items and evaluate it on the others.

    Parameters
    ----------
    preds : Predictions (or anything :func:`pbassess.data.as_predictions` accepts)
    method : {"temperature", "platt", "histogram", "isotonic", "beta"}
    fit_fraction : float
        Share of the labeled items used for fitting.
    seed : int or numpy.random.Generator, optional
        Seeds the split and the posterior draws.
    bins : int
        Equal-width bins of the ECE (and of histogram binning).
    n_draws : int
        Monte Carlo posterior draws of each metric.
    ci_prob : float
    clip : float, optional
        Platt scaling's clipping of the scores into ``[clip, 1 - clip]``
        (:func:`~pbassess.calibration.recalibration.fit_platt`; default 1e-12); only with
        ``method="platt"``.

    Returns
    -------
    dict
        ``method``, ``params``, ``before`` and ``after`` (``ece``, ``nll``, ``brier``),
        ``posterior`` (``before``/``after``: ``{"mean", "hdi"}`` per quantity), ``p_improved``
        (``P(after < before)`` for ``ece``, ``nll``, ``brier``), ``n_fit``, ``n_eval``, ``scoring``.

    Notes
    -----
    The maps, fitted by maximum likelihood on the fitting split (:math:`p` a probability vector,
    :math:`s` the top-1 confidence, :math:`\sigma` the logistic function):

    .. math::

       \text{temperature: } \operatorname{softmax}(\log p / T), \qquad
       \text{platt: } \sigma\big(a \operatorname{logit} s + b\big), \qquad
       \text{beta: } \sigma\big(a \ln s - b \ln(1 - s) + c\big),\ a, b \ge 0,

    histogram binning maps each equal-width bin to its fitting items' accuracy and isotonic
    regression to the pool-adjacent-violators fit. On the held-out items, bin :math:`b` (share
    :math:`w_b`, mean score :math:`s_b`, :math:`y_b` correct of :math:`n_b`) has
    :math:`\theta_b \mid y \sim \mathrm{Beta}(2 s_b + y_b,\; 2 (1 - s_b) + n_b - y_b)` and
    :math:`\mathrm{ECE} = \sum_b w_b \lvert \theta_b - s_b \rvert`, before and after; NLL and Brier
    are averaged over Bayesian-bootstrap weights :math:`\omega \sim \mathrm{Dirichlet}(1, \dots, 1)`
    of the held-out items. ``p_improved`` is :math:`P(\text{after} < \text{before})` from paired
    draws: for NLL and Brier the Bayesian bootstrap of the per-item differences, for the ECE
    :func:`paired_ece_draws` (one draw of the held-out items' accuracies, cell by cell, read by
    both maps' bins), never independent before and after draws of the same items.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.uniform(0.5, 1.0, 600)
    >>> truth = np.where(rng.uniform(size=600) < conf - 0.2, "a", "b")
    >>> p = Predictions.from_top1(["a"] * 600, conf, truth, classes=["a", "b"])
    >>> out = recalibrate(p, "platt", seed=1, n_draws=500)
    >>> out["n_fit"], out["after"]["ece"] < out["before"]["ece"], out["p_improved"]["nll"] > 0.95
    (300, True, True)
    """
    from pbassess.data import as_predictions

    p = as_predictions(preds)
    p.require_labels("recalibration")
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise ConfigError(f"bins must be a positive whole number, got {bins!r}")
    if not 0 < ci_prob < 1:
        raise ConfigError(f"ci_prob must lie strictly between 0 and 1, got {ci_prob!r}")
    rng = as_generator(seed)
    probs = p.probs
    if method == "temperature" and probs is None:  # a property of the data: said before its size
        raise ConfigError("temperature scaling needs full probability vectors (this data has only top-1 scores)")
    fit_idx, eval_idx = split_labeled(np.flatnonzero(p.labeled), fit_fraction, rng)
    correct = p.correct.astype(bool)
    rec = fit_recalibrator(method, scores=p.confidence[fit_idx], outcomes=correct[fit_idx],
                           probs=None if probs is None else probs[fit_idx], labels=p.labels[fit_idx], bins=bins,
                           clip=clip)
    conf_before = p.confidence[eval_idx]
    y_eval = correct[eval_idx]
    rows = np.arange(eval_idx.size)
    if probs is not None:
        before_p = probs[eval_idx]
        after_p = rec.apply(before_p) if method == "temperature" else apply_top1(rec, before_p)
        pred = p.predicted[eval_idx]
        conf_after = after_p[rows, pred]
        nll_b, brier_b = _multiclass_scores(before_p, p.labels[eval_idx])
        nll_a, brier_a = _multiclass_scores(after_p, p.labels[eval_idx])
        scoring = "multiclass"
    else:
        conf_after = np.clip(rec.apply(conf_before), 0.0, 1.0)
        nll_b, brier_b = top_label_scores(conf_before, y_eval)
        nll_a, brier_a = top_label_scores(conf_after, y_eval)
        scoring = "top-label"
    before, post_b, raw_b = _side(conf_before, y_eval, nll_b, brier_b, bins, n_draws, ci_prob, rng)
    after, post_a, raw_a = _side(conf_after, y_eval, nll_a, brier_a, bins, n_draws, ci_prob, rng)
    from pbassess.metrics import bayesian_bootstrap

    paired_b, paired_a = paired_ece_draws(conf_before, conf_after, y_eval, bins, n_draws=n_draws, seed=rng)
    p_improved = {
        "ece": float(np.mean(paired_a < paired_b)),
        "nll": float(np.mean(bayesian_bootstrap(nll_a - nll_b, n_draws=n_draws, seed=rng) < 0)),
        "brier": float(np.mean(bayesian_bootstrap(brier_a - brier_b, n_draws=n_draws, seed=rng) < 0)),
    }
    return {"method": method, "params": rec.params, "before": before, "after": after,
            "posterior": {"before": post_b, "after": post_a}, "p_improved": p_improved,
            "n_fit": int(fit_idx.size), "n_eval": int(eval_idx.size), "scoring": scoring, "ci_prob": float(ci_prob)}
