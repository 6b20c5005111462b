"""Refit one compiled surface model on new counts: :class:`SurfaceRefitter`.

The exploration loop refits the same model on the same arms every round with a few more
labels. Building and compiling a PyMC model costs 7-20 s (PyTensor's numba backend compiles
the model's log density afresh for every new set of constants); a round's NUTS run on tens to
hundreds of arms takes well under a second. A refitter builds the model once with every arm's
counts in data containers (``counts_as_data=True`` of the model builders: an arm without
labels adds exactly 0 to the likelihood, so the posterior is that of :func:`fit_surface`),
compiles it once (:class:`pbassess.inference.CompiledModel`), and per round fits the round's
spec through :func:`pbassess.inference.fit` with the compiled model as its sampler: the counts
are swapped in and the chains start at the previous round's posterior mean in the unconstrained
space (nutpie's ``init_mean``).

Each round's DataTree is therefore the one :func:`~pbassess.inference.fit` makes for a NUTS fit
(``posterior`` with ``accuracy`` per arm and the model's variables, ``log_likelihood`` per
labeled item, ``observed_data``, ``constant_data``, ``sample_stats``, the same diagnostics), but
without the ``prior`` and ``log_prior`` groups: both need PyMC to compile the model's prior
graph afresh every round (seconds each), which is what the refitter avoids; ``result.loo()``
(PSIS) works without them.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np

from pbassess.constants import CI_PROB
from pbassess.errors import ConfigError, DataError
from pbassess.pymc_models.surface import (
    GP_ESTIMATORS,
    SurfaceModelSpec,
    kernel_similarity,
    model_options_for,
    observations_from_arm_counts,
    pool_sparse_counts,
)
from pbassess.stats.sampling import as_generator
from pbassess.surface.arms import ArmCounts
from pbassess.surface.fit import SURFACE_SAMPLE_KWARGS, surface_result
from pbassess.surface.result import SurfaceResult

__all__ = ["REFIT_ESTIMATORS", "SurfaceRefitter"]

REFIT_ESTIMATORS = GP_ESTIMATORS


class SurfaceRefitter:
    """A NUTS surface model over fixed arms, compiled once and refitted on new counts.

    Parameters
    ----------
    arms : ArmCounts
        The arms (attribute values, pool sizes, confidence); their counts are only the first data.
    estimator : {"berngp", "betagp", "betagp-sl", "betagp-slp", "additive"}
    covariate, model_options
        As in :func:`pbassess.surface.fit_surface`.
    sample_kwargs : dict, optional
        ``draws``, ``tune``, ``chains`` (default 4 x 250 after 500, as :func:`fit_surface`), ``cores``.
    seed : int or numpy.random.Generator, optional
        Fixes the GP models' inducing inputs.

    Examples
    --------
    >>> arms = ArmCounts.from_arrays([5, 3, 0, 4], [4, 1, 0, 4], values=[[0, 0], [0, 1], [1, 0], [1, 1]],
    ...                              attributes=("a", "b"))
    >>> refit = SurfaceRefitter(arms, "additive", sample_kwargs={"draws": 100, "tune": 100, "chains": 1})
    >>> r = refit.fit([6, 3, 1, 4], [5, 1, 0, 4], seed=0)  # new counts, no recompilation
    >>> r.arms.n.tolist(), r.engine, r.mean.shape, r.idata["log_likelihood"]["correct"].sizes["item"]
    ([6.0, 3.0, 1.0, 4.0], 'nuts', (4,), 14)
    """

    def __init__(self, arms: ArmCounts, estimator: str = "additive", *, covariate: str | None = None,
                 model_options: Mapping[str, Any] | None = None, sample_kwargs: Mapping[str, Any] | None = None,
                 ci_prob: float = CI_PROB, seed: Any = None) -> None:
        from pbassess.inference import CompiledModel

        if estimator not in REFIT_ESTIMATORS:
            raise ConfigError(f"only the NUTS estimators can be refitted ({', '.join(REFIT_ESTIMATORS)}), "
                              f"got {estimator!r}")
        self.arms, self.estimator, self.covariate, self.ci_prob = arms, estimator, covariate, ci_prob
        self.options = model_options_for(estimator, model_options)
        kwargs = {**SURFACE_SAMPLE_KWARGS, **dict(sample_kwargs or {})}
        self.sample_kwargs = {k: int(kwargs[k]) for k in ("draws", "tune", "chains")}
        self.sample_kwargs["cores"] = int(kwargs.get("cores", min(self.sample_kwargs["chains"], 2)))
        self._similarity = kernel_similarity(arms) if estimator == "betagp-slp" else None
        self.model_seed = int(as_generator(seed).integers(2**31 - 1))
        self.spec = SurfaceModelSpec(arms, estimator, model_options=self.options, covariate=covariate,
                                     model_seed=self.model_seed, counts_as_data=True)
        self.model = self.spec.model()
        self.compiled = CompiledModel(self.model)

    def reset(self) -> None:
        """Forget the previous fit: the next one starts cold (a new exploration run)."""
        self.compiled.unconstrained_mean = None

    def _counts(self, arms: ArmCounts) -> tuple[np.ndarray, np.ndarray]:
        if self._similarity is None:
            return arms.n, arms.correct
        pool = {name: self.options[key] for key, name in (("pool_max_labels", "max_labels"), ("pool_k", "k"))
                if key in self.options}
        return pool_sparse_counts(arms, self._similarity, **pool)

    def fit(self, n: Any, correct: Any, *, seed: Any = None, warm_start: bool = True) -> SurfaceResult:
        """Posterior of the surface given new counts per arm (same arms, same order).

        ``warm_start``: start the chains at the previous fit's posterior mean (unconstrained);
        tuning is not shortened (nutpie cannot take a mass matrix over).
        """
        from pbassess.inference import fit

        start = time.perf_counter()
        arms = self.arms.with_counts(np.asarray(n, float), np.asarray(correct, float))
        if arms.n.sum() <= 0:
            raise DataError("no labeled items: the surface needs at least one label")
        n_used, c_used = self._counts(arms)
        data = {"labels": n_used, "correct": c_used, "own_labels": arms.n,
                "global_accuracy": np.asarray(arms.global_accuracy, float)}
        rng = as_generator(seed)
        spec = self.spec.with_counts(arms, n_used, c_used, observations_from_arm_counts(arms.n, arms.correct),
                                     seed=int(rng.integers(2**31 - 1)))
        kwargs = dict(self.sample_kwargs)
        draws = kwargs.pop("draws")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the diagnostics travel with the result
            fitted = fit(spec, inference="nuts", draws=draws, seed=rng, sample_kwargs=kwargs, prior_groups=False,
                         sampler=partial(self.compiled.sample, data, warm_start=warm_start))
        tree, diag = fitted.idata, fitted.diagnostics
        options = {"covariate": self.covariate, "model_options": dict(self.options), "model_seed": self.model_seed}
        return surface_result(arms, spec, tree, inference="nuts", ci_prob=self.ci_prob, diagnostics=diag,
                              prior=self.options, options=options, fit_seconds=time.perf_counter() - start)
