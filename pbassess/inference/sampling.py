"""NUTS sampling with one set of defaults, one merge of the user's ``sample_kwargs``, one progress rule.

Every PyMC fit of pbassess goes through :func:`sample_model`. It merges the defaults
(:data:`DEFAULT_SAMPLE_KWARGS`: 4 chains x 1000 draws after 1000 tuning steps, nutpie when it is
installed) with the user's ``sample_kwargs`` (the user wins), shows PyMC's progress bar only
when a person is watching (:func:`progress_wanted`), and returns an :class:`xarray.DataTree`
with the groups ``posterior``, ``sample_stats``, ``observed_data`` and a pointwise
``log_likelihood``. Internal reparametrisation variables (names ending in ``_asinh_logit``) move
to the ``unconstrained_posterior`` group so that ``az.summary(idata)`` shows the quantities a
user asked about.

While NUTS runs, the BLAS libraries are held to one thread (:func:`one_blas_thread`): the chains
are the parallelism, and BLAS threads spinning beside them cost a BernGP / BetaGP fit 3x its time.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import sys
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from pbassess.errors import ConfigError
from pbassess.seeds import as_generator

__all__ = [
    "DEFAULT_SAMPLE_KWARGS", "INFERENCES", "INTERNAL_SUFFIXES", "CompiledModel", "in_notebook", "merge_sample_kwargs",
    "progress_wanted",
    "mock_pymc_sample", "one_blas_thread", "quiet_progress", "resolve_inference", "sample_model",
]

#: The two inferences every assessment offers (``"mcmc"`` is accepted as an alias of ``"nuts"``).
INFERENCES: tuple[str, ...] = ("conjugate", "nuts")
_ALIASES = {"mcmc": "nuts", "nuts": "nuts", "conjugate": "conjugate"}

#: Defaults merged under the user's ``sample_kwargs`` by :func:`merge_sample_kwargs`.
DEFAULT_SAMPLE_KWARGS: dict[str, Any] = {"draws": 1000, "tune": 1000, "chains": 4}

#: Free variables whose names end like this are sampling coordinates, not reported quantities.
INTERNAL_SUFFIXES: tuple[str, ...] = ("_asinh_logit",)

_QUIET = [False]


def resolve_inference(inference: Any = None, *, default: str = "conjugate") -> str:
    """The canonical inference name from ``inference=`` (``"mcmc"`` is an old spelling of ``"nuts"``).

    Parameters
    ----------
    inference : str, optional
        ``"conjugate"``, ``"nuts"`` (or ``"mcmc"``), or ``None``.
    default : str
        The inference for ``None``.

    Returns
    -------
    str

    Examples
    --------
    >>> resolve_inference("mcmc"), resolve_inference(), resolve_inference("nuts")
    ('nuts', 'conjugate', 'nuts')
    >>> resolve_inference("gibbs")
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: unknown inference 'gibbs' (choose 'conjugate' or 'nuts'; 'mcmc' means 'nuts')
    """
    if inference is None:
        return default
    if not isinstance(inference, str) or inference.lower() not in _ALIASES:
        raise ConfigError(f"unknown inference {inference!r} (choose 'conjugate' or 'nuts'; 'mcmc' means 'nuts')")
    return _ALIASES[inference.lower()]


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Within this block the BLAS libraries (numpy's, scipy's, the ones nutpie's compiled model calls) use one thread.

    NUTS runs its chains in parallel, one a core. A model whose gradient multiplies matrices
    (the GP estimators' basis, the additive model's design) calls BLAS from every chain, and
    BLAS's own threads then compete with the chains for the cores: on the 2-core machine a
    BetaGP-SLP fit over the ACS arms (2 chains x 400 steps) took 81 s with OpenBLAS's default of
    2 threads and 26 s with one. The limit is lifted when the block ends
    (``threadpoolctl.threadpool_limits``).

    Returns
    -------
    context manager

    Examples
    --------
    >>> import threadpoolctl
    >>> with one_blas_thread():
    ...     all(lib["num_threads"] == 1 for lib in threadpoolctl.threadpool_info() if lib["user_api"] == "blas")
    True
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def _plain_shape_mismatch(src_shapes: Any, index_shape: Any) -> None:
    """Stands in for numba's ``raise_with_shape_context`` inside :func:`plain_slice_errors`."""
    raise NotImplementedError


