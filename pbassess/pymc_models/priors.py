"""A user's own PyMC prior for a model's main quantity (a callable or a dict of distributions).

Two forms extend the built-in models (:func:`~pbassess.pymc_models.accuracy.beta_binomial_model`
and the assessments that use it):

* a **callable** ``prior(model, coords)`` called inside the model context; it returns the
  quantity (e.g. the accuracies, one value in (0, 1) per region) and may add any variables
  (hyperpriors, shared effects);
* a **dict** ``{"accuracy": pm.Beta.dist(2, 5)}`` of unnamed PyMC distributions; a scalar
  distribution is repeated for every region.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pbassess.errors import ConfigError

__all__ = ["is_pymc_prior", "user_prior_variable"]


def is_pymc_prior(prior: Any) -> bool:
    """Whether ``prior`` is a user PyMC prior (a callable, or a dict of PyMC distributions).

    Examples
    --------
    >>> is_pymc_prior("uniform"), is_pymc_prior(lambda model, coords: None), is_pymc_prior((1, 1))
    (False, True, False)
    """
    if callable(prior) and not isinstance(prior, type):
        return True
    if isinstance(prior, Mapping):
        from pytensor.tensor.variable import TensorVariable

        return any(isinstance(v, TensorVariable) for v in prior.values())
    return False


def user_prior_variable(name: str, prior: Callable | Mapping[str, Any], model: Any, *, dim: str, size: int):
    """The quantity ``name`` (dims ``dim``, ``size`` values) from a user's PyMC prior, in ``model``.

    Examples
    --------
    >>> import pymc as pm
    >>> with pm.Model(coords={"class": ["a", "b"]}) as m:
    ...     theta = user_prior_variable("accuracy", {"accuracy": pm.Beta.dist(2, 5)}, m, dim="class", size=2)
    >>> m["accuracy"].type.shape
    (2,)
    """
    import pymc as pm
    import pytensor.tensor as pt

    if isinstance(prior, Mapping):
        if name not in prior:
            raise ConfigError(f"the prior dict needs a PyMC distribution for {name!r}, got keys {sorted(prior)}")
        from pymc.distributions.shape_utils import change_dist_size

        dist = prior[name]
        if dist.ndim == 0:
            dist = change_dist_size(dist, new_size=(size,))
        value = model.register_rv(dist, name, dims=(dim,))  # a tuple: register_rv reads a str as one dim per letter
        for other, extra in prior.items():
            if other != name:
                model.register_rv(extra, other)
    else:
        value = prior(model, dict(model.coords))
        if value is None:
            if name not in model.named_vars:
                raise ConfigError(f"the prior callable must return the {name} variable (or create one named {name!r})")
            value = model[name]
    value = pt.as_tensor_variable(value)
    if value.ndim > 1 or (value.ndim == 1 and value.type.shape[0] not in (None, size)):
        raise ConfigError(f"the user prior of {name} must give {size} values (one per {dim}), got shape {value.type.shape}")
    if name not in model.named_vars:
        value = pm.Deterministic(name, pt.broadcast_to(value, (size,)), dims=dim)
    return value
