"""The inference layer: one way to sample, diagnose and store every posterior.

* :func:`fit` -- the one fit function: a :class:`Spec` (an assessment's model over its counts)
  to the DataTree contract, by exact conjugate draws or NUTS; :func:`exact_loo` for conjugate specs;
  ``draws`` is posterior draws per chain in both inferences (:func:`draws_per_chain`);
* :func:`resolve_inference` -- ``inference="conjugate"|"nuts"`` (``"mcmc"`` is an old spelling of ``"nuts"``);
* :func:`merge_sample_kwargs` / :func:`sample_model` -- NUTS with one set of defaults, the
  progress bar when a person is watching, a DataTree with ``log_likelihood``;
* :func:`diagnostics` -- R-hat on summary quantities, ESS and divergences with ``"ok"``;
* :func:`conjugate_datatree` -- the same DataTree shape for exact conjugate draws;
* :class:`DeterministicEvaluator` -- a model's deterministics for all kept draws at once (after
  NUTS kept only the free variables);
* :func:`check_memory` / :func:`check_count` -- sizes checked before allocating;
* :func:`pareto_smoothed_loo` -- PSIS-LOO of many observations at once (arviz-stats' arithmetic, vectorised).
"""

from pbassess.inference.deterministics import DeterministicEvaluator
from pbassess.inference.diagnostics import (
    MIN_ESS,
    RHAT_THRESHOLD,
    diagnostics,
    diagnostics_note,
    psis_relative_efficiency,
)
from pbassess.inference.fit import CHAINS, Fit, draws_per_chain, exact_loo, fit, total_draws
from pbassess.inference.memory import check_count, check_memory, format_bytes, memory_limit
from pbassess.inference.psis import pareto_smoothed_loo
from pbassess.inference.sampling import (
    DEFAULT_SAMPLE_KWARGS,
    INFERENCES,
    CompiledModel,
    merge_sample_kwargs,
    mock_pymc_sample,
    one_blas_thread,
    plain_slice_errors,
    progress_wanted,
    quiet_progress,
    resolve_inference,
    sample_model,
)
from pbassess.inference.spec import Observations, Spec
from pbassess.inference.trees import (
    bernoulli_log_likelihood,
    bernoulli_observed_data,
    binomial_loglik,
    conjugate_datatree,
    posterior_dataset,
)

__all__ = [
    "CHAINS", "CompiledModel", "DeterministicEvaluator", "Fit", "Observations", "Spec", "draws_per_chain", "exact_loo", "fit", "total_draws",
    "DEFAULT_SAMPLE_KWARGS", "INFERENCES", "bernoulli_log_likelihood", "bernoulli_observed_data", "MIN_ESS", "RHAT_THRESHOLD", "binomial_loglik", "check_count",
    "check_memory", "conjugate_datatree", "diagnostics", "diagnostics_note", "psis_relative_efficiency", "format_bytes", "memory_limit",
    "merge_sample_kwargs", "mock_pymc_sample", "one_blas_thread", "pareto_smoothed_loo", "plain_slice_errors", "posterior_dataset", "progress_wanted", "quiet_progress",
    "resolve_inference", "sample_model",
]
