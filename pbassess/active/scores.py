"""Per-arm scores of the compiled engine: posterior draws, means, optimistic indices, evaluation.

Scores are *minimised* by the kernel (a "most" target is mirrored by
:mod:`pbassess.active.targets`). ``kind`` is the target model: 0 one Beta per arm, 1 classwise
ECE (one Beta per confidence bin), 2 expected cost under a Dirichlet over cost levels.
"""

from __future__ import annotations

import math

import numba as nb

from pbassess.active.rng import draw_beta, draw_gamma
from pbassess.active.special import beta_mean_abs_deviation, betaincinv


@nb.njit
def draw_score(s, spare, kind, k, A, B, ncell, w, sc):
    """One posterior draw of arm k's score (to be minimised)."""
    if kind == 0:
        return draw_beta(s, spare, A[k, 0], B[k, 0])
    if kind == 1:
        e = 0.0
        for c in range(ncell[k]):
            e += w[k, c] * abs(draw_beta(s, spare, A[k, c], B[k, c]) - sc[k, c])
        return -e
    tot = 0.0
    acc = 0.0
    for c in range(ncell[k]):
        g = draw_gamma(s, spare, A[k, c])
        tot += g
        acc += g * w[k, c]
    return -acc / tot


@nb.njit
def mean_score(kind, k, A, B, ncell, w, sc):
    """Point estimate of arm k's score: its posterior mean; for ECE (as in Ji et al.) the ECE of the
    posterior-mean bin accuracies, which tends to the full-pool ECE as the class is labeled (the
    posterior mean of ECE itself stays above it in sparse bins, by Jensen's inequality)."""
    if kind == 0:
        return A[k, 0] / (A[k, 0] + B[k, 0])
    if kind == 1:
        e = 0.0
        for c in range(ncell[k]):
            e += w[k, c] * abs(A[k, c] / (A[k, c] + B[k, c]) - sc[k, c])
        return -e
    tot = 0.0
    acc = 0.0
    for c in range(ncell[k]):
        tot += A[k, c]
        acc += A[k, c] * w[k, c]
    return -acc / tot


@nb.njit
def ucb_index_score(kind, k, A, B, ncell, w, sc, level, z):
    """Optimistic index for Bayes-UCB (smaller = more promising): the lower posterior quantile.

    Exact Beta quantile for Beta scores; for ECE and multi-level costs the exact posterior
    mean minus z exact posterior standard deviations.
    """
    if kind == 0:
        return betaincinv(A[k, 0], B[k, 0], level)
    if kind == 1:
        e = 0.0
        v = 0.0
        for c in range(ncell[k]):
            a = A[k, c]
            b = B[k, c]
            mu = a / (a + b)
            m1 = beta_mean_abs_deviation(a, b, sc[k, c])
            m2 = a * b / ((a + b) * (a + b) * (a + b + 1.0)) + (mu - sc[k, c]) ** 2
            e += w[k, c] * m1
            v += w[k, c] * w[k, c] * max(m2 - m1 * m1, 0.0)
        return -(e + z * math.sqrt(v))
    tot = 0.0
    m1 = 0.0
    m2 = 0.0
    for c in range(ncell[k]):
        tot += A[k, c]
    for c in range(ncell[k]):
        m1 += A[k, c] / tot * w[k, c]
        m2 += A[k, c] / tot * w[k, c] * w[k, c]
    return -(m1 + z * math.sqrt(max(m2 - m1 * m1, 0.0) / (tot + 1.0)))


@nb.njit
def expected_variance_drop(a, b):
    """Expected drop of Var(theta) for theta ~ Beta(a, b) after one more Bernoulli label."""
    n = a + b
    v = a * b / (n * n * (n + 1.0))
    p = a / n
    v1 = (a + 1.0) * b / ((n + 1.0) * (n + 1.0) * (n + 2.0))
    v0 = a * (b + 1.0) / ((n + 1.0) * (n + 1.0) * (n + 2.0))
    return v - (p * v1 + (1.0 - p) * v0)


@nb.njit
def refit_eb_prior(A, B, n_succ, n_fail, K):
    """Method-of-moments fit of a shared Beta(mu tau, (1-mu) tau) to the classes' counts; sets
    A = mu tau + successes, B = (1-mu) tau + failures. Returns False (no change) with < 2 labeled classes."""
    tot_s = 0.0
    tot_n = 0.0
    for k in range(K):
        tot_s += n_succ[k]
        tot_n += n_succ[k] + n_fail[k]
    if tot_n <= 0.0:
        return False
    mu = min(max(tot_s / tot_n, 1e-3), 1.0 - 1e-3)
    m1 = 0.0
    m2 = 0.0
    noise = 0.0
    cnt = 0
    for k in range(K):
        n = n_succ[k] + n_fail[k]
        if n > 0.0:
            p = n_succ[k] / n
            m1 += p
            m2 += p * p
            noise += mu * (1.0 - mu) / n
            cnt += 1
    if cnt < 2:
        return False
    mean_p = m1 / cnt
    var_between = max(m2 / cnt - mean_p * mean_p - noise / cnt, 1e-5)
    tau = min(max(mu * (1.0 - mu) / var_between - 1.0, 1.0), 1000.0)
    for k in range(K):
        A[k, 0] = mu * tau + n_succ[k]
        B[k, 0] = (1.0 - mu) * tau + n_fail[k]
    return True


# ---------------------------------------------------------------------------- evaluation
@nb.njit
def evaluate_ranking(kind, K, A, B, ncell, w, sc, est, dirty, true_top, truth, m):
    """(MRR, success, mean |error|) of the posterior-mean ranking against the truth."""
    for k in range(K):
        if dirty[k]:
            est[k] = mean_score(kind, k, A, B, ncell, w, sc)
            dirty[k] = False
    total = 0.0
    for i in range(K):
        if not true_top[i]:
            continue
        ahead = 0
        for j in range(K):
            if true_top[j]:
                continue
            if est[j] < est[i] or (est[j] == est[i] and j < i):
                ahead += 1
        total += 1.0 / (1.0 + ahead)
    mrr = total / m
    err = 0.0
    for k in range(K):
        err += abs(est[k] - truth[k])
    return mrr, mrr >= 1.0 - 1e-12, err / K


@nb.njit
def ranking_agreement(K, est, true_top, m):
    """Share of the true top-m arms among the m smallest current estimates (ties by arm index).

    Call after :func:`evaluate_ranking` (which refreshes ``est``). A true top arm is found when fewer
    than m arms of any kind are ranked ahead of it.
    """
    found = 0
    for i in range(K):
        if not true_top[i]:
            continue
        ahead = 0
        for j in range(K):
            if est[j] < est[i] or (est[j] == est[i] and j < i):
                ahead += 1
        if ahead < m:
            found += 1
    return found / m
