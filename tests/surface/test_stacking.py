"""Stacking the anchored surface with the label-free confidence (issue 21: never worse than the anchor)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import xarray as xr

from pbassess.errors import ConfigError
from pbassess.surface import ArmCounts, count_arms, fit_surface, hide_labels
from pbassess.surface.evaluate import surface_errors
from pbassess.surface.stacking import (
    COMBINATIONS,
    check_combination,
    check_min_elpd_gain,
    compare_with_confidence,
    confidence_items,
    confidence_with_fit_spread,
    stack_accuracy_draws,
    stacking_weights,
)
from pbassess.surface.synthetic import miscalibrated_surface


def _loo_tree(log_lik: np.ndarray) -> xr.DataTree:
    chains, draws, _ = log_lik.shape
    return xr.DataTree.from_dict({
        "posterior": xr.Dataset({"x": (("chain", "draw"), np.zeros((chains, draws)))}),
        "log_likelihood": xr.Dataset({"correct": (("chain", "draw", "item"), log_lik)}),
    })


def test_two_model_weights_have_the_closed_form():
    """n1 items with densities (0.9, 0.3) and n2 with (0.2, 0.6): the optimum of
    n1 log(0.3 + 0.6 w) + n2 log(0.6 - 0.4 w) is w = (0.36 n1 - 0.12 n2) / (0.24 (n1 + n2))."""
    for n1, n2 in ((10, 10), (20, 10), (13, 7)):
        lpd = np.log(np.array([[0.9, 0.3]] * n1 + [[0.2, 0.6]] * n2))
        expected = (0.36 * n1 - 0.12 * n2) / (0.24 * (n1 + n2))
        np.testing.assert_allclose(stacking_weights(lpd), [expected, 1 - expected], atol=1e-5)
    # a per-item constant does not move the weights (densities rescaled item by item)
    lpd = np.log(np.array([[0.9, 0.3]] * 20 + [[0.2, 0.6]] * 10)) + np.linspace(-30, 5, 30)[:, None]
    np.testing.assert_allclose(stacking_weights(lpd)[0], 6.0 / 7.2, atol=1e-5)


def test_weights_equal_arviz_stacking_on_psis_loo():
    """The same objective as ``arviz_stats.compare(method="stacking")``, on two models with posterior draws."""
    import arviz as az

    rng = np.random.default_rng(4)
    p = rng.uniform(0.55, 0.95, size=200)
    right = rng.random(200) < p
    loos = {}
    first = np.arange(200) < 100
    for name, bias in (("first", np.where(first, 0.0, 1.5)), ("second", np.where(first, 1.5, 0.0))):
        # each model is off (a logit bias) on half of the items: neither dominates
        eta = np.log(p / (1 - p)) - bias + rng.normal(0, 0.2, size=(2, 300, 200))
        q = 1.0 / (1.0 + np.exp(-eta))
        loos[name] = az.loo(_loo_tree(np.where(right, np.log(q), np.log1p(-q))), pointwise=True)
    table = az.compare(loos, method="stacking", round_to="none")  # unrounded weights
    pointwise = np.column_stack([np.asarray(loos[n].elpd_i).ravel() for n in ("first", "second")])
    ours = stacking_weights(pointwise)
    np.testing.assert_allclose(ours, table.loc[["first", "second"], "weight"].to_numpy(dtype=float), atol=2e-3)
    assert 0.0 < ours[0] < 1.0  # a real mixture, not a corner


def test_weights_refuse_bad_input_in_one_line():
    for bad in (np.zeros((0, 2)), np.array([[0.0, np.nan]]), np.zeros(3)):
        with pytest.raises(ConfigError, match="stacking needs"):
            stacking_weights(bad)
    assert stacking_weights(np.zeros((4, 1))).tolist() == [1.0]


def test_stacked_draws_are_the_mixture_and_leave_the_rest_alone():
    """A fraction ``weight`` of the draws, evenly spaced, becomes the confidence model's (the fit's draws
    moved to the confidence's mean); the other draws, arms without a confidence and other groups are the fit's."""
    rng = np.random.default_rng(0)
    acc = rng.beta(8, 2, size=(4, 50, 3))
    tree = _loo_tree(np.log(rng.uniform(0.5, 0.9, size=(4, 50, 7))))
    tree["posterior"] = xr.DataTree(xr.Dataset({"accuracy": (("chain", "draw", "arm"), acc),
                                                "x": (("chain", "draw"), np.zeros((4, 50)))}))
    conf = np.array([0.7, np.nan, 0.95])
    flat = acc.reshape(200, 3)
    moved = confidence_with_fit_spread(flat[:, [0, 2]], conf[[0, 2]])
    for weight in (0.0, 0.3, 0.51, 1.0):
        out = stack_accuracy_draws(tree, conf, weight)
        got = out["posterior"]["accuracy"].to_numpy().reshape(200, 3)
        n_replaced = round(weight * 200)
        replaced = np.zeros(200, dtype=bool)
        replaced[np.floor(np.arange(n_replaced) * (200 / max(n_replaced, 1))).astype(int)] = True
        assert replaced.sum() == n_replaced
        np.testing.assert_allclose(got[:, 1], flat[:, 1])  # no confidence: the fit's draws
        np.testing.assert_allclose(got[~replaced], flat[~replaced])
        np.testing.assert_allclose(got[replaced][:, [0, 2]], moved[replaced])
        xr.testing.assert_identical(out["log_likelihood"].to_dataset(), tree["log_likelihood"].to_dataset())
    whole = stack_accuracy_draws(tree, conf, 1.0)["posterior"]["accuracy"].to_numpy().reshape(200, 3)
    np.testing.assert_allclose(whole[:, [0, 2]].mean(0), [0.7, 0.95], atol=1e-10)  # the confidence's mean
    assert (whole[:, [0, 2]].std(0) > 0.02).all()                                     # and a spread, not one value
    np.testing.assert_allclose(tree["posterior"]["accuracy"].to_numpy(), acc)  # the input is not modified
    known = np.array([0.7, 0.8, 0.95])  # every arm's confidence known: every draw is the confidence model's
    every = stack_accuracy_draws(tree, known, 1.0)["posterior"]["accuracy"].to_numpy().reshape(200, 3)
    np.testing.assert_allclose(every, confidence_with_fit_spread(flat, known))
    np.testing.assert_allclose(stack_accuracy_draws(tree, known, 0.0)["posterior"]["accuracy"].to_numpy(), acc)
    np.testing.assert_allclose(tree["posterior"]["accuracy"].to_numpy(), acc)
    with pytest.raises(ConfigError, match=r"in \[0, 1\]"):
        stack_accuracy_draws(tree, conf, 1.5)


def test_the_confidence_model_keeps_the_fits_logit_spread_and_order():
    """Moved draws: mean = the confidence (to 1e-12), the fit's logit-scale deviations from its median
    unchanged, each arm's draws in the same order; constant draws give the confidence itself."""
    rng = np.random.default_rng(1)
    z = rng.normal([-1.0, 0.5, 3.0], [0.05, 0.4, 0.8], size=(3000, 3))
    fit = 1.0 / (1.0 + np.exp(-z))
    conf = np.array([0.2, 0.9, 0.999])
    moved = confidence_with_fit_spread(fit, conf)
    np.testing.assert_allclose(moved.mean(0), conf, atol=1e-12)
    logit_moved = np.log(moved) - np.log1p(-moved)
    np.testing.assert_allclose(logit_moved - np.median(logit_moved, 0), z - np.median(z, 0), atol=1e-8)
    assert all((np.argsort(moved[:, a]) == np.argsort(fit[:, a])).all() for a in range(3))
    np.testing.assert_allclose(confidence_with_fit_spread(np.full((10, 2), 0.4), [0.8, 1.0]), [[0.8, 1 - 1e-6]] * 10)
    with pytest.raises(ConfigError, match="finite confidences"):
        confidence_with_fit_spread(fit, [0.2, np.nan, 0.5])
    with pytest.raises(ConfigError, match="finite confidences"):
        confidence_with_fit_spread(fit, [0.2, 0.5])


