"""Random numbers inside the compiled engine: xoshiro256** and exact samplers built on it.

Every kernel function takes the run's state ``s`` (4 uint64 words, updated in place) so a run's
stream depends only on its seed (:func:`pbassess.active.engine.seed_states`). Samplers:
uniform (53 random bits), standard normal (Marsaglia polar), Gamma (Marsaglia-Tsang with the
a < 1 boost), Beta (ratio of Gammas), Beta truncated below a point (power-law envelope
rejection), geometric.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

INF = np.inf


@nb.njit(inline="always")
def _rotl(x, k):
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@nb.njit(inline="always")
def _next_u64(s):
    result = _rotl(s[1] * np.uint64(5), 7) * np.uint64(9)
    t = s[1] << np.uint64(17)
    s[2] ^= s[0]
    s[3] ^= s[1]
    s[1] ^= s[2]
    s[0] ^= s[3]
    s[2] ^= t
    s[3] = _rotl(s[3], 45)
    return result


@nb.njit(inline="always")
def draw_uniform(s):
    """Uniform on [0, 1) with 53 random bits."""
    return float(_next_u64(s) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@nb.njit(inline="always")
def draw_uniform_positive(s):
    """Uniform on (0, 1]."""
    return 1.0 - draw_uniform(s)


@nb.njit
def draw_int_below(s, n):
    """Uniform integer in 0..n-1."""
    return int(draw_uniform(s) * n) % n


@nb.njit
def _normal(s, spare):
    """Standard normal (Marsaglia polar; ``spare`` = [has_spare, value])."""
    if spare[0] != 0.0:
        spare[0] = 0.0
        return spare[1]
    while True:
        u = 2.0 * draw_uniform(s) - 1.0
        v = 2.0 * draw_uniform(s) - 1.0
        q = u * u + v * v
        if 0.0 < q < 1.0:
            f = math.sqrt(-2.0 * math.log(q) / q)
            spare[0] = 1.0
            spare[1] = v * f
            return u * f


@nb.njit
def draw_gamma(s, spare, a):
    """Gamma(a, 1) by Marsaglia-Tsang (with the a < 1 boost)."""
    boost = 1.0
    if a < 1.0:
        boost = draw_uniform_positive(s) ** (1.0 / a)
        a += 1.0
    d = a - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x = _normal(s, spare)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = draw_uniform_positive(s)
        x2 = x * x
        if u < 1.0 - 0.0331 * x2 * x2:
            return d * v * boost
        if math.log(u) < 0.5 * x2 + d * (1.0 - v + math.log(v)):
            return d * v * boost


@nb.njit
def draw_beta(s, spare, a, b):
    """Beta(a, b) as a ratio of Gammas."""
    while True:
        x = draw_gamma(s, spare, a)
        y = draw_gamma(s, spare, b)
        t = x + y
        if t > 0.0:
            return x / t


@nb.njit
def draw_beta_below(s, spare, a, b, hi):
    """Beta(a, b) conditioned on x < hi, exactly, by rejection from a power-law envelope.

    Proposal g(x) ~ x^(c-1) on (0, hi) (x = hi V^(1/c)); the ratio h(x) = x^(a-c) (1-x)^(b-1)
    is log-concave for c <= a and b >= 1 (maximum at x* = (a-c)/(a-c+b-1), clipped to hi) and
    increasing for b < 1 (maximum at hi); c matches the log-slope of the density at hi.
    """
    if b >= 1.0:
        c = a - (b - 1.0) * hi / (1.0 - hi)
        if c <= 0.05 * a:
            c = a
        if a - c + b - 1.0 > 0.0:
            xs = (a - c) / (a - c + b - 1.0)
        else:
            xs = 0.0
        if xs > hi:
            xs = hi
    else:
        c = a
        xs = hi
    if xs > 0.0:
        logm = (a - c) * math.log(xs) + (b - 1.0) * math.log1p(-xs)
    else:
        logm = 0.0 if a == c else -INF
    inv_c = 1.0 / c
    while True:
        x = hi * draw_uniform_positive(s) ** inv_c
        if x <= 0.0 or x >= hi:
            continue
        logh = (a - c) * math.log(x) + (b - 1.0) * math.log1p(-x)
        if math.log(draw_uniform_positive(s)) <= logh - logm:
            return x


@nb.njit
def draw_geometric(s, log1m_p):
    """Number of failures before the first success of Bernoulli(p) (``log1m_p`` = log(1-p))."""
    return int(math.floor(math.log(draw_uniform_positive(s)) / log1m_p))
