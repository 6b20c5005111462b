"""Dataset-shift metrics of one set of predictions, after Ovadia et al. (2019).

Plain NumPy array functions over a probability matrix ``probs`` (N, K) and integer labels
(N,); the xarray face is :mod:`pbassess.shift.table`. Conventions follow the paper's code
(``uq_benchmark_2019/metrics_lib.py`` in google-research):

* NLL softens the probabilities first, ``(1 - eps) p + eps / K`` with ``eps = 1e-8``
  (``soften_probabilities``), so a zero probability of the true class costs -log(1e-9) = 20.7
  (K = 10) instead of infinity.
* The Brier score here is the mean squared distance between the probability vector and the
  one-hot label, ``mean_i ||p_i - e_{y_i}||^2`` (0 for a perfect forecast, at most 2). Their
  ``brier_scores`` report ``sum_k p_k^2 - 2 p_y`` = this minus 1; ``brier_score(...,
  minus_one=True)`` gives their number.
* The Brier decomposition partitions the items by predicted class (their ``M_k``); with the
  label distribution ``q_k`` of the items predicted k (weight ``w_k``), and the overall label
  distribution ``pbar``:

  - uncertainty = ``1 - sum_j pbar_j^2`` (their code reports ``-sum_j pbar_j^2``, i.e. minus 1),
  - resolution = ``sum_k w_k ||q_k - pbar||^2``,
  - reliability = ``mean_i ||p_i - q_{k(i)}||^2``,
  - cross = ``(2/N) sum_i <p_i - q_{k(i)}, q_{k(i)} - e_{y_i}>``,

  and ``brier = reliability - resolution + uncertainty + cross`` holds exactly (expand
  ``||p - e||^2 = ||p - q||^2 + ||q - e||^2 + 2 <p - q, q - e>`` and use the variance
  decomposition of ``1 - ||q_k||^2`` across cells). Their decomposition has no cross term and
  therefore does not add up to the Brier score; the cross term is the within-cell covariance of
  the forecasts with the outcomes and vanishes when forecasts are constant within a cell.
  Their resolution line, ``tf.square(tf.expand_dims(pbar, 1) - dist_mean)``, pairs ``pbar_k``
  with ``q_kj`` (the wrong axis; a perfect forecast then gets resolution != uncertainty); ours
  equals theirs with ``pbar_j`` (tests/shift/test_metrics.py shows both).
* Accuracy and count versus confidence count the items with confidence ``>= threshold`` (their
  ``compute_accuracies_at_confidences``), thresholds 0, 0.1, ..., 0.9 by default.
* ECE is the top-label binned ECE with the project's bins ``[lo, hi)`` (the last bin closed);
  their code bins ``(lo, hi]``; the two agree unless a confidence lies exactly on an inner edge.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.calibration.metrics import expected_calibration_error  # noqa: E402  (the one ECE; re-exported)
from pbassess.counting import cell_counts
from pbassess.errors import DataError

__all__ = [
    "CONFIDENCE_THRESHOLDS",
    "SOFTEN_EPSILON",
    "accuracy_vs_confidence",
    "brier_decomposition",
    "brier_score",
    "expected_calibration_error",
    "negative_log_likelihood",
    "ood_auroc",
    "per_item_stats",
    "predictive_entropy",
    "soften_probabilities",
]

#: The softening of the paper's code before logarithms.
SOFTEN_EPSILON: float = 1e-8

#: Confidence thresholds of the accuracy/count-versus-confidence curves (0, 0.1, ..., 0.9).
CONFIDENCE_THRESHOLDS: np.ndarray = np.round(np.arange(10) / 10, 1)


def _check(probs: Any, labels: Any = None) -> tuple[np.ndarray, np.ndarray | None]:
    p = np.asarray(probs, dtype=float)
    if p.ndim != 2 or p.shape[1] < 2:
        raise DataError(f"probabilities must be a matrix with one column per class, got shape {p.shape}")
    if labels is None:
        return p, None
    y = np.asarray(labels).astype(np.int64).ravel()
    if y.shape[0] != p.shape[0]:
        raise DataError(f"{y.shape[0]} labels for {p.shape[0]} probability rows")
    if y.size and (y.min() < 0 or y.max() >= p.shape[1]):
        raise DataError(f"labels must lie in 0..{p.shape[1] - 1} (unlabeled items must be removed first)")
    return p, y


def soften_probabilities(probs: Any, epsilon: float = SOFTEN_EPSILON) -> np.ndarray:
    """``(1 - epsilon) * probs + epsilon / K``, as ``metrics_lib.soften_probabilities``.

    Parameters
    ----------
    probs : array_like, shape (N, K)
        Probability vectors.
    epsilon : float

    Returns
    -------
    ndarray, shape (N, K)

    Examples
    --------
    >>> soften_probabilities([[1.0, 0.0]], epsilon=0.1).round(6).tolist()
    [[0.95, 0.05]]
    """
    p = np.asarray(probs, dtype=float)
    return epsilon / p.shape[-1] + (1.0 - epsilon) * p


def predictive_entropy(probs: Any, epsilon: float = SOFTEN_EPSILON) -> np.ndarray:
    """Entropy ``-sum_k p_k log p_k`` (nats) of each softened probability vector.

    Parameters
    ----------
    probs : array_like, shape (N, K)
        Probability vectors.
    epsilon : float
        Softening ``(1 - epsilon) p + epsilon / K`` applied first (:func:`soften_probabilities`).

    Returns
    -------
    ndarray, shape (N,)

    Examples
    --------
    >>> predictive_entropy([[0.5, 0.5], [1.0, 0.0]]).round(4).tolist()
    [0.6931, 0.0]
    """
    p = soften_probabilities(probs, epsilon)
    return -np.sum(p * np.log(p), axis=-1)


def per_item_stats(probs: Any, labels: Any, epsilon: float = SOFTEN_EPSILON) -> dict[str, np.ndarray]:
    """Per-item statistics whose means are the shift metrics.

    Parameters
    ----------
    probs : array_like, shape (N, K)
        Probability vectors.
    labels : array_like of int, shape (N,)
        True class indices.
    epsilon : float
        Softening ``(1 - epsilon) p + epsilon / K`` applied first (:func:`soften_probabilities`).

    Returns
    -------
    dict of arrays, shape (N,)
        ``correct`` (top-1 prediction equals the label), ``confidence`` (top-1 probability),
        ``nll`` (-log of the softened probability of the label), ``brier`` (squared distance to
        the one-hot label) and ``entropy`` (of the softened vector).

    Examples
    --------
    >>> s = per_item_stats([[0.8, 0.2], [0.4, 0.6]], [0, 0])
    >>> s["correct"].tolist(), s["brier"].round(2).tolist(), s["nll"].round(4).tolist()
    ([True, False], [0.08, 0.72], [0.2231, 0.9163])
    """
    p, y = _check(probs, labels)
    rows = np.arange(p.shape[0])
    p_label = p[rows, y]
    return {
        "correct": p.argmax(axis=1) == y,
        "confidence": p.max(axis=1),
        "nll": -np.log(soften_probabilities(p, epsilon)[rows, y]),
        "brier": np.sum(p * p, axis=1) - 2.0 * p_label + 1.0,
        "entropy": predictive_entropy(p, epsilon),
    }


def negative_log_likelihood(probs: Any, labels: Any, epsilon: float = SOFTEN_EPSILON) -> float:
    """Mean NLL of the softened probabilities of the labels.

    Parameters
    ----------
    probs : array_like, shape (N, K)
        Probability vectors.
    labels : array_like of int, shape (N,)
        True class indices.
    epsilon : float
        Softening ``(1 - epsilon) p + epsilon / K`` applied first (:func:`soften_probabilities`).

    Returns
    -------
    float

    Examples
    --------
    >>> round(negative_log_likelihood([[0.5, 0.5], [0.9, 0.1]], [0, 0]), 4)
    0.3993
    """
    return float(per_item_stats(probs, labels, epsilon)["nll"].mean())


def brier_score(probs: Any, labels: Any, *, minus_one: bool = False) -> float:
    """Mean squared distance of the probability vectors to the one-hot labels.

    Parameters
    ----------
    minus_one : bool, default False
        Report ``mean(sum_k p_k^2 - 2 p_y)``, the score minus 1, as the paper's code does.

    Returns
    -------
    float

    Examples
    --------
    >>> brier_score([[1.0, 0.0], [0.5, 0.5]], [0, 0]), brier_score([[1.0, 0.0]], [0], minus_one=True)
    (0.25, -1.0)
    """
    value = float(per_item_stats(probs, labels)["brier"].mean())
    return value - 1.0 if minus_one else value


def brier_decomposition(probs: Any, labels: Any) -> dict[str, float]:
    """Brier score = reliability - resolution + uncertainty + cross, cells = predicted class.

    See the module docstring for the terms. ``uncertainty_minus_one`` is the uncertainty as
    the paper's code reports it (``-sum pbar^2``).

    Parameters
    ----------
    probs : array_like, shape (N, K)
        Probability vectors.
    labels : array_like of int, shape (N,)
        True class indices.

    Returns
    -------
    dict of str to float
        ``brier``, ``reliability``, ``resolution``, ``uncertainty``, ``cross`` and
        ``uncertainty_minus_one``.

    Examples
    --------
    >>> d = brier_decomposition([[0.9, 0.1], [0.6, 0.4], [0.2, 0.8]], [0, 1, 1])
    >>> total = d["reliability"] - d["resolution"] + d["uncertainty"] + d["cross"]
    >>> bool(abs(total - d["brier"]) < 1e-12), round(d["uncertainty"], 4)
    (True, 0.4444)
    """
    p, y = _check(probs, labels)
    n, k = p.shape
    if n == 0:
        raise DataError("the Brier decomposition needs at least one labeled item")
    onehot = np.zeros_like(p)
    onehot[np.arange(n), y] = 1.0
    cell = p.argmax(axis=1)
    counts = cell_counts(cell, k).astype(float)
    # label_sums[c, j]: items of cell c with label j (one batch row per label, transposed back)
    label_sums = cell_counts(np.broadcast_to(cell, (k, n)), k, onehot.T).T
    q = label_sums / np.maximum(counts, 1.0)[:, None]  # label distribution per cell
    weight = counts / n
    pbar = onehot.mean(axis=0)
    q_item = q[cell]
    brier = float(np.mean(np.sum((p - onehot) ** 2, axis=1)))
    uncertainty = float(1.0 - np.sum(pbar**2))
    return {
        "brier": brier,
        "reliability": float(np.mean(np.sum((p - q_item) ** 2, axis=1))),
        "resolution": float(np.sum(weight * np.sum((q - pbar) ** 2, axis=1))),
        "uncertainty": uncertainty,
        "uncertainty_minus_one": uncertainty - 1.0,
        "cross": float(2.0 * np.mean(np.sum((p - q_item) * (q_item - onehot), axis=1))),
    }


def accuracy_vs_confidence(confidence: Any, correct: Any, thresholds: Any = CONFIDENCE_THRESHOLDS
                           ) -> tuple[np.ndarray, np.ndarray]:
    """Accuracy and count of the items with confidence ``>= t`` for each threshold t.

    Parameters
    ----------
    confidence : array_like, shape (N,)
        Top-1 probabilities.
    correct : array_like of bool, shape (N,)
    thresholds : array_like, shape (T,)
        Confidence thresholds.

    Returns
    -------
    accuracy, count : ndarray, shape (T,)
        Accuracy is NaN where no item reaches the threshold.

    Examples
    --------
    >>> acc, cnt = accuracy_vs_confidence([0.3, 0.6, 0.9], [0, 1, 1], [0.0, 0.5, 0.95])
    >>> acc.round(3).tolist(), cnt.tolist()
    ([0.667, 1.0, nan], [3, 2, 0])
    """
    conf = np.asarray(confidence, dtype=float).ravel()
    ok = np.asarray(correct, dtype=float).ravel()
    t = np.asarray(thresholds, dtype=float).ravel()
    above = conf[None, :] >= t[:, None]
    count = above.sum(axis=1)
    hits = (above * ok[None, :]).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = np.where(count > 0, hits / np.maximum(count, 1), np.nan)
    return accuracy, count


def ood_auroc(score_in: Any, score_out: Any) -> float:
    """AUROC of telling in-distribution from OOD items by a score higher for in-distribution.

    The Mann-Whitney probability ``P(score_in > score_out) + P(tie) / 2`` (equal to
    ``sklearn.metrics.roc_auc_score`` with in-distribution items as positives). Pass the
    confidence, or the negated entropy.

    Parameters
    ----------
    score_in : array_like
        Scores of the in-distribution items.
    score_out : array_like
        Scores of the OOD items.

    Returns
    -------
    float

    Examples
    --------
    >>> round(ood_auroc([0.9, 0.8, 0.5], [0.5, 0.4]), 4)   # (2 + 2 + 0.5 + 1) / 6
    0.9167
    """
    from scipy.stats import rankdata

    a = np.asarray(score_in, dtype=float).ravel()
    b = np.asarray(score_out, dtype=float).ravel()
    if a.size == 0 or b.size == 0:
        raise DataError("the OOD AUROC needs in-distribution and out-of-distribution items")
    ranks = rankdata(np.concatenate([a, b]))
    u = ranks[: a.size].sum() - a.size * (a.size + 1) / 2.0
    return float(u / (a.size * b.size))
