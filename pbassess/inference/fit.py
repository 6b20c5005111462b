"""The one fit function: a :class:`~pbassess.inference.spec.Spec` in, the DataTree contract out.

:func:`fit` is the only place in pbassess that branches on the inference. Whichever is chosen,
the result is an :class:`xarray.DataTree` with

* ``posterior``: the same variables and dims for both inferences (the reported quantities, the
  derived ones, and the PyMC model's free variables, so ``pm.compute_log_prior`` and
  ``pm.compute_log_likelihood`` work with ``result.model``), always 4 chains (conjugate draws
  are 4 independent chains, so R-hat and ESS are defined);
* ``prior``: draws of the same variables from the prior (drawn when first read if the fit's
  generator is its own, from its state after the posterior draws: the same numbers,
  :mod:`pbassess.inference.deferred`);
* ``log_likelihood``: one value per labeled item (dim ``item``) when it fits the memory limit
  (:func:`pbassess.inference.memory_limit`), else one per cell, with a warning that PSIS-LOO
  then leaves out whole cells (the exact LOO of :func:`exact_loo` works at any size);
* ``log_prior``: the log prior density at the posterior draws (``az.psense`` /
  ``az.psense_summary`` power-scale it; computed when first read where the spec gives it);
* ``observed_data``, ``constant_data``, and ``sample_stats`` for NUTS.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import xarray as xr

from pbassess.constants import DEFAULT_DRAWS
from pbassess.errors import ConfigError
from pbassess.inference.diagnostics import diagnostics as run_diagnostics
from pbassess.inference.memory import format_bytes, memory_limit
from pbassess.inference.sampling import resolve_inference, sample_model
from pbassess.inference.spec import Spec
from pbassess.seeds import generator_is_own

__all__ = ["CHAINS", "Fit", "draws_per_chain", "exact_loo", "fit", "total_draws"]

#: Chains of every fit: NUTS by default, and the conjugate draws are split into as many.
CHAINS: int = 4


@dataclass
class Fit:
    """What :func:`fit` returns: the DataTree, diagnostics (NUTS) and the PyMC model (built on demand).

    Parameters
    ----------
    idata : xarray.DataTree
        The fit's DataTree (the contract's groups).
    spec : Spec
        The model that was fitted.
    inference : {"conjugate", "nuts"}
    diagnostics : dict, optional
        Sampler diagnostics (NUTS).
    sampled_model : pymc.Model, optional
        The model NUTS sampled (built from ``spec`` on demand otherwise).

    Examples
    --------
    >>> from pbassess.pymc_models.accuracy import BetaBernoulliSpec
    >>> f = fit(BetaBernoulliSpec(n=[4], correct=[3], alpha=1.0, beta=1.0), draws=40, seed=0)
    >>> isinstance(f, Fit), f.inference, f.idata["posterior"].sizes["chain"]
    (True, 'conjugate', 4)
    """

    idata: xr.DataTree
    spec: Spec
    inference: str
    diagnostics: dict[str, Any] | None = None
    #: The PyMC model that was sampled (NUTS) or used for prior draws; None for exact draws alone.
    sampled_model: Any = field(default=None, repr=False)

    @property
    def model(self):
        """The :class:`pymc.Model` over the same counts (built from the spec when not sampled)."""
        if self.sampled_model is None:
            self.sampled_model = self.spec.model()
        return self.sampled_model


def _coords(spec: Spec, chains: int, draws: int) -> dict[str, Any]:
    return {"chain": np.arange(chains), "draw": np.arange(draws), **spec.coords}


def _dataset(variables: Mapping[str, tuple[tuple[str, ...], np.ndarray]], coords: Mapping[str, Any]) -> xr.Dataset:
    used = {d for dims, _ in variables.values() for d in dims} | {"chain", "draw"}
    # C order, as a netCDF file reads back: float sums over draws then give the same bits after save/load
    data = {name: (("chain", "draw", *dims), np.ascontiguousarray(arr)) for name, (dims, arr) in variables.items()}
    return xr.Dataset(data, coords={k: v for k, v in coords.items() if k in used})


def _chains(draws: Mapping[str, np.ndarray], chains: int) -> dict[str, np.ndarray]:
    """(chains * per_chain, ...) arrays as (chains, per_chain, ...)."""
    return {k: np.asarray(v).reshape(chains, -1, *np.shape(v)[1:]) for k, v in draws.items()}


def _per_item(spec: Spec, n_samples: int) -> bool:
    """Per-item log-likelihood when the items are known and the array fits the memory limit."""
    obs = spec.observations
    if obs is None:
        return False
    need = 8.0 * n_samples * obs.size
    if need > memory_limit():
        warnings.warn(
            f"the per-item log-likelihood ({obs.size:,} items x {n_samples:,} draws, {format_bytes(need)}) exceeds "
            f"the memory limit ({format_bytes(memory_limit())}); it is stored per cell, so PSIS-LOO (az.loo) leaves "
            "out whole cells: use result.loo() (exact) or fewer draws",
            UserWarning, stacklevel=3,
        )
        return False
    return True


def _pymc_prior(model: Any, n: int, seed: int, names: list[str]) -> dict[str, np.ndarray]:
    import pymc as pm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prior = pm.sample_prior_predictive(draws=n, model=model, random_seed=seed, var_names=names)
    group = prior["prior"]
    return {name: group[name].to_numpy().reshape(n, *group[name].shape[2:]) for name in names}


def _log_prior(spec: Spec, posterior: Mapping[str, Any], dataset: xr.Dataset, coords: Mapping[str, Any],
               model: Any) -> xr.Dataset:
    """The spec's log prior density at the posterior draws, or PyMC's from the model."""
    log_prior = spec.log_prior({k: v for k, (_, v) in posterior.items()})
    if log_prior is not None:
        return _dataset(log_prior, coords)
    import pymc as pm

    base = xr.DataTree.from_dict({"/posterior": dataset})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pm.compute_log_prior(base, model=model if model is not None else spec.model(),
                                    extend_inferencedata=False, progressbar=False)


def _deferred_pymc_log_prior(spec: Spec, posterior: Mapping[str, tuple[tuple[str, ...], np.ndarray]],
                             dataset: xr.Dataset, coords: Mapping[str, Any], model: Any) -> xr.Dataset | None:
    """PyMC's log prior density at the posterior draws (:func:`_log_prior`) computed on first read.

    Its variables are the model's free variables, each with its posterior draws' dims and shape
    (None when the posterior lacks one: then it is computed now). Compiling the model's prior
    density is what it saves a fit that is never asked for it (1.3 s on the ACS anchored surface).
    """
    from pbassess.inference.deferred import Deferred, deferred_dataset

    model = model if model is not None else spec.model()
    names = [v.name for v in model.free_RVs]
    if not names or any(name not in posterior for name in names):
        return None
    layout = {name: (("chain", "draw", *posterior[name][0]), np.shape(posterior[name][1]), np.dtype(float))
              for name in names}

    def compute() -> dict[str, Any]:
        computed = _log_prior(spec, posterior, dataset, coords, model)
        out = {}
        for name, (dims, shape, _) in layout.items():
            value = np.asarray(computed[name], dtype=float)
            if value.shape != shape:
                raise RuntimeError(f"{spec.name}: the log prior of {name} has shape {value.shape}, expected {shape}")
            out[name] = (dims, value)
        return out

    return deferred_dataset(Deferred(compute), layout, coords)


def _layout(values: Mapping[str, tuple[tuple[str, ...], np.ndarray]], chains: int, draws: int) -> dict[str, Any]:
    """Dims, shape and dtype of each variable, from values computed for one draw per chain."""
    return {name: (("chain", "draw", *dims), (chains, draws, *np.shape(arr)[2:]), np.asarray(arr).dtype)
            for name, (dims, arr) in values.items()}


def _deferred_prior(spec: Spec, per_chain: int, rng: np.random.Generator,
                    posterior: Mapping[str, tuple[tuple[str, ...], np.ndarray]]) -> xr.Dataset | None:
    """The ``prior`` group drawn on first read from a copy of ``rng`` (None: the spec has no prior draws).

    Its layout is the ``posterior``'s when the spec says they agree (:attr:`Spec.prior_layout_is_posterior`),
    else that of a probe of a few prior draws; the values drawn on first read are checked against it.
    """
    import copy

    from pbassess.inference.deferred import Deferred, deferred_dataset

    if spec.prior_layout_is_posterior:
        layout = _layout(posterior, CHAINS, per_chain)
    else:
        probe = spec.prior_draws(CHAINS, copy.deepcopy(rng))
        if probe is None:
            return None
        layout = _layout(spec.complete(_chains(probe, CHAINS)), CHAINS, per_chain)
    state = copy.deepcopy(rng)

    def compute() -> dict[str, Any]:
        completed = spec.complete(_chains(spec.prior_draws(per_chain * CHAINS, state), CHAINS))
        if _layout(completed, CHAINS, per_chain) != layout:
            raise RuntimeError(f"{spec.name}: the prior draws do not have the layout announced for the prior group")
        return {name: (("chain", "draw", *dims), arr) for name, (dims, arr) in completed.items()}

    return deferred_dataset(Deferred(compute), layout, _coords(spec, CHAINS, per_chain))


def _deferred_log_prior(spec: Spec, posterior: Mapping[str, Any], coords: Mapping[str, Any]) -> xr.Dataset | None:
    """The spec's ``log_prior`` group computed on first read (None: PyMC computes it)."""
    from pbassess.inference.deferred import Deferred, deferred_dataset

    draws = {k: v for k, (_, v) in posterior.items()}
    probe = spec.log_prior({k: v[:, :1] for k, v in draws.items()})
    if probe is None:
        return None
    chains, n_draws = next(iter(draws.values())).shape[:2]

    def compute() -> dict[str, Any]:
        return {name: (("chain", "draw", *dims), arr) for name, (dims, arr) in spec.log_prior(draws).items()}

    return deferred_dataset(Deferred(compute), _layout(probe, chains, n_draws), coords)


