"""The calibration metrics ``pbassess assess --metric calibration --json`` adds beside the ECE.

:func:`calibration_json_extras` reads a :class:`~pbassess.results.calibration.CalibrationResult`
(its bin counts and posterior draws of the bin accuracies) and returns:

- ``mce``, ``mean_bin_gap``, ``rmsce``: ``{"frequentist", "mean", "hdi"}``. Frequentist values
  use the labeled items in the result's bins (MCE over bins with labeled items; ``mean_bin_gap``
  the unweighted mean of the gaps over them: netcal's "ACE" under equal-width bins, 0.066 on
  SVHN with 15 bins); posteriors apply the same formula to each draw of the bin accuracies with
  the pool's mean scores (MCE and the mean bin gap over the bins holding pool items, RMSCE with
  the pool's bin shares).
- ``ace``: ``{"frequentist", "mean", "hdi", "ranges"}``, the adaptive calibration error of Nixon
  et al. (2019), "Measuring Calibration in Deep Learning": the labeled items sorted by
  confidence and split into ``R`` ranges of equal count (``R`` the result's number of bins),
  the unweighted mean of ``|accuracy_r - confidence_r|`` (top-label form,
  :func:`pbassess.calibration.metrics.adaptive_calibration_error`: 0.0109 on SVHN with 15
  ranges); the posterior applies it to independent ``Beta(2 c_r + k_r, 2 (1 - c_r) + n_r -
  k_r)`` draws of each range's accuracy (``c_r`` its mean confidence); computed from the
  labeled items like the item-level keys below (``null`` without them). Before issue 20 the key
  ``ace`` held what ``mean_bin_gap`` holds now.
- ``debiased_ece``: ``{"frequentist", "l2"}``, Kumar et al.'s L1 and L2 debiased estimates
  from the labeled bin counts (no posterior: they are bias corrections of the plug-in value).
- ``smooth_ece`` (``{"frequentist", "sigma"}``), ``top_label_ece`` (Gupta and Ramdas) and, with
  full probability vectors, ``classwise_ece_one_vs_rest`` (Kull et al.) and
  ``marginal_calibration_error`` (Kumar et al., L2), each ``{"frequentist": ...}`` over the labeled
  items in the result's bins, when the result carries them (``result.labeled_items``, set by
  :func:`~pbassess.assess.calibration.assess_calibration` for in-memory data), else ``null``.
- ``plugin_ece``: ``{"value", "frequentist"}``, the ECE of the posterior-mean bin accuracies
  (Ji et al. 2020) beside the frequentist ECE it improves on.
- ``shrinkage_ece``: ``{"mean", "hdi"}`` of the shrinkage calibration model
  (:mod:`pbassess.calibration.shrinkage`), and ``p_below``: ``{"0.01": p, "0.02": p, "0.05": p}``,
  ``P(ECE < eps)`` under it, with ``p_below_operating``, the operating characteristics of the
  rule ``P(ECE < eps) > 0.9`` at the result's labels and pool
  (:func:`pbassess.calibration.posterior.operating_characteristics`); ``calibrated``: whether ``P(ECE < 0.02) > 0.9`` with at least
  1,000 labeled items (:func:`pbassess.calibration.posterior.calibration_decision`). ``p_below_beta``
  gives the same probabilities under the independent Beta posterior of the result's ``ece``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.calibration.metrics import folded_normal_mean
from pbassess.calibration.posterior import DEFAULT_EPS, MIN_LABELS
from pbassess.calibration.shrinkage import shrinkage_posterior
from pbassess.stats import hdi_from_draws
from pbassess.stats.calibration import (
    mce_from_draws,
    mean_bin_gap_from_draws,
    plugin_ece,
    prob_below,
    rmsce_from_draws,
)

__all__ = ["ItemLevelJson", "calibration_json_extras", "frequentist_from_counts", "item_level_json", "nixon_ace"]


def _num(value: Any) -> float | None:
    v = float(value)
    return None if not np.isfinite(v) else v


def frequentist_from_counts(n: Any, correct: Any, score_sum: Any) -> dict[str, float]:
    """MCE, the mean bin gap (netcal's ACE), RMSCE and the L1/L2 debiased ECE from labeled bin counts.

    Examples
    --------
    >>> out = frequentist_from_counts([4, 4], [2, 3], [2.0, 3.6])
    >>> round(out["mce"], 3), round(out["mean_bin_gap"], 3), round(out["rmsce"], 3)
    (0.15, 0.075, 0.106)
    """
    n = np.asarray(n, dtype=float)
    k = np.asarray(correct, dtype=float)
    ssum = np.asarray(score_sum, dtype=float)
    occ = n > 0
    if not occ.any():
        return {key: float("nan") for key in ("mce", "mean_bin_gap", "rmsce", "debiased_l1", "debiased_l2")}
    w = n[occ] / n[occ].sum()
    acc = k[occ] / n[occ]
    signed = acc - ssum[occ] / n[occ]
    gap = np.abs(signed)
    two = n[occ] >= 2
    l2 = np.sum((w * (signed**2 - acc * (1 - acc) / np.where(two, n[occ] - 1, 1)))[two])
    l1 = 2 * np.sum(w * gap) - np.sum(w * folded_normal_mean(signed, np.sqrt(acc * (1 - acc) / n[occ])))
    return {"mce": float(gap.max()), "mean_bin_gap": float(gap.mean()), "rmsce": float(np.sqrt(np.sum(w * gap**2))),
            "debiased_l1": float(l1), "debiased_l2": float(np.sqrt(max(l2, 0.0)))}


def _posterior_entry(freq: float, draws: np.ndarray, ci_prob: float) -> dict[str, Any]:
    lo, hi = hdi_from_draws(draws, ci_prob)
    return {"frequentist": _num(freq), "mean": float(np.mean(draws)), "hdi": [float(lo), float(hi)]}


def calibration_json_extras(result: Any, *, eps: Any = DEFAULT_EPS, seed: Any = 0, n_draws: int = 4000,
                            oc_reps: int | None = None) -> dict[str, Any]:
    """Extra JSON keys of a calibration result (see the module docstring).

    ``oc_reps`` sets the simulations per truth of ``p_below_operating`` (default
    :data:`pbassess.calibration.posterior.OC_REPS`, 40).

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.assess.calibration import assess_calibration
    >>> p = Predictions.from_top1(["a", "b"] * 50, [0.95, 0.65] * 50, ["a", "a"] * 50)
    >>> extras = calibration_json_extras(assess_calibration(p, bins=4, seed=0), n_draws=500, oc_reps=5)
    >>> extras["mce"]["frequentist"], sorted(extras["p_below"])
    (0.65, ['0.01', '0.02', '0.05'])
    """
    c = result.counts
    n, k = c["n_labeled"].to_numpy(), c["correct"].to_numpy()
    ssum = c["score_sum_labeled"].to_numpy()
    w, s = c["bin_weight"].to_numpy(), c["bin_score"].to_numpy()
    occupied = c["n_pool"].to_numpy() > 0
    theta = result.draws("accuracy")
    freq = frequentist_from_counts(n, k, ssum)
    ci = result.ci_prob
    out: dict[str, Any] = {
        "mce": _posterior_entry(freq["mce"], mce_from_draws(theta, s, occupied), ci),
        "mean_bin_gap": _posterior_entry(freq["mean_bin_gap"], mean_bin_gap_from_draws(theta, s, occupied), ci),
        "rmsce": _posterior_entry(freq["rmsce"], rmsce_from_draws(theta, w, s), ci),
        "debiased_ece": {"frequentist": _num(freq["debiased_l1"]), "l2": _num(freq["debiased_l2"])},
        "plugin_ece": {"value": plugin_ece(n, k, c["prior_alpha"].to_numpy(), c["prior_beta"].to_numpy(), w, s),
                       "frequentist": _num(result.frequentist_ece)},
    }
    stored = (getattr(result, "options", None) or {}).get("item_level_json")
    # the lazy entries kept with the result are computed once, whichever of JSON or save asks first
    out.update(stored.resolve() if isinstance(stored, ItemLevelJson) else _item_level_values(result))
    clipped = np.clip(s, 1e-6, 1 - 1e-6)
    shrink = shrinkage_posterior(n, k, clipped, w / w.sum(), n_draws=n_draws, seed=seed)["ece"]
    lo, hi = hdi_from_draws(shrink, ci)
    p = prob_below(shrink, sorted({*np.atleast_1d(eps).tolist(), 0.02}))
    out["shrinkage_ece"] = {"mean": float(shrink.mean()), "hdi": [float(lo), float(hi)]}
    out["p_below"] = {f"{e:g}": v for e, v in p.items() if e in np.atleast_1d(eps)}
    out["p_below_operating"] = _operating(result, n, clipped, w / w.sum(), eps, seed, oc_reps)
    out["calibrated"] = bool(p[0.02] > 0.9 and n.sum() >= MIN_LABELS)
    out["p_below_beta"] = {f"{e:g}": v for e, v in prob_below(result.draws("ece"), eps).items()}
    return out


def _operating(result: Any, n: np.ndarray, score: np.ndarray, weight: np.ndarray, eps: Any, seed: Any,
               reps: int | None) -> dict:
    """``p_below_operating``: :func:`~pbassess.calibration.posterior.operating_characteristics` of the
    rule ``P(ECE < eps) > 0.9`` at the result's labeled counts and pool, computed once per result."""
    from pbassess.calibration import posterior

    cache = result.__dict__.setdefault("_cached", {}) if hasattr(result, "__dict__") else {}
    reps = posterior.OC_REPS if reps is None else int(reps)
    key = ("p_below_operating", tuple(np.atleast_1d(eps).tolist()), reps)
    if key not in cache:
        oc = posterior.operating_characteristics({"n": n, "bin_score": score, "bin_weight": weight}, eps=eps,
                                                 level=0.9, reps=reps, seed=seed)
        oc["rule"] = "P(ECE < eps) > level, shrinkage model, at these labeled counts per bin and this pool"
        oc["calibrated_needs_labels"] = MIN_LABELS
        cache[key] = oc
    return cache[key]


class ItemLevelJson(dict):
    """The item-level JSON entries of a result, computed on first read (a plain ``dict`` once read).

    :func:`~pbassess.assess.calibration.assess_calibration` keeps one with every result it fits,
    so that a saved and reloaded result (which no longer holds the items) gives the same JSON;
    the metrics (smooth, top-label, classwise one-vs-rest ECE and the marginal calibration
    error: most of the cost of a calibration assessment at 10^6 items) are only computed when
    the JSON, a save or a caller reads them. Every reading method of ``dict`` computes them
    first; :meth:`resolve` returns them as a plain ``dict``.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.assess import assess_calibration
    >>> p = Predictions.from_top1(["a", "b"] * 50, [0.95, 0.65] * 50, ["a", "a"] * 50)
    >>> lazy = item_level_json(assess_calibration(p, bins=4, seed=0))
    >>> lazy.computed, type(lazy.resolve()).__name__, lazy.computed
    (False, 'dict', True)
    """

    __slots__ = ("_result", "computed")

    def __init__(self, result: Any) -> None:
        super().__init__()
        self._result = result
        self.computed = False

    def resolve(self) -> dict[str, Any]:
        """The entries as a plain ``dict`` (computed now if not yet)."""
        if not self.computed:
            values = _item_level_values(self._result)
            dict.update(self, values)
            self.computed, self._result = True, None
        return dict(dict.items(self))

    def _ready(self) -> ItemLevelJson:
        if not self.computed:
            self.resolve()
        return self

    def __getitem__(self, key: Any) -> Any:
        return dict.__getitem__(self._ready(), key)

    def __iter__(self):
        return dict.__iter__(self._ready())

    def __len__(self) -> int:
        return dict.__len__(self._ready())

    def __contains__(self, key: Any) -> bool:
        return dict.__contains__(self._ready(), key)

    def __eq__(self, other: Any) -> bool:
        return dict.__eq__(self._ready(), other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return dict.__repr__(self._ready())

    def __reduce__(self):
        return dict, (self.resolve(),)

    def __copy__(self) -> dict[str, Any]:
        return self.resolve()

    def __deepcopy__(self, memo: dict) -> dict[str, Any]:
        import copy

        return copy.deepcopy(self.resolve(), memo)

    def get(self, key: Any, default: Any = None) -> Any:
        return dict.get(self._ready(), key, default)

    def keys(self):
        return dict.keys(self._ready())

    def values(self):
        return dict.values(self._ready())

    def items(self):
        return dict.items(self._ready())

    def copy(self) -> dict[str, Any]:
        return self.resolve()


def item_level_json(result: Any) -> ItemLevelJson:
    """The JSON entries that need the labeled items (``result.labeled_items``; ``null`` without them).

    Returned as an :class:`ItemLevelJson`, computed when first read: cheap to keep with a result
    (a few numbers once computed), so that a saved and reloaded result, which no longer holds
    the items, gives the same JSON, and free when nobody asks for them.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.assess import assess_calibration
    >>> p = Predictions.from_top1(["a", "b"] * 50, [0.95, 0.65] * 50, ["a", "a"] * 50)
    >>> out = item_level_json(assess_calibration(p, bins=4, seed=0))
    >>> sorted(out), round(out["top_label_ece"]["frequentist"], 3)  # |0.5 - 0.95| / 2 + |0.5 - 0.65| / 2
    (['ace', 'classwise_ece_one_vs_rest', 'marginal_calibration_error', 'smooth_ece', 'top_label_ece'], 0.35)
    """
    return ItemLevelJson(result)


def nixon_ace(confidence: Any, correct: Any, n_ranges: int = 15, *, ci_prob: float = 0.95, pseudocount: float = 2.0,
              n_draws: int = 4000, seed: Any = 0) -> dict[str, Any]:
    """Nixon et al.'s adaptive calibration error of labeled items, with its posterior.

    Parameters
    ----------
    confidence : array_like, shape (N,)
        Top-1 confidences of the labeled items.
    correct : array_like of bool, shape (N,)
    n_ranges : int
        Ranges of equal item count (:func:`pbassess.calibration.binning.equal_count_bins`).
    ci_prob : float
        Mass of the HDI.
    pseudocount : float
        Strength of each range's ``Beta(pc c_r, pc (1 - c_r))`` prior (``c_r`` its mean confidence).
    n_draws : int
    seed : int or numpy.random.Generator

    Returns
    -------
    dict
        ``frequentist`` (the ACE of the items), ``mean`` and ``hdi`` of its posterior, ``ranges``.

    Examples
    --------
    >>> out = nixon_ace([0.6, 0.6, 0.9, 0.9], [1, 0, 1, 1], 2)
    >>> round(out["frequentist"], 3), out["ranges"]  # (|0.5 - 0.6| + |1 - 0.9|) / 2
    (0.1, 2)
    """
    from pbassess.calibration.binning import equal_count_bins
    from pbassess.calibration.metrics import adaptive_calibration_error
    from pbassess.counting import cell_counts
    from pbassess.stats import as_generator

    s = np.asarray(confidence, dtype=float).ravel()
    y = np.asarray(correct, dtype=float).ravel()
    idx = equal_count_bins(s, int(n_ranges))
    r = int(idx.max()) + 1
    n = cell_counts(idx, r).astype(float)
    k = cell_counts(idx, r, y)
    c = np.clip(cell_counts(idx, r, s) / n, 1e-6, 1 - 1e-6)
    theta = as_generator(seed).beta(pseudocount * c + k, pseudocount * (1 - c) + n - k, size=(int(n_draws), r))
    draws = np.abs(theta - c).mean(axis=1)
    lo, hi = hdi_from_draws(draws, ci_prob)
    return {"frequentist": adaptive_calibration_error(s, y, int(n_ranges)), "mean": float(draws.mean()),
            "hdi": [float(lo), float(hi)], "ranges": r}


def _item_level_values(result: Any) -> dict[str, Any]:
    items = getattr(result, "labeled_items", None)
    out: dict[str, Any] = {"ace": None, "smooth_ece": None, "top_label_ece": None,
                           "classwise_ece_one_vs_rest": None, "marginal_calibration_error": None}
    if items is None or len(items["confidence"]) == 0:
        return out
    from pbassess.calibration.metrics import (
        classwise_ece,
        marginal_calibration_error,
        top_label_ece,
    )
    from pbassess.calibration.smooth import smooth_ece

    edges = result.edges
    out["ace"] = nixon_ace(items["confidence"], items["correct"], edges.size - 1, ci_prob=result.ci_prob)
    value, sigma = smooth_ece(items["confidence"], items["correct"], return_sigma=True)
    out["smooth_ece"] = {"frequentist": float(value), "sigma": float(sigma)}
    n_classes = int(items["probs"].shape[1]) if items["probs"] is not None else int(items["predicted"].max()) + 1
    out["top_label_ece"] = {"frequentist": top_label_ece(items["predicted"], items["confidence"], items["correct"],
                                                         n_classes, edges)}
    if items["probs"] is not None:
        out["classwise_ece_one_vs_rest"] = {"frequentist": classwise_ece(items["probs"], items["labels"], edges)}
        out["marginal_calibration_error"] = {
            "frequentist": marginal_calibration_error(items["probs"], items["labels"], edges)}
    return out
