"""``pbassess label``: one-line errors (missing pool, busy port, store in use), kill -9 during labeling, a second server."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid

import pytest

from pbassess import load_data
from pbassess.active.session import LabelingSession
from pbassess.active.web import open_store
from pbassess.cli import main

from .conftest import Client, start_cli_server

POOL = load_data("digits-logreg")
TRUTH = {str(i): POOL.classes[k] for i, k in zip(POOL.item_ids, POOL.labels, strict=True)}


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    errors = [line for line in err if "error:" in line]
    assert len(errors) == 1, err
    return errors[0]


def test_a_missing_pool_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["label", "serve", "no-such-pool.csv", "--target", "least-accurate", "--check"]) == 2
    assert "neither a file nor a registered data set" in _one_error_line(capsys)


def test_a_busy_port_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    try:
        port = sock.getsockname()[1]
        assert main(["label", "serve", "digits-logreg", "--target", "least-accurate", "--port", str(port)]) == 2
    finally:
        sock.close()
    assert f"port {port} on 127.0.0.1 is busy" in _one_error_line(capsys)
    # the store was released: the same command now gets past the lock
    assert main(["label", "serve", "digits-logreg", "--target", "least-accurate", "--port", "0", "--check"]) == 0


def test_a_locked_store_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["label", "serve", "digits-logreg", "--target", "least-accurate", "--port", "0", "--check"]) == 0
    capsys.readouterr()
    holder = open_store(tmp_path / "labeling" / "digits-logreg.least-accurate.sqlite")
    try:
        assert main(["label", "serve", "digits-logreg", "--target", "least-accurate", "--port", "0"]) == 2
        assert "is in use by another server" in _one_error_line(capsys)
        # status reads the store while a server holds it
        assert main(["label", "status", "--state", "labeling/digits-logreg.least-accurate.json"]) == 0
        assert "0 of 899 items labeled" in capsys.readouterr().out
    finally:
        holder.close()


def test_a_state_with_another_target_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    state = str(tmp_path / "s.json")
    assert main(["label", "serve", "digits-logreg", "--target", "least-accurate", "--state", state, "--port", "0",
                 "--check"]) == 0
    assert main(["label", "serve", "--target", "most-accurate", "--state", state, "--port", "0", "--check"]) == 2
    assert "has target 'least-accurate'" in _one_error_line(capsys)


@pytest.mark.slow
def test_kill_9_during_a_stream_of_labels_loses_nothing_acknowledged(tmp_path):
    state = tmp_path / "cli-session.json"
    proc, url = start_cli_server(tmp_path, state=state)
    acknowledged: dict[str, str] = {}
    stop = threading.Event()

    def stream():
        client = Client(url)
        try:
            item = client.next("ann")["item_id"]
            while not stop.is_set():
                try:
                    reply = client.post("/api/label", {"annotator": "ann", "item_id": item, "label": TRUTH[item],
                                                       "request_id": uuid.uuid4().hex})
                except Exception:  # noqa: BLE001 - the server died mid-request: this label was not acknowledged
                    return
                if reply.status_code != 200:
                    return
                acknowledged[item] = TRUTH[item]
                item = reply.json()["next"]["item_id"]
        finally:
            client.close()

    worker = threading.Thread(target=stream, daemon=True)
    try:
        worker.start()
        deadline = time.monotonic() + 60
        while len(acknowledged) < 25 and time.monotonic() < deadline and worker.is_alive():
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)  # only the server this test started
        proc.wait(10)
    finally:
        stop.set()
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        worker.join(30)
    assert len(acknowledged) >= 25
    store = open_store(tmp_path / "cli-session.sqlite")
    try:
        kept = store.effective_labels()
    finally:
        store.close()
    assert {i: kept[i] for i in acknowledged} == acknowledged  # nothing acknowledged is missing
    assert len(kept) - len(acknowledged) <= 1  # at most the one label in flight at the kill
    # restart: the server reconciles the JSON state with the store and goes on
    proc, url = start_cli_server(tmp_path, state=state)
    try:
        client = Client(url)
        status = client.http.get("/api/status").json()
        assert status["labeled"] == len(kept)
        client.close()
        # a second server on the same store is refused with one line
        second = subprocess.run([sys.executable, "-m", "pbassess.cli", "label", "serve", "--state", str(state), "--port",
                                 "0"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert second.returncode == 2
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1 and "is in use by another server" in lines[0], second.stderr
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    assert LabelingSession.load(state).n_labeled == len(kept)  # the restart gave the session every stored label
