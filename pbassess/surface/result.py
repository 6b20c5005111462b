"""The result of an accuracy-surface fit: per-arm posterior mean, variance and HDI."""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from pbassess.constants import CI_PROB
from pbassess.results.base import AssessmentResult
from pbassess.surface.arms import ArmCounts

__all__ = ["SurfaceResult"]


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


class SurfaceResult(AssessmentResult):
    """Posterior accuracy of every arm of an accuracy surface.

    ``surface`` is an :class:`xarray.Dataset` with dim ``arm`` (one coordinate per attribute
    along it) holding ``mean``, ``var``, ``hdi_lower``, ``hdi_upper`` and the counts ``n``,
    ``correct``, ``pool_n``, ``confidence``; ``posterior`` holds the draws of ``accuracy``
    (chain, draw, arm). ``idata`` is the fit's DataTree (:func:`pbassess.inference.fit`:
    ``prior``, ``log_likelihood`` per labeled item, ``log_prior``, ...), ``model`` its PyMC
    model and :meth:`loo` its leave-one-item-out ELPD.

    Parameters
    ----------
    arms : ArmCounts
        The counts the surface was fitted to.
    mean, var : array_like, shape (A,)
        Posterior mean and variance of each arm's accuracy.
    hdi : array_like, shape (A, 2)
        HDI bounds of each arm's accuracy.
    estimator : str
        The estimator's name (:data:`ESTIMATORS`).
    engine : str
        The inference (``"conjugate"``, ``"nuts"`` or ``"advi"``).
    ci_prob : float
        Credible mass of the HDIs.
    draws : ndarray, shape (draws, A) or (chains, draws, A), optional
        Posterior draws of the accuracies (else taken from ``idata``).
    idata : xarray.DataTree, optional
        The fit's DataTree.
    diagnostics, prior, options : dict, optional
        As for :class:`~pbassess.results.AssessmentResult`.
    extra : dict of str to array_like, optional
        Further per-arm values to keep in ``surface``.
    fit_seconds : float, optional
        Wall time of the fit.
    model : pymc.Model, optional
    spec : Spec, optional
        The fit's :class:`~pbassess.inference.Spec`.

    Examples
    --------
    >>> from pbassess.surface import ArmCounts, fit_surface
    >>> r = fit_surface(ArmCounts.from_arrays([10, 0], [9, 0]), estimator="beta-i")
    >>> r.surface["mean"].round(3).values.tolist()
    [0.9, 0.9]
    >>> sorted(r.to_json())[:4]
    ['anchor', 'arms', 'attributes', 'ci_prob']
    """

    metric = "accuracy-surface"

    def __init__(self, arms: ArmCounts, mean: Any, var: Any, hdi: Any, *, estimator: str, engine: str,
                 ci_prob: float = CI_PROB, draws: np.ndarray | None = None, idata: Any = None,
                 diagnostics: dict[str, Any] | None = None, prior: dict[str, Any] | None = None,
                 extra: dict[str, np.ndarray] | None = None, fit_seconds: float | None = None,
                 model: Any = None, spec: Any = None, options: dict[str, Any] | None = None) -> None:
        coords = arms.coords()
        data = {"mean": ("arm", np.asarray(mean, float)), "var": ("arm", np.asarray(var, float)),
                "hdi_lower": ("arm", np.asarray(hdi, float)[:, 0]), "hdi_upper": ("arm", np.asarray(hdi, float)[:, 1])}
        for key, values in (extra or {}).items():
            data[key] = ("arm", np.asarray(values, float))
        surface = xr.Dataset(data, coords=coords).merge(arms.to_dataset(), compat="override")
        surface.attrs = {"estimator": estimator, "inference": engine, "attributes": list(arms.attributes)}
        if draws is not None:
            d = np.asarray(draws, float)
            d = d.reshape((1,) + d.shape) if d.ndim == 2 else d
            posterior = xr.Dataset({"accuracy": (("chain", "draw", "arm"), d)}, coords=coords)
        elif idata is not None and "posterior" in idata.children and "accuracy" in idata["posterior"].data_vars:
            # the fit's own draws: the DataTree's posterior carries the attribute coordinates too
            labels = {k: v for k, v in coords.items() if k != "arm"}
            idata["posterior"] = idata["posterior"].to_dataset().assign_coords(labels)
            posterior = idata["posterior"].to_dataset()[["accuracy"]]
        else:
            posterior = xr.Dataset(coords=coords)
        super().__init__(posterior, arms.to_dataset(), prior=prior or {}, engine=engine,
                         data_summary={"n_arms": arms.n_arms, "n_labeled": float(arms.n.sum()),
                                       "n_pool": float(arms.pool_n.sum())},
                         ci_prob=ci_prob, idata=idata, diagnostics=diagnostics, options=options, model=model)
        self.arms = arms
        self.estimator = estimator
        self.surface = surface
        self.fit_seconds = fit_seconds
        self._fit_spec = spec

    # -- save/load: the arms and the surface table beside the base state ---------------
    def _extra_state(self) -> dict[str, Any]:
        values = self.arms.values
        return {"estimator": self.estimator, "fit_seconds": self.fit_seconds,
                "attributes": list(self.arms.attributes), "continuous": list(self.arms.continuous),
                "values": values.tolist(), "values_dtype": str(values.dtype)}

    def _extra_datasets(self) -> dict[str, Any]:
        out: dict[str, Any] = {"surface": self.surface}
        if self.arms.item_arm is not None:
            out["item_arm"] = xr.Dataset({"item_arm": ("item", np.asarray(self.arms.item_arm))})
        return out

    def _restore(self, state: dict[str, Any], datasets: dict[str, Any]) -> None:
        if "surface" not in datasets or "attributes" not in state:
            from pbassess.errors import DataError

            raise DataError("this surface result was saved without its arms (pbassess before issue 18); fit it again")
        counts = self.counts
        dtype = state.get("values_dtype", "object")
        values = np.asarray(state["values"], dtype=object if dtype == "object" else dtype)
        item_arm = datasets["item_arm"]["item_arm"].to_numpy() if "item_arm" in datasets else None
        points = None
        tree = self.idata
        if tree is not None and "constant_data" in tree.children and "confidence_points" in tree["constant_data"].data_vars:
            points = tree["constant_data"]["confidence_points"].to_numpy()
        self.arms = ArmCounts(tuple(state["attributes"]), values, counts["n"].to_numpy(),
                              counts["correct"].to_numpy(), counts["pool_n"].to_numpy(),
                              counts["confidence"].to_numpy(), item_arm, tuple(state.get("continuous", ())), points)
        self.counts = self.arms.to_dataset()
        self.estimator = state["estimator"]
        self.fit_seconds = state.get("fit_seconds")
        saved = datasets["surface"]
        own = [v for v in saved.data_vars if v not in self.counts.data_vars]
        surface = xr.Dataset({v: ("arm", saved[v].to_numpy()) for v in own}, coords=self.arms.coords()).merge(
            self.counts, compat="override")  # built as __init__ builds it: same variables, same order
        surface.attrs = {"estimator": self.estimator, "inference": self.engine,
                         "attributes": list(self.arms.attributes)}
        self.surface = surface
        self.posterior = self.posterior.assign_coords(
            {k: v for k, v in self.arms.coords().items() if k != "arm" and "arm" in self.posterior.dims})
        self._fit_spec = None

    # -- the fit's spec and model, rebuilt from the counts after loading -----------------
    def _observations(self):
        """The labeled items recorded in ``observed_data`` / ``constant_data`` (None without them)."""
        from pbassess.inference.spec import Observations

        tree = self.idata
        if "observed_data" not in tree.children or "constant_data" not in tree.children:
            return None
        observed, const = tree["observed_data"].to_dataset(), tree["constant_data"].to_dataset()
        if "item_arm" not in const or "correct" not in observed or "item" not in observed["correct"].dims:
            return None
        return Observations(const["item_arm"].to_numpy().astype(np.int64),
                            observed["correct"].to_numpy().astype(np.int64), observed["item"].to_numpy())

    def _rebuilt_spec(self):
        """This fit's spec: the one fitted, or rebuilt from the arms and options (a loaded result)."""
        if getattr(self, "_fit_spec", None) is not None:
            return self._fit_spec
        from pbassess.pymc_models.surface import surface_spec

        options = self.options or {}
        model_options = dict(options.get("model_options") or {})
        if self.estimator == "beta-i" and "lambda" in (self.prior or {}):
            model_options.setdefault("lam", self.prior["lambda"])
        self._fit_spec = surface_spec(self.arms, self.estimator, model_options=model_options,
                                      covariate=options.get("covariate"), observations=self._observations(),
                                      model_seed=options.get("model_seed"))
        return self._fit_spec

    def _spec(self):
        """The conjugate spec of an exact fit (its leave-one-out predictive is closed form), else None."""
        if self.inference != "conjugate" or self.estimator not in ("cpredictor", "beta-i"):
            return None
        return self._rebuilt_spec()

    def _build_model(self):
        """The PyMC model of the fit (rebuilt from the arms and options after loading)."""
        from pbassess.pymc_models.surface import SurfaceModelSpec

        spec = self._rebuilt_spec()
        inner = getattr(spec, "spec", spec)  # an ADVI fit's VariationalSpec wraps the model's spec
        if isinstance(inner, SurfaceModelSpec) and inner.counts_as_data:  # a refit's: a model over these counts
            from pbassess.pymc_models.surface import surface_spec

            inner = surface_spec(self.arms, self.estimator, model_options=inner.options, covariate=inner.covariate,
                                 model_seed=inner.model_seed)
        return inner.model()

    def loo(self, *, exact: bool | None = None):
        """Leave-one-item-out ELPD of the surface, as ArviZ's ``ELPDDataLOO``.

        Each labeled item is a Bernoulli draw of its arm's accuracy. CPredictor and Beta-I fitted
        exactly have a closed-form leave-one-out predictive (Pareto k 0 for every item; Beta-I's
        prior, centred on the global accuracy, held fixed); the smoothing models, NUTS and ADVI
        fits use PSIS-LOO on the per-item log-likelihood (``az.loo(result.idata)``).

        Examples
        --------
        >>> from pbassess.surface import ArmCounts, fit_surface
        >>> r = fit_surface(ArmCounts.from_arrays([10, 4], [9, 2]), estimator="beta-i", seed=0)
        >>> loo = r.loo()
        >>> loo.n_data_points, float(loo.pareto_k.max())
        (14, 0.0)
        """
        return super().loo(exact=exact)

    @property
    def mean(self) -> np.ndarray:
        """Posterior mean accuracy per arm."""
        return self.surface["mean"].to_numpy()

    @property
    def var(self) -> np.ndarray:
        """Posterior variance of the accuracy per arm."""
        return self.surface["var"].to_numpy()

    def summary(self):
        """One row per arm: attribute values, counts, mean, sd, HDI (a pandas DataFrame).

        The HDI columns are ``hdi_low`` and ``hdi_high`` as in every pbassess table
        (``hdi_lower``/``hdi_upper`` are kept for one release).
        """
        frame = self.surface.to_dataframe()
        frame["sd"] = np.sqrt(frame["var"])
        frame["hdi_low"], frame["hdi_high"] = frame["hdi_lower"], frame["hdi_upper"]
        return frame

    def worst_arms(self, k: int = 10, min_pool: float = 0.0):
        """The ``k`` arms with the lowest posterior mean (among arms with ``pool_n >= min_pool``)."""
        frame = self.summary()
        return frame[frame["pool_n"] >= min_pool].sort_values("mean").head(k)

    def marginal(self, x: str, y: str) -> xr.DataArray:
        """Posterior mean accuracy over two attributes, the others marginalised by pool weight.

        Examples
        --------
        >>> from pbassess.surface import ArmCounts, fit_surface
        >>> a = ArmCounts.from_arrays([10, 10, 10], [9, 5, 8], values=[[0, 0, 0], [0, 0, 1], [1, 1, 0]],
        ...                           attributes=("a", "b", "c"), pool_n=[100, 300, 50])
        >>> m = fit_surface(a, estimator="beta-i").marginal("a", "b")
        >>> m.dims, bool(np.isnan(m.sel(a=1, b=0)))
        (('a', 'b'), True)
        """
        from pbassess.errors import ConfigError

        for name in (x, y):
            if name not in self.arms.attributes:
                raise ConfigError(f"{name!r} is not an attribute of this surface ({', '.join(self.arms.attributes)})")
        if x == y:
            raise ConfigError("choose two different attributes for the heatmap")
        frame = self.surface[["mean", "pool_n"]].to_dataframe()
        frame["w"] = frame["pool_n"].where(frame["pool_n"] > 0, 1e-12)
        frame["wm"] = frame["mean"] * frame["w"]
        grouped = frame.groupby([x, y])[["wm", "w"]].sum()
        table = (grouped["wm"] / grouped["w"]).unstack(y)
        return xr.DataArray(table.to_numpy(dtype=float), dims=(x, y),
                            coords={x: table.index.to_numpy(), y: table.columns.to_numpy()}, name="accuracy")

    def sentence(self) -> str:
        """One sentence naming the worst arm (and saying so when the NUTS fit failed its diagnostics)."""
        i = int(np.argmin(self.mean))
        desc = ", ".join(f"{a}={v}" for a, v in zip(self.arms.attributes, self.arms.values[i], strict=False))
        lo, hi = self.surface["hdi_lower"].values[i], self.surface["hdi_upper"].values[i]
        name = f"{self.estimator} surface"
        moved = ""
        if "anchor" in self.surface:  # the anchored models: say so, and how far the labels moved the arms
            name = f"confidence-anchored {name}"
            shift = np.abs(self.mean - self.surface["anchor"].values)
            moved = f"; the labels move {int((shift > 0.02).sum())} arms more than 0.02 from their calibrated confidence"
        weight = (self.diagnostics or {}).get("confidence_weight")
        if weight is not None:  # stacked with the label-free confidence (fit_surface's default on a pool)
            diff, se = self.diagnostics["elpd_diff_vs_confidence"], self.diagnostics["elpd_diff_vs_confidence_se"]
            bound = self.diagnostics.get("min_elpd_gain", float("-inf"))
            if self.diagnostics.get("widened_scales"):  # fit_surface refitted with the wider residual prior
                moved += ("; the labels showed the confidence wrong under the default residual scales (LOO "
                          f"predictive density {self.diagnostics['default_scales_elpd_diff_vs_confidence']:+.1f} "
                          "against the confidence's), so the residual was refitted with wider scales")
            if not diff > bound:  # the parsimony rule of pbassess.surface.stacking: the labels do not show it wrong
                moved += (f"; kept on the label-free confidence (the labels' LOO predictive density {diff:+.1f} "
                          f"+- {se:.1f} against the confidence's, not above {bound:g}), with the anchored fit's "
                          "spread around it")
            elif self.diagnostics.get("confidence_combination") == "select":  # the labels rejected the confidence
                gain = f"LOO predictive density {diff:+.1f} +- {se:.1f} against the confidence's, above {bound:g}"
                moved += (f", and the surface is that fit's (its {gain})" if self.diagnostics.get("widened_scales")
                          else f"; the labels show the confidence wrong (their {gain}), so the surface is the anchored fit's")
            else:
                moved += (f"; stacked with the confidence at weight {weight:.2f} (the labels' LOO predictive "
                          f"density {diff:+.1f} +- {se:.1f} against the confidence's)")
        return self.qualify(f"{name} over {self.arms.n_arms} arms from {int(self.arms.n.sum())} "
                            f"labels: lowest accuracy {self.mean[i]:.3f} ({self.ci_prob:.0%} HDI {lo:.3f}-{hi:.3f}) "
                            f"at {desc}{moved}.")

    def to_json(self) -> dict[str, Any]:
        """The CLI contract object (attributes, arms, n, pool_n, mean, var, hdi, diagnostics, ...).

        Per arm (lists in the order of ``arms``): ``mean``, ``var``, ``hdi`` and its columns
        ``hdi_low`` / ``hdi_high``, ``n_labeled`` (= ``n``), ``n_pool`` (= ``pool_n``),
        ``confidence`` (the arm's mean model confidence, null where unknown) and ``anchor`` (the
        anchored models' calibrated label-free accuracy, posterior mean; null for other fits).
        """
        hdi = np.column_stack([self.surface["hdi_lower"].values, self.surface["hdi_upper"].values])
        return _jsonable({
            "metric": self.metric, "estimator": self.estimator, "inference": self.engine, "ci_prob": self.ci_prob,
            "attributes": list(self.arms.attributes), "arms": self.arms.values.tolist(),
            "n": self.arms.n.tolist(), "pool_n": self.arms.pool_n.tolist(), "mean": self.mean.tolist(),
            "var": self.var.tolist(), "hdi": hdi.tolist(), "hdi_low": hdi[:, 0].tolist(),
            "hdi_high": hdi[:, 1].tolist(), "n_labeled": self.arms.n.tolist(), "n_pool": self.arms.pool_n.tolist(),
            "confidence": np.asarray(self.arms.confidence, float).tolist(),
            "anchor": self.surface["anchor"].values.tolist() if "anchor" in self.surface else None,
            "diagnostics": dict(self.diagnostics or {}),
            "fit_seconds": self.fit_seconds, "sentence": self.sentence(),
        })

    def plot(self, **kwargs: Any):
        """Heatmap of the surface over two attributes (see :func:`pbassess.plots.surface.plot_surface_heatmap`)."""
        from pbassess.plots.surface import plot_surface_heatmap

        return plot_surface_heatmap(self, **kwargs)
