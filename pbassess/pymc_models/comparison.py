"""PyMC model of the paired comparison of classifiers scored on the same items (Dirichlet-categorical).

M models scored on the same labeled items are not independent: their errors are correlated,
and comparing independent Beta posteriors overstates the uncertainty of a difference. The
paired model treats the **joint outcome** of each labeled item -- which of the M models got it
right -- as one categorical draw over the ``C = 2**M`` joint outcomes::

    pi ~ Dirichlet(alpha),   outcome_i ~ Categorical(pi),   alpha = pc / C in every cell

(pc = pseudocount). By the aggregation property of the Dirichlet, each model's success rate
``sum of pi over the outcomes where it is right`` is a priori ``Beta(pc/2, pc/2)`` (the project's
uniform prior) and each pair's four outcomes (both right, only a, only b, neither) are
``Dirichlet(pc/4 x 4)``; a posteriori they are ``Beta(pc/2 + k, pc/2 + n - k)`` and
``Dirichlet(pc/4 + pair counts)`` exactly. The difference of two rates is
``pi(only a right) - pi(only b right)``: the items both get right or both get wrong cancel, which is
what makes the paired difference precise.

Joint outcomes are indexed by the models' *errors* as bits, model 0 the most significant:
``index = sum_m wrong_m 2**(M - 1 - m)``. For two models the order is (both right, only A right,
only B right, both wrong).

The PyMC model is the Poisson-Gamma form of the Dirichlet-categorical, as in
:mod:`pbassess.pymc_models.confusion` (where its choice is measured): ``g_c ~ Gamma(alpha_c, 1)``,
``count_c ~ Poisson(g_c)``, ``pi = g / sum(g)``; the posterior of ``pi`` is exactly
``Dirichlet(alpha + counts)`` and the posterior of ``g`` is a product of independent Gammas, so
NUTS meets no correlations. Outcomes nobody had, with a small prior shape (below 1), are sampled
through the "boosted" variables ``g = h exp(-e / alpha)``, ``h ~ Gamma(alpha + 1, 1)``,
``e ~ Exponential(1)`` (exactly Gamma(alpha)) whose geometry stays smooth for every alpha.

Model variables: free ``gamma`` (dims ``plain_joint``) and ``boost_gamma`` / ``boost_exponential``
(dims ``boosted_joint``); Deterministics ``outcome_prob`` (``joint``), ``value`` (``group``: each
model's rate, or ``offset - rate`` for the calibration bias) and ``difference`` (``pair``:
``value[a] - value[b]``); the observed Poisson ``counts`` (``joint``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import xarray as xr

from pbassess.errors import ConfigError
from pbassess.inference.spec import Spec

__all__ = ["BOOST_BELOW", "MAX_MODELS", "PairedComparisonSpec", "joint_outcome_index", "joint_outcome_labels",
           "paired_comparison_model", "right_matrix"]

#: Gamma shapes below this (in outcomes without observations) are sampled through the boosted variables.
BOOST_BELOW = 1.0
#: Most models one paired fit compares: 2**12 = 4,096 joint outcomes.
MAX_MODELS = 12


def right_matrix(n_models: int) -> np.ndarray:
    """``right[c, m]``: whether model m is right in joint outcome c (shape ``(2**M, M)``).

    Examples
    --------
    >>> right_matrix(2).astype(int).tolist()  # both right, only A, only B, neither
    [[1, 1], [1, 0], [0, 1], [0, 0]]
    """
    m = int(n_models)
    if m < 1:
        raise ConfigError(f"a paired comparison needs models to compare, got {m}")
    if m > MAX_MODELS:
        raise ConfigError(f"a paired comparison takes at most {MAX_MODELS} models ({2**MAX_MODELS:,} joint outcomes), "
                          f"got {m}: compare fewer models at a time")
    cells = np.arange(2**m)[:, None]
    shift = m - 1 - np.arange(m)[None, :]
    return ((cells >> shift) & 1) == 0


def joint_outcome_index(success: Any) -> np.ndarray:
    """The joint outcome of each item from the models' successes (``success``: shape ``(M, N)``).

    Examples
    --------
    >>> joint_outcome_index([[1, 1, 0, 0], [1, 0, 1, 0]]).tolist()
    [0, 1, 2, 3]
    """
    s = np.asarray(success, dtype=bool)
    if s.ndim != 2:
        raise ConfigError(f"success must be one row per model, got shape {s.shape}")
    m = s.shape[0]
    right_matrix(m)  # checks the number of models
    weights = 2 ** (m - 1 - np.arange(m))
    return ((~s).astype(np.int64) * weights[:, None]).sum(axis=0)


def joint_outcome_labels(names: Sequence[str]) -> list[str]:
    """Names of the joint outcomes: ``"A right, B wrong"``, ...

    Examples
    --------
    >>> joint_outcome_labels(["A", "B"])
    ['A right, B right', 'A right, B wrong', 'A wrong, B right', 'A wrong, B wrong']
    """
    right = right_matrix(len(names))
    return [", ".join(f"{n} {'right' if r else 'wrong'}" for n, r in zip(names, row, strict=True)) for row in right]


def _check(counts: Any, alpha: Any, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    names = [str(n) for n in names]
    size = 2 ** len(names)
    right_matrix(len(names))
    n = np.asarray(counts)
    if n.shape != (size,):
        raise ConfigError(f"{len(names)} models need {size} joint-outcome counts, got shape {n.shape}")
    if not np.all(np.isfinite(n)) or np.any(n < 0) or np.any(n != np.round(n)):
        raise ConfigError("joint-outcome counts must be non-negative whole numbers")
    try:
        al = np.broadcast_to(np.asarray(alpha, dtype=float), (size,)).copy()
    except ValueError:
        raise ConfigError(f"alpha has shape {np.shape(alpha)}, expected ({size},) or a scalar") from None
    if not np.all(np.isfinite(al)) or np.any(al <= 0):
        raise ConfigError("the Dirichlet alpha must be positive and finite")
    return np.round(n).astype(np.int64), al, names


def paired_comparison_model(
    counts: Any,
    alpha: Any,
    names: Sequence[str],
    pairs: Sequence[tuple[int, int]] | None = None,
    *,
    offset: Any = None,
):
    """Build the PyMC model of the paired comparison over the joint-outcome counts.

    Parameters
    ----------
    counts : array_like of int, shape (2**M,)
        Labeled items per joint outcome (order of :func:`joint_outcome_index`).
    alpha : float or array_like, shape (2**M,)
        Dirichlet prior of the joint outcome (``pc / 2**M``: uniform Beta(pc/2, pc/2) rates).
    names : sequence of str
        The M model names (coordinate ``group``).
    pairs : sequence of (int, int), optional
        Compared pairs (default every pair i < j).
    offset : array_like, shape (M,), optional
        ``value = offset - rate`` (the calibration bias: mean confidence minus accuracy).

    Returns
    -------
    pymc.Model
        Free ``gamma`` / ``boost_gamma`` / ``boost_exponential``; Deterministics
        ``outcome_prob``, ``value`` and ``difference``; observed ``counts``.

    Examples
    --------
    >>> m = paired_comparison_model([40, 6, 2, 5], 0.5, ["A", "B"])
    >>> sorted(v.name for v in m.free_RVs), m.named_vars_to_dims["difference"]
    (['gamma'], ('pair',))
    >>> m2 = paired_comparison_model([40, 6, 0, 5], 0.5, ["A", "B"])
    >>> sorted(v.name for v in m2.free_RVs)  # the empty outcome "only B right" is boosted
    ['boost_exponential', 'boost_gamma', 'gamma']
    """
    import pymc as pm
    import pytensor.tensor as pt

    n, al, names = _check(counts, alpha, names)
    pairs = _pairs(names, pairs)
    right = right_matrix(len(names)).astype(float)
    boosted = (n == 0) & (al < BOOST_BELOW)
    plain_idx, boost_idx = np.flatnonzero(~boosted), np.flatnonzero(boosted)
    inverse = np.argsort(np.concatenate([plain_idx, boost_idx]))
    labels = joint_outcome_labels(names)
    coords = {"joint": labels, "group": names, "pair": [f"{names[i]} - {names[j]}" for i, j in pairs]}
    with pm.Model(coords=coords) as model:
        parts = []
        if plain_idx.size:
            model.add_coord("plain_joint", [labels[i] for i in plain_idx])
            parts.append(pm.Gamma("gamma", alpha=al[plain_idx], beta=1.0, dims="plain_joint"))
        if boost_idx.size:
            a = al[boost_idx]
            model.add_coord("boosted_joint", [labels[i] for i in boost_idx])
            h = pm.Gamma("boost_gamma", alpha=a + 1.0, beta=1.0, dims="boosted_joint")
            e = pm.Exponential("boost_exponential", 1.0, dims="boosted_joint")
            parts.append(pt.exp(pt.log(h) - e / a))
        g = (parts[0] if len(parts) == 1 else pt.concatenate(parts))[inverse]
        pm.Poisson("counts", mu=g, observed=n, dims="joint")
        pi = pm.Deterministic("outcome_prob", g / g.sum(), dims="joint")
        rate = pt.dot(pi, right)
        value = rate if offset is None else pt.as_tensor_variable(np.asarray(offset, dtype=float)) - rate
        value = pm.Deterministic("value", value, dims="group")
        first, second = (np.array([p[k] for p in pairs], dtype=np.int64) for k in (0, 1))
        pm.Deterministic("difference", value[first] - value[second], dims="pair")
    return model


def _pairs(names: Sequence[str], pairs: Sequence[tuple[int, int]] | None) -> list[tuple[int, int]]:
    if pairs is None:
        return [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
    out = [(int(i), int(j)) for i, j in pairs]
    if any(not (0 <= i < len(names) and 0 <= j < len(names)) or i == j for i, j in out):
        raise ConfigError(f"pairs must be two different indices below {len(names)}")
    return out


def _log_gamma_draws(shape: np.ndarray, rate: float, size: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """log of Gamma(shape, rate) draws that never underflow: log G(shape + 1) + log(U) / shape - log(rate)."""
    with np.errstate(divide="ignore"):
        return np.log(rng.gamma(shape + 1.0, size=size)) + np.log(rng.uniform(size=size)) / shape - np.log(rate)


class PairedComparisonSpec(Spec):
    """The paired comparison of M models on the same labeled items, as one Dirichlet-categorical cell.

    Each labeled item is one categorical draw of its joint outcome (which models got it right;
    module docstring) from ``pi ~ Dirichlet(alpha)``; the posterior is ``Dirichlet(alpha +
    counts)``. The model's free variables (:func:`paired_comparison_model`) are a posteriori
    independent Gammas ``g ~ Gamma(alpha + count, rate 2)`` (a Poisson count of a Gamma rate), and
    for a boosted outcome ``h = g + Exponential(1)``, ``e = alpha log(h / g)``, so exact draws of
    every free variable exist. Derived for both inferences alike: ``outcome_prob`` (``pi``),
    ``value`` per model (its rate, or ``offset - rate``) and ``difference`` per pair. The
    log-likelihood of an item is ``log pi[its outcome]``; leaving it out gives the closed-form
    predictive ``(alpha_k + n_k - 1) / (sum alpha + n - 1)``.

    Parameters
    ----------
    counts : array_like of int, shape (2**M,)
        Labeled items per joint outcome (:func:`joint_outcome_index`).
    alpha : float or array_like, shape (2**M,)
        Dirichlet prior (``pc / 2**M`` for uniform Beta(pc/2, pc/2) rates).
    names : sequence of str
        The models (dim ``group``).
    pairs : sequence of (int, int), optional
        Compared pairs (default every pair i < j; dim ``pair``, labelled ``"a - b"``).
    offset : array_like, shape (M,), optional
        ``value = offset - rate`` (calibration bias).
    observations : Observations, optional
        The labeled items: cell 0 (one region) and their joint outcome; without them the
        log-likelihood is one multinomial value.

    Examples
    --------
    >>> from pbassess.inference import fit
    >>> spec = PairedComparisonSpec([40, 6, 2, 5], 0.5, ["A", "B"])
    >>> post = fit(spec, draws=4000, seed=0).idata["posterior"]
    >>> exact = (6.5 - 2.5) / 55  # Dirichlet(0.5 + counts): only A right 6.5, only B right 2.5, total 55
    >>> bool(abs(float(post["difference"].mean()) - exact) < 0.002)  # Monte Carlo sd of the mean ~0.0003
    True
    """

    name = "compare-models"
    observed_name = "outcome"

    def __init__(self, counts: Any, alpha: Any, names: Sequence[str], pairs: Sequence[tuple[int, int]] | None = None,
                 *, offset: Any = None, observations: Any = None) -> None:
        self.counts, self.alpha, self.groups = _check(counts, alpha, names)
        self.pairs = _pairs(self.groups, pairs)
        self.offset = None if offset is None else np.asarray(offset, dtype=float).reshape(len(self.groups))
        self.observations = observations
        self.right = right_matrix(len(self.groups))
        self.labels = joint_outcome_labels(self.groups)
        self.pair_labels = [f"{self.groups[i]} - {self.groups[j]}" for i, j in self.pairs]
        self.boosted = (self.counts == 0) & (self.alpha < BOOST_BELOW)
        self.plain_idx, self.boost_idx = np.flatnonzero(~self.boosted), np.flatnonzero(self.boosted)
        self.coords = {"joint": self.labels, "plain_joint": [self.labels[i] for i in self.plain_idx],
                       "boosted_joint": [self.labels[i] for i in self.boost_idx], "group": self.groups,
                       "pair": self.pair_labels, "region": ["all"]}
        self.reported = {"value": ("group",), "difference": ("pair",)}
        self._model = None

    # -- draws -----------------------------------------------------------------------------
    def _free_from_log_g(self, log_g: np.ndarray, rng: np.random.Generator) -> dict[str, np.ndarray]:
        out = {}
        if self.plain_idx.size:
            out["gamma"] = np.exp(log_g[:, self.plain_idx])
        if self.boost_idx.size:
            a = self.alpha[self.boost_idx]
            lg = log_g[:, self.boost_idx]
            # h = g + Exponential(1), e = a log(h / g), in logs (g may be far below 1e-300)
            log_h = np.logaddexp(lg, np.log(rng.exponential(size=lg.shape)))
            out["boost_gamma"] = np.exp(log_h)
            out["boost_exponential"] = a * (log_h - lg)
        return out

    def conjugate_draws(self, n_draws: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        shape = self.alpha + self.counts
        return self._free_from_log_g(_log_gamma_draws(shape, 2.0, (n_draws, shape.size), rng), rng)

    def prior_draws(self, n_draws: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return self._free_from_log_g(_log_gamma_draws(self.alpha, 1.0, (n_draws, self.alpha.size), rng), rng)

    def model(self):
        if self._model is None:
            self._model = paired_comparison_model(self.counts, self.alpha, self.groups, self.pairs, offset=self.offset)
        return self._model

    def _log_g(self, draws) -> np.ndarray:
        lead = np.shape(draws["gamma" if self.plain_idx.size else "boost_gamma"])[:-1]
        out = np.empty((*lead, self.alpha.size))
        with np.errstate(divide="ignore"):
            if self.plain_idx.size:
                out[..., self.plain_idx] = np.log(np.asarray(draws["gamma"], dtype=float))
            if self.boost_idx.size:
                a = self.alpha[self.boost_idx]
                out[..., self.boost_idx] = (np.log(np.asarray(draws["boost_gamma"], dtype=float))
                                            - np.asarray(draws["boost_exponential"], dtype=float) / a)
        return out

    def complete(self, draws):
        log_g = self._log_g(draws)
        g = np.exp(log_g - log_g.max(axis=-1, keepdims=True))  # pi = g / sum(g), normalised in logs
        pi = g / g.sum(axis=-1, keepdims=True)
        rate = pi @ self.right.astype(float)
        value = rate if self.offset is None else self.offset - rate
        out = {}
        if self.plain_idx.size:
            out["gamma"] = (("plain_joint",), np.asarray(draws["gamma"], dtype=float))
        if self.boost_idx.size:
            out["boost_gamma"] = (("boosted_joint",), np.asarray(draws["boost_gamma"], dtype=float))
            out["boost_exponential"] = (("boosted_joint",), np.asarray(draws["boost_exponential"], dtype=float))
        out["outcome_prob"] = (("joint",), pi)
        out["value"] = (("group",), value)
        out["difference"] = (("pair",), np.stack([value[..., i] - value[..., j] for i, j in self.pairs], axis=-1))
        return out

    # -- likelihood, prior, LOO ------------------------------------------------------------
    def log_likelihood(self, draws, per_item):
        pi = np.asarray(draws["outcome_prob"], dtype=float)
        with np.errstate(divide="ignore"):
            if per_item:
                return ("item",), np.log(pi[..., self.observations.outcome]), {}
            from scipy import special

            from pbassess.inference.trees import multinomial_loglik_constant

            values = special.xlogy(self.counts, pi).sum(axis=-1) + multinomial_loglik_constant(self.counts)
        if self.counts.sum() == 0:
            return ("region",), values[..., None][..., :0], {"region": []}
        return ("region",), values[..., None], {"region": ["all"]}

    def log_prior(self, draws):
        from scipy import stats

        out = {}
        if self.plain_idx.size:
            out["gamma"] = (("plain_joint",), stats.gamma.logpdf(draws["gamma"], self.alpha[self.plain_idx]))
        if self.boost_idx.size:
            a = self.alpha[self.boost_idx]
            out["boost_gamma"] = (("boosted_joint",), stats.gamma.logpdf(draws["boost_gamma"], a + 1.0))
            out["boost_exponential"] = (("boosted_joint",), -np.asarray(draws["boost_exponential"], dtype=float))
        return out

    def exact_loo_pointwise(self):
        if self.observations is None:
            return None
        k = self.observations.outcome
        a = (self.alpha + self.counts)[k]
        total = float(self.alpha.sum() + self.counts.sum())
        return np.log(a - 1.0) - np.log(total - 1.0), np.log(a) - np.log(total)

    # -- data groups -----------------------------------------------------------------------
    def observed_data(self) -> xr.Dataset:
        if self.observations is not None:
            obs = self.observations
            return xr.Dataset({self.observed_name: ("item", obs.outcome)}, coords={"item": obs.item})
        return xr.Dataset({"joint_counts": ("joint", self.counts)}, coords={"joint": self.labels})

    def constant_data(self) -> xr.Dataset:
        data: dict[str, Any] = {
            "joint_counts": ("joint", self.counts), "prior_alpha": ("joint", self.alpha),
            "right": (("joint", "group"), self.right.astype(np.int8)),
            "pair_first": ("pair", np.array([i for i, _ in self.pairs], dtype=np.int64)),
            "pair_second": ("pair", np.array([j for _, j in self.pairs], dtype=np.int64)),
        }
        if self.offset is not None:
            data["offset"] = ("group", self.offset)
        return xr.Dataset(data, coords={"joint": self.labels, "group": self.groups, "pair": self.pair_labels})

    def cell_n(self) -> np.ndarray:
        return np.array([int(self.counts.sum())])

    @classmethod
    def from_tree(cls, tree: Any) -> PairedComparisonSpec | None:
        """The spec of a fit rebuilt from its DataTree (``constant_data`` and ``observed_data``), or None.

        Examples
        --------
        >>> from pbassess.inference import fit
        >>> tree = fit(PairedComparisonSpec([3, 1, 0, 2], 0.5, ["A", "B"]), draws=8, seed=0).idata
        >>> spec = PairedComparisonSpec.from_tree(tree)
        >>> spec.counts.tolist(), spec.groups, spec.pairs
        ([3, 1, 0, 2], ['A', 'B'], [(0, 1)])
        """
        from pbassess.inference import Observations

        if "constant_data" not in tree.children:
            return None
        const = tree["constant_data"].to_dataset()
        if not {"joint_counts", "prior_alpha", "pair_first", "pair_second"} <= set(const.data_vars):
            return None
        observations = None
        observed = tree["observed_data"].to_dataset() if "observed_data" in tree.children else None
        if observed is not None and cls.observed_name in observed and "item" in observed[cls.observed_name].dims:
            outcome = observed[cls.observed_name].to_numpy().astype(np.int64)
            observations = Observations(np.zeros(outcome.size, dtype=np.int64), outcome, observed["item"].to_numpy())
        pairs = list(zip(const["pair_first"].to_numpy().tolist(), const["pair_second"].to_numpy().tolist(),
                         strict=True))
        return cls(const["joint_counts"].to_numpy(), const["prior_alpha"].to_numpy(),
                   [str(g) for g in const["group"].to_numpy()], pairs,
                   offset=const["offset"].to_numpy() if "offset" in const else None, observations=observations)
