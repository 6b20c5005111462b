"""Rank-normalised split R-hat and bulk / tail ESS of many elements at once (Vehtari et al. 2021).

The same computations as ``arviz_stats.rhat(method="rank")`` and ``arviz_stats.ess(method=
"bulk" | "tail")`` (equal to 1e-8 in ``tests/inference/test_convergence.py``), vectorised over
the elements of a variable: ArviZ runs its per-element functions in a Python loop, about 1 ms
per element and statistic, so the four passes of :func:`pbassess.inference.diagnostics.diagnostics`
over an accuracy surface's 2,554 arms took 30 s, longer than its NUTS run. Here the ranks,
normal scores and autocovariances (FFT) are computed for every element in one call, and
Geyer's initial monotone sequence, a short sequential loop per element, runs compiled by numba.

The arrays are ``(elements, chains, draws)``. :func:`rank_diagnostics` computes all three at once,
sharing the split chains' normal scores between R-hat and bulk ESS, on blocks of elements run on
one thread per core (NumPy's sorts, SciPy's FFTs and the compiled loop release the GIL).
"""

from __future__ import annotations

import numpy as np

__all__ = ["ess_bulk", "ess_tail", "rank_diagnostics", "rhat_rank"]

#: Elements per block of :func:`rank_diagnostics` (each block is one task of the thread pool).
BLOCK_ELEMENTS: int = 256


def _tail_prob() -> tuple[float, float]:
    """ArviZ's tail ESS quantiles when none are given: ``rcParams["stats.ci_prob"]`` p and 1 - p (0.11, 0.89)."""
    from arviz_base import rcParams

    p = float(rcParams["stats.ci_prob"])
    return tuple(sorted((p, 1.0 - p)))


def _split(x: np.ndarray) -> np.ndarray:
    """Each chain split in halves (the middle draw of an odd count dropped): (E, 2C, D // 2)."""
    half = x.shape[2] // 2
    return np.concatenate([x[:, :, :half], x[:, :, x.shape[2] - half:]], axis=1)


def _average_ranks(flat: np.ndarray) -> np.ndarray:
    """Each row's ranks, ties given their average, as ``scipy.stats.rankdata(method="average")``.

    Rows without ties -- all but a few of a posterior's -- are ranked by one unstable argsort, about
    twice as fast as rankdata's stable one; rows with ties go to rankdata (the tests compare R-hat and ESS with
    ArviZ's on chains with ties).
    """
    from scipy.stats import rankdata

    order = np.argsort(flat, axis=1)
    ordered = np.take_along_axis(flat, order, axis=1)
    ranks = np.empty(flat.shape, dtype=float)
    np.put_along_axis(ranks, order, np.broadcast_to(np.arange(1.0, flat.shape[1] + 1.0), flat.shape), axis=1)
    tied = (ordered[:, 1:] == ordered[:, :-1]).any(axis=1)
    if tied.any():
        ranks[tied] = rankdata(flat[tied], method="average", axis=1)
    return ranks


def _z_scale(x: np.ndarray) -> np.ndarray:
    """Normal scores of the pooled ranks of each element (Blom's offset 3/8), the shape kept."""
    from scipy.special import ndtri

    flat = x.reshape(x.shape[0], -1)
    return ndtri((_average_ranks(flat) - 0.375) / (flat.shape[1] + 0.25)).reshape(x.shape)


def _rhat(x: np.ndarray) -> np.ndarray:
    """Classic R-hat of each element of (E, C, D)."""
    n = x.shape[2]
    between = n * np.var(x.mean(axis=2), axis=1, ddof=1)
    within = np.var(x, axis=2, ddof=1).mean(axis=1)
    return np.sqrt((between / within + n - 1) / n)


def _valid(x: np.ndarray, min_chains: int) -> np.ndarray:
    """Elements with finite draws only, at least 4 draws and ``min_chains`` chains (else NaN, as ArviZ)."""
    ok = np.isfinite(x).all(axis=(1, 2))
    if x.shape[2] < 4 or x.shape[1] < min_chains:
        ok[:] = False
    return ok


def _over_valid(x: np.ndarray, min_chains: int, statistic) -> np.ndarray:
    """``statistic`` of the valid elements of ``x`` (see :func:`_valid`), NaN for the others."""
    x = np.asarray(x, float)
    out = np.full(x.shape[0], np.nan)
    ok = _valid(x, min_chains)
    if ok.any():
        with np.errstate(invalid="ignore", divide="ignore"):
            out[ok] = statistic(x[ok])
    return out


