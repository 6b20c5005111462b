"""ECE posteriors that can say "calibrated": bin counts, P(ECE < eps), the plug-in estimator.

The independent-Beta posterior of :func:`pbassess.assess.calibration.assess_calibration`
(``theta_b ~ Beta(pc s_b + k_b, pc (1 - s_b) + n_b - k_b)``) gives an ECE posterior whose mean
is biased upward at few labels per bin and never reaches 0. Three answers:

- ``P(ECE < eps)`` from any ECE posterior (:func:`pbassess.stats.calibration.prob_below`),
- the plug-in estimator ``sum_b p_b |E[theta_b] - s_b|`` (Ji, Smyth and Steyvers 2020;
  :func:`pbassess.stats.calibration.plugin_ece`), with lower error than the frequentist ECE
  at 100 and 500 labels (:func:`compare_ece_estimators`),
- the shrinkage model of :mod:`pbassess.calibration.shrinkage`, whose posterior concentrates
  on 0 for a calibrated model; :func:`calibration_decision` reads ``P(ECE < eps) > level``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.calibration.binning import bin_sums, resolve_edges
from pbassess.calibration.shrinkage import (
    DEFAULT_EPS,
    OC_REPS,
    operating_characteristics,
    shrinkage_posterior,
)
from pbassess.errors import ConfigError
from pbassess.stats import as_generator, beta_draws, beta_posterior, beta_prior
from pbassess.stats.calibration import (
    ece_from_draws,
    mce_from_draws,
    mean_bin_gap_from_draws,
    plugin_ece,
    prob_below,
    rmsce_from_draws,
)

__all__ = ["DEFAULT_EPS", "MIN_LABELS", "OC_REPS", "beta_metric_draws", "calibration_decision", "compare_ece_estimators",
           "operating_characteristics", "pool_bins"]


_SCORE_CLIP = 1e-6


def pool_bins(confidence: Any, correct: Any, labeled: Any, bins: Any = 10, *, binning: str = "uniform",
              convention: str = "left") -> dict[str, np.ndarray]:
    """Sufficient statistics of a pool: per bin pool count, share, mean score, labeled counts.

    Parameters
    ----------
    confidence : array_like, shape (N,)
        Top-1 scores of every pool item.
    correct : array_like of bool, shape (N,)
        Correctness (ignored where not ``labeled``).
    labeled : array_like of bool, shape (N,)
    bins, binning, convention
        As in :func:`pbassess.calibration.metrics.expected_calibration_error`.

    Returns
    -------
    dict
        ``edges``, ``n_pool``, ``bin_weight`` (pool share), ``bin_score`` (pool mean score, the
        bin centre where empty, clipped into (1e-6, 1 - 1e-6)), ``n`` and ``correct`` (labeled),
        ``score_sum`` (labeled scores).

    Examples
    --------
    >>> b = pool_bins([0.2, 0.8, 0.9, 0.6], [0, 1, 0, 1], [True, True, True, False], 2)
    >>> b["n_pool"].tolist(), b["n"].tolist(), b["correct"].tolist(), b["bin_score"].round(3).tolist()
    ([1, 3], [1, 2], [0, 1], [0.2, 0.767])
    """
    s = np.asarray(confidence, dtype=float).ravel()
    lab = np.asarray(labeled, dtype=bool).ravel()
    y = np.asarray(correct, dtype=float).ravel()
    if not (s.shape == lab.shape == y.shape):
        raise ConfigError("confidence, correct and labeled must have one value per item")
    edges = resolve_edges(s, bins, binning)
    pool = bin_sums(s, np.zeros(s.size), edges, convention)
    lab_sums = bin_sums(s[lab], y[lab], edges, convention)
    centre = (edges[:-1] + edges[1:]) / 2
    if pool.n.size > centre.size:  # torchmetrics' extra bin of scores equal to 1
        centre = np.append(centre, 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(pool.n > 0, pool.score_sum / np.maximum(pool.n, 1), centre)
    return {
        "edges": edges, "n_pool": pool.n, "bin_weight": pool.n / max(pool.n.sum(), 1),
        "bin_score": np.clip(score, _SCORE_CLIP, 1 - _SCORE_CLIP), "n": lab_sums.n,
        "correct": np.round(lab_sums.outcome_sum).astype(np.int64), "score_sum": lab_sums.score_sum,
    }


def beta_metric_draws(bins: dict, *, pseudocount: float = 2.0, n_draws: int = 4000, seed: Any = None) -> dict:
    """Draws of ECE, MCE, RMSCE and the mean bin gap under independent Beta posteriors centred on the diagonal.

    Returns a dict of (draws,) arrays plus ``accuracy`` (draws, B) and ``plugin_ece``.

    Parameters
    ----------
    bins : dict
        Per-bin sufficient statistics of a pool (:func:`pool_bins`): ``n``, ``correct``,
        ``bin_score``, ``bin_weight``.
    pseudocount : float
        Prior strength pc of ``Beta(pc s_b, pc (1 - s_b))``.
    n_draws : int
    seed : int or numpy.random.Generator, optional

    Returns
    -------
    dict
        ``ece``, ``mce``, ``rmsce``, ``mean_bin_gap`` (the unweighted mean of the bin gaps over
        the bins holding pool items: netcal's "ACE" under equal-width bins, not Nixon et al.'s
        ACE) (draws,), ``accuracy`` (draws, B) and ``plugin_ece``.

    Examples
    --------
    >>> b = pool_bins([0.2, 0.8, 0.9, 0.6] * 25, [0, 1, 1, 1] * 25, [True] * 100, 2)
    >>> out = beta_metric_draws(b, n_draws=500, seed=0)
    >>> sorted(out), out["ece"].shape
    (['accuracy', 'ece', 'mce', 'mean_bin_gap', 'plugin_ece', 'rmsce'], (500,))
    """
    w, s = bins["bin_weight"], bins["bin_score"]
    alpha, beta = beta_prior("informed", s.size, float(pseudocount), mean=s)
    a, b = beta_posterior(bins["correct"], bins["n"], alpha, beta)
    theta = beta_draws(a, b, int(n_draws), as_generator(seed))
    occupied = bins["n_pool"] > 0
    return {
        "accuracy": theta, "ece": ece_from_draws(theta, w, s), "mce": mce_from_draws(theta, s, occupied),
        "rmsce": rmsce_from_draws(theta, w, s), "mean_bin_gap": mean_bin_gap_from_draws(theta, s, occupied),
        "plugin_ece": plugin_ece(bins["n"], bins["correct"], alpha, beta, w, s),
    }


#: Fewest labeled items with which :func:`calibration_decision` may say "calibrated".
MIN_LABELS: int = 1000


def calibration_decision(bins: dict, *, eps: Any = DEFAULT_EPS, decide_eps: float = 0.02, level: float = 0.9,
                         min_labels: int = MIN_LABELS, n_draws: int = 4000, seed: Any = None,
                         operating: bool = False, **prior: Any) -> dict[str, Any]:
    """Shrinkage-model ECE posterior, ``P(ECE < eps)`` and the decision "calibrated".

    The model is called calibrated when ``P(ECE < decide_eps) > level`` and at least
    ``min_labels`` items are labeled. How often the rule is right depends on the number of labels
    and on the confidence distribution: :func:`operating_characteristics` measures its power and
    false-"calibrated" rate at a pool's own design, and ``benchmarks/calibration_decision.py``
    prints both across models and label counts (docs/calibration.md). The result's
    ``posterior`` holds the shrinkage draws, with ``p_spike``, the posterior probability of exact
    calibration.

    Parameters
    ----------
    bins : dict
        Per-bin sufficient statistics of a pool (:func:`pool_bins`): ``n``, ``correct``,
        ``bin_score``, ``bin_weight``.
    eps : sequence of float
        Thresholds at which ``P(ECE < eps)`` is reported.
    decide_eps : float
        The threshold of the decision.
    level : float
        Probability ``P(ECE < decide_eps)`` must exceed.
    min_labels : int
        Fewest labeled items for any decision.
    n_draws : int
    seed : int or numpy.random.Generator, optional
    operating : bool
        Also return ``operating``: :func:`operating_characteristics` of the rule at these
        labels (power and false-"calibrated" rate, by simulation; seeded from ``seed``).
    **prior
        ``mu_scale``, ``tau_scale``, ``p_calibrated`` of :func:`shrinkage_posterior`.

    Returns
    -------
    dict
        ``ece`` (draws), ``ece_mean``, ``p_below`` ({eps: probability}), ``calibrated`` (bool),
        ``decision`` ("calibrated", "not calibrated" or "too few labels").

    Examples
    --------
    >>> from pbassess.calibration.simulate import synthetic_pool
    >>> pool = synthetic_pool(20_000, "shifted", 0.05, seed=1)
    >>> idx, correct = pool.draw_labels(2000, seed=2)
    >>> labeled = np.zeros(pool.confidence.size, bool); labeled[idx] = True
    >>> y = np.zeros(pool.confidence.size, bool); y[idx] = correct
    >>> out = calibration_decision(pool_bins(pool.confidence, y, labeled), n_draws=1000, seed=3)
    >>> out["calibrated"], bool(out["ece_mean"] > 0.03)
    (False, True)
    """
    if not 0 < level < 1:
        raise ConfigError(f"level must lie strictly between 0 and 1, got {level!r}")
    thresholds = sorted({*np.atleast_1d(np.asarray(eps, dtype=float)).tolist(), float(decide_eps)})
    post = shrinkage_posterior(bins["n"], bins["correct"], bins["bin_score"], bins["bin_weight"], n_draws=n_draws,
                               seed=seed, **prior)
    p = prob_below(post["ece"], thresholds)
    above = bool(p[float(decide_eps)] > level)
    enough = int(np.sum(bins["n"])) >= int(min_labels)
    decision = ("calibrated" if above else "not calibrated") if enough else "too few labels"
    out = {"ece": post["ece"], "ece_mean": float(post["ece"].mean()), "p_below": p,
           "calibrated": above and enough, "decision": decision, "posterior": post}
    if operating:
        out["operating"] = operating_characteristics(bins, eps=thresholds, level=level, seed=seed, **prior)
    return out




def compare_ece_estimators(confidence: Any, correct: Any, n_labeled: int, *, reps: int = 100, bins: int = 10,
                           pseudocount: float = 2.0, seed: Any = None) -> dict[str, np.ndarray]:
    """Errors of the frequentist and the plug-in Bayesian ECE against the full labeled set's ECE.

    Each repetition labels ``n_labeled`` random items of a fully labeled pool; the truth is the
    frequentist ECE of all items (with the same bins). Reproduces Fig. 3 of Ji et al. (2020).

    Parameters
    ----------
    confidence : array_like, shape (N,)
        Top-1 scores of a fully labeled pool.
    correct : array_like of bool, shape (N,)
    n_labeled : int
        Items labeled in each repetition.
    reps : int
        Repetitions.
    bins : int
        Equal-width bins.
    pseudocount : float
        Prior strength of the plug-in Bayesian estimate.
    seed : int or numpy.random.Generator, optional

    Returns
    -------
    dict
        ``truth`` (float), ``frequentist`` and ``plugin`` (reps,) estimates, and their absolute
        errors ``error_frequentist`` and ``error_plugin``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> c = rng.uniform(0.5, 1, 5000); y = rng.uniform(size=5000) < c - 0.05
    >>> out = compare_ece_estimators(c, y, 100, reps=20, seed=1)
    >>> bool(out["error_plugin"].mean() < out["error_frequentist"].mean())
    True
    """
    s = np.asarray(confidence, dtype=float).ravel()
    y = np.asarray(correct, dtype=bool).ravel()
    rng = as_generator(seed)
    full = pool_bins(s, y, np.ones(s.size, bool), bins)
    truth = float(ece_from_draws(full["correct"] / np.maximum(full["n"], 1), full["bin_weight"],
                                 np.where(full["n"] > 0, full["score_sum"] / np.maximum(full["n"], 1), 0.0)))
    freq = np.empty(int(reps))
    plug = np.empty(int(reps))
    for r in range(int(reps)):
        labeled = np.zeros(s.size, bool)
        labeled[rng.choice(s.size, size=int(n_labeled), replace=False)] = True
        b = pool_bins(s, y, labeled, bins)
        occ = b["n"] > 0
        freq[r] = np.sum(b["n"][occ] / b["n"].sum() * np.abs(b["correct"][occ] - b["score_sum"][occ]) / b["n"][occ])
        alpha, beta = beta_prior("informed", b["bin_score"].size, float(pseudocount), mean=b["bin_score"])
        plug[r] = plugin_ece(b["n"], b["correct"], alpha, beta, b["bin_weight"], b["bin_score"])
    return {"truth": truth, "frequentist": freq, "plugin": plug,
            "error_frequentist": np.abs(freq - truth), "error_plugin": np.abs(plug - truth)}