@functools.cache
def _register_plain_shape_mismatch() -> None:
    """Give :func:`_plain_shape_mismatch` its one numba implementation (once a process)."""
    from numba.extending import overload

    @overload(_plain_shape_mismatch, target="generic")
    def _implementation(src_shapes, index_shape):  # noqa: ANN001, ANN202 -- numba's overload protocol
        def raise_plain(src_shapes, index_shape):  # noqa: ANN001, ANN202
            raise ValueError("cannot assign slice from input of different size")

        return raise_plain


@contextlib.contextmanager
def plain_slice_errors() -> Iterator[None]:
    """Within this block numba compiles a slice assignment's size check with a fixed error message.

    nutpie's compiled log density copies the gradient into the sampler's buffer (``out[...] =
    grad``). Numba's CPU lowering of every slice assignment also compiles the error raised when
    the sizes differ, a message that formats both shapes as strings, and numba's string formatting
    of integers is slow to compile: the first such assignment of a process took 3.5-4.8 s, a third
    of nutpie's compilation of the anchored ACS surface (``benchmarks/nuts_compile.py``). nutpie
    checks the sizes before the copy, so the message is never raised there. Inside the block the
    error is numba's own message for targets without strings ("cannot assign slice from input of
    different size"): ``numba.np.arrayobj.raise_with_shape_context``, the hook numba provides
    for a target's message, is swapped for one with only that implementation, and restored when
    the block ends. Only functions compiled inside the block have the shorter message. If numba
    no longer has the hook, the block changes nothing.

    Returns
    -------
    context manager

    Examples
    --------
    >>> import numba
    >>> import numpy as np
    >>> @numba.njit
    ... def copy_into(out, values):
    ...     out[...] = values
    >>> with plain_slice_errors():
    ...     copy_into(np.zeros(3), np.ones(3))
    ...     copy_into(np.zeros(3), np.ones(2))
    Traceback (most recent call last):
    ...
    ValueError: cannot assign slice from input of different size
    """
    try:
        import numba.np.arrayobj as arrayobj
    except ImportError:  # pragma: no cover - numba is a dependency
        yield
        return
    original = getattr(arrayobj, "raise_with_shape_context", None)
    if original is None:  # pragma: no cover - a numba without the hook
        yield
        return
    _register_plain_shape_mismatch()
    arrayobj.raise_with_shape_context = _plain_shape_mismatch
    try:
        yield
    finally:
        arrayobj.raise_with_shape_context = original


def _nutpie_available() -> bool:
    return importlib.util.find_spec("nutpie") is not None


@contextlib.contextmanager
def quiet_progress() -> Iterator[None]:
    """Within this block no progress bar is shown (the CLI's ``--json`` uses it).

    Returns
    -------
    context manager
        Inside it :func:`progress_wanted` is ``False``.

    Examples
    --------
    >>> with quiet_progress():
    ...     progress_wanted()
    False
    """
    previous = _QUIET[0]
    _QUIET[0] = True
    try:
        yield
    finally:
        _QUIET[0] = previous


def in_notebook() -> bool:
    """Whether this process is a Jupyter kernel (where stderr is no terminal, yet a person watches).

    Examples
    --------
    >>> in_notebook()
    False
    """
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:  # noqa: BLE001 - an IPython without a running shell
        return False
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def progress_wanted() -> bool:
    """Whether a person is watching: a terminal on stderr or a Jupyter kernel, and no :func:`quiet_progress` block.

    Every wait of pbassess that shows progress (NUTS, simulations, grids, surfaces) asks this one
    rule; ``--json`` output and ``--quiet`` run inside :func:`quiet_progress`.

    Returns
    -------
    bool

    Examples
    --------
    >>> with quiet_progress():
    ...     progress_wanted()
    False
    """
    if _QUIET[0]:
        return False
    if in_notebook():
        return True
    stream = sys.stderr
    try:
        return bool(stream is not None and stream.isatty())
    except (AttributeError, ValueError):
        return False


def _check_count(key: str, value: Any) -> None:
    minimum = 0 if key == "tune" else 1
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        kind = "non-negative" if key == "tune" else "positive"
        raise ConfigError(f"sample_kwargs: {key} must be a {kind} integer, got {value!r}")
    if value >= 2**31 - 1:
        raise ConfigError(f"sample_kwargs: {key}={value:,} is too large (at most 2,147,483,646)")


def _check_target_accept(value: Any) -> None:
    """A NUTS target acceptance (given directly or in ``nuts``) is a number in (0, 1), else a one-line error."""
    try:
        ok = 0 < float(value) < 1
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ConfigError(f"sample_kwargs: target_accept must be in (0, 1), got {value!r}")