def _folded_rhat(split: np.ndarray) -> np.ndarray:
    """R-hat of the normal scores of the split chains' distances from their pooled median (the tails)."""
    folded = np.abs(split - np.median(split.reshape(split.shape[0], -1), axis=1)[:, None, None])
    return _rhat(_z_scale(folded))


def _rhat_rank_valid(x: np.ndarray) -> np.ndarray:
    split = _split(x)
    return np.maximum(_rhat(_z_scale(split)), _folded_rhat(split))


def _ess_tail_valid(x: np.ndarray, prob: tuple[float, float]) -> np.ndarray:
    flat = x.reshape(x.shape[0], -1)
    parts = [_ess(_split((x <= np.quantile(flat, p, axis=1)[:, None, None]).astype(float))) for p in sorted(prob)]
    return np.minimum(*parts)


def rhat_rank(x: np.ndarray) -> np.ndarray:
    """Rank-normalised split R-hat of each element: the larger of the bulk and the folded (tail) R-hat.

    Parameters
    ----------
    x : numpy.ndarray, shape (elements, chains, draws)

    Returns
    -------
    numpy.ndarray, shape (elements,)
        NaN where an element has non-finite draws, or with fewer than 2 chains or 4 draws.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(2, 4, 500)); x[1, 0] += 2.0  # element 1: one chain elsewhere
    >>> r = rhat_rank(x)
    >>> bool(r[0] < 1.01), bool(r[1] > 1.1)
    (True, True)
    """
    return _over_valid(x, 2, _rhat_rank_valid)


def _autocov(x: np.ndarray) -> np.ndarray:
    """Autocovariance of every chain at every lag (FFT), divided by the draws: (E, C, D)."""
    from scipy.fft import irfft, next_fast_len, rfft

    n = x.shape[2]
    m = next_fast_len(2 * n)
    centred = x - x.mean(axis=2, keepdims=True)
    f = rfft(centred, n=m, axis=2)
    return irfft(f * np.conjugate(f), n=m, axis=2)[:, :, :n] / n


def _geyer_kernel():
    """The compiled per-element loop (built on first use, cached on disk)."""
    import numba as nb

    @nb.njit(cache=True, nogil=True)
    def geyer(mean_acov: np.ndarray, mean_var: np.ndarray, var_plus: np.ndarray, size: float) -> np.ndarray:
        n_elem, n_draw = mean_acov.shape
        out = np.empty(n_elem)
        rho = np.zeros(n_draw)
        for e in range(n_elem):
            rho[:] = 0.0
            mv, vp = mean_var[e], var_plus[e]
            even = 1.0
            rho[0] = even
            odd = 1.0 - (mv - mean_acov[e, 1]) / vp
            rho[1] = odd
            t = 1
            while t < n_draw - 3 and even + odd > 0.0:
                even = 1.0 - (mv - mean_acov[e, t + 1]) / vp
                odd = 1.0 - (mv - mean_acov[e, t + 2]) / vp
                if even + odd >= 0:
                    rho[t + 1] = even
                    rho[t + 2] = odd
                t += 2
            max_t = t - 2
            if even > 0:
                rho[max_t + 1] = even
            t = 1
            while t <= max_t - 2:
                if rho[t + 1] + rho[t + 2] > rho[t - 1] + rho[t]:
                    rho[t + 1] = (rho[t - 1] + rho[t]) / 2.0
                    rho[t + 2] = rho[t + 1]
                t += 2
            tau = -1.0 + 2.0 * rho[: max_t + 1].sum() + rho[max_t + 1: max_t + 2].sum()
            tau = max(tau, 1.0 / np.log10(size))
            has_nan = False
            for k in range(n_draw):
                if np.isnan(rho[k]):
                    has_nan = True
            out[e] = np.nan if has_nan else size / tau
        return out

    return geyer


_GEYER = None


def _geyer():
    """The compiled loop, compiled (or loaded from the disk cache) on first use."""
    global _GEYER
    if _GEYER is None:
        _GEYER = _geyer_kernel()
    return _GEYER


