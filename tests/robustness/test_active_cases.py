"""Unusual inputs of active assessment (issues 7 and 8), through the CLI and through the API.

* A disk that fills up while a labeling session writes its state: one line (exit 2 from the
  CLI, one StateError line from the API), and the state file keeps the previous state byte for
  byte; after space is freed the same command works.
* Cost matrices: a CSV with ``nan`` is reported as such (not by its shape), wherever a cost
  matrix is read; the names ``people`` / ``superclass`` work in the session as they do in
  ``assess_confusion`` (the session used to reject ``cost="people"``).
"""

from __future__ import annotations

import errno
import json
import os

import numpy as np
import pandas as pd
import pytest

from pbassess import Predictions
from pbassess.active import state as state_module
from pbassess.active.session import LabelingSession
from pbassess.cli import main
from pbassess.errors import ConfigError, StateError
from pbassess.stats.cost import people_cost_matrix

CLASSES = ("apple", "baby", "bear", "boy")  # CIFAR-100 names: the paper's matrices apply


def _pool(n: int = 160, seed: int = 2) -> Predictions:
    rng = np.random.default_rng(seed)
    pred = rng.integers(4, size=n)
    right = rng.random(n) < np.array([0.9, 0.5, 0.8, 0.7])[pred]
    truth = np.where(right, pred, (pred + rng.integers(1, 4, n)) % 4)
    return Predictions.from_top1([CLASSES[p] for p in pred], rng.uniform(0.4, 0.99, n), [CLASSES[t] for t in truth],
                                 classes=CLASSES, item_ids=[f"i{j}" for j in range(n)], name="tiny")


@pytest.fixture
def pool_csv(tmp_path):
    pool = _pool()
    frame = pd.DataFrame({"item_id": pool.item_ids, "predicted": np.asarray(CLASSES)[pool.predicted],
                          "confidence": pool.confidence, "label": np.asarray(CLASSES)[pool.labels]})
    path = tmp_path / "pool.csv"
    frame.to_csv(path, index=False)
    return path, dict(zip(frame["item_id"], frame["label"], strict=True))


@pytest.fixture
def disk_full(monkeypatch):
    """Make every state write fail the way a full disk does: the data write raises ENOSPC."""
    real_fdopen = os.fdopen

    class FullFile:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def write(self, data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        def flush(self):
            self.fh.flush()

        def fileno(self):
            return self.fh.fileno()

    def fdopen(fd, *args, **kwargs):
        return FullFile(real_fdopen(fd, *args, **kwargs))

    def arm():
        monkeypatch.setattr(state_module.os, "fdopen", fdopen)

    return arm


def _one_error_line(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# ------------------------------------------------------------------------------- disk full
@pytest.mark.parametrize("action", ["start", "add", "next"])
def test_disk_full_through_the_cli_is_one_line_and_keeps_the_state(tmp_path, capsys, pool_csv, disk_full, action):
    path, truth = pool_csv
    state = tmp_path / "state.json"
    if action != "start":
        assert main(["session", "start", str(path), "--state", str(state), "--target", "least-accurate",
                     "--batch-size", "4", "--seed", "1"]) == 0
        batch = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out), dtype=str)
        labels = tmp_path / "labels.csv"
        pd.DataFrame({"item_id": batch["item_id"], "label": [truth[i] for i in batch["item_id"]]}).to_csv(
            labels, index=False)
        before = state.read_bytes()
    disk_full()
    argv = {
        "start": ["session", "start", str(path), "--state", str(state), "--target", "least-accurate"],
        "add": ["session", "add", "--state", str(state), str(tmp_path / "labels.csv")],
        "next": ["session", "next", "--state", str(state)],
    }[action]
    assert main(argv) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert line.startswith("pbassess session: error: could not write the session state")
    assert "No space left on device (errno 28)" in line and "previous state is intact" in line
    if action == "start":
        assert not state.exists()
    else:
        assert state.read_bytes() == before  # the state survives byte for byte
    assert not list(tmp_path.glob(".state.json.*.tmp"))  # no half-written temporary left behind


def test_disk_full_through_the_api_records_nothing_and_a_retry_works(tmp_path, monkeypatch, disk_full):
    pool = _pool()
    truth = dict(zip(pool.item_ids, np.asarray(CLASSES)[pool.labels], strict=True))
    path = tmp_path / "s.json"
    session = LabelingSession.start(pool, path, target="highest-cost", cost_matrix="people", seed=3, batch_size=5)
    batch = session.next_batch()
    before = path.read_bytes()
    disk_full()
    with pytest.raises(StateError, match=r"No space left on device \(errno 28\) - free some space") as info:
        session.add_labels({i: truth[i] for i in batch["item_id"]})
    assert "\n" not in str(info.value)
    with pytest.raises(StateError, match="No space left"):
        session.next_batch()
    assert path.read_bytes() == before and session.n_labeled == 0 and len(session.outstanding()) == 5
    monkeypatch.undo()
    assert session.add_labels({i: truth[i] for i in batch["item_id"]})["added"] == 5
    assert LabelingSession.load(path, pool).n_labeled == 5


