"""The result layer: one object per assessment, holding its posterior as an ArviZ DataTree.

Every assessment returns a subclass of :class:`AssessmentResult`. It carries

* ``idata``: an :class:`xarray.DataTree` with groups ``posterior``, ``observed_data`` and a
  pointwise ``log_likelihood`` (plus ``sample_stats`` for NUTS), for both inferences, so
  ``az.summary(result.idata)``, ``az.plot_forest``, ``az.loo``, ``az.compare`` and ``.azstats``
  work the same way;
* ``posterior``: the reported variables (an :class:`xarray.Dataset`, dims ``chain, draw, ...``);
* ``counts``: the sufficient statistics the posterior was computed from;
* ``prior``, ``data_summary``, ``options``: JSON-able dicts; ``inference`` (``"conjugate"`` or
  ``"nuts"``; ``engine`` keeps the old spelling ``"mcmc"``), ``ci_prob``, ``diagnostics``
  (NUTS: :func:`pbassess.inference.diagnostics`, with ``"ok"``);
* ``model``: the :class:`pymc.Model` (built from the counts on demand for conjugate fits);

and offers ``summary()``, ``sentence()``, ``plot()``, ``to_json()`` (always with ``metric``,
``inference``, ``ci_prob``, ``diagnostics``, ``sentence``), ``save(path)`` and
``AssessmentResult.load(path)`` (one netCDF file keeping every group, including the
log-likelihood). Loading finds the class through :mod:`pbassess.results.registry`.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import xarray as xr

from pbassess.constants import CI_PROB
from pbassess.errors import DataError
from pbassess.inference.diagnostics import diagnostics as sampler_diagnostics
from pbassess.inference.diagnostics import diagnostics_note

__all__ = ["AssessmentResult", "mcmc_diagnostics"]

_LEGACY_ENGINE = {"nuts": "mcmc", "conjugate": "conjugate"}

#: The group of a saved file holding the state a result class adds (:meth:`AssessmentResult._extra_datasets`).
_EXTRA = "pbassess_extra"


def mcmc_diagnostics(idata: Any, var_names: list[str] | None = None) -> dict[str, Any]:
    """Alias of :func:`pbassess.inference.diagnostics` (kept for existing callers).

    Parameters
    ----------
    idata : xarray.DataTree or arviz.InferenceData
        A fit with a ``posterior`` group (and ``sample_stats`` for divergences).
    var_names : list of str, optional
        The variables to check (default all).

    Returns
    -------
    dict
        What :func:`pbassess.inference.diagnostics` returns (R-hat, ESS, divergences, ``ok``).

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from pbassess.inference import diagnostics
    >>> draws = np.random.default_rng(0).normal(size=(2, 500))
    >>> idata = xr.DataTree.from_dict({"posterior": xr.Dataset({"x": (("chain", "draw"), draws)})})
    >>> mcmc_diagnostics(idata) == diagnostics(idata)
    True
    """
    return sampler_diagnostics(idata, var_names=var_names)


def _canonical_inference(engine: str) -> str:
    """``conjugate`` or ``nuts`` for the two inferences (``mcmc``, ``mcmc-nutpie``, ... mean NUTS); others kept."""
    name = str(engine)
    if name in ("nuts", "mcmc") or name.startswith(("mcmc-", "nuts-")):
        return "nuts"
    return name


class AssessmentResult:
    """Base class of all assessment results (see the module docstring).

    Parameters
    ----------
    posterior : xarray.Dataset
        The reported variables, dims ``chain, draw, ...``.
    counts : xarray.Dataset
        The sufficient statistics the posterior was computed from.
    prior, data_summary : dict
        The prior's settings and a summary of the data (JSON-able; saved with the result).
    engine : str, optional
        Old spelling of ``inference`` (``"mcmc"`` for NUTS).
    inference : {"conjugate", "nuts"}, optional
        How the posterior was computed (default ``"conjugate"``).
    ci_prob : float
        Credible mass of the HDIs the result reports.
    idata : xarray.DataTree, optional
        The full DataTree (``posterior``, ``log_likelihood``, ``observed_data``, ...); built from
        ``posterior`` and ``counts`` on demand when omitted.
    diagnostics : dict, optional
        Sampler diagnostics (:func:`pbassess.inference.diagnostics`; NUTS only).
    options : dict, optional
        The options of the call that made the result (JSON-able).
    model : pymc.Model, optional
        The PyMC model of the fit (built from the counts on demand for conjugate fits).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from pbassess import Predictions
    >>> from pbassess.assess import assess_accuracy
    >>> p = Predictions.from_top1(["a", "a", "b"], [0.9, 0.8, 0.7], ["a", "b", "b"])
    >>> res = assess_accuracy(p, seed=0)
    >>> isinstance(res, AssessmentResult), res.inference, sorted(res.idata.children)
    (True, 'conjugate', ['constant_data', 'log_likelihood', 'log_prior', 'observed_data', 'posterior', 'prior'])
    >>> back = AssessmentResult.load(res.save(pathlib.Path(tempfile.mkdtemp()) / "accuracy.nc"))
    >>> type(back).__name__, back.summary()["mean"].round(3).tolist()
    ('AccuracyResult', [0.5, 0.667])
    """

    metric: ClassVar[str] = "base"
    #: True for helper bases that are never returned (set by ``class X(AssessmentResult, abstract=True)``
    #: or by a name starting with ``_``); concrete classes register themselves under their ``metric``.
    _abstract: ClassVar[bool] = True

    def __init_subclass__(cls, abstract: bool = False, **kwargs: Any) -> None:
        """Register every concrete subclass under its ``metric`` (and its ``"module:qualname"``).

        A class is concrete unless it says ``abstract=True`` or its name starts with ``_``; a
        concrete class that defines no ``metric`` of its own is reached through the
        ``result_class`` recorded in its saved files. Two different classes with one ``metric``
        raise :class:`~pbassess.errors.ConfigError` when the second is defined.
        """
        super().__init_subclass__(**kwargs)
        cls._abstract = bool(abstract) or cls.__name__.startswith("_")
        if not cls._abstract:
            from pbassess.results.registry import register_subclass

            register_subclass(cls)

    # -- what save() keeps beyond the base arguments (subclasses with more state override) -----
    def _extra_state(self) -> dict[str, Any]:
        """JSON-able state beyond the base ``__init__`` arguments, written by :meth:`save`."""
        return {}

    def _extra_datasets(self) -> dict[str, Any]:
        """Named :class:`xarray.Dataset` objects (or nested results) written by :meth:`save`.

        Names may contain ``/`` (e.g. ``"results/pooled"``); no name may be a prefix of another.
        """
        return {}

    def _restore(self, state: dict[str, Any], datasets: dict[str, Any]) -> None:
        """Set the state that :meth:`_extra_state` and :meth:`_extra_datasets` saved (after loading)."""

    def __init__(
        self,
        posterior: xr.Dataset,
        counts: xr.Dataset,
        *,
        prior: dict[str, Any],
        data_summary: dict[str, Any],
        engine: str | None = None,
        inference: str | None = None,
        ci_prob: float = CI_PROB,
        idata: Any = None,
        diagnostics: dict[str, Any] | None = None,
        options: dict[str, Any] | None = None,
        model: Any = None,
    ) -> None:
        self.posterior = posterior
        self.counts = counts
        self.prior = dict(prior)
        self.data_summary = dict(data_summary)
        given = inference or engine or "conjugate"
        self.inference = _canonical_inference(given)
        self.engine = engine if engine is not None else _LEGACY_ENGINE.get(self.inference, self.inference)
        self.ci_prob = float(ci_prob)
        self._idata = idata
        self.diagnostics = diagnostics
        self.options = dict(options or {})
        self._model = model

    # -- to be provided by subclasses --------------------------------------------------
    def summary(self):  # pragma: no cover - abstract
        """A :class:`pandas.DataFrame`: one row per region with mean, HDI, counts, ..."""
        raise NotImplementedError

    def sentence(self) -> str:  # pragma: no cover - abstract
        """One plain-language sentence answering the assessment's question."""
        raise NotImplementedError

    def to_json(self) -> dict[str, Any]:  # pragma: no cover - abstract
        """The JSON object of the CLI contract for this metric."""
        raise NotImplementedError

    def plot(self, **kwargs: Any):  # pragma: no cover - abstract
        """The metric's main figure."""
        raise NotImplementedError

    def _build_model(self):
        """The PyMC model of this fit, rebuilt from ``counts`` (subclasses override)."""
        return None

    # -- shared ------------------------------------------------------------------------
    @property
    def idata(self) -> xr.DataTree:
        """The ArviZ DataTree of the fit (``posterior``, ``observed_data``, ``log_likelihood``, ...)."""
        if self._idata is None:
            self._idata = xr.DataTree.from_dict({"/posterior": self.posterior})
        return self._idata

    @idata.setter
    def idata(self, value: Any) -> None:
        self._idata = value

    @property
    def model(self):
        """The :class:`pymc.Model` of the fit (rebuilt from the counts when it was not sampled here)."""
        if self._model is None:
            self._model = self._build_model()
        return self._model

    @property
    def diagnostics_ok(self) -> bool:
        """False when a NUTS fit failed its diagnostics (always True for conjugate fits)."""
        return bool((self.diagnostics or {}).get("ok", True))

    def qualify(self, text: str) -> str:
        """``text`` followed by the diagnostics warning when the fit failed them."""
        return text + diagnostics_note(self.diagnostics)

    def az_summary(self, var_names: Any = None, **kwargs: Any):
        """:func:`arviz.summary` of the fit with the project's interval: the HDI at :attr:`ci_prob`.

        ArviZ's own default is an 89% equal-tailed interval (its ``rcParams["stats.ci_prob"]`` and
        ``["stats.ci_kind"]``), which would not agree with the HDI in :meth:`sentence` and
        :meth:`summary`. This passes ``ci_prob=self.ci_prob`` (0.95 unless the assessment was given
        another ``ci_prob``) and ``ci_kind="hdi"``; every other keyword goes to :func:`arviz.summary`
        (and may override these two). The HDI columns are named ``hdi95_lb`` / ``hdi95_ub`` at 95%.

        Parameters
        ----------
        var_names : str or list of str, optional
            Posterior variables to summarise (default: all, the model's free variables included).
        **kwargs
            Passed on to :func:`arviz.summary` (``kind=``, ``fmt=``, ``round_to=``, ``coords=``, ...).

        Returns
        -------
        pandas.DataFrame or xarray.Dataset
            What :func:`arviz.summary` returns.

        Examples
        --------
        >>> from pbassess import Predictions
        >>> from pbassess.assess import assess_accuracy
        >>> p = Predictions.from_top1(["a"] * 20 + ["b"] * 20, [0.9] * 40, ["a"] * 20 + ["a", "b"] * 10)
        >>> res = assess_accuracy(p, prior="uniform", seed=0)
        >>> table = res.az_summary(var_names="accuracy", kind="stats", round_to="none")
        >>> list(table.columns)
        ['mean', 'sd', 'hdi95_lb', 'hdi95_ub']
        >>> bool(abs(table["hdi95_lb"].iloc[0] - res.summary()["hdi_low"].iloc[0]) < 0.01)  # exact Beta(21, 1) HDI
        True
        """
        import arviz as az

        options = {"ci_prob": self.ci_prob, "ci_kind": "hdi", **kwargs}
        return az.summary(self.idata, var_names=var_names, **options)

    def annotate(self, table: Any) -> Any:
        """A summary table with ``attrs["diagnostics"]`` and, when the fit failed them, ``attrs["warning"]``."""
        table.attrs["diagnostics"] = self.diagnostics
        note = diagnostics_note(self.diagnostics).strip()
        if note:
            table.attrs["warning"] = note
        return table

    def envelope(self) -> dict[str, Any]:
        """The keys every ``to_json`` shares: metric, inference, ci_prob, diagnostics, sentence."""
        diagnostics = self.diagnostics
        if diagnostics is None and self.inference == "conjugate":  # same shape as MCMC fits: always has "ok"
            diagnostics = {"ok": True, "method": "exact conjugate draws; no MCMC to check"}
        return {"metric": self.metric, "inference": self.inference, "ci_prob": self.ci_prob,
                "diagnostics": diagnostics, "sentence": self.sentence()}

    def with_envelope(self, out: dict[str, Any]) -> dict[str, Any]:
        """``out`` completed with the shared keys (own keys win)."""
        return {**self.envelope(), **out}

    def _spec(self):
        """This fit's :class:`~pbassess.inference.Spec` rebuilt from its groups (None: no closed form)."""
        return None

    def loo(self, *, exact: bool | None = None):
        """Leave-one-item-out ELPD of the fit, as ArviZ's ``ELPDDataLOO`` (``az.compare`` takes it).

        Conjugate models have a closed-form leave-one-out predictive, so by default their ELPD is
        exact (:func:`pbassess.inference.exact_loo`: O(cells), Pareto k 0 for every item); other
        models, a user's PyMC prior, or ``exact=False`` use PSIS-LOO (``az.loo(result.idata)``, its
        ``reff`` from the posterior's small variables: :func:`pbassess.inference.psis_relative_efficiency`).

        Examples
        --------
        >>> import pbassess as pb
        >>> res = pb.assess_accuracy(pb.load_data(), seed=0)
        >>> exact = res.loo()
        >>> exact.n_data_points == int(res.counts["n"].sum()), float(exact.pareto_k.max())
        (True, 0.0)
        """
        from pbassess.errors import ConfigError
        from pbassess.inference import exact_loo

        spec = None if exact is False else self._spec()
        if spec is not None and spec.exact_loo_pointwise() is not None:
            post = self.idata["posterior"]
            return exact_loo(spec, int(post.sizes["chain"] * post.sizes["draw"]))
        if exact:
            raise ConfigError(f"the {self.metric} fit has no closed-form leave-one-out predictive; use exact=False")
        import arviz as az

        from pbassess.inference import psis_relative_efficiency

        return az.loo(self.idata, reff=psis_relative_efficiency(self.idata))

    def draws(self, var: str) -> np.ndarray:
        """Posterior draws of ``var`` stacked over chains: shape (n_draws, ...)."""
        da = self.posterior[var]
        return da.stack(sample=("chain", "draw")).transpose("sample", ...).to_numpy()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} ({self.inference}): {self.sentence()}>"

    def _repr_html_(self) -> str:
        table = self.summary()
        return f"<p><b>{type(self).__name__}</b> ({self.inference}): {self.sentence()}</p>" + table.to_html(
            float_format=lambda v: f"{v:.3f}", max_rows=40
        )

    def _saved_nodes(self) -> dict[str, xr.Dataset]:
        """The nodes :meth:`save` writes: path -> Dataset (root attributes, groups, counts, extra state)."""
        from pbassess._version import __version__

        cls = type(self)
        extra = self._extra_datasets()
        nested = [key for key, value in extra.items() if isinstance(value, AssessmentResult)]
        attrs = {
            "pbassess_version": __version__, "metric": self.metric,
            "result_class": f"{cls.__module__}:{cls.__qualname__}",
            "engine": self.engine, "inference": self.inference, "ci_prob": self.ci_prob,
            **{key: json.dumps(getattr(self, key), default=_jsonable)
               for key in ("prior", "data_summary", "options", "diagnostics")},
            "extra_state": json.dumps(self._extra_state(), default=_jsonable),
            # the reported variables (the posterior group also holds the model's free variables)
            "reported_vars": json.dumps([str(v) for v in self.posterior.data_vars]),
            "extra_datasets": json.dumps([key for key in extra if key not in nested]),
            "extra_results": json.dumps(nested),
        }
        children: dict[str, xr.Dataset] = {}
        if self._idata is not None:
            for name, child in self._idata.children.items():
                children[name] = child.to_dataset()
        try:
            children["posterior"] = xr.merge([children.get("posterior", xr.Dataset()), self.posterior],
                                             compat="override", join="outer")
        except ValueError:  # e.g. a surface keeps its draws stacked in one chain beside the NUTS trace
            children.setdefault("posterior", self.posterior)
            children[_OWN_POSTERIOR] = self.posterior
        children["counts"] = self.counts
        nodes = {"/": xr.Dataset(attrs=attrs), **{f"/{k}": _plain(v) for k, v in children.items()}}
        for key, value in extra.items():
            if isinstance(value, AssessmentResult):
                for sub, ds in value._saved_nodes().items():
                    nodes[f"/{_EXTRA}/{key}" + ("" if sub == "/" else sub)] = ds
            else:
                nodes[f"/{_EXTRA}/{key}"] = _plain(value)
        return nodes

    def save(self, path: str | os.PathLike) -> Path:
        """Write the whole result to one netCDF file, atomically.

        Every group of :attr:`idata` is kept (``posterior`` merged with the reported
        variables, ``log_likelihood``, ``observed_data``, ``sample_stats``, ...) beside
        ``counts`` and attributes recording the metric, result class, inference, prior, data
        summary, options, diagnostics, credible mass and the pbassess version, and the state a
        subclass adds (:meth:`_extra_state`, :meth:`_extra_datasets`, group ``pbassess_extra``).
        """
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tree = xr.DataTree.from_dict(self._saved_nodes())
        from pbassess._atomic import atomic_write_bytes

        # built in memory, then written atomically by pbassess: a failed write (full disk, ulimit -f)
        # is one OSError and leaves no half-written HDF5 file for h5py to crash on at exit
        view = tree.to_netcdf(engine="h5netcdf")  # a memoryview of an in-memory file
        try:
            data = view.tobytes()
        finally:
            view.release()  # before its buffer can be freed (else a crash at exit after a failed write)
        return atomic_write_bytes(path, data)

    @staticmethod
    def load(path: str | os.PathLike) -> AssessmentResult:
        """Read a result written by :meth:`save` (any metric), in any process.

        Examples
        --------
        >>> from pbassess.results import AssessmentResult
        >>> AssessmentResult.load("missing.nc")
        Traceback (most recent call last):
        ...
        pbassess.errors.DataError: result file not found: missing.nc
        """
        path = Path(path)
        if not path.exists():
            raise DataError(f"result file not found: {path}")
        try:
            tree = xr.open_datatree(path, engine="h5netcdf").load()
        except (OSError, ValueError) as exc:
            raise DataError(f"{path}: not a readable pbassess result ({str(exc).splitlines()[0]})") from None
        return AssessmentResult._from_tree(tree, path, check_version=True)

    @staticmethod
    def _from_tree(tree: xr.DataTree, path: Any, check_version: bool = False) -> AssessmentResult:
        """The result saved in ``tree`` (a file's root, or a nested result's node), whole."""
        from pbassess._version import __version__
        from pbassess.results.registry import result_class

        attrs = tree.attrs
        if "metric" not in attrs or "posterior" not in tree.children or "counts" not in tree.children:
            raise DataError(f"{path}: not a pbassess result (metric {attrs.get('metric')!r})")
        try:
            cls = result_class(attrs["metric"], attrs.get("result_class"))
        except DataError:
            raise DataError(f"{path}: not a pbassess result (metric {attrs.get('metric')!r})") from None
        version = attrs.get("pbassess_version")
        if check_version and version != __version__:
            warnings.warn(f"{path} was written by pbassess {version}, this is {__version__}", UserWarning, stacklevel=3)
        skip = ("counts", _EXTRA, _OWN_POSTERIOR)
        groups = {name: child.to_dataset() for name, child in tree.children.items() if name not in skip}
        idata = xr.DataTree.from_dict({f"/{k}": v for k, v in groups.items()})
        own = (tree[_OWN_POSTERIOR].to_dataset() if _OWN_POSTERIOR in tree.children
               else _reported(groups["posterior"], attrs.get("reported_vars")))
        obj = cls.__new__(cls)
        AssessmentResult.__init__(
            obj, own, tree["counts"].to_dataset(),
            prior=json.loads(attrs["prior"]), data_summary=json.loads(attrs["data_summary"]),
            engine=attrs["engine"], inference=attrs.get("inference"), ci_prob=float(attrs["ci_prob"]),
            idata=idata, diagnostics=json.loads(attrs["diagnostics"]), options=json.loads(attrs["options"]),
        )
        extra: dict[str, Any] = {}
        for key in json.loads(attrs.get("extra_datasets", "[]")):
            extra[key] = tree[f"{_EXTRA}/{key}"].to_dataset()
        for key in json.loads(attrs.get("extra_results", "[]")):
            extra[key] = AssessmentResult._from_tree(tree[f"{_EXTRA}/{key}"], path)
        obj._restore(json.loads(attrs.get("extra_state", "{}")), extra)
        return obj


