"""Order-independent sums of floating-point values, so chunked and in-memory counts agree exactly.

A float sum depends on the order of the additions: summing the same scores in one pass, in
Parquet row groups or in dask chunks gives results that differ in the last digits. Counting
therefore sums every float statistic in fixed point. Each value ``v`` with ``|v| <= 2**b`` is
split into two integers on fixed grids,

``v ~= hi * 2**(b - 33) + lo * 2**(b - 66)``,   ``|hi| <= 2**33``, ``0 <= lo <= 2**33``,

which represents ``v`` to within ``2**(b - 67)`` (finer than a float64 ulp for every value
above ``2**(b - 14)``). Sub-blocks of at most :data:`SUB_BLOCK` = 2**20 items are summed with
:func:`numpy.bincount` (whose float64 accumulator is exact for integers below 2**53), the block
totals are added as int64 (exact, associative), and :func:`limbs_to_float` turns the two integer
totals into one float. The result is a deterministic function of the multiset of values: the
same to the last digit however the items are chunked or ordered, and within about one ulp of the
exact sum.
"""

from __future__ import annotations

import numpy as np

from pbassess.errors import ConfigError, DataError

__all__ = ["LIMB_BITS", "SUB_BLOCK", "bincount_limbs", "bound_log2", "limb_sums", "limbs_to_float", "split_limbs"]

#: Bits per fixed-point limb.
LIMB_BITS: int = 33

#: Maximum number of items whose limbs are summed by one float64 bincount (2**20 * 2**33 = 2**53).
SUB_BLOCK: int = 1 << 20

_LOW_MASK = (1 << LIMB_BITS) - 1


def bound_log2(bound: float) -> int:
    """Smallest integer ``b`` with ``2**b >= bound``.

    Examples
    --------
    >>> bound_log2(1.0), bound_log2(2.0), bound_log2(18.4)
    (0, 1, 5)
    """
    if not bound > 0:
        raise ConfigError(f"the bound of a per-item statistic must be positive, got {bound!r}")
    return int(np.ceil(np.log2(bound)))


def split_limbs(values: np.ndarray, b: int, what: str) -> tuple[np.ndarray, np.ndarray]:
    """The two fixed-point limbs (as integral float64 arrays) of values with ``|v| <= 2**b``.

    Raises a one-line error naming ``what`` for non-finite values or values above the bound.

    Examples
    --------
    >>> hi, lo = split_limbs(np.array([0.1, 0.2, 0.7]), 0, "score")
    >>> limbs_to_float(bincount_limbs(hi, lo, np.array([0, 0, 0]), 1), 0).tolist() == [0.1 + 0.2 + 0.7]
    True
    >>> split_limbs(np.array([3.0]), 0, "score")
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: score: a per-item value (3 in magnitude) exceeds its declared bound 1
    """
    if values.size:
        lo_v, hi_v = float(values.min()), float(values.max())
        if not (np.isfinite(lo_v) and np.isfinite(hi_v)):
            raise DataError(f"{what}: some per-item values are NaN or infinite")
        if max(-lo_v, hi_v) > 2.0**b:
            raise ConfigError(f"{what}: a per-item value ({max(-lo_v, hi_v):g} in magnitude) exceeds its declared bound {2.0**b:g}")
    scaled = values * 2.0 ** (LIMB_BITS - b)
    hi = np.floor(scaled)
    scaled -= hi                      # the fraction, exact in float64
    scaled *= 2.0**LIMB_BITS
    np.rint(scaled, out=scaled)       # the low limb
    return hi, scaled


def bincount_limbs(hi: np.ndarray, lo: np.ndarray, codes: np.ndarray, n_cells: int) -> np.ndarray:
    """Per-cell int64 sums (shape (2, n_cells)) of limbs from :func:`split_limbs` (at most SUB_BLOCK items).

    Examples
    --------
    >>> values, codes = np.array([0.1, 0.2, 0.7]), np.array([0, 1, 1])
    >>> sums = bincount_limbs(*split_limbs(values, 0, "score"), codes, 2)
    >>> sums.shape, limbs_to_float(sums, 0).tolist() == [0.1, 0.2 + 0.7]
    ((2, 2), True)
    """
    if codes.size > SUB_BLOCK:
        raise ValueError(f"at most {SUB_BLOCK} values per call, got {codes.size}")
    out = np.zeros((2, n_cells), dtype=np.int64)
    if codes.size:
        out[0] = np.bincount(codes, weights=hi, minlength=n_cells)
        out[1] = np.bincount(codes, weights=lo, minlength=n_cells)
    return out


def limb_sums(values: np.ndarray, codes: np.ndarray, n_cells: int, b: int, what: str) -> np.ndarray:
    """Fixed-point sums of ``values`` per cell, as an int64 array of shape (2, n_cells).

    ``codes`` holds each value's cell in ``0..n_cells-1``; at most :data:`SUB_BLOCK` values
    may be passed at once (callers split larger blocks). ``what`` names the statistic in the
    one-line error raised for non-finite values or values above ``2**b`` in magnitude.

    Examples
    --------
    >>> import numpy as np
    >>> s = limb_sums(np.array([0.1, 0.2, 0.7]), np.array([0, 1, 1]), 2, 0, "score")
    >>> limbs_to_float(s, 0).tolist()
    [0.1, 0.8999999999999999]
    """
    hi, lo = split_limbs(np.asarray(values, dtype=np.float64), b, what)
    return bincount_limbs(hi, lo, codes, n_cells)


def limbs_to_float(limbs: np.ndarray, b: int) -> np.ndarray:
    """Float sums from the int64 limb totals of :func:`limb_sums` (added over blocks).

    Examples
    --------
    >>> import math
    >>> import numpy as np
    >>> parts = [limb_sums(np.array([x]), np.array([0]), 1, 0, "s") for x in (0.1, 0.2, 0.3)]
    >>> total = float(limbs_to_float(sum(parts), 0)[0])     # blocks added in any order
    >>> total == math.fsum([0.1, 0.2, 0.3]), 0.1 + 0.2 + 0.3 == total
    (True, False)
    """
    hi = limbs[0] + (limbs[1] >> LIMB_BITS)
    lo = limbs[1] & _LOW_MASK
    return hi.astype(np.float64) * 2.0 ** (b - LIMB_BITS) + lo.astype(np.float64) * 2.0 ** (b - 2 * LIMB_BITS)
