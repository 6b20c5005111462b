"""The result of :func:`pbassess.shift.table.shift_table`: :class:`ShiftResult`.

It wraps the shift table (an :class:`xarray.Dataset` per level and model) and offers what every
pbassess result offers: ``summary()``, ``sentence()``, ``to_json()``, ``save(path)`` and
``pbassess.load_result(path)``. For code written against the earlier return value (the
Dataset), it also behaves like that Dataset: ``result["ece"]``, ``result.sel(...)``,
``result.attrs``, ``"ece_hdi" in result``; :attr:`ShiftResult.table` is the Dataset itself.
The figures are drawn by :mod:`pbassess.plots.shift` from the table.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.constants import CI_PROB
from pbassess.metrics.registry import metrics_used_by
from pbassess.results.base import AssessmentResult

__all__ = ["ShiftResult"]

#: The metrics the shift table gives a posterior, as the metric registry lists them.
_POSTERIOR_METRICS = metrics_used_by("shift")


class ShiftResult(AssessmentResult):
    """Shift metrics with posteriors per (level, model): the result of :func:`shift_table`.

    ``table`` is the :class:`xarray.Dataset` described in :func:`shift_table`, and the result
    behaves like it (``result["ece"]``, ``result.sel(level=...)``, ``result.sizes``,
    ``"ece_hdi" in result``, ``result.attrs``). ``posterior`` holds the draws of ``accuracy``,
    ``nll``, ``brier`` and ``ece`` with dims ``(chain, draw, level, model)`` (exact Beta draws for
    accuracy and the ECE's bins, Bayesian-bootstrap draws for NLL and Brier); ``counts`` the
    labeled (``n``) and all (``n_items``) items per cell.

    Examples
    --------
    >>> import tempfile, pathlib, pbassess
    >>> import numpy as np
    >>> from pbassess import Predictions
    >>> from pbassess.shift import shift_table
    >>> rng = np.random.default_rng(0)
    >>> probs = rng.dirichlet(np.ones(3), size=60)
    >>> p = Predictions.from_probs(probs, [int(np.argmax(q)) for q in probs], groups={"sev": ["1", "2"] * 30})
    >>> res = shift_table(p, by="sev", n_draws=200, seed=0)
    >>> type(res).__name__, res["accuracy"].sizes["level"], res.posterior["ece"].dims
    ('ShiftResult', 2, ('chain', 'draw', 'level', 'model'))
    >>> back = pbassess.load_result(res.save(pathlib.Path(tempfile.mkdtemp()) / "shift.nc"))
    >>> back.to_json() == res.to_json(), list(back.summary().index.names)
    (True, ['level', 'model'])
    """

    metric = "shift"

    def __init__(self, table: Any) -> None:
        import xarray as xr

        self.table = table
        posterior = xr.Dataset(coords={"level": table["level"].values, "model": table["model"].values})
        for name in _POSTERIOR_METRICS:
            if f"{name}_draws" in table:
                da = table[f"{name}_draws"].reset_coords(drop=True).transpose("draw", "level", "model")
                posterior[name] = da.assign_coords(draw=np.arange(da.sizes["draw"])).expand_dims(chain=[0])
        counts = table[["n", "n_items"]].reset_coords(drop=True)
        attrs = dict(table.attrs)
        super().__init__(
            posterior, counts,
            prior={"accuracy": "Beta(1, 1)", "ece": "Beta per confidence bin",
                   "nll": "Bayesian bootstrap (Dirichlet(1) weights)", "brier": "Bayesian bootstrap (Dirichlet(1) weights)"},
            data_summary={"levels": [str(v) for v in table["level"].values],
                          "models": [str(v) for v in table["model"].values], "n_ood": int(attrs.get("n_ood", 0))},
            engine="conjugate", ci_prob=float(attrs.get("ci_prob", CI_PROB)),
            options={"by": str(attrs.get("by", "")), "ood": str(attrs.get("ood", "")), "draws": int(attrs.get("draws", 0))},
        )

    # -- the Dataset view --------------------------------------------------------------
    @property
    def dataset(self) -> Any:
        """The shift table itself (an :class:`xarray.Dataset`; the same object as :attr:`table`)."""
        return self.table

    def __getitem__(self, key: Any) -> Any:
        return self.table[key]

    def __contains__(self, key: Any) -> bool:
        return key in self.table

    def __iter__(self):
        return iter(self.table)

    def __len__(self) -> int:
        return len(self.table)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name in ("table", "posterior", "counts", "options"):
            raise AttributeError(name)
        try:
            return getattr(self.table, name)
        except AttributeError:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}") from None

    # -- save/load: the table without the draws (they are the posterior group) -----------
    def _extra_state(self) -> dict[str, Any]:
        return {"variables": list(self.table.data_vars)}

    def _extra_datasets(self) -> dict[str, Any]:
        draws = [f"{name}_draws" for name in _POSTERIOR_METRICS if f"{name}_draws" in self.table]
        return {"table": self.table.drop_vars(draws)}

    def _restore(self, state: dict[str, Any], datasets: dict[str, Any]) -> None:
        table = datasets["table"].copy()
        for name in _POSTERIOR_METRICS:
            if name in self.posterior:
                da = self.posterior[name].isel(chain=0).transpose("level", "model", "draw")
                table[f"{name}_draws"] = (("level", "model", "draw"), da.to_numpy())
        self.table = table[state.get("variables", list(table.data_vars))]

    # -- what every result offers -----------------------------------------------------------
    def summary(self):
        """One row per (level, model): the metrics, posterior means and HDI bounds, OOD AUROC."""
        from pbassess.shift.records import SCALARS

        table = self.table
        columns = [k for k in SCALARS if k in table] + [f"{m}_mean" for m in _POSTERIOR_METRICS if f"{m}_mean" in table]
        frame = table[columns].reset_coords(drop=True).to_dataframe()
        for name in _POSTERIOR_METRICS:
            if f"{name}_hdi" in table:
                hdi = table[f"{name}_hdi"].reset_coords(drop=True)
                frame[f"{name}_hdi_low"] = hdi.sel(hdi="lower", drop=True).to_series()
                frame[f"{name}_hdi_high"] = hdi.sel(hdi="upper", drop=True).to_series()
        if not self.table.attrs.get("n_ood"):
            frame = frame.drop(columns=["auroc_ood", "auroc_ood_entropy"], errors="ignore")
        return frame

    def sentence(self) -> str:
        """How accuracy and ECE change from the first level to the last, per model (the first three)."""
        levels = [str(v) for v in self.table["level"].values]
        parts = []
        for model in [str(m) for m in self.table["model"].values][:3]:
            cell = self.table.sel(model=model)
            acc, ece = cell["accuracy"].values.astype(float), cell["ece"].values.astype(float)
            if len(levels) == 1:
                parts.append(f"{model}: accuracy {acc[0]:.3f}, ECE {ece[0]:.3f}")
            else:
                parts.append(f"{model}: accuracy {acc[0]:.3f} -> {acc[-1]:.3f}, ECE {ece[0]:.3f} -> {ece[-1]:.3f}")
        where = (f"from level {levels[0]} to {levels[-1]} of {self.options.get('by') or 'level'} "
                 f"({len(levels)} levels)" if len(levels) > 1 else "on the whole set")
        more = "" if self.table.sizes["model"] <= 3 else f"; {self.table.sizes['model'] - 3} more models"
        return f"Shift {where}: " + "; ".join(parts) + more + "."

    def to_json(self) -> dict[str, Any]:
        """``{"metric": "shift", "by", "levels", "models", "n_ood", "records": shift_records(...)}``
        plus ``inference``, ``ci_prob``, ``diagnostics`` and ``sentence``."""
        from pbassess._json import to_jsonable
        from pbassess.shift.records import shift_records

        return to_jsonable(self.with_envelope({
            "by": self.options.get("by"), "levels": [str(v) for v in self.table["level"].values],
            "models": [str(v) for v in self.table["model"].values], "n_ood": int(self.table.attrs.get("n_ood", 0)),
            "records": shift_records(self.table),
        }))
