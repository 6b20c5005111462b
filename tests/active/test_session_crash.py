"""A labeling session survives being killed at any moment: every acknowledged label is kept.

A child process loads the session and loops: issue a batch, add its (oracle) labels, print
``ACK <ids>`` once ``add_labels`` has returned. The parent kills it with SIGKILL at random
moments, many times, and after each kill loads the state and checks that it is valid and
holds every acknowledged label. A second set of tests makes the writer crash between the
write of the temporary file and the rename.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import pytest

from pbassess.active.session import LabelingSession, atomic_write_bytes
from pbassess.active.session import state as session_module  # the state file's writer lives here
from pbassess.data.registry import load_data
from pbassess.errors import StateError

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")

CLASSES = ("a", "b", "c")


def make_pool(tmp_path, n=3000, seed=0):
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.ones(3) * 0.7, size=n)
    ids = [f"it{i:05d}" for i in range(n)]
    truth = {ids[i]: CLASSES[int(t)] for i, t in enumerate(rng.integers(3, size=n))}
    lines = ["item_id," + ",".join(f"p_{c}" for c in CLASSES)]
    lines += [f"{ids[i]}," + ",".join(repr(float(v)) for v in probs[i]) for i in range(n)]
    path = tmp_path / "pool.csv"
    path.write_text("\n".join(lines) + "\n")
    (tmp_path / "truth.json").write_text(json.dumps(truth))
    return path, truth


def check_state(state_path, acked: set[str], truth: dict) -> LabelingSession:
    """The state loads, holds every acknowledged label, correctly, once, and nothing inconsistent."""
    session = LabelingSession.load(state_path)
    raw = json.loads(state_path.read_text())
    ids = [e[0] for e in raw["labels"]]
    assert len(ids) == len(set(ids)), "an item was recorded twice"
    labeled = set(ids)
    missing = acked - labeled
    assert not missing, f"{len(missing)} acknowledged labels lost, e.g. {sorted(missing)[:3]}"
    assert all(truth[item] == label for item, label, _ in raw["labels"])
    assert not labeled & set(raw["outstanding"]), "a labeled item is still outstanding"
    return session


CHILD = r"""
import json, sys
from pbassess.active.session import LabelingSession
state, truth_file = sys.argv[1], sys.argv[2]
truth = json.load(open(truth_file))
session = LabelingSession.load(state)
print("READY", flush=True)
while True:
    batch = session.next_batch()
    if batch.empty:
        print("DONE", flush=True)
        break
    session.add_labels({i: truth[i] for i in batch["item_id"]})
    print("ACK " + " ".join(batch["item_id"]), flush=True)
