"""The result layer: one object per assessment, holding posterior draws as xarray.

Every assessment returns a subclass of :class:`AssessmentResult`. It carries

* ``posterior``: an :class:`xarray.Dataset` of posterior draws with dims ``("chain", "draw",
  ...)`` and named coordinates (classes, bins, groups), from either engine (the conjugate
  fast path stores its exact draws as one chain);
* ``counts``: the sufficient statistics the posterior was computed from;
* ``prior`` and ``data_summary``: JSON-able dicts; ``engine``; ``ci_prob``;
* ``idata`` (MCMC only): the :class:`xarray.DataTree` from ``pm.sample`` with sample stats,
  and ``diagnostics`` (max R-hat, min bulk ESS, divergences);

and offers ``summary()`` (a table), ``sentence()`` (one plain sentence), ``plot()``,
``to_json()`` (the CLI's ``--json`` object), ``save(path)`` and ``AssessmentResult.load(path)``
to one netCDF file that records prior, data summary and package version.
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

__all__ = ["AssessmentResult", "mcmc_diagnostics"]

_REGISTRY: dict[str, type[AssessmentResult]] = {}


def mcmc_diagnostics(idata: Any, var_names: list[str] | None = None) -> dict[str, float]:
    """Max R-hat, min bulk/tail ESS and divergence count of an MCMC fit (a DataTree).

    Warns (``UserWarning``) when R-hat > 1.01, the minimum bulk ESS < 100, or any transition
    diverged.
    """
    import arviz as az

    summ = az.summary(idata, var_names=var_names, kind="diagnostics")
    divergences = 0
    try:
        divergences = int(idata["sample_stats"]["diverging"].sum())
    except KeyError:
        pass
    def _extreme(column: str, reduce) -> float:
        values = np.asarray(summ[column].to_numpy(), dtype=float)
        values = values[np.isfinite(values)]  # R-hat is NaN with a single chain
        return float(reduce(values)) if values.size else float("nan")

    diag = {
        "max_rhat": _extreme("r_hat", np.max),
        "min_ess_bulk": _extreme("ess_bulk", np.min),
        "min_ess_tail": _extreme("ess_tail", np.min),
        "divergences": divergences,
    }
    problems = []
    if diag["max_rhat"] > 1.01:
        problems.append(f"max R-hat {diag['max_rhat']:.3f} > 1.01")
    if diag["min_ess_bulk"] < 100:
        problems.append(f"min bulk ESS {diag['min_ess_bulk']:.0f} < 100")
    if divergences:
        problems.append(f"{divergences} divergent transitions")
    if problems:
        warnings.warn("MCMC diagnostics: " + "; ".join(problems), UserWarning, stacklevel=3)
    return diag


class AssessmentResult:
    """Base class of all assessment results (see the module docstring)."""

    metric: ClassVar[str] = "base"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _REGISTRY[cls.metric] = cls

    def __init__(
        self,
        posterior: xr.Dataset,
        counts: xr.Dataset,
        *,
        prior: dict[str, Any],
        data_summary: dict[str, Any],
        engine: str,
        ci_prob: float = CI_PROB,
        idata: Any = None,
        diagnostics: dict[str, float] | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        self.posterior = posterior
        self.counts = counts
        self.prior = dict(prior)
        self.data_summary = dict(data_summary)
        self.engine = engine
        self.ci_prob = float(ci_prob)
        self.idata = idata
        self.diagnostics = diagnostics
        self.options = dict(options or {})

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

    # -- shared ------------------------------------------------------------------------
    def draws(self, var: str) -> np.ndarray:
        """Posterior draws of ``var`` stacked over chains: shape (n_draws, ...)."""
        da = self.posterior[var]
        return da.stack(sample=("chain", "draw")).transpose("sample", ...).to_numpy()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} ({self.engine}): {self.sentence()}>"

    def _repr_html_(self) -> str:
        table = self.summary()
        return f"<p><b>{type(self).__name__}</b> ({self.engine}): {self.sentence()}</p>" + table.to_html(
            float_format=lambda v: f"{v:.3f}", max_rows=40
        )

    def save(self, path: str | os.PathLike) -> Path:
        """Write the whole result to one netCDF file, atomically.

        The file holds groups ``posterior`` and ``counts`` (and ``sample_stats`` for MCMC) and
        attributes recording the metric, engine, prior, data summary, options, diagnostics,
        credible mass and the pbassess version.
        """
        from pbassess import __version__

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        attrs = {
            "pbassess_version": __version__,
            "metric": self.metric,
            "engine": self.engine,
            "ci_prob": self.ci_prob,
            "prior": json.dumps(self.prior, default=_jsonable),
            "data_summary": json.dumps(self.data_summary, default=_jsonable),
            "options": json.dumps(self.options, default=_jsonable),
            "diagnostics": json.dumps(self.diagnostics, default=_jsonable),
        }
        children = {"posterior": _plain(self.posterior), "counts": _plain(self.counts)}
        if self.idata is not None and "sample_stats" in self.idata.children:
            children["sample_stats"] = _plain(self.idata["sample_stats"].to_dataset())
        tree = xr.DataTree.from_dict({"/": xr.Dataset(attrs=attrs), **{f"/{k}": v for k, v in children.items()}})
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
        """Read a result written by :meth:`save` (any metric).

        Examples
        --------
        >>> from pbassess.results import AssessmentResult
        >>> AssessmentResult.load("missing.nc")
        Traceback (most recent call last):
        ...
        pbassess.errors.DataError: result file not found: missing.nc
        """
        from pbassess import __version__

        path = Path(path)
        if not path.exists():
            raise DataError(f"result file not found: {path}")
        tree = xr.open_datatree(path, engine="h5netcdf").load()
        attrs = tree.attrs
        metric = attrs.get("metric")
        if metric not in _REGISTRY:
            import pbassess.assess  # noqa: F401  (registers the result classes of every metric)
        if metric not in _REGISTRY:
            raise DataError(f"{path}: not a pbassess result (metric {metric!r})")
        version = attrs.get("pbassess_version")
        if version != __version__:
            warnings.warn(f"{path} was written by pbassess {version}, this is {__version__}", UserWarning, stacklevel=2)
        cls = _REGISTRY[metric]
        obj = cls.__new__(cls)
        AssessmentResult.__init__(
            obj,
            tree["posterior"].to_dataset(),
            tree["counts"].to_dataset(),
            prior=json.loads(attrs["prior"]),
            data_summary=json.loads(attrs["data_summary"]),
            engine=attrs["engine"],
            ci_prob=float(attrs["ci_prob"]),
            idata=tree if "sample_stats" in tree.children else None,
            diagnostics=json.loads(attrs["diagnostics"]),
            options=json.loads(attrs["options"]),
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
    """Make object-dtype coordinates plain strings so netCDF can store them."""
    ds = ds.copy()
    for name, coord in ds.coords.items():
        if coord.dtype == object:
            ds = ds.assign_coords({name: coord.astype(str)})
    for name, var in ds.data_vars.items():
        if var.dtype == object:
            ds[name] = var.astype(str)
    ds.attrs = {k: (json.dumps(v, default=_jsonable) if isinstance(v, (dict, list)) else v) for k, v in ds.attrs.items()}
    return ds
