"""Posterior comparisons of a metric between groups, or between models on the same items.

Metrics (per group, or per model):

* ``accuracy``: P(prediction correct), Beta-binomial on the labeled items;
* ``tpr``: P(predict positive | truly positive), Beta-binomial on labeled positives (binary);
* ``fpr``: P(predict positive | truly negative), Beta-binomial on labeled negatives (binary);
* ``calibration-bias``: mean confidence of the group's pool (labeled or not) minus accuracy
  (positive = over-confident);
* ``ece``: expected calibration error from a Beta posterior per equal-width confidence bin,
  weighted by the pool's bin shares (as :func:`pbassess.stats.ece_from_draws`).

For two groups the difference ``a - b`` is summarised by its posterior mean and HDI, by
``P(a - b > 0)`` and by the ROPE probabilities ``[P(d < -r), P(-r <= d <= r), P(d > r)]`` for a
user-given region of practical equivalence ``r``; for many groups every pair is compared.

Groups are disjoint sets of items, so their posteriors are independent. Two *models* scored
on the same items are not: their errors are correlated, and comparing independent Beta
posteriors would overstate the uncertainty of the difference. :func:`compare_models` therefore
uses a **paired model**: per labeled item the joint outcome (both right, only A right, only B
right, both wrong) is one draw of a categorical distribution with probabilities
``pi ~ Dirichlet(pc/4, pc/4, pc/4, pc/4)`` (pc = pseudocount, so each model's marginal prior is
the project's uniform Beta(pc/2, pc/2)); the posterior is Dirichlet(pc/4 + counts) and
``acc_A - acc_B = pi_onlyA - pi_onlyB``. TPR and FPR are paired the same way on the labeled
positives / negatives with "predicts positive" as the outcome. ECE differences between models
use independent per-model bin posteriors (the bins differ between models).

The default inference is the exact conjugate one (Beta and Dirichlet draws, no MCMC);
``inference="nuts"`` samples the same models with NUTS (``draws`` is then the number of draws
per chain). Every result is a DataTree with the pointwise log-likelihood of each group's
successes, and NUTS results carry diagnostics.

ROPE statistics live in :mod:`pbassess.assess.rope`; :func:`simulate_rope_labeling`
(:mod:`pbassess.assess.rope_labeling`) measures how many labels a two-group comparison needs before
its ROPE decision matches the full-data decision, when labels are acquired at random or
actively (label the group whose next label is expected to move the ROPE probabilities most).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from pbassess.assess._common import as_pool, check_ci_prob, check_draws, check_sample_kwargs
from pbassess.assess._compare_fit import (
    beta_fit,
    beta_prior_params,
    dirichlet_fit,
    group_cells,
    group_names,
    merge_diagnostics,
    pair_list,
)
from pbassess.assess.rope import (
    DECISIONS,
    check_rope,
    rope_decision,
    rope_probabilities,
    rope_probabilities_beta,
)
from pbassess.assess.rope_labeling import (
    RopeLabelingSimulation,
    active_rope_scores,
    simulate_rope_labeling,
)
from pbassess.constants import CI_PROB, DEFAULT_BINS, DEFAULT_DRAWS, DEFAULT_PSEUDOCOUNT
from pbassess.errors import ConfigError, DataError
from pbassess.inference import fit, resolve_inference
from pbassess.pymc_models.accuracy import BetaBernoulliSpec, GroupComparisonSpec
from pbassess.pymc_models.priors import is_pymc_prior
from pbassess.results.compare import ComparisonResult
from pbassess.stats import as_generator, bin_edges, ece_from_draws

__all__ = [
    "DECISIONS", "METRICS", "ComparisonResult", "RopeLabelingSimulation", "active_rope_scores", "compare_groups",
    "compare_models", "rope_decision", "rope_probabilities", "rope_probabilities_beta", "simulate_rope_labeling",
]

METRICS = ("accuracy", "tpr", "fpr", "calibration-bias", "ece")
_ALIASES = {"bias": "calibration-bias", "calibration_bias": "calibration-bias", "acc": "accuracy"}
OUTCOMES = ("both", "only_a", "only_b", "neither")
_SAMPLER_KEYS = {"tune": "tune", "chains": "chains", "cores": "cores", "target_accept": "target_accept",
                 "sampler": "nuts_sampler", "nuts_sampler": "nuts_sampler", "random_seed": "random_seed"}


def _metric_name(metric: str) -> str:
    m = _ALIASES.get(str(metric).lower(), str(metric).lower())
    if m not in METRICS:
        raise ConfigError(f"unknown metric {metric!r} (choose from {', '.join(METRICS)})")
    return m


def _settings(inference: Any, engine: Any, draws: Any, ci_prob: Any, sample_kwargs: Any,
              sampler: dict[str, Any]) -> tuple[str, int, float, dict[str, Any]]:
    """(inference, draws, ci_prob, sample_kwargs): ``draws`` is per chain for NUTS (the defect of issue 7)."""
    inference = resolve_inference(inference, engine)
    unknown = sorted(set(sampler) - set(_SAMPLER_KEYS))
    if unknown:
        raise ConfigError(f"unknown option {unknown[0]!r} (NUTS options go in sample_kwargs)")
    kwargs = {_SAMPLER_KEYS[k]: v for k, v in sampler.items() if v is not None}
    kwargs.update(check_sample_kwargs(sample_kwargs))
    if inference == "nuts" and draws is not None:
        kwargs.setdefault("draws", check_draws(draws))
    n_draws = check_draws(DEFAULT_DRAWS if draws is None else draws)
    return inference, n_draws, check_ci_prob(ci_prob), kwargs


def _ece_fit(cells: dict[str, np.ndarray], edges: np.ndarray, prior: str, pseudocount: float, names: Sequence[str],
             **fit: Any):
    """ECE draws (chain, draw, group) and per-group log-likelihood from (group, bin) counts."""
    centre = (edges[:-1] + edges[1:]) / 2
    pool, ssum = cells["n_pool"], cells["score_sum_pool"]
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(pool > 0, ssum / np.maximum(pool, 1), centre)
    weights = pool / np.maximum(pool.sum(axis=1, keepdims=True), 1)
    alpha, beta = beta_prior_params(prior, pseudocount, score.ravel())
    labels = [f"{g} bin {b}" for g in names for b in range(edges.size - 1)]
    res = beta_fit(alpha, beta, cells["n"].ravel(), cells["k"].ravel(), names=labels, **fit)
    theta = res["theta"].reshape(res["theta"].shape[:2] + cells["n"].shape)
    res["theta"] = ece_from_draws(theta, weights, score)
    res["loglik"] = res["loglik"].reshape(theta.shape).sum(axis=-1)
    return res, cells["n"].sum(axis=1), cells["k"].sum(axis=1)


def _build_result(values: np.ndarray, diffs: np.ndarray, names: list[str], pairs: list[tuple[int, int]],
                  counts: dict[str, Any], *, loglik: np.ndarray, fit_idata: Any, diagnostics: Any, metric: str,
                  rope: float, prior: dict[str, Any], data_summary: dict[str, Any], inference: str, ci_prob: float,
                  options: dict[str, Any], extra_counts: dict[str, Any] | None = None,
                  model: Any = None) -> ComparisonResult:
    from pbassess.inference import conjugate_datatree
    from pbassess.inference.trees import keep_observed_cells

    pair_labels = [f"{names[i]} - {names[j]}" for i, j in pairs]
    sample = {"chain": np.arange(values.shape[0]), "draw": np.arange(values.shape[1])}
    posterior = xr.Dataset(
        {"value": (("chain", "draw", "group"), values), "difference": (("chain", "draw", "pair"), diffs)},
        coords={"group": names, "pair": pair_labels, "pair_a": ("pair", [names[i] for i, _ in pairs]),
                "pair_b": ("pair", [names[j] for _, j in pairs]), **sample},
    )
    count_ds = xr.Dataset({k: ("group", np.asarray(v)) for k, v in counts.items()}, coords={"group": names})
    for key, (dims, arr, coords) in (extra_counts or {}).items():
        count_ds[key] = xr.DataArray(arr, dims=dims, coords=coords)
    tree = conjugate_datatree(
        posterior, observed_data=xr.Dataset({"successes": ("group", np.asarray(counts["successes"]))},
                                            coords={"group": names}),
        log_likelihood=xr.Dataset({"successes": (("chain", "draw", "group"), loglik)}, coords={"group": names, **sample}),
        attrs={"inference": inference},
    )
    tree["constant_data"] = xr.Dataset({"n": ("group", np.asarray(counts["n"]))}, coords={"group": names})
    tree = keep_observed_cells(tree, "group", counts["n"])
    if fit_idata is not None and "sample_stats" in fit_idata.children:
        tree["sample_stats"] = fit_idata["sample_stats"].to_dataset()
    return ComparisonResult(posterior, count_ds, prior=prior, data_summary=data_summary, inference=inference,
                            ci_prob=ci_prob, idata=tree, diagnostics=diagnostics,
                            options={"metric": metric, "rope": rope, **options}, model=model)


# ---------------------------------------------------------------------------- groups
def compare_groups(
    predictions: Any,
    by: str,
    *,
    metric: str = "accuracy",
    rope: float = 0.0,
    groups: Sequence[str] | None = None,
    prior: str = "uniform",
    pseudocount: float = DEFAULT_PSEUDOCOUNT,
    bins: int = DEFAULT_BINS,
    ci_prob: float = CI_PROB,
    seed: Any = None,
    inference: str | None = None,
    sample_kwargs: Mapping[str, Any] | None = None,
    draws: int | None = None,
    engine: str | None = None,
    **sampler: Any,
) -> ComparisonResult:
    """Posterior of a metric per group and of the difference between every pair of groups.

    Parameters
    ----------
    predictions : Predictions, pandas.DataFrame or arrays
        The pool (anything :func:`pbassess.data.as_predictions` accepts); labeled items inform the metric, all items the pool weights (ECE) and mean
        confidence (calibration bias).
    by : str
        The group column (e.g. ``"sex"``).
    metric : {"accuracy", "tpr", "fpr", "calibration-bias", "ece"}
    rope : float, default 0
        Half-width r of the region of practical equivalence of the difference.
    groups : sequence of str, optional
        The groups to compare, in this order (default: all values, sorted).
    prior : {"uniform", "informed"}, callable or dict
        Beta(pc/2, pc/2), or Beta(pc s, pc (1 - s)) with s the group's score-implied metric; or a
        user's PyMC prior of the per-group rate (dims ``cell``; see
        :mod:`pbassess.pymc_models.priors`), which needs ``inference="nuts"``.
    pseudocount : float
        Prior strength pc.
    bins : int
        Equal-width confidence bins for ``ece``.
    draws : int, optional
        Posterior draws: of the conjugate inference (default 4000), or per chain for NUTS.
    inference : {"conjugate", "nuts"}
        Exact Beta draws (default) or NUTS on the same model (``engine=``/``"mcmc"``: aliases).
    sample_kwargs : dict, optional
        ``pm.sample`` options for NUTS (see :func:`pbassess.inference.merge_sample_kwargs`).
    ci_prob : float
    seed : int or Generator, optional
    **sampler
        Old spelling of NUTS settings (``tune``, ``chains``, ``target_accept``, ``sampler``),
        merged into ``sample_kwargs``.

    Returns
    -------
    ComparisonResult

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_binary_scores([0.9, 0.8, 0.2, 0.7, 0.1, 0.6], [1, 1, 0, 0, 0, 1],
    ...                                    groups={"sex": ["F", "F", "F", "M", "M", "M"]})
    >>> r = compare_groups(p, "sex", rope=0.05, seed=0)
    >>> out = r.to_json()
    >>> out["groups"], out["pairs"][0]["a"], len(out["pairs"][0]["rope"])
    (['F', 'M'], 'F', 3)
    """
    metric = _metric_name(metric)
    rope = check_rope(rope)
    inference, n_draws, ci_prob, kwargs = _settings(inference, engine, draws, ci_prob, sample_kwargs, sampler)
    predictions = as_pool(predictions)
    rng = as_generator(seed)
    present = group_names(predictions, by)
    names = [str(g) for g in groups] if groups is not None else present
    missing = [g for g in names if g not in present]
    if missing:
        raise DataError(f"group column {by!r} has no value {missing[0]!r} (values: {', '.join(present[:8])})")
    if len(names) < 2:
        raise DataError(f"group column {by!r} needs at least two groups to compare, got {len(names)}")
    if predictions.n_labeled == 0:
        raise DataError("the comparison needs labels, but no item is labeled")
    cells = group_cells(predictions, by, names, "accuracy" if metric == "ece" else metric)
    user_prior = prior if is_pymc_prior(prior) else None
    if user_prior is not None and (inference != "nuts" or metric == "ece"):
        raise ConfigError("a PyMC prior (callable or dict) needs inference='nuts' and a rate metric (not ece)")
    pairs = pair_list(names)
    if metric == "ece":
        spec, n, k = _group_ece_spec(predictions, by, names, bins, prior, pseudocount, pairs)
    else:
        n, k = cells["n"], cells["k"]
        alpha, beta = beta_prior_params("uniform" if user_prior else prior, pseudocount, cells["prior_mean"])
        rates = BetaBernoulliSpec(n, k, alpha, beta, dim="cell", coords=names, user_prior=user_prior,
                                  observations=_group_observations(predictions, by, names, metric))
        spec = GroupComparisonSpec(rates, names, pairs,
                                   offset=cells["mean_conf"] if metric == "calibration-bias" else None)
    fitted = fit(spec, inference=inference, draws=n_draws, seed=rng, sample_kwargs=kwargs)
    return _result_from_fit(
        fitted, spec, {"n": n, "successes": k, "n_items": cells["n_items"]}, metric=metric, rope=rope,
        prior={"kind": "pymc" if user_prior else prior, "pseudocount": pseudocount},
        data_summary={**predictions.describe(), "by": by}, ci_prob=ci_prob,
        options={"by": by, "mode": "groups", "bins": bins, "draws": n_draws if inference == "conjugate" else None},
    )


def _group_observations(preds: Any, by: str, names: Sequence[str], metric: str, *, bins: np.ndarray | None = None):
    """Each labeled item's cell (its group, or group x bin) and success for ``metric``, or None (lazy pool)."""
    from pbassess.counting import assign_bins
    from pbassess.inference import Observations

    def cells(p: Any):
        index = {name: i for i, name in enumerate(names)}
        cell = np.array([index.get(str(v), -1) for v in p.group(by)], dtype=np.int64)
        if bins is not None:
            cell = np.where(cell >= 0, cell * (bins.size - 1) + assign_bins(p.confidence, bins), -1)
        if metric in ("tpr", "fpr"):  # trials: the labeled positives (TPR) or negatives (FPR)
            cell = np.where(p.labels == (1 if metric == "tpr" else 0), cell, -1)
            return cell, p.predicted == 1
        return cell, p.correct

    return Observations.of_pool(preds, cells)