def fit(
    spec: Spec,
    *,
    inference: str | None = "conjugate",
    draws: int | None = None,
    seed: Any = None,
    sample_kwargs: Mapping[str, Any] | None = None,
    sampler: Callable[..., xr.DataTree] | None = None,
    prior_groups: bool = True,
    defer_prior: bool | None = None,
) -> Fit:
    """Fit ``spec`` by its exact conjugate posterior or by NUTS, into the one DataTree contract.

    Parameters
    ----------
    spec : Spec
        The assessment's model over its counts (e.g.
        :class:`pbassess.pymc_models.accuracy.BetaBernoulliSpec`).
    inference : {"conjugate", "nuts"}
        Exact draws from the closed-form posterior, or NUTS on ``spec.model()`` (``"mcmc"`` is
        an old spelling of ``"nuts"``).
    draws : int, optional
        Posterior draws **per chain**, in both inferences (PyMC's meaning): the conjugate
        inference makes :data:`CHAINS` independent chains of ``draws`` exact draws, NUTS keeps
        ``draws`` per chain after tuning; the prior gets as many. Default
        ``sample_kwargs["draws"]`` if given, else :data:`pbassess.constants.DEFAULT_DRAWS` (1000).
    seed : int or numpy.random.Generator, optional
        Every random draw (posterior, prior, NUTS' ``random_seed``) derives from it.
    sample_kwargs : dict, optional
        :func:`pymc.sample` options over the defaults (:func:`pbassess.inference.merge_sample_kwargs`).
    sampler : callable, optional
        NUTS by another route than :func:`pbassess.inference.sample_model` on ``spec.model()``:
        ``sampler(seed=, sample_kwargs=, defaults=)`` returning a DataTree with ``posterior`` (the
        model's variables) and ``sample_stats``, e.g. a :class:`CompiledModel`'s ``sample`` with
        new data (a refit without recompiling).
    prior_groups : bool
        Add ``prior`` and ``log_prior`` (default). A refit loop may leave them out: both need
        PyMC to compile the model's prior graph, which is what reusing a compiled model avoids.
    defer_prior : bool, optional
        Draw the ``prior`` group when it is first read, from a copy of the generator's state here
        (the values are the same as drawn now). Default: when ``seed`` is the fit's own (an int,
        None or SeedSequence: :func:`pbassess.seeds.generator_is_own`), since drawing later cannot then change a caller's generator. ``True`` for a
        ``Generator`` its caller no longer uses (it is not advanced by the prior's draws); ``False``
        draws now.

    Returns
    -------
    Fit
        ``idata`` (the contract above), ``diagnostics`` (NUTS; ``None`` for exact draws) and
        ``model``.

    Examples
    --------
    >>> from pbassess.pymc_models.accuracy import BetaBernoulliSpec
    >>> from pbassess.inference.spec import Observations
    >>> obs = Observations.of([0, 0, 0, 1], [1, 1, 0, 1], ["i1", "i2", "i3", "i4"])
    >>> spec = BetaBernoulliSpec(n=[3, 1], correct=[2, 1], alpha=1.0, beta=1.0, coords=["a", "b"], observations=obs)
    >>> tree = fit(spec, draws=400, seed=1).idata
    >>> sorted(tree.children)
    ['constant_data', 'log_likelihood', 'log_prior', 'observed_data', 'posterior', 'prior']
    >>> dict(tree["log_likelihood"]["correct"].sizes)
    {'chain': 4, 'draw': 400, 'item': 4}
    """
    from pbassess.stats import as_generator

    inference = resolve_inference(inference)
    rng = as_generator(seed)
    per_chain = draws_per_chain(draws, sample_kwargs)
    sample_kwargs = {**dict(sample_kwargs or {}), "draws": per_chain}
    model = None
    sample_stats = None
    diag = None
    if inference == "conjugate":
        if not spec.has_conjugate:
            raise ConfigError(f"{spec.name} has no conjugate posterior; use inference='nuts'")
        primary = _chains(spec.conjugate_draws(per_chain * CHAINS, rng), CHAINS)
    elif sampler is not None:
        tree = sampler(seed=int(rng.integers(2**31 - 1)), sample_kwargs=sample_kwargs, defaults=spec.nuts_defaults)
        post = tree["posterior"].to_dataset()
        primary = {str(k): v.to_numpy() for k, v in post.data_vars.items()}
        if "sample_stats" in tree.children:
            sample_stats = tree["sample_stats"].to_dataset()
    else:
        model = spec.model()
        tree = sample_model(model, seed=int(rng.integers(2**31 - 1)), sample_kwargs=sample_kwargs,
                            defaults=spec.nuts_defaults, log_likelihood=False, split_internal=False,
                            var_names=spec.nuts_var_names)
        post = tree["posterior"].to_dataset()
        primary = {str(k): v.to_numpy() for k, v in post.data_vars.items()}
        if "sample_stats" in tree.children:
            sample_stats = tree["sample_stats"].to_dataset()
    posterior = spec.complete(primary)
    chains, n_draws = next(iter(posterior.values()))[1].shape[:2]
    coords = _coords(spec, chains, n_draws)
    groups: dict[str, xr.Dataset] = {"posterior": _dataset(posterior, coords)}
    prior_raw = None
    if prior_groups and (generator_is_own(seed) if defer_prior is None else defer_prior):  # drawn when first read, from the generator's state here (deferred.py)
        lazy_prior = _deferred_prior(spec, per_chain, rng, posterior)
        if lazy_prior is not None:
            groups["prior"] = lazy_prior
    if prior_groups and "prior" not in groups:
        prior_raw = spec.prior_draws(per_chain * CHAINS, rng)
    if prior_groups and "prior" not in groups and prior_raw is None:
        model = model if model is not None else spec.model()
        # the free variables and the model's deterministics (e.g. a user prior's ``accuracy``): the spec's
        # reported quantities are derived from them by ``complete``, not drawn
        names = list(dict.fromkeys([v.name for v in model.free_RVs] + [v.name for v in model.deterministics]))
        prior_raw = _pymc_prior(model, per_chain * CHAINS, int(rng.integers(2**31 - 1)), names)
    if prior_groups and "prior" not in groups:
        groups["prior"] = _dataset(spec.complete(_chains(prior_raw, CHAINS)), _coords(spec, CHAINS, per_chain))
    per_item = _per_item(spec, chains * n_draws)
    dims, values, cell_coords = spec.log_likelihood({k: v for k, (_, v) in posterior.items()}, per_item)
    ll_coords = {**coords, **cell_coords}
    if per_item:
        ll_coords["item"] = spec.observations.item
    if np.asarray(values).size > 0:
        groups["log_likelihood"] = _dataset({spec.observed_name: (dims, values)}, ll_coords)
    if prior_groups:
        groups["log_prior"] = (_deferred_log_prior(spec, posterior, coords)
                               or _deferred_pymc_log_prior(spec, posterior, groups["posterior"], coords, model)
                               or _log_prior(spec, posterior, groups["posterior"], coords, model))
    groups["observed_data"] = spec.observed_data()
    groups["constant_data"] = spec.constant_data()
    if sample_stats is not None:
        groups["sample_stats"] = sample_stats
    tree = xr.DataTree.from_dict({f"/{k}": v for k, v in groups.items()})
    tree.attrs["inference"] = inference
    if inference == "nuts":
        diag = run_diagnostics(tree, var_names=spec.diagnosed)
    return Fit(tree, spec, inference, diag, model)


