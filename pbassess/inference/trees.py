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

__all__ = ["binomial_loglik", "conjugate_datatree", "multinomial_loglik_constant", "posterior_dataset"]


def posterior_dataset(data: dict[str, tuple[tuple[str, ...], np.ndarray]], coords: dict[str, Any]) -> xr.Dataset:
    """A posterior Dataset of one chain from ``{name: (dims without chain/draw, draws)}``.

    Each array has the draws first: shape (n_draws, ...).

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
