"""The result of :func:`pbassess.compare_groups` and :func:`pbassess.compare_models`."""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.results.base import AssessmentResult
from pbassess.stats import hdi_from_draws

__all__ = ["ComparisonResult"]


def _rope_probabilities(diff_draws: Any, rope: float) -> np.ndarray:
    d = np.asarray(diff_draws, dtype=float)
    below = (d < -rope).mean(axis=-1)
    above = (d > rope).mean(axis=-1)
    return np.stack([below, 1.0 - below - above, above], axis=-1)


class ComparisonResult(AssessmentResult):
    """Posterior of a metric per group (or model) and of every pairwise difference.

    Posterior variables: ``value`` (chain, draw, group) and ``difference`` (chain, draw, pair),
    with the groups of each pair in ``counts["pair_a"]`` and ``counts["pair_b"]``; the difference
    is ``a - b``. :meth:`loo` is exact (closed form) for the conjugate models: the Beta cells of a
    group comparison and the paired Dirichlet-categorical of a model comparison
    (:func:`pbassess.compare_models`; ``counts["joint"]`` holds each pair's joint outcomes).

    Parameters
    ----------
    posterior, counts, prior, data_summary, engine, inference, ci_prob, idata, diagnostics, options, model
        As for :class:`~pbassess.results.AssessmentResult`. Results are built by the assessment
        functions and by :func:`pbassess.load_result`; there is seldom a reason to construct one.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.assess import compare_groups
    >>> p = Predictions.from_top1(["a"] * 40, [0.9] * 40, ["a"] * 35 + ["b"] * 5,
    ...                           groups={"site": ["x"] * 20 + ["y"] * 20})
    >>> res = compare_groups(p, "site", rope=0.05, seed=0)  # x: 20 of 20 right, y: 15 of 20
    >>> res.groups, res.rope, res.posterior["difference"].dims
    (['x', 'y'], 0.05, ('chain', 'draw', 'pair'))
    >>> pair = res.pairs_summary().iloc[0]
    >>> pair["a"], pair["b"], bool(pair["p_greater"] > 0.95)
    ('x', 'y', True)
    """

    metric = "compare"

    def _spec(self):
        """The fit's spec rebuilt from its DataTree (exact LOO, ``model``): the paired Dirichlet-categorical
        of a model comparison, or the Beta cells of a group (or ECE) comparison; None for a user's PyMC prior."""
        from pbassess.pymc_models.accuracy import BetaBernoulliSpec
        from pbassess.pymc_models.comparison import PairedComparisonSpec

        if self.prior.get("kind") == "pymc":
            return None
        paired = PairedComparisonSpec.from_tree(self.idata)
        return paired if paired is not None else BetaBernoulliSpec.from_tree(self.idata, var_name="accuracy")

    def _build_model(self):
        spec = self._spec()
        return None if spec is None else spec.model()

    @property
    def groups(self) -> list[str]:
        return [str(g) for g in self.posterior["group"].to_numpy()]

    @property
    def rope(self) -> float:
        return float(self.options.get("rope", 0.0))

    @property
    def compared_metric(self) -> str:
        return str(self.options.get("metric", "accuracy"))

    def _pairs(self) -> list[tuple[str, str]]:
        source = self.counts if "pair_a" in self.counts else self.posterior  # (files of older versions: posterior)
        return list(zip(source["pair_a"].to_numpy().astype(str).tolist(),
                        source["pair_b"].to_numpy().astype(str).tolist(), strict=True))

    def group_summary(self):
        """One row per group: mean, HDI, labeled trials and successes, pool size."""
        import pandas as pd

        d = self.draws("value")
        hdi = hdi_from_draws(d, self.ci_prob, axis=0)
        return pd.DataFrame({
            "group": self.groups, "mean": d.mean(axis=0), "hdi_low": hdi[:, 0], "hdi_high": hdi[:, 1],
            "n": self.counts["n"].to_numpy(), "successes": self.counts["successes"].to_numpy(),
            "n_items": self.counts["n_items"].to_numpy(),
        })

    def pairs_summary(self):
        """One row per pair: difference mean, HDI, P(d > 0) and the ROPE probabilities."""
        import pandas as pd

        if "pair" not in self.posterior.dims or self.posterior.sizes["pair"] == 0:
            return pd.DataFrame(columns=["a", "b", "diff_mean", "hdi_low", "hdi_high", "p_greater",
                                         "p_below", "p_inside", "p_above"])
        d = self.draws("difference")
        hdi = hdi_from_draws(d, self.ci_prob, axis=0)
        rope = _rope_probabilities(d.T, self.rope)
        pairs = self._pairs()
        return pd.DataFrame({
            "a": [a for a, _ in pairs], "b": [b for _, b in pairs], "diff_mean": d.mean(axis=0),
            "hdi_low": hdi[:, 0], "hdi_high": hdi[:, 1], "p_greater": (d > 0).mean(axis=0),
            "p_below": rope[:, 0], "p_inside": rope[:, 1], "p_above": rope[:, 2],
        })

    def summary(self):
        """The group table (see :meth:`group_summary`); ``attrs["pairs"]`` holds :meth:`pairs_summary`."""
        table = self.group_summary()
        table.attrs["pairs"] = self.pairs_summary()
        table.attrs["metric"] = self.compared_metric
        table.attrs["rope"] = self.rope
        return self.annotate(table)

    def sentence(self) -> str:
        groups = self.group_summary()
        pairs = self.pairs_summary()
        pct = int(round(self.ci_prob * 100))
        what = self.compared_metric
        parts = ", ".join(f"{g} {m:.3f}" for g, m in zip(groups["group"], groups["mean"], strict=True))
        text = f"{what} by {self.options.get('by', 'group')}: {parts}"
        if len(pairs):
            row = pairs.iloc[int(np.argmax(np.abs(pairs["diff_mean"].to_numpy())))]
            text += (f"; {'largest difference ' if len(pairs) > 1 else ''}{row['a']} - {row['b']} = "
                     f"{row['diff_mean']:+.3f} ({pct}% HDI {row['hdi_low']:+.3f} to {row['hdi_high']:+.3f}), "
                     f"P(> 0) = {row['p_greater']:.2f}, P(inside +-{self.rope:g}) = {row['p_inside']:.2f}")
        return self.qualify(text + ".")

    def to_json(self) -> dict[str, Any]:
        """The CLI contract: ``{"groups", "mean", "hdi", "pairs": [{"a", "b", "diff_mean",
        "p_greater", "rope": [below, inside, above]}]}`` plus ``metric`` ("compare"),
        ``compared_metric``, ``inference``, ``ci_prob``, ``diagnostics`` and ``sentence``."""
        groups = self.group_summary()
        pairs = self.pairs_summary()
        return self.with_envelope({
            "metric": self.metric,
            "compared_metric": self.compared_metric,
            "engine": self.engine,
            "groups": groups["group"].tolist(),
            "mean": groups["mean"].tolist(),
            "hdi": groups[["hdi_low", "hdi_high"]].to_numpy().tolist(),
            "pairs": [
                {"a": row.a, "b": row.b, "diff_mean": float(row.diff_mean), "p_greater": float(row.p_greater),
                 "rope": [float(row.p_below), float(row.p_inside), float(row.p_above)]}
                for row in pairs.itertuples()
            ],
        })

    def plot(self, **kwargs: Any):
        """Metric per group and differences per pair with the ROPE band."""
        from pbassess.plots.compare import plot_comparison

        return plot_comparison(self, **kwargs)
