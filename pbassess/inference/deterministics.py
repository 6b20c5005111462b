"""A PyMC model's deterministics from draws of its free variables, for all draws at once.

NUTS may keep only a model's free variables (:attr:`pbassess.inference.Spec.nuts_var_names`):
nutpie evaluates a trace's deterministics at every draw, tuning included, which for a model with
large per-arm deterministics (the anchored surface on ACS: 2,554 arms x 8 confidence points) was
most of the sampling time. :class:`DeterministicEvaluator` compiles the model's own deterministic
graph once, vectorised over a leading draw dimension (:func:`pytensor.graph.replace.vectorize_graph`),
and evaluates it on the kept draws in chunks; PyMC's ``compute_deterministics`` loops over the
draws in Python instead. The graph is the model's, so the values are the model's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from pbassess.errors import ConfigError

__all__ = ["DETERMINISTICS_CHUNK", "DeterministicEvaluator"]

#: Draws evaluated by one call of the compiled graph (bounds the memory of its per-draw intermediates).
DETERMINISTICS_CHUNK = 256


class DeterministicEvaluator:
    """The deterministics of a PyMC model as one compiled function of batches of its free variables.

    Parameters
    ----------
    model : pymc.Model
    names : sequence of str, optional
        The deterministics to evaluate (default: all of the model's).
    chunk : int
        Draws per call of the compiled function.

    Examples
    --------
    >>> import pymc as pm
    >>> with pm.Model() as m:
    ...     s = pm.HalfNormal("s")
    ...     x = pm.Normal("x", 0, s, shape=2)
    ...     _ = pm.Deterministic("total", x.sum() * s)
    >>> evaluate = DeterministicEvaluator(m)
    >>> out = evaluate({"s": np.array([[1.0, 2.0]]), "x": np.array([[[1.0, 2.0], [0.5, 0.5]]])})
    >>> out["total"].tolist()  # (chain, draw)
    [[3.0, 2.0]]
    """

    def __init__(self, model: Any, names: Sequence[str] | None = None, *, chunk: int = DETERMINISTICS_CHUNK) -> None:
        import pytensor
        from pytensor.graph.replace import vectorize_graph

        deterministics = {v.name: v for v in model.deterministics}
        self.names = list(deterministics) if names is None else list(names)
        unknown = [n for n in self.names if n not in deterministics]
        if unknown:
            raise ConfigError(f"not deterministics of the model: {', '.join(unknown)}")
        if isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer)) or chunk < 1:
            raise ConfigError(f"chunk must be a positive integer, got {chunk!r}")
        self.chunk = int(chunk)
        self.free = [v.name for v in model.free_RVs]
        self._core_ndim = {v.name: v.type.ndim for v in model.free_RVs}
        self._out_ndim = {n: deterministics[n].type.ndim for n in self.names}
        batched = {v: v.type.clone(shape=(None, *v.type.shape))(name=v.name) for v in model.free_RVs}
        outputs = vectorize_graph([deterministics[n] for n in self.names], replace=batched)
        self._fn = pytensor.function(list(batched.values()), outputs, on_unused_input="ignore")

    def __call__(self, draws: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """The deterministics per draw: ``draws`` holds every free variable with the same leading dims.

        Parameters
        ----------
        draws : mapping of str to array
            Each free variable (by its name, on its own scale: not the transformed value) with
            leading dims such as (chain, draw) before the variable's own shape.

        Returns
        -------
        dict of str to ndarray
            Each deterministic with the draws' leading dims.
        """
        missing = [n for n in self.free if n not in draws]
        if missing:
            raise ConfigError(f"the draws lack the free variables {', '.join(missing)}")
        values = {n: np.asarray(draws[n], dtype=float) for n in self.free}
        lead = values[self.free[0]].shape[:values[self.free[0]].ndim - self._core_ndim[self.free[0]]] if self.free else ()
        n_draws = int(np.prod(lead, dtype=np.int64))
        flat = {}
        for n, v in values.items():
            if v.shape[:v.ndim - self._core_ndim[n]] != lead:
                raise ConfigError(f"the draws of {n} have leading dims {v.shape[:v.ndim - self._core_ndim[n]]}, not {lead}")
            flat[n] = v.reshape(n_draws, *v.shape[v.ndim - self._core_ndim[n]:])
        joined: dict[str, np.ndarray] = {}  # each chunk's values written in place (no copy of the parts at the end)
        for start in range(0, n_draws, self.chunk):
            size = min(self.chunk, n_draws - start)
            outs = self._fn(*[flat[n][start:start + size] for n in self.free])
            for name, out in zip(self.names, outs, strict=True):
                out = np.asarray(out)
                if out.ndim == self._out_ndim[name]:  # a deterministic that no free variable moves
                    out = np.broadcast_to(out, (size, *out.shape))
                if name not in joined:
                    joined[name] = np.empty((n_draws, *out.shape[1:]), dtype=out.dtype)
                joined[name][start:start + size] = out
        return {name: joined[name].reshape(*lead, *joined[name].shape[1:]) if name in joined else np.empty((0,))
                for name in self.names}
