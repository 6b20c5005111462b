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
from pbassess.inference.spec import Spec
from pbassess.stats.cost import validate_cost_matrix, zero_one_cost

__all__ = ["DEFAULT_SAMPLE_KWARGS", "ConfusionCategories", "ConfusionSpec", "confusion_categories", "confusion_model",
           "sample_confusion_model"]

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


# ---------------------------------------------------------------------------- the spec
def _log_gamma_draws(shape: np.ndarray, rate: float, size: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """log of Gamma(shape, rate) draws that never underflow: log G(shape + 1) + log(U) / shape - log(rate)."""
    with np.errstate(divide="ignore"):
        return (np.log(rng.gamma(shape + 1.0, size=size)) + np.log(rng.uniform(size=size)) / shape
                - np.log(rate))


class ConfusionSpec(Spec):
    """Dirichlet-categorical confusion per predicted class, in the Poisson-Gamma form of :func:`confusion_model`.

    Each labeled item predicted k is a categorical draw of its true class from
    ``theta_k ~ Dirichlet(alpha_k)``. The model's free variables are the category Gammas
    (``gamma``, and ``boost_gamma`` / ``boost_exponential`` for small shapes; module docstring):
    a posteriori independent ``g ~ Gamma(alpha + count, rate 2)`` (a Poisson count of a Gamma
    rate), and for a boosted category ``h = g + Exponential(1)``, ``e = alpha log(h / g)`` (the
    beta-gamma algebra behind the boost), so exact conjugate draws of every free variable exist.
    ``category_prob`` and ``expected_cost`` are derived from them for both inferences.

    Examples
    --------
    >>> from pbassess.inference import fit
    >>> spec = ConfusionSpec([[8, 2], [1, 9]], np.ones((2, 2)), 1 - np.eye(2), ["cat", "dog"])
    >>> post = fit(spec, draws=4000, seed=0).idata["posterior"]
    >>> post["expected_cost"].mean(("chain", "draw")).round(2).values.tolist()  # (2 + 1) / 12, (1 + 1) / 12
    [0.25, 0.17]
    """

    name = "cost"
    observed_name = "true_class"
    #: The K x K ``confusion`` Deterministic is not kept from NUTS (K^2 numbers a draw; its mean is exact anyway).
    nuts_var_names = ("expected_cost", "category_prob")

    def __init__(self, counts: Any, alpha: Any, cost: Any, classes: Sequence[str], *, observations: Any = None):
        self.counts = np.asarray(counts, dtype=np.int64)
        self.alpha = np.asarray(alpha, dtype=float)
        self.cost = np.asarray(cost, dtype=float)
        self.classes = [str(c) for c in classes]
        self.cats = confusion_categories(self.counts, self.alpha, self.cost, self.classes)
        k = len(self.classes)
        self.n_plain = int((~self.cats.boosted).sum())
        self.coords = {"predicted": self.classes, "true": self.classes, "category": list(self.cats.labels),
                       "plain_category": list(self.cats.labels[:self.n_plain]),
                       "boosted_category": list(self.cats.labels[self.n_plain:])}
        self.reported = {"expected_cost": ("predicted",), "category_prob": ("category",)}
        self.observations = observations
        from scipy import sparse

        self._member = sparse.csr_matrix((np.ones(self.cats.row.size), (np.arange(self.cats.row.size), self.cats.row)),
                                         shape=(self.cats.row.size, k))
        self._model = None

    def _free_from_log_g(self, log_g: np.ndarray, rng: np.random.Generator) -> dict[str, np.ndarray]:
        out = {}
        if self.n_plain:
            out["gamma"] = np.exp(log_g[:, :self.n_plain])
        if self.n_plain < self.cats.alpha.size:
            a = self.cats.alpha[self.n_plain:]
            lg = log_g[:, self.n_plain:]
            # h = g + Exponential(1), e = a log(h / g), computed in logs (g may be far below 1e-300)
            y = rng.exponential(size=lg.shape)
            log_h = np.logaddexp(lg, np.log(y))
            out["boost_gamma"] = np.exp(log_h)
            out["boost_exponential"] = a * (log_h - lg)
        return out

    def conjugate_draws(self, n_draws: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        shape = self.cats.alpha + self.cats.count
        return self._free_from_log_g(_log_gamma_draws(shape, 2.0, (n_draws, shape.size), rng), rng)

    def prior_draws(self, n_draws: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        shape = self.cats.alpha
        return self._free_from_log_g(_log_gamma_draws(shape, 1.0, (n_draws, shape.size), rng), rng)

    def model(self):
        if self._model is None:
            self._model = confusion_model(self.counts, self.alpha, self.cost, classes=self.classes)
        return self._model

    def _log_g(self, draws) -> np.ndarray:
        parts = []
        if self.n_plain:
            # a Gamma draw that underflowed to 0 (its category's probability is below 1e-308 of the row's) is
            # log 0 = -inf, which the normalisation below maps back to probability 0: exact, not a fault
            with np.errstate(divide="ignore"):
                parts.append(np.log(np.asarray(draws["gamma"], dtype=float)))
        if self.n_plain < self.cats.alpha.size:
            a = self.cats.alpha[self.n_plain:]
            parts.append(np.log(np.asarray(draws["boost_gamma"], dtype=float))
                         - np.asarray(draws["boost_exponential"], dtype=float) / a)
        return np.concatenate(parts, axis=-1)

    def complete(self, draws):
        log_g = self._log_g(draws)
        lead = log_g.shape[:-1]
        flat = log_g.reshape(-1, log_g.shape[-1])
        # normalise each predicted class's categories in logs: theta = g / sum of the row's g
        shift = flat.max(axis=1, keepdims=True)
        g = np.exp(flat - shift)
        row_total = np.asarray(g @ self._member)
        theta = g / row_total[:, self.cats.row]
        expected = np.asarray((theta * self.cats.cost) @ self._member)
        out = {}
        if self.n_plain:
            out["gamma"] = (("plain_category",), np.asarray(draws["gamma"], dtype=float))
        if self.n_plain < self.cats.alpha.size:
            out["boost_gamma"] = (("boosted_category",), np.asarray(draws["boost_gamma"], dtype=float))
            out["boost_exponential"] = (("boosted_category",), np.asarray(draws["boost_exponential"], dtype=float))
        out["category_prob"] = (("category",), theta.reshape(*lead, -1))
        out["expected_cost"] = (("predicted",), expected.reshape(*lead, -1))
        return out

    def log_likelihood(self, draws, per_item):
        theta = np.asarray(draws["category_prob"], dtype=float)
        if per_item:
            obs = self.observations
            category = self.cats.cell_category[obs.cell, obs.outcome]
            share = self.cats.cell_share[obs.cell, obs.outcome]
            return ("item",), np.log(theta[..., category]) + np.log(share), {}
        from scipy import special

        from pbassess.inference.trees import multinomial_loglik_constant

        rows = self.counts.sum(axis=1)
        observed = np.flatnonzero(rows > 0)
        lead = theta.shape[:-1]
        per_row = np.asarray(special.xlogy(self.cats.count, theta.reshape(-1, theta.shape[-1])) @ self._member)
        values = (per_row + multinomial_loglik_constant(self.counts)).reshape(*lead, -1)[..., observed]
        return ("predicted",), values, {"predicted": [self.classes[i] for i in observed]}

    def log_prior(self, draws):
        from scipy import stats

        out = {}
        if self.n_plain:
            out["gamma"] = (("plain_category",), stats.gamma.logpdf(draws["gamma"], self.cats.alpha[:self.n_plain]))
        if self.n_plain < self.cats.alpha.size:
            a = self.cats.alpha[self.n_plain:]
            out["boost_gamma"] = (("boosted_category",), stats.gamma.logpdf(draws["boost_gamma"], a + 1.0))
            out["boost_exponential"] = (("boosted_category",), -np.asarray(draws["boost_exponential"], dtype=float))
        return out

    def exact_loo_pointwise(self):
        if self.observations is None:
            return None
        obs = self.observations
        a_cell = (self.alpha + self.counts)[obs.cell, obs.outcome]
        a_row = (self.alpha.sum(axis=1) + self.counts.sum(axis=1))[obs.cell]
        return np.log(a_cell - 1.0) - np.log(a_row - 1.0), np.log(a_cell) - np.log(a_row)

    @classmethod
    def from_tree(cls, tree: Any) -> ConfusionSpec | None:
        """The spec of a fit rebuilt from its DataTree, or None.

        Examples
        --------
        >>> from pbassess.inference import fit
        >>> tree = fit(ConfusionSpec([[3, 1], [0, 2]], np.ones((2, 2)), 1 - np.eye(2), ["a", "b"]), draws=8, seed=0).idata
        >>> ConfusionSpec.from_tree(tree).counts.tolist()
        [[3, 1], [0, 2]]
        """
        from pbassess.inference import Observations

        if "constant_data" not in tree.children:
            return None
        const = tree["constant_data"].to_dataset()
        if not {"confusion", "prior_alpha", "cost"} <= set(const.data_vars):
            return None
        classes = [str(c) for c in const["predicted"].to_numpy()]
        observations = None
        observed = tree["observed_data"].to_dataset() if "observed_data" in tree.children else None
        if observed is not None and cls.observed_name in observed and "item_predicted" in const:
            observations = Observations(const["item_predicted"].to_numpy().astype(np.int64),
                                        observed[cls.observed_name].to_numpy().astype(np.int64),
                                        observed["item"].to_numpy())
        return cls(const["confusion"].to_numpy(), const["prior_alpha"].to_numpy(), const["cost"].to_numpy(), classes,
                   observations=observations)

    def observed_data(self):
        import xarray as xr

        if self.observations is not None:
            obs = self.observations
            return xr.Dataset({self.observed_name: ("item", obs.outcome)}, coords={"item": obs.item})
        return xr.Dataset({"confusion": (("predicted", "true"), self.counts)},
                          coords={"predicted": self.classes, "true": self.classes})

    def constant_data(self):
        import xarray as xr

        cell = ("predicted", "true")
        data = {"confusion": (cell, self.counts), "prior_alpha": (cell, self.alpha), "cost": (cell, self.cost),
                "n": ("predicted", self.counts.sum(axis=1))}
        coords: dict[str, Any] = {"predicted": self.classes, "true": self.classes}
        if self.observations is not None:
            data["item_predicted"] = ("item", self.observations.cell)
            coords["item"] = self.observations.item
        return xr.Dataset(data, coords=coords)

    def cell_n(self) -> np.ndarray:
        return self.counts.sum(axis=1)
