"""PyMC models pooling accuracy and calibration across shift levels, with a trend in the intensity.

:func:`calibration_trend_model` / :func:`fit_calibration_trend` do the same for calibration
(bin accuracies around the confidences, see there). The accuracy model:

For ordered levels l = 0..L-1 with numeric intensities ``x_l`` (e.g. 0..5), ``n_l`` labeled
items and ``k_l`` correct ones::

    alpha ~ Normal(logit(mean accuracy), 1.5)       # accuracy at the mean intensity
    beta  ~ Normal(0, 1)                            # change in logit accuracy per unit x (standardised)
    sigma ~ HalfNormal(0.5)                         # level-to-level deviation from the trend
    z_l   ~ Normal(0, 1)
    logit(theta_l) = alpha + beta * (x_l - mean x) / sd x + sigma * z_l
    k_l   ~ Binomial(n_l, theta_l)

Partial pooling helps when some levels hold few labels: their accuracy borrows strength from
the trend. ``P(beta < 0)`` is the probability that accuracy falls as the shift grows, and the
draws of ``theta`` give ``P(theta_{l+1} < theta_l)`` per step
(:func:`pbassess.shift.posterior.prob_worsens`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.errors import ConfigError

__all__ = ["accuracy_trend_model", "calibration_trend_model", "fit_accuracy_trend", "fit_calibration_trend",
           "fit_table_trend"]


def accuracy_trend_model(correct: Any, n: Any, intensity: Any = None):
    """The PyMC model above (non-centred), over per-level counts.

    Parameters
    ----------
    correct, n : array_like, shape (L,)
    intensity : array_like, shape (L,), optional
        Numeric level values (default 0..L-1).

    Examples
    --------
    >>> m = accuracy_trend_model([90, 80, 60], [100, 100, 100])
    >>> sorted(v.name for v in m.free_RVs)
    ['alpha', 'beta', 'sigma', 'z']
    """
    import pymc as pm

    k = np.asarray(correct, dtype=np.int64)
    m = np.asarray(n, dtype=np.int64)
    if k.ndim != 1 or k.shape != m.shape or k.size < 2:
        raise ConfigError("the trend model needs counts of at least two levels, as vectors of one length")
    if (k < 0).any() or (k > m).any():
        raise ConfigError("correct counts must lie between 0 and the number of labeled items")
    x = np.arange(k.size, dtype=float) if intensity is None else np.asarray(intensity, dtype=float)
    if x.shape != k.shape or not np.all(np.isfinite(x)) or np.ptp(x) == 0:
        raise ConfigError("intensity must be finite numbers, one per level, not all equal")
    xs = (x - x.mean()) / x.std()
    mean_acc = np.clip((k.sum() + 1) / (m.sum() + 2), 0.01, 0.99)
    coords = {"level": [str(v) for v in (np.arange(k.size) if intensity is None else intensity)]}
    with pm.Model(coords=coords) as model:
        alpha = pm.Normal("alpha", float(np.log(mean_acc / (1 - mean_acc))), 1.5)
        beta = pm.Normal("beta", 0.0, 1.0)
        sigma = pm.HalfNormal("sigma", 0.5)
        z = pm.Normal("z", 0.0, 1.0, dims="level")
        theta = pm.Deterministic("theta", pm.math.invlogit(alpha + beta * xs + sigma * z), dims="level")
        pm.Binomial("correct", n=m, p=theta, observed=k, dims="level")
    return model


def fit_accuracy_trend(correct: Any, n: Any, intensity: Any = None, *, seed: Any = None,
                       sample_kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
    """Sample :func:`accuracy_trend_model` with NUTS; summarise the trend.

    Returns
    -------
    dict with ``idata`` (DataTree), ``theta`` (draws, L), ``p_decreasing`` (P(beta < 0)),
    ``diagnostics`` (:func:`pbassess.inference.diagnostics`).

    Examples
    --------
    >>> from unittest import mock
    >>> from pbassess.inference import mock_pymc_sample
    >>> with mock.patch("pymc.sample", mock_pymc_sample):
    ...     fit = fit_accuracy_trend([90, 80], [100, 100], seed=0, sample_kwargs={"draws": 20, "tune": 20, "chains": 1})
    >>> fit["theta"].shape
    (20, 2)
    """
    from pbassess.inference import diagnostics, sample_model

    model = accuracy_trend_model(correct, n, intensity)
    idata = sample_model(model, seed=seed, sample_kwargs=sample_kwargs, log_likelihood=False,
                         defaults={"target_accept": 0.95})
    post = idata["posterior"]
    theta = post["theta"].values.reshape(-1, post["theta"].shape[-1])
    beta = post["beta"].values.ravel()
    return {"idata": idata, "theta": theta, "p_decreasing": float((beta < 0).mean()),
            "diagnostics": diagnostics(idata, var_names=["alpha", "beta", "sigma"])}


def fit_table_trend(ds: Any, model: str, *, seed: Any = None, sample_kwargs: dict[str, Any] | None = None
                    ) -> dict[str, Any]:
    """:func:`fit_accuracy_trend` on one model's levels of a shift table (numeric levels).

    The levels must be numbers (e.g. ``by="intensity"``); levels without labels are skipped.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from unittest import mock
    >>> from pbassess.inference import mock_pymc_sample
    >>> ds = xr.Dataset({"n": (("level", "model"), [[100.0], [100.0], [0.0]]),
    ...                  "accuracy": (("level", "model"), [[0.9], [0.7], [np.nan]])},
    ...                 coords={"level": ["0", "2", "5"], "model": ["m"]})
    >>> with mock.patch("pymc.sample", mock_pymc_sample):
    ...     fit = fit_table_trend(ds, "m", seed=0, sample_kwargs={"draws": 10, "tune": 10, "chains": 1})
    >>> fit["levels"], fit["theta"].shape
    (['0', '2'], (10, 2))
    """
    cell = ds.sel(model=model)
    n = np.nan_to_num(cell["n"].values).astype(np.int64)
    keep = n > 0
    levels = [str(v) for v in np.asarray(ds["level"].values)[keep]]
    try:
        x = np.array([float(v) for v in levels])
    except ValueError:
        raise ConfigError(f"the trend needs numeric levels (e.g. by='intensity'), got {levels[:3]}") from None
    k = np.rint(cell["accuracy"].values[keep] * n[keep]).astype(np.int64)
    fit = fit_accuracy_trend(k, n[keep], x, seed=seed, sample_kwargs=sample_kwargs)
    fit["levels"] = levels
    return fit


def calibration_trend_model(n: Any, correct: Any, score_sum: Any, intensity: Any = None):
    """A PyMC model of every level's bin accuracies around its confidences, with a shift trend.

    Per level l and confidence bin b (``s_lb`` the mean confidence of its ``n_lb`` items)::

        a ~ Normal(0, 1); b ~ Normal(0, 1); sigma ~ HalfNormal(0.5); tau ~ HalfNormal(0.5)
        delta_l = a + b * xs_l + sigma * u_l            # level's calibration offset (logit scale)
        logit(theta_lb) = logit(s_lb) + delta_l + tau * z_lb
        k_lb ~ Binomial(n_lb, theta_lb)
        ece_l = sum_b (n_lb / n_l) |theta_lb - s_lb|     # Deterministic

    ``delta_l < 0`` means overconfidence; ``P(b < 0)`` is the probability that overconfidence
    grows with the shift, and the ``ece`` draws pool information across levels and bins.
    Empty bins are dropped.

    Parameters
    ----------
    n, correct, score_sum : array_like, shape (L, B)
        Per-level bin counts (``ece_bin_n`` etc. of a shift table).
    intensity : array_like, shape (L,), optional

    Examples
    --------
    >>> m = calibration_trend_model([[10, 90], [30, 70]], [[5, 85], [10, 50]], [[6.5, 85.0], [19.5, 66.5]])
    >>> sorted(v.name for v in m.free_RVs)
    ['a', 'b', 'sigma', 'tau', 'u', 'z']
    """
    import pymc as pm

    m = np.asarray(n, dtype=np.int64)
    k = np.asarray(correct, dtype=np.int64)
    ssum = np.asarray(score_sum, dtype=float)
    if m.ndim != 2 or m.shape != k.shape or m.shape != ssum.shape or m.shape[0] < 2:
        raise ConfigError("the calibration trend needs (levels x bins) counts of at least two levels")
    if (k < 0).any() or (k > m).any():
        raise ConfigError("correct counts must lie between 0 and the number of labeled items")
    if (m.sum(axis=1) == 0).any():
        raise ConfigError("every level needs labeled items")
    x = np.arange(m.shape[0], dtype=float) if intensity is None else np.asarray(intensity, dtype=float)
    if x.shape != (m.shape[0],) or np.ptp(x) == 0:
        raise ConfigError("intensity must be numbers, one per level, not all equal")
    xs = (x - x.mean()) / x.std()
    level_idx, bin_idx = np.nonzero(m > 0)
    s = np.clip(ssum[level_idx, bin_idx] / m[level_idx, bin_idx], 1e-4, 1 - 1e-4)
    weight = m[level_idx, bin_idx] / m.sum(axis=1)[level_idx]
    with pm.Model(coords={"level": [str(v) for v in x], "cell": np.arange(level_idx.size)}) as model:
        a = pm.Normal("a", 0.0, 1.0)
        b = pm.Normal("b", 0.0, 1.0)
        sigma = pm.HalfNormal("sigma", 0.5)
        tau = pm.HalfNormal("tau", 0.5)
        u = pm.Normal("u", 0.0, 1.0, dims="level")
        z = pm.Normal("z", 0.0, 1.0, dims="cell")
        delta = pm.Deterministic("delta", a + b * xs + sigma * u, dims="level")
        theta = pm.math.invlogit(np.log(s / (1 - s)) + delta[level_idx] + tau * z)
        pm.Binomial("correct", n=m[level_idx, bin_idx], p=theta, observed=k[level_idx, bin_idx], dims="cell")
        gaps = weight * abs(theta - s)
        onehot = (level_idx[None, :] == np.arange(m.shape[0])[:, None]).astype(float)
        pm.Deterministic("ece", pm.math.dot(onehot, gaps), dims="level")
    return model


def fit_calibration_trend(ds: Any, model: str, *, seed: Any = None,
                          sample_kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
    """Sample :func:`calibration_trend_model` for one model of a shift table (numeric levels).

    Returns
    -------
    dict with ``idata``, ``ece`` (draws, L), ``levels``, ``p_more_overconfident`` (P(b < 0))
    and ``diagnostics``.

    Examples
    --------
    >>> import xarray as xr
    >>> dims = ("level", "model", "bin")
    >>> ds = xr.Dataset({"ece_bin_n": (dims, [[[10, 90]], [[30, 70]], [[50, 50]]]),
    ...                  "ece_bin_correct": (dims, [[[6, 84]], [[15, 55]], [[20, 30]]]),
    ...                  "ece_bin_score_sum": (dims, [[[6.5, 85.0]], [[19.5, 66.5]], [[32.5, 47.5]]])},
    ...                 coords={"level": ["0", "2", "4"], "model": ["m"]})
    >>> fit = fit_calibration_trend(ds, "m", seed=0, sample_kwargs={"draws": 100, "tune": 100, "chains": 1,
    ...                                                              "nuts_sampler": "pymc"})  # a tiny run
    >>> fit["levels"], fit["ece"].shape, 0 <= fit["p_more_overconfident"] <= 1
    (['0', '2', '4'], (100, 3), True)
    """
    from pbassess.inference import diagnostics, sample_model

    cell = ds.sel(model=model)
    n = np.nan_to_num(cell["ece_bin_n"].values)
    keep = n.sum(axis=1) > 0
    levels = [str(v) for v in np.asarray(ds["level"].values)[keep]]
    try:
        x = np.array([float(v) for v in levels])
    except ValueError:
        raise ConfigError(f"the trend needs numeric levels (e.g. by='intensity'), got {levels[:3]}") from None
    pm_model = calibration_trend_model(n[keep], np.nan_to_num(cell["ece_bin_correct"].values)[keep],
                                       np.nan_to_num(cell["ece_bin_score_sum"].values)[keep], x)
    idata = sample_model(pm_model, seed=seed, sample_kwargs=sample_kwargs, log_likelihood=False,
                         defaults={"target_accept": 0.95})
    post = idata["posterior"]
    return {"idata": idata, "ece": post["ece"].values.reshape(-1, len(levels)), "levels": levels,
            "p_more_overconfident": float((post["b"].values < 0).mean()),
            "diagnostics": diagnostics(idata, var_names=["a", "b", "sigma", "tau"])}
