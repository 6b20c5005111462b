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
import xarray as xr

from pbassess.errors import ConfigError
from pbassess.inference.spec import Spec
from pbassess.pymc_models.accuracy import (
    BetaBernoulliSpec,
    beta_variable,
    check_beta_params,
    check_counts,
)

__all__ = ["CLASSWISE_KEYS", "CalibrationSpec", "class_bin_labels", "occupied_cells", "reliability_model"]

#: Arrays the ``classwise`` block of :func:`reliability_model` needs (K classes, B bins).
CLASSWISE_KEYS: tuple[str, ...] = (
    "class_bin_n", "class_bin_correct", "class_bin_alpha", "class_bin_beta", "class_bin_weight",
    "class_bin_score", "class_n", "class_correct", "class_alpha", "class_beta", "class_score",
)


def occupied_cells(class_bin_weight: Any) -> np.ndarray:
    """Flat indices (row-major over class x bin) of the cells holding pool items.

    Examples
    --------
    >>> occupied_cells([[0.5, 0.0], [0.0, 1.0]]).tolist()
    [0, 3]
    """
    return np.flatnonzero(np.asarray(class_bin_weight).ravel() > 0)


def class_bin_labels(classes: Sequence[Any], bins: Sequence[Any], cells: np.ndarray) -> list[str]:
    """``"class|bin"`` names of flat class x bin cells.

    Examples
    --------
    >>> class_bin_labels(["a", "b"], [0, 1], np.array([0, 3]))
    ['a|0', 'b|1']
    """
    n_bins = len(bins)
    return [f"{classes[c // n_bins]}|{bins[c % n_bins]}" for c in np.asarray(cells, dtype=np.int64)]


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

    Classwise block (dims ``class_bin`` and ``class``), when ``classwise`` is given::

        classwise_accuracy[c] ~ Beta(class_bin_alpha, class_bin_beta)    for each occupied cell c = (k, b)
        classwise_correct[c]  ~ Binomial(class_bin_n, classwise_accuracy)
        classwise_ece[k] = sum_b class_bin_weight[k, b] |classwise_accuracy[k, b] - class_bin_score[k, b]|
        class_accuracy[k] ~ Beta(class_alpha, class_beta);  class_correct[k] ~ Binomial(class_n, class_accuracy)
        bias[k] = class_score[k] - class_accuracy[k]                  (Deterministic)

    Only the class x bin cells holding pool items (``class_bin_weight > 0``; dim ``class_bin``,
    named ``"class|bin"``) are variables: an empty cell has weight 0 in its class's ECE and no
    labels, so it would be sampled from its prior and change nothing (at 100 classes x 15 bins
    most cells are empty).

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
            occ = occupied_cells(cw["p"])
            model.add_coord("class_bin", class_bin_labels(coords["class"], coords["bin"], occ))
            row = occ // n_bins
            theta_kb, logit_kb = beta_variable("classwise_accuracy", cw["a"].ravel()[occ], cw["b"].ravel()[occ],
                                               dims="class_bin")
            pm.Binomial("classwise_correct", n=cw["n"].ravel()[occ], logit_p=logit_kb, observed=cw["k"].ravel()[occ],
                        dims="class_bin")
            gap = cw["p"].ravel()[occ] * pt.abs(theta_kb - cw["s"].ravel()[occ])
            pm.Deterministic("classwise_ece", pt.zeros(len(coords["class"]))[row].inc(gap), dims="class")
            theta_k, logit_k = beta_variable("class_accuracy", cw["ka"], cw["kb"], dims="class")
            pm.Binomial("class_correct", n=cw["kn"], logit_p=logit_k, observed=cw["kk"], dims="class")
            pm.Deterministic("bias", cw["ks"] - theta_k, dims="class")
    return model


