"""The optimal-design bound of a surface: closed forms, a simulated linear-Gaussian model, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from pbassess.errors import ConfigError, DataError
from pbassess.pymc_models.surface import additive_design
from pbassess.surface import ArmCounts, count_arms
from pbassess.surface.design_bound import LinearSurfaceDesign, anchored_linearisation, next_labels
from pbassess.surface.synthetic import miscalibrated_surface


def _independent(c, w, s2=4.0, cap=1e6):
    k = len(c)
    return LinearSurfaceDesign(np.eye(k), np.full(k, s2), np.asarray(w, float), np.asarray(c, float), np.full(k, cap))


def test_independent_arms_match_the_closed_form_allocation():
    # risk = sum c_a / (1/s2 + n_a w_a): the KKT conditions give
    # n_a = max(0, (sqrt(c_a w_a / lam) - 1/s2) / w_a) with lam such that sum n = N.
    c, w, s2, total = np.array([1.0, 0.5, 0.1, 0.01]), np.array([0.25, 0.16, 0.09, 0.2]), 4.0, 120
    d = _independent(c, w, s2)

    def alloc(lam):
        return np.maximum(0.0, (np.sqrt(c * w / lam) - 1 / s2) / w)

    lo, hi = 1e-12, 1e3
    for _ in range(200):
        mid = np.sqrt(lo * hi)
        lo, hi = (mid, hi) if alloc(mid).sum() > total else (lo, mid)
    expected = alloc(np.sqrt(lo * hi))
    got = d.optimal_allocation(total, iterations=2000)
    np.testing.assert_allclose(got, expected, atol=0.05)
    assert got.sum() == pytest.approx(total)
    assert d.risk(got) == pytest.approx(d.risk(expected), rel=1e-6)


def test_allocation_respects_each_arms_pool():
    d = LinearSurfaceDesign(np.eye(3), np.ones(3), np.full(3, 0.25), np.array([1.0, 1.0, 0.0]),
                            np.array([5.0, 100.0, 100.0]))
    n = d.optimal_allocation(40)
    assert n[0] == pytest.approx(5.0, abs=1e-6) and n[1] == pytest.approx(35.0, abs=1e-6)
    assert n[2] == pytest.approx(0.0, abs=1e-6)


def test_risk_is_the_mse_of_the_posterior_mean_in_a_simulated_linear_gaussian_model():
    # theta ~ N(0, diag(v)); each label of arm a observes x_a . theta + N(0, 1 / w_a). The posterior
    # mean's squared error at x_a, weighted by c_a, averages to risk(n) over draws of theta and noise.
    rng = np.random.default_rng(0)
    X = np.array([[1, 1, 0], [1, -1, 0], [1, 0, 1], [1, 0, -1], [1, 1, 1]], float)
    v, w, c = np.array([1.0, 0.5, 0.25]), np.array([0.25, 0.2, 0.16, 0.24, 0.1]), np.full(5, 0.2)
    n = np.array([3, 0, 5, 1, 2])
    d = LinearSurfaceDesign(X, v, w, c, np.full(5, 10.0))
    reps, err = 20000, 0.0
    precision = X.T @ ((n * w)[:, None] * X) + np.diag(1 / v)
    S = np.linalg.inv(precision)
    for _ in range(reps):
        theta = rng.normal(0, np.sqrt(v))
        score = np.zeros(3)
        for a in range(5):
            y = X[a] @ theta + rng.normal(0, 1 / np.sqrt(w[a]), size=n[a])
            score += w[a] * X[a] * y.sum()
        post = S @ score
        err += float(np.sum(c * (X @ (post - theta)) ** 2))
    # the squared error's sd over replicates is about its mean here: 3 standard errors is ~2%
    assert err / reps == pytest.approx(d.risk(n), rel=0.03)


def test_random_risk_of_the_whole_pool_and_labels_to_match():
    d = _independent([1.0, 1.0], [0.25, 0.25], cap=8.0)
    assert d.random_risk(16, seed=1) == pytest.approx(d.risk([8.0, 8.0]))
    one = LinearSurfaceDesign(np.eye(1), np.array([1.0]), np.array([1.0]), np.array([1.0]), np.array([100.0]))
    assert one.labels_to_match(1 / 11) == 10 and one.labels_to_match(1 / 10.5) == 10
    assert one.labels_to_match(1e-9) == 101  # beyond the pool
    # a bound on the search changes nothing, whether it holds (50) or not (5)
    assert one.labels_to_match(1 / 11, upper=50) == one.labels_to_match(1 / 11, upper=5) == 10


def test_bad_input_is_one_clear_error():
    d = _independent([1.0, 1.0], [0.25, 0.25], cap=8.0)
    with pytest.raises(DataError, match="one count per arm"):
        d.risk([1.0])
    with pytest.raises(ConfigError, match="between 0 and the pool's 16"):
        d.optimal_allocation(17)
    wide = LinearSurfaceDesign(np.ones((2, 1001)), np.ones(1001), np.full(2, 0.25), np.full(2, 0.5), np.full(2, 9.0))
    with pytest.raises(ConfigError, match="up to 1,000 coefficients; this surface's has 1,001"):
        wide.optimal_allocation(4)
    a = ArmCounts.from_arrays([0, 0], [0, 0], values=[[0], [1]], confidence=[0.8, 0.7], pool_n=[10, 20])
    with pytest.raises(ConfigError, match="unknown coding"):
        anchored_linearisation(a, [0.8, 0.7], coding="dummy")
    with pytest.raises(ConfigError, match="unknown prior"):
        anchored_linearisation(a, [0.8, 0.7], prior="flat")
    with pytest.raises(DataError, match="one value per arm"):
        anchored_linearisation(a, [0.8])


def test_optimal_design_is_below_random_labels_on_the_miscalibrated_surface():
    mis = miscalibrated_surface(10000, 6, seed=0)
    arms = count_arms(mis.preds, list(mis.attributes))
    truth = mis.arm_truth(arms.values)
    for prior in ("model", "oracle"):
        d = anchored_linearisation(arms, truth, prior=prior)
        assert d.rows.shape[0] == arms.n_arms
        proportional = arms.pool_n * (200 / arms.pool_n.sum())
        best = d.optimal_allocation(200)
        assert d.risk(best) < d.risk(proportional)
        # labels only shrink the risk, and the prior alone is the risk of no labels
        assert d.risk(best) < d.risk(np.zeros(arms.n_arms))
        assert d.labels_to_match(d.random_risk(200, seed=0, draws=8)) < 200
        # KKT: the risk's gradient is equal on the arms strictly inside their bounds, and no lower on empty ones
        S = d._covariance(best)
        XS = d.rows @ S
        grad = -d.information * ((d.rows @ (XS.T @ (d.risk_weight[:, None] * XS))) * d.rows).sum(axis=1)
        inside = (best > 1e-6) & (best < d.capacity - 1e-6)
        assert inside.sum() >= 5
        assert np.ptp(grad[inside]) < 1e-3 * np.abs(grad[inside]).mean()
        assert np.all(grad[best <= 1e-6] >= grad[inside].max() - 1e-3 * np.abs(grad[inside]).mean())


def test_oracle_prior_is_small_where_the_confidence_is_calibrated():
    # every rule's over-confidence 0: the truth's residual is the calibrated confidence's own
    # Jensen gap only, so the oracle's residual variances sit near their floor (the model's / 100)
    mis = miscalibrated_surface(20000, 4, seed=3, shift=(0.0, 0.0))
    arms = count_arms(mis.preds, list(mis.attributes))
    model = anchored_linearisation(arms, mis.arm_truth(arms.values), prior="model")
    oracle = anchored_linearisation(arms, mis.arm_truth(arms.values), prior="oracle")
    assert np.all(oracle.prior_variance[2:] <= model.prior_variance[2:])
    assert np.median(oracle.prior_variance[2:] / model.prior_variance[2:]) < 0.2


def test_next_labels_add_the_optimal_increment_to_the_labels_already_placed():
    mis = miscalibrated_surface(10000, 6, seed=0)
    arms = count_arms(mis.preds, list(mis.attributes))
    d = anchored_linearisation(arms, np.asarray(arms.confidence), prior="model")
    labeled = np.minimum(arms.pool_n, np.random.default_rng(0).multivariate_hypergeometric(
        arms.pool_n.astype(np.int64), 100)).astype(float)
    full = d.optimal_allocation(140, labeled=labeled)
    assert np.all(full >= labeled - 1e-9) and full.sum() == pytest.approx(140)
    picked = next_labels(d, labeled, 40)
    assert picked.size == 40
    counts = np.bincount(picked, minlength=arms.n_arms)
    assert np.all(labeled + counts <= arms.pool_n)
    np.testing.assert_allclose(counts, full - labeled, atol=1.0)  # whole labels from the fractional design
    # the increment helps more than 40 random labels would
    rnd = labeled + np.random.default_rng(1).multivariate_hypergeometric((arms.pool_n - labeled).astype(np.int64), 40)
    assert d.risk(labeled + counts) < d.risk(rnd)
    closed = np.ones(arms.n_arms, dtype=bool)
    closed[np.argsort(-counts)[:3]] = False  # the three arms it wanted most are not available
    assert not np.isin(next_labels(d, labeled, 40, available=closed), np.flatnonzero(~closed)).any()
    with pytest.raises(ConfigError, match="already placed"):
        d.optimal_allocation(50, labeled=labeled)


def test_design_strategy_needs_the_confidence_and_returns_arms_with_room():
    from pbassess.surface import fit_surface
    from pbassess.surface.explore import choose_arms

    with_conf = ArmCounts.from_arrays([5, 0, 2, 0], [4, 0, 1, 0], values=[[0, 0], [0, 1], [1, 0], [1, 1]],
                                      attributes=("a", "b"), confidence=[0.9, 0.8, 0.7, 0.6], pool_n=[50, 40, 30, 20])
    r = fit_surface(with_conf, estimator="beta-i", seed=0)
    avail = np.array([True, True, True, False])
    chosen = choose_arms(r, avail, 6, "design")
    assert chosen.size == 6 and 3 not in chosen.tolist()  # more labels than open arms: arms recur
    design = anchored_linearisation(with_conf, r.mean, prior="model")
    assert chosen.tolist() == next_labels(design, with_conf.n, 6, available=avail).tolist()
    bare = fit_surface(ArmCounts.from_arrays([5, 0], [4, 0]), estimator="beta-i", seed=0)
    with pytest.raises(ConfigError, match="confidence"):
        choose_arms(bare, np.array([True, True]), 1, "design")


def test_design_exploration_runs_on_the_anchored_posterior():
    from pbassess.surface.explore import explore_surface

    mis = miscalibrated_surface(3000, 4, seed=1)
    arms = count_arms(mis.preds, list(mis.attributes))
    ds = explore_surface(mis.preds, list(mis.attributes), estimator="additive", strategy="design", budget=60,
                         batch_size=20, initial_labels=20, seeds=[0], truth=mis.arm_truth(arms.values),
                         fit_kwargs={"covariate": "confidence",
                                     "sample_kwargs": {"draws": 100, "tune": 200, "chains": 2, "cores": 1}})
    assert ds["n_labels"].values[0].tolist() == [20, 40, 60]
    assert np.all(np.isfinite(ds["macro_mse"].values))


def test_posterior_prior_takes_the_scales_an_anchored_fit_learned():
    import warnings

    from pbassess.surface import fit_surface, hide_labels
    from pbassess.surface.design_bound import posterior_block_scales

    mis = miscalibrated_surface(3000, 4, seed=1)
    attrs = list(mis.attributes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = fit_surface(hide_labels(mis.preds, 400, seed=0), attrs, estimator="additive", covariate="confidence",
                        seed=0, sample_kwargs={"draws": 200, "tune": 300, "chains": 2, "cores": 1})
    scales = posterior_block_scales(r.idata)
    post = r.idata["posterior"]
    assert scales["main"].shape == (4,) and scales["pair"].shape == (6,)
    np.testing.assert_allclose(scales["pair"], np.sqrt((post["pair_sd"].values ** 2).mean(axis=(0, 1))))
    d = anchored_linearisation(r.arms, r.mean, prior="posterior", block_scales=scales)
    blocks = additive_design(r.arms).block  # columns 2 .. 2 + blocks.size; the map first, the arm effects after
    residual = d.prior_variance[2:2 + blocks.size]
    for b in range(4):
        np.testing.assert_allclose(residual[blocks == b], scales["main"][b] ** 2)
    np.testing.assert_allclose(d.prior_variance[2 + blocks.size:], scales["arm"][0] ** 2)
    with pytest.raises(ConfigError, match="needs the fit's block_scales"):
        anchored_linearisation(r.arms, r.mean, prior="posterior")
    with pytest.raises(ConfigError, match="2 main and 6 pair scales"):
        anchored_linearisation(r.arms, r.mean, prior="posterior", block_scales={**scales, "main": np.array([0.1, 0.1])})
    assert posterior_block_scales(fit_surface(r.arms, estimator="beta-i", seed=0).idata) is None


def test_design_strategy_linearises_in_the_fits_own_coding():
    """An anchored fit with the indicator design (the wider prior's coding) is linearised in that design, with
    the scales it learned: the labels chosen are that design's, not the contrasts'."""
    import warnings

    from pbassess.pymc_models.surface import LOOSE_ANCHORED_OPTIONS
    from pbassess.surface import fit_surface, hide_labels
    from pbassess.surface.design_bound import posterior_block_scales
    from pbassess.surface.explore import choose_arms

    mis = miscalibrated_surface(3000, 4, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = fit_surface(hide_labels(mis.preds, 400, seed=0), list(mis.attributes), estimator="additive",
                        covariate="confidence", seed=0, model_options=LOOSE_ANCHORED_OPTIONS, stack_confidence=False,
                        sample_kwargs={"draws": 200, "tune": 300, "chains": 2, "cores": 1})
    avail = np.ones(r.arms.n_arms, bool)
    chosen = choose_arms(r, avail, 30, "design")
    scales = posterior_block_scales(r.idata)
    kw = {"prior": "posterior", "block_scales": scales}
    indicator = next_labels(anchored_linearisation(r.arms, r.mean, coding="indicator", **kw), r.arms.n, 30,
                            available=avail)
    contrast = next_labels(anchored_linearisation(r.arms, r.mean, **kw), r.arms.n, 30, available=avail)
    assert chosen.tolist() == indicator.tolist()
    assert sorted(chosen.tolist()) != sorted(contrast.tolist())


def test_design_exploration_refuses_a_surface_too_large_before_fitting(monkeypatch):
    from pbassess.surface import explore

    mis = miscalibrated_surface(20000, 12, seed=0)
    arms = count_arms(mis.preds, list(mis.attributes))
    assert anchored_linearisation(arms, np.asarray(arms.confidence)).rows.shape[1] > 1000
    monkeypatch.setattr(explore, "fit_surface", lambda *a, **k: pytest.fail("fitted before refusing"))
    with pytest.raises(ConfigError, match="up to 1,000 coefficients"):
        explore.explore_surface(mis.preds, list(mis.attributes), estimator="beta-i", strategy="design", budget=40,
                                batch_size=20, initial_labels=20)
