"""``count_cells``: the one place where items are encoded into cells and counted.

NumPy-backed pools are counted with :func:`numpy.bincount` on one flat cell code per item
(sub-blocks of 2**20 items; when the cells outnumber the items, as in a K x K confusion table
of a few labeled items, the occupied cells are found with ``np.unique`` first); dask-backed
pools run the same kernel on every chunk (one task per chunk, in parallel) and add the chunk
tables as integers. Blocks of at least 2**17 items whose keys are ``predicted`` and ``bin`` (what
calibration and accuracy count) go through one fused numba loop instead
(:mod:`pbassess.counting.kernels`: the same integer tables, bit for bit). :func:`count_tables` counts several tables in the same pass. Float sums are kept in exact fixed point
(:mod:`pbassess.counting.exact_sums`), so both paths return the same numbers to the last digit
whatever the chunking.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pbassess.counting.bins import assign_bins, resolve_bin_edges
from pbassess.counting.exact_sums import (
    SUB_BLOCK,
    bound_log2,
    limb_sums,
    limbs_to_float,
    split_limbs,
)
from pbassess.counting.item_stats import ItemStatistic, get_item_statistic
from pbassess.counting.items import ItemArrays, item_arrays
from pbassess.counting.kernels import NUMBA_MIN_ITEMS, count_predicted_bins
from pbassess.errors import ConfigError, DataError

__all__ = ["count_cells", "count_tables"]

_SPECIAL_KEYS = ("predicted", "true", "bin")
_PROBS_BLOCK_VALUES = 1 << 22  # probability entries per sub-block (32 MiB of float64)
_LEVELS_CACHE: dict[str, np.ndarray] = {}  # distinct values of lazy attribute columns, by dask name
_SPARSE_RATIO = 4  # scatter-add instead of bincount when cells outnumber items by this factor


@dataclass(frozen=True)
class _Plan:
    """Everything the per-chunk kernel needs (picklable, for distributed workers)."""

    keys: tuple[str, ...]
    sizes: tuple[int, ...]
    n_classes: int
    edges: np.ndarray | None
    levels: dict[str, np.ndarray]
    stats: tuple[ItemStatistic, ...]
    labeled_only: bool

    @property
    def n_cells(self) -> int:
        return int(np.prod(self.sizes, dtype=np.int64)) if self.sizes else 1

    @property
    def rows(self) -> list[tuple[str, int, int]]:
        """(variable, first row, bound exponent or -1 for integer counts) of the kernel's table."""
        layout = [("n_pool", 1, -1), ("score_sum_pool", 2, 0), ("n", 1, -1), ("correct", 1, -1), ("score_sum", 2, 0)]
        for s in self.stats:
            b = bound_log2(s.bound)
            layout += [(f"{s.name}_sum", 2, b), (f"{s.name}_sq_sum", 2, 2 * b)]
        out, row = [], 0
        for name, width, b in layout:
            out.append((name, row, b))
            row += width
        return out

    @property
    def n_rows(self) -> int:
        return 7 + 4 * len(self.stats)


def _key_codes(plan: _Plan, key: str, block: dict[str, np.ndarray], cache: dict) -> np.ndarray:
    if key == "predicted":
        return block["predicted"]
    if key == "true":
        return block["label"]
    token = ("bin", plan.edges.tobytes()) if key == "bin" else (key, plan.levels[key].size)
    if token not in cache:  # shared by the plans of one count_tables pass
        if key == "bin":
            cache[token] = assign_bins(block["confidence"], plan.edges)
        else:
            import pandas as pd

            cache[token] = pd.Index(plan.levels[key]).get_indexer(np.asarray(block[key])).astype(np.int64)
    return cache[token]


def _cell_codes(plan: _Plan, block: dict[str, np.ndarray], cache: dict) -> np.ndarray:
    """Flat cell code of each item, or ``n_cells`` (a discard cell) when it belongs to no cell."""
    n = block["predicted"].shape[0]
    code, keep = None, None
    for key, size in zip(plan.keys, plan.sizes, strict=True):
        key_code = _key_codes(plan, key, block, cache)
        if key not in ("predicted", "bin"):  # true class (unlabeled) or attribute value (missing) may be absent
            keep = key_code >= 0 if keep is None else keep & (key_code >= 0)
        code = key_code if code is None else code * size + key_code
    if code is None:
        code = np.zeros(n, dtype=np.int64)
    if plan.labeled_only:
        keep = block["label"] >= 0 if keep is None else keep & (block["label"] >= 0)
    return code if keep is None else np.where(keep, code, plan.n_cells)


