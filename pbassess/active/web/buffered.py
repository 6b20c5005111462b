"""The session the labeling app serves: the same selection and posterior, its JSON state written in the background.

In the app the label store (SQLite, committed before each reply) is the record of the labels;
the session's JSON state file is kept for :meth:`LabelingSession.load` and ``pbassess
session``: :class:`BufferedSession` changes its state in memory exactly as
:class:`~pbassess.active.session.LabelingSession` does (same methods, same checks, same random
generator) and writes the file with :meth:`BufferedSession.flush` - atomically and durably, by
the app's flusher about once a second and when the server stops. A crash loses at most the
last second of the JSON file, never a label: at the next start the store's labels are given
to the session again (:class:`~pbassess.active.web.service.LabelService`).

:meth:`BufferedSession.wrap` makes the buffered subclass of the session's own class when it
is called: this module does not import :mod:`pbassess.active.session.session`, whose
:meth:`~pbassess.active.session.LabelingSession.serve` imports this package (no import cycle).

Examples
--------
>>> import tempfile, pathlib
>>> from pbassess import Predictions
>>> from pbassess.active.session import LabelingSession
>>> pool = Predictions.from_top1(["a", "b"] * 5, [0.9] * 10)
>>> path = pathlib.Path(tempfile.mkdtemp()) / "s.json"
>>> s = BufferedSession.wrap(LabelingSession.start(pool, path, target="least-accurate", seed=0))
>>> _ = s.add_labels({"0": "a"})
>>> LabelingSession.load(path, pool).n_labeled, s.flush(), LabelingSession.load(path, pool).n_labeled
(0, True, 1)
"""

from __future__ import annotations

import contextlib
import copy
import sys
import threading
from collections.abc import Iterator
from typing import Any

from pbassess.active.session.state import encode_state, folder_lock, read_state, write_state
from pbassess.errors import StateError

__all__ = ["BufferedSession"]


class BufferedSession:
    """A :class:`LabelingSession` whose state file is written by :meth:`flush` instead of at every change.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from pbassess import Predictions
    >>> from pbassess.active.session import LabelingSession
    >>> pool = Predictions.from_top1(["a", "b"] * 5, [0.9] * 10)
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "s.json"
    >>> s = BufferedSession.wrap(LabelingSession.start(pool, path, target="least-accurate", batch_size=2, seed=0))
    >>> isinstance(s, LabelingSession), len(s.next_ids()), s.flush(), s.flush()
    (True, 2, True, False)
    """

    _dirty: bool
    _written_revision: int
    _flush_lock: threading.Lock

    @classmethod
    def wrap(cls, session: Any) -> BufferedSession:
        """A buffered copy of ``session`` (same pool, state and file; use the copy from now on).

        Parameters
        ----------
        session : LabelingSession

        Returns
        -------
        BufferedSession
            An instance of ``BufferedSession`` and of the session's class.
        """
        if isinstance(session, BufferedSession):
            return session
        kind = _SUBCLASSES.get(type(session))
        if kind is None:
            kind = _SUBCLASSES[type(session)] = type(f"Buffered{type(session).__name__}", (cls, type(session)), {})
        new = kind.__new__(kind)
        new.__dict__.update(session.__dict__)
        new._state = copy.deepcopy(session._state)
        new._dirty = False
        new._written_revision = int(new._state["revision"])
        new._flush_lock = threading.Lock()
        return new

    @contextlib.contextmanager
    def _mutation(self) -> Iterator[dict[str, Any]]:
        # The session's methods replace the state's lists (labels, outstanding) and values instead of changing them
        # in place, except the design of strategy uncertainty: a copy of the top level (and of the design) is enough,
        # and keeps a label's cost flat as the labels grow (a deep copy of thousands of entries is not).
        state = dict(self._state)
        if state.get("design") is not None:
            state["design"] = copy.deepcopy(state["design"])
        yield state

    def next_ids(self) -> list[str]:
        """:meth:`next_batch` (the same choice, the same state change), returning just the item ids."""
        self._ids_only = True
        try:
            return self.next_batch()
        finally:
            self._ids_only = False

    def _batch_frame(self, ids: list[str], batch_number: int | None):
        if getattr(self, "_ids_only", False):
            return list(ids)
        return super()._batch_frame(ids, batch_number)  # type: ignore[misc]


    def _write(self, state: dict[str, Any]) -> None:
        self._state = state  # a new dict each time: a flush can encode the one it holds without a copy
        self._dirty = True

    def outstanding_ids(self) -> list[str]:
        """The ids of the items issued and still waiting for a label."""
        return list(self._state["outstanding"])

    def flush(self) -> bool:
        """Write the state file (atomic, durable) if it changed; return whether it wrote.

        A state file changed by another program since the last flush (``pbassess session add``
        while the app runs) is overwritten with a warning on stderr: while the app runs, the
        store holds the labels, and they were all given to this session when it started.
        """
        with self._flush_lock:
            if not self._dirty:
                return False
            self._dirty = False  # before taking the state: a change made meanwhile marks it dirty again
            state = self._state
            try:
                with folder_lock(self._path.parent):
                    with contextlib.suppress(StateError):
                        on_disk = int(read_state(self._path)["revision"])
                        if on_disk != self._written_revision:
                            print(f"pbassess label: warning: {self._path} was changed by another program while the "
                                  "app served it; the app's state replaces it (the label store keeps every label)",
                                  file=sys.stderr)
                    write_state(self._path, encode_state(state))
            except BaseException:
                self._dirty = True
                raise
            self._written_revision = int(state["revision"])
            return True


#: The buffered subclass of each session class, made once.
_SUBCLASSES: dict[type, type] = {}