#: Group of a saved file holding the result's own posterior when it does not align with the trace's.
_OWN_POSTERIOR = "pbassess_posterior"


def _reported(posterior: xr.Dataset, names: str | None) -> xr.Dataset:
    """The reported variables of a saved posterior group (all of it for files without the list)."""
    if not names:
        return posterior
    keep = [n for n in json.loads(names) if n in posterior.data_vars]
    return posterior[keep] if keep else posterior


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (set, tuple)):
        return list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _plain(ds: xr.Dataset) -> xr.Dataset:
    """Make object-dtype coordinates plain strings and attributes netCDF-safe."""
    ds = ds.copy()
    for name, coord in ds.coords.items():
        if coord.dtype == object:
            ds = ds.assign_coords({name: coord.astype(str)})
    for name, var in ds.data_vars.items():
        if var.dtype == object:
            ds[name] = var.astype(str)
    ds.attrs = {k: _plain_attr(v) for k, v in ds.attrs.items() if v is not None}
    return ds


def _plain_attr(value: Any) -> Any:
    """netCDF-safe attribute: lists of strings or numbers stay lists (ArviZ reads ``sample_dims``), else JSON."""
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return list(value)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                          for v in value):
        return np.asarray(value)
    if isinstance(value, (dict, list, tuple, bool)):
        return json.dumps(value, default=_jsonable)
    return value


