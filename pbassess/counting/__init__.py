"""The counting layer: every assessment's sufficient statistics come from :func:`count_cells`.

Signature
---------
``count_cells(preds, by=("predicted",), *, bin_edges=None, item_stats=(), labeled_only=False,
client=None) -> xarray.Dataset``

``preds``
    A :class:`~pbassess.Predictions` (NumPy- or dask-backed; read through its ``.dataset``),
    anything :func:`pbassess.data.as_predictions` accepts, or an ``xarray.Dataset`` with the
    ``Predictions.dataset`` layout.
``by`` (a str or a tuple; the output dims, in this order)
    ``"predicted"``: dim ``predicted``, coordinate = the K class names (predicted class).
    ``"true"``: dim ``true``, coordinate = the K class names (true class). Unlabeled items
    belong to no true class, so with ``"true"`` in ``by`` only labeled items are counted
    (``n_pool == n``). ``by=("predicted", "true")`` gives the confusion counts (rows predicted).
    ``"bin"``: dim ``bin`` (0..B-1) with coordinates ``bin_lower`` / ``bin_upper`` and
    ``attrs["bin_edges"]``: confidence bins, ``edges[b] <= confidence < edges[b+1]``, 1.0 in
    the last bin. Any attribute column name: dim named after the column, coordinate = its sorted
    distinct values; items whose value is missing (None/NaN) belong to no cell.
    ``()``: one cell holding the whole pool (scalar variables).
``bin_edges``
    ``None`` (10 equal-width bins, :data:`~pbassess.constants.DEFAULT_BINS`), a number of
    equal-width bins, or the edges (increasing, covering [0, 1]). Equal-mass edges:
    :func:`equal_mass_edges` (streaming sketch; same edges for NumPy and dask data).
``item_stats``
    Names of registered per-item statistics (:func:`list_item_statistics`; the metric registry
    :mod:`pbassess.metrics` adds its own) or :class:`ItemStatistic` objects.
``labeled_only``
    Count only labeled items.
``client``
    A dask.distributed client or scheduler address for dask-backed data
    (:mod:`pbassess.scale`; default: local threads, or ``PBASSESS_DASK_SCHEDULER``).

Variables (one value per cell)
------------------------------
=====================  =======  =====================================================
``n_pool``             int64    items in the cell (labeled or not)
``score_sum_pool``     float64  sum of ``confidence`` over those items
``n``                  int64    labeled items in the cell
``correct``            int64    labeled items whose predicted class equals the label
``score_sum``          float64  sum of ``confidence`` over the labeled items
``<stat>_sum``         float64  sum of the per-item statistic: over labeled items when it
                                needs labels (nll, brier, calibration_bias, ...), over all
                                the cell's items otherwise (entropy, confidence)
``<stat>_sq_sum``      float64  sum of its squares (for variances / the Bayesian bootstrap)
=====================  =======  =====================================================

``attrs``: ``by``, ``n_classes``, ``labeled_only``, ``item_stats`` and (with ``"bin"``)
``bin_edges``.

Built-in per-item statistics: ``correct``, ``error``, ``confidence``, ``calibration_bias``
(confidence - correct), ``nll`` (-log p(true), floored at 1e-8; needs probs), ``brier`` (sum of
squared differences to the one-hot label; needs probs), ``entropy`` (needs probs).

Several tables in one pass
--------------------------
``count_tables(preds, {"accuracy": "predicted", "calibration": {"by": "bin", "bin_edges": 15},
"cost": ("predicted", "true")}, client=None) -> dict[str, xarray.Dataset]`` reads a lazy pool
once and returns the Dataset ``count_cells`` would give for each entry.

Guarantees
----------
Float sums are exact fixed-point sums (:mod:`pbassess.counting.exact_sums`): the result does
not depend on item order or chunking, so NumPy- and dask-backed pools give the same numbers to
the last digit. Dask-backed pools are counted chunk by chunk (one bincount kernel per chunk,
integer tables added), never loaded whole. Cost: O(N) time, O(cells) memory per chunk.
(flox's ``xarray_reduce`` with ``expected_groups`` was measured too: on 10^7 lazy items it took
about 1.5x as long for a count and a float sum only, and its float sums change with the
chunking in the 15th digit, so the bincount kernel is used.)

Examples
--------
>>> import numpy as np
>>> from pbassess import Predictions
>>> from pbassess.counting import count_cells
>>> p = Predictions.from_probs([[0.9, 0.1], [0.3, 0.7], [0.6, 0.4]], labels=["0", "0", None])
>>> c = count_cells(p, ("predicted", "bin"), bin_edges=2, item_stats=["nll"])
>>> c["n_pool"].values.tolist()
[[0, 2], [0, 1]]
>>> round(float(c["nll_sum"].sum()), 6), round(float(-np.log(0.9) - np.log(0.3)), 6)
(1.309333, 1.309333)
"""

from pbassess.counting.bins import assign_bins, equal_mass_edges, resolve_bin_edges
from pbassess.counting.cells import count_cells, count_tables
from pbassess.counting.core import cell_codes, cell_counts, cell_totals
from pbassess.counting.item_stats import (
    PROB_FLOOR,
    ItemStatistic,
    get_item_statistic,
    list_item_statistics,
    register_item_statistic,
)

__all__ = [
    "PROB_FLOOR",
    "ItemStatistic",
    "assign_bins",
    "cell_codes",
    "cell_counts",
    "cell_totals",
    "count_cells",
    "count_tables",
    "equal_mass_edges",
    "get_item_statistic",
    "list_item_statistics",
    "register_item_statistic",
    "resolve_bin_edges",
]
