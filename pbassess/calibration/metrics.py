"""Frequentist calibration metrics from labeled items: ECE, MCE, RMSCE, ACE, debiased, classwise.

Every function takes plain arrays. The binary/top-label functions take ``scores`` (predicted
probabilities of an event) and ``outcomes`` (1 where it happened); for the usual top-1
confidence calibration pass ``confidence`` and ``correct``. Binning follows the named
``convention`` of :mod:`pbassess.calibration.binning` (default ``"left"``: ``[e_b, e_b+1)``,
last bin closed, float64 ``numpy.linspace`` edges); ``convention="netcal"`` reproduces netcal's
ECE/MCE and ``convention="torchmetrics"`` torchmetrics' ``binary_calibration_error`` with
``norm="l1" | "max" | "l2"``.

With bins b of ``n_b`` items, accuracy ``acc_b`` and mean score ``conf_b`` (``w_b = n_b / N``):

- ECE ``= sum_b w_b |acc_b - conf_b|`` (Naeini et al. 2015; Guo et al. 2017),
- MCE ``= max_b |acc_b - conf_b|`` over non-empty bins,
- RMSCE ``= sqrt(sum_b w_b (acc_b - conf_b)^2)`` (torchmetrics ``norm="l2"``),
- ACE: the mean of ``|acc_r - conf_r|`` over ``R`` ranges of equal item count (Nixon et al. 2019,
  top-label form; netcal's "ACE" is a different quantity, the unweighted mean over non-empty
  equal-width bins: ``adaptive_calibration_error(..., equal_count=False)``),
- debiased ECE (Kumar, Liang and Ma 2019): L2 ``sqrt(max(0, sum_b w_b [(acc_b - conf_b)^2 -
  acc_b (1 - acc_b) / (n_b - 1)]))``; L1 ``2 ECE - sum_b w_b E|N(acc_b - conf_b, acc_b (1 -
  acc_b) / n_b)|``, the closed form of their normal-resampling debiasing with infinitely many
  resamples,
- classwise ECE (Kull et al. 2019) ``= (1/K) sum_j ECE(p_j, 1[y = j])`` over all K probability
  columns, one-vs-rest; marginal calibration error (Kumar et al. 2019) ``= ((1/K) sum_j
  sum_b w_jb |gap_jb|^p)^(1/p)`` (p = 2 by default),
- top-label ECE (Gupta and Ramdas 2021) ``= sum_k (N_k / N) ECE_k`` with ``ECE_k`` the ECE of
  the items predicted as class k (:func:`predicted_class_ece`, the *within-predicted-class*
  ECE that :func:`pbassess.assess.calibration.assess_calibration` reports as "classwise").
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import ndtr

from pbassess.calibration.binning import BinSums, bin_sums, equal_count_bins, resolve_edges
from pbassess.counting import cell_counts
from pbassess.counting.bins import bin_counts, class_bin_counts, top_label
from pbassess.errors import ConfigError

__all__ = [
    "adaptive_calibration_error", "bin_gaps", "binned", "classwise_ece", "debiased_ece", "expected_calibration_error",
    "folded_normal_mean",
    "marginal_calibration_error", "max_calibration_error", "mean_bin_gap", "predicted_class_ece",
    "rms_calibration_error",
    "top1_ece", "top_label_ece",
]


def binned(scores: Any, outcomes: Any, bins: Any = 10, *, binning: str = "uniform", convention: str = "left") -> BinSums:
    """Per-bin sums of (score, outcome) pairs for ``bins`` (a number or edges).

    Examples
    --------
    >>> binned([0.2, 0.9, 0.95], [0, 1, 1], 2).n.tolist()
    [1, 2]
    """
    s = np.asarray(scores, dtype=float).ravel()
    edges = resolve_edges(s, bins, binning)
    return bin_sums(s, outcomes, edges, convention)


def bin_gaps(b: BinSums, sample_threshold: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """``(w_b, |acc_b - conf_b|)`` of the bins holding at least ``sample_threshold`` items.

    Examples
    --------
    >>> from pbassess.calibration.binning import bin_sums
    >>> b = bin_sums([0.6, 0.7, 0.9, 0.95], [1, 0, 1, 1], [0.0, 0.5, 0.8, 1.0])
    >>> w, gap = bin_gaps(b)
    >>> w.tolist(), gap.round(3).tolist()  # 0.5-0.8: accuracy 0.5 vs confidence 0.65; 0.8-1: 1 vs 0.925
    ([0.5, 0.5], [0.15, 0.075])
    """
    keep = b.n >= max(int(sample_threshold), 1)
    total = b.n.sum()
    if total == 0:
        return np.zeros(0), np.zeros(0)
    n = b.n[keep]
    return n / total, np.abs(b.outcome_sum[keep] / n - b.score_sum[keep] / n)


def expected_calibration_error(scores: Any, outcomes: Any, bins: Any = 10, *, binning: str = "uniform",
                               convention: str = "left") -> float:
    """ECE ``sum_b (n_b / N) |acc_b - conf_b|``.

    Parameters
    ----------
    scores, outcomes : array_like, shape (N,)
        Predicted probabilities and 0/1 outcomes (top-1: confidence and correctness).
    bins : int or array_like
        Number of bins or explicit edges covering [0, 1].
    binning : {"uniform", "quantile"}
        Equal-width or equal-mass bins (ignored with explicit edges).
    convention : {"left", "right", "netcal", "torchmetrics"}
        Which bin a score on an edge falls in (:mod:`pbassess.calibration.binning`).

    Returns
    -------
    float

    Examples
    --------
    >>> round(expected_calibration_error([0.25, 0.25, 0.55, 0.75, 0.75], [0, 0, 1, 1, 1], 2), 4)
    0.29
    """
    w, gap = bin_gaps(binned(scores, outcomes, bins, binning=binning, convention=convention))
    return float(np.sum(w * gap)) if w.size else float("nan")


def max_calibration_error(scores: Any, outcomes: Any, bins: Any = 10, *, binning: str = "uniform",
                          convention: str = "left") -> float:
    """MCE ``max_b |acc_b - conf_b|`` over non-empty bins.

    Parameters
    ----------
    scores, outcomes : array_like, shape (N,)
        Predicted probabilities and 0/1 outcomes (top-1: confidence and correctness).
    bins : int or array_like
        Number of bins or explicit edges covering [0, 1].
    binning : {"uniform", "quantile"}
        Equal-width or equal-mass bins (ignored with explicit edges).
    convention : {"left", "right", "netcal", "torchmetrics"}
        Which bin a score on an edge falls in (:mod:`pbassess.calibration.binning`).

    Returns
    -------
    float

    Examples
    --------
    >>> round(max_calibration_error([0.25, 0.25, 0.55, 0.75, 0.75], [0, 0, 1, 1, 1], 2), 4)
    0.3167
    """
    _, gap = bin_gaps(binned(scores, outcomes, bins, binning=binning, convention=convention))
    return float(gap.max()) if gap.size else float("nan")


def rms_calibration_error(scores: Any, outcomes: Any, bins: Any = 10, *, binning: str = "uniform",
                          convention: str = "left") -> float:
    """RMS (L2) calibration error ``sqrt(sum_b (n_b / N) (acc_b - conf_b)^2)``.

    Parameters
    ----------
    scores, outcomes : array_like, shape (N,)
        Predicted probabilities and 0/1 outcomes (top-1: confidence and correctness).
    bins : int or array_like
        Number of bins or explicit edges covering [0, 1].
    binning : {"uniform", "quantile"}
        Equal-width or equal-mass bins (ignored with explicit edges).
    convention : {"left", "right", "netcal", "torchmetrics"}
        Which bin a score on an edge falls in (:mod:`pbassess.calibration.binning`).

    Returns
    -------
    float

    Examples
    --------
    >>> round(rms_calibration_error([0.25, 0.25, 0.55, 0.75, 0.75], [0, 0, 1, 1, 1], 2), 4)
    0.2918
    """
    w, gap = bin_gaps(binned(scores, outcomes, bins, binning=binning, convention=convention))
    return float(np.sqrt(np.sum(w * gap**2))) if w.size else float("nan")


def adaptive_calibration_error(scores: Any, outcomes: Any, n_bins: int = 15, *, equal_count: bool = True) -> float:
    """ACE: the unweighted mean of ``|acc_r - conf_r|`` over adaptive ranges.

    ``equal_count=True`` (Nixon et al. 2019, "Measuring Calibration in Deep Learning", top-label
    form; what ``ace`` means in pbassess's JSON): ``n_bins`` ranges of equal item count (0.0109 on
    SVHN with 15 ranges). ``equal_count=False``: netcal's "ACE", the mean over non-empty
    equal-width bins (:func:`mean_bin_gap`; 0.066 on SVHN with 15 bins).

    Parameters
    ----------
    scores, outcomes : array_like, shape (N,)
        Predicted probabilities and 0/1 outcomes (top-1: confidence and correctness).
    n_bins : int
        Number of ranges.
    equal_count : bool
        Ranges of equal item count (default), or netcal's non-empty equal-width bins.

    Returns
    -------
    float

    Examples
    --------
    >>> adaptive_calibration_error([0.6, 0.6, 0.9, 0.9], [1, 0, 1, 1], 2)
    0.1
    """
    s = np.asarray(scores, dtype=float).ravel()
    y = np.asarray(outcomes, dtype=float).ravel()
    if s.shape != y.shape:
        raise ConfigError(f"scores and outcomes have different lengths ({s.size} and {y.size})")
    if s.size == 0:
        return float("nan")
    if not equal_count:
        _, gap = bin_gaps(binned(s, y, n_bins, convention="netcal"))
        return float(gap.mean())
    idx = equal_count_bins(s, n_bins)
    n_ranges = int(idx.max()) + 1
    n = cell_counts(idx, n_ranges)
    gap = np.abs(cell_counts(idx, n_ranges, y) / n - cell_counts(idx, n_ranges, s) / n)
    return float(np.round(gap.mean(), 15))


def mean_bin_gap(scores: Any, outcomes: Any, n_bins: int = 15) -> float:
    """The unweighted mean of ``|acc_b - conf_b|`` over the non-empty equal-width bins.

    What netcal calls "ACE" (and what pbassess's JSON key ``ace`` held before issue 20): not
    Nixon et al.'s adaptive calibration error (:func:`adaptive_calibration_error`), whose ranges
    hold equal numbers of items. Every non-empty bin counts alike, however few items it holds,
    so sparse low-confidence bins dominate: 0.066 on SVHN with 15 bins, against an adaptive
    calibration error of 0.0109.

    Parameters
    ----------
    scores, outcomes : array_like, shape (N,)
        Predicted probabilities and 0/1 outcomes (top-1: confidence and correctness).
    n_bins : int
        Equal-width bins over [0, 1] (``convention="netcal"``).

    Returns
    -------
    float

    Examples
    --------
    >>> round(mean_bin_gap([0.6, 0.6, 0.9, 0.9, 0.95], [1, 0, 1, 1, 1], 4), 4)  # (|0.5 - 0.6| + |1 - 0.9167|) / 2
    0.0917
    """
    return adaptive_calibration_error(scores, outcomes, n_bins, equal_count=False)


def folded_normal_mean(mean: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """``E|X|`` for ``X ~ Normal(mean, sd)`` (``|mean|`` where sd = 0).

    Examples
    --------
    >>> folded_normal_mean(np.array([0.0, -0.3]), np.array([1.0, 0.0])).round(4).tolist()  # sqrt(2/pi), |-0.3|
    [0.7979, 0.3]
    """
    safe = np.where(sd > 0, sd, 1.0)
    z = mean / safe
    value = safe * np.sqrt(2 / np.pi) * np.exp(-0.5 * z**2) + mean * (1 - 2 * ndtr(-z))
    return np.where(sd > 0, value, np.abs(mean))


def debiased_ece(scores: Any, outcomes: Any, bins: Any = 10, *, p: int = 1, binning: str = "uniform",
                 convention: str = "left") -> float:
    """Debiased calibration error of Kumar, Liang and Ma (2019), L1 (``p=1``) or L2 (``p=2``).

    ``p=2``: ``sqrt(max(0, sum_b w_b [gap_b^2 - acc_b (1 - acc_b) / (n_b - 1)]))`` over bins with
    at least two items (the ``unbiased_l2_ce`` of their ``calibration`` package; torchmetrics'
    ``debias=True`` term is the same). ``p=1``: ``2 ECE - sum_b w_b E|N(acc_b - conf_b,
    acc_b (1 - acc_b) / n_b)|``, the closed form of their ``normal_debiased_ce``. May be
    negative for ``p=1`` (it is an estimate with the plug-in bias removed).

    Parameters
    ----------
    scores, outcomes : array_like, shape (N,)
        Predicted probabilities and 0/1 outcomes (top-1: confidence and correctness).
    bins : int or array_like
        Number of bins or explicit edges covering [0, 1].
    p : {1, 2}
        L1 or L2 calibration error.
    binning : {"uniform", "quantile"}
        Equal-width or equal-mass bins (ignored with explicit edges).
    convention : {"left", "right", "netcal", "torchmetrics"}
        Which bin a score on an edge falls in (:mod:`pbassess.calibration.binning`).

    Returns
    -------
    float
        The debiased estimate (may be negative for ``p=1``).

    Examples
    --------
    >>> round(debiased_ece([0.5] * 4 + [0.9] * 4, [1, 0, 1, 0, 1, 1, 1, 0], 2, p=2), 4)
    0.0
    """
    if p not in (1, 2):
        raise ConfigError(f"p must be 1 or 2, got {p!r}")
    b = binned(scores, outcomes, bins, binning=binning, convention=convention)
    total = b.n.sum()
    if total == 0:
        return float("nan")
    keep = b.n >= (2 if p == 2 else 1)
    n = b.n[keep]
    acc = b.outcome_sum[keep] / n
    signed = acc - b.score_sum[keep] / n
    w = n / total
    if p == 2:
        value = np.sum(w * (signed**2 - acc * (1 - acc) / (n - 1)))
        return float(np.sqrt(max(value, 0.0)))
    resampled = folded_normal_mean(signed, np.sqrt(acc * (1 - acc) / n))
    return float(2 * np.sum(w * np.abs(signed)) - np.sum(w * resampled))


def _check_probs(probs: Any, labels: Any) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(probs, dtype=float)
    y = np.asarray(labels).ravel()
    if p.ndim != 2:
        raise ConfigError("classwise metrics need the full (N, K) probability vectors")
    if y.shape[0] != p.shape[0]:
        raise ConfigError(f"probs has {p.shape[0]} rows but labels has {y.shape[0]}")
    if y.size and (y.min() < 0 or y.max() >= p.shape[1]):
        raise ConfigError(f"labels must be class indices in 0..{p.shape[1] - 1}")
    return p, y.astype(np.int64)


def _per_class_gaps(probs: Any, labels: Any, bins: Any, binning: str, convention: str):
    p, y = _check_probs(probs, labels)
    if convention == "left" and (np.ndim(bins) != 0 or binning == "uniform") and p.shape[1]:
        # shared edges: every column's bin counts in one pass (pbassess.counting.class_bin_counts)
        edges = resolve_edges(None, bins, binning)
        if p.size and not (p.min() >= 0 and p.max() <= 1):
            raise ConfigError("scores must be probabilities in [0, 1]")
        n, positives, score_sum = class_bin_counts(p, y, edges)
        for j in range(p.shape[1]):
            yield bin_gaps(BinSums(n=n[j], outcome_sum=positives[j], score_sum=score_sum[j], edges=edges,
                                   index=np.zeros(0, dtype=np.int64)))
        return
    for j in range(p.shape[1]):
        yield bin_gaps(binned(p[:, j], y == j, bins, binning=binning, convention=convention))


def classwise_ece(probs: Any, labels: Any, bins: Any = 10, *, binning: str = "uniform", convention: str = "left") -> float:
    """Classwise ECE (Kull et al. 2019): mean over the K columns of the one-vs-rest ECE.

    Parameters
    ----------
    probs : array_like, shape (N, K)
        Probability vectors.
    labels : array_like of int, shape (N,)
        True class indices.
    bins : int or array_like
        Number of bins or explicit edges covering [0, 1].
    binning : {"uniform", "quantile"}
        Equal-width or equal-mass bins (ignored with explicit edges).
    convention : {"left", "right", "netcal", "torchmetrics"}
        Which bin a score on an edge falls in (:mod:`pbassess.calibration.binning`).

    Returns
    -------
    float

    Examples
    --------
    >>> p = [[0.8, 0.2], [0.6, 0.4], [0.3, 0.7]]
    >>> round(classwise_ece(p, [0, 1, 1], 2), 4)
    0.2333
    """
    eces = [float(np.sum(w * g)) for w, g in _per_class_gaps(probs, labels, bins, binning, convention)]
    return float(np.mean(eces)) if eces else float("nan")


def marginal_calibration_error(probs: Any, labels: Any, bins: Any = 10, *, p: int = 2, binning: str = "uniform",
                               convention: str = "left") -> float:
    """Marginal calibration error (Kumar et al. 2019): ``((1/K) sum_j sum_b w_jb |gap_jb|^p)^(1/p)``.

    Parameters
    ----------
    probs : array_like, shape (N, K)
        Probability vectors.
    labels : array_like of int, shape (N,)
        True class indices.
    bins : int or array_like
        Number of bins or explicit edges covering [0, 1].
    p : int
        The norm's exponent.
    binning : {"uniform", "quantile"}
        Equal-width or equal-mass bins (ignored with explicit edges).
    convention : {"left", "right", "netcal", "torchmetrics"}
        Which bin a score on an edge falls in (:mod:`pbassess.calibration.binning`).

    Returns
    -------
    float

    Examples
    --------
    >>> round(marginal_calibration_error([[0.8, 0.2], [0.6, 0.4], [0.3, 0.7]], [0, 1, 1], 2, p=1), 4)
    0.2333
    """
    if p < 1:
        raise ConfigError(f"p must be at least 1, got {p!r}")
    terms = [float(np.sum(w * g**p)) for w, g in _per_class_gaps(probs, labels, bins, binning, convention)]
    return float(np.mean(terms) ** (1.0 / p)) if terms else float("nan")


def predicted_class_ece(predicted: Any, confidence: Any, correct: Any, n_classes: int, bins: Any = 10, *,
                        binning: str = "uniform", convention: str = "left") -> tuple[np.ndarray, np.ndarray]:
    """Within-predicted-class ECE: the ECE of the items predicted as each class, and their counts.

    Returns ``(ece_k, n_k)``, ECE NaN for classes never predicted. Edges are shared by all
    classes (equal-mass edges come from all confidences).

    Parameters
    ----------
    predicted : array_like of int, shape (N,)
        Predicted class index of each item.
    confidence : array_like, shape (N,)
        Top-1 probability.
    correct : array_like of bool, shape (N,)
    n_classes : int
        Number of classes K.
    bins : int or array_like
        Number of bins or explicit edges covering [0, 1].
    binning : {"uniform", "quantile"}
        Equal-width or equal-mass bins (ignored with explicit edges).
    convention : {"left", "right", "netcal", "torchmetrics"}
        Which bin a score on an edge falls in (:mod:`pbassess.calibration.binning`).

    Returns
    -------
    ece_k : ndarray, shape (K,)
        ECE of the items predicted as each class (NaN for classes never predicted).
    n_k : ndarray of int, shape (K,)
        Items predicted as each class.

    Examples
    --------
    >>> ece, n = predicted_class_ece([0, 0, 1], [0.9, 0.9, 0.6], [1, 0, 1], 2, 2)
    >>> ece.round(2).tolist(), n.tolist()
    ([0.4, 0.4], [2, 1])
    """
    k = np.asarray(predicted, dtype=np.int64).ravel()
    s = np.asarray(confidence, dtype=float).ravel()
    y = np.asarray(correct, dtype=float).ravel()
    edges = resolve_edges(s, bins, binning)
    n_classes = int(n_classes)
    out = np.full(n_classes, np.nan)
    if k.size and (k.min() < 0 or k.max() >= n_classes):  # items of no class take no part
        keep = (k >= 0) & (k < n_classes)
        k, s, y = k[keep], s[keep], y[keep]
    if k.size == 0:
        return out, np.zeros(n_classes, dtype=np.int64)
    # one pass: the (predicted class, bin) cell of every item, then bincounts (each cell sums its
    # items in item order, exactly as binning each class's items on its own)
    b = bin_sums(s, y, edges, convention)
    n_bins = b.n.size
    code = k * n_bins + b.index
    scores = s.astype(np.float32).astype(float) if convention == "torchmetrics" else s
    n, correct_sum, score_sum = (a.reshape(n_classes, n_bins) for a in bin_counts(code, n_classes * n_bins, y, scores))
    counts = n.sum(axis=1).astype(np.int64)
    for c in np.flatnonzero(counts):
        w, gap = bin_gaps(BinSums(n=n[c], outcome_sum=correct_sum[c], score_sum=score_sum[c], edges=b.edges,
                                  index=np.zeros(0, dtype=np.int64)))
        out[c] = np.sum(w * gap)
    return out, counts


def top_label_ece(predicted: Any, confidence: Any, correct: Any, n_classes: int, bins: Any = 10, *,
                  binning: str = "uniform", convention: str = "left") -> float:
    """Top-label ECE (Gupta and Ramdas 2021): ``sum_k (N_k / N) ECE_k`` over predicted classes.

    Parameters
    ----------
    predicted : array_like of int, shape (N,)
        Predicted class index of each item.
    confidence : array_like, shape (N,)
        Top-1 probability.
    correct : array_like of bool, shape (N,)
    n_classes : int
        Number of classes K.
    bins : int or array_like
        Number of bins or explicit edges covering [0, 1].
    binning : {"uniform", "quantile"}
        Equal-width or equal-mass bins (ignored with explicit edges).
    convention : {"left", "right", "netcal", "torchmetrics"}
        Which bin a score on an edge falls in (:mod:`pbassess.calibration.binning`).

    Returns
    -------
    float

    Examples
    --------
    >>> round(top_label_ece([0, 0, 1], [0.9, 0.9, 0.6], [1, 0, 1], 2, 2), 4)
    0.4
    """
    ece, n = predicted_class_ece(predicted, confidence, correct, n_classes, bins, binning=binning,
                                 convention=convention)
    if n.sum() == 0:
        return float("nan")
    return float(np.nansum(ece * n) / n.sum())


def top1_ece(probs: Any, labels: Any, bins: Any = 10, *, binning: str = "uniform", convention: str = "left") -> float:
    """Top-1 (confidence) ECE from full probability vectors: the ECE of ``max_j p_j`` against ``argmax == label``.

    The predicted class and confidence come from one fused pass over the ``(N, K)`` matrix
    (:func:`pbassess.counting.bins.top_label`, multithreaded numba for large inputs), then
    :func:`expected_calibration_error` (torchmetrics' ``multiclass_calibration_error`` computes
    the same quantity, with its own bin convention: ``convention="torchmetrics"``).

    Parameters
    ----------
    probs : array_like, shape (N, K)
        Probability vectors.
    labels : array_like of int, shape (N,)
        True class indices.
    bins, binning, convention
        As in :func:`expected_calibration_error`.

    Returns
    -------
    float

    Examples
    --------
    >>> p = [[0.9, 0.1], [0.8, 0.2], [0.3, 0.7], [0.4, 0.6]]
    >>> round(top1_ece(p, [0, 1, 1, 1], 2), 4)  # bin [0.5, 1]: accuracy 0.75, mean confidence 0.75
    0.0
    """
    p, y = _check_probs(probs, labels)
    predicted, confidence = top_label(p)
    return expected_calibration_error(confidence, predicted == y, bins, binning=binning, convention=convention)
