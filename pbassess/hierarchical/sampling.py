"""The hierarchical models' old NUTS settings and sampler call (kept for existing callers).

The package fits these models through :func:`pbassess.inference.fit`
(:class:`pbassess.pymc_models.hierarchical.HierarchicalAccuracySpec`, whose ``nuts_defaults``
hold the hierarchical ``target_accept``); :func:`sample_model` here is a deprecated thin wrapper
over :func:`pbassess.inference.sample_model`, and :func:`population_draws` is re-exported from
:mod:`pbassess.pymc_models.hierarchical`.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from pbassess.errors import ConfigError
from pbassess.pymc_models.hierarchical import population_draws

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
    """Run NUTS on a model with the project defaults; return the ``xarray.DataTree`` (deprecated).

    Deprecated: the package fits through :func:`pbassess.inference.fit`; use
    :func:`pbassess.inference.sample_model` (``sample_kwargs=``) for a bare model. This wrapper
    only translates the keyword settings and adds prior predictive draws.

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
