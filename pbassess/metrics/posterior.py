"""From a pool to a metric's sufficient statistics and conjugate posterior draws.

``metric_statistics(preds, metric, by=...)`` runs :func:`~pbassess.counting.count_cells` with the
keys and per-item statistic the metric needs and reduces the counts to its family's
sufficient statistics; ``metric_posterior(metric, stats, ...)`` draws from the conjugate
posterior of every cell: Beta(pc/2 + s, pc/2 + t - s), Dirichlet(pc/J + counts), the
Bayesian bootstrap (:mod:`pbassess.metrics.bootstrap`) or, for the ECE, Beta posteriors of the
confidence bins centred at their mean confidence (:func:`ece_draws`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pbassess.constants import DEFAULT_N_DRAWS, DEFAULT_PSEUDOCOUNT
from pbassess.counting import count_cells
from pbassess.errors import ConfigError, DataError
from pbassess.metrics.bootstrap import bayesian_bootstrap
from pbassess.metrics.registry import Metric, get_metric
from pbassess.stats.sampling import as_generator, beta_draws, dirichlet_draws

__all__ = ["ece_draws", "metric_posterior", "metric_statistics"]


def metric_statistics(preds: Any, metric: str | Metric, by: Any = (), *, bin_edges: Any = None,
                      labeled_only: bool = False, client: Any = None) -> Any:
    """Sufficient statistics of ``metric`` per cell of ``by`` (an ``xarray.Dataset``).

    Parameters
    ----------
    preds : Predictions, DataFrame, arrays or xarray.Dataset
        The pool.
    metric : str or Metric
    by : str or sequence of str
        Cell keys, as in :func:`pbassess.counting.count_cells` (``()``: the whole pool).
    bin_edges : int or array_like, optional
        Edges of the ``"bin"`` key.
    labeled_only : bool
        Count only labeled items.
    client : distributed.Client or str, optional
        Where dask-backed data is computed.

    Returns
    -------
    xarray.Dataset
        The metric's sufficient statistics per cell (attributes ``metric``, ``family``,
        ``direction``).

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_top1(["a", "b", "a", "b"], [0.9, 0.6, 0.7, 0.8], ["a", "a", "b", "b"])
    >>> s = metric_statistics(p, "accuracy", "predicted")
    >>> s["successes"].values.tolist(), s["trials"].values.tolist()
    ([1, 1], [2, 2])
    >>> metric_statistics(p, "tpr")["successes"].dims
    ('class',)
    """
    m = get_metric(metric)
    keys = (by,) if isinstance(by, str) else tuple(by)
    overlap = [k for k in m.count_by if k in keys]
    if overlap:
        raise ConfigError(f"metric {m.name!r} is already per {overlap[0]!r} class; leave it out of by")
    stats = () if m.per_item is None else (m.per_item,)
    if m.needs_probs and stats == ():
        raise ConfigError(f"metric {m.name!r} needs probabilities but declares no per-item statistic")
    counts = count_cells(preds, keys + tuple(m.count_by), bin_edges=bin_edges, item_stats=stats,
                         labeled_only=labeled_only, client=client)
    if m.needs_labels and int(counts["n"].sum()) == 0:
        raise DataError(f"the metric {m.name!r} needs true labels, but none of the items is labeled")
    out = m.sufficient_statistics(counts)
    out.attrs = {"metric": m.name, "family": m.family, "direction": m.direction}
    return out


def _stack(da: Any, last: str | None = None) -> tuple[np.ndarray, tuple[str, ...], dict]:
    dims = tuple(d for d in da.dims if d != last) + ((last,) if last else ())
    da = da.transpose(*dims)
    coords = {d: da[d].values for d in dims if d in da.coords}
    return np.asarray(da.values, dtype=float), dims, coords


def ece_draws(n: Any, correct: Any, score_sum: Any, n_draws: int, seed: Any = None,
              pseudocount: float = DEFAULT_PSEUDOCOUNT) -> np.ndarray:
    """Posterior draws of the ECE from per-bin counts (the ``binned-calibration`` family).

    Each occupied bin's accuracy gets a Beta prior of strength ``pseudocount`` centred at the
    bin's mean confidence (perfect calibration) and its conjugate posterior; the ECE is the
    bin-weighted mean absolute gap of every draw. A pool without labels gives NaN.

    Parameters
    ----------
    n, correct, score_sum : array_like, shape (B,)
        Labeled items, correct items and the sum of confidences in each bin.
    n_draws : int
    seed : int or Generator, optional
    pseudocount : float

    Returns
    -------
    ndarray, shape (n_draws,)
        NaN for a pool without labels.

    Examples
    --------
    >>> d = ece_draws([0, 1000], [0, 700], [0.0, 900.0], 4000, seed=0)
    >>> bool(abs(d.mean() - 0.2) < 0.01)
    True
    """
    from pbassess.stats.beta import beta_prior
    from pbassess.stats.calibration import ece_from_draws

    m = np.asarray(n, dtype=float)
    k = np.asarray(correct, dtype=float)
    if m.sum() == 0:
        return np.full(int(n_draws), np.nan)
    occupied = m > 0
    s = np.asarray(score_sum, dtype=float)[occupied] / m[occupied]
    a, b = beta_prior("informed", int(occupied.sum()), pseudocount, mean=s)
    theta = beta_draws(a + k[occupied], b + m[occupied] - k[occupied], n_draws, seed=seed)
    return ece_from_draws(theta, m[occupied] / m.sum(), s)


def metric_posterior(metric: str | Metric, stats: Any, *, n_draws: int = DEFAULT_N_DRAWS,
                     pseudocount: float = DEFAULT_PSEUDOCOUNT, seed: Any = None) -> Any:
    """Conjugate posterior draws of a metric in every cell, as a DataArray with a leading ``draw`` dim.

    Parameters
    ----------
    metric : str or Metric
    stats : xarray.Dataset
        From :func:`metric_statistics`.
    n_draws : int
    pseudocount : float
        Prior strength: Beta(pc/2, pc/2), Dirichlet(pc/J, ..., pc/J); the Bayesian bootstrap
        has no prior (cells without items give NaN).
    seed : int or Generator, optional

    Returns
    -------
    xarray.DataArray
        Dims ``draw`` and the cells' dims.

    Examples
    --------
    >>> import xarray as xr
    >>> s = xr.Dataset({"successes": ("cell", [8]), "trials": ("cell", [10])})
    >>> d = metric_posterior("accuracy", s, n_draws=20000, seed=0)
    >>> d.dims, round(float(d.mean()), 2)        # Beta(9, 3): mean 0.75
    (('draw', 'cell'), 0.75)
    """
    import xarray as xr

    m = get_metric(metric)
    rng = as_generator(seed)
    pc = float(pseudocount)
    if not np.isfinite(pc) or pc <= 0:
        raise ConfigError(f"the pseudocount must be positive, got {pseudocount}")
    if m.family == "beta-binomial":
        s, dims, coords = _stack(stats["successes"])
        t, _, _ = _stack(stats["trials"])
        flat = beta_draws(pc / 2 + s.ravel(), pc / 2 + (t - s).ravel(), n_draws, seed=rng)
        values = flat.reshape((int(n_draws), *s.shape))
    elif m.family == "dirichlet-multinomial":
        c, dims, coords = _stack(stats["counts"], last="category")
        alpha = pc / c.shape[-1] + c.reshape(-1, c.shape[-1])
        values = dirichlet_draws(alpha, n_draws, seed=rng).reshape((int(n_draws), *c.shape))
    elif m.family == "binned-calibration":
        n, dims, coords = _stack(stats["trials"], last="bin")
        k, _, _ = _stack(stats["successes"], last="bin")
        score, _, _ = _stack(stats["score_sum"], last="bin")
        dims, coords = dims[:-1], {d: v for d, v in coords.items() if d != "bin"}
        flat = [ece_draws(*(x.reshape(-1, x.shape[-1])[i] for x in (n, k, score)), n_draws, seed=rng,
                          pseudocount=pc) for i in range(int(np.prod(n.shape[:-1])))]
        values = np.stack(flat, axis=1).reshape((int(n_draws), *n.shape[:-1]))
    else:
        n, dims, coords = _stack(stats["n"])
        total, _, _ = _stack(stats["total"])
        sq, _, _ = _stack(stats["sq_total"])
        values = bayesian_bootstrap(n=n, total=total, sq_total=sq, n_draws=n_draws, seed=rng)
    return xr.DataArray(values, dims=("draw", *dims), coords=coords, name=m.name,
                        attrs={"family": m.family, "direction": m.direction})
