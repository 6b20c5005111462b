"""Posterior fits behind the comparisons: group counts, Beta and Dirichlet fits of both inferences, the DataTree.

Group counts come from :func:`pbassess.counting.count_cells`; a fit returns draws shaped
``(chain, draw, cell)``, the pointwise log-likelihood of each cell's successes, and for NUTS the
fit's DataTree pieces and diagnostics, so that a comparison result is a DataTree like every
other result.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
import xarray as xr

from pbassess.errors import ConfigError, DataError
from pbassess.stats import beta_draws, dirichlet_draws

__all__ = ["Fit", "beta_fit", "beta_prior_params", "dirichlet_fit", "group_cells", "merge_diagnostics", "pair_list"]


class Fit(dict):
    """Draws (``theta``: chain, draw, cell), ``loglik`` (same shape), ``idata`` (NUTS) and ``diagnostics``."""


def pair_list(names: Sequence[str]) -> list[tuple[int, int]]:
    """Every pair (i, j), i < j."""
    return list(itertools.combinations(range(len(names)), 2))


def beta_prior_params(prior: str, pseudocount: float, mean: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Beta(pc/2, pc/2) (uniform) or Beta(pc s, pc (1 - s)) (informed, s clipped to [0.001, 0.999])."""
    pc = float(pseudocount)
    if not np.isfinite(pc) or pc <= 0:
        raise ConfigError(f"the pseudocount must be positive, got {pseudocount}")
    if prior == "uniform":
        return np.full(mean.shape, pc / 2), np.full(mean.shape, pc / 2)
    if prior == "informed":
        s = np.clip(mean, 1e-3, 1 - 1e-3)
        return pc * s, pc * (1 - s)
    raise ConfigError(f"unknown prior {prior!r} (choose 'uniform' or 'informed')")


def _select(cells: xr.Dataset, dim: str, names: Sequence[str]) -> xr.Dataset:
    index = {str(v): i for i, v in enumerate(cells[dim].to_numpy().tolist())}
    missing = [g for g in names if g not in index]
    if missing:
        raise DataError(f"group column {dim!r} has no value {missing[0]!r} (values: {', '.join(list(index)[:8])})")
    return cells.isel({dim: [index[g] for g in names]})


def group_names(preds: Any, by: str) -> list[str]:
    """The distinct values of group column ``by`` (sorted, as text)."""
    from pbassess.counting import count_cells

    if by not in preds.groups:
        preds.group(by)  # the data layer's one-line error for an unknown column
    return [str(v) for v in count_cells(preds, (by,))[by].to_numpy().tolist()]


def group_cells(preds: Any, by: str, names: Sequence[str], metric: str) -> dict[str, np.ndarray]:
    """Trials ``n``, successes ``k``, prior mean, pool size and mean confidence per group (count_cells only)."""
    from pbassess.counting import count_cells

    pool = _select(count_cells(preds, (by,)), by, names)
    n_items = pool["n_pool"].to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = np.where(n_items > 0, pool["score_sum_pool"].to_numpy() / np.maximum(n_items, 1), 0.5)
    out = {"n_items": n_items, "mean_conf": mean_conf}
    if metric in ("accuracy", "calibration-bias"):
        return {**out, "n": pool["n"].to_numpy(), "k": pool["correct"].to_numpy(), "prior_mean": mean_conf}
    if preds.n_classes != 2:
        raise DataError(f"TPR/FPR need a binary classifier, but {preds.name!r} has {preds.n_classes} classes")
    truth = _select(count_cells(preds, (by, "true")), by, names)
    by_pred = _select(count_cells(preds, (by, "predicted")), by, names)
    ssp, npl = by_pred["score_sum_pool"].to_numpy(), by_pred["n_pool"].to_numpy()
    # s = P(positive) per item: the confidence when predicted positive, 1 - confidence otherwise.
    pos_score, neg_score = ssp[:, 1], npl[:, 0] - ssp[:, 0]
    if metric == "tpr":
        n, k = truth["n"].to_numpy()[:, 1], truth["correct"].to_numpy()[:, 1]
        num, den = pos_score, pos_score + neg_score
    else:
        n = truth["n"].to_numpy()[:, 0]
        k = n - truth["correct"].to_numpy()[:, 0]
        num, den = npl[:, 1] - ssp[:, 1], (npl[:, 1] - ssp[:, 1]) + ssp[:, 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        prior_mean = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.5)
    return {**out, "n": n, "k": k, "prior_mean": prior_mean}


