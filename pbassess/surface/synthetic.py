"""A synthetic accuracy surface with known truth over binary attributes.

:func:`synthetic_surface` draws up to 12 binary attributes per item (with unequal prevalences,
so arms are unevenly populated, and correlated pairs), a true arm accuracy from an additive
logit model (main effects, a few pairwise interactions), the correctness of every item from
its arm's accuracy, and a model confidence that is informative but miscalibrated. With
``attribute_noise`` it also returns the outputs of noisy attribute classifiers
P(a_k = 1 | x) (overconfident and occasionally wrong) for the noisy-attribute experiments.

:func:`miscalibrated_surface` draws a pool whose model confidence is calibrated item by item
except on a few attribute combinations, where it is over-confident by a known 0.05-0.2: the
surface on which a confidence-anchored estimator must correct the confidence (and nowhere else).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pbassess.counting import cell_counts
from pbassess.data.predictions import Predictions
from pbassess.errors import ConfigError
from pbassess.stats.sampling import as_generator

__all__ = ["MiscalibratedSurface", "SyntheticSurface", "miscalibrated_surface", "synthetic_surface"]


@dataclass(frozen=True)
class SyntheticSurface:
    """Items with attribute columns ``a0..a{K-1}`` and the truth behind them.

    Examples
    --------
    >>> s = synthetic_surface(2000, 3, seed=0)
    >>> isinstance(s, SyntheticSurface), s.attributes, s.arm_values.shape, s.preds.n_items
    (True, ('a0', 'a1', 'a2'), (8, 3), 2000)
    """

    preds: Predictions
    attributes: tuple[str, ...]
    arm_values: np.ndarray  # (2**K, K) every combination of the binary attributes
    arm_accuracy: np.ndarray  # (2**K,) true accuracy of every arm
    attribute_probs: np.ndarray | None  # (N, K) noisy classifiers' P(a_k = 1 | x)
    attribute_truth: np.ndarray  # (N, K) true attributes

    def truth_for(self, values: np.ndarray) -> np.ndarray:
        """True accuracy of arms given by their attribute values (rows of 0/1)."""
        index = np.asarray(values, dtype=np.int64) @ (1 << np.arange(len(self.attributes))[::-1])
        return self.arm_accuracy[index]


def _all_arms(k: int) -> np.ndarray:
    return ((np.arange(2**k)[:, None] >> np.arange(k)[::-1]) & 1).astype(np.int64)


def synthetic_surface(n_items: int = 20000, n_attributes: int = 8, *, seed: Any = None,
                      attribute_noise: float | None = None, base_accuracy: float = 0.85,
                      effect_sd: float = 0.6, n_interactions: int = 4) -> SyntheticSurface:
    """Draw a synthetic pool with a known accuracy surface.

    Parameters
    ----------
    n_items : int
        Pool size; every item is labeled (hide labels for experiments).
    n_attributes : int
        Number of binary attributes, 1..12 (2**K arms).
    attribute_noise : float, optional
        Noise sd of the attribute classifiers' logits; their outputs are also sharpened by a
        random temperature (overconfident). ``None``: no classifier outputs.

    Examples
    --------
    >>> s = synthetic_surface(2000, 4, seed=0)
    >>> s.preds.n_items, s.arm_values.shape, bool(((s.arm_accuracy > 0) & (s.arm_accuracy < 1)).all())
    (2000, (16, 4), True)
    """
    if not 1 <= n_attributes <= 12:
        raise ConfigError(f"n_attributes must be between 1 and 12, got {n_attributes}")
    if n_items < 1:
        raise ConfigError(f"n_items must be positive, got {n_items}")
    rng = as_generator(seed)
    k = n_attributes
    prevalence = rng.uniform(0.08, 0.5, size=k)
    latent = rng.normal(size=(n_items, k))
    for j in range(1, k, 3):  # correlated neighbours: attribute j leans on attribute j - 1
        latent[:, j] = 0.7 * latent[:, j - 1] + np.sqrt(1 - 0.49) * latent[:, j]
    from scipy.stats import norm

    attrs = (latent < norm.ppf(prevalence)).astype(np.int64)
    arms = _all_arms(k)
    main = rng.normal(0.0, effect_sd, size=k)
    logit = np.log(base_accuracy / (1 - base_accuracy)) + arms @ main
    for _ in range(min(n_interactions, k * (k - 1) // 2)):
        i, j = rng.choice(k, size=2, replace=False)
        logit = logit + rng.normal(0.0, effect_sd) * arms[:, i] * arms[:, j]
    accuracy = 1 / (1 + np.exp(-logit))
    arm_index = attrs @ (1 << np.arange(k)[::-1])
    p_item = accuracy[arm_index]
    correct = rng.random(n_items) < p_item
    n_classes = 10
    labels = rng.integers(n_classes, size=n_items)
    wrong = (labels + rng.integers(1, n_classes, size=n_items)) % n_classes
    predicted = np.where(correct, labels, wrong)
    conf_logit = 0.3 + 0.7 * np.log(p_item / (1 - p_item)) + rng.normal(0.0, 0.8, size=n_items)
    confidence = 1 / n_classes + (1 - 1 / n_classes) / (1 + np.exp(-conf_logit))  # top-1 >= 1/K
    names = tuple(f"a{j}" for j in range(k))
    preds = Predictions(predicted=predicted.astype(np.int64), confidence=confidence,
                        classes=tuple(str(c) for c in range(n_classes)), labels=labels.astype(np.int64),
                        item_ids=np.array([str(i) for i in range(n_items)], dtype=object),
                        groups={name: attrs[:, j].copy() for j, name in enumerate(names)}, name="synthetic-surface")
    probs = None
    if attribute_noise is not None:
        temperature = rng.uniform(1.5, 3.0, size=k)  # > 1: overconfident classifiers
        signal = (2 * attrs - 1) * 1.5 + rng.normal(0.0, attribute_noise, size=attrs.shape)
        probs = 1 / (1 + np.exp(-signal * temperature))
    return SyntheticSurface(preds, names, arms, accuracy, probs, attrs)


@dataclass(frozen=True)
class MiscalibratedSurface:
    """A pool with a known accuracy surface and a confidence that is wrong on known arms.

    Attributes
    ----------
    preds : Predictions
        Every item labeled; attribute columns ``a0..a{K-1}``.
    attributes : tuple of str
    arm_values : ndarray (2**K, K)
        Every combination of the binary attributes.
    arm_accuracy : ndarray (2**K,)
        The true accuracy of every arm in this pool: the mean of its items' probabilities of
        being right (NaN for an empty arm).
    over_confident : ndarray (2**K,)
        How much the arm's mean confidence exceeds its true accuracy by construction (0 on the
        calibrated arms).
    rules : tuple of (tuple of (int, int), float)
        The miscalibrated combinations: ((attribute, value), ...) and their over-confidence.

    Examples
    --------
    >>> s = miscalibrated_surface(3000, 4, seed=0)
    >>> s.arm_values.shape, len(s.rules), bool((s.over_confident >= 0).all())
    ((16, 4), 3, True)
    """

    preds: Predictions
    attributes: tuple[str, ...]
    arm_values: np.ndarray
    arm_accuracy: np.ndarray
    over_confident: np.ndarray
    rules: tuple

    def arm_truth(self, values: np.ndarray) -> np.ndarray:
        """True accuracy of arms given by their attribute values (rows of 0/1)."""
        index = np.asarray(values, dtype=np.int64) @ (1 << np.arange(len(self.attributes))[::-1])
        return self.arm_accuracy[index]


#: A rule's over-confidence may take at most this share of its items' room below 1 (mean 1 - confidence):
#: asking an arm of accuracy 0.9 to be over-confident by 0.15 pushes every confidence to 1 and destroys it.
RULE_ROOM = 0.6
#: Random (combination, over-confidence) draws tried per rule before the over-confidence is capped at what the last one allows.
RULE_ATTEMPTS = 200


def miscalibrated_surface(n_items: int = 50000, n_attributes: int = 8, *, seed: Any = None,
                          base_accuracy: float = 0.85, effect_sd: float = 0.5, n_rules: int = 3,
                          shift: tuple[float, float] = (0.05, 0.2), item_sd: float = 1.0) -> MiscalibratedSurface:
    """Draw a pool whose confidence is calibrated except on a few attribute combinations.

    Binary attributes with unequal prevalences (as :func:`synthetic_surface`); the arm's logit
    accuracy is additive (main effects ~ N(0, ``effect_sd``)); item i of arm a is right with
    probability p_i = sigmoid(logit acc_a + N(0, ``item_sd``)) and the model's confidence is
    p_i itself -- calibrated -- except on the items matching one of ``n_rules`` random
    combinations (one attribute value, or a pair of values), where the confidence is p_i
    shifted up on the logit scale so that the rule's items are over-confident by a drawn
    amount in ``shift`` (0.05-0.2) on average. A rule's combination and amount are drawn again
    until its items leave room for that over-confidence (at most :data:`RULE_ROOM` of their mean
    1 - confidence; a combination of accuracy 0.9 cannot be over-confident by 0.15 without
    every confidence going to 1, which would carry no information at all). The confidence of a 10-class top-1 prediction
    stays in [0.1, 1).

    Parameters
    ----------
    n_items, n_attributes : int
        Pool size and number of binary attributes (1..12).
    seed : int or numpy.random.Generator, optional
    base_accuracy, effect_sd, item_sd : float
    n_rules : int
        Miscalibrated combinations (the first is a single attribute value, the others pairs).
    shift : (float, float)
        Range of the over-confidence of a rule's items.

    Returns
    -------
    MiscalibratedSurface

    Examples
    --------
    >>> s = miscalibrated_surface(20000, 6, seed=1)
    >>> bad = s.over_confident > 0
    >>> bool(0.04 < s.over_confident[bad].mean() < 0.25), s.preds.n_items
    (True, 20000)
    """
    if not 1 <= n_attributes <= 12:
        raise ConfigError(f"n_attributes must be between 1 and 12, got {n_attributes}")
    if n_items < 1:
        raise ConfigError(f"n_items must be positive, got {n_items}")
    lo, hi = (float(x) for x in shift)
    if not 0 <= lo <= hi < 1:
        raise ConfigError(f"shift must be a range inside [0, 1), got {shift}")
    rng = as_generator(seed)
    k = n_attributes
    from scipy.special import expit, logit
    from scipy.stats import norm

    prevalence = rng.uniform(0.1, 0.5, size=k)
    latent = rng.normal(size=(n_items, k))
    attrs = (latent < norm.ppf(prevalence)).astype(np.int64)
    arms = _all_arms(k)
    arm_logit = logit(base_accuracy) + arms @ rng.normal(0.0, effect_sd, size=k)
    arm_index = attrs @ (1 << np.arange(k)[::-1])
    p = expit(arm_logit[arm_index] + rng.normal(0.0, item_sd, size=n_items))
    correct = rng.random(n_items) < p
    conf = p.copy()
    rules = []
    for r in range(n_rules):
        size = 1 if r == 0 or k < 2 else 2
        for _attempt in range(RULE_ATTEMPTS):  # a combination whose items leave room for the over-confidence
            target = rng.uniform(lo, hi)
            attr = rng.choice(k, size=size, replace=False)
            value = rng.integers(0, 2, size=size)
            hit = np.all(attrs[:, attr] == value, axis=1)
            if hit.any() and target <= RULE_ROOM * np.mean(1.0 - conf[hit]):
                break
        else:  # none found: the largest over-confidence the last combination's items leave room for
            target = min(target, RULE_ROOM * float(np.mean(1.0 - conf[hit]))) if hit.any() else target
        if hit.any():  # the logit shift whose mean over the rule's items over-states accuracy by `target`
            base = np.clip(p[hit], 1e-6, 1 - 1e-6)
            a, b = 0.0, 20.0
            for _ in range(60):
                mid = 0.5 * (a + b)
                gap = np.mean(expit(logit(np.clip(conf[hit], 1e-6, 1 - 1e-6)) + mid) - base)
                a, b = (mid, b) if gap < target else (a, mid)
            conf[hit] = expit(logit(np.clip(conf[hit], 1e-6, 1 - 1e-6)) + 0.5 * (a + b))
        rules.append((tuple((int(i), int(v)) for i, v in zip(attr, value, strict=True)), float(target)))
    n_classes = 10
    conf = np.clip(conf, 1.0 / n_classes, 1 - 1e-6)
    labels = rng.integers(n_classes, size=n_items)
    wrong = (labels + rng.integers(1, n_classes, size=n_items)) % n_classes
    predicted = np.where(correct, labels, wrong)
    size = cell_counts(arm_index, 2**k)
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = cell_counts(arm_index, 2**k, weights=np.asarray(p, dtype=float)) / size
        over = np.where(size > 0, cell_counts(arm_index, 2**k, weights=conf - p) / size, 0.0)
    names = tuple(f"a{j}" for j in range(k))
    preds = Predictions(predicted=predicted.astype(np.int64), confidence=conf,
                        classes=tuple(str(c) for c in range(n_classes)), labels=labels.astype(np.int64),
                        item_ids=np.array([str(i) for i in range(n_items)], dtype=object),
                        groups={name: attrs[:, j].copy() for j, name in enumerate(names)},
                        name="miscalibrated-surface")
    return MiscalibratedSurface(preds, names, arms, accuracy, np.maximum(over, 0.0), tuple(rules))
