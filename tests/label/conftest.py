"""Fixtures of the labeling app's tests: a served session, an HTTP client that sends the CSRF token, chromium.

Every server binds 127.0.0.1 on a free port and is stopped in a ``finally`` block; subprocess
servers are killed by their own PID only.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("PBASSESS_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]


class Client:
    """An httpx client for one served app, sending the page's CSRF token on POSTs."""

    def __init__(self, base_url: str, token: str | None = None) -> None:
        import httpx

        self.http = httpx.Client(base_url=base_url, timeout=30.0,
                                 headers={"Authorization": f"Bearer {token}"} if token else {})
        page = self.http.get("/")
        assert page.status_code == 200, page.text
        match = re.search(r'data-config="([^"]*)"', page.text)
        self.config = json.loads(html.unescape(match.group(1)))

    def post(self, path: str, data: dict, **kwargs):
        headers = {"X-Pbassess-CSRF": self.config["csrf"], "Content-Type": "application/json", **kwargs.pop("headers", {})}
        return self.http.post(path, content=json.dumps(data), headers=headers, **kwargs)

    def next(self, annotator: str):
        response = self.post("/api/next", {"annotator": annotator})
        assert response.status_code == 200, response.text
        return response.json()["next"]

    def close(self) -> None:
        self.http.close()


@pytest.fixture
def served(tmp_path):
    """A factory: serve a new digits-logreg session (least-accurate, one item per batch) in a thread."""
    from pbassess.active.session import LabelingSession

    servers = []

    def make(*, seed: int = 0, target: str = "least-accurate", **options):
        state = tmp_path / f"session{len(servers)}.json"
        session = LabelingSession.start("digits-logreg", state, target=target, batch_size=1, seed=seed)
        server = session.serve(**options)
        servers.append(server)
        return server

    try:
        yield make
    finally:
        for server in servers:
            server.stop()


@pytest.fixture
def chromium_path():
    """Debian's chromium (``make test`` installs it); skipped with the reason when it truly cannot exist."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"chromium is not installed at {CHROMIUM} (make test installs Debian's package: "
                    "apt-get install chromium)")
    pytest.importorskip("playwright.sync_api", reason="playwright is in the dev extra: pip install -e '.[dev]'")
    return CHROMIUM


def start_cli_server(tmp_path: Path, *extra: str, state: Path | None = None, timeout: float = 120.0):
    """Run ``pbassess label serve`` as a subprocess on a free port; return (process, base URL)."""
    state = state or tmp_path / "cli-session.json"
    cmd = [sys.executable, "-m", "pbassess.cli", "label", "serve", "digits-logreg", "--target", "least-accurate",
           "--state", str(state), "--port", "0", "--seed", "3", *extra]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    deadline = time.monotonic() + timeout
    line = ""
    try:
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if line.startswith("serving ") or not line:
                break
        if not line.startswith("serving "):
            raise AssertionError(f"the server did not start: {proc.stderr.read()[-2000:]}")
    except BaseException:
        proc.kill()
        proc.wait(10)
        raise
    return proc, line.split()[1].split("?")[0]
