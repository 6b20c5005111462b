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

from pbassess.assess.accuracy import check_common, check_pseudocount, percent
from pbassess.constants import CI_PROB, DEFAULT_BINS, DEFAULT_DRAWS, DEFAULT_PSEUDOCOUNT
from pbassess.data.predictions import Predictions
from pbassess.errors import ConfigError, NotFittedError
from pbassess.results.base import AssessmentResult, mcmc_diagnostics
from pbassess.stats import (
    as_generator,
    beta_draws,
    beta_hdi,
    beta_posterior,
    beta_prior,
    bin_edges,
    bin_index,
    binned_counts,
    ece_from_draws,
    frequentist_ece,
    hdi_from_draws,
    prob_extreme,
)

__all__ = ["CalibrationResult", "assess_calibration"]


def _edges(scores: np.ndarray, bins: Any, binning: str) -> np.ndarray:
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
        if binning not in ("uniform", "quantile"):
            raise ConfigError(f"unknown binning {binning!r} (choose 'uniform' or 'quantile')")
        return bin_edges(scores, n_bins, binning)
    try:
        edges = np.asarray(bins, dtype=float)
    except (TypeError, ValueError):
        raise ConfigError("bins: explicit edges must be numbers") from None
    if edges.ndim != 1 or not np.all(np.isfinite(edges)):
        raise ConfigError("bins: explicit edges must be a finite one-dimensional list")
    return bin_edges(bins=edges)