"""


def read_acks(stream, acked: set[str], seen: list[str]) -> None:
    for line in stream:
        if not line.endswith("\n"):  # a line cut by the kill acknowledges nothing
            break
        seen.append(line)
        if line.startswith("ACK "):
            acked.update(line.split()[1:])


def test_sigkill_subprocess_at_random_moments_loses_no_acknowledged_label(tmp_path):
    pool_path, truth = make_pool(tmp_path)
    state = tmp_path / "state.json"
    LabelingSession.start(str(pool_path), state, target="least-accurate", strategy="ts", batch_size=3, seed=1)
    child = tmp_path / "child.py"
    child.write_text(CHILD)
    rng = np.random.default_rng(7)
    acked: set[str] = set()
    rounds_with_progress = 0
    for _ in range(4):
        proc = subprocess.Popen([sys.executable, str(child), str(state), str(tmp_path / "truth.json")],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ready = proc.stdout.readline()
        assert ready == "READY\n", proc.stderr.read()
        seen: list[str] = []
        before = len(acked)
        reader = threading.Thread(target=read_acks, args=(proc.stdout, acked, seen))
        reader.start()
        time.sleep(float(rng.uniform(0.05, 0.8)))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        reader.join()
        proc.stdout.close()
        proc.stderr.close()
        assert proc.returncode == -signal.SIGKILL
        check_state(state, acked, truth)
        rounds_with_progress += len(acked) > before
    assert rounds_with_progress >= 3 and len(acked) > 30


def test_kill_at_many_random_moments_with_fork(tmp_path):
    """Forked children (no interpreter start-up) killed after 0-250 ms: many kills land mid-write.

    One iteration (issue a batch of 2, add its labels: two durable writes) takes about 30 ms
    here, so the kills fall in every phase of it: choosing, writing, fsync, rename.
    """
    if not hasattr(os, "fork"):
        pytest.skip("needs os.fork")
    pool_path, truth = make_pool(tmp_path, n=2000)
    state = tmp_path / "state.json"
    LabelingSession.start(str(pool_path), state, target="least-accurate", strategy="ttts", batch_size=2, seed=3)
    pool = load_data(str(pool_path))
    rng = np.random.default_rng(11)
    acked: set[str] = set()
    for _ in range(30):
        read_end, write_end = os.pipe()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # fork with helper threads alive
            pid = os.fork()
        if pid == 0:  # the child: never returns into pytest
            code = 0
            try:
                os.close(read_end)
                session = LabelingSession.load(state, pool)
                while True:
                    batch = session.next_batch()
                    if batch.empty:
                        break
                    session.add_labels({i: truth[i] for i in batch["item_id"]})
                    os.write(write_end, ("ACK " + " ".join(batch["item_id"]) + "\n").encode())
            except BaseException:
                code = 3
            finally:
                os._exit(code)
        os.close(write_end)
        time.sleep(float(rng.uniform(0.0, 0.25)))
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        with os.fdopen(read_end, "r") as stream:
            read_acks(stream, acked, [])
        assert os.WIFSIGNALED(status), "the child failed before it was killed"
        check_state(state, acked, truth)
    assert len(acked) > 50
    # the leftovers of killed writers do not accumulate: the next write removes them
    session = LabelingSession.load(state)
    session.next_batch()
    assert not list(tmp_path.glob(".state.json.*.tmp"))


def test_crash_between_write_and_rename_keeps_the_old_state(tmp_path, monkeypatch):
    pool_path, truth = make_pool(tmp_path, n=200)
    state = tmp_path / "state.json"
    session = LabelingSession.start(str(pool_path), state, target="least-accurate", batch_size=4, seed=5)
    batch = session.next_batch()
    before = state.read_bytes()

    def crash(src, dst):
        assert os.path.getsize(src) > 0  # the new content was fully written first
        raise OSError("simulated crash before the rename")

    monkeypatch.setattr(session_module, "_rename", crash)
    labels = {i: truth[i] for i in batch["item_id"]}
    with pytest.raises(StateError, match="simulated crash before the rename") as info:
        session.add_labels(labels)
    assert "\n" not in str(info.value) and "previous state is intact" in str(info.value)
    assert state.read_bytes() == before
    assert session.n_labeled == 0  # not acknowledged, not recorded in memory either
    assert not list(tmp_path.glob(".state.json.*.tmp"))  # the failed write cleaned up after itself
    monkeypatch.undo()
    assert LabelingSession.load(state).n_labeled == 0
    assert session.add_labels(labels)["added"] == 4  # retrying works
    check_state(state, set(labels), truth)


def test_process_dying_between_write_and_rename_leaves_a_loadable_state(tmp_path):
    if not hasattr(os, "fork"):
        pytest.skip("needs os.fork")
    pool_path, truth = make_pool(tmp_path, n=200)
    state = tmp_path / "state.json"
    session = LabelingSession.start(str(pool_path), state, target="least-accurate", batch_size=4, seed=5)
    batch = session.next_batch()
    before = state.read_bytes()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:
        try:
            session_module._rename = lambda src, dst: os._exit(0)  # die right before the rename
            session.add_labels({i: truth[i] for i in batch["item_id"]})
        finally:
            os._exit(3)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    leftovers = list(tmp_path.glob(".state.json.*.tmp"))
    assert len(leftovers) == 1 and json.loads(leftovers[0].read_text())["labels"]  # the unrenamed new state
    assert state.read_bytes() == before
    again = LabelingSession.load(state)
    assert again.n_labeled == 0 and len(again.outstanding()) == 4
    again.add_labels({i: truth[i] for i in batch["item_id"]})
    assert not list(tmp_path.glob(".state.json.*.tmp"))
    check_state(state, set(batch["item_id"]), truth)


def test_atomic_write_order_is_write_fsync_rename_fsync_directory(tmp_path, monkeypatch):
    calls: list[str] = []
    real_fsync, real_rename = os.fsync, session_module._rename

    def fsync(fd):
        calls.append("fsync-dir" if os.path.isdir(f"/proc/self/fd/{fd}") else "fsync-file")
        real_fsync(fd)

    def rename(src, dst):
        calls.append("rename")
        real_rename(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(session_module, "_rename", rename)
    target = tmp_path / "x.json"
    atomic_write_bytes(target, b'{"a": 1}')
    assert target.read_bytes() == b'{"a": 1}'
    assert calls == ["fsync-file", "rename", "fsync-dir"]
