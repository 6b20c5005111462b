"""Recalibration maps fitted on labeled items: temperature, Platt, histogram binning, isotonic, beta.

Each ``fit_*`` function returns a :class:`Recalibrator` whose ``params`` are plain numbers and
whose ``apply`` maps scores to recalibrated scores:

- temperature scaling (Guo et al. 2017), full probability vectors: ``softmax(log p / T)``,
  ``T`` minimising the NLL (bounded 1-D search over ``log T``);
- Platt scaling: ``sigma(a logit(s) + b)``, an unregularised logistic regression of the outcome
  on ``logit(s)`` (Newton's method; scikit-learn's ``LogisticRegression(penalty=None)`` gives
  the same coefficients);
- histogram binning (Zadrozny and Elkan 2001): the labeled accuracy of each equal-width bin
  (the bin's mean score where it holds no fitting item);
- isotonic regression (pool-adjacent-violators, scikit-learn's ``IsotonicRegression`` with
  ``out_of_bounds="clip"``);
- beta calibration (Kull, Silva Filho and Flach 2017): ``sigma(a ln s - b ln(1 - s) + c)`` with
  ``a, b >= 0`` (refit without the offending term when one is negative), as in ``betacal``.

All but temperature scaling act on a score: top-1 confidence (top-label form) or a binary
score. :func:`apply_top1` puts a recalibrated top-1 confidence back into a full probability
vector, rescaling the other classes so the row still sums to one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import expit, log_softmax, logit, softmax

from pbassess.calibration.methods import METHODS
from pbassess.counting import cell_counts
from pbassess.errors import ConfigError

__all__ = [
    "METHODS", "PLATT_CLIP", "Recalibrator", "apply_top1", "fit_beta", "fit_histogram", "fit_isotonic", "fit_platt",
    "fit_recalibrator", "fit_temperature", "logistic_fit",
]


_CLIP = 1e-12
#: Default clipping of Platt scaling's scores: ``logit`` of ``[clip, 1 - clip]`` (see :func:`fit_platt`).
PLATT_CLIP: float = 1e-12


@dataclass
class Recalibrator:
    """A fitted recalibration map: ``method``, its ``params`` and a function of the scores.

    Examples
    --------
    >>> r = fit_recalibrator("histogram", scores=[0.6, 0.7, 0.8, 0.9] * 10, outcomes=[0, 1, 1, 1] * 10)
    >>> isinstance(r, Recalibrator), r.method, callable(r.function)
    (True, 'histogram', True)
    """

    method: str
    params: dict[str, Any]
    function: Any = field(repr=False)

    def apply(self, scores: Any) -> np.ndarray:
        """Recalibrated scores (full vectors for temperature scaling, else scores in [0, 1])."""
        return self.function(np.asarray(scores, dtype=float))


def _scores_outcomes(scores: Any, outcomes: Any) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(scores, dtype=float).ravel()
    y = np.asarray(outcomes, dtype=float).ravel()
    if s.shape != y.shape:
        raise ConfigError(f"scores and outcomes have different lengths ({s.size} and {y.size})")
    if s.size < 2:
        raise ConfigError("recalibration needs at least two labeled items to fit on")
    if not np.all(np.isfinite(s)) or s.min() < 0 or s.max() > 1:
        raise ConfigError("scores must be probabilities in [0, 1]")
    return s, y


def logistic_fit(features: Any, outcomes: Any, *, max_iter: int = 100, tol: float = 1e-10) -> np.ndarray:
    """Unregularised logistic regression by Newton's method: coefficients then intercept.

    Examples
    --------
    >>> x = np.array([[-2.0], [-1.0], [0.0], [1.0], [2.0], [0.5]])
    >>> y = np.array([0, 0, 1, 1, 1, 0])
    >>> logistic_fit(x, y).round(3).tolist()
    [1.977, -0.322]
    """
    x = np.column_stack([np.asarray(features, dtype=float), np.ones(len(outcomes))])
    y = np.asarray(outcomes, dtype=float)
    w = np.zeros(x.shape[1])
    for _ in range(max_iter):
        p = expit(x @ w)
        grad = x.T @ (y - p)
        hess = (x * (p * (1 - p))[:, None]).T @ x + 1e-12 * np.eye(x.shape[1])
        step = np.linalg.solve(hess, grad)
        w += step
        if np.max(np.abs(step)) < tol:
            break
    return w


def fit_temperature(probs: Any, labels: Any, *, bounds: tuple[float, float] = (0.05, 20.0)) -> Recalibrator:
    """Temperature scaling: ``T`` minimising the NLL of ``softmax(log p / T)``.

    Parameters
    ----------
    probs : array_like, shape (N, K)
        Probability vectors.
    labels : array_like of int, shape (N,)
        True class indices.
    bounds : (float, float)
        Search interval of ``T``.

    Returns
    -------
    Recalibrator
        ``method``, ``params`` and the fitted map (``apply(scores)``).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> logits = rng.normal(size=(2000, 3)) * 3
    >>> y = np.array([rng.choice(3, p=softmax(row / 3)) for row in logits])
    >>> round(fit_temperature(softmax(logits, axis=1), y).params["temperature"], 1)
    3.0
    """
    p = np.asarray(probs, dtype=float)
    y = np.asarray(labels).astype(np.int64).ravel()
    if p.ndim != 2 or p.shape[0] != y.size:
        raise ConfigError("temperature scaling needs full (N, K) probability vectors and one label per row")
    if y.size < 2:
        raise ConfigError("recalibration needs at least two labeled items to fit on")
    log_p = np.log(np.clip(p, _CLIP, 1.0))
    rows = np.arange(y.size)

    def nll(log_t: float) -> float:
        return float(-np.mean(log_softmax(log_p / np.exp(log_t), axis=1)[rows, y]))

    res = minimize_scalar(nll, bounds=(np.log(bounds[0]), np.log(bounds[1])), method="bounded",
                          options={"xatol": 1e-8})
    t = float(np.exp(res.x))
    return Recalibrator("temperature", {"temperature": t},
                        lambda q: softmax(np.log(np.clip(q, _CLIP, 1.0)) / t, axis=-1))


def fit_platt(scores: Any, outcomes: Any, *, clip: float = PLATT_CLIP) -> Recalibrator:
    """Platt scaling ``sigma(a logit(s) + b)`` by unregularised logistic regression on ``logit(s)``.

    Scores are clipped into ``[clip, 1 - clip]`` before the logit, in the fit and in the map.
    Where scores equal 1.0 (or 0) the clip sets their logit, ``log((1 - clip) / clip)``, and so
    their leverage on the slope: CIFAR-100's ResNet-110 (1,134 of 10,000 confidences printed as
    1.0000) gives ``a = 0.620`` with the default 1e-12 (logit 27.6: a 1.0 taken at face value),
    0.650 with ``clip=5e-5`` (half the data's rounding step: a 1.0000 read as 0.99995) and
    0.655 with those items left out (all 10,000 items; on ``pbassess recalibrate``'s half split
    with seed 0, 0.584 and 0.634: see docs/calibration.md).

    Parameters
    ----------
    scores : array_like, shape (N,)
        Top-1 scores (or probabilities of the positive class).
    outcomes : array_like of {0, 1}, shape (N,)
    clip : float
        Scores are clipped into ``[clip, 1 - clip]`` (0 < clip < 0.5; default 1e-12).

    Returns
    -------
    Recalibrator
        ``method``, ``params`` and the fitted map (``apply(scores)``).

    Examples
    --------
    >>> r = fit_platt([0.6, 0.7, 0.8, 0.9, 0.95, 0.99], [0, 1, 0, 1, 1, 1])
    >>> sorted(r.params)
    ['a', 'b']
    """
    s, y = _scores_outcomes(scores, outcomes)
    clip = float(clip)
    if not 0 < clip < 0.5:
        raise ConfigError(f"the Platt clip must lie strictly between 0 and 0.5, got {clip!r}")
    z = logit(np.clip(s, clip, 1 - clip))
    a, b = logistic_fit(z[:, None], y)
    return Recalibrator("platt", {"a": float(a), "b": float(b)},
                        lambda q: expit(a * logit(np.clip(q, clip, 1 - clip)) + b))


def fit_histogram(scores: Any, outcomes: Any, *, bins: int = 10) -> Recalibrator:
    """Histogram binning: each equal-width bin maps to its fitting items' accuracy.

    Bins without fitting items keep their mean score (the bin centre). Bins are ``[e_b, e_b+1)``,
    the last one closed.

    Parameters
    ----------
    scores : array_like, shape (N,)
        Top-1 scores (or probabilities of the positive class).
    outcomes : array_like of {0, 1}, shape (N,)
    bins : int
        Equal-width bins over [0, 1].

    Returns
    -------
    Recalibrator
        ``method``, ``params`` and the fitted map (``apply(scores)``).

    Examples
    --------
    >>> fit_histogram([0.1, 0.2, 0.8, 0.9], [0, 1, 1, 1], bins=2).apply([0.15, 0.85]).tolist()
    [0.5, 1.0]
    """
    from pbassess.calibration.binning import assign_bins, equal_width_edges

    s, y = _scores_outcomes(scores, outcomes)
    edges = equal_width_edges(bins)
    idx, n_bins = assign_bins(s, edges)
    n = cell_counts(idx, n_bins)
    k = cell_counts(idx, n_bins, y)
    centre = (edges[:-1] + edges[1:]) / 2
    value = np.where(n > 0, k / np.maximum(n, 1), centre)
    return Recalibrator("histogram", {"edges": edges.tolist(), "values": value.tolist(), "n": n.tolist()},
                        lambda q: value[assign_bins(q, edges)[0]])


def _pava(y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted pool-adjacent-violators: the non-decreasing fit to ``y`` (sorted inputs)."""
    values, weights, sizes = [], [], []
    for yi, wi in zip(y, w, strict=True):
        values.append(yi)
        weights.append(wi)
        sizes.append(1)
        while len(values) > 1 and values[-2] >= values[-1]:
            w_new = weights[-2] + weights[-1]
            v_new = (values[-2] * weights[-2] + values[-1] * weights[-1]) / w_new
            s_new = sizes[-2] + sizes[-1]
            del values[-1], weights[-1], sizes[-1]
            values[-1], weights[-1], sizes[-1] = v_new, w_new, s_new
    return np.repeat(values, sizes)


def fit_isotonic(scores: Any, outcomes: Any) -> Recalibrator:
    """Isotonic regression (PAVA over the distinct scores; linear interpolation, clipped ends).

    Parameters
    ----------
    scores : array_like, shape (N,)
        Top-1 scores (or probabilities of the positive class).
    outcomes : array_like of {0, 1}, shape (N,)

    Returns
    -------
    Recalibrator
        ``method``, ``params`` and the fitted map (``apply(scores)``).

    Examples
    --------
    >>> fit_isotonic([0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1]).apply([0.1, 0.25, 0.4]).tolist()
    [0.0, 0.5, 1.0]
    """
    s, y = _scores_outcomes(scores, outcomes)
    u, inv = np.unique(s, return_inverse=True)
    w = cell_counts(inv, u.size).astype(float)
    mean = cell_counts(inv, u.size, y) / w
    fitted = _pava(mean, w)
    keep = np.concatenate([[True], np.diff(fitted) != 0, [True]])
    keep = keep[:-1] | np.concatenate([keep[1:-1], [True]])  # the ends of every flat step
    x_knots, y_knots = u[keep], fitted[keep]
    return Recalibrator("isotonic", {"x": x_knots.tolist(), "y": y_knots.tolist()},
                        lambda q: np.interp(q, x_knots, y_knots))


def fit_beta(scores: Any, outcomes: Any) -> Recalibrator:
    """Beta calibration ``sigma(a ln s - b ln(1 - s) + c)``, ``a, b >= 0`` (the ``betacal`` "abm" model).

    Parameters
    ----------
    scores : array_like, shape (N,)
        Top-1 scores (or probabilities of the positive class).
    outcomes : array_like of {0, 1}, shape (N,)

    Returns
    -------
    Recalibrator
        ``method``, ``params`` and the fitted map (``apply(scores)``).

    Examples
    --------
    >>> r = fit_beta([0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.65, 0.85], [0, 1, 0, 1, 1, 1, 1, 1])
    >>> sorted(r.params)
    ['a', 'b', 'c']
    """
    s, y = _scores_outcomes(scores, outcomes)
    eps = np.finfo(float).eps
    sc = np.clip(s, eps, 1 - eps)
    x = np.column_stack([np.log(sc), -np.log1p(-sc)])
    a, b, c = logistic_fit(x, y)
    if a < 0:
        b, c = logistic_fit(x[:, 1:], y)
        a = 0.0
    elif b < 0:
        a, c = logistic_fit(x[:, :1], y)
        b = 0.0

    def function(q):
        qc = np.clip(q, eps, 1 - eps)
        return expit(a * np.log(qc) - b * np.log1p(-qc) + c)

    return Recalibrator("beta", {"a": float(a), "b": float(b), "c": float(c)}, function)


def fit_recalibrator(method: str, *, scores: Any = None, outcomes: Any = None, probs: Any = None,
                     labels: Any = None, bins: int = 10, clip: float | None = None) -> Recalibrator:
    """Fit ``method`` (one of :data:`METHODS`); temperature needs ``probs``/``labels``, the rest ``scores``/``outcomes``.

    Parameters
    ----------
    method : {"temperature", "platt", "histogram", "isotonic", "beta"}
    scores, outcomes : array_like, shape (N,), optional
        Top-1 scores and 0/1 outcomes (every method but temperature).
    probs : array_like, shape (N, K), optional
    labels : array_like of int, shape (N,), optional
        Probability vectors and true classes (temperature scaling).
    bins : int
        Bins of histogram binning.
    clip : float, optional
        Platt scaling's score clipping (:func:`fit_platt`; default :data:`PLATT_CLIP`); an error
        with any other method.

    Returns
    -------
    Recalibrator
        ``method``, ``params`` and the fitted map (``apply(scores)``).

    Examples
    --------
    >>> fit_recalibrator("platt", scores=[0.6, 0.9, 0.8, 0.7], outcomes=[0, 1, 1, 1]).method
    'platt'
    """
    if method not in METHODS:
        raise ConfigError(f"unknown recalibration method {method!r} (choose one of {', '.join(METHODS)})")
    if clip is not None and method != "platt":
        raise ConfigError(f"clip is an option of Platt scaling only, not of {method}")
    if method == "temperature":
        if probs is None:
            raise ConfigError("temperature scaling needs full probability vectors (this data has only top-1 scores)")
        return fit_temperature(probs, labels)
    if method == "histogram":
        return fit_histogram(scores, outcomes, bins=bins)
    if method == "platt":
        return fit_platt(scores, outcomes, clip=PLATT_CLIP if clip is None else clip)
    return {"isotonic": fit_isotonic, "beta": fit_beta}[method](scores, outcomes)


def apply_top1(recalibrator: Recalibrator, probs: Any) -> np.ndarray:
    """Replace each row's top probability by its recalibrated value, rescaling the others to sum to one.

    The predicted class keeps its index even where the new top-1 value falls below another class.

    Parameters
    ----------
    recalibrator : Recalibrator
        A fitted top-1 map.
    probs : array_like, shape (N, K)
        Probability vectors.

    Returns
    -------
    ndarray, shape (N, K)

    Examples
    --------
    >>> r = Recalibrator("fixed", {}, lambda q: np.full(q.shape, 0.5))
    >>> apply_top1(r, [[0.8, 0.15, 0.05]]).round(3).tolist()
    [[0.5, 0.375, 0.125]]
    """
    p = np.asarray(probs, dtype=float)
    top = p.argmax(axis=1)
    rows = np.arange(p.shape[0])
    old = p[rows, top]
    new = np.clip(recalibrator.apply(old), 0.0, 1.0)
    rest = 1.0 - old
    scale = np.where(rest > 0, (1.0 - new) / np.where(rest > 0, rest, 1.0), 0.0)
    out = p * scale[:, None]
    out[rows, top] = new
    spare = (rest <= 0) & (p.shape[1] > 1)
    if spare.any():  # a one-hot row: share the freed mass evenly among the other classes
        share = (1.0 - new[spare]) / (p.shape[1] - 1)
        out[spare] = share[:, None]
        out[np.flatnonzero(spare), top[spare]] = new[spare]
    return out
