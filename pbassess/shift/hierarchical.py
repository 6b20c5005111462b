"""Accuracy and calibration pooled across shift levels, with a trend in the intensity (NUTS).

The models (:func:`accuracy_trend_model`, :func:`calibration_trend_model`) and their specs live
in :mod:`pbassess.pymc_models.shift` (see there for the equations); the functions here fit them
through :func:`pbassess.inference.fit`, the one place that merges NUTS settings, so every fit
holds the DataTree contract (``posterior``, ``prior``, ``log_prior``, one log-likelihood value
per labeled item, ``observed_data``, ``constant_data``, ``sample_stats``).

Partial pooling helps when some levels hold few labels: their accuracy borrows strength from
the trend. ``P(beta < 0)`` is the probability that accuracy falls as the shift grows, and the
draws of ``theta`` give ``P(theta_{l+1} < theta_l)`` per step
(:func:`pbassess.shift.posterior.prob_worsens`). Each fit returns a dict (the draws, the trend
probability, the diagnostics) whose ``"result"`` is a :class:`~pbassess.results.hierarchical.ShiftTrendResult`
(``summary()``, ``sentence()``, ``to_json()``, ``loo()``, save/load).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from pbassess.errors import ConfigError
from pbassess.pymc_models.shift import (
    AccuracyTrendSpec,
    CalibrationTrendSpec,
    accuracy_trend_model,
    calibration_trend_model,
)
from pbassess.results.hierarchical import ShiftTrendResult

__all__ = ["accuracy_trend_model", "calibration_trend_model", "fit_accuracy_trend", "fit_calibration_trend",
           "fit_table_trend"]


def _fit_trend(spec: Any, *, trend: str, seed: Any, sample_kwargs: Mapping[str, Any] | None,
               options: Mapping[str, Any], data_summary: Mapping[str, Any] | None = None) -> ShiftTrendResult:
    """Fit a trend spec by NUTS through :func:`pbassess.inference.fit` into its result."""
    from pbassess.inference import fit, merge_sample_kwargs

    fitted = fit(spec, inference="nuts", seed=seed, sample_kwargs=sample_kwargs)
    tree = fitted.idata
    counts = tree["constant_data"].to_dataset()
    counts = counts[[v for v in counts.data_vars if "item" not in counts[v].dims]].drop_vars("item", errors="ignore")
    settings = merge_sample_kwargs(sample_kwargs, defaults=spec.nuts_defaults, progressbar=False)
    sampler = settings.get("nuts_sampler", "pymc")
    prior = ({"alpha": "Normal(logit(mean accuracy), 1.5)", "beta": "Normal(0, 1)", "sigma": "HalfNormal(0.5)"}
             if trend == "accuracy" else
             {"a": "Normal(0, 1)", "b": "Normal(0, 1)", "sigma": "HalfNormal(0.5)", "tau": "HalfNormal(0.5)"})
    return ShiftTrendResult(
        tree["posterior"].to_dataset()[list(spec.reported)], counts, prior=prior,
        data_summary=dict(data_summary or {}), engine=f"mcmc-{sampler}", idata=tree, diagnostics=fitted.diagnostics,
        options={"trend": trend, **options}, model=fitted.model,
    )


def fit_accuracy_trend(correct: Any, n: Any, intensity: Any = None, *, seed: Any = None,
                       sample_kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
    r"""Fit :func:`accuracy_trend_model` by NUTS (through :func:`pbassess.inference.fit`); summarise the trend.

    Parameters
    ----------
    correct, n : array_like, shape (L,)
        Correct and labeled items per level.
    intensity : array_like, shape (L,), optional
        Numeric level values (default 0..L-1).
    seed : int or Generator, optional
    sample_kwargs : dict, optional
        :func:`pymc.sample` options (``draws`` per chain, ``tune``, ``chains``, ``sampler`` ...);
        ``target_accept`` defaults to 0.95.

    Returns
    -------
    dict
        ``idata`` (DataTree), ``theta`` (draws, L), ``p_decreasing`` (P(beta < 0)),
        ``diagnostics`` (:func:`pbassess.inference.diagnostics`) and ``result``
        (:class:`~pbassess.results.hierarchical.ShiftTrendResult`).

    Notes
    -----
    Level :math:`l` (intensity :math:`x_l`, standardised to :math:`\tilde x_l`) has :math:`y_l`
    correct of :math:`n_l` labeled items:

    .. math::

       \operatorname{logit} \theta_l = \alpha + \beta \tilde x_l + \sigma z_l, \qquad
       y_l \mid \theta_l \sim \mathrm{Binomial}(n_l, \theta_l),

       \alpha \sim \mathcal{N}(\operatorname{logit} \bar y, 1.5^2), \quad
       \beta \sim \mathcal{N}(0, 1), \quad \sigma \sim \mathrm{HalfNormal}(0.5), \quad
       z_l \sim \mathcal{N}(0, 1),

    with :math:`\bar y = (\sum_l y_l + 1) / (\sum_l n_l + 2)`; ``p_decreasing`` is
    :math:`P(\beta < 0 \mid y)`.

    Examples
    --------
    >>> from unittest import mock
    >>> from pbassess.inference import mock_pymc_sample
    >>> with mock.patch("pymc.sample", mock_pymc_sample):  # plumbing only: no real NUTS in a doctest
    ...     fit = fit_accuracy_trend([90, 80], [100, 100], seed=0, sample_kwargs={"draws": 20, "tune": 20, "chains": 1})
    >>> fit["theta"].shape, fit["idata"]["log_likelihood"]["correct"].sizes["item"]
    ((20, 2), 200)
    """
    spec = AccuracyTrendSpec(correct, n, intensity)
    return _accuracy_dict(_fit_trend(spec, trend="accuracy", seed=seed, sample_kwargs=sample_kwargs, options={}))


def _accuracy_dict(result: ShiftTrendResult) -> dict[str, Any]:
    post = result.posterior
    theta = post["theta"].to_numpy().reshape(-1, post["theta"].shape[-1])
    beta = post["beta"].to_numpy().ravel()
    return {"idata": result.idata, "theta": theta, "p_decreasing": float((beta < 0).mean()),
            "diagnostics": result.diagnostics, "result": result}


def _numeric_levels(levels: list[str]) -> np.ndarray:
    try:
        return np.array([float(v) for v in levels])
    except ValueError:
        raise ConfigError(f"the trend needs numeric levels (e.g. by='intensity'), got {levels[:3]}") from None


def fit_table_trend(ds: Any, model: str, *, seed: Any = None, sample_kwargs: dict[str, Any] | None = None
                    ) -> dict[str, Any]:
    """:func:`fit_accuracy_trend` on one model's levels of a shift table (numeric levels).

    The levels must be numbers (e.g. ``by="intensity"``); levels without labels are skipped.
    Returns the dict of :func:`fit_accuracy_trend` plus ``levels``.

    Parameters
    ----------
    ds : xarray.Dataset or ShiftTableResult
        A :func:`shift_table` with numeric levels.
    model : str
        The model whose levels are fitted.
    seed : int or numpy.random.Generator, optional
    sample_kwargs : dict, optional
        :func:`pymc.sample` options.

    Returns
    -------
    dict
        What :func:`fit_accuracy_trend` returns, plus ``levels``.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from unittest import mock
    >>> from pbassess.inference import mock_pymc_sample
    >>> ds = xr.Dataset({"n": (("level", "model"), [[100.0], [100.0], [0.0]]),
    ...                  "accuracy": (("level", "model"), [[0.9], [0.7], [np.nan]])},
    ...                 coords={"level": ["0", "2", "5"], "model": ["m"]})
    >>> with mock.patch("pymc.sample", mock_pymc_sample):  # plumbing only: no real NUTS in a doctest
    ...     fit = fit_table_trend(ds, "m", seed=0, sample_kwargs={"draws": 10, "tune": 10, "chains": 1})
    >>> fit["levels"], fit["theta"].shape, fit["result"].levels
    (['0', '2'], (10, 2), ['0', '2'])
    """
    cell = ds.sel(model=model)
    n = np.nan_to_num(cell["n"].values).astype(np.int64)
    keep = n > 0
    levels = [str(v) for v in np.asarray(ds["level"].values)[keep]]
    x = _numeric_levels(levels)
    k = np.rint(cell["accuracy"].values[keep] * n[keep]).astype(np.int64)
    spec = AccuracyTrendSpec(k, n[keep], x, levels=levels)
    result = _fit_trend(spec, trend="accuracy", seed=seed, sample_kwargs=sample_kwargs,
                        options={"model": str(model), "by": str(ds.attrs.get("by") or "level")})
    out = _accuracy_dict(result)
    out["levels"] = levels
    return out


def fit_calibration_trend(ds: Any, model: str, *, seed: Any = None,
                          sample_kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
    """Fit :func:`calibration_trend_model` for one model of a shift table (numeric levels) by NUTS.

    Levels without labels are skipped; the fit goes through :func:`pbassess.inference.fit`
    (one log-likelihood value per labeled item of a level x bin cell).

    Returns
    -------
    dict
        ``idata``, ``ece`` (draws, L), ``levels``, ``p_more_overconfident`` (P(b < 0)),
        ``diagnostics`` and ``result`` (:class:`~pbassess.results.hierarchical.ShiftTrendResult`).

    Examples
    --------
    >>> import xarray as xr
    >>> from unittest import mock
    >>> from pbassess.inference import mock_pymc_sample
    >>> dims = ("level", "model", "bin")
    >>> ds = xr.Dataset({"ece_bin_n": (dims, [[[10, 90]], [[30, 70]], [[50, 50]]]),
    ...                  "ece_bin_correct": (dims, [[[6, 84]], [[15, 55]], [[20, 30]]]),
    ...                  "ece_bin_score_sum": (dims, [[[6.5, 85.0]], [[19.5, 66.5]], [[32.5, 47.5]]])},
    ...                 coords={"level": ["0", "2", "4"], "model": ["m"]})
    >>> with mock.patch("pymc.sample", mock_pymc_sample):  # plumbing only: no real NUTS in a doctest
    ...     fit = fit_calibration_trend(ds, "m", seed=0, sample_kwargs={"draws": 100, "tune": 100, "chains": 1})
    >>> fit["levels"], fit["ece"].shape, 0 <= fit["p_more_overconfident"] <= 1
    (['0', '2', '4'], (100, 3), True)
    """
    cell = ds.sel(model=model)
    n = np.nan_to_num(cell["ece_bin_n"].values)
    keep = n.sum(axis=1) > 0
    levels = [str(v) for v in np.asarray(ds["level"].values)[keep]]
    x = _numeric_levels(levels)
    bins = [str(b) for b in ds["bin"].values] if "bin" in ds.coords else None
    spec = CalibrationTrendSpec(n[keep], np.nan_to_num(cell["ece_bin_correct"].values)[keep],
                                np.nan_to_num(cell["ece_bin_score_sum"].values)[keep], x, levels=levels, bins=bins)
    result = _fit_trend(spec, trend="calibration", seed=seed, sample_kwargs=sample_kwargs,
                        options={"model": str(model), "by": str(ds.attrs.get("by") or "level")})
    post = result.posterior
    return {"idata": result.idata, "ece": post["ece"].to_numpy().reshape(-1, len(levels)), "levels": levels,
            "p_more_overconfident": float((post["b"].to_numpy() < 0).mean()), "diagnostics": result.diagnostics,
            "result": result}
