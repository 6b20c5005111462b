"""DataTrees for the exact conjugate posteriors, and pointwise log-likelihoods over counts.

A conjugate fit is stored like a NUTS fit: an :class:`xarray.DataTree` with the exact draws in
``posterior`` (one chain), the counts in ``observed_data`` and the pointwise log-likelihood of
the counts under each draw in ``log_likelihood``, so ``az.summary``, ``az.plot_forest``,
``az.loo``, ``az.compare`` and the ``.azstats`` accessor work the same on both inferences.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr
from scipy import special

__all__ = ["bernoulli_log_likelihood", "bernoulli_observed_data", "binomial_loglik", "conjugate_datatree",
           "multinomial_loglik_constant", "posterior_dataset"]


def posterior_dataset(data: dict[str, tuple[tuple[str, ...], np.ndarray]], coords: dict[str, Any]) -> xr.Dataset:
    """A posterior Dataset of one chain from ``{name: (dims without chain/draw, draws)}``.

    Each array has the draws first: shape (n_draws, ...).

    Parameters
    ----------
    data : dict of str to (dims, ndarray)
        Each variable's dims (without ``chain``/``draw``) and draws (draws first).
    coords : dict
        Coordinates of those dims.

    Returns
    -------
    xarray.Dataset
        Dims ``chain`` (one) and ``draw`` first.

    Examples
    --------
    >>> ds = posterior_dataset({"p": (("k",), np.zeros((5, 2)))}, {"k": ["a", "b"]})
    >>> dict(ds["p"].sizes)
    {'chain': 1, 'draw': 5, 'k': 2}
    """
    n_draws = next(iter(data.values()))[1].shape[0]
    variables = {name: (("chain", "draw", *dims), np.asarray(arr)[None]) for name, (dims, arr) in data.items()}
    used = {d for dims, _ in data.values() for d in dims}
    return xr.Dataset(variables, coords={"chain": [0], "draw": np.arange(n_draws),
                                         **{k: v for k, v in coords.items() if k in used}})


def binomial_loglik(n: Any, k: Any, theta: Any) -> np.ndarray:
    """log Binomial(k | n, theta), broadcast over draws (theta (..., K), n and k (K,)).

    Stable at theta 0 or 1 (``xlogy``/``xlog1py``).

    Parameters
    ----------
    n, k : array_like, shape (K,)
        Trials and successes.
    theta : array_like, shape (..., K)
        Rates.

    Returns
    -------
    ndarray, shape (..., K)

    Examples
    --------
    >>> float(binomial_loglik(2, 1, 0.5).round(6)) == round(float(np.log(0.5)), 6)
    True
    """
    n = np.asarray(n, dtype=float)
    k = np.asarray(k, dtype=float)
    theta = np.asarray(theta, dtype=float)
    const = special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)
    return const + special.xlogy(k, theta) + special.xlog1py(n - k, -theta)


def _labeled_names(n: np.ndarray, names: Any) -> tuple[np.ndarray, list[Any] | np.ndarray]:
    labeled = np.flatnonzero(n > 0)
    return labeled, (labeled if names is None else [names[i] for i in labeled])


def bernoulli_log_likelihood(theta: Any, n: Any, k: Any, observations: Any, per_item: bool, *, dim: str = "cell",
                             names: Any = None, clip: bool = True) -> tuple[tuple[str, ...], np.ndarray, dict]:
    """The ``Spec.log_likelihood`` of labeled items that are Bernoulli draws of their cell's rate.

    Per item (``per_item``; ``observations`` with ``cell`` and ``outcome``): ``y log t + (1 - y)
    log(1 - t)`` with ``t`` the rate of the item's cell, dim ``item``. Else one Binomial value per
    labeled cell (dim ``dim``, named by ``names`` or by the cell index). ``theta`` has the cells
    last, flattened in the order of ``n.ravel()`` (``(..., cells)``); ``clip`` keeps rates of
    exactly 0 or 1 finite.

    Parameters
    ----------
    theta : ndarray, shape (..., cells)
        Draws of each cell's rate.
    n, k : array_like
        Labeled and correct labeled items per cell.
    observations : Observations or None
        The labeled items (``cell``, ``outcome``); needed with ``per_item``.
    per_item : bool
        One value per labeled item (else one Binomial value per labeled cell).
    dim : str
        Name of the cell dimension (without ``per_item``).
    names : sequence, optional
        Names of the cells.
    clip : bool
        Keep rates of exactly 0 or 1 finite.

    Returns
    -------
    (dims, values, coords)
        The dims of the last axes, the log-likelihood values and their coordinates.

    Examples
    --------
    >>> from pbassess.inference.spec import Observations
    >>> obs = Observations.of([0, 0, 1], [1, 0, 1])
    >>> theta = np.array([[0.5, 0.8]])                       # one draw, two cells
    >>> dims, v, _ = bernoulli_log_likelihood(theta, [2, 1], [1, 1], obs, True)
    >>> dims, np.round(v, 4).tolist()
    (('item',), [[-0.6931, -0.6931, -0.2231]])
    >>> dims, v, coords = bernoulli_log_likelihood(theta, [2, 1], [1, 1], obs, False, names=["a", "b"])
    >>> dims, coords
    (('cell',), {'cell': ['a', 'b']})
    """
    theta = np.asarray(theta, dtype=float)
    n = np.asarray(n).ravel()
    k = np.asarray(k).ravel()
    if clip:
        theta = np.clip(theta, np.finfo(float).tiny, np.nextafter(1.0, 0.0))
    if per_item:
        # the logs per cell (draws x cells), then one gather per item: O(draws x items) memory moves only
        with np.errstate(divide="ignore"):
            log_right, log_wrong = np.log(theta), np.log1p(-theta)
        right = np.asarray(observations.outcome).astype(bool)
        cell = np.asarray(observations.cell)
        values = np.take(log_wrong, cell, axis=-1)
        values[..., right] = np.take(log_right, cell[right], axis=-1)
        return ("item",), values, {}
    labeled, cell_names = _labeled_names(n, names)
    return (dim,), binomial_loglik(n[labeled], k[labeled], theta[..., labeled]), {dim: cell_names}


def bernoulli_observed_data(name: str, n: Any, k: Any, observations: Any, *, dim: str = "cell",
                            names: Any = None) -> xr.Dataset:
    """The ``observed_data`` of Bernoulli items: each labeled item's outcome (dim ``item``), or, without
    the items, the correct count of each labeled cell (dim ``dim``).

    Parameters
    ----------
    name : str
        The observed variable's name.
    n, k : array_like
        Labeled and correct labeled items per cell.
    observations : Observations or None
        The labeled items, when known.
    dim : str
        Name of the cell dimension (without the items).
    names : sequence, optional
        Names of the cells.

    Returns
    -------
    xarray.Dataset

    Examples
    --------
    >>> from pbassess.inference.spec import Observations
    >>> bernoulli_observed_data("correct", [2, 0], [1, 0], Observations.of([0, 0], [1, 0]))["correct"].values.tolist()
    [1, 0]
    >>> dict(bernoulli_observed_data("correct", [2, 0], [1, 0], None, names=["a", "b"]).sizes)
    {'cell': 1}
    """
    if observations is not None:
        return xr.Dataset({name: ("item", observations.outcome)}, coords={"item": observations.item})
    k = np.asarray(k).ravel()
    labeled, cell_names = _labeled_names(np.asarray(n).ravel(), names)
    return xr.Dataset({name: (dim, k[labeled])}, coords={dim: cell_names})


def multinomial_loglik_constant(counts: Any) -> np.ndarray:
    """``log N! - sum_j log c_j!`` per row of a count matrix (the multinomial coefficient).

    Examples
    --------
    >>> from math import log
    >>> c = multinomial_loglik_constant([[2, 1, 0], [1, 1, 1]])
    >>> bool(np.allclose(c, [log(3), log(6)]))  # 3!/(2! 1! 0!) = 3 and 3!/(1! 1! 1!) = 6
    True
    """
    c = np.asarray(counts, dtype=float)
    return special.gammaln(c.sum(axis=-1) + 1) - special.gammaln(c + 1).sum(axis=-1)


def conjugate_datatree(
    posterior: xr.Dataset,
    *,
    observed_data: xr.Dataset | None = None,
    log_likelihood: xr.Dataset | None = None,
    attrs: dict[str, Any] | None = None,
) -> xr.DataTree:
    """Assemble the DataTree of a conjugate fit (groups ``posterior``, ``observed_data``, ``log_likelihood``).

    Parameters
    ----------
    posterior : xarray.Dataset
        The posterior draws (dims ``chain, draw, ...``).
    observed_data, log_likelihood : xarray.Dataset, optional
    attrs : dict, optional
        Attributes of the tree.

    Returns
    -------
    xarray.DataTree

    Examples
    --------
    >>> post = posterior_dataset({"p": (("k",), np.full((4, 1), 0.5))}, {"k": ["a"]})
    >>> ll = posterior_dataset({"y": (("k",), binomial_loglik([2], [1], post["p"].values[0]))}, {"k": ["a"]})
    >>> tree = conjugate_datatree(post, observed_data=xr.Dataset({"y": ("k", [1])}, coords={"k": ["a"]}), log_likelihood=ll)
    >>> sorted(tree.children)
    ['log_likelihood', 'observed_data', 'posterior']
    """
    groups: dict[str, xr.Dataset] = {"posterior": posterior}
    if observed_data is not None:
        groups["observed_data"] = observed_data
    if log_likelihood is not None:
        groups["log_likelihood"] = log_likelihood
    tree = xr.DataTree.from_dict({f"/{k}": v for k, v in groups.items()})
    tree.attrs.update({"inference": "conjugate", **(attrs or {})})
    return tree


def keep_observed_cells(tree: xr.DataTree, dim: str, n: Any) -> xr.DataTree:
    """Restrict ``log_likelihood`` to the cells with observations (``n > 0``) along ``dim``.

    A cell without observations has log-likelihood 0 under every draw: it is not an
    observation, and PSIS-LOO cannot smooth a constant. Without any observed cell the group is
    dropped.

    Examples
    --------
    >>> post = posterior_dataset({"p": (("k",), np.full((4, 2), 0.5))}, {"k": ["a", "b"]})
    >>> ll = posterior_dataset({"y": (("k",), binomial_loglik([2, 0], [1, 0], post["p"].values[0]))}, {"k": ["a", "b"]})
    >>> keep_observed_cells(conjugate_datatree(post, log_likelihood=ll), "k", [2, 0])["log_likelihood"]["y"].sizes["k"]
    1
    """
    if "log_likelihood" not in tree.children:
        return tree
    observed = np.flatnonzero(np.asarray(n).reshape(-1) > 0)
    if observed.size == 0:
        del tree["log_likelihood"]
        return tree
    tree["log_likelihood"] = tree["log_likelihood"].to_dataset().isel({dim: observed})
    return tree
