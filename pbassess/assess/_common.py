"""Options every assessment shares: coercion of the pool, inference, draws, credible mass, sizes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from pbassess.errors import ConfigError, DataError
from pbassess.inference import check_count, check_memory, resolve_inference
from pbassess.stats.beta import check_pseudocount  # noqa: F401  (re-exported: the assessments import it from here)
from pbassess.stats.intervals import check_ci_prob  # noqa: F401  (re-exported: the assessments import it from here)

__all__ = ["ENGINES", "as_pool", "check_ci_prob", "check_common", "check_draws", "check_options", "check_pseudocount",
           "check_sample_kwargs", "nuts_draws", "percent"]

from pbassess.results._format import percent  # noqa: E402  (re-exported for older imports)

#: Posterior inferences every assessment accepts (old spellings; see :data:`pbassess.inference.INFERENCES`).
ENGINES: tuple[str, ...] = ("conjugate", "mcmc")


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


def check_options(inference: Any, engine: Any, draws: Any, ci_prob: Any, sample_kwargs: Any) -> tuple[str, int, float, dict]:
    """Validate the options shared by every assessment: (inference, draws, ci_prob, sample_kwargs)."""
    return (resolve_inference(inference, engine), check_draws(draws), check_ci_prob(ci_prob),
            check_sample_kwargs(sample_kwargs))


def check_common(preds: Any, engine: str, draws: Any, ci_prob: Any, sample_kwargs: Any) -> None:
    """Old validation entry point (kept for callers): raises DataError / ConfigError."""
    from pbassess.data.predictions import Predictions

    if not isinstance(preds, Predictions):
        raise DataError(f"preds must be a pbassess Predictions object, got {type(preds).__name__}")
    check_options(None, engine, draws, ci_prob, sample_kwargs)


def nuts_draws(sample_kwargs: Mapping[str, Any]) -> int:
    """Total posterior draws a NUTS fit will keep (chains x draws, defaults included)."""
    from pbassess.inference import DEFAULT_SAMPLE_KWARGS

    merged = {**DEFAULT_SAMPLE_KWARGS, **dict(sample_kwargs)}
    draws, chains = merged.get("draws", 1000), merged.get("chains", 4)
    for key, value in (("draws", draws), ("chains", chains)):
        check_count(value, f"sample_kwargs {key}")
    return int(draws) * int(chains)


def check_draw_memory(n_draws: int, n_values: int, what: str, advice: str, *, copies: int = 4) -> None:
    """Refuse when ``copies`` float64 arrays of ``n_draws x n_values`` would exceed the memory limit."""
    check_memory(8.0 * copies * n_draws * n_values, f"{what} with {n_draws:,} draws", advice)
