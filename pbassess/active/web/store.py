"""The label store of the labeling app: every label, skip and undo, with who and when, in SQLite.

The store is one SQLite file in WAL mode with ``synchronous=FULL``: a label is acknowledged to
the browser only after its transaction has committed, so a server killed at any moment (even
``kill -9``) keeps every acknowledged label. One server at a time owns a store: it holds an
exclusive lock on ``<store>.lock`` (:func:`open_store` refuses a second server with one line).

Each row of the table ``events`` is one action of one annotator on one item: ``label`` (with
the class), ``skip`` or ``unsure``; an undo marks the row ``undone`` instead of deleting it. A
client-chosen ``request_id`` (unique) makes a repeated POST harmless: the same label is never
recorded twice.

The item's label given to the session (:class:`~pbassess.active.session.LabelingSession`) is
the *first* label not undone (:meth:`LabelStore.effective_labels`); later labels of the same
item by other annotators are second opinions, used for the agreement report
(:meth:`LabelStore.agreement`).

Examples
--------
>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> store = open_store(folder / "labels.sqlite")
>>> store.add("digit-0001", "ann", "label", "1")["recorded"]
True
>>> store.add("digit-0001", "bob", "label", "7")["recorded"]
True
>>> store.effective_labels()
{'digit-0001': '1'}
>>> store.agreement()["items"], store.agreement()["agree"]
(1, 0)
>>> store.close()
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from pbassess.active.session.state import one_line, utc_now
from pbassess.errors import StateError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no exclusion between servers
    fcntl = None  # type: ignore[assignment]

__all__ = ["KINDS", "LabelStore", "open_store"]

#: What an annotator can do with an item.
KINDS = ("label", "skip", "unsure")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    item_id TEXT NOT NULL,
    annotator TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('label', 'skip', 'unsure')),
    label TEXT,
    time TEXT NOT NULL,
    undone INTEGER NOT NULL DEFAULT 0,
    request_id TEXT UNIQUE
);
CREATE INDEX IF NOT EXISTS events_item ON events (item_id);
CREATE INDEX IF NOT EXISTS events_annotator ON events (annotator, seq);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def open_store(path: str | os.PathLike, *, readonly: bool = False) -> LabelStore:
    """Open (or create) the label store at ``path`` and lock it for this process.

    Parameters
    ----------
    path : path
        The SQLite file (its folder must exist).
    readonly : bool
        Open an existing store for reading only, without its lock (while a server runs).

    Returns
    -------
    LabelStore

    Raises
    ------
    StateError
        The folder is missing, the store is locked by another server, or it is not a label store.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "labels.sqlite"
    >>> first = open_store(p)
    >>> open_store(p)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pbassess.errors.StateError: the label store ... is in use by another server (pid ...): stop it first, or serve another store
    >>> first.close()
    """
    return LabelStore(Path(path), readonly=readonly)


class LabelStore:
    """An open, locked label store (create it with :func:`open_store`).

    All methods are thread-safe (one connection behind a lock).

    Parameters
    ----------
    path : Path
        The SQLite file.
    readonly : bool
        Read only, without the lock.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> store = LabelStore(pathlib.Path(tempfile.mkdtemp()) / "labels.sqlite")
    >>> _ = store.add("i1", "ann", "label", "cat")
    >>> store.counts()
    {'label': 1, 'skip': 0, 'unsure': 0, 'annotators': {'ann': 1}}
    >>> store.close()
    """

    def __init__(self, path: Path, *, readonly: bool = False) -> None:
        self.path = Path(path)
        if not self.path.parent.is_dir():
            raise StateError(f"the folder of the label store does not exist: {self.path.parent}")
        self._mutex = threading.Lock()
        self._cv = threading.Condition()
        self._queue: list[dict[str, Any]] = []
        self._leader = False
        if readonly:
            if not self.path.is_file():
                raise StateError(f"label store not found: {self.path} (serve the session first: pbassess label serve)")
            self._lock_fd = None
            try:
                self._db = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False,
                                           isolation_level=None, timeout=5.0)
                self._db.execute("SELECT COUNT(*) FROM events").fetchone()
            except sqlite3.DatabaseError as exc:
                raise StateError(f"{self.path} is not a usable label store ({one_line(exc)})") from None
            return
        self._lock_fd = self._acquire_lock()
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=5.0)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            self._release_lock()
            raise StateError(f"{self.path} is not a usable label store ({one_line(exc)})") from None

    # ------------------------------------------------------------------ lock
    def _acquire_lock(self) -> int | None:
        if fcntl is None:  # pragma: no cover
            return None
        lock_path = self.path.with_name(self.path.name + ".lock")
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            try:
                owner = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            finally:
                os.close(fd)
            raise StateError(f"the label store {self.path} is in use by another server (pid {owner}): stop it "
                             "first, or serve another store") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return fd

    def _release_lock(self) -> None:
        if self._lock_fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
                os.close(self._lock_fd)
            self._lock_fd = None

    def close(self) -> None:
        """Close the database and release the lock (idempotent)."""
        with contextlib.suppress(Exception):
            self._db.close()
        self._release_lock()

    # ------------------------------------------------------------------ writing
    def add(self, item_id: str, annotator: str, kind: str, label: str | None = None, *,
            request_id: str | None = None, time: str | None = None) -> dict[str, Any]:
        """Record one action, committed (durably) before returning.

        Parameters
        ----------
        item_id, annotator : str
        kind : {"label", "skip", "unsure"}
        label : str, optional
            The class (``kind="label"`` only; checked by the caller against the class list).
        request_id : str, optional
            The client's id of this action: repeating it records nothing new.
        time : str, optional
            ISO time stamp (default: now, UTC).

        Returns
        -------
        dict
            ``recorded`` (False for a repeated ``request_id``) and ``seq`` (the row).

        Notes
        -----
        Group commit: actions arriving while another thread commits are written together in the
        next transaction, so concurrent annotators share one fsync instead of queueing for one each.
        """
        if kind not in KINDS:
            raise StateError(f"unknown action {kind!r} (one of {', '.join(KINDS)})")
        ticket: dict[str, Any] = {"row": (item_id, annotator, kind, label if kind == "label" else None,
                                          time or utc_now(), request_id), "done": False}
        with self._cv:
            self._queue.append(ticket)
            while not ticket["done"]:
                if self._leader:  # another thread is committing: ours goes in the next transaction
                    self._cv.wait()
                    continue
                self._leader = True
                batch, self._queue = self._queue, []
                self._cv.release()
                try:
                    self._commit_batch(batch)
                finally:
                    self._cv.acquire()
                    self._leader = False
                    for t in batch:
                        t["done"] = True
                    self._cv.notify_all()
        if "error" in ticket:
            raise ticket["error"]
        return ticket["result"]

    def _commit_batch(self, batch: list[dict[str, Any]]) -> None:
        """One transaction for every queued action: each ticket gets its result, or all get the error."""
        with self._mutex:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                for t in batch:
                    request_id = t["row"][5]
                    found = None if request_id is None else self._db.execute(
                        "SELECT seq FROM events WHERE request_id = ?", (request_id,)).fetchone()
                    if found is not None:
                        t["result"] = {"recorded": False, "seq": found[0]}
                        continue
                    cur = self._db.execute("INSERT INTO events (item_id, annotator, kind, label, time, request_id) "
                                           "VALUES (?, ?, ?, ?, ?, ?)", t["row"])
                    t["result"] = {"recorded": True, "seq": cur.lastrowid}
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                with contextlib.suppress(sqlite3.Error):
                    self._db.execute("ROLLBACK")
                error = StateError(f"the label store {self.path} could not record the label ({one_line(exc)}); "
                                   "nothing was recorded: repeat it")
                for t in batch:
                    t.pop("result", None)
                    t["error"] = error

    def add_many(self, rows: list[tuple[str, str, str, str]]) -> int:
        """Record many labels ``(item_id, annotator, label, time)`` in one transaction (imports)."""
        if not rows:
            return 0
        with self._mutex:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany("INSERT INTO events (item_id, annotator, kind, label, time) "
                                     "VALUES (?, ?, 'label', ?, ?)", rows)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return len(rows)

    def undo_last(self, annotator: str) -> dict[str, Any] | None:
        """Mark the annotator's last action not yet undone as undone; return it (None when there is none).

        Examples
        --------
        >>> import tempfile, pathlib
        >>> store = open_store(pathlib.Path(tempfile.mkdtemp()) / "l.sqlite")
        >>> _ = store.add("a", "ann", "label", "x"); _ = store.add("b", "ann", "skip")
        >>> store.undo_last("ann")["item_id"], store.undo_last("ann")["label"], store.undo_last("ann")
        ('b', 'x', None)
        >>> store.close()
        """
        with self._mutex:
            row = self._db.execute("SELECT seq, item_id, kind, label FROM events WHERE annotator = ? AND undone = 0 "
                                   "ORDER BY seq DESC LIMIT 1", (annotator,)).fetchone()
            if row is None:
                return None
            self._db.execute("UPDATE events SET undone = 1 WHERE seq = ?", (row[0],))
        return {"seq": row[0], "item_id": row[1], "kind": row[2], "label": row[3]}

    # ------------------------------------------------------------------ reading
    def _rows(self, sql: str, args: tuple = ()) -> list[tuple]:
        with self._mutex:
            return self._db.execute(sql, args).fetchall()

    def has_request(self, request_id: str) -> bool:
        """Whether an action with this client request id is recorded."""
        return bool(self._rows("SELECT 1 FROM events WHERE request_id = ?", (request_id,)))

    def effective_labels(self) -> dict[str, str]:
        """item id -> its first label not undone (the label the session uses), in the order first given."""
        out: dict[str, str] = {}
        for item, label in self._rows("SELECT item_id, label FROM events WHERE kind = 'label' AND undone = 0 "
                                      "ORDER BY seq"):
            out.setdefault(item, label)
        return out

    def label_of(self, item_id: str) -> str | None:
        """The first label not undone of one item (None when unlabeled)."""
        rows = self._rows("SELECT label FROM events WHERE item_id = ? AND kind = 'label' AND undone = 0 "
                          "ORDER BY seq LIMIT 1", (item_id,))
        return rows[0][0] if rows else None

    def item_events(self, item_id: str) -> list[dict[str, Any]]:
        """The actions not undone on one item, oldest first."""
        rows = self._rows("SELECT annotator, kind, label FROM events WHERE item_id = ? AND undone = 0 ORDER BY seq",
                          (item_id,))
        return [{"annotator": a, "kind": k, "label": lab} for a, k, lab in rows]

    def has_events(self) -> set[str]:
        """Items with any row (undone or not): those a state import must not overwrite."""
        return {r[0] for r in self._rows("SELECT DISTINCT item_id FROM events")}

    def skipped_by(self, annotator: str) -> set[str]:
        """Items the annotator skipped or was unsure about (not undone)."""
        return {r[0] for r in self._rows("SELECT item_id FROM events WHERE annotator = ? AND kind != 'label' "
                                         "AND undone = 0", (annotator,))}

    def labeled_by(self, annotator: str) -> set[str]:
        """Items the annotator labeled (not undone)."""
        return {r[0] for r in self._rows("SELECT item_id FROM events WHERE annotator = ? AND kind = 'label' "
                                         "AND undone = 0", (annotator,))}

    def events(self, *, include_undone: bool = False) -> list[dict[str, Any]]:
        """Every action, oldest first: ``seq``, ``item_id``, ``annotator``, ``kind``, ``label``, ``time``, ``undone``."""
        where = "" if include_undone else " WHERE undone = 0"
        rows = self._rows(f"SELECT seq, item_id, annotator, kind, label, time, undone FROM events{where} ORDER BY seq")
        keys = ("seq", "item_id", "annotator", "kind", "label", "time", "undone")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def counts(self) -> dict[str, Any]:
        """Actions not undone per kind and labels per annotator."""
        kinds = dict.fromkeys(KINDS, 0)
        for kind, n in self._rows("SELECT kind, COUNT(*) FROM events WHERE undone = 0 GROUP BY kind"):
            kinds[kind] = n
        per = dict(self._rows("SELECT annotator, COUNT(*) FROM events WHERE undone = 0 AND kind = 'label' "
                              "GROUP BY annotator ORDER BY annotator"))
        return {**kinds, "annotators": per}

    def agreement(self) -> dict[str, Any]:
        """Agreement on the items labeled by two or more annotators (first two labels of each such item).

        Returns
        -------
        dict
            ``items`` (items labeled twice), ``agree`` (same class), ``rate`` (agree / items,
            None without such items) and ``kappa`` (Cohen's kappa of the first and second labels,
            None when undefined).
        """
        pairs: dict[str, list[tuple[str, str]]] = {}
        for item, annotator, label in self._rows("SELECT item_id, annotator, label FROM events WHERE kind = 'label' "
                                                 "AND undone = 0 ORDER BY seq"):
            given = pairs.setdefault(item, [])
            if len(given) < 2 and all(a != annotator for a, _ in given):
                given.append((annotator, label))
        twice = [(g[0][1], g[1][1]) for g in pairs.values() if len(g) == 2]
        n = len(twice)
        agree = sum(a == b for a, b in twice)
        kappa = None
        if n:
            first, second = Counter(a for a, _ in twice), Counter(b for _, b in twice)
            expected = sum(first[c] * second[c] for c in first) / n**2
            if expected < 1:
                kappa = (agree / n - expected) / (1 - expected)
        return {"items": n, "agree": agree, "rate": agree / n if n else None, "kappa": kappa}
