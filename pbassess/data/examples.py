"""Small pools with a known construction, for docstring examples, notebooks and tests.

:func:`example_pool` draws a binary pool whose confidences are U(0.5, 1) and whose items are
right with probability ``confidence - gap`` (``gap=0``: calibrated; ``gap>0``: over-confident),
optionally split into sites and with only the first items labeled. :func:`three_site_pool` is the
fixed 88-item pool of three sites with 90%, 70% and 50% of the predictions right (40, 40 and 8
items), the smallest case where partial pooling across environments shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pbassess.data.predictions import Predictions
from pbassess.errors import ConfigError
from pbassess.seeds import as_generator

__all__ = ["example_pool", "three_site_pool"]


def example_pool(n_items: int = 300, *, n_labeled: int | None = None, sites: Sequence[str] = (), gap: float = 0.0,
                 seed: Any = 0) -> Predictions:
    """A binary pool: every item predicted ``"a"`` with confidence U(0.5, 1), right with probability
    ``confidence - gap``.

    Parameters
    ----------
    n_items : int
    n_labeled : int, optional
        Only the first ``n_labeled`` items keep their label (default all).
    sites : sequence of str, optional
        Deal the items to the sites in turn (group column ``site``), so each site has labeled items.
    gap : float
        Over-confidence: mean confidence minus accuracy (0 is calibrated).
    seed : int or numpy.random.Generator

    Examples
    --------
    >>> p = example_pool(600, n_labeled=80, sites=["x", "y", "z"], seed=0)
    >>> p.n_items, p.n_labeled, sorted(set(p.groups["site"]))
    (600, 80, ['x', 'y', 'z'])
    >>> bool(abs(example_pool(20000, gap=0.2).correct.mean() - 0.55) < 0.01)   # E[conf] - gap
    True
    """
    if not 0.0 <= gap < 0.5:
        raise ConfigError(f"gap must be in [0, 0.5), got {gap!r}")
    rng = as_generator(seed)
    conf = rng.uniform(0.5, 1.0, n_items)
    right = rng.random(n_items) < conf - gap
    labels = np.where(right, 0, 1)
    if n_labeled is not None:
        labels[int(n_labeled):] = -1
    groups = {}
    if len(sites):
        groups["site"] = np.resize(np.asarray(sites, dtype=object), n_items)
    return Predictions.from_top1(np.zeros(n_items, int), conf, labels, classes=["a", "b"], groups=groups or None)


def three_site_pool() -> Predictions:
    """Sites ``a``, ``b``, ``c`` with 40, 40 and 8 items of which 90%, 70% and 50% are right (confidence 0.8).

    Examples
    --------
    >>> p = three_site_pool()
    >>> p.n_items, [float(p.correct[p.groups["site"] == s].mean()) for s in "abc"]
    (88, [0.9, 0.7, 0.5])
    """
    env = np.repeat(["a", "b", "c"], [40, 40, 8])
    right = np.r_[np.arange(40) < 36, np.arange(40) < 28, np.arange(8) < 4]
    return Predictions.from_top1(np.where(right, "x", "y"), np.full(88, 0.8), np.full(88, "x"),
                                 classes=["x", "y"], groups={"site": env})
