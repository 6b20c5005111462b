"""Noisy attributes: arms from attribute classifiers, calibrated on a small gold set.

When the attributes of an item are predicted by classifiers M_k (P(a_k = 1 | x) for binary
attributes), an item belongs to every arm with probability

    log P(a | x) = sum_k t_k log M_k(a_k | x) + E(a) - log Z(x),

with per-attribute temperatures t_k and a joint potential over attribute combinations
E(a) = sum_k b_k a_k + sum_{k<l} w_kl a_k a_l (it restores the correlations between attributes
that independent classifiers ignore). :func:`calibrate_arm_model` fits t (``"temperature"``)
or t, b, w (``"full"``) by maximum likelihood of the true arms of a gold set (L2 penalty on
b, w); ``"raw"`` keeps t = 1, E = 0. :func:`soft_arm_counts` then counts every pool item
fractionally towards the arms, in chunks (never an items x arms matrix in memory).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pbassess.counting import cell_counts
from pbassess.errors import ConfigError, DataError
from pbassess.surface.arms import ArmCounts

__all__ = ["ArmModel", "arm_log_probs", "calibrate_arm_model", "soft_arm_counts"]

CALIBRATIONS = ("raw", "temperature", "full")


@dataclass(frozen=True)
class ArmModel:
    """Calibration of P(arm | x): temperatures (K,), joint-potential weights over arm features.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.integers(0, 2, size=(400, 2))
    >>> probs = 1 / (1 + np.exp(-(2 * truth - 1) * 3 * rng.uniform(0.2, 1.5, size=(400, 2))))
    >>> m = calibrate_arm_model(probs, truth, [[0, 0], [0, 1], [1, 0], [1, 1]], kind="temperature")
    >>> isinstance(m, ArmModel), m.kind, m.temperatures.shape, bool((m.temperatures > 0).all())
    (True, 'temperature', (2,), True)
    """

    temperatures: np.ndarray
    weights: np.ndarray
    kind: str = "raw"


def _arm_features(arm_values: np.ndarray) -> np.ndarray:
    """Features of the joint potential: the attributes and their pairwise products."""
    a = np.asarray(arm_values, float)
    k = a.shape[1]
    pairs = [a[:, i] * a[:, j] for i in range(k) for j in range(i + 1, k)]
    return np.column_stack([a, *pairs]) if pairs else a


def _check(attribute_probs: Any, arm_values: Any) -> tuple[np.ndarray, np.ndarray]:
    p = np.clip(np.asarray(attribute_probs, float), 1e-6, 1 - 1e-6)
    a = np.asarray(arm_values)
    if p.ndim != 2 or a.ndim != 2 or p.shape[1] != a.shape[1]:
        raise DataError(f"attribute probabilities {p.shape} and arm values {a.shape} disagree on the attributes")
    if not np.isin(a, (0, 1)).all():
        raise DataError("noisy attributes must be binary (arm values 0/1)")
    return p, a


def arm_log_probs(attribute_probs: Any, arm_values: Any, model: ArmModel | None = None) -> np.ndarray:
    """log P(arm | x) for every item and arm (items x arms).

    Examples
    --------
    >>> lp = arm_log_probs([[0.9, 0.2]], [[0, 0], [0, 1], [1, 0], [1, 1]])
    >>> np.exp(lp).round(2).tolist()
    [[0.08, 0.02, 0.72, 0.18]]
    """
    p, a = _check(attribute_probs, arm_values)
    k = a.shape[1]
    t = np.ones(k) if model is None else model.temperatures
    logit = (np.log(p) - np.log1p(-p)) * t
    scores = logit @ a.T.astype(float)
    if model is not None and model.weights.size:
        scores = scores + _arm_features(a) @ model.weights
    scores -= scores.max(axis=1, keepdims=True)
    return scores - np.log(np.exp(scores).sum(axis=1, keepdims=True))


def _objective(theta: np.ndarray, logit: np.ndarray, gold_index: np.ndarray, a: np.ndarray, feats: np.ndarray,
               n_temp: int, l2: float) -> tuple[float, np.ndarray]:
    t, w = theta[:n_temp], theta[n_temp:]
    scores = (logit * t) @ a.T + (feats @ w if w.size else 0.0)
    scores -= scores.max(axis=1, keepdims=True)
    logz = np.log(np.exp(scores).sum(axis=1))
    prob = np.exp(scores - logz[:, None])
    rows = np.arange(logit.shape[0])
    loglik = (scores[rows, gold_index] - logz).sum()
    expected_a = prob @ a
    grad_t = (logit * (a[gold_index] - expected_a)).sum(axis=0)
    grad = [grad_t]
    if w.size:
        grad.append((feats[gold_index] - prob @ feats).sum(axis=0) - l2 * w)
        loglik -= 0.5 * l2 * (w**2).sum()
    return -float(loglik), -np.concatenate(grad)


def calibrate_arm_model(attribute_probs: Any, gold_attributes: Any, arm_values: Any, *, kind: str = "full",
                        l2: float = 1.0) -> ArmModel:
    """Fit temperatures (and the joint potential) on a gold set with known attributes.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.integers(0, 2, size=(400, 2))
    >>> probs = 1 / (1 + np.exp(-(2 * truth - 1) * 3 * rng.uniform(0.2, 1.5, size=(400, 2))))
    >>> m = calibrate_arm_model(probs, truth, [[0, 0], [0, 1], [1, 0], [1, 1]], kind="temperature")
    >>> m.kind, m.temperatures.shape
    ('temperature', (2,))
    """
    from scipy.optimize import minimize

    if kind not in CALIBRATIONS:
        raise ConfigError(f"unknown calibration {kind!r} (choose from {', '.join(CALIBRATIONS)})")
    p, a = _check(attribute_probs, arm_values)
    k = a.shape[1]
    if kind == "raw":
        return ArmModel(np.ones(k), np.zeros(0), "raw")
    gold = np.asarray(gold_attributes, dtype=np.int64)
    if gold.shape != p.shape:
        raise DataError(f"gold attributes have shape {gold.shape}, expected {p.shape}")
    powers = 1 << np.arange(k)[::-1]
    lookup = {int(code): j for j, code in enumerate(a.astype(np.int64) @ powers)}
    try:
        gold_index = np.array([lookup[int(code)] for code in gold @ powers])
    except KeyError:
        raise DataError("a gold item's attribute combination is not among the arms") from None
    feats = _arm_features(a) if kind == "full" else np.zeros((a.shape[0], 0))
    logit = np.log(p) - np.log1p(-p)
    theta0 = np.concatenate([np.ones(k), np.zeros(feats.shape[1])])
    res = minimize(_objective, theta0, jac=True, method="L-BFGS-B",
                   args=(logit, gold_index, a.astype(float), feats, k, l2),
                   bounds=[(1e-3, 50.0)] * k + [(None, None)] * feats.shape[1])
    return ArmModel(res.x[:k], res.x[k:], kind)


def soft_arm_counts(preds: Any, attribute_probs: Any, arm_values: Any, model: ArmModel | None = None, *,
                    attributes: tuple[str, ...] | None = None, chunk: int = 2048) -> ArmCounts:
    """Fractional arm counts of a pool whose attributes come from classifiers.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_binary_scores([.9, .8], [1, 0])
    >>> c = soft_arm_counts(p, [[0.99], [0.01]], [[0], [1]])
    >>> c.pool_n.round(2).tolist(), c.correct.round(2).tolist()
    ([1.0, 1.0], [0.01, 0.99])
    """
    probs, a = _check(attribute_probs, arm_values)
    if probs.shape[0] != preds.n_items:
        raise DataError(f"attribute probabilities cover {probs.shape[0]} items, the pool has {preds.n_items}")
    labeled = (preds.labels >= 0).astype(float)
    correct = ((preds.predicted == preds.labels) & (preds.labels >= 0)).astype(float)
    conf = np.asarray(preds.confidence, float)
    n_arms = a.shape[0]
    pool_n, n, corr, conf_sum = (np.zeros(n_arms) for _ in range(4))
    for start in range(0, preds.n_items, chunk):
        sl = slice(start, start + chunk)
        w = np.exp(arm_log_probs(probs[sl], a, model))
        pool_n += w.sum(axis=0)
        n += labeled[sl] @ w
        corr += correct[sl] @ w
        conf_sum += conf[sl] @ w
    names = attributes or tuple(f"a{j}" for j in range(a.shape[1]))
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = np.where(pool_n > 0, conf_sum / pool_n, np.nan)
    return ArmCounts(tuple(names), a, n, corr, pool_n, mean_conf, None, ())


def compare_calibrations(syn: Any, *, gold_size: int = 400, n_labels: int = 2000, min_support: float = 20,
                         seed: Any = None, estimator: str = "beta-i") -> dict[str, dict[str, float]]:
    """Raw vs temperature-only vs full calibration of P(arm | x) on a synthetic surface.

    ``syn`` is a :func:`~pbassess.surface.synthetic.synthetic_surface` drawn with
    ``attribute_noise``. A gold set of ``gold_size`` items (true attributes known) fits each
    calibration; ``n_labels`` random labels are kept; per calibration the result holds the mean
    held-out log P(true arm | x) (on items outside the gold set) and the surface errors of
    ``estimator`` on soft counts against the true arm accuracy (arms with at least
    ``min_support`` items by their true attributes).

    Examples
    --------
    >>> from pbassess.surface.synthetic import synthetic_surface
    >>> syn = synthetic_surface(3000, 4, seed=0, attribute_noise=1.0)
    >>> out = compare_calibrations(syn, gold_size=200, n_labels=500, seed=1)
    >>> sorted(out), sorted(out["full"])[:2]
    (['full', 'raw', 'temperature'], ['heldout_loglik', 'macro_mse'])
    """
    from pbassess.stats.sampling import as_generator
    from pbassess.surface.evaluate import surface_errors
    from pbassess.surface.fit import fit_surface, hide_labels

    if syn.attribute_probs is None:
        raise ConfigError("the synthetic surface has no attribute classifiers: draw it with attribute_noise")
    rng = as_generator(seed)
    n_items, k = syn.attribute_truth.shape
    gold = rng.choice(n_items, size=min(gold_size, n_items // 2), replace=False)
    rest = np.setdiff1d(np.arange(n_items), gold)
    heldout = rest[: min(rest.size, 5000)]
    arm_index = syn.attribute_truth @ (1 << np.arange(k)[::-1])
    support = cell_counts(arm_index, syn.arm_values.shape[0]).astype(float)
    kept = hide_labels(syn.preds, n_labels, seed=rng)
    out = {}
    for kind in CALIBRATIONS:
        model = calibrate_arm_model(syn.attribute_probs[gold], syn.attribute_truth[gold], syn.arm_values, kind=kind)
        lp = arm_log_probs(syn.attribute_probs[heldout], syn.arm_values, model)
        arms = soft_arm_counts(kept, syn.attribute_probs, syn.arm_values, model, attributes=syn.attributes)
        fit = fit_surface(arms, estimator=estimator, seed=rng)
        errors = surface_errors(fit.mean, syn.arm_accuracy, support, min_support=min_support, truth_is_empirical=False)
        out[kind] = {"heldout_loglik": float(lp[np.arange(heldout.size), arm_index[heldout]].mean()), **errors}
    return out