def beta_fit(alpha: np.ndarray, beta: np.ndarray, n: np.ndarray, k: np.ndarray, *, inference: str, draws: int,
             rng: np.random.Generator, sample_kwargs: dict[str, Any], names: Sequence[str], user_prior: Any = None) -> Fit:
    """Independent Beta-binomial cells: exact draws, or NUTS on the Beta-binomial model (or a user's PyMC prior)."""
    from pbassess.inference import binomial_loglik

    if inference == "conjugate":
        theta = beta_draws(alpha + k, beta + n - k, draws, seed=rng)[None]
        return Fit(theta=theta, loglik=binomial_loglik(n, k, theta), idata=None, diagnostics=None)
    from pbassess.inference import diagnostics, sample_model
    from pbassess.pymc_models.accuracy import beta_binomial_model

    model = beta_binomial_model(n, k, alpha, beta, dim="cell", coords=list(names), user_prior=user_prior)
    idata = sample_model(model, seed=rng, sample_kwargs=sample_kwargs, log_likelihood=["correct"])
    theta = idata["posterior"]["accuracy"].transpose("chain", "draw", "cell").to_numpy()
    loglik = idata["log_likelihood"]["correct"].transpose("chain", "draw", "cell").to_numpy()
    return Fit(theta=theta, loglik=loglik, idata=idata, diagnostics=diagnostics(idata, var_names=["accuracy"]),
               model=model)


def dirichlet_fit(alpha: np.ndarray, counts: np.ndarray, *, inference: str, draws: int, rng: np.random.Generator,
                  sample_kwargs: dict[str, Any]) -> Fit:
    """Independent Dirichlet-multinomial rows (pairs x 4 outcomes): exact draws, or NUTS."""
    if inference == "conjugate":
        return Fit(theta=dirichlet_draws(alpha + counts, draws, seed=rng)[None], idata=None, diagnostics=None)
    import pymc as pm

    from pbassess.inference import diagnostics, sample_model

    with pm.Model() as model:
        pi = pm.Dirichlet("pi", a=alpha, shape=alpha.shape)
        pm.Multinomial("joint", n=counts.sum(axis=1), p=pi, observed=counts)
    idata = sample_model(model, seed=rng, sample_kwargs=sample_kwargs, log_likelihood=False)
    theta = idata["posterior"]["pi"].transpose("chain", "draw", ...).to_numpy()
    return Fit(theta=theta, idata=idata, diagnostics=diagnostics(idata, var_names=["pi"]))


def merge_diagnostics(*diags: dict[str, Any] | None) -> dict[str, Any] | None:
    """One diagnostics dict from several fits: worst R-hat and ESS, summed divergences, all problems."""
    found = [d for d in diags if d]
    if not found:
        return None
    out = dict(found[0])
    for d in found[1:]:
        for key, pick in (("max_rhat", max), ("max_rhat_elementwise", max), ("min_ess_bulk", min),
                          ("min_ess_tail", min)):
            values = [v for v in (out.get(key), d.get(key)) if v is not None]
            out[key] = pick(values) if values else None
        out["divergences"] = int(out.get("divergences", 0)) + int(d.get("divergences", 0))
        out["problems"] = list(out.get("problems", [])) + list(d.get("problems", []))
    out["ok"] = all(d.get("ok", True) for d in found)
    return out
