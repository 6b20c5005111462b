"""Coverage of the labels-to-MRR interval by simulation, where the true crossing is known.

The estimand of :func:`labels_to_mrr` is the first log point at which the expected MRR curve
(the average over infinitely many runs) reaches the threshold. Two checks:

* a synthetic pool run through the engine: the truth is the crossing of the mean curve of
  20,000 runs (the mean curve's Monte Carlo sd near the crossing is about 0.0005, against a
  step of about 0.004 between log points there); 400 independent batches of 50 runs each give
  an interval, whose coverage has Monte Carlo sd 0.015 at the nominal 0.90, so 0.85 is a
  3-sd lower bound. The construction before 0.x (bootstrap over runs) covers far less there:
  its upper end cannot pass the estimate once every run has reached MRR 1.
* a known per-run process (a run's MRR is 1 from a random step on, 1/2 before; the expected
  curve is exact) with 400 runs per batch, where the interval is informative (its upper end
  is certified before the whole pool), 400 batches: coverage >= 0.85 again.
"""

import numpy as np
import pytest

from pbassess import Predictions
from pbassess.active.evaluation import labels_to_mrr, labels_to_mrr_interval, mean_bounds
from pbassess.active.experiment import simulate
from pbassess.errors import ConfigError

N_ITEMS = 400
BATCHES = 400
FLOOR = 0.85   # nominal 0.90 minus 3 Monte Carlo sd (0.015 at 400 batches)


def _pool(seed=0):
    rng = np.random.default_rng(seed)
    k = 4
    pred = rng.integers(0, k, N_ITEMS)
    acc = np.array([0.70, 0.78, 0.85, 0.90])
    conf = rng.uniform(0.5, 1.0, N_ITEMS)
    correct = rng.random(N_ITEMS) < acc[pred]
    labels = np.where(correct, pred, (pred + 1) % k)
    return Predictions.from_top1(pred, conf, labels, classes=[str(i) for i in range(k)])


def _curves(pool, runs, seed):
    res = simulate(pool, strategies="random-item", runs=runs, log_every=10, seed=seed, progress=False)
    return res["mrr"].sel(strategy="random-item", prior="uniform").values, res["labels"].values


@pytest.fixture(scope="module")
def engine_runs():
    pool = _pool()
    truth_curves, labels = _curves(pool, 20_000, seed=1)
    batch_curves, _ = _curves(pool, 50 * BATCHES, seed=2)
    return truth_curves, batch_curves.reshape(BATCHES, 50, -1), labels


def test_band_interval_covers_the_engine_crossing(engine_runs):
    truth_curves, batches, labels = engine_runs
    truth = labels_to_mrr(truth_curves, labels, N_ITEMS)
    assert 0 < truth < 1
    hits, later, bootstrap_hits = 0, 0, 0
    for curves in batches:
        est = labels_to_mrr(curves, labels, N_ITEMS)
        lo, hi = labels_to_mrr_interval(curves, labels, N_ITEMS, prob=0.9)
        assert lo <= est <= hi                         # the estimate is always inside
        hits += lo <= truth <= hi
        later += hi > est                              # the interval extends past the estimate
        blo, bhi = labels_to_mrr_interval(curves, labels, N_ITEMS, prob=0.9, method="bootstrap", n_boot=100,
                                          seed=0)
        bootstrap_hits += blo <= truth <= bhi
    assert hits / BATCHES >= FLOOR
    assert later / BATCHES > 0.5
    assert bootstrap_hits / BATCHES < FLOOR           # the old construction fails this check


def _known_process(runs, rng, steps=40, scale=4.0, start=0.3):
    """Curves whose run is at MRR 1 from a random step on, 1/2 before; P(not yet at t) = start exp(-t / scale)."""
    not_yet = start * np.exp(-np.arange(steps) / scale)
    u = rng.random((runs, 1))
    # a run has succeeded at t when u >= not_yet[t] (not_yet decreases: success persists)
    curves = np.where(u >= not_yet[None, :], 1.0, 0.5)
    return curves, 1.0 - 0.5 * not_yet


def test_band_interval_covers_a_known_curve_and_is_informative():
    rng = np.random.default_rng(5)
    labels = np.arange(1, 41) * 10
    _, expected = _known_process(1, rng)
    truth = labels[np.flatnonzero(expected >= 0.99)[0]] / N_ITEMS
    # the crossing is close: mu = 0.9877 one step before, 0.9904 at it (a hard case for the upper end)
    assert expected[np.flatnonzero(expected >= 0.99)[0] - 1] > 0.985
    hits, finite = 0, 0
    for _ in range(BATCHES):
        curves, _ = _known_process(400, rng)
        lo, hi = labels_to_mrr_interval(curves, labels, N_ITEMS, prob=0.9)
        hits += lo <= truth <= hi
        finite += hi < 1.0
    assert hits / BATCHES >= FLOOR
    assert finite / BATCHES > 0.9                      # 400 runs certify the crossing before the whole pool


def test_few_runs_cannot_certify_a_099_curve():
    """20 runs all at MRR 1 only show mu >= 0.88 (90%): the upper end is the whole pool, not the estimate."""
    curves = np.array([[0.5, 1.0, 1.0, 1.0]] * 20)
    assert labels_to_mrr(curves, [10, 20, 30, 40], 40) == 0.5
    assert labels_to_mrr_interval(curves, [10, 20, 30, 40], 40) == (0.5, 1.0)
    lo, hi = mean_bounds(curves)
    assert (lo < hi).all() and lo[1] == pytest.approx(20 / (20 + 1.6448536**2), abs=1e-6)
    # a curve no bound can bring to the threshold
    assert np.isnan(labels_to_mrr_interval(np.full((500, 3), 0.5), [1, 2, 3], 3)).all()
    with pytest.raises(ConfigError, match="unknown labels-to-MRR interval"):
        labels_to_mrr_interval(curves, [10, 20, 30, 40], 40, method="magic")
