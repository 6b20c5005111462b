"""Simulation-based calibration (SBC) of a :class:`~pbassess.inference.spec.Spec`'s inference.

Talts, Betancourt, Simpson, Vehtari and Gelman (2018), "Validating Bayesian inference algorithms
with simulation-based calibration", arXiv:1804.06788. If ``theta ~ prior``, ``y ~ p(y | theta)``
and ``theta_1..theta_L`` are draws of the posterior ``p(theta | y)`` computed by the inference
under test, the rank of ``theta`` among them (``#{l: theta_l < theta}``) is uniform on
``0..L`` for every scalar function of ``theta``. A posterior that is too narrow, too wide or
shifted -- a wrong conjugate update, a sampler that does not converge, a model whose PyMC
version and conjugate version disagree -- makes the ranks non-uniform.

:func:`simulation_based_calibration` runs the loop on PyMC: one
:func:`pymc.sample_prior_predictive` call on the spec's :meth:`~pbassess.inference.spec.Spec.model`
draws ``(theta, y)`` for every simulation, a spec is rebuilt on each simulated ``y`` by a
caller-given factory (this layer does not import the models above it), and
:func:`pbassess.inference.fit` refits it by the inference under test (exact conjugate draws or
NUTS). Uniformity is tested per scalar component by Pearson's chi-square on ranks binned into
equal bins (the rank count ``L + 1`` is a multiple of the bin count, so every bin has the same
probability), and per model by Bonferroni over the components.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pbassess.counting.core import cell_counts
from pbassess.errors import ConfigError
from pbassess.inference.spec import Spec

__all__ = ["SBCResult", "rank_uniformity_pvalue", "simulation_based_calibration"]


def rank_uniformity_pvalue(ranks: Any, n_ranks: int, n_bins: int) -> float:
    """Pearson chi-square p-value that ``ranks`` (integers in ``0..n_ranks - 1``) are uniform.

    The ranks are put into ``n_bins`` equal bins (``n_ranks`` must be a multiple of ``n_bins``,
    so each bin has probability ``1 / n_bins`` under uniformity); the statistic has
    ``n_bins - 1`` degrees of freedom (its chi-square approximation needs about 5 expected
    counts per bin: ``len(ranks) / n_bins >= 5``).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> bool(rank_uniformity_pvalue(rng.integers(0, 100, 500), 100, 10) > 0.01)
    True
    >>> float(rank_uniformity_pvalue(np.zeros(50, int), 100, 10)) < 1e-20  # all ranks in one bin
    True
    """
    from scipy import stats

    ranks = np.asarray(ranks, dtype=np.int64).ravel()
    if n_ranks % n_bins:
        raise ConfigError(f"{n_ranks} rank values do not split into {n_bins} equal bins")
    counts = cell_counts(ranks // (n_ranks // n_bins), n_bins)
    expected = ranks.size / n_bins
    stat = float(((counts - expected) ** 2 / expected).sum())
    return float(stats.chi2.sf(stat, n_bins - 1))


@dataclass
class SBCResult:
    """Ranks of the prior draws among their posterior draws, and their uniformity tests.

    Attributes
    ----------
    ranks : dict of str to numpy.ndarray
        Per variable, shape ``(n_simulations, *variable_shape)``, integers in ``0..n_ranks - 1``.
    n_ranks : int
        Number of possible rank values (posterior draws ranked against + 1).
    n_bins : int
        Bins of the chi-square test.
    p_values : dict of str to numpy.ndarray
        Per variable, one chi-square p-value per scalar component (the variable's shape).
    inference : str
        The inference under test.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> res = SBCResult(ranks={"theta": rng.integers(0, 100, (200, 2))}, n_ranks=100, n_bins=10,
    ...                 p_values={"theta": np.array([0.2, 0.03])}, inference="conjugate")
    >>> res.n_simulations, res.n_tests, res.p_value, res.passed(0.01)  # Bonferroni: 2 x 0.03
    (200, 2, 0.06, True)
    >>> res.histogram("theta").shape, int(res.histogram("theta").sum())
    ((2, 10), 400)
    """

    ranks: dict[str, np.ndarray]
    n_ranks: int
    n_bins: int
    p_values: dict[str, np.ndarray]
    inference: str
    diagnostics: list[dict[str, Any]] = field(default_factory=list, repr=False)

    @property
    def n_simulations(self) -> int:
        return int(next(iter(self.ranks.values())).shape[0])

    @property
    def n_tests(self) -> int:
        """Scalar components tested (the Bonferroni factor of :attr:`p_value`)."""
        return int(sum(np.size(p) for p in self.p_values.values()))

    @property
    def p_value(self) -> float:
        """The model's p-value: Bonferroni over every scalar component, ``min(1, n_tests * min p)``."""
        low = min(float(np.min(p)) for p in self.p_values.values())
        return float(min(1.0, self.n_tests * low))

    def variable_p_value(self, name: str) -> float:
        """One variable's p-value, Bonferroni over its components."""
        p = np.asarray(self.p_values[name])
        return float(min(1.0, p.size * float(p.min())))

    def passed(self, alpha: float = 0.01) -> bool:
        """Whether the model's rank-uniformity p-value is at least ``alpha``."""
        return self.p_value >= alpha

    def histogram(self, name: str) -> np.ndarray:
        """Binned rank counts, shape ``(*variable_shape, n_bins)``."""
        r = np.asarray(self.ranks[name]) // (self.n_ranks // self.n_bins)
        flat = r.reshape(r.shape[0], -1)
        return cell_counts(flat.T, self.n_bins).reshape(*r.shape[1:], self.n_bins)

    def ecdf_difference(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """``(u, ECDF(u) - u)`` of the fractional ranks ``(rank + 1) / n_ranks`` per component.

        ``u`` is the grid ``1/n_ranks .. 1``; the second array has shape ``(*variable_shape, n_ranks)``.
        """
        r = np.asarray(self.ranks[name])
        flat = r.reshape(r.shape[0], -1)
        u = np.arange(1, self.n_ranks + 1) / self.n_ranks
        ecdf = np.stack([np.searchsorted(np.sort(flat[:, j]), np.arange(self.n_ranks), side="right") / flat.shape[0]
                         for j in range(flat.shape[1])])
        return u, (ecdf - u).reshape(*r.shape[1:], self.n_ranks)


def _ranks(true: np.ndarray, post: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``#{l: post_l < true}`` plus a uniform share of the ties, per component (post: (L, ...))."""
    less = (post < true).sum(axis=0)
    ties = (post == true).sum(axis=0)
    return less + rng.integers(0, ties + 1)


def _simulate(template: Spec, model: Any, var_names: list[str], n_simulations: int, rng: np.random.Generator,
              simulator: Callable | None) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """True values of ``var_names`` and data sets, each with a leading simulation axis."""
    import pymc as pm

    if simulator is not None:
        truth, data = simulator(n_simulations, rng)
        return {v: np.asarray(truth[v]) for v in var_names}, {k: np.asarray(v) for k, v in data.items()}
    observed = [rv.name for rv in model.observed_RVs]
    # every free variable and deterministic: a reported quantity the model does not hold (a
    # difference of groups, say) is derived from them by the spec's own ``complete``
    names = list(dict.fromkeys([v.name for v in model.free_RVs] + [v.name for v in model.deterministics]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prior = pm.sample_prior_predictive(draws=n_simulations, model=model, var_names=names + observed,
                                           random_seed=int(rng.integers(2**31 - 1)))
    raw = {v: prior["prior"][v].to_numpy() for v in names}
    derived = [v for v in var_names if v not in raw]
    if derived:
        completed = template.complete(raw)
        missing = [v for v in derived if v not in completed]
        if missing:
            raise ConfigError(f"variables {missing} are neither in the model of {template.name} nor derived")
        raw.update({v: np.asarray(completed[v][1]) for v in derived})
    truth = {v: raw[v][0] for v in var_names}
    data = {v: prior["prior_predictive"][v].to_numpy()[0] for v in observed}
    return truth, data


def simulation_based_calibration(
    spec_factory: Callable[[Mapping[str, np.ndarray] | None], Spec],
    n_simulations: int,
    *,
    inference: str = "conjugate",
    var_names: Sequence[str] | None = None,
    n_ranks: int = 100,
    n_bins: int = 10,
    draws: int | None = None,
    seed: Any = None,
    sample_kwargs: Mapping[str, Any] | None = None,
    fit_fn: Callable[..., Any] | None = None,
    simulator: Callable[[int, np.random.Generator], tuple[dict[str, np.ndarray], dict[str, np.ndarray]]] | None = None,
    progress: Callable[[int], None] | None = None,
) -> SBCResult:
    """Simulation-based calibration of a spec's posterior (Talts et al. 2018).

    Draws ``n_simulations`` parameter sets and data sets from the prior predictive of
    ``spec_factory(None).model()`` (one :func:`pymc.sample_prior_predictive` call), refits the
    spec rebuilt on each data set by :func:`pbassess.inference.fit` with ``inference``, ranks
    each prior draw among ``n_ranks - 1`` posterior draws (evenly thinned from all chains), and
    tests the ranks of every scalar component for uniformity (:func:`rank_uniformity_pvalue`).

    Parameters
    ----------
    spec_factory : callable
        ``spec_factory(None)`` is the template spec (its model gives the prior predictive);
        ``spec_factory({observed_name: values})`` is the same spec on simulated data (the
        values of each observed variable of the model, in the model's shape).
    n_simulations : int
        Prior draws (and refits).
    inference : {"conjugate", "nuts"}
        The inference under test.
    var_names : sequence of str, optional
        Variables to rank; default the spec's reported variables that the model holds.
    n_ranks : int
        Possible rank values: each prior draw is ranked among ``n_ranks - 1`` posterior draws.
        A multiple of ``n_bins``.
    n_bins : int
        Bins of the chi-square test (keep ``n_simulations / n_bins >= 5``).
    draws : int, optional
        Posterior draws per chain of each refit (default: enough for ``n_ranks - 1`` draws over
        4 chains, at least 250 per chain for NUTS so the ranked draws are thinned).
    seed : int or numpy.random.Generator, optional
        Every random draw (prior predictive, refits, tie-breaking) derives from it.
    sample_kwargs : dict, optional
        :func:`pymc.sample` options for NUTS refits.
    fit_fn : callable, optional
        ``fit_fn(spec, inference=, draws=, seed=, sample_kwargs=)`` returning an object with
        ``.idata``. Default: for NUTS :func:`pbassess.inference.fit`; for the conjugate
        inference the spec's own ``complete(conjugate_draws(...))``, which is what ``fit``
        stores as the posterior, without the DataTree around it (pass
        ``fit_fn=pbassess.inference.fit`` to run the whole fit).
    simulator : callable, optional
        ``simulator(n_simulations, rng) -> (truth, data)``, each a dict of arrays with a leading
        simulation axis, for a model whose likelihood PyMC cannot simulate (a ``pm.Potential``);
        default :func:`pymc.sample_prior_predictive` on the template's model.
    progress : callable, optional
        Called with the index of each finished simulation.

    Returns
    -------
    SBCResult
        Ranks per variable, p-values per component, and the model's Bonferroni p-value.

    Examples
    --------
    A Beta(2, 2) accuracy in two cells of 30 labels, refit by its exact conjugate posterior:

    >>> from pbassess.pymc_models.accuracy import BetaBernoulliSpec
    >>> def factory(observed):
    ...     k = [15, 15] if observed is None else observed["correct"]
    ...     return BetaBernoulliSpec(n=[30, 30], correct=k, alpha=2.0, beta=2.0)
    >>> res = simulation_based_calibration(factory, 100, seed=0)
    >>> res.ranks["accuracy"].shape, res.n_ranks
    ((100, 2), 100)
    >>> res.passed(0.01)  # exact posterior: fails only with probability <= 0.01
    True
    """
    from pbassess.inference.fit import CHAINS
    from pbassess.inference.fit import fit as default_fit
    from pbassess.inference.sampling import resolve_inference
    from pbassess.stats import as_generator

    inference = resolve_inference(inference)
    if n_simulations < 1:
        raise ConfigError(f"n_simulations must be at least 1, got {n_simulations}")
    if n_ranks % n_bins:
        raise ConfigError(f"n_ranks ({n_ranks}) must be a multiple of n_bins ({n_bins})")
    fast = fit_fn is None and inference == "conjugate"
    fit_fn = fit_fn or default_fit
    rng = as_generator(seed)
    template = spec_factory(None)
    model = template.model()
    if var_names is None:
        var_names = list(template.reported)
    var_names = list(var_names)
    if not var_names:
        raise ConfigError(f"no variables to rank in {template.name}")
    n_post = n_ranks - 1
    if draws is None:
        draws = -(-n_post // CHAINS) if inference == "conjugate" else max(250, -(-n_post // CHAINS))
    if draws * CHAINS < n_post:
        raise ConfigError(f"{draws} draws x {CHAINS} chains are fewer than the {n_post} ranked draws")
    truth, data = _simulate(template, model, var_names, n_simulations, rng, simulator)
    observed = list(data)
    ranks = {v: np.empty(truth[v].shape, dtype=np.int64) for v in var_names}
    diags: list[dict[str, Any]] = []
    for i in range(n_simulations):
        spec = spec_factory({v: data[v][i] for v in observed})
        if fast:
            # exactly what fit() stores as the posterior, without building the DataTree around it
            primary = spec.conjugate_draws(n_post, rng)
            completed = spec.complete({k: np.asarray(a)[None] for k, a in primary.items()})
            post = {v: np.asarray(completed[v][1]) for v in var_names}
        else:
            fitted = fit_fn(spec, inference=inference, draws=draws, seed=int(rng.integers(2**31 - 1)),
                            sample_kwargs=sample_kwargs)
            post = {v: fitted.idata["posterior"][v].to_numpy() for v in var_names}
            if getattr(fitted, "diagnostics", None):
                diags.append(fitted.diagnostics)
        for v in var_names:
            arr = post[v]
            flat = arr.reshape(-1, *arr.shape[2:])
            keep = np.linspace(0, flat.shape[0] - 1, n_post).round().astype(np.int64)
            ranks[v][i] = _ranks(truth[v][i], flat[keep], rng)
        if progress is not None:
            progress(i)
    p_values = {}
    for v in var_names:
        flat = ranks[v].reshape(n_simulations, -1)
        p = np.array([rank_uniformity_pvalue(flat[:, j], n_ranks, n_bins) for j in range(flat.shape[1])])
        p_values[v] = p.reshape(ranks[v].shape[1:])
    return SBCResult(ranks=ranks, n_ranks=n_ranks, n_bins=n_bins, p_values=p_values, inference=inference,
                     diagnostics=diags)
