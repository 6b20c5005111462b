"""Fixed-seed reference of the engine, recorded with the engine as it was before it was split into
rng / special / lazy_ts / scores / kernels (commit d4c72d6): the refactor must not move a number.

Every value below is a run average over 6 runs of a 600-item synthetic pool (seed 5): labels to
MRR 0.99 per (strategy, prior) and the MRR averaged over runs and log points, which depends on
every pick of every run. Equality is exact up to printing (10 decimals).
"""

from __future__ import annotations

import numpy as np
import pytest

from pbassess import Predictions
from pbassess.active.experiment import labels_to_mrr_table, simulate

REFERENCE = {"least-accurate": {"labels_to_mrr": [[0.55, 0.55, 0.55], [0.3, 0.3, 0.35], [0.3, 0.3, 0.35], [0.3, 0.25, 0.3], [0.25, 0.25, 0.3]], "mean_mrr": [[0.9138888889, 0.9194444444, 0.9180555556], [0.9583333333, 0.975, 0.9541666667], [0.96, 0.9680555556, 0.9558333333], [0.9638888889, 0.9763888889, 0.9638888889], [0.9486111111, 0.9444444444, 0.9463888889]]}, "most-accurate": {"labels_to_mrr": [[0.3], [0.35]], "mean_mrr": [[0.9554166667], [0.9544444444]]}, "most-miscalibrated": {"labels_to_mrr": [[0.35, 0.2], [0.3, 0.15]], "mean_mrr": [[0.8955555556, 0.9659722222], [0.9063888889, 0.9604166667]]}, "highest-cost": {"labels_to_mrr": [[0.4, 0.5], [0.6, 0.6]], "mean_mrr": [[0.9130555556, 0.8845833333], [0.8673611111, 0.8897222222]]}, "estimation": {"labels_to_mrr": [[0.35], [0.45]], "mean_mrr": [[0.9569444444], [0.9368055556]]}}

COST = np.ones((6, 6)) - np.eye(6)
COST[:, 0] *= 5
np.fill_diagonal(COST, 0)

CASES = {
    "least-accurate": ("random-item,ts,ttts,bayes-ucb,greedy", "uniform,informed,eb", 1, None),
    "most-accurate": ("ts,mpts", "uniform", 2, None),
    "most-miscalibrated": ("ts,bayes-ucb", "uniform,informed", 1, None),
    "highest-cost": ("ts,epsilon-greedy", "uniform,informed", 1, COST),
    "estimation": ("greedy,random-arm", "uniform", 1, None),
}


def reference_pool(seed: int = 7, n: int = 600, k: int = 6) -> Predictions:
    rng = np.random.default_rng(seed)
    acc = np.linspace(0.55, 0.95, k)
    pred = rng.integers(0, k, n)
    right = rng.random(n) < acc[pred]
    lab = np.where(right, pred, (pred + rng.integers(1, k, n)) % k)
    conf = np.clip(acc[pred] + rng.normal(0, 0.08, n), 0.2, 0.999)
    return Predictions.from_top1(pred, conf, lab, classes=[f"c{i}" for i in range(k)])


@pytest.mark.parametrize("target", list(CASES))
def test_same_seed_gives_the_recorded_numbers(target):
    strategies, priors, m, cost = CASES[target]
    result = simulate(reference_pool(), target, strategies, priors, top_m=m, runs=6, seed=5, log_every=30,
                      cost_matrix=cost)
    table = labels_to_mrr_table(result)
    assert np.round(table.values, 6).tolist() == REFERENCE[target]["labels_to_mrr"]
    mean_mrr = np.round(result.posterior["mrr"].values.mean(axis=(2, 3)), 10)
    np.testing.assert_array_equal(mean_mrr, np.array(REFERENCE[target]["mean_mrr"]))
