"""Options every assessment shares: coercion of the pool, inference, draws, credible mass, sizes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from pbassess.errors import ConfigError, DataError
from pbassess.inference import check_count, check_memory, resolve_inference
from pbassess.stats.beta import check_pseudocount  # noqa: F401  (re-exported: the assessments import it from here)
from pbassess.stats.intervals import check_ci_prob  # noqa: F401  (re-exported: the assessments import it from here)

__all__ = ["as_pool", "check_ci_prob", "check_draws", "check_options", "check_pseudocount",
           "check_sample_kwargs", "percent"]

from pbassess.results._format import percent  # noqa: E402  (re-exported for older imports)


def as_pool(preds: Any, **kwargs: Any):
    """A validated :class:`~pbassess.Predictions` from anything ``pbassess.data.as_predictions`` takes."""
    from pbassess.data.predictions import Predictions

    if isinstance(preds, Predictions) and not kwargs:
        return preds
    try:
        from pbassess.data import as_predictions
    except ImportError:  # pragma: no cover - the data layer provides it
        as_predictions = None
    if as_predictions is not None:
        return as_predictions(preds, **kwargs)
    raise DataError(f"preds must be a pbassess Predictions object, got {type(preds).__name__}")


def check_draws(draws: Any) -> int:
    """Monte Carlo draws: a positive integer below 2**31."""
    if isinstance(draws, bool) or not isinstance(draws, (int, np.integer)) or draws < 1:
        raise ConfigError(f"draws must be a positive integer, got {draws!r}")
    return check_count(draws, "draws")


def check_sample_kwargs(sample_kwargs: Any) -> dict[str, Any]:
    """``sample_kwargs`` as a dict (ConfigError when it is not a mapping)."""
    if sample_kwargs is not None and not isinstance(sample_kwargs, Mapping):
        raise ConfigError(f"sample_kwargs must be a dict of pm.sample options, got {type(sample_kwargs).__name__}")
    return dict(sample_kwargs or {})


def check_options(inference: Any, draws: Any, ci_prob: Any, sample_kwargs: Any) -> tuple[str, int, float, dict]:
    """Validate the options shared by every assessment: (inference, draws per chain, ci_prob, sample_kwargs).

    ``draws`` means posterior draws per chain in both inferences
    (:func:`pbassess.inference.draws_per_chain`); the returned ``sample_kwargs`` carry no ``draws``.
    """
    from pbassess.inference import draws_per_chain

    sample_kwargs = check_sample_kwargs(sample_kwargs)
    per_chain = draws_per_chain(draws, sample_kwargs)
    sample_kwargs.pop("draws", None)
    return resolve_inference(inference), per_chain, check_ci_prob(ci_prob), sample_kwargs


def check_draw_memory(n_draws: int, n_values: int, what: str, advice: str, *, copies: int = 4) -> None:
    """Refuse when ``copies`` float64 arrays of ``n_draws x n_values`` would exceed the memory limit."""
    check_memory(8.0 * copies * n_draws * n_values, f"{what} with {n_draws:,} draws", advice)