def _ess(x: np.ndarray) -> np.ndarray:
    """ESS of each element of (E, C, D) (ArviZ's ``_ess``: Geyer's initial monotone sequence)."""
    n_chain, n_draw = x.shape[1], x.shape[2]
    size = float(n_chain * n_draw)
    out = np.full(x.shape[0], size)
    constant = (x.max(axis=(1, 2)) - x.min(axis=(1, 2))) < np.finfo(float).resolution
    live = ~constant
    if not live.any():
        return out
    y = x[live]
    acov = _autocov(y)
    mean_var = acov[:, :, 0].mean(axis=1) * n_draw / (n_draw - 1.0)
    var_plus = mean_var * (n_draw - 1.0) / n_draw
    if n_chain > 1:
        var_plus = var_plus + np.var(y.mean(axis=2), axis=1, ddof=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out[live] = _geyer()(np.ascontiguousarray(acov.mean(axis=1)), mean_var, var_plus, size)
    return out


def ess_bulk(x: np.ndarray) -> np.ndarray:
    """Bulk ESS of each element: the ESS of the split chains' normal scores.

    Parameters
    ----------
    x : numpy.ndarray, shape (elements, chains, draws)

    Returns
    -------
    numpy.ndarray, shape (elements,)

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> e = ess_bulk(rng.normal(size=(3, 4, 1000)))
    >>> bool(np.all((e > 3000) & (e < 5000)))  # independent draws: about 4,000
    True
    """
    return _over_valid(x, 1, lambda y: _ess(_z_scale(_split(y))))


def ess_tail(x: np.ndarray, prob: tuple[float, float] | None = None) -> np.ndarray:
    """Tail ESS of each element: the smaller ESS of the indicators of its two tail quantiles.

    Parameters
    ----------
    x : numpy.ndarray, shape (elements, chains, draws)
    prob : (float, float), optional
        The quantiles; default ArviZ's for ``ess(method="tail")``: ``rcParams["stats.ci_prob"]``
        and its complement (0.11 and 0.89 by default).

    Returns
    -------
    numpy.ndarray, shape (elements,)

    Examples
    --------
    >>> rng = np.random.default_rng(2)
    >>> bool(ess_tail(rng.normal(size=(1, 4, 1000)))[0] > 2000)
    True
    """
    quantiles = tuple(prob) if prob is not None else _tail_prob()
    return _over_valid(x, 1, lambda y: _ess_tail_valid(y, quantiles))


def _rank_block(x: np.ndarray, quantiles: tuple[float, float]) -> np.ndarray:
    """R-hat, bulk ESS and tail ESS (rows) of the elements of one block, NaN where not valid."""
    out = np.full((3, x.shape[0]), np.nan)
    ok = _valid(x, 1)
    if not ok.any():
        return out
    y = x[ok]
    split = _split(y)
    with np.errstate(invalid="ignore", divide="ignore"):
        bulk = _z_scale(split)
        if y.shape[1] >= 2:
            out[0, ok] = np.maximum(_rhat(bulk), _folded_rhat(split))
        out[1, ok] = _ess(bulk)
        out[2, ok] = _ess_tail_valid(y, quantiles)
    return out


def rank_diagnostics(x: np.ndarray, prob: tuple[float, float] | None = None,
                     workers: int | None = None) -> dict[str, np.ndarray]:
    """:func:`rhat_rank`, :func:`ess_bulk` and :func:`ess_tail` of each element, computed together.

    The split chains' normal scores are computed once for the bulk R-hat and the bulk ESS, and
    blocks of :data:`BLOCK_ELEMENTS` elements run on ``workers`` threads. The values equal the
    three functions' (tested).

    Parameters
    ----------
    x : numpy.ndarray, shape (elements, chains, draws)
    prob : (float, float), optional
        The tail ESS quantiles (default as :func:`ess_tail`).
    workers : int, optional
        Threads (default: the usable cores, at most 4; 1 runs in this thread).

    Returns
    -------
    dict
        ``rhat``, ``ess_bulk`` and ``ess_tail``, each of shape (elements,); R-hat is NaN with
        one chain.

    Examples
    --------
    >>> rng = np.random.default_rng(3)
    >>> x = rng.normal(size=(600, 4, 200))
    >>> d = rank_diagnostics(x)
    >>> bool(np.allclose(d["rhat"], rhat_rank(x)) and np.allclose(d["ess_tail"], ess_tail(x)))
    True
    """
    import os
    from concurrent.futures import ThreadPoolExecutor

    x = np.asarray(x, float)
    quantiles = tuple(prob) if prob is not None else _tail_prob()
    if workers is None:
        cores = os.process_cpu_count() if hasattr(os, "process_cpu_count") else os.cpu_count()
        workers = max(1, min(4, cores or 1))
    starts = range(0, x.shape[0], BLOCK_ELEMENTS)
    _geyer()  # compiled (or loaded) once, before any thread needs it

    def block(start: int) -> np.ndarray:
        return _rank_block(x[start:start + BLOCK_ELEMENTS], quantiles)

    if workers <= 1 or len(starts) <= 1:
        parts = [block(s) for s in starts]
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            parts = list(pool.map(block, starts))
    values = np.concatenate(parts, axis=1) if parts else np.full((3, 0), np.nan)
    return {"rhat": values[0], "ess_bulk": values[1], "ess_tail": values[2]}