def merge_sample_kwargs(
    sample_kwargs: Mapping[str, Any] | None = None,
    *,
    defaults: Mapping[str, Any] | None = None,
    seed: Any = None,
    progressbar: bool | None = None,
) -> dict[str, Any]:
    """The one place where sampler defaults meet the user's options.

    Order (later wins): :data:`DEFAULT_SAMPLE_KWARGS`, nutpie when installed, ``defaults`` (a
    model's own, e.g. a higher ``target_accept``), ``seed`` as ``random_seed``, the progress
    rule, then the user's ``sample_kwargs``. A ``sampler`` key is read as ``nuts_sampler``.

    Parameters
    ----------
    sample_kwargs : dict, optional
        The user's :func:`pymc.sample` options.
    defaults : dict, optional
        A model's own defaults.
    seed : int or numpy.random.Generator, optional
        Becomes ``random_seed``.
    progressbar : bool, optional
        Force the progress bar on or off (default: :func:`progress_wanted`).

    Returns
    -------
    dict
        Options for :func:`pymc.sample`.

    Examples
    --------
    >>> kw = merge_sample_kwargs({"draws": 200, "chains": 2}, seed=3, progressbar=False)
    >>> kw["draws"], kw["tune"], kw["chains"], kw["random_seed"], kw["progressbar"]
    (200, 1000, 2, 3, False)
    >>> merge_sample_kwargs({"draws": 0})
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: sample_kwargs: draws must be a positive integer, got 0
    >>> user = {"nuts": {"target_accept": 0.9}}
    >>> kw = merge_sample_kwargs(user, defaults={"target_accept": 0.95})
    >>> "target_accept" in kw, kw["nuts"], kw["nuts"] is user["nuts"]  # the user's wins; their dict is not shared
    (False, {'target_accept': 0.9}, False)
    """
    from pbassess.stats import as_generator

    if sample_kwargs is not None and not isinstance(sample_kwargs, Mapping):
        raise ConfigError(f"sample_kwargs must be a dict of pm.sample options, got {type(sample_kwargs).__name__}")
    if isinstance(seed, np.random.Generator) or (seed is not None and not isinstance(seed, (int, np.integer))):
        seed = int(as_generator(seed).integers(2**31 - 1))
    kwargs: dict[str, Any] = dict(DEFAULT_SAMPLE_KWARGS)
    if _nutpie_available():
        kwargs["nuts_sampler"] = "nutpie"
    kwargs.update(dict(defaults or {}))
    kwargs["random_seed"] = None if seed is None else int(seed)
    kwargs["progressbar"] = progress_wanted() if progressbar is None else bool(progressbar)
    # nested options copied: pm.sample moves target_accept into the ``nuts`` dict it is given, so a
    # user's dict reused for a second fit (a widened refit) would otherwise hold it twice
    user = {k: dict(v) if isinstance(v, Mapping) else v for k, v in (sample_kwargs or {}).items()}
    if "sampler" in user:
        user["nuts_sampler"] = user.pop("sampler")
    if "sampler" in kwargs:
        kwargs["nuts_sampler"] = kwargs.pop("sampler")
    nuts = user.get("nuts")
    if isinstance(nuts, dict) and "target_accept" in nuts:
        if "target_accept" in user:
            raise ConfigError("sample_kwargs: target_accept is given twice, directly and in 'nuts' (give it once)")
        kwargs.pop("target_accept", None)  # the user's, in 'nuts', replaces a model's default
        _check_target_accept(nuts["target_accept"])
    kwargs.update(user)
    if kwargs.get("nuts_sampler") == "nutpie" and not _nutpie_available():  # pragma: no cover
        kwargs["nuts_sampler"] = "pymc"
    if kwargs.get("nuts_sampler") not in (None, "pymc", "nutpie", "numpyro", "blackjax"):
        raise ConfigError(f"unknown sampler {kwargs['nuts_sampler']!r} (choose 'nutpie' or 'pymc')")
    if kwargs.get("return_inferencedata") is False:
        raise ConfigError("sample_kwargs: return_inferencedata=False is not supported (pbassess needs the DataTree)")
    for key in ("draws", "tune", "chains"):
        if kwargs.get(key) is not None:
            _check_count(key, kwargs[key])
    if "target_accept" in kwargs:
        _check_target_accept(kwargs["target_accept"])
    if kwargs.get("cores") is None and kwargs.get("chains"):
        kwargs["cores"] = min(int(kwargs["chains"]), 2)
    return kwargs


