"""The paper's experiments in one call: a grid of strategies x priors, R runs each.

:func:`simulate` takes a fully labeled pool (the labels play the oracle), runs every
(strategy, prior) combination with the compiled engine (:mod:`pbassess.active.engine`) and
returns a :class:`~pbassess.active.result.SimulationResult` (``.summary()``, ``.sentence()``,
``.plot()``, ``.to_json()``, ``.save()``) whose :attr:`~pbassess.active.result.SimulationResult.dataset`
is an :class:`xarray.Dataset` with dims ``(strategy, prior, run, step)``:

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
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

import numpy as np

from pbassess.active.engine import engine_seed, run_engine
from pbassess.active.evaluation import labels_to_mrr
from pbassess.active.model import check_prior, prior_names
from pbassess.active.result import SimulationResult
from pbassess.active.strategies import StrategyOptions, parse_strategies
from pbassess.active.targets import as_labeled_pool, build_inputs, target_info, warm_up
from pbassess.constants import CI_PROB, DEFAULT_BINS, DEFAULT_PSEUDOCOUNT
from pbassess.counting import cell_counts
from pbassess.errors import ConfigError

__all__ = ["labels_to_mrr_table", "simulate"]


def _parse_priors(priors: str | Iterable[str]) -> list[str]:
    items = [p.strip() for p in priors.split(",")] if isinstance(priors, str) else [str(p) for p in priors]
    items = [p for p in items if p]
    for p in items:
        check_prior(p)
    if not items:
        raise ConfigError(f"no prior given (choose from {', '.join(prior_names())})")
    return list(dict.fromkeys(items))


def simulate(preds: Any, target: str = "least-accurate", strategies: str | Iterable[str] = ("random-item", "ts"),
             priors: str | Iterable[str] = ("uniform",), *, pseudocount: float = DEFAULT_PSEUDOCOUNT,
             top_m: int = 1, runs: int = 100, log_every: int = 100, budget: int | None = None,
             seed: Any = None, bins: int = DEFAULT_BINS, cost_matrix: Any = None,
             batch_size: int | None = None, ci_prob: float = CI_PROB, options: StrategyOptions | None = None,
             progress: Callable[[int, int, str], None] | bool | None = None) -> SimulationResult:
    r"""Simulate active assessment on a fully labeled pool for a grid of strategies and priors.

    Parameters
    ----------
    preds : Predictions or DataFrame
        The pool; every item needs its true label (top-1 form is enough).
    target : str
        ``least-accurate``, ``most-accurate``, ``most-miscalibrated``, ``highest-cost`` or
        ``estimation`` (see :mod:`pbassess.active.targets`).
    strategies : str or iterable of str
        Names from :data:`pbassess.active.strategies.STRATEGIES` (comma-separated string ok).
    priors : str or iterable of str
        ``uniform``, ``informed`` and/or ``eb`` (empirical Bayes, Beta-scored targets); built by
        :func:`pbassess.active.model.target_prior`, as in the labeling session.
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
    seed : int or numpy.random.Generator, optional
        The one seed every run derives from (a Generator gives one integer seed; None, the
        default: a fresh seed, recorded in the result's settings).
    bins : int
        Confidence bins inside each class (``most-miscalibrated``).
    cost_matrix : name, array (K, K) or path, optional
        Cost matrix of ``highest-cost``: ``zero-one`` (default), ``people``, ``superclass``, an
        array or a file (:func:`pbassess.stats.cost.resolve_cost_matrix`).
    batch_size : int, optional
        Picks per round from the same posterior (a labeling team); overrides ``options``.
    ci_prob : float
        Mass of the bootstrap interval over runs of labels to MRR in the summary and JSON.
    options : StrategyOptions, optional
        Batch size and strategy tuning.
    progress : callable or bool, optional
        ``progress(done_runs, total_runs, label)`` as runs finish; ``True`` shows a note and a
        progress bar (tqdm: a widget in Jupyter, a bar on a terminal's stderr); ``None`` (default)
        does so when a person is watching (:func:`pbassess.inference.progress_wanted`).

    Returns
    -------
    SimulationResult

    Notes
    -----
    The model of every run, for the accuracy targets: predicted class :math:`k` (an arm) has
    :math:`y_k` correct of :math:`n_k` labeled items,

    .. math::

       \theta_k \sim \mathrm{Beta}(\alpha_k, \beta_k), \qquad
       \theta_k \mid y \sim \mathrm{Beta}(\alpha_k + y_k,\; \beta_k + n_k - y_k),

    and Thompson sampling (``ts``, ``least-accurate``) draws
    :math:`\tilde\theta_k \sim \mathrm{Beta}(\alpha_k + y_k, \beta_k + n_k - y_k)` for every arm
    and labels an unlabeled item of :math:`\arg\min_k \tilde\theta_k`. The answer is reported with
    :math:`P(k = \arg\min_j \theta_j \mid y)`, estimated from joint posterior draws. The
    calibration and cost targets put the same kind of conjugate posterior (Beta per confidence bin,
    Dirichlet per confusion row) on each arm and rank arms by their ECE or expected cost.

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
    pred = as_labeled_pool(preds)
    seed = engine_seed(seed)  # a Generator becomes one int, so every (strategy, prior) shares the runs
    if seed is None:  # fresh entropy, drawn once and recorded in the result so the run can be repeated
        seed = int(np.random.default_rng().integers(2**62))
    info = target_info(target)
    names = parse_strategies(strategies, target)
    prior_list = _parse_priors(priors)
    options = options or StrategyOptions()
    if batch_size is not None:
        options = replace(options, batch_size=batch_size)
    if isinstance(ci_prob, bool) or not isinstance(ci_prob, (int, float)) or not 0 < ci_prob < 1:
        raise ConfigError(f"ci_prob must be a number strictly between 0 and 1, got {ci_prob!r}")
    runs, log_every = int(runs), int(log_every)
    if runs < 1:
        raise ConfigError(f"runs must be at least 1, got {runs}")
    if log_every < 1:
        raise ConfigError(f"log_every must be at least 1, got {log_every}")
    if budget is not None and int(budget) < log_every:
        raise ConfigError(f"the budget ({budget}) must be at least log_every ({log_every})")
    spec = cost_matrix
    inputs = {p: build_inputs(pred, target, prior=p, pseudocount=pseudocount, top_m=top_m, bins=bins,
                              cost_matrix=spec) for p in prior_list}
    total = pred.n_items if budget is None else min(int(budget), pred.n_items)
    n_logs = total // log_every
    if n_logs < 1:
        raise ConfigError(f"log_every ({log_every}) is larger than the number of labels ({total})")
    if progress is None:  # the one progress rule: a terminal or a Jupyter kernel, and no --json / --quiet
        from pbassess.inference.sampling import progress_wanted

        progress = progress_wanted()
    if progress is True:  # after every check, so a bad option is the only line a user sees
        sys.stderr.write(f"pbassess simulate: {pred.name}, {pred.n_items} items, {pred.n_classes} classes; "
                         "compiling the engine (cached after the first run)...\n")
        sys.stderr.flush()
    compile_seconds = warm_up()
    report = _progress_printer() if progress is True else progress or None
    grid = _run_grid(inputs, names, runs=runs, n_logs=n_logs, seed=seed, budget=budget, log_every=log_every,
                     options=options, report=report)
    arms = np.flatnonzero(cell_counts(pred.predicted, pred.n_classes) > 0)
    class_names = np.array(pred.classes, dtype=str)[arms]
    settings = {
        "target": target, "metric": info["metric"], "direction": info["direction"], "top_m": int(top_m),
        "log_every": log_every, "n_items": pred.n_items, "pseudocount": float(pseudocount),
        "seed": -1 if seed is None else int(seed), "batch_size": options.batch_size,
        "compile_seconds": float(compile_seconds), "name": pred.name,
        "true_top": ",".join(class_names[next(iter(inputs.values())).true_top]),
    }
    return _simulation_result(grid, names, prior_list, class_names, settings, ci_prob=float(ci_prob),
                              data_summary=pred.describe())


def _run_grid(inputs: dict, names: list[str], *, runs: int, n_logs: int, seed: Any, budget: Any, log_every: int,
              options: StrategyOptions, report: Any) -> dict[str, np.ndarray]:
    """Every (strategy, prior) with the engine: curves (strategy, prior, run, step) and per-class labels."""
    priors = list(inputs)
    n_arms = next(iter(inputs.values())).n_arms
    shape = (len(names), len(priors), runs, n_logs)
    out_all = {"mrr": np.zeros(shape), "success": np.zeros(shape, dtype=bool), "error": np.zeros(shape),
               "agreement": np.zeros(shape), "labels_per_class": np.zeros((len(names), len(priors), n_arms)),
               "seconds": np.zeros((len(names), len(priors)))}
    done = 0
    for i, name in enumerate(names):
        for j, prior in enumerate(priors):
            # chunks of runs only to move the progress bar; results do not depend on the chunking
            chunk = runs if not report else max(1, -(-runs // 5))
            for start in range(0, runs, chunk):
                stop = min(runs, start + chunk)
                out = run_engine(inputs[prior], name, runs=stop - start, seed=seed, budget=budget,
                                 log_every=log_every, batch_size=options.batch_size, ttts_beta=options.ttts_beta,
                                 epsilon=options.epsilon, ucb_level=options.ucb_level, run_offset=start)
                out_all["mrr"][i, j, start:stop] = out.mrr
                out_all["success"][i, j, start:stop] = out.success
                out_all["error"][i, j, start:stop] = out.error
                out_all["agreement"][i, j, start:stop] = out.agreement
                out_all["labels_per_class"][i, j] += out.picks.sum(axis=0) / runs
                out_all["seconds"][i, j] += out.seconds
                if report:
                    report(done * runs + stop, len(names) * len(priors) * runs, f"{name}/{prior}")
            done += 1
    return out_all


def _simulation_result(grid: dict[str, np.ndarray], names: list[str], priors: list[str], class_names: np.ndarray,
                       settings: dict[str, Any], *, ci_prob: float, data_summary: dict[str, Any]) -> SimulationResult:
    import xarray as xr

    runs, n_logs = grid["mrr"].shape[2:]
    labels = (np.arange(n_logs) + 1) * int(settings["log_every"])
    curve_dims = ("strategy", "prior", "run", "step")
    curves = xr.Dataset(
        {v: (curve_dims, grid[v]) for v in ("mrr", "success", "error", "agreement")},
        coords={"strategy": names, "prior": priors, "run": np.arange(runs), "step": np.arange(n_logs),
                "labels": ("step", labels), "fraction": ("step", labels / settings["n_items"])},
    )
    counts = xr.Dataset(
        {"labels_per_class": (("strategy", "prior", "class"), grid["labels_per_class"]),
         "seconds": (("strategy", "prior"), grid["seconds"])},
        coords={"strategy": names, "prior": priors, "class": class_names},
    )
    prior = {"kind": priors[0] if len(priors) == 1 else list(priors), "pseudocount": settings["pseudocount"]}
    result = SimulationResult(curves, counts, prior=prior, data_summary=data_summary, engine="conjugate",
                              ci_prob=ci_prob, options=settings)
    result.diagnostics = result._diagnostics()
    return result


def labels_to_mrr_table(ds, threshold: float = 0.99):
    """Labels-to-MRR fraction per (strategy, prior) as a DataArray (``ds``: a SimulationResult or its Dataset).

    Parameters
    ----------
    ds : SimulationResult or xarray.Dataset
        A result of :func:`simulate` (or its ``dataset``).
    threshold : float
        The MRR to reach.

    Returns
    -------
    xarray.DataArray
        ``labels_to_mrr`` (dims ``strategy``, ``prior``): the fraction of the pool labeled when the
        run-averaged MRR first reaches ``threshold``.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_top1([0, 0, 1, 1], [0.9, 0.8, 0.7, 0.6], [0, 1, 1, 1], classes=["a", "b"])
    >>> t = labels_to_mrr_table(simulate(p, strategies="random-item", runs=3, log_every=1))
    >>> float(t.sel(strategy="random-item", prior="uniform")) <= 1.0
    True
    """
    import xarray as xr

    ds = getattr(ds, "dataset", ds)
    labels = ds["labels"].values
    n = int(ds.attrs["n_items"])
    values = np.array([[labels_to_mrr(ds["mrr"].sel(strategy=s, prior=p).values, labels, n, threshold)
                        for p in ds["prior"].values] for s in ds["strategy"].values])
    return xr.DataArray(values, dims=("strategy", "prior"),
                        coords={"strategy": ds["strategy"].values, "prior": ds["prior"].values},
                        name="labels_to_mrr")


def _progress_printer():
    """A ``report(done, total, label)`` that moves a tqdm bar (a widget in Jupyter)."""
    from tqdm.auto import tqdm

    state: dict[str, Any] = {}

    def report(done: int, total_: int, label: str) -> None:
        bar = state.get("bar")
        if bar is None:
            bar = state["bar"] = tqdm(total=total_, unit="run", file=sys.stderr, leave=True)
        bar.set_description_str(label)
        bar.update(done - bar.n)
        if done == total_:
            bar.close()
            state.pop("bar")

    return report
