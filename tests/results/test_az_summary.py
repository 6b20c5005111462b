"""``result.az_summary()``: ArviZ's table with the project's interval (HDI at ``ci_prob``), never ArviZ's 89% ETI.

The reference values are closed forms: a region with all of its 20 labels right has the posterior
Beta(21, 1) under the uniform prior, whose 95% HDI is [0.05 ** (1/21), 1] and whose 95% ETI is
[0.025 ** (1/21), 0.975 ** (1/21)]; the two lower ends are 0.028 apart, far beyond the Monte Carlo
error of an interval end estimated from the 4,000 exact conjugate draws.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import pbassess
from pbassess import Predictions
from pbassess.assess import assess_accuracy


def _pool():
    # class "a": 20 of 20 right; class "b": 10 of 20 right
    return Predictions.from_top1(["a"] * 20 + ["b"] * 20, [0.9] * 40, ["a"] * 20 + ["a", "b"] * 10)


def _quantile_se(dist, p: float, n_draws: int) -> float:
    """Monte Carlo standard error of the p-quantile of n_draws independent draws (asymptotic formula)."""
    return float(np.sqrt(p * (1 - p) / n_draws) / dist.pdf(dist.ppf(p)))


def test_az_summary_is_the_hdi_at_the_projects_mass_not_arvizs_default():
    res = assess_accuracy(_pool(), prior="uniform", seed=0)
    table = res.az_summary(var_names="accuracy", kind="stats", round_to="none")
    assert list(table.columns) == ["mean", "sd", "hdi95_lb", "hdi95_ub"]
    beta = stats.beta(21, 1)
    hdi_low, eti_low = 0.05 ** (1 / 21), 0.025 ** (1 / 21)
    n_draws = res.idata.posterior.sizes["chain"] * res.idata.posterior.sizes["draw"]
    tol = 4 * _quantile_se(beta, 0.05, n_draws)  # the HDI of Beta(21, 1) is [q_0.05, 1]
    assert tol < (hdi_low - eti_low) / 2  # the test can tell an HDI from an ETI
    low, high = table.loc["accuracy[a]", ["hdi95_lb", "hdi95_ub"]]
    assert low == pytest.approx(hdi_low, abs=tol)
    assert high == pytest.approx(1.0, abs=1e-3)
    # the same interval as the result's own (exact) HDI in summary()
    assert low == pytest.approx(res.summary().loc["a", "hdi_low"], abs=tol)


def test_az_summary_agrees_with_the_sentence_on_the_built_in_data():
    res = pbassess.assess_accuracy(pbassess.load_data(), prior="informed", seed=0)
    table = res.az_summary(var_names="accuracy", kind="stats", round_to="none")
    own = res.summary()
    worst = own["p_lowest"].idxmax()
    low, high = own.loc[worst, ["hdi_low", "hdi_high"]]
    assert f"95% HDI {low:.2f}-{high:.2f}" in res.sentence()
    # HDI ends from 4,000 independent draws: Monte Carlo sd about 0.04 posterior sd (a normal's 2.5% quantile)
    sd = table["sd"].to_numpy()
    assert np.all(np.abs(table["hdi95_lb"].to_numpy() - own["hdi_low"].to_numpy()) < 0.2 * sd)
    assert np.all(np.abs(table["hdi95_ub"].to_numpy() - own["hdi_high"].to_numpy()) < 0.2 * sd)


def test_az_summary_follows_the_results_ci_prob_and_lets_keywords_override():
    res = assess_accuracy(_pool(), prior="uniform", ci_prob=0.9, seed=0)
    assert {"hdi90_lb", "hdi90_ub"} <= set(res.az_summary(var_names="accuracy", kind="stats").columns)
    eti = res.az_summary(var_names="accuracy", kind="stats", ci_kind="eti", ci_prob=0.95, round_to="none")
    assert eti.loc["accuracy[a]", "eti95_lb"] == pytest.approx(0.025 ** (1 / 21), abs=0.015)


def test_az_summary_survives_save_and_load(tmp_path):
    res = assess_accuracy(_pool(), prior="uniform", seed=0)
    back = pbassess.load_result(res.save(tmp_path / "accuracy.nc"))
    first = res.az_summary(var_names="accuracy", kind="stats", round_to="none")
    assert back.az_summary(var_names="accuracy", kind="stats", round_to="none").equals(first)