def _mean_or(sums: np.ndarray, counts: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    return np.where(counts > 0, sums / np.maximum(counts, 1), fallback)


def _calibration_counts(preds: Predictions, edges: np.ndarray, pc: float, classwise: bool) -> dict[str, np.ndarray]:
    """All the sufficient statistics and prior parameters (plain arrays)."""
    scores = preds.confidence
    labeled = preds.labeled
    n_bins = edges.size - 1
    centre = (edges[:-1] + edges[1:]) / 2
    pool = binned_counts(scores, np.zeros(scores.shape, dtype=bool), edges)
    lab = binned_counts(scores[labeled], preds.correct[labeled], edges)
    n_items = scores.shape[0]
    bin_score = _mean_or(pool["score_sum"], pool["n"], centre)
    alpha, beta = beta_prior("informed", n_bins, pc, mean=bin_score)
    out = {
        "edges": edges, "n_pool": pool["n"], "score_sum_pool": pool["score_sum"],
        "n_labeled": lab["n"], "correct": lab["correct"], "score_sum_labeled": lab["score_sum"],
        "bin_weight": pool["n"] / n_items, "bin_score": bin_score,
        "mean_score": _mean_or(pool["score_sum"], pool["n"], np.full(n_bins, np.nan)),
        "prior_alpha": alpha, "prior_beta": beta,
        "frequentist_ece": np.asarray(frequentist_ece(lab["n"], lab["correct"], lab["score_sum"])),
    }
    if not classwise:
        return out
    n_classes = preds.n_classes
    cell = preds.predicted * n_bins + bin_index(scores, edges)
    size = n_classes * n_bins
    cb_pool = np.bincount(cell, minlength=size).reshape(n_classes, n_bins)
    cb_score_sum = np.bincount(cell, weights=scores, minlength=size).reshape(n_classes, n_bins)
    cb_n = np.bincount(cell[labeled], minlength=size).reshape(n_classes, n_bins)
    cb_correct = np.bincount(cell[labeled], weights=preds.correct[labeled], minlength=size).reshape(n_classes, n_bins)
    cb_correct = np.round(cb_correct).astype(np.int64)
    cb_lab_score = np.bincount(cell[labeled], weights=scores[labeled], minlength=size).reshape(n_classes, n_bins)
    cb_score = _mean_or(cb_score_sum, cb_pool, np.broadcast_to(centre, (n_classes, n_bins)))
    cb_alpha, cb_beta = beta_prior("informed", size, pc, mean=cb_score.ravel())
    k_pool = cb_pool.sum(axis=1)
    k_score = _mean_or(cb_score_sum.sum(axis=1), k_pool, np.full(n_classes, scores.mean()))
    k_alpha, k_beta = beta_prior("informed", n_classes, pc, mean=k_score)
    k_n, k_correct = cb_n.sum(axis=1), cb_correct.sum(axis=1)
    k_lab_score = cb_lab_score.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        freq_bias = np.where(k_n > 0, (k_lab_score - k_correct) / np.maximum(k_n, 1), np.nan)
    out.update({
        "class_bin_n_pool": cb_pool, "class_bin_n": cb_n, "class_bin_correct": cb_correct,
        "class_bin_weight": cb_pool / np.maximum(k_pool, 1)[:, None], "class_bin_score": cb_score,
        "class_bin_alpha": cb_alpha.reshape(n_classes, n_bins), "class_bin_beta": cb_beta.reshape(n_classes, n_bins),
        "class_n_pool": k_pool, "class_n": k_n, "class_correct": k_correct, "class_score": k_score,
        "class_alpha": k_alpha, "class_beta": k_beta,
        "class_frequentist_ece": np.array([
            frequentist_ece(cb_n[c], cb_correct[c], cb_lab_score[c]) for c in range(n_classes)
        ]),
        "class_frequentist_bias": freq_bias,
    })
    return out


def assess_calibration(
    preds: Predictions,
    *,
    bins: int | Any = DEFAULT_BINS,
    binning: str = "uniform",
    pseudocount: float = DEFAULT_PSEUDOCOUNT,
    engine: str = "conjugate",
    draws: int = DEFAULT_DRAWS,
    seed: Any = None,
    ci_prob: float = CI_PROB,
    sample_kwargs: Mapping[str, Any] | None = None,
    classwise: bool = True,
) -> CalibrationResult:
    """Bayesian reliability diagram, posterior ECE, and classwise ECE and bias.

    Parameters
    ----------
    preds : Predictions
        The pool; scores are ``preds.confidence`` (top-1 probability). All pool items set the
        bin weights and mean scores; labeled items update the bin accuracies.
    bins : int or array_like
        Number of bins, or explicit edges covering [0, 1]. Scores of exactly 0 and 1 land in
        the first and last bin.
    binning : {"uniform", "quantile"}
        Equal-width bins, or equal-mass bins over the pool's scores (tied scores can merge
        quantile edges, leaving fewer bins).
    pseudocount : float
        Prior strength pc of every Beta prior ``Beta(pc * s, pc * (1 - s))``.
    engine : {"conjugate", "mcmc"}
        Exact Beta posteriors with ``draws`` Monte Carlo draws (ECE by Monte Carlo), or NUTS
        on :func:`pbassess.pymc_models.calibration.reliability_model` (ECE as a Deterministic).
    draws : int
        Monte Carlo draws of the conjugate engine.
    seed : int or numpy.random.Generator, optional
    ci_prob : float
        Credible mass of the HDIs.
    sample_kwargs : dict, optional
        ``pm.sample`` options merged over 4 chains x 1000 draws (mcmc only).
    classwise : bool
        Also compute the per-predicted-class ECE and bias.

    Returns
    -------
    CalibrationResult

    Raises
    ------
    ConfigError
        ``bins`` < 1 or bad edges, unknown binning or engine, bad pseudocount / draws / ci_prob.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.assess.calibration import assess_calibration
    >>> p = Predictions.from_top1(["a", "b"] * 50, [0.95, 0.65] * 50, ["a", "a"] * 50)
    >>> res = assess_calibration(p, bins=4, seed=0)
    >>> res.summary()["n_labeled"].tolist(), round(res.frequentist_ece, 3)
    ([0, 0, 50, 50], 0.35)
    """
    check_common(preds, engine, draws, ci_prob, sample_kwargs)
    pc = check_pseudocount(pseudocount)
    edges = _edges(preds.confidence, bins, binning)
    c = _calibration_counts(preds, edges, pc, bool(classwise))
    n_bins = edges.size - 1
    classes = list(preds.classes)
    bin_coord = np.arange(n_bins)

    counts_vars: dict[str, Any] = {
        "edges": ("edge", c["edges"]),
        **{key: ("bin", c[key]) for key in ("n_pool", "score_sum_pool", "n_labeled", "correct", "score_sum_labeled",
                                             "bin_weight", "bin_score", "mean_score", "prior_alpha", "prior_beta")},
        "frequentist_ece": ((), float(c["frequentist_ece"])),
    }
    coords: dict[str, Any] = {"bin": bin_coord, "edge": np.arange(n_bins + 1)}
    if classwise:
        for key in ("class_bin_n_pool", "class_bin_n", "class_bin_correct", "class_bin_weight", "class_bin_score",
                    "class_bin_alpha", "class_bin_beta"):
            counts_vars[key] = (("class", "bin"), c[key])
        for key in ("class_n_pool", "class_n", "class_correct", "class_score", "class_alpha", "class_beta",
                    "class_frequentist_ece", "class_frequentist_bias"):
            counts_vars[key] = ("class", c[key])
        coords["class"] = classes
    counts = xr.Dataset(counts_vars, coords=coords)

    idata = None
    diagnostics = None
    if engine == "conjugate":
        rng = as_generator(seed)
        a, b = beta_posterior(c["correct"], c["n_labeled"], c["prior_alpha"], c["prior_beta"])
        theta = beta_draws(a, b, int(draws), rng)
        ece = ece_from_draws(theta, c["bin_weight"], c["bin_score"])
        data = {"accuracy": (("chain", "draw", "bin"), theta[None]), "ece": (("chain", "draw"), ece[None])}
        if classwise:
            ca, cb = beta_posterior(c["class_bin_correct"], c["class_bin_n"], c["class_bin_alpha"], c["class_bin_beta"])
            cells = beta_draws(ca.ravel(), cb.ravel(), int(draws), rng).reshape(int(draws), len(classes), n_bins)
            class_ece = ece_from_draws(cells, c["class_bin_weight"], c["class_bin_score"])
            ka, kb = beta_posterior(c["class_correct"], c["class_n"], c["class_alpha"], c["class_beta"])
            class_acc = beta_draws(ka, kb, int(draws), rng)
            data["classwise_ece"] = (("chain", "draw", "class"), class_ece[None])
            data["class_accuracy"] = (("chain", "draw", "class"), class_acc[None])
            data["bias"] = (("chain", "draw", "class"), (c["class_score"] - class_acc)[None])
        post_coords: dict[str, Any] = {"chain": [0], "draw": np.arange(int(draws)), "bin": bin_coord}
        if classwise:
            post_coords["class"] = classes
        posterior = xr.Dataset(data, coords=post_coords)
    else:
        from pbassess.pymc_models.accuracy import sample_posterior
        from pbassess.pymc_models.calibration import CLASSWISE_KEYS, reliability_model

        block = None
        if classwise:
            block = {key: c[key] for key in CLASSWISE_KEYS}
        model = reliability_model(c["n_labeled"], c["correct"], c["prior_alpha"], c["prior_beta"], c["bin_weight"],
                                  c["bin_score"], classwise=block, bin_coords=bin_coord,
                                  class_coords=classes if classwise else None)
        idata = sample_posterior(model, seed=seed, sample_kwargs=sample_kwargs)
        keep = ["accuracy", "ece"] + (["classwise_ece", "class_accuracy", "bias"] if classwise else [])
        posterior = idata["posterior"].to_dataset()[keep]
        # Diagnose the reported quantities (cells without pool items have weight 0 in every ECE and
        # are prior-only, so they are left out).
        diagnostics = mcmc_diagnostics(idata, var_names=keep)
    options = {"bins": n_bins, "binning": binning if np.ndim(bins) == 0 else "edges", "classwise": bool(classwise),
               "draws": int(draws) if engine == "conjugate" else None}
    return CalibrationResult(
        posterior, counts, prior={"kind": "diagonal", "pseudocount": pc}, data_summary=preds.describe(),
        engine=engine, ci_prob=float(ci_prob), idata=idata, diagnostics=diagnostics, options=options,
    )


class CalibrationResult(AssessmentResult):
    """Posterior reliability diagram, ECE and (optionally) classwise ECE and bias.

    Posterior variables: ``accuracy`` (bin), ``ece``, and with ``classwise``:
    ``classwise_ece`` (class), ``class_accuracy`` (class), ``bias`` (class). The per-cell
    accuracies of the classwise ECE are not stored (their exact Beta parameters are in
    ``counts``; the MCMC engine keeps them in ``idata``). With the conjugate engine, bin
    accuracies and biases are reported with their exact Beta means and HDIs; ECEs always
    come from the draws.
    """

    metric = "calibration"

    def _cache(self) -> dict[str, Any]:
        return self.__dict__.setdefault("_cached", {})

    @property
    def edges(self) -> np.ndarray:
        """Bin edges, shape (B + 1,)."""
        return self.counts["edges"].to_numpy()

    @property
    def has_classwise(self) -> bool:
        """Whether classwise ECE and bias were computed."""
        return "classwise_ece" in self.posterior

    @property
    def classes(self) -> list[str]:
        """Class names of the classwise part."""
        self._require_classwise()
        return [str(v) for v in self.counts["class"].to_numpy()]

    @property
    def frequentist_ece(self) -> float:
        """Plug-in ECE of the labeled items (NaN without labels)."""
        return float(self.counts["frequentist_ece"])

    def _require_classwise(self) -> None:
        if not self.has_classwise:
            raise NotFittedError("classwise calibration was not computed: run assess_calibration(..., classwise=True)")

    def _exact(self, prefix: str, alpha: str, beta: str) -> tuple[np.ndarray, np.ndarray]:
        c = self.counts
        n = c["n_labeled" if prefix == "bin" else "class_n"].to_numpy()
        k = c["correct" if prefix == "bin" else "class_correct"].to_numpy()
        return c[alpha].to_numpy() + k, c[beta].to_numpy() + n - k

    def bin_accuracy(self) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean accuracy per bin and its HDI, shapes (B,) and (B, 2)."""
        if "bin_accuracy" not in self._cache():
            if self.engine == "conjugate":
                a, b = self._exact("bin", "prior_alpha", "prior_beta")
                value = (a / (a + b), beta_hdi(a, b, self.ci_prob))
            else:
                d = self.draws("accuracy")
                value = (d.mean(axis=0), hdi_from_draws(d, self.ci_prob))
            self._cache()["bin_accuracy"] = value
        return self._cache()["bin_accuracy"]

    def summary(self):
        """One row per bin: edges, pool and labeled counts, mean score, accuracy mean/HDI, frequentist accuracy."""
        import pandas as pd

        c = self.counts
        mean, hdi = self.bin_accuracy()
        n_lab = c["n_labeled"].to_numpy()
        with np.errstate(invalid="ignore", divide="ignore"):
            freq = np.where(n_lab > 0, c["correct"].to_numpy() / np.maximum(n_lab, 1), np.nan)
        e = self.edges
        labels = [f"[{lo:.4g}, {hi:.4g}{']' if b == e.size - 2 else ')'}" for b, (lo, hi) in enumerate(zip(e[:-1], e[1:], strict=True))]
        return pd.DataFrame(
            {
                "bin_low": e[:-1], "bin_high": e[1:],
                "n_pool": c["n_pool"].to_numpy().astype(int), "n_labeled": n_lab.astype(int),
                "mean_score": c["mean_score"].to_numpy(),
                "accuracy_mean": mean, "accuracy_hdi_low": hdi[:, 0], "accuracy_hdi_high": hdi[:, 1],
                "frequentist_accuracy": freq,
            },
            index=pd.Index(labels, name="bin"),
        )

    def ece_summary(self):
        """The ECE posterior: mean, sd, HDI and the frequentist ECE (a pandas Series)."""
        import pandas as pd

        d = self.draws("ece")
        lo, hi = hdi_from_draws(d, self.ci_prob)
        return pd.Series(
            {"mean": float(d.mean()), "sd": float(d.std()), "hdi_low": float(lo), "hdi_high": float(hi),
             "hdi_prob": self.ci_prob, "frequentist": self.frequentist_ece,
             "n_labeled": int(self.counts["n_labeled"].sum())},
            name="ece",
        )

    @property
    def p_most_miscalibrated(self) -> np.ndarray:
        """P(class k has the largest classwise ECE), per predicted class (0 for never-predicted classes)."""
        self._require_classwise()
        if "p_most" not in self._cache():
            valid = self.counts["class_n_pool"].to_numpy() > 0
            self._cache()["p_most"] = prob_extreme(self.draws("classwise_ece"), lowest=False, valid=valid)
        return self._cache()["p_most"]

    def classwise_summary(self):
        """One row per predicted class: counts, mean score, ECE and bias posteriors, P(most miscalibrated).

        ``bias`` = mean score - accuracy (positive: over-confident); ``*_frequentist`` are the
        plug-in values over the labeled items.
        """
        import pandas as pd

        self._require_classwise()
        if "classwise" in self._cache():
            return self._cache()["classwise"].copy()
        c = self.counts
        ece = self.draws("classwise_ece")
        ece_hdi = hdi_from_draws(ece, self.ci_prob)
        if self.engine == "conjugate":
            a, b = self._exact("class", "class_alpha", "class_beta")
            s = c["class_score"].to_numpy()
            bias_mean = s - a / (a + b)
            acc_hdi = beta_hdi(a, b, self.ci_prob)
            bias_hdi = np.stack([s - acc_hdi[:, 1], s - acc_hdi[:, 0]], axis=-1)
        else:
            bias = self.draws("bias")
            bias_mean, bias_hdi = bias.mean(axis=0), hdi_from_draws(bias, self.ci_prob)
        frame = pd.DataFrame(
            {
                "n_pool": c["class_n_pool"].to_numpy().astype(int), "n_labeled": c["class_n"].to_numpy().astype(int),
                "mean_score": c["class_score"].to_numpy(),
                "ece_mean": ece.mean(axis=0), "ece_hdi_low": ece_hdi[:, 0], "ece_hdi_high": ece_hdi[:, 1],
                "ece_frequentist": c["class_frequentist_ece"].to_numpy(),
                "bias_mean": bias_mean, "bias_hdi_low": bias_hdi[:, 0], "bias_hdi_high": bias_hdi[:, 1],
                "bias_frequentist": c["class_frequentist_bias"].to_numpy(),
                "p_most_miscalibrated": self.p_most_miscalibrated,
            },
            index=pd.Index(self.classes, name="class"),
        )
        self._cache()["classwise"] = frame
        return frame.copy()

    def sentence(self) -> str:
        """The ECE posterior next to the frequentist ECE, and the most miscalibrated class."""
        e = self.ece_summary()
        pct = percent(self.ci_prob)
        n_lab = int(e["n_labeled"])
        if n_lab == 0:
            return (f"With no labeled items the expected calibration error is only its prior: posterior mean "
                    f"{e['mean']:.3f} ({pct} HDI {e['hdi_low']:.3f}-{e['hdi_high']:.3f}).")
        text = (f"The expected calibration error is {e['mean']:.3f} ({pct} HDI {e['hdi_low']:.3f}-{e['hdi_high']:.3f}; "
                f"frequentist {e['frequentist']:.3f} from {n_lab:,} labeled items)")
        if self.has_classwise:
            table = self.classwise_summary()
            worst = table["p_most_miscalibrated"].idxmax()
            row = table.loc[worst]
            text += (f", and the most miscalibrated predicted class is {worst!r} (ECE {row['ece_mean']:.3f}, "
                     f"probability {row['p_most_miscalibrated']:.2f} of being the worst)")
        return text + "."

    def to_json(self) -> dict[str, Any]:
        """The CLI's JSON object: ``metric``, ``ece``, ``bins``, ``classwise_ece`` (plus extras).

        ``bins.n`` are labeled counts per bin (``bins.n_pool`` the pool's); empty bins have
        ``mean_score`` null. Without ``classwise`` the ``classwise_ece`` lists are empty.
        """
        e = self.ece_summary()
        table = self.summary()
        mean, hdi = self.bin_accuracy()
        out: dict[str, Any] = {
            "metric": self.metric,
            "ece": {"mean": float(e["mean"]), "hdi": [float(e["hdi_low"]), float(e["hdi_high"])],
                    "frequentist": _num(e["frequentist"]), "sd": float(e["sd"])},
            "bins": {
                "edges": [float(v) for v in self.edges],
                "n": [int(v) for v in table["n_labeled"]],
                "mean_score": [_num(v) for v in table["mean_score"]],
                "accuracy_mean": [float(v) for v in mean],
                "accuracy_hdi": [[float(lo), float(hi)] for lo, hi in hdi],
                "n_pool": [int(v) for v in table["n_pool"]],
                "correct": [int(v) for v in self.counts["correct"].to_numpy()],
            },
            "classwise_ece": {"classes": [], "mean": []},
            "hdi_prob": self.ci_prob,
            "engine": self.engine,
            "prior": self.prior,
            "diagnostics": self.diagnostics,
            "sentence": self.sentence(),
        }
        if self.has_classwise:
            cw = self.classwise_summary()
            out["classwise_ece"] = {
                "classes": self.classes,
                "mean": [float(v) for v in cw["ece_mean"]],
                "hdi": [[float(lo), float(hi)] for lo, hi in zip(cw["ece_hdi_low"], cw["ece_hdi_high"], strict=True)],
                "frequentist": [_num(v) for v in cw["ece_frequentist"]],
                "p_most_miscalibrated": [float(v) for v in cw["p_most_miscalibrated"]],
                "bias_mean": [float(v) for v in cw["bias_mean"]],
                "bias_hdi": [[float(lo), float(hi)] for lo, hi in zip(cw["bias_hdi_low"], cw["bias_hdi_high"], strict=True)],
            }
        return out

    def plot(self, **kwargs: Any):
        """Bayesian reliability diagram (:func:`pbassess.plots.calibration.plot_reliability`)."""
        from pbassess.plots.calibration import plot_reliability

        return plot_reliability(self, **kwargs)


def _num(value: Any) -> float | None:
    """A float, or None for NaN (JSON has no NaN)."""
    v = float(value)
    return None if np.isnan(v) else v
