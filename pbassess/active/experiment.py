"""The paper's experiments in one call: a grid of strategies x priors, R runs each.

:func:`simulate` takes a fully labeled pool (the labels play the oracle), runs every
(strategy, prior) combination with the compiled engine (:mod:`pbassess.active.engine`) and
returns an :class:`xarray.Dataset` with dims ``(strategy, prior, run, step)``:

* ``mrr``, ``success``, ``error`` (per run, after ``labels[step] = (step + 1) * L`` labels;
  ``error`` is the mean absolute error of the posterior-mean score over the classes),
* ``labels_per_class`` ``(strategy, prior, class)``: labels spent on each predicted class,
  averaged over runs,
* ``seconds`` ``(strategy, prior)``: wall time of the runs themselves;

attributes: ``target``, ``metric``, ``top_m``, ``log_every``, ``n_items``, ``pseudocount``,
``seed``, ``compile_seconds`` and the true top-m class names. Every run derives from ``seed``
alone, and run r of every strategy shares the same in-class shuffles (paired comparison).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from pbassess.active.engine import run_engine, warm_up
from pbassess.active.evaluation import labels_to_mrr
from pbassess.active.strategies import StrategyOptions, parse_strategies
from pbassess.active.targets import PRIORS, build_inputs, target_info
from pbassess.constants import DEFAULT_BINS, DEFAULT_PSEUDOCOUNT
from pbassess.data.predictions import Predictions
from pbassess.errors import ConfigError

__all__ = ["labels_to_mrr_table", "simulate"]


def _parse_priors(priors: str | Iterable[str]) -> list[str]:
    items = [p.strip() for p in priors.split(",")] if isinstance(priors, str) else [str(p) for p in priors]
    items = [p for p in items if p]
    for p in items:
        if p not in PRIORS:
            raise ConfigError(f"unknown prior {p!r} (choose from {', '.join(PRIORS)})")
    if not items:
        raise ConfigError(f"no prior given (choose from {', '.join(PRIORS)})")
    return list(dict.fromkeys(items))


def simulate(pred: Predictions, target: str = "least-accurate", strategies: str | Iterable[str] = ("random-item", "ts"),
             priors: str | Iterable[str] = ("uniform",), *, pseudocount: float = DEFAULT_PSEUDOCOUNT,
             top_m: int = 1, runs: int = 100, log_every: int = 100, budget: int | None = None,
             seed: int | None = 0, bins: int = DEFAULT_BINS, cost: Any = None,
             options: StrategyOptions | None = None, progress: Callable[[int, int, str], None] | bool | None = None):
    """Simulate active assessment on a fully labeled pool for a grid of strategies and priors.

    Parameters
    ----------
    pred : Predictions
        The pool; every item needs its true label (top-1 form is enough).
    target : str
        ``least-accurate``, ``most-accurate``, ``most-miscalibrated``, ``highest-cost`` or
        ``estimation`` (see :mod:`pbassess.active.targets`).
    strategies : str or iterable of str
        Names from :data:`pbassess.active.strategies.STRATEGIES` (comma-separated string ok).
    priors : str or iterable of str
        ``uniform``, ``informed`` and/or ``eb`` (empirical Bayes, Beta-scored targets).
    pseudocount : float
        Prior strength.
    top_m : int
        Size of the sought set.
    runs : int
        Independent replicate runs per combination.
    log_every : int
        L: evaluate after every L labels.
    budget : int, optional
        Labels per run (default: the whole pool).
    seed : int, optional
        The one seed every run derives from.
    bins : int
        Confidence bins inside each class (``most-miscalibrated``).
    cost : array (K, K), optional
        Cost matrix (``highest-cost``); default 0-1.
    options : StrategyOptions, optional
        Batch size and strategy tuning.
    progress : callable or bool, optional
        ``progress(done_runs, total_runs, label)`` as runs finish; ``True`` prints a bar on stderr.

    Returns
    -------
    xarray.Dataset

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_top1([0, 0, 1, 1, 2, 2], [.9, .8, .7, .6, .9, .9], [0, 1, 1, 1, 2, 2],
    ...                           classes=["a", "b", "c"])
    >>> ds = simulate(p, strategies="random-item,ts", runs=4, log_every=2)
    >>> dict(ds["mrr"].sizes)
    {'strategy': 2, 'prior': 1, 'run': 4, 'step': 3}
    >>> float(ds["mrr"].sel(strategy="random-item")[..., -1].mean())   # all labels: the truth
    1.0
    """
    import xarray as xr

    info = target_info(target)
    names = parse_strategies(strategies, target)
    prior_names = _parse_priors(priors)
    options = options or StrategyOptions()
    runs = int(runs)
    if runs < 1:
        raise ConfigError(f"runs must be at least 1, got {runs}")
    log_every = int(log_every)
    if log_every < 1:
        raise ConfigError(f"log_every must be at least 1, got {log_every}")
    if budget is not None and int(budget) < log_every:
        raise ConfigError(f"the budget ({budget}) must be at least log_every ({log_every})")
    inputs = {p: build_inputs(pred, target, prior=p, pseudocount=pseudocount, top_m=top_m, bins=bins, cost=cost)
              for p in prior_names}
    n_items = pred.n_items
    total = n_items if budget is None else min(int(budget), n_items)
    n_logs = total // log_every
    if n_logs < 1:
        raise ConfigError(f"log_every ({log_every}) is larger than the number of labels ({total})")
    compile_seconds = warm_up()
    n_combos = len(names) * len(prior_names)
    report = _progress_printer() if progress is True else progress or None
    first = next(iter(inputs.values()))
    arms = np.flatnonzero(np.bincount(pred.predicted, minlength=pred.n_classes) > 0)
    shape = (len(names), len(prior_names), runs, n_logs)
    mrr = np.zeros(shape)
    succ = np.zeros(shape, dtype=bool)
    err = np.zeros(shape)
    per_class = np.zeros((len(names), len(prior_names), arms.size))
    seconds = np.zeros((len(names), len(prior_names)))
    done = 0
    for i, name in enumerate(names):
        for j, prior in enumerate(prior_names):
            # chunks of runs only to move the progress bar; results do not depend on the chunking
            chunk = runs if not report else max(1, -(-runs // 5))
            for start in range(0, runs, chunk):
                stop = min(runs, start + chunk)
                out = run_engine(inputs[prior], name, runs=stop - start, seed=seed, budget=budget,
                                 log_every=log_every, batch_size=options.batch_size, ttts_beta=options.ttts_beta,
                                 epsilon=options.epsilon, ucb_level=options.ucb_level, run_offset=start)
                mrr[i, j, start:stop], succ[i, j, start:stop], err[i, j, start:stop] = out.mrr, out.success, out.error
                per_class[i, j] += out.picks.sum(axis=0) / runs
                seconds[i, j] += out.seconds
                if report:
                    report(done * runs + stop, n_combos * runs, f"{name}/{prior}")
            done += 1
    labels = (np.arange(n_logs) + 1) * log_every
    class_names = np.array(pred.classes, dtype=str)[arms]
    ds = xr.Dataset(
        {
            "mrr": (("strategy", "prior", "run", "step"), mrr),
            "success": (("strategy", "prior", "run", "step"), succ),
            "error": (("strategy", "prior", "run", "step"), err),
            "labels_per_class": (("strategy", "prior", "class"), per_class),
            "seconds": (("strategy", "prior"), seconds),
        },
        coords={
            "strategy": names, "prior": prior_names, "run": np.arange(runs), "step": np.arange(n_logs),
            "labels": ("step", labels), "fraction": ("step", labels / n_items), "class": class_names,
        },
        attrs={
            "target": target, "metric": info["metric"], "direction": info["direction"], "top_m": int(top_m),
            "log_every": log_every, "n_items": n_items, "pseudocount": float(pseudocount),
            "seed": -1 if seed is None else int(seed), "batch_size": options.batch_size,
            "compile_seconds": float(compile_seconds), "name": pred.name,
            "true_top": ",".join(class_names[first.true_top]),
        },
    )
    return ds


def labels_to_mrr_table(ds, threshold: float = 0.99):
    """Labels-to-MRR fraction per (strategy, prior) as a DataArray.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_top1([0, 0, 1, 1], [0.9, 0.8, 0.7, 0.6], [0, 1, 1, 1], classes=["a", "b"])
    >>> t = labels_to_mrr_table(simulate(p, strategies="random-item", runs=3, log_every=1))
    >>> float(t.sel(strategy="random-item", prior="uniform")) <= 1.0
    True
    """
    import xarray as xr

    labels = ds["labels"].values
    n = int(ds.attrs["n_items"])
    values = np.array([[labels_to_mrr(ds["mrr"].sel(strategy=s, prior=p).values, labels, n, threshold)
                        for p in ds["prior"].values] for s in ds["strategy"].values])
    return xr.DataArray(values, dims=("strategy", "prior"),
                        coords={"strategy": ds["strategy"].values, "prior": ds["prior"].values},
                        name="labels_to_mrr")


def _progress_printer():
    start = time.perf_counter()

    def report(done: int, total_: int, label: str) -> None:
        width = 30
        filled = int(width * done / max(total_, 1))
        bar = "#" * filled + "-" * (width - filled)
        sys.stderr.write(f"\r[{bar}] {done}/{total_} {label:<28s} {time.perf_counter() - start:6.1f}s")
        if done == total_:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return report
