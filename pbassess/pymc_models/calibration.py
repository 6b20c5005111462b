"""PyMC model of a Bayesian reliability diagram over bin counts, with ECE as a deterministic.

The model mirrors the conjugate calibration posterior of :mod:`pbassess.assess.calibration`:
independent Beta-binomial accuracies per score bin (and per predicted class x bin), each with a
Beta prior centred on the diagonal, and the expected calibration error of every draw as a
``pm.Deterministic``. Its blocks share no parameters, so each block's posterior is exactly the
conjugate one; the model exists as a cross-check and a starting point for extensions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from pbassess.errors import ConfigError
from pbassess.pymc_models.accuracy import beta_variable, check_beta_params, check_counts

__all__ = ["CLASSWISE_KEYS", "reliability_model"]

#: Arrays the ``classwise`` block of :func:`reliability_model` needs (K classes, B bins).
CLASSWISE_KEYS: tuple[str, ...] = (
    "class_bin_n", "class_bin_correct", "class_bin_alpha", "class_bin_beta", "class_bin_weight",
    "class_bin_score", "class_n", "class_correct", "class_alpha", "class_beta", "class_score",
)


def _weights(name: str, values: Any, shape: tuple[int, ...]) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.shape != shape:
        raise ConfigError(f"{name} has shape {arr.shape}, expected {shape}")
    if not np.all(np.isfinite(arr)) or (arr < 0).any():
        raise ConfigError(f"{name} must be finite and non-negative")
    return arr


def reliability_model(
    bin_n: Any,
    bin_correct: Any,
    bin_alpha: Any,
    bin_beta: Any,
    bin_weight: Any,
    bin_score: Any,
    *,
    classwise: Mapping[str, Any] | None = None,
    bin_coords: Sequence[Any] | None = None,
    class_coords: Sequence[Any] | None = None,
):
    """Bayesian reliability diagram: Beta-binomial accuracy per bin and the ECE posterior.

    Every Beta variable is created with :func:`pbassess.pymc_models.accuracy.beta_variable`
    (sampled on the asinh-logit scale; the Beta priors are exactly the ones below).

    Marginal block (dims ``bin``)::

        accuracy[b] ~ Beta(bin_alpha[b], bin_beta[b])
        correct[b]  ~ Binomial(bin_n[b], accuracy[b])
        ece = sum_b bin_weight[b] * |accuracy[b] - bin_score[b]|      (Deterministic)

    Classwise block (dims ``("class", "bin")`` and ``class``), when ``classwise`` is given::

        classwise_accuracy[k, b] ~ Beta(class_bin_alpha, class_bin_beta)
        classwise_correct[k, b]  ~ Binomial(class_bin_n, classwise_accuracy)
        classwise_ece[k] = sum_b class_bin_weight[k, b] |classwise_accuracy[k, b] - class_bin_score[k, b]|
        class_accuracy[k] ~ Beta(class_alpha, class_beta);  class_correct[k] ~ Binomial(class_n, class_accuracy)
        bias[k] = class_score[k] - class_accuracy[k]                  (Deterministic)

    Parameters
    ----------
    bin_n, bin_correct : array_like of int, shape (B,)
        Labeled items and correct labeled items per bin.
    bin_alpha, bin_beta : array_like, shape (B,)
        Prior Beta parameters per bin.
    bin_weight : array_like, shape (B,)
        p_b, the share of the pool in each bin.
    bin_score : array_like, shape (B,)
        s_b, the mean pool score per bin.
    classwise : mapping, optional
        The arrays named in :data:`CLASSWISE_KEYS`: ``class_bin_*`` of shape (K, B) and
        ``class_*`` of shape (K,).
    bin_coords, class_coords : sequence, optional
        Coordinates of the ``bin`` and ``class`` dims.

    Returns
    -------
    pymc.Model

    Examples
    --------
    >>> m = reliability_model([4, 6], [1, 5], [0.5, 1.5], [1.5, 0.5], [0.4, 0.6], [0.25, 0.75])
    >>> sorted(m.named_vars)
    ['accuracy', 'accuracy_asinh_logit', 'correct', 'ece']
    """
    import pymc as pm
    import pytensor.tensor as pt

    n, k = check_counts(bin_n, bin_correct, "bin")
    if n.ndim != 1:
        raise ConfigError(f"bin counts must be one value per bin, got shape {n.shape}")
    n_bins = n.shape[0]
    a, b = check_beta_params(bin_alpha, bin_beta, (n_bins,), "bin prior")
    p = _weights("bin_weight", bin_weight, (n_bins,))
    s = _weights("bin_score", bin_score, (n_bins,))
    coords: dict[str, Any] = {"bin": list(range(n_bins)) if bin_coords is None else list(bin_coords)}
    cw: dict[str, np.ndarray] = {}
    if classwise is not None:
        missing = [key for key in CLASSWISE_KEYS if key not in classwise]
        if missing:
            raise ConfigError(f"classwise block is missing {', '.join(missing)}")
        cn, ck = check_counts(classwise["class_bin_n"], classwise["class_bin_correct"], "class and bin")
        if cn.ndim != 2 or cn.shape[1] != n_bins:
            raise ConfigError(f"class_bin_n has shape {cn.shape}, expected (classes, {n_bins})")
        n_classes = cn.shape[0]
        ca, cb = check_beta_params(classwise["class_bin_alpha"], classwise["class_bin_beta"], cn.shape,
                                   "class x bin prior")
        kn, kk = check_counts(classwise["class_n"], classwise["class_correct"], "class")
        if kn.shape != (n_classes,):
            raise ConfigError(f"class_n has shape {kn.shape}, expected ({n_classes},)")
        ka, kb = check_beta_params(classwise["class_alpha"], classwise["class_beta"], (n_classes,), "class prior")
        cw = {
            "n": cn, "k": ck, "a": ca, "b": cb,
            "p": _weights("class_bin_weight", classwise["class_bin_weight"], cn.shape),
            "s": _weights("class_bin_score", classwise["class_bin_score"], cn.shape),
            "kn": kn, "kk": kk, "ka": ka, "kb": kb,
            "ks": _weights("class_score", classwise["class_score"], (n_classes,)),
        }
        coords["class"] = list(range(n_classes)) if class_coords is None else list(class_coords)
    with pm.Model(coords=coords) as model:
        theta, logit = beta_variable("accuracy", a, b, dims="bin")
        pm.Binomial("correct", n=n, logit_p=logit, observed=k, dims="bin")
        pm.Deterministic("ece", pt.sum(p * pt.abs(theta - s)))
        if cw:
            theta_kb, logit_kb = beta_variable("classwise_accuracy", cw["a"], cw["b"], dims=("class", "bin"))
            pm.Binomial("classwise_correct", n=cw["n"], logit_p=logit_kb, observed=cw["k"], dims=("class", "bin"))
            pm.Deterministic("classwise_ece", pt.sum(cw["p"] * pt.abs(theta_kb - cw["s"]), axis=1), dims="class")
            theta_k, logit_k = beta_variable("class_accuracy", cw["ka"], cw["kb"], dims="class")
            pm.Binomial("class_correct", n=cw["kn"], logit_p=logit_k, observed=cw["kk"], dims="class")
            pm.Deterministic("bias", cw["ks"] - theta_k, dims="class")
    return model
