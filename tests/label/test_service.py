"""The service: the next item is the session's own choice, no item is held by two annotators, store and state agree."""

from __future__ import annotations

import numpy as np

from pbassess import load_data
from pbassess.active.session import LabelingSession
from pbassess.active.web import open_store
from pbassess.active.web.service import LabelService

TRUTH = {str(i): load_data("digits-logreg").classes[k] for i, k in
         zip(load_data("digits-logreg").item_ids, load_data("digits-logreg").labels, strict=True)}


def _service(tmp_path, name="s", seed=5, **options):
    session = LabelingSession.start("digits-logreg", tmp_path / f"{name}.json", target="least-accurate",
                                    batch_size=1, seed=seed)
    return LabelService(session, open_store(tmp_path / f"{name}.sqlite"), **options)


def test_the_items_served_are_the_sessions_own_choices(tmp_path):
    service = _service(tmp_path)
    twin = LabelingSession.start("digits-logreg", tmp_path / "twin.json", target="least-accurate", batch_size=1, seed=5)
    try:
        item = service.next_item("ann")["item_id"]
        for _ in range(25):  # the same seed and the same labels give the same sequence of Thompson-sampling choices
            expected = twin.next_batch()["item_id"][0]
            assert item == expected
            twin.add_labels({expected: TRUTH[expected]})
            item = service.record("ann", item, "label", TRUTH[item])["next"]["item_id"]
    finally:
        service.close()


def test_two_annotators_never_hold_the_same_item(tmp_path):
    service = _service(tmp_path)
    try:
        held = {a: service.next_item(a)["item_id"] for a in ("a", "b", "c")}
        assert len(set(held.values())) == 3
        assert service.next_item("a")["item_id"] == held["a"]  # asking again gives the same item
        for _ in range(20):
            for a in held:
                nxt = service.record(a, held[a], "label", TRUTH[held[a]])["next"]
                held[a] = nxt["item_id"]
            assert len(set(held.values())) == 3
        labels = service.store.effective_labels()
        assert len(labels) == 60 and service.session.n_labeled == 60
    finally:
        service.close()


def test_skip_gives_another_item_and_undo_brings_it_back(tmp_path):
    service = _service(tmp_path)
    try:
        first = service.next_item("ann")["item_id"]
        second = service.record("ann", first, "skip")["next"]["item_id"]
        assert second != first
        third = service.record("ann", second, "label", "4")["next"]["item_id"]
        assert service.session.n_labeled == 1
        back = service.undo("ann")
        assert back["undone"]["item_id"] == second and back["next"]["item_id"] == second
        assert service.session.n_labeled == 0  # the session no longer has the label
        service.session.flush()
        assert LabelingSession.load(tmp_path / "s.json").n_labeled == 0
        assert third not in service.store.labeled_by("ann")
    finally:
        service.close()


def test_start_reconciles_the_json_state_and_the_store(tmp_path):
    service = _service(tmp_path)
    a = service.next_item("ann")["item_id"]
    service.record("ann", a, "label", TRUTH[a])
    # a crash between the store's commit and the JSON write: the store has a label the state lacks
    service.store.add("digit-0004", "bob", "label", "4")
    service.store.close()
    # a label added with `pbassess session add` meanwhile: the state has a label the store lacks
    session = LabelingSession.load(tmp_path / "s.json")
    session.add_labels({"digit-0010": "0"})
    again = LabelService(LabelingSession.load(tmp_path / "s.json"), open_store(tmp_path / "s.sqlite"))
    try:
        want = {a: TRUTH[a], "digit-0004": "4", "digit-0010": "0"}
        assert again.store.effective_labels() == want
        assert dict(zip(again.session.labels()["item_id"], again.session.labels()["label"], strict=True)) == want
        assert {e["annotator"] for e in again.store.events()} == {"ann", "bob", "import"}
    finally:
        again.close()


def test_second_opinions_feed_the_agreement_report(tmp_path):
    service = _service(tmp_path, double_label=1.0, seed=2)
    try:
        item = service.next_item("ann")["item_id"]
        service.record("ann", item, "label", "1")
        other = service.next_item("bob")
        assert other["item_id"] == item and other["second_opinion"]
        service.record("bob", item, "label", "2")
        report = service.status()["agreement"]
        assert report["items"] == 1 and report["agree"] == 0
        assert service.store.effective_labels() == {item: "1"}  # the first label is the session's
    finally:
        service.close()


def test_the_panel_shows_the_sessions_posterior_and_the_stopping_rule(tmp_path):
    service = _service(tmp_path, stop_at=0.5)
    try:
        item = service.next_item("ann")["item_id"]
        for _ in range(10):
            item = service.record("ann", item, "label", TRUTH[item])["next"]["item_id"]
        status = service.status()
        assert service.session.flush()  # the JSON state, written now, gives the same posterior
        reference = LabelingSession.load(tmp_path / "s.json").status(4000)
        for key in ("labeled", "answer", "probability", "sentence"):
            assert status[key] == reference[key]
        assert np.allclose([c["accuracy_hdi"] for c in status["classes"]],
                           [c["accuracy_hdi"] for c in reference["classes"]])
        assert status["can_stop"] == (reference["probability"] >= 0.5)
        assert status["rule"].startswith("P(answer)")
        png = service.figure_png("accuracy")
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
    finally:
        service.close()
