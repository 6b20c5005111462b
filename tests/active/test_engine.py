"""Tests of the compiled active-assessment engine (rng, special functions, lazy TS, kernels), targets,
strategies, evaluation and plots."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import numba as nb
import numpy as np
import pytest
from scipy import special, stats

from pbassess import ConfigError, Predictions
from pbassess.active import engine as E
from pbassess.active import lazy_ts as LZ
from pbassess.active import scores as SC
from pbassess.active.evaluation import labels_to_mrr, mean_reciprocal_rank, success, summary_table
from pbassess.active.experiment import labels_to_mrr_table, simulate
from pbassess.active.strategies import StrategyOptions, parse_strategies
from pbassess.active.targets import build_inputs, true_metric


def _pool(n_per_class=(30, 40, 25, 35), acc=(0.5, 0.9, 0.7, 0.95), seed=1) -> Predictions:
    """A synthetic fully labeled top-1 pool with well separated class accuracies."""
    rng = np.random.default_rng(seed)
    pred, lab, conf = [], [], []
    k = len(n_per_class)
    for c, (n, a) in enumerate(zip(n_per_class, acc, strict=True)):
        correct = np.zeros(n, dtype=bool)
        correct[: int(round(a * n))] = True
        pred += [c] * n
        lab += [c if ok else (c + 1 + rng.integers(k - 1)) % k for ok in correct]
        conf += list(rng.uniform(0.5, 1.0, n))
    return Predictions.from_top1(pred, conf, lab, classes=[f"c{i}" for i in range(k)])


# ------------------------------------------------------------------ numerics
def test_betainc_and_inverse_match_scipy():
    for a, b, x in [(2.0, 3.0, 0.4), (0.5, 0.7, 0.2), (150.0, 40.0, 0.7), (1.0, 1.0, 0.3), (30.0, 2.5, 0.95)]:
        assert E.betainc(a, b, x) == pytest.approx(special.betainc(a, b, x), rel=1e-10, abs=1e-14)
        q = special.betainc(a, b, x)
        assert E.betaincinv(a, b, q) == pytest.approx(x, rel=1e-8)


@nb.njit
def _grid_after_labels(a, b, outcomes):
    gx = np.zeros((1, LZ.MAX_TABLE_POINTS))
    gF = np.zeros((1, LZ.MAX_TABLE_POINTS))
    gD = np.zeros((1, LZ.MAX_TABLE_POINTS))
    gL = np.zeros((1, LZ.MAX_TABLE_POINTS))
    gM = np.zeros((1, LZ.MAX_TABLE_POINTS))
    ng = np.zeros(1, dtype=np.int64)
    n_at = np.zeros(1)
    LZ.build_cdf_table(0, a, b, gx, gF, gD, gL, gM, ng, n_at)
    for o in outcomes:
        LZ.update_cdf_table(0, o, a, b, gx, gF, gD, ng)
        if o:
            a += 1.0
        else:
            b += 1.0
    return gx[0, : ng[0]], gF[0, : ng[0]], a, b


def test_cdf_table_recurrence_stays_exact():
    # 60 labels applied by the incomplete-beta recurrences, no regrid: compare with scipy.
    outcomes = np.random.default_rng(0).random(60) < 0.7
    x, f, a, b = _grid_after_labels(3.0, 2.0, outcomes)
    assert np.allclose(f, special.betainc(a, b, x), rtol=0, atol=1e-12)


@nb.njit
def _bin_draws(n, a, b, lo, hi, seed):
    # through _bin_value, which picks the chord sampler for interior bins, as the kernel does
    s = seed.copy()
    spare = np.zeros(2)
    gx = np.array([[lo, hi]])
    gL = np.array([[math.log(lo) if lo > 0 else 0.0, math.log(hi)]])
    gM = np.array([[math.log1p(-lo), math.log1p(-hi) if hi < 1 else 0.0]])
    out = np.empty(n)
    for i in range(n):
        out[i] = LZ._bin_value(s, spare, a, b, gx, gL, gM, 0, 0)
    return out


@pytest.mark.parametrize("a,b", [(30.0, 10.0), (2.0, 5.0), (1.0, 3.0), (5.0, 5.0), (400.0, 90.0)])
def test_truncated_beta_samplers_are_exact(a, b):
    # Kolmogorov-Smirnov against the truncated Beta CDF in every bin of the arm's table;
    # with 4000 draws a correct sampler fails p < 1e-4 with probability 1e-4 per bin.
    d = stats.beta(a, b)
    mu, sd = d.mean(), d.std()
    edges = [0.0] + [x for x in mu + LZ._GRID_Z * sd if 1e-9 < x < 1 - 1e-9] + [1.0]
    for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:], strict=True)):
        x = _bin_draws(4000, a, b, float(lo), float(hi), E.seed_states(11 + i, 1)[0])
        assert ((x >= lo) & (x <= hi)).all()  # edges have probability zero
        flo, fhi = d.cdf(lo), d.cdf(hi)
        p = stats.kstest(x, lambda v, flo=flo, fhi=fhi: (d.cdf(v) - flo) / (fhi - flo)).pvalue
        assert p > 1e-4, (a, b, lo, hi, p)


@nb.njit
def _lazy_winners(A, B, n, m, cap, seed):
    K = A.shape[0]
    gx = np.zeros((K, LZ.MAX_TABLE_POINTS))
    gF = np.zeros((K, LZ.MAX_TABLE_POINTS))
    gD = np.zeros((K, LZ.MAX_TABLE_POINTS))
    gL = np.zeros((K, LZ.MAX_TABLE_POINTS))
    gM = np.zeros((K, LZ.MAX_TABLE_POINTS))
    ng = np.zeros(K, dtype=np.int64)
    n_at = np.zeros(K)
    kidx = np.zeros(K, dtype=np.int64)
    ell = np.zeros(K)
    pk = np.zeros(K)
    for k in range(K):
        LZ.build_cdf_table(k, A[k, 0], B[k, 0], gx, gF, gD, gL, gM, ng, n_at)
        LZ.refresh_sort_key(k, A[k, 0], B[k, 0], gx, gF, gD, gL, gM, ng, n_at, kidx, ell, pk, cap)
    order = np.argsort(ell)
    pos = np.empty(K, dtype=np.int64)
    for j in range(K):
        pos[order[j]] = j
    s = seed.copy()
    spare = np.zeros(2)
    stamp = np.zeros(K, dtype=np.int64)
    vals = np.zeros(m)
    arms = np.zeros(m, dtype=np.int64)
    his = np.zeros(m)
    c_arm = np.zeros(K, dtype=np.int64)
    c_bin = np.zeros(K, dtype=np.int64)
    c_lo = np.zeros(K)
    counts = np.zeros(K)
    for r in range(n):
        LZ.lazy_ts_smallest(s, spare, A, B, gx, gF, gL, gM, kidx, ell, pk, order, K, stamp, r + 1, cap, math.log1p(-cap),
                            m, vals, arms, his, c_arm, c_bin, c_lo)
        for i in range(m):
            counts[arms[i]] += 1
    return counts / n


@pytest.mark.parametrize("m", [1, 3])
def test_lazy_thompson_sampling_has_the_exact_law(m):
    # P(arm k among the m smallest of independent Beta draws): lazy kernel vs brute force.
    rng = np.random.default_rng(3)
    K = 25
    n = rng.integers(2, 200, K)
    acc = rng.uniform(0.45, 0.95, K)
    A = (1.0 + np.round(acc * n))[:, None]
    B = (1.0 + n - np.round(acc * n))[:, None]
    draws = 40000
    lazy = _lazy_winners(A, B, draws, m, 0.05, E.seed_states(5, 1)[0])
    brute = rng.beta(A[:, 0], B[:, 0], size=(draws, K))
    ranks = np.argsort(np.argsort(brute, axis=1), axis=1)
    ref = (ranks < m).mean(axis=0)
    # both are Monte Carlo frequencies of the same probabilities: the difference has
    # sd <= sqrt(2 p (1-p) / draws); 5 sd bounds all 25 arms with overwhelming probability.
    sd = np.sqrt(2 * np.maximum(ref * (1 - ref), 1e-4) / draws)
    assert np.all(np.abs(lazy - ref) < 5 * sd + 1e-3)


def test_seed_states_prefix_stable():
    assert np.array_equal(E.seed_states(4, 10)[:3], E.seed_states(4, 3))


# ------------------------------------------------------------------ evaluation
def test_mrr_hand_examples():
    est = [0.10, 0.20, 0.30, 0.40, 0.50]
    assert mean_reciprocal_rank(est, [0]) == 1.0
    assert mean_reciprocal_rank(est, [2]) == pytest.approx(1 / 3)
    # top-2 {0, 2}: class 2 has one wrong class (1) ahead; class 0 ahead of it is ignored
    assert mean_reciprocal_rank(est, [0, 2]) == pytest.approx((1 + 1 / 2) / 2)
    # the right set in any internal order is MRR 1
    assert mean_reciprocal_rank([0.2, 0.1, 0.9], [0, 1]) == 1.0
    assert success([0.2, 0.1, 0.9], [0, 1]) and not success([0.2, 0.9, 0.1], [0, 1])
    # ties are broken by index
    assert mean_reciprocal_rank([0.5, 0.5], [1]) == 0.5


def test_kernel_evaluation_matches_reference():
    rng = np.random.default_rng(8)
    for m in (1, 3):
        K = 12
        A = rng.uniform(1, 50, (K, 1))
        B = rng.uniform(1, 50, (K, 1))
        truth = rng.random(K)
        top = np.zeros(K, dtype=bool)
        top[np.argsort(truth)[:m]] = True
        est = np.zeros(K)
        dirty = np.ones(K, dtype=bool)
        one = np.ones((K, 1))
        mrr, ok, err = SC.evaluate_ranking(0, K, A, B, np.ones(K, dtype=np.int64), one, one * 0, est, dirty, top, truth, m)
        mean = (A / (A + B))[:, 0]
        assert mrr == pytest.approx(mean_reciprocal_rank(mean, top))
        assert ok == success(mean, top)
        assert err == pytest.approx(np.abs(mean - truth).mean())


def test_labels_to_mrr():
    assert labels_to_mrr([0.2, 0.98, 0.995], [10, 20, 30], 100) == 0.3
    assert math.isnan(labels_to_mrr([0.2, 0.5], [10, 20], 100))


# ------------------------------------------------------------------ runs
@pytest.mark.parametrize("strategy", ["random-item", "random-arm", "ts", "ttts", "mpts", "bayes-ucb",
                                      "epsilon-greedy", "greedy"])
def test_every_strategy_labels_each_item_once(strategy):
    p = _pool()
    x = build_inputs(p, "least-accurate", top_m=2)
    out = E.run_engine(x, strategy, runs=6, seed=2, log_every=10)
    counts = np.diff(x.arm_start)
    # without replacement, exhausted arms drop out: the full pool gives each arm its n_k labels
    assert (out.picks == counts).all()
    # after all labels (uniform prior, separated accuracies) the ranking is the truth
    assert (out.mrr[:, -1] == 1.0).all() and out.success[:, -1].all()


def test_budget_and_batches_respect_the_pool():
    p = _pool()
    x = build_inputs(p, "least-accurate")
    counts = np.diff(x.arm_start)
    out = E.run_engine(x, "ts", runs=5, seed=1, budget=57, log_every=10, batch_size=7)
    assert (out.picks.sum(axis=1) == 57).all() and (out.picks <= counts).all()
    assert out.mrr.shape == (5, 5)
    full = E.run_engine(x, "ts", runs=3, seed=1, log_every=10, batch_size=8)
    assert (full.picks == counts).all()


def test_reproducible_from_one_seed():
    x = build_inputs(_pool(), "least-accurate")
    a = E.run_engine(x, "ts", runs=8, seed=42, log_every=5)
    b = E.run_engine(x, "ts", runs=8, seed=42, log_every=5)
    c = E.run_engine(x, "ts", runs=3, seed=42, log_every=5, run_offset=5)
    d = E.run_engine(x, "ts", runs=8, seed=43, log_every=5)
    assert np.array_equal(a.mrr, b.mrr) and np.array_equal(a.picks, b.picks)
    assert np.array_equal(a.mrr[5:], c.mrr)  # run r does not depend on how runs are batched
    assert not np.array_equal(a.mrr, d.mrr)


def test_exhausted_arm_drops_out():
    # class 0 has 2 items and is by far the worst: TS must move on after labeling both
    p = _pool(n_per_class=(2, 40, 40), acc=(0.0, 0.9, 0.8))
    x = build_inputs(p, "least-accurate")
    out = E.run_engine(x, "ts", runs=4, seed=0, budget=20, log_every=5)
    assert (out.picks[:, 0] == 2).all() and (out.picks.sum(axis=1) == 20).all()


def test_targets_truth_and_kinds():
    p = _pool()
    acc = true_metric(p, "least-accurate")
    assert acc == pytest.approx([0.5, 0.9, 0.72, 0.942857], abs=1e-6)
    most = build_inputs(p, "most-accurate")
    assert most.true_top.tolist() == [False, False, False, True]
    ece = build_inputs(p, "most-miscalibrated", bins=5)
    assert ece.kind == E.KIND_ECE and np.allclose(ece.weight.sum(axis=1), 1.0)
    assert -ece.truth == pytest.approx(true_metric(p, "most-miscalibrated", bins=5))
    zero_one = build_inputs(p, "highest-cost")
    assert zero_one.kind == E.KIND_BETA and zero_one.true_top[0]
    cost = np.array([[0, 1, 1, 1], [1, 0, 2, 2], [1, 2, 0, 3], [1, 1, 1, 0]], dtype=float)
    multi = build_inputs(p, "highest-cost", cost_matrix=cost)
    assert multi.kind == E.KIND_DIRICHLET
    assert -multi.truth == pytest.approx(true_metric(p, "highest-cost", cost_matrix=cost))
    for x in (ece, zero_one, multi):
        out = E.run_engine(x, "ts", runs=3, seed=0, log_every=10)
        assert (out.picks == np.diff(x.arm_start)).all()


def test_informed_prior_uses_mean_confidence():
    p = _pool()
    x = build_inputs(p, "least-accurate", prior="informed", pseudocount=10)
    s = np.bincount(p.predicted, weights=p.confidence) / np.bincount(p.predicted)
    assert x.prior_a[:, 0] == pytest.approx(10 * s) and x.prior_b[:, 0] == pytest.approx(10 * (1 - s))


def test_bad_options_raise_config_errors():
    p = _pool()
    with pytest.raises(ConfigError, match="unknown strategy"):
        parse_strategies("ts,thompson")
    with pytest.raises(ConfigError, match="estimation"):
        parse_strategies("ts", "estimation")
    with pytest.raises(ConfigError, match="top_m"):
        build_inputs(p, "least-accurate", top_m=4)
    with pytest.raises(ConfigError, match="prior"):
        simulate(p, priors="flat")
    with pytest.raises(ConfigError, match="batch_size"):
        StrategyOptions(batch_size=0)
    with pytest.raises(ConfigError, match="cost_matrix"):
        build_inputs(p, "highest-cost", cost_matrix=np.ones((2, 2)))
    with pytest.raises(TypeError, match="cost"):  # the old spelling cost= is gone (0.2.0)
        build_inputs(p, "highest-cost", cost_matrix="zero-one", cost="zero-one")


def test_simulate_dataset_and_plots():
    p = _pool()
    ds = simulate(p, "least-accurate", "random-item,ts", "uniform,informed", runs=5, log_every=10, seed=3)
    assert dict(ds["mrr"].sizes) == {"strategy": 2, "prior": 2, "run": 5, "step": 13}
    assert ds["labels"].values[-1] == 130 and ds.attrs["true_top"] == "c0"
    table = summary_table(ds)
    assert set(table["strategy"]) == {"random-item", "ts"}
    assert labels_to_mrr_table(ds).shape == (2, 2)
    est = simulate(p, "estimation", "greedy,random-arm", runs=3, log_every=10)
    assert (est["error"].isel(step=-1) < est["error"].isel(step=0)).all()
    from pbassess.plots.active import plot_active

    fig = plot_active(ds)
    assert len(fig.axes) == 3


@pytest.mark.slow
def test_ts_beats_random_item_on_cifar100(cifar100):
    # the paper's headline: TS finds the least accurate CIFAR-100 class with far fewer labels
    ds = simulate(cifar100, "least-accurate", "random-item,ts", runs=20, seed=0)
    t = labels_to_mrr_table(ds)
    ts, rnd = float(t.sel(strategy="ts", prior="uniform")), float(t.sel(strategy="random-item", prior="uniform"))
    assert ts < 0.5 * rnd
    assert ds["mrr"].sel(strategy="random-item").isel(step=-1).mean() == 1.0


def test_empirical_bayes_refit_is_the_method_of_moments():
    # classes with rates 0.2 .. 0.8 on 100 labels each: mu = 0.5, between-class variance known
    K = 7
    rates = np.linspace(0.2, 0.8, K)
    succ = rates * 100
    fail = 100 - succ
    A = np.ones((K, 1))
    B = np.ones((K, 1))
    assert SC.refit_eb_prior(A, B, succ, fail, K)
    var_between = rates.var() - 0.25 / 100
    tau = 0.25 / var_between - 1
    assert A[:, 0] == pytest.approx(0.5 * tau + succ) and B[:, 0] == pytest.approx(0.5 * tau + fail)


def test_empirical_bayes_prior_runs_and_is_rejected_where_undefined():
    p = _pool()
    x = build_inputs(p, "least-accurate", prior="eb")
    assert x.empirical_bayes
    out = E.run_engine(x, "ts", runs=4, seed=0, log_every=10, eb_every=10)
    assert (out.picks == np.diff(x.arm_start)).all() and (out.mrr[:, -1] == 1.0).all()
    with pytest.raises(ConfigError, match="empirical-Bayes"):
        build_inputs(p, "most-miscalibrated", prior="eb")
