"""Calibration: a Bayesian reliability diagram, the posterior of the ECE, and classwise ECE and bias.

:func:`assess_calibration` bins the pool by the model's top-1 confidence and gives each bin's
accuracy ``theta_b`` a Beta prior centred on the diagonal, ``Beta(pc * s_b, pc * (1 - s_b))``
with ``s_b`` the mean pool score in the bin (the bin centre when the bin is empty), updated
with the labeled items of the bin. The expected calibration error of each posterior draw is

    ECE = sum_b p_b |theta_b - s_b|

with ``p_b`` the share of the *whole pool* in bin b, so unlabeled items count through their
scores. Within each predicted class the same edges give the classwise ECE
``ECE_k = sum_b p_kb |theta_kb - s_kb|`` (``p_kb``: share of class k's pool items in bin b),
and the class's calibration bias is ``bias_k = s_k - theta_k`` with ``s_k`` the class's mean
pool score and ``theta_k`` its accuracy, ``Beta(pc * s_k, pc * (1 - s_k))`` a priori (positive
bias = over-confident).

Without any labeled item the result is prior-only (a valid Bayesian answer: "we don't know
yet"); its frequentist ECE is undefined and reported as NaN (``null`` in JSON).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import xarray as xr

from pbassess.assess._common import (
    as_pool,
    check_draw_memory,
    check_options,
    check_pseudocount,
)
from pbassess.constants import CI_PROB, DEFAULT_BINS, DEFAULT_PSEUDOCOUNT
from pbassess.errors import ConfigError
from pbassess.inference import check_count, check_memory, fit, total_draws
from pbassess.pymc_models.calibration import CalibrationSpec
from pbassess.results.calibration import CalibrationResult
from pbassess.stats import (
    beta_prior,
    bin_edges,
    frequentist_ece,
)

__all__ = ["CalibrationResult", "assess_calibration"]

#: Classwise cell draws (draws x classes x bins) are made in chunks of at most this many floats (128 MiB).
CHUNK_FLOATS: int = 2**24


def _edges(preds: Any, bins: Any, binning: str) -> np.ndarray:
    if isinstance(bins, bool):
        raise ConfigError(f"bins must be a number of bins or a list of edges, got {bins!r}")
    if np.ndim(bins) == 0:
        if isinstance(bins, (float, np.floating)) and not float(bins).is_integer():
            raise ConfigError(f"bins must be a whole number of bins, got {bins!r}")
        try:
            n_bins = int(bins)
        except (TypeError, ValueError):
            raise ConfigError(f"bins must be a number of bins or a list of edges, got {bins!r}") from None
        if n_bins < 1:
            raise ConfigError(f"bins must be at least 1, got {bins!r}")
        check_count(n_bins, "bins")
        if binning not in ("uniform", "quantile"):
            raise ConfigError(f"unknown binning {binning!r} (choose 'uniform' or 'quantile')")
        check_memory(16.0 * n_bins, f"calibration with {n_bins:,} bins", "use fewer bins (e.g. bins=15)")
        if binning == "quantile" and getattr(preds, "is_lazy", False):
            from pbassess.counting import equal_mass_edges

            return equal_mass_edges(preds, n_bins)
        return bin_edges(preds.confidence if binning == "quantile" else None, n_bins, binning)
    try:
        edges = np.asarray(bins, dtype=float)
    except (TypeError, ValueError):
        raise ConfigError("bins: explicit edges must be numbers") from None
    if edges.ndim != 1 or not np.all(np.isfinite(edges)):
        raise ConfigError("bins: explicit edges must be a finite one-dimensional list")
    return bin_edges(bins=edges)


def _mean_or(sums: np.ndarray, counts: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    return np.where(counts > 0, sums / np.maximum(counts, 1), fallback)


def _calibration_counts(preds: Any, edges: np.ndarray, pc: float, classwise: bool) -> dict[str, np.ndarray]:
    """All the sufficient statistics (from :func:`pbassess.counting.count_cells`) and prior parameters."""
    from pbassess.counting import count_cells

    cells = count_cells(preds, ("predicted", "bin") if classwise else ("bin",), bin_edges=edges)
    marginal = cells.sum("predicted") if classwise else cells
    n_bins = edges.size - 1
    centre = (edges[:-1] + edges[1:]) / 2
    pool_n, pool_sum = marginal["n_pool"].to_numpy(), marginal["score_sum_pool"].to_numpy()
    lab_n, lab_k, lab_sum = marginal["n"].to_numpy(), marginal["correct"].to_numpy(), marginal["score_sum"].to_numpy()
    bin_score = _mean_or(pool_sum, pool_n, centre)
    alpha, beta = beta_prior("informed", n_bins, pc, mean=bin_score)
    out = {
        "edges": edges, "n_pool": pool_n, "score_sum_pool": pool_sum,
        "n_labeled": lab_n, "correct": lab_k, "score_sum_labeled": lab_sum,
        "bin_weight": pool_n / max(int(pool_n.sum()), 1), "bin_score": bin_score,
        "mean_score": _mean_or(pool_sum, pool_n, np.full(n_bins, np.nan)),
        "prior_alpha": alpha, "prior_beta": beta,
        "frequentist_ece": np.asarray(frequentist_ece(lab_n, lab_k, lab_sum)),
    }
    if classwise:
        out.update(_classwise_counts(cells, centre, pc, float(pool_sum.sum() / max(int(pool_n.sum()), 1))))
    return out


def _classwise_counts(cells: xr.Dataset, centre: np.ndarray, pc: float, pool_mean: float) -> dict[str, np.ndarray]:
    """Per predicted class x bin counts, priors and frequentist ECE / bias."""
    cb_pool, cb_score_sum = cells["n_pool"].to_numpy(), cells["score_sum_pool"].to_numpy()
    cb_n, cb_correct, cb_lab_score = cells["n"].to_numpy(), cells["correct"].to_numpy(), cells["score_sum"].to_numpy()
    n_classes, n_bins = cb_pool.shape
    cb_score = _mean_or(cb_score_sum, cb_pool, np.broadcast_to(centre, (n_classes, n_bins)))
    cb_alpha, cb_beta = beta_prior("informed", n_classes * n_bins, pc, mean=cb_score.ravel())
    k_pool = cb_pool.sum(axis=1)
    k_score = _mean_or(cb_score_sum.sum(axis=1), k_pool, np.full(n_classes, pool_mean))
    k_alpha, k_beta = beta_prior("informed", n_classes, pc, mean=k_score)
    k_n, k_correct, k_lab_score = cb_n.sum(axis=1), cb_correct.sum(axis=1), cb_lab_score.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        freq_bias = np.where(k_n > 0, (k_lab_score - k_correct) / np.maximum(k_n, 1), np.nan)
    return {
        "class_bin_n_pool": cb_pool, "class_bin_n": cb_n, "class_bin_correct": cb_correct,
        "class_bin_weight": cb_pool / np.maximum(k_pool, 1)[:, None], "class_bin_score": cb_score,
        "class_bin_alpha": cb_alpha.reshape(n_classes, n_bins), "class_bin_beta": cb_beta.reshape(n_classes, n_bins),
        "class_n_pool": k_pool, "class_n": k_n, "class_correct": k_correct, "class_score": k_score,
        "class_alpha": k_alpha, "class_beta": k_beta,
        "class_frequentist_ece": np.array([frequentist_ece(cb_n[c], cb_correct[c], cb_lab_score[c])
                                           for c in range(n_classes)]),
        "class_frequentist_bias": freq_bias,
    }

def assess_calibration(
    preds: Any,
    *,
    bins: int | Any = DEFAULT_BINS,
    binning: str = "uniform",
    pseudocount: float = DEFAULT_PSEUDOCOUNT,
    ci_prob: float = CI_PROB,
    seed: Any = None,
    inference: str | None = None,
    sample_kwargs: Mapping[str, Any] | None = None,
    draws: int | None = None,
    classwise: bool = True,
    prior: str = "diagonal",
    labels: Any = None,
) -> CalibrationResult:
    r"""Bayesian reliability diagram, posterior ECE, and classwise ECE and bias.

    Parameters
    ----------
    preds : Predictions, pandas.DataFrame or arrays
        The pool (anything :func:`pbassess.data.as_predictions` accepts); scores are ``preds.confidence`` (top-1 probability). All pool items set the
        bin weights and mean scores; labeled items update the bin accuracies.
    bins : int or array_like
        Number of bins, or explicit edges covering [0, 1]. Scores of exactly 0 and 1 land in
        the first and last bin.
    binning : {"uniform", "quantile"}
        Equal-width bins, or equal-mass bins over the pool's scores (tied scores can merge
        quantile edges, leaving fewer bins).
    pseudocount : float
        Prior strength pc of every Beta prior ``Beta(pc * s, pc * (1 - s))``.
    inference : {"conjugate", "nuts"}
        Exact Beta posteriors (ECE by Monte Carlo), or NUTS on
        :func:`pbassess.pymc_models.calibration.reliability_model` (ECE as a Deterministic;
        ``"mcmc"`` is an old spelling).
    draws : int, optional
        Posterior draws per chain (4 chains), in both inferences; default 1000 (classwise
        cells are drawn in chunks so memory stays bounded).
    seed : int or numpy.random.Generator, optional
    ci_prob : float
        Credible mass of the HDIs.
    sample_kwargs : dict, optional
        ``pm.sample`` options merged over 4 chains x 1000 draws (nuts only).
    classwise : bool
        Also compute the per-predicted-class ECE and bias.
    prior : {"diagonal"}
        The Beta prior of every bin centred on the diagonal (the only calibration prior).

    labels : array_like, optional
        As in :func:`pbassess.assess_accuracy`.

    Returns
    -------
    CalibrationResult

    Raises
    ------
    ConfigError
        ``bins`` < 1 or bad edges, unknown binning or inference, bad pseudocount / draws /
        ci_prob; sizes that would not fit in memory (say which option to change).

    Notes
    -----
    Bin :math:`b` holds a share :math:`w_b` of the pool with mean score :math:`s_b`; :math:`y_b` of
    its :math:`n_b` labeled items are correct. Each bin's accuracy has a prior centred on the
    diagonal and the ECE is a function of the bin accuracies:

    .. math::

       \theta_b \sim \mathrm{Beta}\big(c\, s_b,\; c\,(1 - s_b)\big), \qquad
       y_b \mid \theta_b \sim \mathrm{Binomial}(n_b, \theta_b), \qquad
       \mathrm{ECE} = \sum_b w_b\, \lvert \theta_b - s_b \rvert,

    so each posterior draw of :math:`\theta` gives a draw of the ECE (:math:`c` the ``pseudocount``).
    The classwise ECE of predicted class :math:`k` is
    :math:`\sum_b w_{kb} \lvert \theta_{kb} - s_{kb} \rvert` over the cells of class :math:`k`
    (:math:`w_{kb}` the share of the class's pool items in bin :math:`b`, same prior and likelihood
    per cell), and its bias is :math:`\bar s_k - \theta_k` with :math:`\theta_k` the class accuracy.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.assess.calibration import assess_calibration
    >>> p = Predictions.from_top1(["a", "b"] * 50, [0.95, 0.65] * 50, ["a", "a"] * 50)
    >>> res = assess_calibration(p, bins=4, seed=0)
    >>> res.summary()["n_labeled"].tolist(), round(res.frequentist_ece, 3)
    ([0, 0, 50, 50], 0.35)
    """
    inference, draws, ci_prob, sample_kwargs = check_options(inference, draws, ci_prob, sample_kwargs)
    if prior not in ("diagonal", "uniform"):
        raise ConfigError(f"calibration uses its per-bin prior centred on the diagonal, got prior={prior!r}")
    preds = as_pool(preds) if labels is None else as_pool(preds, labels=labels)
    pc = check_pseudocount(pseudocount)
    edges = _edges(preds, bins, binning)
    n_bins, n_classes = edges.size - 1, preds.n_classes if classwise else 0
    total = total_draws(inference, draws, sample_kwargs)
    _check_sizes(total, n_bins, n_classes, inference)
    c = _calibration_counts(preds, edges, pc, bool(classwise))
    classes = list(preds.classes)
    counts = _counts_dataset(c, classes if classwise else None)
    spec = CalibrationSpec(c, classes if classwise else None, observations=_observations(preds, edges))
    # every posterior and prior variable is kept (values, sampling coordinate, log prior): ~5 copies a cell
    cells = n_bins + (spec.occupied.size + 3 * n_classes if classwise else 0)
    check_draw_memory(total, cells, f"calibration with {n_bins:,} bins" + (
        f" and {spec.occupied.size:,} occupied class x bin cells (classwise)" if classwise else ""),
        "use fewer draws (--draws), fewer bins or classwise=False", copies=5)
    fitted = fit(spec, inference=inference, draws=draws, seed=seed, sample_kwargs=sample_kwargs)
    keep = ["accuracy", "ece"] + (["classwise_ece", "class_accuracy", "bias"] if classwise else [])
    options = {"bins": n_bins, "binning": binning if np.ndim(bins) == 0 else "edges", "classwise": bool(classwise),
               "draws": draws}
    result = CalibrationResult(
        fitted.idata["posterior"].to_dataset()[keep], counts, prior={"kind": "diagonal", "pseudocount": pc},
        data_summary=preds.describe(), inference=inference, ci_prob=ci_prob, idata=fitted.idata,
        diagnostics=fitted.diagnostics, options=options, model=fitted.sampled_model,
    )
    if not getattr(preds, "is_lazy", False):  # item-level metrics of the JSON (smooth ECE, ...) need the labeled items
        lab = preds.labeled
        lab = slice(None) if lab.all() else lab  # all labeled: the pool's (read-only) arrays, not copies
        result.labeled_items = {"confidence": preds.confidence[lab], "correct": preds.correct[lab],
                                "predicted": preds.predicted[lab], "labels": preds.labels[lab],
                                "probs": None if preds.probs is None else preds.probs[lab]}
        # Kept with the result so that a saved and reloaded result gives the same JSON.
        from pbassess.calibration.extras import item_level_json

        result.options["item_level_json"] = item_level_json(result)
    return result


def _check_sizes(total_draws: int, n_bins: int, n_classes: int, inference: str) -> None:
    """Refuse, in one line, a calibration whose draws would not fit in memory."""
    what = f"calibration with {n_bins:,} bins" + (f" and {n_classes:,} classes (classwise)" if n_classes else "")
    if inference == "nuts":
        params = n_bins + n_classes * (n_bins + 1)
        check_draw_memory(total_draws, params, what, "use fewer bins, classwise=False or inference='conjugate'",
                          copies=4)
        return
    check_draw_memory(total_draws, 3 * n_bins + 4 * n_classes, what,
                      "use fewer bins (--bins 15), fewer draws (--draws) or classwise=False", copies=1)


def _counts_dataset(c: dict[str, np.ndarray], classes: list[str] | None) -> xr.Dataset:
    n_bins = c["edges"].size - 1
    variables: dict[str, Any] = {
        "edges": ("edge", c["edges"]),
        **{key: ("bin", c[key]) for key in ("n_pool", "score_sum_pool", "n_labeled", "correct", "score_sum_labeled",
                                             "bin_weight", "bin_score", "mean_score", "prior_alpha", "prior_beta")},
        "frequentist_ece": ((), float(c["frequentist_ece"])),
    }
    coords: dict[str, Any] = {"bin": np.arange(n_bins), "edge": np.arange(n_bins + 1)}
    if classes is not None:
        for key in ("class_bin_n_pool", "class_bin_n", "class_bin_correct", "class_bin_weight", "class_bin_score",
                    "class_bin_alpha", "class_bin_beta"):
            variables[key] = (("class", "bin"), c[key])
        for key in ("class_n_pool", "class_n", "class_correct", "class_score", "class_alpha", "class_beta",
                    "class_frequentist_ece", "class_frequentist_bias"):
            variables[key] = ("class", c[key])
        coords["class"] = classes
    return xr.Dataset(variables, coords=coords)


def _observations(preds: Any, edges: np.ndarray):
    """Each labeled item's confidence bin and correctness, or None for a lazy pool."""
    from pbassess.counting import assign_bins
    from pbassess.inference import Observations

    return Observations.of_pool(preds, lambda p: (assign_bins(p.confidence, edges), p.correct))


# Further calibration statistics in the JSON: see CalibrationResult._extra_json (pbassess/results/calibration.py).