def test_stacking_refuses_what_it_cannot_stack():
    arms = ArmCounts.from_arrays([20, 5], [15, 4], values=[[0], [1]], attributes=("sex",))
    with pytest.raises(ConfigError, match="confidence-anchored surface"):
        fit_surface(arms, estimator="beta-i", stack_confidence=True)
    with pytest.raises(ConfigError, match="confidence-anchored surface"):
        fit_surface(arms, estimator="berngp", covariate="confidence", stack_confidence=True)


@pytest.fixture(scope="module")
def miscalibrated_fit():
    """One real NUTS fit of the anchored surface on a pool whose confidence is over-confident on one rule."""
    s = miscalibrated_surface(6000, 3, seed=1, n_rules=1, shift=(0.15, 0.2))
    kept = hide_labels(s.preds, 600, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = fit_surface(kept, list(s.attributes), estimator="additive", covariate="confidence", seed=0,
                            stack_confidence=False)
        stacked = fit_surface(kept, list(s.attributes), estimator="additive", covariate="confidence", seed=0,
                              stack_confidence=True, widen_scales=False)
    return s, plain, stacked


def test_labels_that_show_a_miscalibration_keep_the_fit(miscalibrated_fit):
    """A rule over-confident by 0.15-0.2: the anchored fit predicts the labels better than the
    confidence by more than the bound, so the surface is the fit alone (the default combination,
    "select"), its draws exactly; under "stack" it is the mixture at the confidence's stacking weight."""
    s, plain, stacked = miscalibrated_fit
    d = stacked.diagnostics
    assert d["elpd_diff_vs_confidence"] > 2 * d["elpd_diff_vs_confidence_se"] > 0
    assert d["elpd_diff_vs_confidence"] > d["min_elpd_gain"] == 4.0 and d["stacking_items"] == 600
    assert d["confidence_weight"] == 0.0 and d["confidence_combination"] == "select"
    assert 0.0 <= d["confidence_stacking_weight"] < 0.2
    np.testing.assert_allclose(stacked.mean, plain.mean, rtol=0, atol=1e-12)  # the same seed, the same NUTS draws
    truth, support = s.arm_truth(stacked.arms.values), count_arms(s.preds, s.attributes).pool_n
    mse = {k: surface_errors(m, truth, support, truth_is_empirical=False)["macro_mse"]
           for k, m in (("conf", stacked.arms.confidence), ("stacked", stacked.mean))}
    assert mse["stacked"] < 0.5 * mse["conf"]
    assert "so the surface is the anchored fit's" in stacked.sentence()
    assert "stacked with the confidence at weight" not in stacked.sentence()
    out = stacked.to_json()
    assert out["diagnostics"]["confidence_weight"] == 0.0 and out["diagnostics"]["confidence_combination"] == "select"
    assert stacked.options["stack_confidence"] is True and stacked.options["confidence_combination"] == "select"
    mix = compare_with_confidence(stacked.idata, stacked.arms, combination="stack")
    assert mix.weight == pytest.approx(d["confidence_stacking_weight"], abs=1e-9) and mix.combination == "stack"
    tree = stack_accuracy_draws(stacked.idata, stacked.arms.confidence, mix.weight)
    mixture = mix.weight * stacked.arms.confidence + (1 - mix.weight) * plain.mean
    np.testing.assert_allclose(tree["posterior"]["accuracy"].mean(("chain", "draw")).values, mixture, atol=2e-3)


def test_labels_that_show_the_confidence_wrong_widen_the_residual(miscalibrated_fit):
    """The default fit (fit_surface's defaults) shows the confidence wrong (ELPD gain above 4), so the
    surface is refitted with the wider residual prior: the result is that fit (its options, its
    variables, its own comparison with the confidence), the default fit's gain and convergence are kept
    in the diagnostics, and the sentence says so. The same seed without widening is the stacked fit."""
    from pbassess.pymc_models.surface import LOOSE_ANCHORED_OPTIONS

    s, plain, stacked = miscalibrated_fit
    kept = hide_labels(s.preds, 600, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wide = fit_surface(kept, list(s.attributes), estimator="additive", covariate="confidence", seed=0)
        own = compare_with_confidence(wide.idata, wide.arms)
    d = wide.diagnostics
    assert d["widened_scales"] is True and "widened_scales" not in stacked.diagnostics  # widen_scales=False
    assert d["default_scales_elpd_diff_vs_confidence"] == pytest.approx(stacked.diagnostics["elpd_diff_vs_confidence"])
    assert d["default_scales_divergences"] == stacked.diagnostics["divergences"]
    assert d["default_scales_max_rhat"] == pytest.approx(stacked.diagnostics["max_rhat"])
    assert wide.options["model_options"] == LOOSE_ANCHORED_OPTIONS and stacked.options["model_options"] == {}
    assert {k: wide.prior[k] for k in LOOSE_ANCHORED_OPTIONS} == LOOSE_ANCHORED_OPTIONS  # the model it fitted
    assert d["elpd_diff_vs_confidence"] == pytest.approx(own.elpd_diff, abs=1e-9)  # the returned fit's comparison
    assert d["confidence_weight"] == pytest.approx(own.weight, abs=1e-9)
    assert "refitted with wider scales" in wide.sentence() and "refitted" not in stacked.sentence()
    assert wide.to_json()["diagnostics"]["widened_scales"] is True
    assert not np.allclose(wide.mean, stacked.mean, atol=1e-4)  # another model's draws
    truth, support = s.arm_truth(wide.arms.values), count_arms(s.preds, s.attributes).pool_n
    mse = surface_errors(wide.mean, truth, support, truth_is_empirical=False)["macro_mse"]
    conf = surface_errors(wide.arms.confidence, truth, support, truth_is_empirical=False)["macro_mse"]
    assert mse < 0.5 * conf


def test_widening_is_refused_where_it_cannot_apply(monkeypatch):
    """Asked for where the surface is not stacked, or with the residual prior already set: one line,
    before any NUTS draw."""
    import pbassess.inference

    def no_fit(*args, **kwargs):
        raise AssertionError("sampled before refusing")

    monkeypatch.setattr(pbassess.inference, "fit", no_fit)
    s = miscalibrated_surface(3000, 2, seed=0, n_rules=0)
    kept = hide_labels(s.preds, 150, seed=0)
    anchored = {"estimator": "additive", "covariate": "confidence", "seed": 0}
    for kwargs, message in (({"stack_confidence": False}, "applies where the anchored surface is stacked"),
                            ({"model_options": {"coding": "indicator"}}, "model_options set 'coding' already"),
                            ({"model_options": {"main_scale": 0.2}}, "model_options set 'main_scale' already")):
        with pytest.raises(ConfigError, match=message):
            fit_surface(kept, list(s.attributes), widen_scales=True, **anchored, **kwargs)
    with pytest.raises(ConfigError, match="widen_scales is True, False or None"):
        fit_surface(kept, list(s.attributes), widen_scales="yes", **anchored)
    counts = count_arms(kept, list(s.attributes))
    with pytest.raises(ConfigError, match="applies where the anchored surface is stacked"):
        fit_surface(counts.with_counts(counts.n, counts.correct), widen_scales=True, **anchored)


@pytest.mark.slow
def test_labels_from_a_calibrated_confidence_move_the_surface_to_it():
    """The confidence is the labels' true distribution (no rule): over 3 seeds the confidence gets
    most of the stacking weight on average and the stacked surface is closer to the truth than
    the anchored fit alone (the anchored fit's error there is the sampling noise of its map)."""
    s = miscalibrated_surface(20000, 4, seed=2, n_rules=0)
    support = count_arms(s.preds, s.attributes).pool_n
    weights, gains = [], []
    for seed in range(3):
        kept = hide_labels(s.preds, 300, seed=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fit_surface(kept, list(s.attributes), estimator="additive", covariate="confidence", seed=seed)
        c = compare_with_confidence(r.idata, r.arms)
        mean = stack_accuracy_draws(r.idata, r.arms.confidence, c.weight)["posterior"]["accuracy"].mean(("chain", "draw"))
        truth = s.arm_truth(r.arms.values)
        err = [surface_errors(m, truth, support, truth_is_empirical=False)["macro_mse"] for m in (r.mean, mean.values)]
        weights.append(c.weight)
        gains.append(err[0] - err[1])
    assert np.mean(weights) > 0.5
    assert np.mean(gains) >= 0.0


def _items_and_tree(gain_per_item):
    """Arms of a small labeled pool, and a LOO tree whose every item predicts ``gain_per_item`` (log
    scale, a number or one per item) better than the confidence: the fit's ELPD gain is their sum."""
    s = miscalibrated_surface(3000, 2, seed=0, n_rules=0)
    arms = count_arms(hide_labels(s.preds, 100, seed=0), s.attributes)
    _, logit_conf, right = confidence_items(arms)
    conf_lpd = -np.logaddexp(0.0, -(2.0 * right - 1.0) * logit_conf)
    noise = np.random.default_rng(0).normal(0.0, 1e-4, size=(2, 200, right.size))
    return arms, _loo_tree(conf_lpd + gain_per_item + noise)


def test_the_fit_is_stacked_in_only_above_the_elpd_gain_bound():
    """The fit predicts every item better (its stacking weight is 1, the confidence's 0), by a total
    ELPD gain of 3: under the default bound of 4 the surface stays on the confidence; under a
    bound of 2, or with plain stacking (-inf), it is the fit."""
    arms, tree = _items_and_tree(0.03)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PSIS of nearly constant draws: Pareto k is not the point here
        kept = compare_with_confidence(tree, arms)
        lower = compare_with_confidence(tree, arms, min_elpd_gain=2)
        plain = compare_with_confidence(tree, arms, min_elpd_gain=float("-inf"))
    assert kept.elpd_diff == pytest.approx(3.0, abs=1e-3) and kept.n_items == 100
    assert kept.stacking_weight == pytest.approx(0.0, abs=1e-6)
    assert kept.weight == 1.0 and kept.kept_confidence
    assert lower.weight == plain.weight == pytest.approx(0.0, abs=1e-6) and not plain.kept_confidence
    d = kept.as_dict()
    assert (d["confidence_weight"], d["confidence_stacking_weight"], d["min_elpd_gain"]) == (1.0, kept.stacking_weight, 4.0)
    assert kept.combination == lower.combination == "select"
    arms, worse = _items_and_tree(-0.03)  # the confidence better on every item: weight 1 under any bound
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert compare_with_confidence(worse, arms, min_elpd_gain=float("-inf"), combination="stack").weight == \
            pytest.approx(1.0)


def test_above_the_bound_select_reports_the_fit_and_stack_the_stacking_weight():
    """The fit predicts 95 items better by 0.25 each and 5 items worse by 3 each (ELPD gain 8.75):
    stacking hedges with a weight strictly between 0 and 1 on the confidence; "select" (the default)
    reports the fit alone (weight 0), "stack" that stacking weight, and below the bound both keep the
    confidence. An unknown combination is refused in one line."""
    gains = np.r_[np.full(95, 0.25), np.full(5, -3.0)]
    arms, tree = _items_and_tree(gains)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        select = compare_with_confidence(tree, arms)
        stack = compare_with_confidence(tree, arms, combination="stack")
        high = [compare_with_confidence(tree, arms, min_elpd_gain=20, combination=c) for c in COMBINATIONS]
    assert select.elpd_diff == pytest.approx(8.75, abs=1e-2) and not select.kept_confidence
    assert 0.01 < select.stacking_weight < 0.5 and stack.stacking_weight == select.stacking_weight
    assert select.weight == 0.0 and stack.weight == select.stacking_weight
    assert select.as_dict()["confidence_combination"] == "select" and stack.as_dict()["confidence_combination"] == "stack"
    assert [c.weight for c in high] == [1.0, 1.0]
    with pytest.raises(ConfigError, match="confidence_combination is 'select'"):
        compare_with_confidence(tree, arms, combination="mix")
    with pytest.raises(ConfigError, match="confidence_combination is 'select'"):
        check_combination(None)


def test_the_sentence_says_when_the_surface_was_kept_on_the_confidence():
    arms = ArmCounts.from_arrays([20, 5], [15, 4], values=[[0], [1]], attributes=("sex",))
    r = fit_surface(arms, estimator="beta-i", seed=0)
    kept = {"confidence_weight": 1.0, "confidence_stacking_weight": 0.4, "min_elpd_gain": 4.0,
            "elpd_diff_vs_confidence": 1.5, "elpd_diff_vs_confidence_se": 2.0}
    r.diagnostics.update(kept)
    assert "kept on the label-free confidence" in r.sentence() and "with the anchored fit's spread" in r.sentence()
    r.diagnostics.update(elpd_diff_vs_confidence=6.0, confidence_weight=0.4, confidence_combination="stack")
    assert "stacked with the confidence at weight 0.40" in r.sentence()
    r.diagnostics.update(confidence_weight=0.0, confidence_combination="select")
    assert "the labels show the confidence wrong (their LOO predictive density +6.0 +- 2.0" in r.sentence()
    assert "above 4), so the surface is the anchored fit's" in r.sentence() and "stacked" not in r.sentence()
    r.diagnostics.update(widened_scales=True, default_scales_elpd_diff_vs_confidence=5.5)
    assert ("so the residual was refitted with wider scales, and the surface is that fit's (its LOO predictive "
            "density +6.0 +- 2.0 against the confidence's, above 4)") in r.sentence()


def test_the_anchored_surface_on_a_pool_is_stacked_by_default_and_on_counts_is_not():
    """stack_confidence=None (the default): a pool with labeled items is stacked (the diagnostics say
    so), arm counts without items are the anchored posterior (no error), and a bound for a surface
    that is not stacked is refused in one line."""
    s = miscalibrated_surface(3000, 2, seed=0, n_rules=0)
    kept = hide_labels(s.preds, 150, seed=0)
    small = {"draws": 150, "sample_kwargs": {"tune": 150, "chains": 2}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = fit_surface(kept, list(s.attributes), estimator="additive", covariate="confidence", seed=0, **small)
        assert r.diagnostics["stacking_items"] == 150 and 0.0 <= r.diagnostics["confidence_weight"] <= 1.0
        assert r.diagnostics["widened_scales"] is False  # a calibrated confidence: no gain above 4, no refit
        assert r.options["model_options"] == {} and "refitted" not in r.sentence()
        assert "confidence" in r.sentence()
        counts = count_arms(kept, list(s.attributes)).with_counts(r.arms.n, r.arms.correct)
        plain = fit_surface(counts, estimator="additive", covariate="confidence", seed=0, **small)
        assert "confidence_weight" not in plain.diagnostics and "widened_scales" not in plain.diagnostics
        alone = fit_surface(kept, list(s.attributes), estimator="additive", covariate="confidence", seed=0,
                            stack_confidence=False, **small)
        assert "confidence_weight" not in alone.diagnostics
    with pytest.raises(ConfigError, match="min_elpd_gain applies where the anchored surface is stacked"):
        fit_surface(counts, estimator="additive", covariate="confidence", min_elpd_gain=2, **small)
    with pytest.raises(ConfigError, match="stack_confidence is True, False or None"):
        fit_surface(counts, estimator="additive", covariate="confidence", stack_confidence="yes")


def test_distinct_item_loo_equals_arviz_item_by_item():
    """PSIS once per distinct log-likelihood column, copied to its items: the ELPD and Pareto k of every
    item equal az.loo's on the full tree (same reff), with ties in any order."""
    import arviz as az

    from pbassess.inference import psis_relative_efficiency
    from pbassess.surface.stacking import distinct_item_loo

    rng = np.random.default_rng(3)
    p = rng.beta(6, 3, size=(4, 250, 9))
    distinct = np.concatenate([np.log(p), np.log1p(-p)], axis=-1)            # 18 distinct columns
    pick = rng.integers(0, 18, size=60)                                     # 60 items, ties everywhere
    tree = xr.DataTree.from_dict({
        "posterior": xr.Dataset({"p": (("chain", "draw", "arm"), p)}),
        "log_likelihood": xr.Dataset({"correct": (("chain", "draw", "item"), distinct[..., pick])})})
    elpd, k = distinct_item_loo(tree)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = az.loo(tree, pointwise=True, reff=psis_relative_efficiency(tree))
    np.testing.assert_allclose(elpd, np.asarray(full.elpd_i).ravel(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(k, np.asarray(full.pareto_k).ravel(), rtol=0, atol=1e-12)


def test_a_bad_elpd_gain_bound_is_refused_in_one_line():
    for bad in (float("nan"), float("inf"), "many", None, True):
        with pytest.raises(ConfigError, match="min_elpd_gain must be a number"):
            check_min_elpd_gain(bad)
    arms = ArmCounts.from_arrays([20, 5], [15, 4], values=[[0], [1]], attributes=("sex",))
    with pytest.raises(ConfigError, match="min_elpd_gain"):
        fit_surface(arms, estimator="additive", covariate="confidence", stack_confidence=True, min_elpd_gain="x")
    with pytest.raises(ConfigError, match="min_elpd_gain applies where the anchored surface is stacked"):
        fit_surface(arms, estimator="beta-i", min_elpd_gain=2)  # not silently ignored
    with pytest.raises(ConfigError, match="confidence_combination applies where the anchored surface is stacked"):
        fit_surface(arms, estimator="beta-i", confidence_combination="stack")
    with pytest.raises(ConfigError, match="confidence_combination is 'select'"):
        fit_surface(arms, estimator="additive", covariate="confidence", stack_confidence=True,
                    confidence_combination="all")


def test_counts_without_items_cannot_be_stacked():
    arms = ArmCounts.from_arrays([20, 5], [15, 4], values=[[0], [1]], attributes=("sex",))
    tree = _loo_tree(np.zeros((1, 2, 25)))
    with pytest.raises(ConfigError, match="labeled items' own confidences"):
        compare_with_confidence(tree, arms)


def test_stacking_is_refused_before_sampling(monkeypatch):
    """Arm counts without items, or the unanchored model: refused in one line before any NUTS draw."""
    import pbassess.inference

    def no_fit(*args, **kwargs):
        raise AssertionError("sampled before refusing")

    monkeypatch.setattr(pbassess.inference, "fit", no_fit)
    arms = ArmCounts.from_arrays([20, 5], [15, 4], values=[[0], [1]], attributes=("sex",), confidence=[0.8, 0.7])
    with pytest.raises(ConfigError, match="labeled items' own confidences"):
        fit_surface(arms, estimator="additive", covariate="confidence", stack_confidence=True)
    with pytest.raises(ConfigError, match="needs the anchored model"):
        fit_surface(arms, estimator="additive", covariate="confidence", stack_confidence=True,
                    model_options={"anchored": False})
