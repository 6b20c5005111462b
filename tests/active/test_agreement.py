"""Top-m agreement (share of the true top-m set found) beside exact-set success.

Checked against the plain-NumPy reference :func:`pbassess.active.evaluation.agreement` and
hand-computed cases; at m = 1 agreement and success are the same event, so every run and log
point must match exactly; the ``simulate`` Dataset, summary and CLI JSON carry it.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from pbassess import Predictions
from pbassess.active import scores as SC
from pbassess.active.adaptive import simulate_adaptive, top_m_agreement
from pbassess.active.engine import run_engine
from pbassess.active.evaluation import agreement, mean_reciprocal_rank, success
from pbassess.active.experiment import simulate
from pbassess.active.targets import build_inputs


def _pool(seed: int = 0, k: int = 6, per: int = 40) -> Predictions:
    """k predicted classes with well separated accuracies 0.3 .. 0.95, every item labeled."""
    rng = np.random.default_rng(seed)
    acc = np.linspace(0.3, 0.95, k)
    pred = np.repeat(np.arange(k), per)
    correct = rng.random(pred.size) < acc[pred]
    label = np.where(correct, pred, (pred + 1) % k)
    conf = np.clip(acc[pred] + rng.normal(0, 0.05, pred.size), 0.05, 0.99)
    return Predictions.from_top1(pred, conf, label, classes=[f"c{i}" for i in range(k)])


def test_hand_computed_m3():
    # true top-3 = arms 0, 1, 2; the 3 smallest estimates are arms 4, 0, 2: two of three found
    est = np.array([0.1, 0.5, 0.2, 0.3, 0.05, 0.4])
    top = np.array([True, True, True, False, False, False])
    assert agreement(est, top) == pytest.approx(2 / 3)
    assert top_m_agreement(est[None, :], top)[0] == pytest.approx(2 / 3)
    assert SC.ranking_agreement(6, est, top, 3) == pytest.approx(2 / 3)
    assert not success(est, top)
    # MRR for comparison: arm 0 has one wrong arm ahead (rank 2), arm 2 one (rank 2), arm 1 three (rank 4)
    assert mean_reciprocal_rank(est, top) == pytest.approx((1 / 2 + 1 / 4 + 1 / 2) / 3)
    # a tie at the boundary is broken by the arm index: arm 1 (true) ties with arm 3 and wins
    tied = np.array([0.1, 0.3, 0.2, 0.3, 0.9, 0.9])
    assert SC.ranking_agreement(6, tied, top, 3) == 1.0 == agreement(tied, top)


def test_kernel_agreement_matches_reference_with_ties():
    rng = np.random.default_rng(1)
    for _ in range(300):
        k = int(rng.integers(3, 12))
        m = int(rng.integers(1, k))
        est = rng.integers(0, 5, k) / 4.0          # coarse values: many ties
        top = np.zeros(k, dtype=bool)
        top[rng.choice(k, m, replace=False)] = True
        ref = agreement(est, top)
        assert SC.ranking_agreement(k, est, top, m) == pytest.approx(ref)
        assert top_m_agreement(est[None, :], top)[0] == pytest.approx(ref)
        assert (ref == 1.0) == success(est, top)


@pytest.mark.parametrize("target", ["least-accurate", "most-miscalibrated"])
def test_engine_agreement_equals_success_for_m1(target):
    out = run_engine(build_inputs(_pool(), target, top_m=1), "ts", runs=8, seed=3, log_every=8)
    assert out.agreement.shape == out.success.shape
    np.testing.assert_array_equal(out.agreement, out.success.astype(float))


def test_engine_agreement_m3_is_a_share_and_one_exactly_at_success():
    out = run_engine(build_inputs(_pool(), "least-accurate", top_m=3), "random-item", runs=10, seed=4, log_every=8)
    values = out.agreement * 3
    np.testing.assert_allclose(values, np.round(values), atol=1e-12)   # 0, 1/3, 2/3 or 1
    np.testing.assert_array_equal(out.agreement == 1.0, out.success)
    assert (out.agreement[:, -1] == 1.0).all()                      # all labeled: the true ranking
    assert out.agreement[:, 0].mean() < 1.0                          # 8 labels of 240 rarely suffice


def test_simulate_dataset_summary_and_adaptive():
    res = simulate(_pool(), "least-accurate", ["random-item", "ts"], runs=6, log_every=8, top_m=1, seed=0)
    ds = res.dataset
    assert ds["agreement"].dims == ds["success"].dims
    np.testing.assert_array_equal(ds["agreement"].values, ds["success"].values.astype(float))
    table = res.summary()
    np.testing.assert_allclose(table["agreement_at_10pct"], table["success_at_10pct"])
    adaptive = simulate_adaptive(_pool(), "least-accurate", prior="adaptive", top_m=1, runs=4, log_every=24, seed=0)
    np.testing.assert_array_equal(adaptive.agreement, adaptive.success.astype(float))


def test_simulate_cli_json_has_agreement(tmp_path, capsys):
    from pbassess.cli import main

    p = _pool()
    path = tmp_path / "pool.csv"
    rows = ["item_id,predicted,confidence,label"]
    rows += [f"x{i},{p.classes[a]},{c:.3f},{p.classes[b]}"
             for i, (a, c, b) in enumerate(zip(p.predicted, p.confidence, p.labels, strict=True))]
    path.write_text("\n".join(rows) + "\n")
    assert main(["simulate", str(path), "--strategy", "ts", "--top-m", "3", "--runs", "4", "--log-every", "24",
                 "--seed", "1", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["strategies"]["ts"]
    assert len(row["agreement"]) == len(row["success"]) == 10
    assert all(s <= a <= 1.0 for s, a in zip(row["success"], row["agreement"], strict=True))
    assert row["agreement"][-1] == 1.0
