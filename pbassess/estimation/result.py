"""The Bayesian estimate's own result: the NUTS fit of the confidence-informed prior, on the DataTree contract.

:func:`pbassess.estimation.estimate` returns a table of several estimators
(:class:`~pbassess.estimation.api.EstimationResult`); its Bayesian part, when fitted by NUTS
through :func:`pbassess.inference.fit`, is a :class:`BayesEstimateResult` in
``EstimationResult.bayes``: ``idata`` (posterior, prior, one log-likelihood value per labeled
item, log prior, observed and constant data, sample stats), ``posterior`` (each region's pool
accuracy and the prior's hyperparameters), ``counts`` (labeled and pool items per region),
``model``, ``loo()``, ``save()``, ``summary()`` and ``sentence()`` like every other assessment.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import xarray as xr

from pbassess.results.base import AssessmentResult

__all__ = ["BayesEstimateResult"]


class BayesEstimateResult(AssessmentResult):
    """Posterior of each region's pool accuracy under the confidence-informed hierarchical prior (NUTS).

    ``posterior`` holds ``accuracy`` (dim ``region``), ``offset``, ``slope``, ``strength`` and,
    with region offsets, ``region_sd`` and ``region_offset``; ``counts`` holds ``n_labeled`` and
    ``n_pool`` per region.

    Parameters
    ----------
    posterior, counts, prior, data_summary, engine, inference, ci_prob, idata, diagnostics, options, model
        As for :class:`~pbassess.results.AssessmentResult`. Results are built by the assessment
        functions and by :func:`pbassess.load_result`; there is seldom a reason to construct one.

    Examples
    --------
    >>> from pbassess.data.examples import example_pool
    >>> from pbassess.estimation import estimate
    >>> pool = example_pool(600, n_labeled=80, seed=0)
    >>> res = estimate(pool, methods="bayes", inference="nuts", seed=0, bins=4,
    ...                sample_kwargs={"draws": 200, "tune": 300}).bayes  # a short real NUTS run
    >>> type(res).__name__, res.posterior["accuracy"].dims, int(res.counts["n_labeled"].sum())
    ('BayesEstimateResult', ('chain', 'draw', 'region'), 80)
    >>> res.idata["log_likelihood"]["correct"].sizes["item"]
    80
    """

    metric: ClassVar[str] = "estimation-bayes"

    @property
    def regions(self) -> list[str]:
        return [str(r) for r in self.posterior["region"].values]

    def _build_model(self):
        """The PyMC model rebuilt from the saved per-cell counts."""
        if self._idata is None or "constant_data" not in self._idata.children:
            return None
        from pbassess.pymc_models.estimation import confidence_prior_model

        const = self._idata["constant_data"].to_dataset()
        names = self.regions
        index = {name: i for i, name in enumerate(names)}
        region = np.array([index[str(r)] for r in const["cell_region"].to_numpy()], dtype=np.int64)
        return confidence_prior_model(const["n_labeled"].to_numpy(), const["n_correct"].to_numpy(),
                                      const["mean_confidence"].to_numpy(), region, len(names),
                                      region_offsets="region_offset" in self.posterior, regions=names)

    def summary(self):
        """One row per region: posterior mean, equal-tailed credible interval and sd of the pool accuracy, labeled and pool items."""
        import pandas as pd

        from pbassess.estimation.bayes import equal_tailed_interval

        acc = self.draws("accuracy")
        ci = equal_tailed_interval(acc, self.ci_prob, axis=0)
        table = pd.DataFrame({
            "region": self.regions, "mean": acc.mean(axis=0), "ci_low": ci[:, 0], "ci_high": ci[:, 1],
            "sd": acc.std(axis=0), "n_labeled": self.counts["n_labeled"].to_numpy(),
            "n_pool": self.counts["n_pool"].to_numpy(),
        })
        return self.annotate(table)

    def sentence(self) -> str:
        table = self.summary()
        row = table.iloc[0]
        n_lab = int(self.counts["n_labeled"].sum())
        n_unl = int(self.counts["n_pool"].sum()) - n_lab
        text = (f"accuracy of {row['region']}: {row['mean']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}] "
                f"({self.ci_prob:.0%} equal-tailed credible interval of the pool's accuracy, confidence-informed prior, NUTS), "
                f"from {n_lab} labels and {n_unl} unlabeled predictions")
        if len(table) > 1:
            text += f"; {len(table)} regions in all"
        return self.qualify(text)

    def to_json(self) -> dict[str, Any]:
        """``{"regions", "mean", "ci", "n_labeled", "n_pool", "prior", ...}`` with the shared keys."""
        table = self.summary()
        return self.with_envelope({
            "regions": self.regions, "mean": table["mean"].tolist(),
            "ci": table[["ci_low", "ci_high"]].to_numpy().tolist(),
            "n_labeled": table["n_labeled"].tolist(), "n_pool": table["n_pool"].tolist(), "prior": self.prior,
        })

    def plot(self, ax=None, **kwargs: Any):
        """Posterior mean and equal-tailed credible interval of each region's pool accuracy; returns the Axes."""
        import matplotlib.pyplot as plt

        table = self.summary()
        if ax is None:
            _, ax = plt.subplots(figsize=(max(4.0, 0.6 * len(table) + 2), 3.2))
        x = np.arange(len(table))
        ax.errorbar(x, table["mean"], yerr=[table["mean"] - table["ci_low"], table["ci_high"] - table["mean"]],
                    fmt="o", capsize=3, **kwargs)
        ax.set_xticks(x, table["region"], rotation=30 if len(table) > 4 else 0)
        ax.set_ylabel("pool accuracy")
        return ax


def counts_dataset(n_labeled: Any, n_pool: Any, regions: list[str]) -> xr.Dataset:
    """The ``counts`` of a :class:`BayesEstimateResult`: labeled and pool items per region."""
    return xr.Dataset({"n_labeled": ("region", np.asarray(n_labeled, dtype=np.int64)),
                       "n_pool": ("region", np.asarray(n_pool, dtype=np.int64))}, coords={"region": regions})