def test_report_on_a_full_disk_is_one_line(tmp_path, monkeypatch):
    pool = _pool()
    session = LabelingSession.start(pool, tmp_path / "s.json", target="least-accurate", seed=0)

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    import matplotlib.figure

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", full)
    with pytest.raises(Exception, match=r"could not write the report .* No space left on device") as info:
        session.report(tmp_path / "rep")
    assert "\n" not in str(info.value)


# ------------------------------------------------------------------------------- cost matrices
def _nan_cost(tmp_path):
    f = tmp_path / "cost.csv"
    f.write_text("0,1,1,1\n1,0,nan,1\n1,1,0,1\n1,1,1,0\n")
    return f


CLI_REJECT = [
    ("simulate-nan-cost", lambda p, s, c: ["simulate", str(p), "--target", "highest-cost", "--strategy", "ts",
                                           "--runs", "2", "--log-every", "40", "--cost-matrix", str(c)],
     "row 2, column 3 is nan"),
    # `assess` used its own CSV reader, which reported this file by its shape ("is 1 x 4").
    ("assess-nan-cost", lambda p, s, c: ["assess", str(p), "--metric", "cost", "--cost-matrix", str(c)],
     "row 2, column 3 is nan"),
    ("session-nan-cost", lambda p, s, c: ["session", "start", str(p), "--state", str(s), "--target", "highest-cost",
                                          "--cost-matrix", str(c)], "row 2, column 3 is nan"),
    ("session-unknown-cost", lambda p, s, c: ["session", "start", str(p), "--state", str(s), "--target",
                                              "highest-cost", "--cost", "cheap"], "neither a known name"),
    ("session-estimation-ts", lambda p, s, c: ["session", "start", str(p), "--state", str(s), "--target",
                                               "estimation", "--strategy", "ts"], "no ranking to sample"),
    ("simulate-ci-prob", lambda p, s, c: ["simulate", str(p), "--strategy", "ts", "--runs", "2", "--ci-prob", "1.5"],
     "ci_prob must be a number strictly between 0 and 1"),
]


@pytest.mark.parametrize("case,argv,message", CLI_REJECT, ids=[c[0] for c in CLI_REJECT])
def test_cli_rejects_in_one_line(tmp_path, capsys, pool_csv, case, argv, message):
    path, _ = pool_csv
    state = tmp_path / "state.json"
    assert main(argv(path, state, _nan_cost(tmp_path))) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert message in line, line
    assert "shape" not in line
    assert not state.exists()


def test_session_takes_the_paper_cost_matrices_by_name(tmp_path, pool_csv, capsys):
    pool = _pool()
    for spelling in ({"cost_matrix": "people"},):
        path = tmp_path / f"{next(iter(spelling))}.json"
        s = LabelingSession.start(pool, path, target="highest-cost", seed=0, **spelling)
        np.testing.assert_array_equal(s._cost, people_cost_matrix(CLASSES))
        assert s.config["cost_source"] == "people"
        assert json.loads(path.read_text())["cost_matrix"][0] == [0, 10, 1, 10]
    # the same name gives the same matrix in assess_confusion (which always accepted it)
    from pbassess.assess import cost as assess_cost

    assess_cost.assess_confusion(pool, cost_matrix="people", seed=0)
    same = assess_cost.resolve_cost_matrix("people", CLASSES)
    np.testing.assert_array_equal(same[0] if isinstance(same, tuple) else same, s._cost)
    path, _ = pool_csv
    assert main(["session", "start", str(path), "--state", str(tmp_path / "cli.json"), "--target", "highest-cost",
                 "--cost-matrix", "superclass", "--batch-size", "3"]) == 0
    assert len(capsys.readouterr().out.strip().splitlines()) == 4  # header + 3 items


def test_simulate_api_takes_names_and_rejects_nan_files(tmp_path):
    from pbassess.active import simulate

    pool = _pool()
    result = simulate(pool, "highest-cost", "ts", cost_matrix="people", runs=2, log_every=40, seed=0)
    assert result.options["true_top"] in CLASSES
    with pytest.raises(ConfigError, match="row 2, column 3 is nan"):
        simulate(pool, "highest-cost", "ts", cost_matrix=_nan_cost(tmp_path), runs=2, log_every=40)
    with pytest.raises(TypeError, match="cost"):  # the old spelling cost= is gone (0.2.0)
        simulate(pool, "highest-cost", "ts", cost_matrix="people", cost="people", runs=2, log_every=40)


@pytest.mark.parametrize("seed", [-1, "abc", 1.5, True])
def test_bad_seeds_are_one_line(seed, tmp_path):
    from pbassess.active import simulate

    with pytest.raises(ConfigError, match="seed must be a non-negative integer"):
        simulate(_pool(), "least-accurate", "ts", runs=2, log_every=40, seed=seed)
    with pytest.raises(ConfigError, match="seed must be a non-negative integer"):
        LabelingSession.start(_pool(), tmp_path / "s.json", target="least-accurate", seed=seed)


def test_a_generator_seed_is_reproducible():
    from pbassess.active import simulate

    a = simulate(_pool(), "least-accurate", "ts", runs=2, log_every=40, seed=np.random.default_rng(5))
    b = simulate(_pool(), "least-accurate", "ts", runs=2, log_every=40, seed=np.random.default_rng(5))
    np.testing.assert_array_equal(a["mrr"].values, b["mrr"].values)
