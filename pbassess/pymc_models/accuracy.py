"""PyMC model of per-region accuracy over sufficient counts (Beta-binomial), and the sampler call.

Layer 3 of pbassess: the models see only counts (never items), so their cost does not grow
with the pool. Each model mirrors a conjugate posterior of :mod:`pbassess.stats`, which the
tests use to check the sampler; the models exist so that users can extend them (hierarchies,
shared effects) and so that every conjugate answer has an MCMC cross-check.

Beta accuracies are sampled on an ``asinh(logit(theta))`` scale (:func:`beta_variable`): the same
Beta prior and Binomial likelihood, written in a coordinate where NUTS works for every prior
pbassess uses. Plain ``pm.Beta`` samples ``logit(theta)``, whose density has an exponential tail
of rate ``beta`` (or ``alpha``); informed priors ``Beta(pc * s, pc * (1 - s))`` with ``s`` near 1 give
rates of 0.002-0.05, so theta rounds to exactly 1.0 and the log-density becomes NaN (on
CIFAR-100 classwise calibration: 2,534 divergences and R-hat 1.02 in 4 x 1000 draws); the
numerically stable logit density then mixes even worse (min ESS 7). The extra ``asinh``
turns those exponential tails into double-exponential ones (0 divergences, min ESS > 2,000 on
the same model).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from pbassess.errors import ConfigError
from pbassess.inference.spec import Spec

__all__ = ["DEFAULT_SAMPLE_KWARGS", "BetaBernoulliSpec", "GroupComparisonSpec", "clipped_logit", "asinh_logit_beta_log_density",
           "beta_binomial_model",
           "beta_log_density", "beta_variable", "sample_posterior"]

#: Defaults of :func:`sample_posterior` (``pm.sample``): 4 chains x 1000 draws after 1000 tuning steps
#: (the one copy lives in :mod:`pbassess.inference`).
from pbassess.inference.sampling import DEFAULT_SAMPLE_KWARGS  # noqa: E402


def check_counts(n: Any, correct: Any, what: str = "region") -> tuple[np.ndarray, np.ndarray]:
    """Validate trial/success counts (same shape, integers, ``0 <= correct <= n``)."""
    n_arr = np.asarray(n)
    k_arr = np.asarray(correct)
    if n_arr.shape != k_arr.shape:
        raise ConfigError(f"counts of items {n_arr.shape} and of correct items {k_arr.shape} differ in shape")
    if (n_arr < 0).any() or (k_arr < 0).any() or (k_arr > n_arr).any():
        raise ConfigError(f"each {what} needs 0 <= correct <= n")
    if not (np.allclose(n_arr, np.round(n_arr)) and np.allclose(k_arr, np.round(k_arr))):
        raise ConfigError(f"the counts of each {what} must be whole numbers")
    return np.round(n_arr).astype(np.int64), np.round(k_arr).astype(np.int64)


def check_beta_params(alpha: Any, beta: Any, shape: tuple[int, ...], what: str = "prior") -> tuple[np.ndarray, np.ndarray]:
    """Broadcast Beta parameters to ``shape`` and check they are positive and finite."""
    try:
        a = np.broadcast_to(np.asarray(alpha, dtype=float), shape).copy()
        b = np.broadcast_to(np.asarray(beta, dtype=float), shape).copy()
    except (TypeError, ValueError):
        raise ConfigError(
            f"{what} parameters have shapes {np.shape(alpha)} and {np.shape(beta)}, expected {shape}"
        ) from None
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))) or (a <= 0).any() or (b <= 0).any():
        raise ConfigError(f"{what} Beta parameters must be positive and finite")
    return a, b


def _asinh_logit_beta_logp(z, alpha, beta):
    """Log density of z = asinh(logit(theta)) for theta ~ Beta(alpha, beta), computed stably."""
    import pytensor.tensor as pt

    y = pt.sinh(z)
    abs_z = pt.abs(z)
    log_cosh = abs_z + pt.softplus(-2.0 * abs_z) - np.log(2.0)
    log_beta_fn = pt.gammaln(alpha) + pt.gammaln(beta) - pt.gammaln(alpha + beta)
    # log theta = -softplus(-y), log(1 - theta) = -softplus(y); theta(1 - theta) is the logit Jacobian.
    return -alpha * pt.softplus(-y) - beta * pt.softplus(y) - log_beta_fn + log_cosh


def _asinh_logit_beta_random(alpha, beta, rng=None, size=None):
    gen = rng if rng is not None else np.random.default_rng()
    with np.errstate(divide="ignore"):
        logit = np.log(gen.gamma(alpha, size=size)) - np.log(gen.gamma(beta, size=size))
    return np.arcsinh(logit)


def _asinh_logit_beta_support_point(rv, size, alpha, beta):
    import pytensor.tensor as pt

    return pt.broadcast_to(pt.arcsinh(pt.log(alpha) - pt.log(beta)), rv.shape)


def beta_variable(name: str, alpha: Any, beta: Any, *, dims: Any = None):
    """A Beta(alpha, beta) random variable inside the current PyMC model, NUTS-friendly.

    Creates the free variable ``<name>_asinh_logit`` (z) with the density of
    ``asinh(logit(theta))`` under ``theta ~ Beta(alpha, beta)`` and the deterministic
    ``<name> = sigmoid(sinh(z))``. Returns ``(theta, logit_theta)``; pass ``logit_theta`` to
    ``pm.Binomial(logit_p=...)`` for a likelihood that stays finite when theta rounds to 0 or 1.
    See the module docstring for why plain ``pm.Beta`` is not used.

    Examples
    --------
    >>> import pymc as pm
    >>> with pm.Model() as m:
    ...     theta, logit = beta_variable("accuracy", [2.0, 1.98], [2.0, 0.02])
    >>> sorted(v.name for v in m.free_RVs), sorted(v.name for v in m.deterministics)
    (['accuracy_asinh_logit'], ['accuracy'])
    """
    import pymc as pm
    import pytensor.tensor as pt

    a = np.asarray(alpha, dtype=float)
    b = np.asarray(beta, dtype=float)
    z = pm.CustomDist(
        f"{name}_asinh_logit", a, b, logp=_asinh_logit_beta_logp, random=_asinh_logit_beta_random,
        support_point=_asinh_logit_beta_support_point, dims=dims,
    )
    logit = pt.sinh(z)
    theta = pm.Deterministic(name, pt.sigmoid(logit), dims=dims)
    return theta, logit


def beta_binomial_model(
    n: Any,
    correct: Any,
    alpha: Any,
    beta: Any,
    *,
    dim: str = "class",
    coords: Sequence[Any] | None = None,
    user_prior: Any = None,
    var_name: str = "accuracy",
):
    """Independent Beta-binomial accuracies over per-region counts.

    ``accuracy[k] ~ Beta(alpha[k], beta[k])`` and ``correct[k] ~ Binomial(n[k], accuracy[k])``,
    the model whose exact posterior is ``Beta(alpha + correct, beta + n - correct)``. The
    accuracies are sampled through :func:`beta_variable` (free variable
    ``accuracy_asinh_logit``, deterministic ``accuracy``).

    Parameters
    ----------
    n, correct : array_like of int, shape (K,)
        Labeled items and correct labeled items per region.
    alpha, beta : array_like, shape (K,) or scalar
        Prior Beta parameters.
    dim : str
        Name of the region dimension ("class", "group", "region").
    coords : sequence, optional
        Region names (default ``0..K-1``).
    user_prior : callable or dict, optional
        A user's PyMC prior for ``accuracy`` replacing the Beta prior
        (:func:`pbassess.pymc_models.priors.user_prior_variable`); ``alpha``/``beta`` are then unused.
    var_name : str
        Name of the accuracy variable (``accuracy``).

    Returns
    -------
    pymc.Model
        With deterministic ``accuracy`` (dims ``dim``) and observed ``correct``.

    Examples
    --------
    >>> model = beta_binomial_model([10, 4], [7, 1], 1.0, 1.0, coords=["cat", "dog"])
    >>> sorted(model.named_vars), model.coords["class"]
    (['accuracy', 'accuracy_asinh_logit', 'correct'], ('cat', 'dog'))
    """
    import pymc as pm

    n_arr, k_arr = check_counts(n, correct)
    if n_arr.ndim != 1:
        raise ConfigError(f"counts must be one value per region, got shape {n_arr.shape}")
    size = n_arr.shape[0]
    a, b = check_beta_params(alpha, beta, (size,))
    names = list(range(size)) if coords is None else list(coords)
    if len(names) != size:
        raise ConfigError(f"{len(names)} region names for {size} regions")
    with pm.Model(coords={dim: names}) as model:
        if user_prior is not None:
            from pbassess.pymc_models.priors import user_prior_variable

            theta = user_prior_variable(var_name, user_prior, model, dim=dim, size=size)
            pm.Binomial("correct", n=n_arr, p=theta, observed=k_arr, dims=dim)
        else:
            _, logit = beta_variable(var_name, a, b, dims=dim)
            pm.Binomial("correct", n=n_arr, logit_p=logit, observed=k_arr, dims=dim)
    return model


def sample_posterior(model, *, seed: Any = None, sample_kwargs: Mapping[str, Any] | None = None,
                     progressbar: bool | None = None):
    """Alias of :func:`pbassess.inference.sample_model` (kept for existing callers).

    ``sample_kwargs`` are merged over the defaults (4 chains x 1000 draws, 1000 tuning
    steps, nutpie when installed); the progress bar shows when a person is watching.

    Examples
    --------
    >>> from unittest import mock
    >>> from pbassess.inference import mock_pymc_sample
    >>> model = beta_binomial_model([10], [7], 1.0, 1.0)
    >>> with mock.patch("pymc.sample", mock_pymc_sample):
    ...     idata = sample_posterior(model, seed=1, sample_kwargs={"draws": 50, "tune": 50, "chains": 1})
    >>> idata["posterior"]["accuracy"].shape
    (1, 50, 1)
    """
    from pbassess.inference import sample_model

    return sample_model(model, seed=seed, sample_kwargs=sample_kwargs, progressbar=progressbar)


# ---------------------------------------------------------------------------- the spec
def clipped_logit(theta: np.ndarray) -> np.ndarray:
    """logit(theta), finite where a draw rounded to exactly 0 or 1.

    Examples
    --------
    >>> clipped_logit(np.array([0.5, 0.0, 1.0])).round(1).tolist()
    [0.0, -708.4, 36.7]
    """
    t = np.clip(np.asarray(theta, dtype=float), np.finfo(float).tiny, np.nextafter(1.0, 0.0))
    return np.log(t) - np.log1p(-t)


def beta_log_density(theta: np.ndarray, alpha: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """log Beta(theta | alpha, beta), stable near 0 and 1 (computed from the logit).

    Examples
    --------
    >>> from scipy import stats
    >>> bool(np.isclose(beta_log_density(np.array(0.3), 2.0, 5.0), stats.beta.logpdf(0.3, 2, 5)))
    True
    """
    from scipy import special

    logit = clipped_logit(theta)
    log_t, log_1mt = -np.logaddexp(0.0, -logit), -np.logaddexp(0.0, logit)
    return ((alpha - 1) * log_t + (beta - 1) * log_1mt
            - (special.gammaln(alpha) + special.gammaln(beta) - special.gammaln(alpha + beta)))


def asinh_logit_beta_log_density(z: np.ndarray, alpha: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """Log density of z = asinh(logit(theta)) for theta ~ Beta(alpha, beta) (the free variable of :func:`beta_variable`).

    ``log Beta(theta | alpha, beta) + log(theta (1 - theta)) + log cosh z``, computed from z without
    forming theta.

    Examples
    --------
    >>> from scipy import integrate
    >>> total, _ = integrate.quad(lambda z: np.exp(asinh_logit_beta_log_density(z, 2.0, 0.5)), -20, 20)
    >>> round(total, 6)
    1.0
    """
    from scipy import special

    z = np.asarray(z, dtype=float)
    y = np.sinh(z)
    abs_z = np.abs(z)
    log_cosh = abs_z + np.logaddexp(0.0, -2.0 * abs_z) - np.log(2.0)
    log_beta_fn = special.gammaln(alpha) + special.gammaln(beta) - special.gammaln(alpha + beta)
    return -alpha * np.logaddexp(0.0, -y) - beta * np.logaddexp(0.0, y) - log_beta_fn + log_cosh


class BetaBernoulliSpec(Spec):
    """Independent Beta accuracies per cell, each labeled item a Bernoulli draw of its cell's accuracy.

    The model of accuracy per class / group / region, of the per-bin accuracy of a reliability
    diagram and of group comparisons: ``accuracy[k] ~ Beta(alpha[k], beta[k])``,
    ``correct_i ~ Bernoulli(accuracy[cell_i])``. Its exact posterior is
    ``Beta(alpha + correct, beta + n - correct)``; its PyMC model
    (:func:`beta_binomial_model`) samples over the counts; the log-likelihood is one value per
    labeled item, and the leave-one-item-out predictive is closed form
    (``(alpha + correct - y_i) / (alpha + beta + n - 1)`` for ``y_i = 1``).

    Parameters
    ----------
    n, correct : array_like of int, shape (K,)
        Labeled and correct labeled items per cell.
    alpha, beta : array_like, shape (K,) or scalar
        Prior Beta parameters.
    dim : str
        The cells' dimension ("class", "group", "region", "bin").
    coords : sequence, optional
        The cells' names (default ``0..K-1``).
    observations : Observations, optional
        The labeled items (cell index in ``0..K-1`` and correct 1/0); without them the
        log-likelihood is one value per cell.
    user_prior : callable or dict, optional
        A user's PyMC prior for ``accuracy`` (:mod:`pbassess.pymc_models.priors`); the fit then
        needs NUTS.
    var_name : str
        Name of the accuracy variable.

    Examples
    --------
    >>> from pbassess.inference import fit
    >>> spec = BetaBernoulliSpec(n=[10, 4], correct=[7, 1], alpha=1.0, beta=1.0, coords=["cat", "dog"])
    >>> post = fit(spec, draws=4000, seed=0).idata["posterior"]
    >>> mean = post["accuracy"].mean(("chain", "draw")).values  # exact: 8/12 and 2/6
    >>> bool(np.allclose(mean, [8 / 12, 2 / 6], atol=0.01))  # Monte Carlo sd of each mean < 0.003
    True
    """

    name = "accuracy"
    observed_name = "correct"
    # A region without labels is sampled from its prior alone; in the asinh-logit coordinate its
    # tails steepen fast, and nutpie's default target_accept 0.8 diverged there (18-56 divergences in
    # 4 x 1000 draws of a Beta(1, 1) region beside a labeled one, 3 seeds). 0.9 sufficed there; on the
    # stack installed on 2026-12-01 (PyTensor 3.3.8, nutpie 0.16.11, PyMC 6.3.2) digits-shift by environment
    # (its 'ood' environment unlabeled) had 1-2 divergences in 4 x 1000 draws on 5 of seeds 0-7 at 0.9, none at 0.95.
    nuts_defaults = {"target_accept": 0.95}

    def __init__(self, n: Any, correct: Any, alpha: Any, beta: Any, *, dim: str = "class",
                 coords: Sequence[Any] | None = None, observations: Any = None, user_prior: Any = None,
                 var_name: str = "accuracy") -> None:
        self.n, self.correct = check_counts(n, correct)
        if self.n.ndim != 1:
            raise ConfigError(f"counts must be one value per region, got shape {self.n.shape}")
        size = self.n.shape[0]
        self.alpha, self.beta = check_beta_params(alpha, beta, (size,))
        self.dim = dim
        self.names = list(range(size)) if coords is None else list(coords)
        if len(self.names) != size:
            raise ConfigError(f"{len(self.names)} region names for {size} regions")
        self.coords = {dim: self.names}
        self.observations = observations
        self.user_prior = user_prior
        self.var_name = var_name
        self.reported = {var_name: (dim,)}
        self._model = None

    @classmethod
    def from_tree(cls, tree: Any, var_name: str | None = None) -> BetaBernoulliSpec | None:
        """The spec of a fit rebuilt from its DataTree (``constant_data`` and ``observed_data``), or None.

        Examples
        --------
        >>> from pbassess.inference import fit
        >>> tree = fit(BetaBernoulliSpec(n=[3], correct=[2], alpha=1.0, beta=1.0), draws=8, seed=0).idata
        >>> BetaBernoulliSpec.from_tree(tree).correct.tolist()
        [2]
        """
        from pbassess.inference import Observations

        if "constant_data" not in tree.children or "observed_data" not in tree.children:
            return None
        const = tree["constant_data"].to_dataset()
        if not {"n", "n_correct", "prior_alpha", "prior_beta"} <= set(const.data_vars):
            return None
        dim = const["n"].dims[0]
        names = const[dim].to_numpy().tolist()
        observations = None
        observed = tree["observed_data"].to_dataset()
        if "item_cell" in const and cls.observed_name in observed and "item" in observed[cls.observed_name].dims:
            cells = const["item_cell"].to_numpy()
            if cells.dtype.kind not in "iu":
                index = {str(v): i for i, v in enumerate(names)}
                cells = np.array([index[str(v)] for v in cells], dtype=np.int64)
            observations = Observations(cells.astype(np.int64), observed[cls.observed_name].to_numpy().astype(np.int64),
                                        observed["item"].to_numpy())
        var = var_name or next(iter(v for v in tree["posterior"].data_vars if not str(v).endswith("_asinh_logit")),
                               "accuracy")
        return cls(const["n"].to_numpy(), const["n_correct"].to_numpy(), const["prior_alpha"].to_numpy(),
                   const["prior_beta"].to_numpy(), dim=dim, coords=names, observations=observations,
                   var_name=str(var))

    @property
    def has_conjugate(self) -> bool:
        return self.user_prior is None

    def conjugate_draws(self, n_draws: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        from pbassess.stats import beta_draws, beta_posterior

        a, b = beta_posterior(self.correct, self.n, self.alpha, self.beta)
        return {self.var_name: beta_draws(a, b, n_draws, rng)}

    def prior_draws(self, n_draws: int, rng: np.random.Generator) -> dict[str, np.ndarray] | None:
        from pbassess.stats import beta_draws

        if self.user_prior is not None:
            return None
        return {self.var_name: beta_draws(self.alpha, self.beta, n_draws, rng)}

    def model(self):
        if self._model is None:
            self._model = beta_binomial_model(self.n, self.correct, self.alpha, self.beta, dim=self.dim,
                                              coords=self.names, user_prior=self.user_prior, var_name=self.var_name)
        return self._model

    def complete(self, draws):
        theta = np.asarray(draws[self.var_name], dtype=float)
        out = {self.var_name: ((self.dim,), theta)}
        if self.user_prior is None:
            out[f"{self.var_name}_asinh_logit"] = ((self.dim,), np.arcsinh(clipped_logit(theta)))
            return out
        dims = self.model().named_vars_to_dims
        for name, values in draws.items():
            if name not in out:
                out[name] = (tuple(dims.get(name, ())), np.asarray(values))
        return out

    def log_likelihood(self, draws, per_item):
        from pbassess.inference.trees import bernoulli_log_likelihood

        return bernoulli_log_likelihood(draws[self.var_name], self.n, self.correct, self.observations, per_item,
                                        dim=self.dim, names=self.names, clip=False)

    def log_prior(self, draws):
        if self.user_prior is not None:
            return None
        # The density of the model's free variable z = asinh(logit(accuracy)), as pm.compute_log_prior
        # gives it: power-scaling it perturbs every Beta prior, the flat Beta(1, 1) too (whose
        # density on the accuracy scale is constant, which power-scaling cannot perturb).
        z = np.asarray(draws[f"{self.var_name}_asinh_logit"], dtype=float)
        return {f"{self.var_name}_asinh_logit": ((self.dim,), asinh_logit_beta_log_density(z, self.alpha, self.beta))}

    def exact_loo_pointwise(self):
        if self.user_prior is not None or self.observations is None:
            return None
        obs = self.observations
        a = (self.alpha + self.correct)[obs.cell]
        b = (self.beta + self.n - self.correct)[obs.cell]
        y = obs.outcome
        hit = np.where(y == 1, a, b)
        elpd_i = np.log(hit - 1.0) - np.log(a + b - 1.0)
        lpd_i = np.log(hit) - np.log(a + b)
        return elpd_i, lpd_i

    def observed_data(self) -> xr.Dataset:
        if self.observations is not None:
            obs = self.observations
            return xr.Dataset({self.observed_name: ("item", obs.outcome)}, coords={"item": obs.item})
        return xr.Dataset({self.observed_name: (self.dim, self.correct)}, coords=self.coords)

    def constant_data(self) -> xr.Dataset:
        data = {"n": (self.dim, self.n), "n_correct": (self.dim, self.correct),
                "prior_alpha": (self.dim, self.alpha), "prior_beta": (self.dim, self.beta)}
        coords: dict[str, Any] = dict(self.coords)
        if self.observations is not None:
            data["item_cell"] = ("item", np.asarray(self.names, dtype=object)[self.observations.cell]
                                 if self.names and not isinstance(self.names[0], (int, np.integer))
                                 else self.observations.cell)
            coords["item"] = self.observations.item
        return xr.Dataset(data, coords=coords)

    def cell_n(self) -> np.ndarray:
        return self.n


class GroupComparisonSpec(Spec):
    """A rate (or an ECE) per group and the difference of every pair, over Beta-Bernoulli cells.

    The cells are the groups (accuracy, TPR, FPR, calibration bias) or the group x bin cells (ECE),
    each ``BetaBernoulliSpec``-distributed (the same PyMC model, variable ``accuracy`` over dim
    ``cell``). Derived for both inferences alike: ``value`` per group (the cell's rate; ``offset -
    rate`` for the calibration bias; ``sum_b w_gb |rate_gb - s_gb|`` for the ECE) and
    ``difference`` = ``value[a] - value[b]`` per pair.

    Parameters
    ----------
    cells : BetaBernoulliSpec
        The cells (dim ``cell``), with the labeled items as observations when known.
    groups : sequence of str
        Group names; ``cells`` holds one cell per group, or ``len(groups) * n_bins`` (ECE).
    pairs : sequence of (int, int)
        The compared pairs (indices into ``groups``).
    offset : array_like, optional
        Per-group offset: ``value = offset - rate`` (the calibration bias).
    ece : dict, optional
        ``{"weight": (G, B), "score": (G, B)}``: value is the ECE of each group's bins.

    Examples
    --------
    >>> from pbassess.inference import fit
    >>> cells = BetaBernoulliSpec([10, 10], [9, 5], 1.0, 1.0, dim="cell", coords=["F", "M"])
    >>> spec = GroupComparisonSpec(cells, ["F", "M"], [(0, 1)])
    >>> post = fit(spec, draws=4000, seed=0).idata["posterior"]
    >>> bool(abs(float(post["difference"].mean()) - (10 / 12 - 6 / 12)) < 0.01)
    True
    """

    name = "comparison"
    observed_name = "correct"

    def __init__(self, cells: BetaBernoulliSpec, groups: Sequence[str], pairs: Sequence[tuple[int, int]], *,
                 offset: Any = None, ece: dict[str, Any] | None = None) -> None:
        self.cells = cells
        self.groups = [str(g) for g in groups]
        self.pairs = [(int(i), int(j)) for i, j in pairs]
        self.offset = None if offset is None else np.asarray(offset, dtype=float)
        self.ece = ece
        self.observations = cells.observations
        self.nuts_defaults = dict(cells.nuts_defaults)
        self.pair_labels = [f"{self.groups[i]} - {self.groups[j]}" for i, j in self.pairs]
        self.coords = {**cells.coords, "group": self.groups, "pair": self.pair_labels}
        self.reported = {"value": ("group",), "difference": ("pair",)}

    @property
    def has_conjugate(self) -> bool:
        return self.cells.has_conjugate

    def conjugate_draws(self, n_draws, rng):
        return self.cells.conjugate_draws(n_draws, rng)

    def prior_draws(self, n_draws, rng):
        return self.cells.prior_draws(n_draws, rng)

    def model(self):
        return self.cells.model()

    def complete(self, draws):
        out = self.cells.complete(draws)
        rate = out[self.cells.var_name][1]
        if self.ece is not None:
            shaped = rate.reshape(*rate.shape[:-1], len(self.groups), -1)
            value = np.sum(self.ece["weight"] * np.abs(shaped - self.ece["score"]), axis=-1)
        elif self.offset is not None:
            value = self.offset - rate
        else:
            value = rate
        out["value"] = (("group",), value)
        out["difference"] = (("pair",), np.stack([value[..., i] - value[..., j] for i, j in self.pairs], axis=-1))
        return out

    def log_likelihood(self, draws, per_item):
        return self.cells.log_likelihood(draws, per_item)

    def log_prior(self, draws):
        return self.cells.log_prior(draws)

    def exact_loo_pointwise(self):
        return self.cells.exact_loo_pointwise()

    def observed_data(self) -> xr.Dataset:
        return self.cells.observed_data()

    def constant_data(self) -> xr.Dataset:
        return self.cells.constant_data()

    def cell_n(self) -> np.ndarray:
        return self.cells.n