@contextlib.contextmanager
def _pymc_log(shown: bool) -> Iterator[None]:
    """PyMC's INFO lines ("NUTS[nutpie]: [...]", "Sampling 4 chains ...") only where progress is shown."""
    import logging

    logger = logging.getLogger("pymc")
    previous = logger.level
    if not shown:
        logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(previous)


def _split_internal(idata: Any, extra: Sequence[str] = ()) -> Any:
    """Move reparametrisation variables from ``posterior`` to ``unconstrained_posterior``."""
    post = idata["posterior"].to_dataset()
    internal = [v for v in post.data_vars if str(v).endswith(INTERNAL_SUFFIXES) or str(v) in extra]
    if not internal:
        return idata
    idata["unconstrained_posterior"] = post[internal]
    idata["posterior"] = post.drop_vars(internal)
    return idata


def sample_model(
    model: Any,
    *,
    seed: Any = None,
    sample_kwargs: Mapping[str, Any] | None = None,
    progressbar: bool | None = None,
    defaults: Mapping[str, Any] | None = None,
    log_likelihood: bool | Sequence[str] = True,
    var_names: Sequence[str] | None = None,
    internal: Sequence[str] = (),
    split_internal: bool = True,
):
    """Run NUTS on ``model`` with pbassess defaults and return the :class:`xarray.DataTree`.

    Parameters
    ----------
    model : pymc.Model
    seed : int or numpy.random.Generator, optional
        ``random_seed`` of :func:`pymc.sample` (a Generator gives an integer seed) unless
        ``sample_kwargs`` sets it.
    sample_kwargs : dict, optional
        :func:`pymc.sample` options merged over the defaults (:func:`merge_sample_kwargs`).
    progressbar : bool, optional
        ``None`` (default): show PyMC's progress bar only when stderr is a terminal and no
        :func:`quiet_progress` block is active.
    defaults : dict, optional
        Model-specific defaults under the user's options (e.g. ``{"target_accept": 0.95}``).
    log_likelihood : bool or sequence of str
        Add the pointwise ``log_likelihood`` group (of these observed variables).
    var_names : sequence of str, optional
        Variables kept in the trace (the free variables are always kept for the log-likelihood).
    internal : sequence of str
        Further sampling coordinates to move to ``unconstrained_posterior`` (beside every
        ``*_asinh_logit``), so that ``az.summary(idata)`` shows only reported quantities.
    split_internal : bool
        Move the sampling coordinates at all (:func:`pbassess.inference.fit` keeps them in
        ``posterior``, where ``pm.compute_log_prior`` looks for the free variables).

    Returns
    -------
    xarray.DataTree
        Groups ``posterior``, ``sample_stats``, ``observed_data``, ``log_likelihood`` (and
        ``unconstrained_posterior`` for internal coordinates).

    Examples
    --------
    >>> from unittest import mock
    >>> from pbassess.pymc_models.accuracy import beta_binomial_model
    >>> model = beta_binomial_model([10], [7], 1.0, 1.0)
    >>> with mock.patch("pymc.sample", mock_pymc_sample):  # no real NUTS in a doctest
    ...     idata = sample_model(model, seed=1, sample_kwargs={"draws": 20, "chains": 1})
    >>> sorted(idata.children)
    ['log_likelihood', 'observed_data', 'posterior', 'sample_stats', 'unconstrained_posterior']
    """
    import pymc as pm

    kwargs = merge_sample_kwargs(sample_kwargs, defaults=defaults, seed=seed, progressbar=progressbar)
    if var_names is not None:
        free = [v.name for v in model.free_RVs]
        kwargs["var_names"] = list(dict.fromkeys([*free, *var_names]))
    kwargs.setdefault("compute_convergence_checks", False)
    try:
        with warnings.catch_warnings(), _pymc_log(bool(kwargs.get("progressbar"))):
            warnings.filterwarnings("ignore", message=".*samples per chain.*")
            warnings.filterwarnings("ignore", category=RuntimeWarning)
            with one_blas_thread(), plain_slice_errors():
                idata = pm.sample(model=model, **kwargs)
    except TypeError as exc:
        raise ConfigError(f"sample_kwargs rejected by pm.sample: {exc}") from None
    if log_likelihood:
        names = None if log_likelihood is True else list(log_likelihood)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pm.compute_log_likelihood(idata, var_names=names, model=model, progressbar=False)
    return _split_internal(idata, internal) if split_internal else idata


