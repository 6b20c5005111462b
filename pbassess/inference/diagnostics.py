"""Convergence diagnostics of a NUTS fit: R-hat on a few summary quantities, ESS, divergences.

Which R-hat. The rank-normalised split R-hat (Vehtari et al. 2021; ``arviz_stats.rhat``, computed for
all elements at once by :mod:`pbassess.inference.convergence`) is
compared with its recommended threshold 1.01 on the *worst of a few summary quantities* of
each reported variable, not on the maximum over every element: per draw, a vector variable
is reduced to its mean, minimum and maximum over its elements (a scalar stays itself), and
R-hat is computed for those series. The maximum of 1,000 element-wise R-hats exceeds 1.01 by
chance on sound fits (the false alarms of the issue); the summaries still move when any
element is stuck in one chain (it shifts that chain's mean, and its minimum or maximum).
The element-wise maximum is reported as ``max_rhat_elementwise`` for information only.
With one chain R-hat cannot be computed: ``rhat_note`` says so and ``max_rhat`` is None.

ESS: the minimum bulk and tail ESS over every element of the reported variables must reach
:data:`MIN_ESS`; divergences must be zero.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import xarray as xr

__all__ = ["MIN_ESS", "PSIS_REFF_MAX_VALUES", "RHAT_THRESHOLD", "diagnostics", "diagnostics_note",
           "psis_relative_efficiency", "summary_quantities"]

#: Threshold of the worst summary-quantity R-hat (Vehtari et al. 2021).
RHAT_THRESHOLD: float = 1.01
#: Minimum bulk and tail ESS over all elements of the reported variables.
MIN_ESS: float = 100.0
#: :func:`psis_relative_efficiency` reads the posterior variables of at most this many values a draw.
PSIS_REFF_MAX_VALUES: int = 64


def psis_relative_efficiency(idata: Any, max_values: int = PSIS_REFF_MAX_VALUES) -> float | None:
    """PSIS-LOO's relative efficiency ``reff`` (mean ESS / draws) from the posterior's small variables.

    ArviZ's default (``arviz_stats.loo`` without ``reff``) averages the ESS of every value of every
    posterior variable, which on a surface is every arm's accuracy, mean and effects (~8 s on ACS's
    2,554 arms). The same average over the variables of at most ``max_values`` values a draw (the
    hyperparameters and scalars) is ArviZ's number when every variable is small, and otherwise a
    cheaper estimate of the same quantity. One chain gives 1.0 (as ArviZ); None when no variable is
    small enough (then pass nothing and let ArviZ compute it).

    Parameters
    ----------
    idata : xarray.DataTree
        With a ``posterior`` group (chain, draw, ...).
    max_values : int
        Largest number of values a draw of a variable may have to be read.

    Returns
    -------
    float or None

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> post = xr.Dataset({"mu": (("chain", "draw"), rng.normal(size=(4, 500))),
    ...                    "arm": (("chain", "draw", "arm"), rng.normal(size=(4, 500, 300)))})
    >>> reff = psis_relative_efficiency(xr.DataTree.from_dict({"posterior": post}))
    >>> 0.8 < reff < 1.2  # independent draws: ESS about the number of draws
    True
    """
    post = idata["posterior"].to_dataset() if hasattr(idata["posterior"], "to_dataset") else idata["posterior"]
    per_draw = post.sizes["chain"] * post.sizes["draw"]
    if post.sizes["chain"] == 1:
        return 1.0
    small = [v for v in post.data_vars if post[v].size // per_draw <= max_values]
    if not small:
        return None
    import arviz as az

    ess = az.ess(post[small], method="mean")
    return float(np.mean(np.hstack([np.ravel(ess[v].values) for v in small])) / per_draw)


def summary_quantities(posterior: xr.Dataset, var_names: Sequence[str]) -> xr.Dataset:
    """Per-draw summaries of each variable: itself if scalar, else its mean, min and max over elements.

    Examples
    --------
    >>> ds = xr.Dataset({"a": (("chain", "draw", "k"), np.zeros((2, 5, 3))), "b": (("chain", "draw"), np.ones((2, 5)))})
    >>> sorted(summary_quantities(ds, ["a", "b"]).data_vars)
    ['a[max]', 'a[mean]', 'a[min]', 'b']
    """
    out: dict[str, xr.DataArray] = {}
    for name in var_names:
        da = posterior[name].astype(float)
        dims = [d for d in da.dims if d not in ("chain", "draw")]
        if not dims:
            out[str(name)] = da
            continue
        out[f"{name}[mean]"] = da.mean(dims)
        out[f"{name}[min]"] = da.min(dims)
        out[f"{name}[max]"] = da.max(dims)
    return xr.Dataset(out)


def _per_element(ds: xr.Dataset, statistic) -> dict[str, xr.Dataset]:
    """``statistic`` ((elements, chains, draws) -> {key: (elements,)}, such as
    :func:`pbassess.inference.convergence.rank_diagnostics`) of every element of every variable, one
    dataset per key, as ``arviz_stats.ess`` / ``rhat`` return it (one value per element).

    All variables' elements go to ``statistic`` in one array (they have the same chains and draws),
    so its thread pool sees every element at once.
    """
    arrays, layout = [], []
    for name, da in ds.data_vars.items():
        da = da.astype(float)
        if "chain" not in da.dims:
            da = da.expand_dims("chain")
        rest = [d for d in da.dims if d not in ("chain", "draw")]
        arr = da.transpose(*rest, "chain", "draw").to_numpy()
        arrays.append(arr.reshape(-1, *arr.shape[-2:]))
        layout.append((name, rest, arr.shape[:-2], {d: da.coords[d] for d in rest if d in da.coords}))
    if not arrays:
        return {}
    values = statistic(np.concatenate(arrays))
    out: dict[str, dict[str, xr.DataArray]] = {key: {} for key in values}
    start = 0
    for name, rest, shape, coords in layout:
        size = int(np.prod(shape, dtype=np.int64))
        for key, v in values.items():
            out[key][name] = xr.DataArray(v[start:start + size].reshape(shape), dims=rest, coords=coords)
        start += size
    return {key: xr.Dataset(v) for key, v in out.items()}


def _finite_extreme(ds: xr.Dataset, reduce) -> float | None:
    values = np.concatenate([np.ravel(v.to_numpy()) for v in ds.data_vars.values()] or [np.array([])])
    values = values[np.isfinite(values)]
    return float(reduce(values)) if values.size else None


def diagnostics(
    idata: Any,
    var_names: Sequence[str] | None = None,
    *,
    warn: bool = True,
    rhat_threshold: float = RHAT_THRESHOLD,
    min_ess: float = MIN_ESS,
) -> dict[str, Any]:
    """Convergence diagnostics of a NUTS fit (see the module docstring for which R-hat).

    Parameters
    ----------
    idata : xarray.DataTree
        With ``posterior`` and (optionally) ``sample_stats``.
    var_names : sequence of str, optional
        The reported variables (default: every posterior variable).
    warn : bool
        Warn (``UserWarning``) when the fit fails a check.

    Returns
    -------
    dict
        ``ok`` (bool), ``max_rhat`` (worst summary-quantity R-hat, None with one chain),
        ``max_rhat_elementwise``, ``rhat_threshold``, ``rhat_method``, ``rhat_note``,
        ``min_ess_bulk``, ``min_ess_tail``, ``min_ess``, ``divergences``, ``chains``,
        ``draws``, ``problems`` (list of str).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> post = xr.Dataset({"x": (("chain", "draw", "k"), rng.normal(size=(4, 500, 3)))})
    >>> d = diagnostics(xr.DataTree.from_dict({"posterior": post}))
    >>> d["ok"], d["max_rhat"] < 1.01, d["divergences"]
    (True, True, 0)
    >>> stuck = post.copy(); stuck["x"][0] += 3.0
    >>> diagnostics(xr.DataTree.from_dict({"posterior": stuck}), warn=False)["ok"]
    False
    """
    from pbassess.inference import convergence

    post = idata["posterior"].to_dataset() if isinstance(idata, xr.DataTree) else idata.posterior
    names = list(var_names) if var_names is not None else [str(v) for v in post.data_vars]
    names = [n for n in names if n in post]
    chains, draws = int(post.sizes.get("chain", 1)), int(post.sizes.get("draw", 0))
    reported = post[names]
    divergences = 0
    if isinstance(idata, xr.DataTree) and "sample_stats" in idata.children:
        stats = idata["sample_stats"].to_dataset()
        if "diverging" in stats:
            divergences = int(stats["diverging"].sum())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        every = _per_element(reported, convergence.rank_diagnostics) if names else {}
        ess_bulk, ess_tail = every.get("ess_bulk", xr.Dataset()), every.get("ess_tail", xr.Dataset())
        if chains >= 2 and names:
            rhat = _per_element(summary_quantities(reported, names),
                                lambda x: {"rhat": convergence.rhat_rank(x)})["rhat"]
            rhat_all = every["rhat"]
        else:
            rhat = rhat_all = xr.Dataset()
    out: dict[str, Any] = {
        "max_rhat": _finite_extreme(rhat, np.max), "max_rhat_elementwise": _finite_extreme(rhat_all, np.max),
        "rhat_threshold": float(rhat_threshold),
        "rhat_method": "rank-normalised split R-hat, worst of mean/min/max per variable",
        "rhat_note": None if chains >= 2 else "R-hat skipped: it needs at least 2 chains, this fit has 1",
        "min_ess_bulk": _finite_extreme(ess_bulk, np.min), "min_ess_tail": _finite_extreme(ess_tail, np.min),
        "min_ess": float(min_ess), "divergences": divergences, "chains": chains, "draws": draws,
    }
    problems = []
    if out["max_rhat"] is not None and out["max_rhat"] > rhat_threshold:
        worst = _worst_variable(rhat)
        out["worst_rhat_variable"] = worst
        problems.append(f"R-hat {_above(out['max_rhat'], rhat_threshold)} > {rhat_threshold:g}"
                        + (f" (on {worst})" if worst else ""))
    for key, label in (("min_ess_bulk", "bulk"), ("min_ess_tail", "tail")):
        if out[key] is not None and out[key] < min_ess:
            problems.append(f"min {label} ESS {out[key]:.0f} < {min_ess:.0f}")
    if divergences:
        problems.append(f"{divergences} divergent transitions")
    out["problems"] = problems
    out["ok"] = not problems
    if warn and problems:
        warnings.warn("MCMC diagnostics failed: " + "; ".join(problems), UserWarning, stacklevel=3)
    if warn and out["rhat_note"]:
        warnings.warn(out["rhat_note"], UserWarning, stacklevel=3)
    return out


def _above(value: float, threshold: float) -> str:
    """``value`` with the fewest decimals (3 or more) that still show it above ``threshold``.

    Examples
    --------
    >>> _above(1.01004, 1.01), _above(1.0261, 1.01)
    ('1.01004', '1.026')
    """
    for digits in range(3, 9):
        text = f"{value:.{digits}f}"
        if float(text) > threshold:
            return text
    return f"{value:.9f}"


def _worst_variable(rhat: xr.Dataset) -> str | None:
    """The reported variable whose summary quantity has the largest R-hat (``accuracy[max]`` -> ``accuracy``)."""
    best, name = -np.inf, None
    for key, da in rhat.data_vars.items():
        value = float(np.nanmax(da.to_numpy())) if da.size else -np.inf
        if value > best:
            best, name = value, str(key).split("[")[0]
    return name


def diagnostics_note(diag: dict[str, Any] | None) -> str:
    """A short clause for sentences: empty when the fit is fine or not MCMC.

    Parameters
    ----------
    diag : dict or None
        A result of :func:`diagnostics` (``None`` for conjugate fits).

    Returns
    -------
    str
        Empty, or a clause naming the problem (R-hat, ESS, divergences).

    Examples
    --------
    >>> diagnostics_note({"ok": False, "problems": ["3 divergent transitions"]})
    ' Warning: the MCMC fit failed its diagnostics (3 divergent transitions); do not trust these numbers yet.'
    >>> diagnostics_note(None)
    ''
    """
    if not diag or diag.get("ok", True):
        return ""
    problems = "; ".join(diag.get("problems") or []) or "see diagnostics"
    return f" Warning: the MCMC fit failed its diagnostics ({problems}); do not trust these numbers yet."
