"""Load benchmark of the labeling app: concurrent annotators post labels to a local server.

Starts ``pbassess label serve`` as a separate process on 127.0.0.1 (a free port) over a
synthetic pool (10 classes, ``--items`` items, so that 2,000 labels fit), then ``--annotators``
threads each post ``--labels`` / ``--annotators`` labels as fast as the server answers: each
POST /api/label records a label (committed to SQLite before the reply) and returns that
annotator's next item, chosen by the session from the posterior. Every 10th label is posted
twice with the same request id (a retry) to check that nothing is duplicated.

Printed: the latency of the "label + next item" reply (p50, p95, p99, max, in ms), of a plain
"next item" request, the throughput, and the checks: every acknowledged label is in the store
exactly once, no item was given to two annotators, and the session's JSON state (exported)
holds the same labels. Target (issue 22): p95 of the next-item reply under 100 ms on 2 cores.

Run: ``python benchmarks/label_load.py [--annotators 4] [--labels 2000] [--items 5000]``.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import numpy as np


def _args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--annotators", type=int, default=4)
    p.add_argument("--labels", type=int, default=2000, help="labels in total")
    p.add_argument("--items", type=int, default=5000, help="items of the synthetic pool")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def write_pool(path: Path, n_items: int, seed: int) -> dict[str, str]:
    """A synthetic 10-class pool as pbassess-csv; returns the true label of every item."""
    rng = np.random.default_rng(seed)
    k = 10
    truth = rng.integers(0, k, n_items)
    logits = rng.normal(0.0, 1.0, (n_items, k))
    logits[np.arange(n_items), truth] += rng.uniform(0.5, 4.0, k)[truth]  # classes differ in accuracy
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    ids = [f"item-{i:05d}" for i in range(n_items)]
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("item_id,label," + ",".join(f"p_{c}" for c in range(k)) + "\n")
        for i, row in enumerate(probs):
            fh.write(f"{ids[i]},{truth[i]}," + ",".join(f"{v:.6f}" for v in row) + "\n")
    return {ids[i]: str(truth[i]) for i in range(n_items)}


class Client:
    def __init__(self, base: str) -> None:
        import httpx

        self.http = httpx.Client(base_url=base, timeout=60.0)
        page = self.http.get("/").text
        self.csrf = json.loads(html.unescape(re.search(r'data-config="([^"]*)"', page).group(1)))["csrf"]

    def post(self, path: str, body: dict):
        return self.http.post(path, content=json.dumps(body),
                              headers={"Content-Type": "application/json", "X-Pbassess-CSRF": self.csrf})


def start_server(folder: Path, pool: Path) -> tuple[subprocess.Popen, str]:
    cmd = [sys.executable, "-m", "pbassess.cli", "label", "serve", str(pool), "--target", "least-accurate",
           "--state", str(folder / "session.json"), "--port", "0", "--seed", "1"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=folder)
    line = proc.stdout.readline()
    if not line.startswith("serving "):
        proc.kill()
        raise SystemExit(f"the server did not start: {proc.stderr.read()[-2000:]}")
    return proc, line.split()[1]


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a process (Linux /proc; None elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(args) -> int:
    folder = Path(tempfile.mkdtemp(prefix="pbassess-label-load-"))
    truth = write_pool(folder / "pool.csv", args.items, args.seed)
    t0 = time.perf_counter()
    proc, base = start_server(folder, folder / "pool.csv")
    print(f"server up in {time.perf_counter() - t0:.1f} s at {base} (pid {proc.pid}); pool {args.items} items, "
          f"{args.annotators} annotators x {args.labels // args.annotators} labels; {os.cpu_count()} cores")
    per = args.labels // args.annotators
    latency: list[float] = []
    next_latency: list[float] = []
    acknowledged: dict[str, list[str]] = {}
    failures: list[str] = []
    lock = threading.Lock()

    def annotate(name: str) -> None:
        client = Client(base)
        mine = acknowledged.setdefault(name, [])
        try:
            start = time.perf_counter()
            item = client.post("/api/next", {"annotator": name}).json()["next"]["item_id"]
            with lock:
                next_latency.append(time.perf_counter() - start)
            for k in range(per):
                body = {"annotator": name, "item_id": item, "label": truth[item], "request_id": uuid.uuid4().hex}
                start = time.perf_counter()
                reply = client.post("/api/label", body)
                spent = time.perf_counter() - start
                if reply.status_code != 200:
                    failures.append(reply.text)
                    return
                if k % 10 == 0:
                    client.post("/api/label", body)  # a retry: must record nothing new
                with lock:
                    latency.append(spent)
                mine.append(item)
                item = reply.json()["next"]["item_id"]
                if k % 50 == 25:
                    start = time.perf_counter()
                    again = client.post("/api/next", {"annotator": name}).json()["next"]["item_id"]
                    with lock:
                        next_latency.append(time.perf_counter() - start)
                    assert again == item
        finally:
            client.http.close()

    try:
        threads = [threading.Thread(target=annotate, args=(f"annotator-{k}",)) for k in range(args.annotators)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        server_cpu = _cpu_seconds(proc.pid)
        state = Client(base).http.get("/export/state.json").json()
        labels_csv = Client(base).http.get("/export/labels.csv").text.strip().splitlines()[1:]
    finally:
        proc.send_signal(signal.SIGTERM)  # only the server this script started
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    if failures:
        print(f"FAILED: {failures[0][:300]}")
        return 1
    ms = np.asarray(latency) * 1000
    sent = [i for items in acknowledged.values() for i in items]
    rows = [r.split(",") for r in labels_csv]
    stored = [(r[2], r[1]) for r in rows if r[3] == "label" and r[6] == "0"]
    in_state = {e[0]: e[1] for e in state["labels"]}
    lost = {(a, i) for a, items in acknowledged.items() for i in items} - set(stored)
    duplicated = len(stored) - len(set(stored))
    print(f"labels acknowledged: {len(sent)} in {wall:.1f} s ({len(sent) / wall:.0f} labels/s)")
    print(f"label + next item reply: p50 {np.percentile(ms, 50):.1f} ms, p95 {np.percentile(ms, 95):.1f} ms, "
          f"p99 {np.percentile(ms, 99):.1f} ms, max {ms.max():.1f} ms")
    if server_cpu is not None:
        print(f"server CPU: {server_cpu:.1f} s in all ({1000 * server_cpu / len(sent):.1f} ms per label, start-up "
              f"and retries included); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    nms = np.asarray(next_latency) * 1000
    print(f"next item alone ({nms.size} requests): p50 {np.percentile(nms, 50):.1f} ms, "
          f"p95 {np.percentile(nms, 95):.1f} ms")
    print(f"checks: lost {len(lost)}, duplicated {duplicated}, items given twice {len(sent) - len(set(sent))}, "
          f"stored {len(stored)}, in the JSON state {len(in_state)} (equal to the store: "
          f"{in_state == {i: truth[i] for i in sent}})")
    ok = not lost and not duplicated and len(set(sent)) == len(sent) == len(stored)
    print(f"target p95 < 100 ms: {'met' if np.percentile(ms, 95) < 100 else 'NOT met'}; "
          f"no label lost or duplicated: {'yes' if ok else 'NO'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(run(_args()))