class CompiledModel:
    """A PyMC model compiled once by nutpie, sampled again and again with new data (and a warm start).

    Refitting the same model on new counts (an exploration loop) would otherwise recompile its
    log density every time (seconds); nutpie swaps the model's data containers into the compiled
    function instead. Sampler settings merge as for every fit (:func:`merge_sample_kwargs`), so this
    and :func:`sample_model` are the only places pbassess calls a sampler.

    Parameters
    ----------
    model : pymc.Model
        Its data containers (``pm.Data``) are what :meth:`sample` may replace.

    Examples
    --------
    >>> import pymc as pm
    >>> with pm.Model() as model:
    ...     k = pm.Data("k", 7.0)
    ...     p = pm.Beta("p", 1.0, 1.0)
    ...     _ = pm.Binomial("y", n=10, p=p, observed=k)
    >>> compiled = CompiledModel(model)
    >>> tree = compiled.sample({"k": 2.0}, seed=0, sample_kwargs={"draws": 300, "tune": 300, "chains": 2})
    >>> mean = float(tree["posterior"]["p"].mean())   # the posterior is Beta(3, 9): mean 0.25, sd 0.12
    >>> bool(abs(mean - 0.25) < 0.05), compiled.unconstrained_mean.shape   # 0.05: ~6 Monte Carlo errors
    (True, (1,))
    """

    def __init__(self, model: Any) -> None:
        import nutpie

        self.model = model
        with plain_slice_errors():
            self._compiled = nutpie.compile_pymc_model(model)
        self.data_names = frozenset(var.name for var in self._compiled.shared_var_keys)
        #: The posterior mean of the last run in the unconstrained space (``init_mean`` of a warm start).
        self.unconstrained_mean: np.ndarray | None = None

    def sample(self, data: Mapping[str, Any] | None = None, *, seed: Any = None,
               sample_kwargs: Mapping[str, Any] | None = None, defaults: Mapping[str, Any] | None = None,
               warm_start: bool = False) -> Any:
        """NUTS on the compiled model with ``data`` swapped in: a DataTree with ``posterior`` and ``sample_stats``.

        ``data`` keys the model does not hold are ignored; ``warm_start`` starts the chains at the
        previous run's posterior mean (tuning is not shortened).
        """
        import nutpie

        kwargs = merge_sample_kwargs(sample_kwargs, defaults=defaults, seed=seed, progressbar=False)
        compiled = self._compiled
        if data:
            compiled = compiled.with_data(**{k: v for k, v in data.items() if k in self.data_names})
        options = {key: kwargs[key] for key in ("draws", "tune", "chains", "cores", "target_accept") if key in kwargs}
        if warm_start and self.unconstrained_mean is not None:
            options["init_mean"] = self.unconstrained_mean
        seed_value = kwargs.get("random_seed")
        with one_blas_thread():
            trace = nutpie.sample(compiled, seed=int(as_generator(seed_value).integers(2**31)) if seed_value is None
                                  else int(seed_value), progress_bar=False, store_unconstrained=True, **options)
        stats = trace["sample_stats"]
        self.unconstrained_mean = np.asarray(stats["unconstrained_draw"].mean(("chain", "draw")).values, float)
        trace["sample_stats"] = stats.to_dataset()[[v for v in stats.data_vars if "unconstrained" not in str(v)]]
        return trace


def mock_pymc_sample(*args: Any, **kwargs: Any):
    """``pymc.testing.mock_sample`` with a ``diverging`` sample stat: prior draws shaped like ``pm.sample``.

    For doctests and plumbing tests only (``mock.patch("pymc.sample", mock_pymc_sample)``).

    Parameters
    ----------
    *args, **kwargs
        What :func:`pymc.sample` takes.

    Returns
    -------
    xarray.DataTree
        Prior draws in the shape :func:`pymc.sample` returns.

    Examples
    --------
    >>> from unittest import mock
    >>> import pymc as pm
    >>> with pm.Model(), mock.patch("pymc.sample", mock_pymc_sample):
    ...     x = pm.Normal("x")
    ...     idata = pm.sample(draws=10, chains=1)
    >>> idata.posterior["x"].shape, bool(idata.sample_stats["diverging"].any())
    ((1, 10), False)
    """
    from pymc.testing import mock_sample

    kwargs.pop("nuts_sampler", None)
    return mock_sample(*args, sample_stats={"diverging": lambda size: np.zeros(size, dtype=bool)}, **kwargs)