def _check_codes(plan: _Plan, predicted: np.ndarray, label: np.ndarray) -> None:
    k = plan.n_classes
    if predicted.size and (predicted.min() < 0 or predicted.max() >= k):
        bad = predicted[(predicted < 0) | (predicted >= k)][0]
        raise DataError(f"predicted: class code {bad} outside 0..{k - 1}")
    if label.size and (label.min() < -1 or label.max() >= k):
        bad = label[(label < -1) | (label >= k)][0]
        raise DataError(f"label: class code {bad} outside 0..{k - 1} (or -1 for unlabeled)")


def _stat_rows(stat: ItemStatistic, items: dict[str, np.ndarray], codes: np.ndarray, n_cells: int) -> list[np.ndarray]:
    values = np.asarray(stat.func(items), dtype=np.float64)
    if values.shape != codes.shape:
        raise ConfigError(f"per-item statistic {stat.name!r} returned shape {values.shape} for {codes.size} items")
    b = bound_log2(stat.bound)
    return [limb_sums(values, codes, n_cells, b, stat.name), limb_sums(values * values, codes, n_cells, 2 * b, stat.name)]


def _shared(block: dict[str, np.ndarray]) -> dict[str, Any]:
    """What every plan of a sub-block reuses: correctness, the labeled items, confidence limbs, key codes."""
    label = block["label"]
    correct = (label == block["predicted"]) & (label >= 0)
    hi, lo = split_limbs(block["confidence"], 0, "confidence")
    items = {**block, "correct": correct, "conf_hi": hi, "conf_lo": lo}
    labeled = np.flatnonzero(label >= 0)
    return {"items": items, "labeled": {key: v[labeled] for key, v in items.items()}, "labeled_index": labeled,
            "items_cache": {}, "labeled_cache": {}}


def _item_stat_rows(plan: _Plan, items: dict[str, np.ndarray], code: np.ndarray, labeled_items: dict[str, np.ndarray],
                    lab_code: np.ndarray) -> list[np.ndarray]:
    m, parts = plan.n_cells, []
    for stat in plan.stats:
        src, codes = (labeled_items, lab_code) if stat.needs_labels else (items, code)
        inside = np.flatnonzero(codes < m)
        if inside.size != codes.size:
            src, codes = {key: v[inside] for key, v in src.items()}, codes[inside]
        parts += _stat_rows(stat, src, codes, m)
    return parts


class _Scatter:
    """Per-cell sums of one set of item codes into rows of a table (codes == m are dropped).

    Dense: one ``bincount`` of length m per row. Sparse (cells outnumber items, e.g. a K x K
    confusion table of a few labeled items): the occupied cells are found once with
    ``np.unique`` and each row is a short bincount added to them.
    """

    def __init__(self, codes: np.ndarray, m: int) -> None:
        self.m = m
        self.sparse = codes.size * _SPARSE_RATIO < m
        if self.sparse:
            self.keep = np.flatnonzero(codes < m)
            self.cells, self.inverse = np.unique(codes[self.keep], return_inverse=True)
        else:
            self.codes = codes

    def add(self, total_row: np.ndarray, weights: np.ndarray | None = None) -> None:
        if self.sparse:
            w = None if weights is None else weights[self.keep]
            total_row[self.cells] += np.bincount(self.inverse, weights=w, minlength=self.cells.size).astype(np.int64)
        else:
            total_row += np.bincount(self.codes, weights=weights, minlength=self.m + 1)[:self.m].astype(np.int64)


