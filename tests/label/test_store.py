"""The label store: durable rows with who and when, one server per store, undo, repeats, agreement."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from pbassess.active.web.store import open_store
from pbassess.errors import StateError


def test_rows_are_on_disk_when_add_returns(tmp_path):
    store = open_store(tmp_path / "l.sqlite")
    try:
        store.add("i1", "ann", "label", "3", request_id="r1")
        store.add("i2", "bob", "skip")
        # another connection (as after a crash of this process) sees both committed rows
        other = sqlite3.connect(tmp_path / "l.sqlite")
        rows = other.execute("SELECT item_id, annotator, kind, label FROM events ORDER BY seq").fetchall()
        mode = other.execute("PRAGMA journal_mode").fetchone()[0]
        other.close()
    finally:
        store.close()
    assert rows == [("i1", "ann", "label", "3"), ("i2", "bob", "skip", None)]
    assert mode == "wal"


def test_a_second_opener_is_refused_with_one_line_until_the_first_closes(tmp_path):
    first = open_store(tmp_path / "l.sqlite")
    with pytest.raises(StateError) as info:
        open_store(tmp_path / "l.sqlite")
    assert "in use by another server" in str(info.value) and "\n" not in str(info.value)
    first.close()
    open_store(tmp_path / "l.sqlite").close()


def test_a_repeated_request_is_recorded_once(tmp_path):
    store = open_store(tmp_path / "l.sqlite")
    try:
        assert store.add("i1", "ann", "label", "3", request_id="r1")["recorded"]
        assert not store.add("i1", "ann", "label", "3", request_id="r1")["recorded"]
        assert len(store.events()) == 1
    finally:
        store.close()


def test_undo_marks_the_annotators_last_action_and_the_first_label_wins(tmp_path):
    store = open_store(tmp_path / "l.sqlite")
    try:
        store.add("i1", "ann", "label", "3")
        store.add("i1", "bob", "label", "5")
        store.add("i2", "ann", "label", "7")
        assert store.effective_labels() == {"i1": "3", "i2": "7"}
        assert store.undo_last("ann")["item_id"] == "i2"
        assert store.undo_last("ann")["item_id"] == "i1"
        assert store.effective_labels() == {"i1": "5"}  # bob's label is now the first one standing
        assert store.undo_last("ann") is None
        assert [e["undone"] for e in store.events(include_undone=True)] == [1, 0, 1]
    finally:
        store.close()


def test_agreement_matches_cohens_kappa_of_scikit_learn(tmp_path):
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(4)
    first = rng.integers(0, 4, 60)
    second = np.where(rng.random(60) < 0.7, first, rng.integers(0, 4, 60))
    store = open_store(tmp_path / "l.sqlite")
    try:
        for i, (a, b) in enumerate(zip(first, second, strict=True)):
            store.add(f"i{i}", "ann", "label", str(a))
            store.add(f"i{i}", "bob", "label", str(b))
            store.add(f"i{i}", "cy", "label", "0")  # a third label is not part of the pair
        store.add("single", "ann", "label", "1")  # labeled once: not counted
        report = store.agreement()
    finally:
        store.close()
    assert report["items"] == 60 and report["agree"] == int((first == second).sum())
    assert report["kappa"] == pytest.approx(cohen_kappa_score(first.astype(str), second.astype(str)), abs=1e-12)