def draws_per_chain(draws: Any = None, sample_kwargs: Mapping[str, Any] | None = None) -> int:
    """The one meaning of ``draws``: posterior draws per chain, from ``draws=`` or ``sample_kwargs["draws"]``.

    Both may be given only when they agree; neither gives :data:`pbassess.constants.DEFAULT_DRAWS`.

    Parameters
    ----------
    draws : int, optional
        Posterior draws per chain.
    sample_kwargs : dict, optional
        :func:`pymc.sample` options (their ``draws``).

    Returns
    -------
    int

    Examples
    --------
    >>> draws_per_chain(), draws_per_chain(250), draws_per_chain(None, {"draws": 300})
    (1000, 250, 300)
    >>> draws_per_chain(200, {"draws": 300})
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: draws=200 and sample_kwargs['draws']=300 disagree: give draws= (per chain) only
    """
    if sample_kwargs is not None and not isinstance(sample_kwargs, Mapping):
        raise ConfigError(f"sample_kwargs must be a dict of pm.sample options, got {type(sample_kwargs).__name__}")
    given = (sample_kwargs or {}).get("draws")
    if draws is None:
        draws = DEFAULT_DRAWS if given is None else given
    elif given is not None and given != draws:
        raise ConfigError(f"draws={draws!r} and sample_kwargs['draws']={given!r} disagree: give draws= (per chain) only")
    if isinstance(draws, bool) or not isinstance(draws, (int, np.integer)) or draws < 1:
        raise ConfigError(f"draws must be a positive integer (posterior draws per chain), got {draws!r}")
    if draws > 2**31 - 1:
        raise ConfigError(f"draws={draws:,} is too large (at most 2,147,483,647 per chain)")
    return int(draws)