def _group_ece_spec(preds: Any, by: str, names: Sequence[str], bins: int, prior: str, pseudocount: float,
                    pairs: list[tuple[int, int]]):
    """The ECE comparison: Beta cells per group x bin, each group's ECE derived from its cells."""
    from pbassess.counting import count_cells

    edges = bin_edges(bins=bins)
    table = count_cells(preds, (by, "bin"), bin_edges=edges)
    index = {str(v): i for i, v in enumerate(table[by].to_numpy().tolist())}
    table = table.isel({by: [index[g] for g in names]})
    n, k = table["n"].to_numpy(), table["correct"].to_numpy()
    pool, ssum = table["n_pool"].to_numpy(), table["score_sum_pool"].to_numpy()
    centre = (edges[:-1] + edges[1:]) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(pool > 0, ssum / np.maximum(pool, 1), centre)
    weights = pool / np.maximum(pool.sum(axis=1, keepdims=True), 1)
    alpha, beta = beta_prior_params(prior, pseudocount, score.ravel())
    labels = [f"{g} bin {b}" for g in names for b in range(edges.size - 1)]
    cells = BetaBernoulliSpec(n.ravel(), k.ravel(), alpha, beta, dim="cell", coords=labels,
                              observations=_group_observations(preds, by, names, "ece", bins=edges))
    return GroupComparisonSpec(cells, names, pairs, ece={"weight": weights, "score": score}), n.sum(axis=1), k.sum(axis=1)


