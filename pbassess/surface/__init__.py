"""Accuracy surfaces over attribute combinations ("arms"), after Piratla, Chakrabarty and
Sarawagi (NeurIPS 2021, "Active Assessment of Prediction Services as Accuracy Surface Over
Attribute Combinations"; code github.com/vihari/AAA), with full MCMC in PyMC.

Estimators (:func:`fit_surface`): ``cpredictor``, ``beta-i`` (conjugate, or NUTS on the same
model), ``berngp``, ``betagp``, ``betagp-sl``, ``betagp-slp`` (latent GPs: exact in the grid's
eigenbasis over categorical attributes or with a Cholesky factor up to 300 arms; on a categorical
grid too large for the eigenbasis its main effects and pairs; else a projected process) and ``additive`` (ours: Beta-binomial with an
additive main-effect + pairwise link, optionally with the model's confidence as a covariate of
the mean). The PyMC models and their specs live in :mod:`pbassess.pymc_models.surface`; every
fit goes through :func:`pbassess.inference.fit` (the DataTree contract, with one log-likelihood
value per labeled item: each a Bernoulli draw of its arm's accuracy), so ``result.loo()`` and
``az.loo(result.idata)`` work.

BetaGP-SL's scale supervision: the paper writes a Dirichlet term, the released code a Gamma
term Gamma(clamp(n_a, 0.01, 10); shape = s_a, rate = 1). Both are offered
(``model_options={"scale_term": "dirichlet" | "gamma"}``); the default is the code's Gamma term
(:data:`DEFAULT_SCALE_TERM`) because it is what produced the published numbers and its clamp keeps
the supervision bounded when one arm holds many labels, whereas the Dirichlet term couples all
arms through their label shares (its strength grows with the total count). On the paper's simple
setting (``benchmarks/surface_simple.py``, 20 seeds) the Dirichlet term halves the fitted scales:
bias^2 0.022 against 0.040 but variance 0.043 against 0.023, MSE 0.065 against 0.064 (docs/surfaces.md).
"""

from pbassess._lazy import lazy_exports

#: Each public name and the module it lives in (imported on first use: see :mod:`pbassess._lazy`).
_EXPORTS = {
    "ArmCounts": "pbassess.surface.arms",
    "count_arms": "pbassess.surface.arms",
    "beta_i_posterior": "pbassess.surface.conjugate",
    "cpredictor_posterior": "pbassess.surface.conjugate",
    "pool_sparse_counts": "pbassess.surface.conjugate",
    "DEFAULT_SCALE_TERM": "pbassess.surface.fit",
    "ESTIMATORS": "pbassess.surface.estimators",
    "INFERENCES": "pbassess.surface.estimators",
    "fit_surface": "pbassess.surface.fit",
    "hide_labels": "pbassess.surface.fit",
    "SurfaceResult": "pbassess.surface.result",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["DEFAULT_SCALE_TERM", "ESTIMATORS", "INFERENCES", "ArmCounts", "SurfaceResult", "beta_i_posterior",
           "count_arms", "cpredictor_posterior", "fit_surface", "hide_labels", "pool_sparse_counts"]
