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
import tempfile
import warnings
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import xarray as xr

from pbassess.constants import CI_PROB
from pbassess.errors import DataError
from pbassess.inference.diagnostics import diagnostics as _diagnostics
from pbassess.inference.diagnostics import diagnostics_note

__all__ = ["AssessmentResult", "mcmc_diagnostics"]

_LEGACY_ENGINE = {"nuts": "mcmc", "conjugate": "conjugate"}


def mcmc_diagnostics(idata: Any, var_names: list[str] | None = None) -> dict[str, Any]:
    """Alias of :func:`pbassess.inference.diagnostics` (kept for existing callers).

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from pbassess.inference import diagnostics
    >>> draws = np.random.default_rng(0).normal(size=(2, 500))
    >>> idata = xr.DataTree.from_dict({"posterior": xr.Dataset({"x": (("chain", "draw"), draws)})})
    >>> mcmc_diagnostics(idata) == diagnostics(idata)
    True
    """
    return _diagnostics(idata, var_names=var_names)


def _canonical_inference(engine: str) -> str:
    """``conjugate`` or ``nuts`` for the two inferences (``mcmc``, ``mcmc-nutpie``, ... mean NUTS); others kept."""
    name = str(engine)
    if name in ("nuts", "mcmc") or name.startswith(("mcmc-", "nuts-")):
        return "nuts"
    return name


class AssessmentResult:
    """Base class of all assessment results (see the module docstring).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from pbassess import Predictions
    >>> from pbassess.assess import assess_accuracy
    >>> p = Predictions.from_top1(["a", "a", "b"], [0.9, 0.8, 0.7], ["a", "b", "b"])
    >>> res = assess_accuracy(p, seed=0)
    >>> isinstance(res, AssessmentResult), res.inference, sorted(res.idata.children)
    (True, 'conjugate', ['constant_data', 'log_likelihood', 'observed_data', 'posterior'])
    >>> back = AssessmentResult.load(res.save(pathlib.Path(tempfile.mkdtemp()) / "accuracy.nc"))
    >>> type(back).__name__, back.summary()["mean"].round(3).tolist()
    ('AccuracyResult', [0.5, 0.667])
    """

    metric: ClassVar[str] = "base"

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

    def save(self, path: str | os.PathLike) -> Path:
        """Write the whole result to one netCDF file, atomically.

        Every group of :attr:`idata` is kept (``posterior`` merged with the reported
        variables, ``log_likelihood``, ``observed_data``, ``sample_stats``, ...) beside
        ``counts`` and attributes recording the metric, result class, inference, prior, data
        summary, options, diagnostics, credible mass and the pbassess version.
        """
        from pbassess import __version__

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        cls = type(self)
        attrs = {
            "pbassess_version": __version__, "metric": self.metric,
            "result_class": f"{cls.__module__}:{cls.__qualname__}",
            "engine": self.engine, "inference": self.inference, "ci_prob": self.ci_prob,
            **{key: json.dumps(getattr(self, key), default=_jsonable)
               for key in ("prior", "data_summary", "options", "diagnostics")},
        }
        children: dict[str, xr.Dataset] = {}
        if self._idata is not None:
            for name, child in self._idata.children.items():
                children[name] = child.to_dataset()
        children["posterior"] = xr.merge([children.get("posterior", xr.Dataset()), self.posterior],
                                         compat="override", join="outer")
        children["counts"] = self.counts
        tree = xr.DataTree.from_dict({"/": xr.Dataset(attrs=attrs),
                                      **{f"/{k}": _plain(v) for k, v in children.items()}})
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.close(fd)
        try:
            tree.to_netcdf(tmp, engine="h5netcdf")
            with open(tmp, "rb") as fh:
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        return path

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
        from pbassess import __version__
        from pbassess.results.registry import result_class

        path = Path(path)
        if not path.exists():
            raise DataError(f"result file not found: {path}")
        try:
            tree = xr.open_datatree(path, engine="h5netcdf").load()
        except (OSError, ValueError) as exc:
            raise DataError(f"{path}: not a readable pbassess result ({str(exc).splitlines()[0]})") from None
        attrs = tree.attrs
        if "metric" not in attrs or "posterior" not in tree.children or "counts" not in tree.children:
            raise DataError(f"{path}: not a pbassess result (metric {attrs.get('metric')!r})")
        try:
            cls = result_class(attrs["metric"], attrs.get("result_class"))
        except DataError:
            raise DataError(f"{path}: not a pbassess result (metric {attrs.get('metric')!r})") from None
        version = attrs.get("pbassess_version")
        if version != __version__:
            warnings.warn(f"{path} was written by pbassess {version}, this is {__version__}", UserWarning, stacklevel=2)
        groups = {name: child.to_dataset() for name, child in tree.children.items() if name != "counts"}
        idata = xr.DataTree.from_dict({f"/{k}": v for k, v in groups.items()})
        obj = cls.__new__(cls)
        AssessmentResult.__init__(
            obj, groups["posterior"], tree["counts"].to_dataset(),
            prior=json.loads(attrs["prior"]), data_summary=json.loads(attrs["data_summary"]),
            engine=attrs["engine"], inference=attrs.get("inference"), ci_prob=float(attrs["ci_prob"]),
            idata=idata, diagnostics=json.loads(attrs["diagnostics"]), options=json.loads(attrs["options"]),
        )
        return obj


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
