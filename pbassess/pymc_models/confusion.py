"""PyMC model of the confusion probabilities P(true | predicted) and the expected cost.

The statistical model is the Dirichlet-multinomial of the confusion counts: for each predicted
class k (a row), ``theta_k = P(true = . | predicted = k) ~ Dirichlet(alpha_k)`` and the true
classes of the items predicted as k are ``Multinomial(N_k, theta_k)``. Its exact posterior,
``Dirichlet(alpha_k + counts_k)``, is what the conjugate engine draws from; this module gives the
same posterior as a PyMC model (for the MCMC engine, and as a base that users extend with
hierarchies or covariates).

Parametrisation (chosen by measurement; see ``benchmarks/static.py`` and the module notes below)
------------------------------------------------------------------------------------------------
1. **Poisson-Gamma form of the Dirichlet-multinomial.** With independent
   ``g_kj ~ Gamma(alpha_kj, 1)`` and ``counts_kj ~ Poisson(g_kj)``, the likelihood factorises as
   ``Poisson(N_k | s_k) * Multinomial(counts_k | N_k, theta_k)`` with ``s_k = sum_j g_kj`` and
   ``theta_k = g_k / s_k``, and a priori ``theta_k ~ Dirichlet(alpha_k)`` is independent of
   ``s_k ~ Gamma(sum_j alpha_kj)``. The posterior of ``theta_k`` is therefore exactly
   ``Dirichlet(alpha_k + counts_k)``, and the posterior of ``g`` is a product of independent
   Gammas -- no correlations for NUTS to fight (a ``pm.Dirichlet`` + ``pm.Multinomial`` model has
   the same posterior but couples each row through its simplex transform).
2. **Small shapes are "boosted".** A Gamma with shape ``a << 1`` (a zero-count cell under the
   default ``alpha = 2/K``) has a log-density with a 1/a-long left tail and a wall on the right,
   which drives NUTS to tree depth 8-10 with divergences. Such cells use
   ``g = h * exp(-e / a)`` with ``h ~ Gamma(a + 1, 1)`` and ``e ~ Exponential(1)``: exactly
   Gamma(a) (Marsaglia & Tsang 2000: ``Gamma(a) = Gamma(a + 1) * U^(1/a)``), with smooth
   geometry for every a.
3. **Zero-count cells are collapsed** (``collapse=True``, the default). Within a row, the cells
   with no observations and the same cost are merged into one category with the summed alpha
   (the Dirichlet aggregation property: merged cells of a Dirichlet-multinomial are again a
   Dirichlet-multinomial). The expected cost is unchanged; it only needs the mass of each cost
   level. The real CIFAR-100 counts drop from 10,000 cells to 1,590 categories (0-1 cost; 1,685
   under the people cost, 1,663 under the superclass cost). Inside a
   merged category the split between its cells is a-posteriori ``Dirichlet(alpha)`` (no data
   touch it), so the ``confusion`` Deterministic reports for a merged cell its conditional mean
   ``theta_category * alpha_kj / alpha_category``: posterior means of every cell are exact,
   while the draw-to-draw spread of an individual merged cell is not sampled. Use
   ``collapse=False`` for a per-cell model whose every cell is sampled.

Sampler: nutpie (``pm.sample(nuts_sampler="nutpie")``) when installed -- the numba-compiled
gradient is cheap and chains run as threads; it is what :func:`sample_confusion_model` uses by
default (``sample_kwargs={"nuts_sampler": "pymc"}`` for PyMC's own NUTS, which compiles faster
and suits tiny models).

Measured wall times, compile included, 4 chains x 1000 draws + 1000 tune on 2 cores, 0-1 cost,
``alpha = 2/K`` (``benchmarks/static.py``; the machine was shared, so +-50%; the naive model took
~140 s with PyMC's own NUTS on an idle machine)::

    =============================================  ============  ====================================
    100 x 100 synthetic CIFAR-like counts           wall time     diagnostics
    =============================================  ============  ====================================
    pm.Dirichlet + pm.Multinomial, nutpie           812 s         R-hat 2.27, ESS 6, 1650 divergences
    Poisson-Gamma, log-Gamma cells, nutpie          503 s         R-hat 18.7, 3000 divergences
    Poisson-Gamma, every cell boosted, nutpie       344 s         R-hat 1.003, tree depth 5.5
    Poisson-Gamma, small shapes boosted, nutpie     142-297 s     R-hat 1.003, 18,697 parameters
    ... and zero cells collapsed, PyMC NUTS         10-14 s       R-hat 1.004, 1,403 parameters
    ... and zero cells collapsed, nutpie (default)  4-8 s         R-hat 1.004, ESS > 4400
    SVHN 10 x 10 real counts, default               2-11 s        R-hat 1.003
    =============================================  ============  ====================================

Model variables
---------------
``confusion`` (dims ``predicted``, ``true``), ``expected_cost`` (dims ``predicted``) and
``category_prob`` (dims ``category``) are Deterministics; ``counts`` is the observed Poisson over
the categories. Cost convention: ``cost[k, j]`` is the cost of predicting k when the truth is j.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pbassess.errors import ConfigError
from pbassess.stats.cost import validate_cost_matrix, zero_one_cost

__all__ = ["DEFAULT_SAMPLE_KWARGS", "ConfusionCategories", "confusion_categories", "confusion_model", "sample_confusion_model"]

#: Defaults of :func:`sample_confusion_model`: 4 chains x 1000 draws after 1000 tuning steps, nutpie
#: (merged in :func:`pbassess.inference.merge_sample_kwargs`).
DEFAULT_SAMPLE_KWARGS: dict[str, Any] = {
    "draws": 1000, "tune": 1000, "chains": 4, "nuts_sampler": "nutpie",
    "compute_convergence_checks": False,
}

#: Gamma shapes below this are sampled through the boosted (h, e) parametrisation.
BOOST_BELOW = 1.0


@dataclass(frozen=True)
class ConfusionCategories:
    """The categories a confusion model samples: observed cells and merged zero-count cells.

    Attributes
    ----------
    row, alpha, count, cost : ndarray, shape (M,)
        Predicted class, summed prior alpha, count and cost of each category.
    labels : tuple of str
        ``"pred -> true"`` or ``"pred -> n unobserved (cost c)"``.
    cell_category, cell_share : ndarray, shape (K, K)
        The category of each cell and the cell's share of the category's prior alpha
        (1 for a cell that is its own category).
    boosted : ndarray of bool, shape (M,)
        Categories sampled with the boosted parametrisation (shape below :data:`BOOST_BELOW`).

    Examples
    --------
    >>> cats = confusion_categories([[5, 0, 0], [1, 2, 0], [0, 0, 0]], np.full((3, 3), 0.5),
    ...                             1 - np.eye(3), ["a", "b", "c"])
    >>> isinstance(cats, ConfusionCategories), cats.row.tolist(), cats.cell_category.shape
    (True, [0, 0, 1, 1, 2, 1, 2], (3, 3))
    """

    row: np.ndarray
    alpha: np.ndarray
    count: np.ndarray
    cost: np.ndarray
    labels: tuple[str, ...]
    cell_category: np.ndarray
    cell_share: np.ndarray
    boosted: np.ndarray


def confusion_categories(
    counts: Any, prior_alpha: Any, cost_matrix: Any, classes: Sequence[str], *, collapse: bool = True
) -> ConfusionCategories:
    """Build the sampled categories (see the module docstring, point 3).

    Within a row, zero-count cells are grouped by their cost (a row with no data under the 0-1
    cost gets two categories: its diagonal cell and its K - 1 mistakes). Categories are ordered
    with the plainly sampled ones first and the boosted ones last.

    Examples
    --------
    >>> cats = confusion_categories([[5, 0, 0], [1, 2, 0], [0, 0, 0]], np.full((3, 3), 0.5),
    ...                             1 - np.eye(3), ["a", "b", "c"])
    >>> cats.count.tolist(), int(cats.boosted.sum())
    ([5, 0, 1, 2, 0, 0, 0], 2)
    >>> cats.labels
    ('a -> a', 'a -> 2 unobserved (cost 1)', 'b -> a', 'b -> b', 'c -> 2 unobserved (cost 1)', 'b -> c', 'c -> c')
    """
    n = np.asarray(counts)
    al = np.asarray(prior_alpha, dtype=float)
    cost = np.asarray(cost_matrix, dtype=float)
    k = n.shape[0]
    rows, alphas, cnts, costs, labels, members = [], [], [], [], [], []
    for r in range(k):
        zero = n[r] == 0
        for j in np.flatnonzero(~zero if collapse else np.ones(k, bool)):
            rows.append(r)
            alphas.append(al[r, j])
            cnts.append(int(n[r, j]))
            costs.append(cost[r, j])
            labels.append(f"{classes[r]} -> {classes[j]}")
            members.append([j])
        if not collapse:
            continue
        zj = np.flatnonzero(zero)
        for value in np.unique(cost[r, zj]):
            cells = zj[cost[r, zj] == value]
            if cells.size == 1:
                label = f"{classes[r]} -> {classes[cells[0]]}"
            else:
                label = f"{classes[r]} -> {cells.size} unobserved (cost {value:g})"
            rows.append(r)
            alphas.append(al[r, cells].sum())
            cnts.append(0)
            costs.append(value)
            labels.append(label)
            members.append(list(cells))
    alphas_arr = np.asarray(alphas)
    cnts_arr = np.asarray(cnts, dtype=np.int64)
    boosted = (cnts_arr == 0) & (alphas_arr < BOOST_BELOW)
    order = np.concatenate([np.flatnonzero(~boosted), np.flatnonzero(boosted)])
    cell_category = np.empty((k, k), dtype=np.int64)
    cell_share = np.empty((k, k))
    for new, old in enumerate(order):
        cells = members[old]
        cell_category[rows[old], cells] = new
        cell_share[rows[old], cells] = al[rows[old], cells] / alphas_arr[old]
    return ConfusionCategories(
        row=np.asarray(rows, dtype=np.int64)[order], alpha=alphas_arr[order], count=cnts_arr[order],
        cost=np.asarray(costs)[order], labels=tuple(labels[i] for i in order), cell_category=cell_category,
        cell_share=cell_share, boosted=boosted[order],
    )


def confusion_model(
    counts: Any,
    prior_alpha: Any,
    cost_matrix: Any = None,
    *,
    classes: Sequence[str] | None = None,
    collapse: bool = True,
):
    """Build the PyMC model of the confusion probabilities and the expected cost.

    Parameters
    ----------
    counts : array_like of int, shape (K, K)
        ``counts[k, j]``: labeled items predicted k with true class j
        (:func:`pbassess.stats.confusion_counts`).
    prior_alpha : array_like, shape (K, K)
        Dirichlet prior per predicted class (:func:`pbassess.stats.cost.dirichlet_prior`).
    cost_matrix : array_like, shape (K, K), optional
        ``cost[k, j]``: cost of predicting k when the truth is j (default 0-1 cost).
    classes : sequence of str, optional
        Class names for the ``predicted`` and ``true`` coordinates (default "0".."K-1").
    collapse : bool, default True
        Merge each row's zero-count cells of equal cost into one category (module docstring).

    Returns
    -------
    pymc.Model
        With Deterministics ``confusion`` (predicted, true), ``expected_cost`` (predicted) and
        ``category_prob`` (category).

    Examples
    --------
    >>> m = confusion_model([[8, 2], [1, 9]], np.ones((2, 2)), classes=["cat", "dog"])
    >>> sorted(m.named_vars_to_dims["confusion"])
    ['predicted', 'true']
    """
    import pymc as pm
    import pytensor.tensor as pt

    n = np.asarray(counts)
    if n.ndim != 2 or n.shape[0] != n.shape[1]:
        raise ConfigError(f"confusion counts must be a square (K, K) matrix, got shape {n.shape}")
    if not np.issubdtype(n.dtype, np.integer):
        if not np.all(np.isfinite(n)) or np.any(n != np.round(n)):
            raise ConfigError("confusion counts must be whole numbers")
        n = n.astype(np.int64)
    if (n < 0).any():
        raise ConfigError("confusion counts must be non-negative")
    k = n.shape[0]
    al = np.asarray(prior_alpha, dtype=float)
    if al.shape != (k, k) or not np.all(np.isfinite(al)) or (al <= 0).any():
        raise ConfigError(f"prior_alpha must be a positive, finite ({k}, {k}) array")
    cost = zero_one_cost(k) if cost_matrix is None else validate_cost_matrix(cost_matrix, k)
    names = tuple(str(c) for c in (classes if classes is not None else range(k)))
    if len(names) != k:
        raise ConfigError(f"{len(names)} class names given for {k} classes")
    cats = confusion_categories(n, al, cost, names, collapse=collapse)
    n_plain = int((~cats.boosted).sum())
    coords = {"predicted": list(names), "true": list(names), "category": list(cats.labels)}
    with pm.Model(coords=coords) as model:
        parts = []
        if n_plain:
            model.add_coord("plain_category", list(cats.labels[:n_plain]))
            parts.append(pm.Gamma("gamma", alpha=cats.alpha[:n_plain], beta=1.0, dims="plain_category"))
        if n_plain < cats.alpha.size:
            a = cats.alpha[n_plain:]
            model.add_coord("boosted_category", list(cats.labels[n_plain:]))
            h = pm.Gamma("boost_gamma", alpha=a + 1.0, beta=1.0, dims="boosted_category")
            e = pm.Exponential("boost_exponential", 1.0, dims="boosted_category")
            parts.append(pt.exp(pt.log(h) - e / a))
        g = parts[0] if len(parts) == 1 else pt.concatenate(parts)
        pm.Poisson("counts", mu=g, observed=cats.count, dims="category")
        row_total = pt.zeros(k)[cats.row].inc(g)
        theta = pm.Deterministic("category_prob", g / row_total[cats.row], dims="category")
        pm.Deterministic("expected_cost", pt.zeros(k)[cats.row].inc(theta * cats.cost), dims="predicted")
        pm.Deterministic(
            "confusion", (theta[cats.cell_category.ravel()] * cats.cell_share.ravel()).reshape((k, k)),
            dims=("predicted", "true"),
        )
    model.categories = cats  # the bookkeeping the result layer needs to read category draws
    return model


def sample_confusion_model(
    model, *, seed: Any = None, sample_kwargs: Mapping[str, Any] | None = None, var_names: Sequence[str] | None = None
):
    """Sample a confusion model with NUTS (nutpie when installed) and pbassess defaults.

    Parameters
    ----------
    model : pymc.Model
        From :func:`confusion_model`.
    seed : int or numpy.random.Generator, optional
        ``random_seed`` of :func:`pymc.sample` unless ``sample_kwargs`` sets it.
    sample_kwargs : dict, optional
        Merged over :data:`DEFAULT_SAMPLE_KWARGS` (4 chains x 1000 draws after 1000 tuning
        steps, nutpie, no progress bar) and passed to :func:`pymc.sample`; e.g.
        ``{"nuts_sampler": "pymc"}`` for PyMC's own NUTS.
    var_names : sequence of str, optional
        Variables kept in the trace (default ``["expected_cost", "category_prob"]``: the full
        ``confusion`` matrix is K * K numbers per draw, 320 MB for 4000 draws of a 100-class
        model; ask for it explicitly when needed).

    Returns
    -------
    xarray.DataTree

    Examples
    --------
    >>> m = confusion_model([[8, 2], [1, 9]], np.ones((2, 2)))
    >>> from unittest import mock
    >>> from pbassess.inference import mock_pymc_sample
    >>> with mock.patch("pymc.sample", mock_pymc_sample):  # plumbing only: no real NUTS in a doctest
    ...     idata = sample_confusion_model(m, seed=1, sample_kwargs={"draws": 50, "tune": 50, "chains": 1})
    >>> idata["posterior"]["expected_cost"].shape
    (1, 50, 2)
    """
    from pbassess.inference import sample_model

    names = list(var_names) if var_names is not None else ["expected_cost", "category_prob"]
    return sample_model(model, seed=seed, sample_kwargs=sample_kwargs, log_likelihood=False, var_names=names)
