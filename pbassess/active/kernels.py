"""The compiled run loop of the engine: R replicate runs of one strategy, ``prange`` over runs.

:func:`run_replicates` (``parallel=True, cache=True``) gives each run to one thread from start to
finish; :func:`_run_one` is one run: pre-shuffle the items inside each arm, then rounds of picks
with the posterior frozen (lazy exact TS on Beta arms, per-arm draws for ECE and multi-level
cost, or the cached index of Bayes-UCB / greedy / epsilon-greedy), take the next item of each
picked arm (exhausted arms drop out), reveal the labels, refresh the lazy-TS keys and index
caches, refit the empirical-Bayes prior, and evaluate every L labels.

Strategy codes: 0 random-item, 1 random-arm, 2 ts, 3 ttts, 4 mpts, 5 bayes-ucb,
6 epsilon-greedy, 7 greedy (:data:`pbassess.active.strategies.STRATEGY_CODES`).

Why :func:`_run_one` is one long function (an exception to the project's ~80-line rule, on
purpose): splitting its round into steps, each taking the run's arrays as arguments, made the
loop 1.4-1.7x slower (``benchmarks/active.py``-style timing of TS on CIFAR-100, measured under
contention: 1.9-2.3 s CPU against 1.34 s), because every call or inlined step increfs and decrefs
each array it receives, on every label (~80 atomic reference-count pairs per label), and calls
with more than 30 arguments are compiled by CPython as ``f(*args)``, which numba runs by building
a tuple. Everything outside the per-label loop lives in the other modules (:mod:`.rng`,
:mod:`.special`, :mod:`.lazy_ts`, :mod:`.scores`).

Numba's on-disk cache is keyed on this file: after editing a helper in another module of the
engine during development, touch this file (or clear ``__pycache__``) to recompile.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from pbassess.active.lazy_ts import (
    MAX_TABLE_POINTS,
    build_cdf_table,
    insert_smallest,
    lazy_ts_smallest,
    refresh_sort_key,
    resort_by_key,
    update_cdf_table,
)
from pbassess.active.rng import INF, draw_int_below, draw_uniform
from pbassess.active.scores import (
    draw_score,
    evaluate_ranking,
    expected_variance_drop,
    mean_score,
    ranking_agreement,
    refit_eb_prior,
    ucb_index_score,
)

_TTTS_MAX_TRIALS = 100


@nb.njit
def _run_one(state, strategy, kind, estimation, m, batch, budget, log_every, n_logs,
             arm_start, item_cell, item_success, A0, B0, ncell, w, sc, true_top, truth,
             ttts_beta, epsilon, ucb_level, ucb_z, tail_cap, eb_every,
             out_mrr, out_success, out_error, out_picks, out_agreement):
    K = arm_start.shape[0] - 1
    N = arm_start[K]
    spare = np.zeros(2)
    s = state
    # in-class permutations (pre-shuffle once per run)
    perm = np.arange(N)
    for k in range(K):
        lo = arm_start[k]
        for i in range(arm_start[k + 1] - 1, lo, -1):
            j = lo + draw_int_below(s, i - lo + 1)
            tmp = perm[i]
            perm[i] = perm[j]
            perm[j] = tmp
    # random-item: a uniform permutation of the pool's arm sequence
    item_arm = np.empty(N, dtype=np.int64)
    if strategy == 0:
        for k in range(K):
            for i in range(arm_start[k], arm_start[k + 1]):
                item_arm[i] = k
        for i in range(N - 1, 0, -1):
            j = draw_int_below(s, i + 1)
            tmp = item_arm[i]
            item_arm[i] = item_arm[j]
            item_arm[j] = tmp
    A = A0.copy()
    B = B0.copy()
    taken = np.zeros(K, dtype=np.int64)
    remaining = np.empty(K, dtype=np.int64)
    # active arms (non-empty): swap-remove list
    act = np.empty(K, dtype=np.int64)
    act_pos = np.empty(K, dtype=np.int64)
    n_act = 0
    for k in range(K):
        remaining[k] = arm_start[k + 1] - arm_start[k]
        if remaining[k] > 0:
            act[n_act] = k
            act_pos[k] = n_act
            n_act += 1
        else:
            act_pos[k] = -1
    # lazy-TS structure
    lazy = kind == 0 and (strategy == 2 or strategy == 3 or strategy == 4)
    ell = np.full(K, INF)
    pk = np.zeros(K)
    order = np.arange(K)
    pos = np.arange(K)
    stamp = np.zeros(K, dtype=np.int64)
    n_sorted = 0
    log1m_cap = math.log1p(-tail_cap)
    ng_max = MAX_TABLE_POINTS if lazy else 1
    gx = np.zeros((K, ng_max))
    gF = np.zeros((K, ng_max))
    gD = np.zeros((K, ng_max))
    gL = np.zeros((K, ng_max))
    gM = np.zeros((K, ng_max))
    ng = np.zeros(K, dtype=np.int64)
    n_at = np.zeros(K)
    kidx = np.zeros(K, dtype=np.int64)
    if lazy:
        for k in range(K):
            if remaining[k] > 0:
                build_cdf_table(k, A[k, 0], B[k, 0], gx, gF, gD, gL, gM, ng, n_at)
                refresh_sort_key(k, A[k, 0], B[k, 0], gx, gF, gD, gL, gM, ng, n_at, kidx, ell, pk, tail_cap)
        order = np.argsort(ell)
        for j in range(K):
            pos[order[j]] = j
        n_sorted = n_act
    # index caches (greedy, epsilon-greedy, bayes-ucb)
    idx = np.zeros(K)
    need_index = strategy >= 5
    if need_index:
        for k in range(K):
            if estimation:
                idx[k] = -expected_variance_drop(A[k, 0], B[k, 0])
            elif strategy == 5:
                idx[k] = ucb_index_score(kind, k, A, B, ncell, w, sc, ucb_level, ucb_z)
            else:
                idx[k] = mean_score(kind, k, A, B, ncell, w, sc)
    est = np.zeros(K)
    dirty = np.ones(K, dtype=np.bool_)
    n_succ = np.zeros(K)
    n_fail = np.zeros(K)
    eb = eb_every > 0 and kind == 0
    next_eb = eb_every
    vals = np.empty(max(m, 1))
    arms = np.empty(max(m, 1), dtype=np.int64)
    his = np.empty(max(m, 1))
    c_arm = np.empty(K, dtype=np.int64)
    c_bin = np.empty(K, dtype=np.int64)
    c_lo = np.empty(K)
    picks = np.empty(batch * max(m, 1), dtype=np.int64)
    pend_arm = np.empty(batch * max(m, 1), dtype=np.int64)
    pend_item = np.empty(batch * max(m, 1), dtype=np.int64)
    touched = np.zeros(K, dtype=np.bool_)
    n_lab = 0
    next_log = 0
    draw_id = 0
    rand_pos = 0
    while n_lab < budget and n_act > 0:
        # ---- choose one round of picks with the posterior frozen
        n_pend = 0
        for _r in range(batch):
            if n_act == 0 or n_lab + n_pend >= budget:
                break
            n_pick = 0
            if strategy == 0:
                picks[0] = item_arm[rand_pos]  # a permutation of the pool: arm k appears n_k times
                rand_pos += 1
                n_pick = 1
            elif strategy == 1:
                picks[0] = act[draw_int_below(s, n_act)]
                n_pick = 1
            elif lazy:
                mm = m if m < n_sorted else n_sorted
                draw_id += 1
                cnt = lazy_ts_smallest(s, spare, A, B, gx, gF, gL, gM, kidx, ell, pk, order, n_sorted, stamp, draw_id,
                                       tail_cap, log1m_cap, mm, vals, arms, his, c_arm, c_bin, c_lo)
                if strategy == 4:
                    for i in range(cnt):
                        picks[i] = arms[i]
                    n_pick = cnt
                else:
                    first = arms[draw_int_below(s, cnt)]
                    if strategy == 3 and n_sorted > 1 and draw_uniform(s) >= ttts_beta:
                        for _t in range(_TTTS_MAX_TRIALS):
                            draw_id += 1
                            cnt = lazy_ts_smallest(s, spare, A, B, gx, gF, gL, gM, kidx, ell, pk, order, n_sorted,
                                                   stamp, draw_id, tail_cap, log1m_cap, mm, vals, arms, his, c_arm,
                                                   c_bin, c_lo)
                            other = arms[draw_int_below(s, cnt)]
                            if other != first:
                                first = other
                                break
                    picks[0] = first
                    n_pick = 1
            elif strategy == 2 or strategy == 3 or strategy == 4:
                mm = m if m < n_act else n_act
                cnt = 0
                for i in range(n_act):
                    k = act[i]
                    cnt = insert_smallest(vals, arms, cnt, mm, draw_score(s, spare, kind, k, A, B, ncell, w, sc), k)
                if strategy == 4:
                    for i in range(cnt):
                        picks[i] = arms[i]
                    n_pick = cnt
                else:
                    first = arms[draw_int_below(s, cnt)]
                    if strategy == 3 and n_act > 1 and draw_uniform(s) >= ttts_beta:
                        for _t in range(_TTTS_MAX_TRIALS):
                            cnt = 0
                            for i in range(n_act):
                                k = act[i]
                                cnt = insert_smallest(vals, arms, cnt, mm,
                                                      draw_score(s, spare, kind, k, A, B, ncell, w, sc), k)
                            other = arms[draw_int_below(s, cnt)]
                            if other != first:
                                first = other
                                break
                    picks[0] = first
                    n_pick = 1
            else:  # index strategies: 5 bayes-ucb, 6 epsilon-greedy, 7 greedy
                if strategy == 6 and draw_uniform(s) < epsilon:
                    picks[0] = act[draw_int_below(s, n_act)]
                else:
                    mm = m if m < n_act else n_act
                    if estimation:
                        mm = 1
                    cnt = 0
                    for i in range(n_act):
                        k = act[i]
                        cnt = insert_smallest(vals, arms, cnt, mm, idx[k], k)
                    picks[0] = arms[draw_int_below(s, cnt)]
                n_pick = 1
            # ---- take the next item of each picked arm (without replacement)
            for i in range(n_pick):
                k = picks[i]
                if remaining[k] <= 0 or n_lab + n_pend >= budget:
                    continue
                item = perm[arm_start[k] + taken[k]]
                taken[k] += 1
                remaining[k] -= 1
                pend_arm[n_pend] = k
                pend_item[n_pend] = item
                n_pend += 1
                out_picks[k] += 1
                if remaining[k] == 0:  # exhausted: drop out now
                    p = act_pos[k]
                    last = act[n_act - 1]
                    act[p] = last
                    act_pos[last] = p
                    act_pos[k] = -1
                    n_act -= 1
                    if lazy:
                        ell[k] = INF
                        pk[k] = 0.0
                        resort_by_key(order, pos, ell, k, n_sorted)
                        n_sorted -= 1
                if n_act == 0:
                    break
            if strategy == 0 and n_act == 0:
                break
        # ---- reveal the labels of the round and update the posterior
        for i in range(n_pend):
            k = pend_arm[i]
            item = pend_item[i]
            c = item_cell[item]
            if lazy and remaining[k] > 0:
                update_cdf_table(k, item_success[item], A[k, 0], B[k, 0], gx, gF, gD, ng)
            if kind == 2:
                A[k, c] += 1.0
            elif item_success[item]:
                A[k, c] += 1.0
                n_succ[k] += 1.0
            else:
                B[k, c] += 1.0
                n_fail[k] += 1.0
            touched[k] = True
            dirty[k] = True
        for i in range(n_pend):
            k = pend_arm[i]
            if not touched[k]:
                continue
            touched[k] = False
            if lazy and remaining[k] > 0:
                refresh_sort_key(k, A[k, 0], B[k, 0], gx, gF, gD, gL, gM, ng, n_at, kidx, ell, pk, tail_cap)
                resort_by_key(order, pos, ell, k, n_sorted)
            if need_index:
                if estimation:
                    idx[k] = -expected_variance_drop(A[k, 0], B[k, 0])
                elif strategy == 5:
                    idx[k] = ucb_index_score(kind, k, A, B, ncell, w, sc, ucb_level, ucb_z)
                else:
                    idx[k] = mean_score(kind, k, A, B, ncell, w, sc)
                    dirty[k] = False
                    est[k] = idx[k]
        n_lab += n_pend
        # ---- empirical Bayes: refit the shared prior Beta(mu tau, (1 - mu) tau) across classes
        if eb and n_lab >= next_eb:
            next_eb += eb_every
            if refit_eb_prior(A, B, n_succ, n_fail, K):
                for k in range(K):
                    dirty[k] = True
                    if need_index:
                        if estimation:
                            idx[k] = -expected_variance_drop(A[k, 0], B[k, 0])
                        elif strategy == 5:
                            idx[k] = ucb_index_score(kind, k, A, B, ncell, w, sc, ucb_level, ucb_z)
                        else:
                            idx[k] = mean_score(kind, k, A, B, ncell, w, sc)
                if lazy:
                    for k in range(K):
                        if remaining[k] > 0:
                            build_cdf_table(k, A[k, 0], B[k, 0], gx, gF, gD, gL, gM, ng, n_at)
                            refresh_sort_key(k, A[k, 0], B[k, 0], gx, gF, gD, gL, gM, ng, n_at, kidx, ell, pk, tail_cap)
                    order = np.argsort(ell)
                    for j in range(K):
                        pos[order[j]] = j
        # ---- log every L labels
        while next_log < n_logs and n_lab >= (next_log + 1) * log_every:
            mrr, ok, err = evaluate_ranking(kind, K, A, B, ncell, w, sc, est, dirty, true_top, truth, m)
            out_mrr[next_log] = mrr
            out_success[next_log] = ok
            out_error[next_log] = err
            out_agreement[next_log] = ranking_agreement(K, est, true_top, m)
            next_log += 1
        if n_pend == 0:
            break
    # the pool ran out before a requested log (budget > pool): repeat the final state
    while next_log < n_logs:
        mrr, ok, err = evaluate_ranking(kind, K, A, B, ncell, w, sc, est, dirty, true_top, truth, m)
        out_mrr[next_log] = mrr
        out_success[next_log] = ok
        out_error[next_log] = err
        out_agreement[next_log] = ranking_agreement(K, est, true_top, m)
        next_log += 1


@nb.njit(parallel=True, cache=True)
def run_replicates(states, strategy, kind, estimation, m, batch, budget, log_every, n_logs,
                   arm_start, item_cell, item_success, A0, B0, ncell, w, sc, true_top, truth,
                   ttts_beta, epsilon, ucb_level, ucb_z, tail_cap, eb_every):
    """R replicate runs of one strategy (one per row of ``states``), in parallel: per-run logs and picks."""
    R = states.shape[0]
    K = arm_start.shape[0] - 1
    out_mrr = np.zeros((R, n_logs))
    out_success = np.zeros((R, n_logs), dtype=np.bool_)
    out_error = np.zeros((R, n_logs))
    out_picks = np.zeros((R, K), dtype=np.int64)
    out_agreement = np.zeros((R, n_logs))
    for r in nb.prange(R):
        st = states[r].copy()
        _run_one(st, strategy, kind, estimation, m, batch, budget, log_every, n_logs,
                 arm_start, item_cell, item_success, A0, B0, ncell, w, sc, true_top, truth,
                 ttts_beta, epsilon, ucb_level, ucb_z, tail_cap, eb_every,
                 out_mrr[r], out_success[r], out_error[r], out_picks[r], out_agreement[r])
    return out_mrr, out_success, out_error, out_picks, out_agreement
