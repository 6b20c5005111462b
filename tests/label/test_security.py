"""Security: the token on every request, cross-site POSTs, labels outside the classes, paths leaving the pool's folder."""

from __future__ import annotations

import json

import httpx
import numpy as np
import pandas as pd
import pytest

from pbassess.active.session import LabelingSession
from pbassess.active.web.items import png_bytes
from pbassess.active.web.security import resolve_token

from .conftest import Client

TOKEN = "a-test-token-of-thirty-characters"


def test_off_loopback_a_token_is_generated_and_on_loopback_none_is_needed():
    assert resolve_token("127.0.0.1", None) is None
    generated = resolve_token("0.0.0.0", None)
    assert generated and len(generated) >= 32 and generated != resolve_token("0.0.0.0", None)


def test_a_request_without_the_token_is_refused(served):
    server = served(token=TOKEN)
    assert "token=" in server.url
    bare = httpx.Client(base_url=server.base_url, timeout=30)
    try:
        for path in ("/", "/api/status", "/healthz", "/image/digit-0000", "/export/state.json"):
            assert bare.get(path).status_code == 401, path
        assert bare.get("/healthz", headers={"Authorization": "Bearer wrong-token-wrong-token"}).status_code == 401
        assert bare.post("/api/next", json={"annotator": "x"}).status_code == 401
        # the printed URL sets the cookie, after which the page and the API work
        first = bare.get(server.url.replace(server.base_url, "/"), follow_redirects=True)
        assert first.status_code == 200 and bare.cookies.get("pbassess_token") == TOKEN
        assert bare.get("/api/status").status_code == 200
    finally:
        bare.close()
    client = Client(server.base_url, token=TOKEN)
    try:
        assert client.next("ann")["item_id"].startswith("digit-")
    finally:
        client.close()


def test_cross_site_posts_are_refused(served):
    server = served()
    client = Client(server.base_url)
    try:
        item = client.next("ann")["item_id"]
        body = {"annotator": "ann", "item_id": item, "label": "3"}
        # a form on another site: no CSRF header, a form body
        form = client.http.post("/api/label", data=body, headers={"Origin": "https://evil.example"})
        assert form.status_code == 403
        # a script on another site that somehow had the token still carries its own Origin
        scripted = client.post("/api/label", body, headers={"Origin": "https://evil.example"})
        assert scripted.status_code == 403 and "cross-site" in scripted.json()["error"]
        wrong = client.http.post("/api/label", content=json.dumps(body),
                                 headers={"Content-Type": "application/json", "X-Pbassess-CSRF": "guess"})
        assert wrong.status_code == 403
        # DNS rebinding: another host name pointing at 127.0.0.1
        assert client.http.get("/", headers={"Host": "evil.example"}).status_code == 403
        assert client.http.get("/api/status").json()["labeled"] == 0  # nothing was recorded
        same_origin = client.post("/api/label", body, headers={"Origin": server.base_url.rstrip("/")})
        assert same_origin.status_code == 200 and same_origin.json()["labeled"] == 1
    finally:
        client.close()


def test_labels_outside_the_classes_and_unknown_items_are_refused(served):
    server = served()
    client = Client(server.base_url)
    try:
        item = client.next("ann")["item_id"]
        for bad in ({"label": "cat"}, {"label": 3}, {"label": None}, {"label": "3", "item_id": "no-such-item"},
                    {"label": "3", "kind": "delete"}, {"label": "3", "annotator": "<script>"}):
            body = {"annotator": "ann", "item_id": item, **bad}
            response = client.post("/api/label", body)
            assert response.status_code == 400, bad
            assert "\n" not in response.json()["error"]
        assert client.post("/api/label", {"annotator": "ann", "item_id": item, "label": "3"}).status_code == 200
        assert client.post("/api/label", {"annotator": "ann", "item_id": item, "label": "5"}).status_code == 400
        assert client.http.get("/api/status").json()["labeled"] == 1
    finally:
        client.close()


def test_image_paths_that_leave_the_pool_folder_are_refused(tmp_path):
    folder = tmp_path / "pool"
    (folder / "img").mkdir(parents=True)
    (tmp_path / "secret.png").write_bytes(png_bytes(np.ones((2, 2))))
    (folder / "img" / "ok.png").write_bytes(png_bytes(np.eye(4)))
    (tmp_path / "outside.png").symlink_to(tmp_path / "secret.png")
    (folder / "img" / "link.png").symlink_to(tmp_path / "secret.png")
    rows = [("a", "img/ok.png"), ("b", "../secret.png"), ("c", "img/../../secret.png"), ("d", str(tmp_path / "secret.png")),
            ("e", "img/link.png"), ("f", "img/missing.png")]
    pd.DataFrame({"item_id": [r[0] for r in rows], "image": [r[1] for r in rows], "p_x": [0.7, 0.3] * 3, "p_y": [0.3, 0.7] * 3,
                  "site": "north"}).to_csv(folder / "pool.csv", index=False)
    session = LabelingSession.start(str(folder / "pool.csv"), tmp_path / "s.json", target="least-accurate",
                                    batch_size=1, seed=0)
    server = session.serve()
    client = Client(server.base_url)
    try:
        ok = client.http.get("/image/a")
        assert ok.status_code == 200 and ok.content[:4] == b"\x89PNG"
        for item in ("b", "c", "d", "e"):
            assert client.http.get(f"/image/{item}").status_code == 403, item
        assert client.http.get("/image/f").status_code == 404
        for raw in ("/image/..%2F..%2Fsecret.png", "/image/../secret.png", "/image/%2e%2e/secret.png"):
            assert client.http.get(raw).status_code in (403, 404), raw
        shown = client.next("ann")
        assert shown["attributes"] == {"site": "north"}  # the pool's true label is never shown
    finally:
        client.close()
        server.stop()


@pytest.mark.parametrize("token", ["short"])
def test_a_short_token_is_refused(served, token):
    from pbassess.errors import ConfigError

    with pytest.raises(ConfigError, match="at least 16 characters"):
        served(token=token)
