"""The result of :func:`pbassess.assess_calibration`: reliability diagram, ECE, classwise ECE and bias."""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.errors import NotFittedError
from pbassess.results._format import names_phrase, percent, tied_leaders
from pbassess.results.base import AssessmentResult
from pbassess.stats import beta_hdi, hdi_from_draws, prob_extreme

__all__ = ["CalibrationResult"]


class CalibrationResult(AssessmentResult):
    """Posterior reliability diagram, ECE and (optionally) classwise ECE and bias.

    Posterior variables: ``accuracy`` (bin), ``ece``, and with ``classwise``:
    ``classwise_ece`` (class), ``class_accuracy`` (class), ``bias`` (class). The per-cell
    accuracies of the classwise ECE are not stored (their exact Beta parameters are in
    ``counts``; the MCMC engine keeps them in ``idata``). With the conjugate engine, bin
    accuracies and biases are reported with their exact Beta means and HDIs; ECEs always
    come from the draws.

    Parameters
    ----------
    posterior, counts, prior, data_summary, engine, inference, ci_prob, idata, diagnostics, options, model
        As for :class:`~pbassess.results.AssessmentResult`. Results are built by the assessment
        functions and by :func:`pbassess.load_result`; there is seldom a reason to construct one.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.assess import assess_calibration
    >>> p = Predictions.from_top1(["a", "b"] * 50, [0.95, 0.65] * 50, ["a", "a"] * 50)
    >>> res = assess_calibration(p, bins=4, seed=0)
    >>> list(res.posterior.data_vars)
    ['accuracy', 'ece', 'classwise_ece', 'class_accuracy', 'bias']
    >>> s = res.ece_summary()  # frequentist ECE: |0.5 - 0.95| / 2 + |0.5 - 0.65| / 2
    >>> round(float(s["frequentist"]), 3), int(s["n_labeled"]), bool(s["hdi_low"] < s["mean"] < s["hdi_high"])
    (0.35, 100, True)
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
            if self.inference == "conjugate":
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
        return self.annotate(pd.DataFrame(
            {
                "bin_low": e[:-1], "bin_high": e[1:],
                "n_pool": c["n_pool"].to_numpy().astype(int), "n_labeled": n_lab.astype(int),
                "mean_score": c["mean_score"].to_numpy(),
                "accuracy_mean": mean, "accuracy_hdi_low": hdi[:, 0], "accuracy_hdi_high": hdi[:, 1],
                "frequentist_accuracy": freq,
            },
            index=pd.Index(labels, name="bin"),
        ))

    def ece_summary(self):
        """The ECE posterior: mean, sd, HDI (``hdi_low``, ``hdi_high``; mass ``ci_prob``) and the frequentist ECE
        (a pandas Series)."""
        import pandas as pd

        d = self.draws("ece")
        lo, hi = hdi_from_draws(d, self.ci_prob)
        return pd.Series(
            {"mean": float(d.mean()), "sd": float(d.std()), "hdi_low": float(lo), "hdi_high": float(hi),
             "frequentist": self.frequentist_ece,
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
        if self.inference == "conjugate":
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
        """The ECE posterior next to the frequentist ECE, and the most miscalibrated class (or the tied ones)."""
        e = self.ece_summary()
        pct = percent(self.ci_prob)
        n_lab = int(e["n_labeled"])
        if n_lab == 0:
            return self.qualify(f"With no labeled items the expected calibration error is only its prior: posterior "
                                f"mean {e['mean']:.3f} ({pct} HDI {e['hdi_low']:.3f}-{e['hdi_high']:.3f}).")
        text = (f"The expected calibration error is {e['mean']:.3f} ({pct} HDI {e['hdi_low']:.3f}-{e['hdi_high']:.3f}; "
                f"frequentist {e['frequentist']:.3f} from {n_lab:,} labeled items)")
        if self.has_classwise:
            table = self.classwise_summary()
            p_most = table["p_most_miscalibrated"].to_numpy()
            tied = tied_leaders(p_most)
            if tied.size > 1:
                text += (f", and {tied.size} predicted classes are tied for most miscalibrated: "
                         f"{names_phrase([table.index[t] for t in tied])} (each with probability about "
                         f"{p_most[tied].mean():.2f} of being the worst)")
            else:
                worst = table["p_most_miscalibrated"].idxmax()
                row = table.loc[worst]
                text += (f", and the most miscalibrated predicted class is {worst!r} (ECE {row['ece_mean']:.3f}, "
                         f"probability {row['p_most_miscalibrated']:.2f} of being the worst)")
        return self.qualify(text + ".")

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
        out.update(self._extra_json())
        return self.with_envelope(out)

    def _saved_nodes(self):
        """As :meth:`AssessmentResult._saved_nodes`, with the item-level JSON entries computed first."""
        self._resolve_item_level_json()
        return super()._saved_nodes()

    def _resolve_item_level_json(self) -> None:
        """Replace the lazy item-level entries (:class:`~pbassess.calibration.extras.ItemLevelJson`) by their values."""
        stored = self.options.get("item_level_json")
        if stored is not None and callable(getattr(stored, "resolve", None)):
            self.options["item_level_json"] = stored.resolve()

    def _extra_json(self) -> dict[str, Any]:
        """MCE, ACE, RMSCE, debiased / smooth / plug-in ECE and P(ECE < eps) (:mod:`pbassess.calibration.extras`)."""
        from pbassess.calibration.extras import calibration_json_extras

        extras = calibration_json_extras(self)
        for key, value in self.options.get("item_level_json", {}).items():  # item-level values kept at fit time
            if extras.get(key) is None:
                extras[key] = value
        return extras

    def _spec(self):
        from pbassess.pymc_models.calibration import CalibrationSpec

        return CalibrationSpec.from_tree(self.idata)

    def _build_model(self):
        from pbassess.pymc_models.calibration import CLASSWISE_KEYS, reliability_model

        c = self.counts
        block = None
        if self.has_classwise:
            names = {"class_bin_n": "class_bin_n", "class_bin_correct": "class_bin_correct"}
            block = {key: c[names.get(key, key)].to_numpy() for key in CLASSWISE_KEYS}
        return reliability_model(c["n_labeled"].to_numpy(), c["correct"].to_numpy(), c["prior_alpha"].to_numpy(),
                                 c["prior_beta"].to_numpy(), c["bin_weight"].to_numpy(), c["bin_score"].to_numpy(),
                                 classwise=block, bin_coords=list(c["bin"].to_numpy()),
                                 class_coords=self.classes if self.has_classwise else None)

    def plot(self, **kwargs: Any):
        """Bayesian reliability diagram (:func:`pbassess.plots.calibration.plot_reliability`)."""
        from pbassess.plots.calibration import plot_reliability

        return plot_reliability(self, **kwargs)


def _num(value: Any) -> float | None:
    """A float, or None for NaN (JSON has no NaN)."""
    v = float(value)
    return None if np.isnan(v) else v
