"""Refit one compiled surface model on new counts: :class:`SurfaceRefitter`.

The exploration loop refits the same model on the same arms every round with a few more
labels. Building and compiling a PyMC model costs 7-20 s (PyTensor's numba backend compiles
the model's log density afresh for every new set of constants); a round's NUTS run on tens to
hundreds of arms takes well under a second. A refitter builds the model once with every arm's
counts in data containers (``counts_as_data=True`` of the model builders: an arm without
labels adds exactly 0 to the likelihood, so the posterior is that of :func:`fit_surface`),
compiles it once with nutpie, and per fit swaps the counts in
(``CompiledPyMCModel.with_data``) and samples, optionally starting at the previous fit's
posterior mean in the unconstrained space (nutpie's ``init_mean``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from pbassess.constants import CI_PROB
from pbassess.errors import ConfigError, DataError
from pbassess.stats.sampling import as_generator
from pbassess.surface.arms import ArmCounts
from pbassess.surface.fit import (
    SURFACE_SAMPLE_KWARGS,
    _pymc_model,
    model_options_for,
    result_from_draws,
)
from pbassess.surface.result import SurfaceResult

__all__ = ["REFIT_ESTIMATORS", "SurfaceRefitter"]

REFIT_ESTIMATORS = ("berngp", "betagp", "betagp-sl", "betagp-slp", "additive")


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
        ``draws``, ``tune``, ``chains`` (default 2 x 500 after 500), ``cores``.
    seed : int or numpy.random.Generator, optional
        Fixes the GP models' inducing inputs.

    Examples
    --------
    >>> arms = ArmCounts.from_arrays([5, 3, 0, 4], [4, 1, 0, 4], values=[[0, 0], [0, 1], [1, 0], [1, 1]],
    ...                              attributes=("a", "b"))
    >>> refit = SurfaceRefitter(arms, "additive", sample_kwargs={"draws": 100, "tune": 100, "chains": 1})
    >>> r = refit.fit([6, 3, 1, 4], [5, 1, 0, 4], seed=0)  # new counts, no recompilation
    >>> r.arms.n.tolist(), r.engine, r.mean.shape
    ([6.0, 3.0, 1.0, 4.0], 'nuts', (4,))
    """

    def __init__(self, arms: ArmCounts, estimator: str = "additive", *, covariate: str | None = None,
                 model_options: Mapping[str, Any] | None = None, sample_kwargs: Mapping[str, Any] | None = None,
                 ci_prob: float = CI_PROB, seed: Any = None) -> None:
        import nutpie

        if estimator not in REFIT_ESTIMATORS:
            raise ConfigError(f"only the NUTS estimators can be refitted ({', '.join(REFIT_ESTIMATORS)}), "
                              f"got {estimator!r}")
        self.arms, self.estimator, self.covariate, self.ci_prob = arms, estimator, covariate, ci_prob
        self.options = model_options_for(estimator, model_options)
        kwargs = {**SURFACE_SAMPLE_KWARGS, **dict(sample_kwargs or {})}
        self.sample_kwargs = {k: int(kwargs[k]) for k in ("draws", "tune", "chains")}
        self.sample_kwargs["cores"] = int(kwargs.get("cores", self.sample_kwargs["chains"]))
        self._similarity = None
        if estimator == "betagp-slp":
            from pbassess.surface.models import kernel_similarity

            self._similarity = kernel_similarity(arms)
        self.model = _pymc_model(arms, estimator, self.options, covariate, as_generator(seed), counts_as_data=True)[0]
        self._compiled = nutpie.compile_pymc_model(self.model)
        self._data_names = {var.name for var in self._compiled.shared_var_keys}
        self._init_mean: np.ndarray | None = None

    def reset(self) -> None:
        """Forget the previous fit: the next one starts cold (a new exploration run)."""
        self._init_mean = None

    def _counts(self, arms: ArmCounts) -> tuple[np.ndarray, np.ndarray]:
        if self._similarity is None:
            return arms.n, arms.correct
        from pbassess.surface.conjugate import pool_sparse_counts

        pool = {name: self.options[key] for key, name in (("pool_max_labels", "max_labels"), ("pool_k", "k"))
                if key in self.options}
        return pool_sparse_counts(arms, self._similarity, **pool)

    def fit(self, n: Any, correct: Any, *, seed: Any = None, warm_start: bool = True) -> SurfaceResult:
        """Posterior of the surface given new counts per arm (same arms, same order).

        ``warm_start``: start the chains at the previous fit's posterior mean (unconstrained);
        tuning is not shortened (nutpie cannot take a mass matrix over).
        """
        import nutpie

        start = time.perf_counter()
        arms = self.arms.with_counts(np.asarray(n, float), np.asarray(correct, float))
        if arms.n.sum() <= 0:
            raise DataError("no labeled items: the surface needs at least one label")
        n_used, c_used = self._counts(arms)
        data = {"labels": n_used, "correct": c_used, "own_labels": arms.n,
                "global_accuracy": np.asarray(arms.global_accuracy, float)}
        compiled = self._compiled.with_data(**{k: v for k, v in data.items() if k in self._data_names})
        rng = as_generator(seed)
        kwargs = dict(self.sample_kwargs)
        if warm_start and self._init_mean is not None:
            kwargs["init_mean"] = self._init_mean
        idata = nutpie.sample(compiled, seed=int(rng.integers(2**31)), progress_bar=False,
                              store_unconstrained=True, **kwargs)
        stats = idata["sample_stats"]
        self._init_mean = np.asarray(stats["unconstrained_draw"].mean(("chain", "draw")).values, float)
        return result_from_draws(arms, self.estimator, idata, n_used, c_used, inference="nuts",
                                 ci_prob=self.ci_prob, seed=rng, prior=self.options,
                                 fit_seconds=time.perf_counter() - start)
