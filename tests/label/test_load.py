"""A small version of benchmarks/label_load.py: 4 annotators post 50 labels each at once; none lost, none duplicated."""

from __future__ import annotations

import threading
import uuid

from pbassess import load_data
from pbassess.active.session import LabelingSession

from .conftest import Client

POOL = load_data("digits-logreg")
TRUTH = {str(i): POOL.classes[k] for i, k in zip(POOL.item_ids, POOL.labels, strict=True)}


def test_four_concurrent_annotators_lose_and_duplicate_nothing(served, tmp_path):
    server = served(seed=11)
    acknowledged: dict[str, list[str]] = {}
    errors: list[str] = []

    def annotate(name: str) -> None:
        client = Client(server.base_url)
        mine = acknowledged.setdefault(name, [])
        try:
            item = client.next(name)["item_id"]
            for k in range(50):
                request_id = uuid.uuid4().hex
                body = {"annotator": name, "item_id": item, "label": TRUTH[item], "request_id": request_id}
                reply = client.post("/api/label", body)
                if k % 10 == 0:  # a retried POST (e.g. after a lost reply) must not record the label twice
                    client.post("/api/label", body)
                if reply.status_code != 200:
                    errors.append(reply.text)
                    return
                mine.append(item)
                item = reply.json()["next"]["item_id"]
        finally:
            client.close()

    threads = [threading.Thread(target=annotate, args=(f"annotator-{k}",)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors and all(not t.is_alive() for t in threads)
    sent = [i for items in acknowledged.values() for i in items]
    assert len(sent) == 200 and len(set(sent)) == 200  # no item was given to two annotators
    events = server.service.store.events()
    assert len(events) == 200  # none lost, none duplicated (the retries recorded nothing)
    assert {(e["annotator"], e["item_id"]) for e in events} == {(a, i) for a, items in acknowledged.items() for i in items}
    exported = Client(server.base_url).http.get("/export/state.json")  # written now, then read back
    assert exported.status_code == 200
    state = LabelingSession.load(server.service.session.state_path)
    labels = dict(zip(state.labels()["item_id"], state.labels()["label"], strict=True))
    assert labels == {i: TRUTH[i] for i in sent}