def _result_from_fit(fitted: Any, spec: Any, counts: dict[str, Any], *, metric: str, rope: float,
                     prior: dict[str, Any], data_summary: dict[str, Any], ci_prob: float,
                     options: dict[str, Any]) -> ComparisonResult:
    """A ComparisonResult over the fit layer's DataTree (its ``value`` and ``difference``, pair labels added)."""
    names, pairs = spec.groups, spec.pairs
    posterior = fitted.idata["posterior"].to_dataset()[["value", "difference"]]
    count_ds = xr.Dataset({key: ("group", np.asarray(v)) for key, v in counts.items()}, coords={"group": names})
    # which groups each pair compares (kept beside the counts: non-index coordinates on the posterior
    # would stop az.summary from stacking its variables)
    count_ds["pair_a"] = xr.DataArray([names[i] for i, _ in pairs], dims="pair", coords={"pair": spec.pair_labels})
    count_ds["pair_b"] = xr.DataArray([names[j] for _, j in pairs], dims="pair", coords={"pair": spec.pair_labels})
    return ComparisonResult(posterior, count_ds, prior=prior, data_summary=data_summary, inference=fitted.inference,
                            ci_prob=ci_prob, idata=fitted.idata, diagnostics=fitted.diagnostics,
                            options={"metric": metric, "rope": rope, **options}, model=fitted.sampled_model)


