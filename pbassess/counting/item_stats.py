"""Per-item statistics that :func:`~pbassess.counting.count_cells` can sum per cell.

An :class:`ItemStatistic` maps a block of items to one number per item (the NLL of the true
class, the Brier score, the predictive entropy, ...). Its function receives a dict of NumPy
arrays for the items of one block:

``predicted`` (int codes), ``confidence``, ``label`` (int codes), ``correct`` (bool) and,
when the pool has full probability vectors, ``probs`` (items x classes).

Statistics that need labels are only ever called on labeled items. The metric registry
(:mod:`pbassess.metrics`) declares each metric's statistic here, so a new metric with a new
per-item statistic is one :func:`register_item_statistic` call made by
:func:`pbassess.metrics.register_metric`. (Estimation's estimand, the mean of a statistic with
its observed and model-predicted faces, is :class:`pbassess.estimation.MeanEstimand`.)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from pbassess.errors import ConfigError

__all__ = [
    "PROB_FLOOR",
    "ItemStatistic",
    "get_item_statistic",
    "list_item_statistics",
    "register_item_statistic",
]

#: Probabilities are softened at this floor before taking logarithms (NLL).
PROB_FLOOR: float = 1e-8

ItemFunction = Callable[[Mapping[str, np.ndarray]], np.ndarray]


@dataclass(frozen=True)
class ItemStatistic:
    """A per-item statistic summed per cell as ``<name>_sum`` (and ``<name>_sq_sum``).

    Parameters
    ----------
    name : str
        Identifier; the count variables are ``<name>_sum`` and ``<name>_sq_sum``.
    func : callable
        ``func(items) -> ndarray`` of one float per item (see the module docstring).
    needs_labels : bool
        Whether it uses the true label (then summed over labeled items only).
    needs_probs : bool
        Whether it needs full probability vectors.
    bound : float
        An upper bound of ``|value|``; counting raises if a value exceeds it. The sums are exact
        in fixed point down to ``bound * 2**-67`` per item (see :mod:`pbassess.counting.exact_sums`).
    description : str
        One line for documentation and ``list_item_statistics``.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> from pbassess.counting import count_cells
    >>> gap = ItemStatistic("confidence_gap", lambda it: it["confidence"] - it["correct"], needs_labels=True,
    ...                     bound=1.0, description="confidence minus correctness")
    >>> p = Predictions.from_top1(["a", "a", "b"], [0.9, 0.6, 0.8], ["a", "b", None])
    >>> c = count_cells(p, item_stats=[gap])  # or register_item_statistic(gap), then by its name
    >>> c["confidence_gap_sum"].values.round(6).tolist()  # (0.9 - 1) + (0.6 - 0) for "a"; "b" has no label
    [0.5, 0.0]
    """

    name: str
    func: ItemFunction
    needs_labels: bool
    needs_probs: bool = False
    bound: float = 1024.0
    description: str = ""


_ITEM_STATISTICS: dict[str, ItemStatistic] = {}


def register_item_statistic(stat: ItemStatistic, *, overwrite: bool = False) -> ItemStatistic:
    """Add a per-item statistic to the table ``count_cells(item_stats=...)`` reads.

    Parameters
    ----------
    stat : ItemStatistic
    overwrite : bool
        Replace a statistic of the same name (else that is an error).

    Returns
    -------
    ItemStatistic
        ``stat`` itself.

    Examples
    --------
    >>> import numpy as np
    >>> s = register_item_statistic(ItemStatistic("half_conf", lambda it: it["confidence"] / 2,
    ...                                           needs_labels=False, bound=1.0), overwrite=True)
    >>> get_item_statistic("half_conf").needs_labels
    False
    """
    if not stat.name.isidentifier():
        raise ConfigError(f"per-item statistic names must be identifiers, got {stat.name!r}")
    if stat.name in _ITEM_STATISTICS and not overwrite and _ITEM_STATISTICS[stat.name] != stat:
        raise ConfigError(f"a per-item statistic named {stat.name!r} is already registered")
    _ITEM_STATISTICS[stat.name] = stat
    return stat


def get_item_statistic(name: str) -> ItemStatistic:
    """The registered per-item statistic called ``name``.

    Parameters
    ----------
    name : str

    Returns
    -------
    ItemStatistic

    Examples
    --------
    >>> get_item_statistic("nll").needs_probs
    True
    """
    try:
        return _ITEM_STATISTICS[name]
    except KeyError:
        raise ConfigError(
            f"unknown per-item statistic {name!r} (available: {', '.join(sorted(_ITEM_STATISTICS))})"
        ) from None


def list_item_statistics() -> list[str]:
    """Names of the registered per-item statistics, sorted.

    Returns
    -------
    list of str

    Examples
    --------
    >>> {"brier", "entropy", "nll"} <= set(list_item_statistics())
    True
    """
    return sorted(_ITEM_STATISTICS)


def _true_class_prob(items: Mapping[str, np.ndarray]) -> np.ndarray:
    probs = items["probs"]
    return probs[np.arange(probs.shape[0]), items["label"]]


def _nll(items: Mapping[str, np.ndarray]) -> np.ndarray:
    return -np.log(np.maximum(_true_class_prob(items), PROB_FLOOR))


def _brier(items: Mapping[str, np.ndarray]) -> np.ndarray:
    probs = items["probs"]
    p_true = _true_class_prob(items)
    # sum_k (p_k - 1[k = y])^2 = sum_k p_k^2 - 2 p_y + 1
    return np.einsum("ij,ij->i", probs, probs) - 2.0 * p_true + 1.0


def _entropy(items: Mapping[str, np.ndarray]) -> np.ndarray:
    probs = items["probs"]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(probs > 0, probs * np.log(np.where(probs > 0, probs, 1.0)), 0.0)
    return -terms.sum(axis=1)


for _stat in (
    ItemStatistic("correct", lambda it: it["correct"].astype(np.float64), True, bound=1.0,
                  description="1 if the top-1 prediction equals the label"),
    ItemStatistic("error", lambda it: 1.0 - it["correct"], True, bound=1.0,
                  description="1 if the top-1 prediction differs from the label"),
    ItemStatistic("confidence", lambda it: np.asarray(it["confidence"], dtype=np.float64), False,
                  bound=1.0, description="probability of the predicted class"),
    ItemStatistic("calibration_bias", lambda it: it["confidence"] - it["correct"], True, bound=1.0,
                  description="confidence minus correctness (over-confidence when positive)"),
    ItemStatistic("nll", _nll, True, needs_probs=True, bound=32.0,
                  description=f"-log p(true class), probabilities floored at {PROB_FLOOR:g}"),
    ItemStatistic("brier", _brier, True, needs_probs=True, bound=2.0,
                  description="sum over classes of (p_k - one-hot label)^2"),
    ItemStatistic("entropy", _entropy, False, needs_probs=True, bound=32.0,
                  description="predictive entropy -sum p log p (nats)"),
):
    register_item_statistic(_stat)
