"""Lazy exact Thompson sampling for Beta-scored arms (see :mod:`pbassess.active.engine` for the algorithm).

Each arm keeps a small table of its posterior CDF at points mean + z sd with exact values
(:func:`build_cdf_table`), moved exactly after each label (:func:`update_cdf_table`); :func:`lazy_ts_smallest` finds
the m smallest of the arms' Beta draws while drawing exact values only for the few arms that
can matter, by exact truncated-Beta samplers (:func:`_bin_value`).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from pbassess.active.rng import (
    INF,
    draw_beta,
    draw_beta_below,
    draw_geometric,
    draw_uniform,
    draw_uniform_positive,
)
from pbassess.active.special import betainc_given_logs

#: Grid points of each arm's CDF table, in posterior standard deviations from the mean.
_GRID_Z = np.array([-3.3, -2.6, -2.0, -1.5, -1.1, -0.75, -0.4, -0.1, 0.25, 0.7, 1.4, 2.5])
MAX_TABLE_POINTS = _GRID_Z.shape[0] + 2


@nb.njit
def _trunc_pow(s, a, b, lo, hi):
    """Beta(a, b) restricted to [lo, hi) where its density increases (hi <= mode, a, b >= 1), exactly.

    Rejection from g(x) ~ x^(c-1) on [lo, hi) with c = a - (b-1) hi / (1-hi) >= 1 (the log-slope
    of the density at hi); the ratio x^(a-c) (1-x)^(b-1) is log-concave with its maximum at hi.
    """
    if b == 1.0:  # density ~ x^(a-1): sample it directly
        r = math.exp(a * math.log(lo / hi)) if lo > 0.0 else 0.0
        while True:
            x = hi * (r + draw_uniform(s) * (1.0 - r)) ** (1.0 / a)
            if lo <= x < hi and x > 0.0:
                return x
    c = a - (b - 1.0) * hi / (1.0 - hi)
    if c < 1e-3:
        c = 1e-3
    logm = (a - c) * math.log(hi) + (b - 1.0) * math.log1p(-hi)
    r = math.exp(c * math.log(lo / hi)) if lo > 0.0 else 0.0
    inv_c = 1.0 / c
    while True:
        x = hi * (r + draw_uniform(s) * (1.0 - r)) ** inv_c
        if x <= 0.0 or x >= hi or x < lo:
            continue
        logh = (a - c) * math.log(x) + (b - 1.0) * math.log1p(-x)
        if math.log(draw_uniform_positive(s)) <= logh - logm:
            return x


@nb.njit
def _chord_bin(s, a, b, lo, hi, flo, fhi):
    """Beta(a, b) on an interior bin [lo, hi) (a, b >= 1), exactly.

    The log-density g(x) = (a-1) log x + (b-1) log(1-x) is concave, so it lies above its chord
    c(x) through (lo, flo), (hi, fhi), and g - c <= M w^2 / 8 with w = hi - lo and
    M = (a-1)/lo^2 + (b-1)/(1-hi)^2 bounding |g''|. Propose from exp(c(x)) (a truncated
    exponential), accept when Exp(1) >= M w^2/8 - (g - c): the squeeze accepts without
    evaluating g whenever Exp(1) >= M w^2 / 8 (~98% of proposals in a body bin).
    """
    w = hi - lo
    lam = (fhi - flo) / w
    bound = ((a - 1.0) / (lo * lo) + (b - 1.0) / ((1.0 - hi) * (1.0 - hi))) * w * w / 8.0
    lw = lam * w
    uniform = abs(lw) < 1e-9
    em = math.expm1(lw) if not uniform else 0.0
    while True:
        v = draw_uniform(s)
        if uniform:
            x = lo + v * w
        else:
            x = lo + math.log1p(v * em) / lam
        if x < lo or x >= hi:
            continue
        e = -math.log(draw_uniform_positive(s))
        if e >= bound:
            return x
        gap = (a - 1.0) * math.log(x) + (b - 1.0) * math.log1p(-x) - (flo + lam * (x - lo))
        if e >= bound - gap:
            return x


@nb.njit
def _draw_in_bin(s, spare, a, b, lo, hi):
    """Beta(a, b) conditioned on lo <= x < hi, exactly (envelope rejection chosen by the bin's shape)."""
    if lo <= 0.0 and hi >= 1.0:
        return draw_beta(s, spare, a, b)
    if a < 1.0 or b < 1.0:
        if lo <= 0.0:
            return draw_beta_below(s, spare, a, b, hi)
        while True:
            x = draw_beta(s, spare, a, b)
            if lo <= x < hi:
                return x
    mode = (a - 1.0) / (a + b - 2.0) if a + b > 2.0 else 0.5
    if hi <= mode:
        return _trunc_pow(s, a, b, lo, hi)
    if lo >= mode:
        return 1.0 - _trunc_pow(s, b, a, 1.0 - hi, 1.0 - lo)
    lm = (a - 1.0) * math.log(mode) + (b - 1.0) * math.log1p(-mode)
    while True:
        x = lo + (hi - lo) * draw_uniform(s)
        if x <= 0.0 or x >= 1.0:
            continue
        if math.log(draw_uniform_positive(s)) <= (a - 1.0) * math.log(x) + (b - 1.0) * math.log1p(-x) - lm:
            return x


@nb.njit
def build_cdf_table(k, a, b, gx, gF, gD, gL, gM, ng, n_at):
    """Exact CDF table of arm k's Beta(a, b) at grid points mean + z sd (only when a, b >= 1)."""
    gx[k, 0] = 0.0
    gF[k, 0] = 0.0
    gD[k, 0] = 0.0
    j = 1
    if a >= 1.0 and b >= 1.0:
        mu = a / (a + b)
        sd = math.sqrt(a * b / ((a + b) * (a + b) * (a + b + 1.0)))
        lbeta = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
        for z in _GRID_Z:
            x = mu + z * sd
            if x <= 1e-9 or x >= 1.0 - 1e-9 or x <= gx[k, j - 1]:
                continue
            lx = math.log(x)
            l1x = math.log1p(-x)
            gx[k, j] = x
            gF[k, j] = betainc_given_logs(a, b, x, lbeta, lx, l1x)
            gD[k, j] = math.exp(a * lx + b * l1x - lbeta)
            gL[k, j] = lx
            gM[k, j] = l1x
            j += 1
    gx[k, j] = 1.0
    gF[k, j] = 1.0
    gD[k, j] = 0.0
    ng[k] = j + 1
    n_at[k] = a + b


@nb.njit
def update_cdf_table(k, success, a, b, gx, gF, gD, ng):
    """Move arm k's CDF table from Beta(a, b) to Beta(a+1, b) (success) or Beta(a, b+1), exactly.

    I_x(a+1, b) = I_x(a, b) - D / a and I_x(a, b+1) = I_x(a, b) + D / b with
    D = x^a (1-x)^b / B(a, b), itself updated multiplicatively.
    """
    for i in range(1, ng[k] - 1):
        x = gx[k, i]
        d = gD[k, i]
        if success:
            f = gF[k, i] - d / a
            gD[k, i] = d * x * (a + b) / a
        else:
            f = gF[k, i] + d / b
            gD[k, i] = d * (1.0 - x) * (a + b) / b
        gF[k, i] = min(max(f, 0.0), 1.0)


@nb.njit
def refresh_sort_key(k, a, b, gx, gF, gD, gL, gM, ng, n_at, kidx, ell, pk, cap):
    """Refresh arm k's table if it went stale, then its sort key l_k and exact tail mass p_k <= cap."""
    n = a + b
    stale = n >= 2.0 * n_at[k] or (ng[k] == 2 and a >= 1.0 and b >= 1.0)
    if not stale and ng[k] > 2:
        stale = gF[k, 1] > cap or gF[k, ng[k] - 2] < 0.5
    if stale:
        build_cdf_table(k, a, b, gx, gF, gD, gL, gM, ng, n_at)
    j = 0
    for i in range(1, ng[k] - 1):
        if gF[k, i] <= cap:
            j = i
        else:
            break
    kidx[k] = j
    ell[k] = gx[k, j]
    pk[k] = gF[k, j]


@nb.njit
def resort_by_key(order, pos, ell, k, n):
    """Restore increasing ``ell`` order of ``order[:n]`` after ``ell[k]`` changed (insertion)."""
    j = pos[k]
    while j > 0 and ell[order[j - 1]] > ell[k]:
        order[j] = order[j - 1]
        pos[order[j]] = j
        j -= 1
    while j < n - 1 and ell[order[j + 1]] < ell[k]:
        order[j] = order[j + 1]
        pos[order[j]] = j
        j += 1
    order[j] = k
    pos[k] = j


@nb.njit
def insert_smallest(vals, arms, cnt, m, x, k):
    """Keep the m smallest (value, arm) pairs sorted in ``vals[:cnt]``; returns the new count."""
    if cnt == m and x >= vals[m - 1]:
        return cnt
    j = cnt if cnt < m else m - 1
    while j > 0 and vals[j - 1] > x:
        vals[j] = vals[j - 1]
        arms[j] = arms[j - 1]
        j -= 1
    vals[j] = x
    arms[j] = k
    return cnt + 1 if cnt < m else m


@nb.njit
def _bin_value(s, spare, a, b, gx, gL, gM, k, i):
    """Exact value of arm k's draw given that it fell in bin i of its table."""
    lo = gx[k, i]
    hi = gx[k, i + 1]
    if lo > 0.0 and hi < 1.0 and a >= 1.0 and b >= 1.0:
        flo = (a - 1.0) * gL[k, i] + (b - 1.0) * gM[k, i]
        fhi = (a - 1.0) * gL[k, i + 1] + (b - 1.0) * gM[k, i + 1]
        w = hi - lo
        bound = ((a - 1.0) / (lo * lo) + (b - 1.0) / ((1.0 - hi) * (1.0 - hi))) * w * w / 8.0
        if bound < 0.7 and abs(fhi - flo) < 500.0:  # else the squeeze is loose: power-law envelopes
            return _chord_bin(s, a, b, lo, hi, flo, fhi)
    return _draw_in_bin(s, spare, a, b, lo, hi)


@nb.njit
def lazy_ts_smallest(s, spare, A, B, gx, gF, gL, gM, kidx, ell, pk, order, n_sorted, stamp, draw_id, cap, log1m_cap,
                     m, vals, arms, his, c_arm, c_bin, c_lo):
    """The m smallest of independent Beta(A_k, B_k) draws over the active arms, exactly (see module doc).

    Each relevant arm's draw is first located in a bin of its CDF table (one uniform); the m-th
    smallest bin upper edge bounds the m-th smallest value from above (those m arms lie below
    their upper edges), so only bins whose lower edge is below that bound - and, as exact values
    come in, below the running m-th smallest value - ever need the exact in-bin draw.
    """
    n_hi = 0  # heap of the m smallest bin upper edges (``arms`` is scratch here, refilled in step 3)
    t_hi = INF
    n_c = 0
    # 1. arms in their lower tail (u < p_k), by thinning at rate cap >= p_k
    j = draw_geometric(s, log1m_cap)
    while j < n_sorted:
        k = order[j]
        v = draw_uniform(s) * cap
        if v < pk[k]:
            stamp[k] = draw_id
            i = kidx[k] - 1
            while gF[k, i] > v:
                i -= 1
            if gx[k, i] < t_hi:
                c_arm[n_c] = k
                c_bin[n_c] = i
                c_lo[n_c] = gx[k, i]
                n_c += 1
                n_hi = insert_smallest(his, arms, n_hi, m, gx[k, i + 1], k)
                if n_hi == m:
                    t_hi = his[m - 1]
        j += 1 + draw_geometric(s, log1m_cap)
    # 2. the others, in increasing order of their key, until no later arm can go below t_hi
    for j in range(n_sorted):
        k = order[j]
        if ell[k] >= t_hi:
            break
        if stamp[k] == draw_id:
            continue
        u = pk[k] + (1.0 - pk[k]) * draw_uniform(s)
        # climb the table only through points below t_hi: once a point x_j >= t_hi has F_j <= u,
        # the draw is >= x_j >= t_hi and cannot be among the m smallest
        i = kidx[k]
        while gF[k, i + 1] <= u:
            i += 1
            if gx[k, i] >= t_hi:
                break
        if gx[k, i] >= t_hi:
            continue
        c_arm[n_c] = k
        c_bin[n_c] = i
        c_lo[n_c] = gx[k, i]
        n_c += 1
        n_hi = insert_smallest(his, arms, n_hi, m, gx[k, i + 1], k)
        if n_hi == m:
            t_hi = his[m - 1]
    # 3. exact values, in increasing order of the bins' lower edges, while they can still matter
    for a_ in range(1, n_c):  # insertion sort by lower edge (few candidates)
        lo = c_lo[a_]
        ka = c_arm[a_]
        ia = c_bin[a_]
        b_ = a_ - 1
        while b_ >= 0 and c_lo[b_] > lo:
            c_lo[b_ + 1] = c_lo[b_]
            c_arm[b_ + 1] = c_arm[b_]
            c_bin[b_ + 1] = c_bin[b_]
            b_ -= 1
        c_lo[b_ + 1] = lo
        c_arm[b_ + 1] = ka
        c_bin[b_ + 1] = ia
    cnt = 0
    t = t_hi
    for c in range(n_c):
        if c_lo[c] >= t:
            break
        k = c_arm[c]
        x = _bin_value(s, spare, A[k, 0], B[k, 0], gx, gL, gM, k, c_bin[c])
        cnt = insert_smallest(vals, arms, cnt, m, x, k)
        if cnt == m and vals[m - 1] < t:
            t = vals[m - 1]
    return cnt