def _count_sub_block(plan: _Plan, shared: dict[str, Any], total: np.ndarray) -> None:
    """Add the plan's counts of one sub-block to ``total``; items outside every cell go to a discard cell."""
    m = plan.n_cells
    lab = shared["labeled"]
    if plan.labeled_only or "true" in plan.keys:  # only labeled items can be placed: pool == labeled
        items, code = lab, _cell_codes(plan, lab, shared["labeled_cache"])
        lab_code = code
    else:
        items, code = shared["items"], _cell_codes(plan, shared["items"], shared["items_cache"])
        lab_code = code[shared["labeled_index"]]
    pool = _Scatter(code, m)
    labeled = pool if lab_code is code else _Scatter(lab_code, m)
    pool.add(total[0])
    pool.add(total[1], items["conf_hi"])
    pool.add(total[2], items["conf_lo"])
    labeled.add(total[3])
    labeled.add(total[4], lab["correct"].astype(np.float64))
    labeled.add(total[5], lab["conf_hi"])
    labeled.add(total[6], lab["conf_lo"])
    extra = _item_stat_rows(plan, items, code, lab, lab_code)
    if extra:
        total[7:] += np.concatenate(extra, axis=0)


def _count_block(plans: tuple[_Plan, ...], *arrays: np.ndarray, names: tuple[str, ...]) -> list[np.ndarray]:
    """Int64 tables (rows x cells), one per plan, of one chunk of items; rows as in ``plan.rows``."""
    block = {name: np.asarray(a) for name, a in zip(names, arrays, strict=True)}
    block["predicted"] = block["predicted"].astype(np.int64, copy=False)
    block["label"] = block["label"].astype(np.int64, copy=False)
    block["confidence"] = block["confidence"].astype(np.float64, copy=False)
    n = block["predicted"].shape[0]
    totals = [np.zeros((plan.n_rows, plan.n_cells), dtype=np.int64) for plan in plans]
    fused = [_fused(plan) if n >= NUMBA_MIN_ITEMS else None for plan in plans]
    for plan, total, strides in zip(plans, totals, fused, strict=True):
        if strides is not None and not count_predicted_bins(block["predicted"], block["confidence"], block["label"],
                                                            plan.n_classes, plan.edges, *strides, plan.labeled_only,
                                                            total):
            fused = [None] * len(plans)    # an invalid item: the NumPy kernel below raises its one-line error
            totals = [np.zeros_like(t) for t in totals]
            break
    rest = [i for i, strides in enumerate(fused) if strides is None]
    if not rest:
        return totals
    _check_codes(plans[0], block["predicted"], block["label"])
    k = plans[0].n_classes
    step = SUB_BLOCK if "probs" not in block else max(1, min(SUB_BLOCK, _PROBS_BLOCK_VALUES // max(k, 1)))
    for start in range(0, n, step):
        shared = _shared({key: v[start:start + step] for key, v in block.items()})
        for i in rest:
            _count_sub_block(plans[i], shared, totals[i])
    return totals


def _fused(plan: _Plan) -> tuple[int, int] | None:
    """Strides of the predicted class and the bin in the cell code, when the fused loop can count the plan."""
    if plan.stats or not set(plan.keys) <= {"predicted", "bin"}:
        return None
    strides = {key: int(np.prod(plan.sizes[i + 1:], dtype=np.int64)) for i, key in enumerate(plan.keys)}
    return strides.get("predicted", 0), strides.get("bin", 0)


def _attribute_levels(values: Any, lazy: bool, client: Any) -> np.ndarray:
    """Sorted distinct non-missing values of an attribute column."""
    import pandas as pd

    if lazy:
        import dask
        import dask.array as da

        from pbassess.scale import compute

        values = da.asarray(values)
        if values.name in _LEVELS_CACHE:  # a dask array's name is a hash of its whole graph
            return _LEVELS_CACHE[values.name]
        blocks = values.to_delayed().ravel()
        found = compute(*[dask.delayed(pd.unique)(b) for b in blocks], client=client)
        uniques = pd.unique(np.concatenate([np.asarray(u) for u in found]))
        levels = _sorted_levels(uniques)
        if len(_LEVELS_CACHE) >= 64:
            _LEVELS_CACHE.pop(next(iter(_LEVELS_CACHE)))
        _LEVELS_CACHE[values.name] = levels
        return levels
    return _sorted_levels(pd.unique(np.asarray(values).ravel()))


def _sorted_levels(uniques: Any) -> np.ndarray:
    import pandas as pd

    uniques = np.asarray([u for u in uniques if not pd.isna(u)], dtype=np.asarray(uniques).dtype)
    try:
        return np.asarray(sorted(uniques.tolist()), dtype=uniques.dtype)
    except TypeError:
        return np.asarray(sorted(uniques.tolist(), key=str), dtype=object)


def _make_plan(items: ItemArrays, by: tuple[str, ...], bin_edges: Any, item_stats: Any,
               labeled_only: bool, client: Any) -> _Plan:
    if len(set(by)) != len(by):
        raise ConfigError(f"by lists a key twice: {', '.join(by)}")
    k = len(items.classes)
    sizes, levels, edges = [], {}, None
    for key in by:
        if key in ("predicted", "true"):
            sizes.append(k)
        elif key == "bin":
            edges = resolve_bin_edges(bin_edges)
            sizes.append(edges.size - 1)
        else:
            if key not in items.attributes:
                have = ", ".join((*_SPECIAL_KEYS, *items.attributes))
                raise ConfigError(f"cannot count by {key!r}: it is neither a region key nor an attribute column ({have})")
            levels[key] = _attribute_levels(items.arrays[key], items.is_lazy, client)
            sizes.append(int(levels[key].size))
    names = (item_stats,) if isinstance(item_stats, str) else tuple(item_stats)
    stats = tuple(get_item_statistic(s) if isinstance(s, str) else s for s in names)
    for s in stats:
        if s.needs_probs and not items.has_probs:
            raise DataError(f"the per-item statistic {s.name!r} needs full probability vectors, but the pool is in top-1 form")
    return _Plan(tuple(by), tuple(sizes), k, edges, levels, stats, bool(labeled_only))


def _run(plans: tuple[_Plan, ...], items: ItemArrays, client: Any) -> list[np.ndarray]:
    """Count every plan in one pass over the items (dask: one kernel task per chunk)."""
    names = ["predicted", "confidence", "label"]
    if any(s.needs_probs for plan in plans for s in plan.stats):
        names.append("probs")
    names += sorted({key for plan in plans for key in plan.keys if key not in _SPECIAL_KEYS})
    arrays = [items.arrays[name] for name in names]
    if not items.is_lazy:
        return _count_block(plans, *arrays, names=tuple(names))
    import dask
    import dask.array as da

    from pbassess.scale import compute

    chunks = da.asarray(arrays[0]).chunks[0]
    aligned = []
    for arr in arrays:
        arr = da.asarray(arr)
        arr = arr.rechunk({0: chunks, 1: -1} if arr.ndim == 2 else {0: chunks})
        aligned.append(arr.to_delayed().reshape(len(chunks), -1)[:, 0])
    kernel = dask.delayed(_count_block, pure=True, nout=len(plans))
    parts = [kernel(plans, *[a[i] for a in aligned], names=tuple(names)) for i in range(len(chunks))]
    add = dask.delayed(lambda x, y: [a + b for a, b in zip(x, y, strict=True)], pure=True)
    while len(parts) > 1:
        pairs = [add(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
        parts = pairs + ([parts[-1]] if len(parts) % 2 else [])
    (tables,) = compute(parts[0], client=client)
    return list(tables)


def _as_dataset(plan: _Plan, table: np.ndarray, items: ItemArrays) -> Any:
    import xarray as xr

    coords: dict[str, Any] = {}
    for key in plan.keys:
        if key in ("predicted", "true"):
            coords[key] = np.asarray(items.classes, dtype=str)
        elif key == "bin":
            coords["bin"] = np.arange(plan.edges.size - 1)
            coords["bin_lower"] = ("bin", plan.edges[:-1])
            coords["bin_upper"] = ("bin", plan.edges[1:])
        else:
            coords[key] = plan.levels[key]
    data = {}
    for name, row, b in plan.rows:
        values = table[row] if b < 0 else limbs_to_float(table[row:row + 2], b)
        data[name] = (plan.keys, values.reshape(plan.sizes))
    attrs = {"by": list(plan.keys), "n_classes": plan.n_classes, "labeled_only": int(plan.labeled_only),
             "item_stats": [s.name for s in plan.stats]}
    if plan.edges is not None:
        attrs["bin_edges"] = plan.edges.tolist()
    return xr.Dataset(data, coords=coords, attrs=attrs)


def _table_spec(spec: Any) -> dict[str, Any]:
    if isinstance(spec, dict):
        unknown = set(spec) - {"by", "bin_edges", "item_stats", "labeled_only"}
        if unknown:
            raise ConfigError(f"unknown count option {sorted(unknown)[0]!r} (use by, bin_edges, item_stats, labeled_only)")
        return {"by": spec.get("by", ("predicted",)), "bin_edges": spec.get("bin_edges"),
                "item_stats": spec.get("item_stats", ()), "labeled_only": spec.get("labeled_only", False)}
    return {"by": spec, "bin_edges": None, "item_stats": (), "labeled_only": False}


def count_tables(preds: Any, tables: Any, *, client: Any = None) -> dict[str, Any]:
    """Several count tables in one pass over the items (one read of a lazy pool).

    Parameters
    ----------
    preds : Predictions, DataFrame, arrays or xarray.Dataset
    tables : mapping of str to (by, or dict of count_cells options)
        Each value is a ``by`` (str or tuple) or a dict with ``by``, ``bin_edges``,
        ``item_stats``, ``labeled_only`` as in :func:`count_cells`.
    client : distributed.Client or str, optional

    Returns
    -------
    dict of str to xarray.Dataset
        The same Datasets ``count_cells`` returns for each spec.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_top1(["a", "b", "a"], [0.9, 0.6, 0.7], ["a", "a", None])
    >>> t = count_tables(p, {"acc": "predicted", "cal": {"by": "bin", "bin_edges": 2}})
    >>> t["acc"]["correct"].values.tolist(), t["cal"]["n"].values.tolist()
    ([1, 0], [0, 2])
    """
    items = item_arrays(preds)
    specs = {str(name): _table_spec(spec) for name, spec in dict(tables).items()}
    if not specs:
        raise ConfigError("no count tables requested")
    plans = []
    for spec in specs.values():
        keys = (spec["by"],) if isinstance(spec["by"], str) else tuple(spec["by"])
        plans.append(_make_plan(items, keys, spec["bin_edges"], spec["item_stats"], spec["labeled_only"], client))
    counted = _run(tuple(plans), items, client)
    return {name: _as_dataset(plan, table, items) for name, plan, table in zip(specs, plans, counted, strict=True)}


def count_cells(preds: Any, by: Any = ("predicted",), *, bin_edges: Any = None, item_stats: Any = (),
                labeled_only: bool = False, client: Any = None) -> Any:
    """Sufficient statistics of a pool per cell of any combination of region keys.

    See :mod:`pbassess.counting` for the full description of keys and variables.

    Parameters
    ----------
    preds : Predictions, DataFrame, arrays or xarray.Dataset
        The pool; NumPy- or dask-backed.
    by : str or sequence of str
        Region keys: ``"predicted"``, ``"true"``, ``"bin"`` or attribute columns; ``()`` gives one
        cell holding the whole pool.
    bin_edges : int or array_like, optional
        Edges of the ``"bin"`` key (default :data:`~pbassess.constants.DEFAULT_BINS` equal-width bins).
    item_stats : sequence of str or ItemStatistic
        Per-item statistics to sum (``"nll"``, ``"brier"``, ``"entropy"``, ...).
    labeled_only : bool
        Count only labeled items (then ``n_pool == n``).
    client : distributed.Client or str, optional
        Where dask-backed data is computed (see :mod:`pbassess.scale`).

    Returns
    -------
    xarray.Dataset
        One variable per count, with the dims named in ``by``.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> p = Predictions.from_top1(["a", "b", "a"], [0.9, 0.6, 0.7], ["a", "a", None])
    >>> c = count_cells(p)
    >>> c["n_pool"].values.tolist(), c["n"].values.tolist(), c["correct"].values.tolist()
    ([2, 1], [1, 1], [1, 0])
    >>> count_cells(p, ("predicted", "true"))["n"].values.tolist()
    [[1, 0], [1, 0]]
    """
    items = item_arrays(preds)
    keys = (by,) if isinstance(by, str) else tuple(by)
    plan = _make_plan(items, keys, bin_edges, item_stats, labeled_only, client)
    (table,) = _run((plan,), items, client)
    return _as_dataset(plan, table, items)
