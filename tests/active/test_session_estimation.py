"""Active estimation in the labeling session: target ``estimation``, strategy ``uncertainty``.

Checked against ESTIM's functions on the same inputs (``active_sample``'s design, and
``ipw_mean_interval`` on the same records), against a simulation with known truth (the
pool's accuracy), and for crash safety between ``next`` and ``add``.
"""

from __future__ import annotations

import json
from io import StringIO

import numpy as np
import pandas as pd
import pytest

from pbassess import Predictions
from pbassess.active.session import LabelingSession
from pbassess.active.session import state as state_module
from pbassess.active.session.estimation import (
    issue_uncertainty_batch,
    new_design,
    session_estimates,
)
from pbassess.active.session.state import rng_from_state as _rng_from_state
from pbassess.cli import main
from pbassess.errors import ConfigError, StateError
from pbassess.estimation.active import active_sample, ipw_mean_interval

CLASSES = ("a", "b")


def calibrated_pool(n: int = 1000, seed: int = 0) -> tuple[Predictions, np.ndarray]:
    """Binary pool whose confidence c ~ U(0.5, 1) is calibrated: the prediction is right with probability c."""
    rng = np.random.default_rng(seed)
    conf = rng.uniform(0.5, 1.0, n)
    truth = np.where(rng.random(n) < conf, 0, 1)
    return Predictions.from_top1(np.zeros(n, int), conf, truth, classes=list(CLASSES)), truth


def oracle(pool: Predictions, truth: np.ndarray, ids) -> dict[str, str]:
    index = {str(i): k for k, i in enumerate(pool.item_ids)}
    return {str(i): CLASSES[truth[index[str(i)]]] for i in ids}


def run_to_end(session: LabelingSession, pool: Predictions, truth: np.ndarray) -> int:
    batches = 0
    while not (batch := session.next_batch()).empty:
        session.add_labels(oracle(pool, truth, batch["item_id"]))
        batches += 1
    return batches


def test_recorded_probabilities_are_those_of_active_sample(tmp_path):
    pool, truth = calibrated_pool()
    s = LabelingSession.start(pool, tmp_path / "s.json", target="estimation", strategy="uncertainty",
                              batch_size=20, budget=100, seed=5)
    assert run_to_end(s, pool, truth) >= 3
    labeled, pi = active_sample(pool.confidence, 100, batches=5, seed=5)  # ceil(100 / 20) chunks, same seed
    recorded = LabelingSession.load(tmp_path / "s.json", pool)._state["design"]["pi"]
    assert sorted(recorded, key=int) == [str(i) for i in np.flatnonzero(labeled)]
    np.testing.assert_allclose([recorded[str(i)] for i in np.flatnonzero(labeled)], pi[labeled], rtol=0, atol=0)
    table = s.labels()
    np.testing.assert_allclose(table["probability"], [recorded[i] for i in table["item_id"]])
    # the design labels the uncertain items more often
    assert pi[labeled][pool.confidence[labeled] < 0.6].mean() > pi[labeled][pool.confidence[labeled] > 0.95].mean()


def test_ipw_estimate_equals_estims_function_on_the_same_records(tmp_path):
    pool, truth = calibrated_pool(800, seed=1)
    s = LabelingSession.start(pool, tmp_path / "s.json", target="estimation", strategy="uncertainty",
                              batch_size=30, budget=150, seed=2)
    run_to_end(s, pool, truth)
    status = s.status(100, ci_prob=0.9)
    pi_of = s._state["design"]["pi"]
    xi = np.array([str(i) in pi_of for i in pool.item_ids])
    pi = np.array([pi_of.get(str(i), 1.0) for i in pool.item_ids])
    y = (truth == 0).astype(float)
    mean, lo, hi, lam = ipw_mean_interval(np.where(xi, y, np.nan), pool.confidence, pi, xi, 0.9)
    ipw = status["estimate"]["ipw"]
    assert ipw["mean"] == pytest.approx(mean, abs=1e-12)
    assert ipw["ci"] == pytest.approx([lo, hi], abs=1e-12)
    assert ipw["lambda"] == pytest.approx(lam, abs=1e-12)
    assert ipw["items_visited"] == pool.n_items and ipw["labels_used"] == xi.sum() == status["labeled"]
    plain = status["estimate"]["plain"]
    assert plain["mean"] == pytest.approx(y[xi].mean()) and plain["labels"] == xi.sum()
    assert "inverse-probability weighted" in status["sentence"]