# ---------------------------------------------------------------------------- models
def _paired_indicators(pred: Any, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """(relevant labeled items mask, per-item success indicator) of one model."""
    if metric in ("accuracy", "calibration-bias", "ece"):
        return pred.labeled, pred.correct
    truth = 1 if metric == "tpr" else 0
    if pred.n_classes != 2:
        raise DataError(f"TPR/FPR need a binary classifier, but {pred.name!r} has {pred.n_classes} classes")
    return pred.labeled & (pred.labels == truth), pred.predicted == 1


def _check_same_items(names: list[str], preds: list[Any]) -> None:
    if len(preds) < 2:
        raise DataError(f"comparing models needs at least two, got {len(preds)}")
    if len(set(names)) != len(names):
        raise DataError("model names must be unique")
    ref = preds[0]
    for name, p in zip(names[1:], preds[1:], strict=True):
        if p.n_items != ref.n_items or not np.array_equal(p.item_ids, ref.item_ids):
            raise DataError(f"model {name!r} is not scored on the same items as {names[0]!r} (item ids differ)")
        if not np.array_equal(p.labels, ref.labels):
            raise DataError(f"model {name!r} has different labels from {names[0]!r} on the same items")


def _model_ece(preds: list[Any], sel: np.ndarray, bins: int, pc: float, names: list[str], **fit: Any):
    from pbassess.counting import count_cells

    edges = bin_edges(bins=bins)
    tables = [count_cells(p if sel.all() else p.subset(sel), ("bin",), bin_edges=edges) for p in preds]
    cells = {key: np.stack([t[var].to_numpy() for t in tables]) for key, var in
             (("n", "n"), ("k", "correct"), ("n_pool", "n_pool"), ("score_sum_pool", "score_sum_pool"))}
    return _ece_fit(cells, edges, "uniform", pc, names, **fit)


def _paired_fit(preds: list[Any], sel: np.ndarray, metric: str, pc: float, names: list[str], **fit: Any):
    """Marginal Beta fits per model and the paired Dirichlet fit per pair (joint outcomes per item)."""
    pairs = pair_list(names)
    relevant, success = zip(*(_paired_indicators(p, metric) for p in preds), strict=True)
    rel = relevant[0] & sel
    n = np.full(len(names), int(rel.sum()))
    k = np.array([int(s[rel].sum()) for s in success])
    joint = np.array([[int((success[i][rel] & success[j][rel]).sum()), int((success[i][rel] & ~success[j][rel]).sum()),
                       int((~success[i][rel] & success[j][rel]).sum()), int((~success[i][rel] & ~success[j][rel]).sum())]
                      for i, j in pairs])
    pi = dirichlet_fit(np.full((len(pairs), 4), pc / 4), joint, **{k_: v for k_, v in fit.items()})
    marg = beta_fit(np.full(len(names), pc / 2), np.full(len(names), pc / 2), n, k, names=names, **fit)
    return marg, pi, n, k, joint


def compare_models(
    models: Mapping[str, Any] | Sequence[Any],
    *,
    metric: str = "accuracy",
    rope: float = 0.0,
    mask: Any = None,
    pseudocount: float = DEFAULT_PSEUDOCOUNT,
    bins: int = DEFAULT_BINS,
    ci_prob: float = CI_PROB,
    seed: Any = None,
    inference: str | None = None,
    sample_kwargs: Mapping[str, Any] | None = None,
    draws: int | None = None,
    engine: str | None = None,
    **sampler: Any,
) -> ComparisonResult:
    """Compare models scored on the same items, with the paired Dirichlet-multinomial model.

    Parameters
    ----------
    models : mapping of name to Predictions, or sequence of Predictions
        Two or more prediction sets with the same item ids and labels (e.g. two ``score_*``
        columns of one file).
    metric : {"accuracy", "tpr", "fpr", "calibration-bias", "ece"}
    rope : float
        ROPE half-width of the differences.
    mask : array of bool, optional
        Restrict to these items (e.g. one group).
    pseudocount : float
        Dirichlet(pc/4 x 4) prior on the joint outcome (uniform Beta(pc/2, pc/2) marginals).
    bins, draws, inference, sample_kwargs, ci_prob, seed, **sampler
        As for :func:`compare_groups`.

    Returns
    -------
    ComparisonResult
        Groups are the model names; ``counts["joint"]`` holds the (pair, outcome) counts.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> y = [1, 1, 0, 0, 1, 0]
    >>> a = Predictions.from_binary_scores([0.9, 0.8, 0.2, 0.3, 0.7, 0.1], y)
    >>> b = Predictions.from_binary_scores([0.9, 0.4, 0.6, 0.3, 0.7, 0.1], y)
    >>> r = compare_models({"A": a, "B": b}, seed=0)
    >>> r.counts["joint"].sel(pair="A - B").to_numpy().tolist()
    [4, 2, 0, 0]
    """
    metric = _metric_name(metric)
    rope = check_rope(rope)
    inference, n_draws, ci_prob, kwargs = _settings(inference, engine, draws, ci_prob, sample_kwargs, sampler)
    rng = as_generator(seed)
    if not isinstance(models, Mapping):
        models = {getattr(p, "name", f"model{i}"): p for i, p in enumerate(models)}
    names = [str(n) for n in models]
    preds = [as_pool(p) for p in models.values()]
    _check_same_items(names, preds)
    ref = preds[0]
    sel = np.ones(ref.n_items, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    if sel.shape != (ref.n_items,):
        raise DataError(f"mask has shape {sel.shape} for {ref.n_items} items")
    pc = float(pseudocount)
    if not pc > 0:
        raise ConfigError(f"the pseudocount must be positive, got {pseudocount}")
    pairs = pair_list(names)
    fit_opts = {"inference": inference, "draws": n_draws, "rng": rng, "sample_kwargs": kwargs}
    extra = None
    if metric == "ece":
        marg, n, k = _model_ece(preds, sel, bins, pc, names, **fit_opts)
        values, diag = marg["theta"], marg["diagnostics"]
        diffs = np.stack([values[..., i] - values[..., j] for i, j in pairs], axis=-1)
    else:
        marg, pi, n, k, joint = _paired_fit(preds, sel, metric, pc, names, **fit_opts)
        values, diffs = marg["theta"], pi["theta"][..., 1] - pi["theta"][..., 2]
        diag = merge_diagnostics(marg["diagnostics"], pi["diagnostics"])
        if metric == "calibration-bias":
            mean_conf = np.array([np.asarray(p.confidence, dtype=float)[sel].mean() for p in preds])
            values = mean_conf - values
            diffs = np.stack([np.full(diffs.shape[:2], mean_conf[i] - mean_conf[j]) for i, j in pairs], axis=-1) - diffs
        labels = [f"{names[i]} - {names[j]}" for i, j in pairs]
        extra = {"joint": (("pair", "outcome"), joint, {"pair": labels, "outcome": list(OUTCOMES)})}
    return _build_result(
        values, diffs, names, pairs, {"n": n, "successes": k, "n_items": np.full(len(names), int(sel.sum()))},
        loglik=marg["loglik"], fit_idata=marg["idata"], diagnostics=diag, metric=metric, rope=rope,
        prior={"kind": "uniform", "pseudocount": pc, "paired": "Dirichlet(pc/4 x 4) on the joint outcome"},
        data_summary={**ref.describe(), "models": names}, inference=inference, ci_prob=ci_prob,
        options={"by": "model", "mode": "models", "bins": bins, "draws": n_draws if inference == "conjugate" else None},
        extra_counts=extra,
    )