# ---------------------------------------------------------------------------- the spec
class CalibrationSpec(Spec):
    """The reliability model as a spec: three independent Beta-Bernoulli blocks and the ECEs derived from them.

    Blocks (each a :class:`~pbassess.pymc_models.accuracy.BetaBernoulliSpec`): per-bin accuracy
    (``accuracy``, dim ``bin``; its labeled items are the observations, so LOO and the
    log-likelihood are per item of the reliability diagram), and with ``classwise`` the occupied
    class x bin cells (``classwise_accuracy``, dim ``class_bin``) and the classes
    (``class_accuracy``). Derived for both inferences alike: ``ece = sum_b p_b |accuracy_b - s_b|``,
    ``classwise_ece`` and ``bias = class_score - class_accuracy``.

    Parameters
    ----------
    c : dict
        The counts of :func:`pbassess.assess.calibration.assess_calibration` (``n_labeled``,
        ``correct``, ``prior_alpha``, ``prior_beta``, ``bin_weight``, ``bin_score``, and the
        :data:`CLASSWISE_KEYS` arrays for the classwise block).
    classes : sequence of str or None
        Class names; ``None``: no classwise block.
    observations : Observations, optional
        Each labeled item's bin and correctness.

    Examples
    --------
    >>> from pbassess.inference import fit
    >>> c = {"n_labeled": np.array([4, 6]), "correct": np.array([1, 5]), "prior_alpha": np.array([0.5, 1.5]),
    ...      "prior_beta": np.array([1.5, 0.5]), "bin_weight": np.array([0.4, 0.6]), "bin_score": np.array([0.25, 0.75])}
    >>> post = fit(CalibrationSpec(c, None), draws=400, seed=0).idata["posterior"]
    >>> sorted(post.data_vars)
    ['accuracy', 'accuracy_asinh_logit', 'ece']
    """

    name = "calibration"
    observed_name = "correct"
    # per-bin Betas in asinh-logit coordinates, as BetaBernoulliSpec: at PyMC's 0.8 the digits fit of the
    # contract test had one divergent transition in 4 x 500 draws (nutpie 0.16.11, PyMC 6.3.2)
    nuts_defaults = {"target_accept": 0.9}

    def __init__(self, c: Mapping[str, Any], classes: Sequence[str] | None, *, observations: Any = None) -> None:
        self.c = c
        n_bins = int(np.asarray(c["n_labeled"]).size)
        bins = list(range(n_bins))
        self.weight = np.asarray(c["bin_weight"], dtype=float)
        self.score = np.asarray(c["bin_score"], dtype=float)
        self.blocks = [BetaBernoulliSpec(c["n_labeled"], c["correct"], c["prior_alpha"], c["prior_beta"], dim="bin",
                                         coords=bins, observations=observations)]
        self.coords: dict[str, Any] = {"bin": bins}
        self.reported = {"accuracy": ("bin",), "ece": ()}
        self.classes = None if classes is None else [str(k) for k in classes]
        if self.classes is not None:
            occ = occupied_cells(c["class_bin_weight"])
            self.occupied = occ
            self.cell_class = occ // n_bins
            self.cell_weight = np.asarray(c["class_bin_weight"], dtype=float).ravel()[occ]
            self.cell_score = np.asarray(c["class_bin_score"], dtype=float).ravel()[occ]
            self.class_score = np.asarray(c["class_score"], dtype=float)
            labels = class_bin_labels(self.classes, bins, occ)
            flat = {key: np.asarray(c[key]).ravel()[occ]
                    for key in ("class_bin_n", "class_bin_correct", "class_bin_alpha", "class_bin_beta")}
            self.blocks.append(BetaBernoulliSpec(flat["class_bin_n"], flat["class_bin_correct"], flat["class_bin_alpha"],
                                                 flat["class_bin_beta"], dim="class_bin", coords=labels,
                                                 var_name="classwise_accuracy"))
            self.blocks.append(BetaBernoulliSpec(c["class_n"], c["class_correct"], c["class_alpha"], c["class_beta"],
                                                 dim="class", coords=self.classes, var_name="class_accuracy"))
            self.coords.update({"class_bin": labels, "class": self.classes})
            self.reported.update({"classwise_ece": ("class",), "class_accuracy": ("class",), "bias": ("class",)})
        self.observations = observations
        self._model = None

    def conjugate_draws(self, n_draws, rng):
        return {k: v for block in self.blocks for k, v in block.conjugate_draws(n_draws, rng).items()}

    def prior_draws(self, n_draws, rng):
        return {k: v for block in self.blocks for k, v in block.prior_draws(n_draws, rng).items()}

    def model(self):
        if self._model is None:
            c = self.c
            block = {key: c[key] for key in CLASSWISE_KEYS} if self.classes is not None else None
            self._model = reliability_model(c["n_labeled"], c["correct"], c["prior_alpha"], c["prior_beta"], self.weight,
                                            self.score, classwise=block, bin_coords=self.coords["bin"],
                                            class_coords=self.classes)
        return self._model

    def complete(self, draws):
        out = {k: v for block in self.blocks for k, v in block.complete(draws).items()}
        theta = out["accuracy"][1]
        out["ece"] = ((), np.sum(self.weight * np.abs(theta - self.score), axis=-1))
        if self.classes is not None:
            from scipy import sparse

            cells = out["classwise_accuracy"][1]
            lead = cells.shape[:-1]
            member = sparse.csr_matrix((self.cell_weight, (np.arange(self.occupied.size), self.cell_class)),
                                       shape=(self.occupied.size, len(self.classes)))
            gap = np.abs(cells - self.cell_score).reshape(-1, self.occupied.size)
            out["classwise_ece"] = (("class",), np.asarray(gap @ member).reshape(*lead, -1))
            out["bias"] = (("class",), self.class_score - out["class_accuracy"][1])
        return out

    def log_likelihood(self, draws, per_item):
        return self.blocks[0].log_likelihood(draws, per_item)

    def log_prior(self, draws):
        return {k: v for block in self.blocks for k, v in block.log_prior(draws).items()}

    def exact_loo_pointwise(self):
        return self.blocks[0].exact_loo_pointwise()

    def observed_data(self) -> xr.Dataset:
        return self.blocks[0].observed_data()

    def constant_data(self) -> xr.Dataset:
        data = self.blocks[0].constant_data().assign(bin_weight=("bin", self.weight), bin_score=("bin", self.score))
        if self.classes is not None:
            cells, classes = self.blocks[1].constant_data(), self.blocks[2].constant_data()
            data = data.assign({f"class_bin_{k}": v for k, v in cells.data_vars.items()})
            data = data.assign({f"class_{k}": v for k, v in classes.data_vars.items()})
        return data

    def cell_n(self) -> np.ndarray:
        return self.blocks[0].n

    @classmethod
    def from_tree(cls, tree: Any) -> BetaBernoulliSpec | None:
        """The per-bin block of a calibration fit (what its LOO is over), rebuilt from its DataTree.

        Examples
        --------
        >>> from pbassess.inference import fit
        >>> c = {"n_labeled": np.array([2]), "correct": np.array([1]), "prior_alpha": np.array([1.0]),
        ...      "prior_beta": np.array([1.0]), "bin_weight": np.array([1.0]), "bin_score": np.array([0.5])}
        >>> CalibrationSpec.from_tree(fit(CalibrationSpec(c, None), draws=8, seed=0).idata).n.tolist()
        [2]
        """
        return BetaBernoulliSpec.from_tree(tree, var_name="accuracy")