def test_partial_session_uses_the_visited_prefix_and_skips_waiting_items(tmp_path):
    pool, truth = calibrated_pool(600, seed=3)
    s = LabelingSession.start(pool, tmp_path / "s.json", target="estimation", strategy="uncertainty",
                              batch_size=10, budget=60, seed=4)
    first = s.next_batch()
    s.add_labels(oracle(pool, truth, first["item_id"]))
    est_one = s.status(50)["estimate"]["ipw"]
    second = s.next_batch()  # issued, not yet labeled: its chunk is left out of the estimate
    est_waiting = s.status(50)["estimate"]["ipw"]
    assert est_waiting["items_visited"] == est_one["items_visited"] < pool.n_items
    assert est_waiting["mean"] == est_one["mean"] and est_waiting["waiting"] == len(second)
    # the estimate over the prefix is ESTIM's function over those items
    order = np.random.default_rng(4).permutation(pool.n_items)[: est_one["items_visited"]]
    pi_of = s._state["design"]["pi"]
    ids = [str(pool.item_ids[i]) for i in order]
    xi = np.array([i in pi_of and i in set(first["item_id"]) for i in ids])
    pi = np.array([pi_of.get(i, 1.0) for i in ids])
    expected = ipw_mean_interval((truth[order] == 0).astype(float), pool.confidence[order], pi, xi)
    assert est_one["mean"] == pytest.approx(expected[0], abs=1e-12)
    # reissue shows the waiting items again instead of tossing new coins
    again = s.next_batch(reissue=True)
    assert list(again["item_id"]) == list(second["item_id"])
    assert s._state["design"]["pi"] == pi_of


def test_crash_between_next_and_add_loses_nothing(tmp_path, monkeypatch):
    pool, truth = calibrated_pool(500, seed=6)
    path = tmp_path / "s.json"
    s = LabelingSession.start(pool, path, target="estimation", strategy="uncertainty", batch_size=15, seed=8)
    batch = s.next_batch()
    del s  # the process dies after `next`: the batch and its probabilities are on disk
    raw = json.loads(path.read_text())
    assert raw["outstanding"] == list(batch["item_id"])
    assert set(raw["design"]["pi"]) >= set(batch["item_id"])
    resumed = LabelingSession.load(path, pool)
    # a write that dies before the rename (e.g. killed mid-`add`) changes nothing
    def crash(*_args, **_kw):
        raise KeyboardInterrupt("killed")
    monkeypatch.setattr(state_module, "_rename", crash)
    with pytest.raises(KeyboardInterrupt):
        resumed.add_labels(oracle(pool, truth, batch["item_id"]))
    monkeypatch.undo()
    assert json.loads(path.read_text()) == raw
    resumed = LabelingSession.load(path, pool)
    assert resumed.add_labels(oracle(pool, truth, batch["item_id"]))["added"] == len(batch)
    after = json.loads(path.read_text())
    assert after["design"]["pi"] == raw["design"]["pi"] and after["outstanding"] == []
    assert resumed.status(50)["estimate"]["ipw"]["labels_used"] == len(batch)


def test_old_state_files_without_probabilities_still_load(tmp_path):
    pool, truth = calibrated_pool(200, seed=7)
    path = tmp_path / "old.json"
    s = LabelingSession.start(pool, path, target="estimation", strategy="random-item", batch_size=10, seed=1)
    s.add_labels(oracle(pool, truth, s.next_batch()["item_id"]))
    raw = json.loads(path.read_text())
    assert "design" not in raw
    status = LabelingSession.load(path, pool).status(50)
    assert status["estimate"]["ipw"] is None and status["estimate"]["plain"]["labels"] == 10
    assert "probability" not in LabelingSession.load(path, pool).labels()
    # an uncertainty state whose design was removed is reported as corrupt, in one line
    u = tmp_path / "u.json"
    LabelingSession.start(pool, u, target="estimation", strategy="uncertainty", seed=1)
    broken = json.loads(u.read_text())
    del broken["design"]
    u.write_text(json.dumps(broken))
    with pytest.raises(StateError, match="design is missing"):
        LabelingSession.load(u, pool)


def test_bad_settings_are_one_line_errors(tmp_path):
    pool, _ = calibrated_pool(100)
    with pytest.raises(ConfigError, match="serves target 'estimation' only"):
        LabelingSession.start(pool, tmp_path / "a.json", target="least-accurate", strategy="uncertainty")
    with pytest.raises(ConfigError, match="label budget"):
        LabelingSession.start(pool, tmp_path / "b.json", target="estimation", strategy="uncertainty", budget=500)
    with pytest.raises(ConfigError, match="only to strategy 'uncertainty'"):
        LabelingSession.start(pool, tmp_path / "c.json", target="estimation", strategy="random-item", budget=5)


