"""NUTS settings of the hierarchical models, their sampler call, and population-level draws."""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np

from pbassess.errors import ConfigError

__all__ = ["DEFAULT_SAMPLER", "population_draws", "sample_model", "sampler_settings"]

#: Default NUTS settings of the hierarchical models (see ``benchmarks/hierarchical.py``).
DEFAULT_SAMPLER: dict[str, Any] = {
    "draws": 1000,
    "tune": 1000,
    "chains": 4,
    "target_accept": 0.95,
    "sampler": "nutpie",
}


def _nutpie_available() -> bool:
    return importlib.util.find_spec("nutpie") is not None


def sampler_settings(**overrides: Any) -> dict[str, Any]:
    """The default NUTS settings with overrides (``None`` values are ignored).

    Examples
    --------
    >>> s = sampler_settings(draws=200, chains=None)
    >>> s["draws"], s["chains"], s["target_accept"]
    (200, 4, 0.95)
    """
    settings = dict(DEFAULT_SAMPLER)
    settings.update({k: v for k, v in overrides.items() if v is not None})
    if settings["sampler"] == "nutpie" and not _nutpie_available():
        settings["sampler"] = "pymc"
    if settings["sampler"] not in ("nutpie", "pymc"):
        raise ConfigError(f"unknown sampler {settings['sampler']!r} (choose 'nutpie' or 'pymc')")
    if not 0 < float(settings["target_accept"]) < 1:
        raise ConfigError(f"target_accept must be in (0, 1), got {settings['target_accept']}")
    for key in ("draws", "tune", "chains"):
        if int(settings[key]) < 1:
            raise ConfigError(f"{key} must be a positive integer, got {settings[key]}")
    return settings


def sample_model(
    model: Any,
    *,
    seed: Any = None,
    log_likelihood: bool = True,
    prior_predictive: int = 0,
    progressbar: bool | None = None,
    **settings: Any,
):
    """Run NUTS on a model with the project defaults; return the ``xarray.DataTree``.

    Parameters
    ----------
    model : pymc.Model
    seed : int or Generator, optional
        Random seed (a Generator is turned into an integer seed).
    log_likelihood : bool, default True
        Add the ``log_likelihood`` group (for LOO).
    prior_predictive : int, default 0
        Also draw this many prior predictive samples (group ``prior_predictive``/``prior``).
    progressbar : bool, optional
        Default: PyMC's progress bar when a person is watching (:func:`pbassess.inference.sample_model`).
    **settings
        ``draws``, ``tune``, ``chains``, ``cores``, ``target_accept``, ``sampler``
        (``"nutpie"`` or ``"pymc"``); see :data:`DEFAULT_SAMPLER`.

    Examples
    --------
    >>> from unittest import mock
    >>> from pbassess.hierarchical.models import accuracy_model
    >>> from pbassess.inference import mock_pymc_sample
    >>> m = accuracy_model([30, 4], [27, 2], environments=["a", "b"])
    >>> with mock.patch("pymc.sample", mock_pymc_sample):  # plumbing only: no real NUTS in a doctest
    ...     idata = sample_model(m, seed=1, draws=100, tune=100, chains=1, sampler="pymc")
    >>> sorted(idata.children)[:3]
    ['log_likelihood', 'observed_data', 'posterior']
    """
    import pymc as pm

    from pbassess.inference import sample_model as sample

    opts = sampler_settings(**settings)
    kwargs = {"draws": int(opts["draws"]), "tune": int(opts["tune"]), "chains": int(opts["chains"]),
              "cores": int(opts.get("cores") or min(int(opts["chains"]), 2)),
              "target_accept": float(opts["target_accept"]), "nuts_sampler": opts["sampler"]}
    idata = sample(model, seed=seed, sample_kwargs=kwargs, progressbar=progressbar, log_likelihood=log_likelihood)
    if prior_predictive:
        from pbassess.stats import as_generator

        prior = pm.sample_prior_predictive(int(prior_predictive), model=model,
                                           random_seed=int(as_generator(seed).integers(2**31 - 1)) + 1)
        for name, child in prior.children.items():
            if name != "observed_data":
                idata[name] = child
    return idata


# ---------------------------------------------------------------------------- population
_GH_NODES, _GH_WEIGHTS = np.polynomial.hermite_e.hermegauss(40)
_GH_WEIGHTS = _GH_WEIGHTS / _GH_WEIGHTS.sum()


def population_draws(posterior: Any, kind: str, seed: Any = None) -> dict[str, np.ndarray]:
    """Population-level posterior quantities on the probability scale, per draw.

    Returns a dict of arrays shaped like the hyperparameter draws:

    * ``population_mean``: the mean accuracy of the population of environments
      (``E[sigmoid(mu + sigma eps)]`` by 40-node Gauss-Hermite quadrature, or ``phi``);
    * ``population_sd``: the spread (standard deviation) of environment accuracies;
    * ``new_environment``: the accuracy of a new, unlabeled environment (one draw of the
      population distribution per posterior draw: the posterior predictive).

    For the environment x class model the population is that of cells (a new environment's
    accuracy on a new class): its logit sd combines all three spreads.

    Examples
    --------
    >>> import xarray as xr, numpy as np
    >>> post = xr.Dataset({"mu": (("chain", "draw"), [[0.0]]), "sigma": (("chain", "draw"), [[1e-9]])})
    >>> out = population_draws(post, "logit-normal", seed=0)
    >>> round(float(out["population_mean"][0, 0]), 6), round(float(out["population_sd"][0, 0]), 6)
    (0.5, 0.0)
    """
    rng = np.random.default_rng(seed) if not isinstance(seed, np.random.Generator) else seed
    if kind == "beta":
        phi = np.asarray(posterior["phi"])
        kappa = np.asarray(posterior["kappa"])
        return {
            "population_mean": phi,
            "population_sd": np.sqrt(phi * (1 - phi) / (kappa + 1)),
            "new_environment": rng.beta(phi * kappa, (1 - phi) * kappa),
        }
    mu = np.asarray(posterior["mu"])
    sigma = np.asarray(posterior["sigma"])
    if "sigma_environment" in posterior:  # environment x class: a new cell varies by all three effects
        sigma = np.sqrt(sigma**2 + np.asarray(posterior["sigma_environment"]) ** 2
                        + np.asarray(posterior["sigma_class"]) ** 2)
    eta = mu[..., None] + sigma[..., None] * _GH_NODES
    p = 1.0 / (1.0 + np.exp(-eta))
    mean = p @ _GH_WEIGHTS
    second = (p**2) @ _GH_WEIGHTS
    new = 1.0 / (1.0 + np.exp(-(mu + sigma * rng.standard_normal(mu.shape))))
    return {"population_mean": mean, "population_sd": np.sqrt(np.maximum(second - mean**2, 0.0)),
            "new_environment": new}
