"""The estimation experiment: interval coverage and width over repeated label draws of one pool.

For a pool with every item labeled (so its accuracy is known), :func:`pool_intervals` draws
``runs`` label sets of size ``n`` and computes, per draw, the 95% interval of each method:

* ``classical``: n items drawn uniformly, the exact Clopper-Pearson interval of their mean correctness;
* ``ppi``: the same n labels plus the confidences of the other N - n items (PPI++, power-tuned,
  boundary-aware);
* ``bayes``: the same labels, cells = 10 equal-mass confidence bins, confidence-informed prior
  learned from the labels (EB mode + Laplace), finite-pool posterior predictive, 95% equal-tailed credible interval;
* ``active``: n labels in expectation chosen by the uncertainty rule and the
  inverse-probability-weighted PPI estimator.

:func:`interval_summary` turns the intervals into coverage of the truth, mean width and
effective labels ``n (mean classical width / mean width)^2``. :class:`PoolSpec` names a pool
(a registered data set, optionally with a model and a subset such as one ACS year) so that a
dask worker can load it (:func:`load_pool`, cached per process); ``benchmarks/estimation.py``
and the ``estimation`` cells of :mod:`pbassess.grid` both run these functions, so a cell gives
the same numbers wherever it runs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pbassess.counting import assign_bins
from pbassess.counting import cell_counts as core_counts
from pbassess.errors import ConfigError

__all__ = ["METHODS", "SIZES", "PoolSpec", "benchmark_pools", "check_methods", "interval_summary", "load_pool",
           "pool_intervals"]

#: The methods compared, in the order they draw from each run's random stream.
METHODS: tuple[str, ...] = ("classical", "ppi", "bayes", "active")
#: Label budgets of the benchmark (only those up to a third of the pool are run).
SIZES: tuple[int, ...] = (100, 200, 500, 1000)
_BINS = 10


@dataclass(frozen=True)
class PoolSpec:
    """A pool by name: a registered data set (or file), an optional model and an optional subset.

    ``subset`` is ``"column=value"`` (e.g. ``"year=2018"``): only the items whose group column
    ``column`` equals ``value`` (compared as text).

    Examples
    --------
    >>> PoolSpec("acs-employment", subset="year=2018").name, PoolSpec("adult-sex", model="score_LR").name
    ('acs-employment 2018', 'adult-sex (LR)')
    """

    dataset: str
    model: str | None = None
    subset: str | None = None

    @property
    def name(self) -> str:
        """The pool's display name (the benchmark table's first column)."""
        name = self.dataset
        if self.subset:
            name += f" {self.subset.split('=', 1)[1]}"
        if self.model:
            name += f" ({self.model.removeprefix('score_')})"
        return name


@functools.lru_cache(maxsize=4)
def _predictions(dataset: str, model: str | None):
    from pathlib import Path

    from pbassess.data import load_data, read_predictions

    if model is None and Path(dataset).exists():
        return read_predictions(dataset)
    return load_data(dataset) if model is None else load_data(dataset, model=model)


@functools.lru_cache(maxsize=16)
def load_pool(spec: PoolSpec) -> tuple[np.ndarray, np.ndarray]:
    """Confidence and correctness of every item of a fully labeled pool (cached per process).

    Examples
    --------
    >>> conf, correct = load_pool(PoolSpec("digits-logreg"))
    >>> conf.size, bool(0.9 < correct.mean() < 1.0)
    (899, True)
    """
    preds = _predictions(spec.dataset, spec.model)
    if spec.subset:
        column, sep, value = spec.subset.partition("=")
        if not sep or column not in preds.groups:
            raise ConfigError(f"pool {spec.name!r}: subset must be 'column=value' with a group column "
                              f"(have: {', '.join(sorted(preds.groups)) or 'none'})")
        keep = np.asarray(preds.group(column)).astype(str) == value
        if not keep.any():
            raise ConfigError(f"pool {spec.name!r}: no item has {column} = {value}")
        preds = preds.subset(keep)
    if preds.n_labeled < preds.n_items:
        raise ConfigError(f"pool {spec.name!r}: every item needs a label (the truth is the pool's accuracy)")
    return np.asarray(preds.confidence, dtype=float), np.asarray(preds.correct, dtype=bool)


def benchmark_pools(only: Iterable[str] | None = None,
                    on_skip: Callable[[str, Exception], None] | None = None) -> list[PoolSpec]:
    """The benchmark's real pools that are available: CIFAR-100, SVHN, ACS employment per year, fairness sets (LR).

    ``only`` keeps the pools whose name (or ``acs-<year>``) contains one of its strings;
    ``on_skip(name, error)`` is told about each data set that cannot be loaded.

    Examples
    --------
    >>> benchmark_pools(only=["no-such-pool"])
    []
    """
    from pbassess.errors import PbassessError

    wanted = None if only is None else list(only)

    def keep(spec: PoolSpec, alias: str = "") -> bool:
        return wanted is None or any(o in spec.name or (alias and o in alias) for o in wanted)

    def available(spec: PoolSpec) -> bool:
        try:
            _predictions(spec.dataset, spec.model)
        except PbassessError as exc:
            if on_skip:
                on_skip(spec.dataset, exc)
            return False
        return True

    out = [s for s in (PoolSpec("cifar100-resnet110"), PoolSpec("svhn-resnet")) if keep(s) and available(s)]
    acs = PoolSpec("acs-employment")
    if (wanted is None or any(o.startswith("acs") or o in acs.name for o in wanted)) and available(acs):
        years = np.unique(np.asarray(_predictions(acs.dataset, None).group("year")))
        out += [s for year in years if keep(s := PoolSpec(acs.dataset, subset=f"year={year}"), f"acs-{year}")]
    for name in ("adult-sex", "bank-age", "compas-race", "german-sex"):
        spec = PoolSpec(name, model="score_LR")
        if keep(spec) and available(spec):
            out.append(spec)
    return out


def check_methods(methods: Sequence[str]) -> tuple[str, ...]:
    """The known methods among ``methods``, in the order of :data:`METHODS` (ConfigError for others).

    Examples
    --------
    >>> check_methods(["active", "classical"])
    ('classical', 'active')
    """
    unknown = [m for m in methods if m not in METHODS]
    if unknown or not methods:
        raise ConfigError(f"unknown estimation method {unknown[0] if unknown else 'set (empty)'!r} "
                          f"(choose from {', '.join(METHODS)})")
    return tuple(m for m in METHODS if m in methods)


def pool_intervals(conf: Any, correct: Any, n: int, runs: int, seed: int,
                   methods: Sequence[str] = METHODS) -> dict[str, np.ndarray]:
    """Intervals (runs, 2) of every method for ``runs`` label draws of size ``n``.

    Run ``r`` draws from ``numpy.random.default_rng([seed, n, r])`` alone, so any subset of runs
    or pools gives the same numbers in any process. The methods draw from that stream in the
    order of :data:`METHODS`; leaving out ``bayes`` therefore changes the draws of ``active``.

    Examples
    --------
    >>> conf, correct = load_pool(PoolSpec("digits-logreg"))
    >>> ivs = pool_intervals(conf, correct, 100, runs=3, seed=0, methods=("classical", "ppi"))
    >>> sorted(ivs), ivs["ppi"].shape, bool(np.all(ivs["ppi"][:, 0] <= ivs["ppi"][:, 1]))
    (['classical', 'ppi'], (3, 2), True)
    """
    from pbassess.estimation.active import active_sample, ipw_mean_interval
    from pbassess.estimation.bayes import bayes_estimate_batch, cell_counts
    from pbassess.estimation.frequentist import classical_interval, ppi_mean_interval

    methods = check_methods(methods)
    conf = np.asarray(conf, dtype=float)
    correct = np.asarray(correct, dtype=bool)
    big_n = conf.size
    if not 1 <= int(n) < big_n:
        raise ConfigError(f"the label count must be between 1 and the pool size {big_n} - 1, got {n}")
    y = correct.astype(float)
    base = cell_counts(conf, np.zeros(big_n, dtype=np.int64), 1, np.zeros(big_n, bool), correct, bins=_BINS)
    # the cell of every item (same equal-mass bins as cell_counts)
    edges = np.unique(np.quantile(conf, np.linspace(0, 1, _BINS + 1)[1:-1]))
    cell_of_bin = np.full(edges.size + 1, -1)
    item_bin = assign_bins(conf, np.concatenate([[-np.inf], edges, [np.inf]]))   # the one bin rule
    cell_of_bin[np.unique(item_bin)] = np.arange(base.n_pool.size)
    item_cell = cell_of_bin[item_bin]
    out = {m: np.full((runs, 2), np.nan) for m in methods}
    rngs = [np.random.default_rng([seed, n, r]) for r in range(runs)]
    picks = np.zeros((runs, n), dtype=np.int64)
    lab = np.zeros(big_n, bool)
    for r, rng in enumerate(rngs):
        idx = picks[r] = rng.choice(big_n, n, replace=False)
        if "classical" in out:
            out["classical"][r] = classical_interval(y[idx], 0.95)[1:]
        if "ppi" in out:
            lab[idx] = True
            out["ppi"][r] = ppi_mean_interval(y[idx], conf[idx], conf[~lab], 0.95)[1:3]
            lab[idx] = False
    # labels and correct labels per cell, one row per run
    cell_n = core_counts(item_cell[picks], base.n_pool.size)
    cell_k = core_counts(item_cell[picks], base.n_pool.size, y[picks]).round().astype(np.int64)
    if "bayes" in out:
        # fits and Laplace covariances batched over the runs; each run's draws from its own stream
        # 4 chains x 250: the 1,000 draws of before
        out["bayes"] = bayes_estimate_batch(base, cell_n, cell_k, draws=250, seed=rngs)["ci"][:, 0]
    for r, rng in enumerate(rngs):
        if "active" in out:
            chosen, pi = active_sample(conf, n, seed=rng)
            out["active"][r] = ipw_mean_interval(y, conf, pi, chosen, 0.95)[1:3]
    return out


def interval_summary(intervals: dict[str, np.ndarray], truth: float, n: int) -> dict[str, dict[str, float]]:
    """Mean width, coverage of ``truth`` and effective labels of each method's intervals.

    Effective labels are ``n (mean classical width / mean width)^2`` (NaN without ``classical``).

    Examples
    --------
    >>> ivs = {"classical": np.array([[0.4, 0.6], [0.5, 0.7]]), "ppi": np.array([[0.45, 0.55], [0.5, 0.6]])}
    >>> s = interval_summary(ivs, truth=0.52, n=100)
    >>> s["classical"]["coverage"], round(s["ppi"]["width"], 3), round(s["ppi"]["effective_labels"])
    (1.0, 0.1, 400)
    """
    width = {m: float(np.nanmean(iv[:, 1] - iv[:, 0])) for m, iv in intervals.items()}
    cover = {m: float(np.nanmean((iv[:, 0] <= truth) & (truth <= iv[:, 1]))) for m, iv in intervals.items()}
    reference = width.get("classical", float("nan"))
    return {m: {"width": width[m], "coverage": cover[m], "effective_labels": n * (reference / width[m]) ** 2}
            for m in intervals}