def test_cli_start_next_add_report(tmp_path, capsys):
    rng = np.random.default_rng(11)
    n = 300
    p_a = rng.uniform(0.02, 0.98, n)
    ids = [f"it{i:04d}" for i in range(n)]
    pool_file = tmp_path / "pool.csv"
    pd.DataFrame({"item_id": ids, "p_a": p_a, "p_b": 1 - p_a}).to_csv(pool_file, index=False)
    truth = {i: ("a" if rng.random() < p else "b") for i, p in zip(ids, p_a, strict=True)}
    state = tmp_path / "s.json"
    assert main(["session", "start", str(pool_file), "--state", str(state), "--target", "estimation",
                 "--strategy", "uncertainty", "--batch-size", "10", "--seed", "3"]) == 0
    first = pd.read_csv(StringIO(capsys.readouterr().out), dtype={"item_id": str})
    assert list(first.columns) == ["item_id", "predicted", "score", "batch"] and len(first) > 0
    assert main(["session", "next", "--state", str(state)]) == 0
    second = pd.read_csv(StringIO(capsys.readouterr().out), dtype={"item_id": str})
    issued = list(first["item_id"]) + list(second["item_id"])
    labels = tmp_path / "labels.csv"
    pd.DataFrame({"item_id": issued, "label": [truth[i] for i in issued]}).to_csv(labels, index=False)
    assert main(["session", "add", "--state", str(state), str(labels), "--no-next"]) == 0
    capsys.readouterr()
    assert main(["session", "status", "--state", str(state), "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["strategy"] == "uncertainty" and status["labeled"] == len(issued)
    ipw = status["estimate"]["ipw"]
    assert ipw["labels_used"] == len(issued) and ipw["ci"][0] < ipw["mean"] < ipw["ci"][1]
    assert main(["session", "report", "--state", str(state), "--out", str(tmp_path / "rep")]) == 0
    written = json.loads((tmp_path / "rep" / "status.json").read_text())
    assert written["estimate"] == status["estimate"]
    assert main(["session", "start", str(pool_file), "--state", str(tmp_path / "x.json"), "--target",
                 "most-accurate", "--strategy", "uncertainty"]) == 2
    assert "serves target 'estimation' only" in capsys.readouterr().err


def replay(pool: Predictions, truth: np.ndarray, seed: int, budget: int, batch_size: int) -> dict:
    """The session's own design and estimator (no file I/O), run to the end with an oracle."""
    design, rng_state = new_design(pool.n_items, batch_size, seed, budget)
    state = {"config": {"seed": seed}, "design": design}
    rng = _rng_from_state(rng_state)
    labels: dict[str, str] = {}
    while ids := issue_uncertainty_batch(state, pool.confidence, pool.item_ids, set(labels), rng):
        labels |= oracle(pool, truth, ids)
    return session_estimates(pool, state, labels)


@pytest.mark.slow
def test_ipw_interval_covers_the_pool_accuracy_at_the_nominal_rate():
    """Over 400 seeded sessions the 95% IPW interval covers the pool's accuracy near 95%.

    Monte Carlo sd of the coverage is sqrt(0.95 * 0.05 / 400) = 0.011; [0.91, 0.985] allows
    about 3.5 sd below (plus the CLT's small-sample slack) and 3 sd above. The plain interval
    of the same labels: the IPW mean is unbiased (within 4 Monte Carlo standard errors of the
    truth), the plain mean of the labels is biased low (uncertain items are labeled more often;
    more than 5 standard errors below the truth).
    """
    pool, truth = calibrated_pool(1000, seed=21)
    accuracy = float((truth == 0).mean())
    ipw_hits, ipw_means, plain_means = [], [], []
    for seed in range(400):
        est = replay(pool, truth, seed, budget=150, batch_size=30)
        ipw_hits.append(est["ipw"]["ci"][0] <= accuracy <= est["ipw"]["ci"][1])
        ipw_means.append(est["ipw"]["mean"])
        plain_means.append(est["plain"]["mean"])
    assert 0.91 <= np.mean(ipw_hits) <= 0.985
    ipw_se, plain_se = np.std(ipw_means) / 20, np.std(plain_means) / 20
    assert abs(np.mean(ipw_means) - accuracy) < 4 * ipw_se
    assert np.mean(plain_means) - accuracy < -5 * plain_se