def frame_state(frame: Any) -> dict[str, Any]:
    """A :class:`pandas.DataFrame` as JSON-able state (values, index, column dtypes) for ``_extra_state``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": [1, 2], "b": [0.5, float("nan")], "c": ["x", "y"]}, index=pd.Index(["p", "q"], name="k"))
    >>> pd.testing.assert_frame_equal(frame_from_state(json.loads(json.dumps(frame_state(df)))), df)
    """
    return {
        "columns": [str(c) for c in frame.columns], "index": frame.index.tolist(), "index_name": frame.index.name,
        "index_dtype": str(frame.index.dtype), "dtypes": [str(t) for t in frame.dtypes],
        "data": {str(c): [_jsonable(v) if isinstance(v, np.generic) else v for v in frame[c].tolist()]
                 for c in frame.columns},
    }


def frame_from_state(state: dict[str, Any]) -> Any:
    """The :class:`pandas.DataFrame` that :func:`frame_state` recorded."""
    import pandas as pd

    index = pd.Index(state["index"], name=state.get("index_name"))
    try:
        index = index.astype(state.get("index_dtype", index.dtype))
    except (TypeError, ValueError):
        pass
    frame = pd.DataFrame({c: state["data"][c] for c in state["columns"]}, index=index, columns=state["columns"])
    for column, dtype in zip(state["columns"], state["dtypes"], strict=True):
        try:
            frame[column] = frame[column].astype(dtype)
        except (TypeError, ValueError):
            pass
    return frame