def total_draws(inference: str, draws: Any = None, sample_kwargs: Mapping[str, Any] | None = None) -> int:
    """Posterior draws a fit keeps over all chains (for memory checks before fitting).

    Parameters
    ----------
    inference : {"conjugate", "nuts"}
    draws : int, optional
        Posterior draws per chain.
    sample_kwargs : dict, optional
        :func:`pymc.sample` options (their ``draws``). Their ``chains`` count for NUTS.

    Returns
    -------
    int

    Examples
    --------
    >>> total_draws("conjugate", 500), total_draws("nuts", None, {"chains": 2})
    (2000, 2000)
    """
    chains = CHAINS
    if resolve_inference(inference) == "nuts":
        chains = (sample_kwargs or {}).get("chains", CHAINS)
        if isinstance(chains, bool) or not isinstance(chains, (int, np.integer)) or chains < 1:
            raise ConfigError(f"sample_kwargs chains must be a positive integer, got {chains!r}")
    return int(chains) * draws_per_chain(draws, sample_kwargs)


def exact_loo(spec: Spec, n_samples: int = 0):
    """Exact leave-one-item-out ELPD of a conjugate spec, as ArviZ's ``ELPDDataLOO`` (O(cells) work).

    The leave-one-out predictive of a Beta-Bernoulli or Dirichlet-categorical cell is closed
    form, so nothing is estimated: Pareto k is 0 for every item and ``se`` is the usual
    ``sqrt(N var(elpd_i))``. ``p_loo`` is the log predictive density of the items given all
    data minus the ELPD, as ArviZ defines it.

    Parameters
    ----------
    spec : Spec
        A spec with a closed-form leave-one-out predictive (Beta-Bernoulli or Dirichlet-categorical cells).
    n_samples : int
        The ``n_samples`` ArviZ records (the fit's draws).

    Returns
    -------
    ELPDData
        ArviZ's LOO result (``elpd``, ``se``, ``p``, pointwise ``elpd_i`` and Pareto k = 0).

    Examples
    --------
    >>> from pbassess.pymc_models.accuracy import BetaBernoulliSpec
    >>> from pbassess.inference.spec import Observations
    >>> spec = BetaBernoulliSpec(n=[2], correct=[1], alpha=1.0, beta=1.0, observations=Observations.of([0, 0], [1, 0]))
    >>> # leaving either item out leaves Beta(2, 1) or Beta(1, 2): each item's predictive is 1/3
    >>> round(exact_loo(spec).elpd, 6) == round(2 * float(np.log(1 / 3)), 6)
    True
    """
    from arviz_stats.utils import ELPDDataLOO

    pointwise = spec.exact_loo_pointwise()
    if pointwise is None:
        raise ConfigError(f"{spec.name} has no closed-form leave-one-out predictive; use az.loo(result.idata)")
    elpd_i, lpd_i = pointwise
    obs = spec.observations
    n = elpd_i.size
    item = obs.item if obs is not None else np.arange(n)
    elpd = float(elpd_i.sum())
    se = float(np.sqrt(n * np.var(elpd_i))) if n > 1 else 0.0
    good_k = min(1 - 1 / np.log10(n_samples), 0.7) if n_samples > 10 else 0.7
    return ELPDDataLOO(
        elpd=elpd, se=se, p=float(lpd_i.sum() - elpd), n_samples=int(n_samples), n_data_points=int(n),
        scale="log", warning=False, good_k=float(good_k),
        elpd_i=xr.DataArray(elpd_i, dims=["item"], coords={"item": item}),
        pareto_k=xr.DataArray(np.zeros(n), dims=["item"], coords={"item": item}),
    )
