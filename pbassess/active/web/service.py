"""The labeling service behind the web page: who gets which item, recording labels, the posterior panel.

:class:`LabelService` joins a :class:`~pbassess.active.session.LabelingSession` (the posterior
and its choice of the next item) and a :class:`~pbassess.active.web.store.LabelStore` (every
label with who and when, committed before the reply):

- the next item of an annotator comes from the session's own selection
  (:meth:`LabelingSession.next_batch`, with the session's target and strategy and every label so
  far); an item held by one annotator is not given to another (unless ``double_label`` asks for
  a second opinion on an item labeled once, for the agreement report);
- a label is committed to the store, then given to the session (whose JSON state is written
  too), then acknowledged; at start the two are reconciled (labels of the JSON state missing
  from the store are imported; labels of the store missing from the state - a crash between
  the two writes - are given to the session), so the store is the record and the JSON state
  stays importable and exportable;
- skip / not sure records the action and gives the annotator another item; undo withdraws the
  annotator's last action and shows its item again.
"""

from __future__ import annotations

import io
import re
import sys
import threading
import time
from typing import Any

import numpy as np

from pbassess.active.web.buffered import BufferedSession
from pbassess.active.web.items import ItemViews
from pbassess.active.web.store import KINDS, LabelStore
from pbassess.errors import DataError, PbassessError, StateError

__all__ = ["FIGURES", "LabelService", "check_annotator", "panel_status"]

#: The figures of the panel (those of :meth:`SessionPosterior.plot`).
FIGURES = ("accuracy", "answer", "labels", "metric")
#: Seconds after which an item held by an annotator who went quiet may be given to another.
LEASE_SECONDS = 600.0
_NAME = re.compile(r"[\w][\w .@+-]{0,39}")


def check_annotator(name: Any) -> str:
    """An annotator's name: 1-40 letters, digits, spaces or ``.@+-_`` (one DataError line otherwise).

    Examples
    --------
    >>> check_annotator("Ada L.")
    'Ada L.'
    >>> check_annotator("<script>")
    Traceback (most recent call last):
    ...
    pbassess.errors.DataError: an annotator name must be 1-40 letters, digits, spaces or .@+-_ (got '<script>')
    """
    text = str(name or "").strip()
    if not isinstance(name, str) or _NAME.fullmatch(text) is None:
        raise DataError(f"an annotator name must be 1-40 letters, digits, spaces or .@+-_ (got {str(name)[:40]!r})")
    return text


def panel_status(result: Any, store: LabelStore, stop_at: float = 0.95) -> dict[str, Any]:
    """The session's status (:meth:`SessionPosterior.to_json`) with the stopping rule, the store's counts and agreement.

    Parameters
    ----------
    result : SessionPosterior
    store : LabelStore
    stop_at : float
        The stopping rule: the answer's posterior probability at which labeling can stop.

    Returns
    -------
    dict
        The status keys plus ``stop_at``, ``can_stop``, ``rule`` (one sentence), ``store``
        (:meth:`LabelStore.counts`) and ``agreement`` (:meth:`LabelStore.agreement`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from pbassess import Predictions
    >>> from pbassess.active.session import LabelingSession
    >>> from pbassess.active.web.store import open_store
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> pool = Predictions.from_top1(["a", "b"] * 5, [0.9] * 10)
    >>> session = LabelingSession.start(pool, folder / "s.json", target="least-accurate", seed=0)
    >>> store = open_store(folder / "s.sqlite")
    >>> status = panel_status(session.posterior(500), store, stop_at=0.9)
    >>> status["can_stop"], status["rule"].endswith("< 0.9: keep labeling"), status["store"]["label"]
    (False, True, 0)
    >>> store.close()
    """
    status = result.to_json()
    prob = status.get("probability")
    status["stop_at"] = stop_at
    status["can_stop"] = prob is not None and prob >= stop_at
    status["rule"] = (f"P(answer) >= {stop_at:g}, you can stop" if status["can_stop"] else
                      ("keep labeling" if prob is None else f"P(answer) = {prob:.2f} < {stop_at:g}: keep labeling"))
    status["store"] = store.counts()
    status["agreement"] = store.agreement()
    return status


class LabelService:
    """The state of a running labeling app (thread-safe).

    Parameters
    ----------
    session : LabelingSession
    store : LabelStore
    views : ItemViews, optional
        What to show of each item (default: nothing but the id and the prediction).
    stop_at : float
        The stopping rule: P(answer) at which the panel says "you can stop".
    double_label : float
        Probability that an annotator's next item is a second opinion on an item another
        annotator labeled (for the agreement report); 0 by default.
    seed : int, optional
        Seed of the draws deciding second opinions.
    n_draws : int
        Posterior draws of the panel.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from pbassess.active.session import LabelingSession
    >>> from pbassess.active.web.store import open_store
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> session = LabelingSession.start("digits-logreg", folder / "s.json", target="least-accurate",
    ...                                 batch_size=1, seed=0)
    >>> service = LabelService(session, open_store(folder / "s.sqlite"))
    >>> item = service.next_item("ann")["item_id"]
    >>> service.record("ann", item, "label", "3")["labeled"]
    1
    >>> service.status()["labeled"]
    1
    >>> service.close()
    """

    def __init__(self, session: Any, store: LabelStore, views: ItemViews | None = None, *, stop_at: float = 0.95,
                 double_label: float = 0.0, seed: int | None = None, n_draws: int = 4000) -> None:
        if not 0 < stop_at <= 1:
            raise DataError(f"the stopping probability must lie in (0, 1], got {stop_at!r}")
        if not 0 <= double_label <= 1:
            raise DataError(f"the share of second opinions must lie in [0, 1], got {double_label!r}")
        self.session = session if isinstance(session, BufferedSession) else BufferedSession.wrap(session)
        self.store = store
        self._flusher: threading.Thread | None = None
        self._closing = threading.Event()
        pool = session.pool
        self.views = views or ItemViews([str(i) for i in pool.item_ids])
        self.classes = tuple(pool.classes)
        self.stop_at = float(stop_at)
        self.double_label = float(double_label)
        self.n_draws = int(n_draws)
        self._rng = np.random.default_rng(seed)
        self._lock = threading.RLock()
        self._plot_lock = threading.Lock()
        names = np.asarray(pool.classes, dtype=object)[pool.predicted]
        self._prediction = {str(i): (str(c), float(s)) for i, c, s in
                            zip(pool.item_ids, names, pool.confidence, strict=True)}
        self._held: dict[str, tuple[str, float]] = {}  # item -> (annotator, since)
        self._committing: set[tuple[str, str]] = set()  # (annotator, item) being written to the store
        self._current: dict[str, str] = {}  # annotator -> item
        self._cache: dict[str, Any] = {}
        self._session_labels: dict[str, str] = {}
        self._version = 0  # changes whenever the session's labels change (the panel's cache key)
        self._reconcile()
        self.session.flush()

    def start_flusher(self, interval: float = 1.0) -> None:
        """Write the session's JSON state in a background thread every ``interval`` seconds when it changed."""
        def loop() -> None:
            while not self._closing.wait(interval):
                try:
                    self.session.flush()
                except StateError as exc:  # e.g. a full disk: the store keeps the labels; say it, retry later
                    print(f"pbassess label: warning: {exc}", file=sys.stderr)

        if self._flusher is None:
            self._flusher = threading.Thread(target=loop, daemon=True, name="pbassess-label-flusher")
            self._flusher.start()

    def close(self) -> None:
        """Stop the flusher, write the session's JSON state and close the store (idempotent)."""
        self._closing.set()
        if self._flusher is not None:
            self._flusher.join(10)
        try:
            with self._lock:
                self.session.flush()
        finally:
            self.store.close()

    # ------------------------------------------------------------------ session <-> store
    def _reconcile(self) -> None:
        """Import the JSON state's labels missing from the store; give the store's labels to the session."""
        frame = self.session.labels()
        in_state = dict(zip(frame["item_id"].astype(str), frame["label"].astype(str), strict=True))
        known = self.store.has_events()
        imports = [(i, "import", lab, t) for i, lab, t in zip(frame["item_id"], frame["label"], frame["time"],
                                                                 strict=True) if i not in known]
        self.store.add_many(imports)
        self._labels_of: dict[str, list[tuple[str, str]]] = {}  # item -> [(annotator, label)] standing, in order
        self._skipped: dict[str, set[str]] = {}  # annotator -> items skipped or not sure
        for event in self.store.events():
            self._index(event, add=True)
        wanted = self.store.effective_labels()
        changed = {i: lab for i, lab in wanted.items() if in_state.get(i) != lab}
        if changed:
            self.session.add_labels(changed, relabel=True)
        gone = [i for i in in_state if i not in wanted]
        if gone:
            self.session.withdraw_labels(gone)
        self._session_labels = dict(wanted)
        self._version += 1

    def _index(self, event: dict[str, Any], *, add: bool) -> None:
        """Keep the in-memory view of the store's standing actions (this server is the store's only writer)."""
        item, who = event["item_id"], event["annotator"]
        if event["kind"] == "label":
            given = self._labels_of.setdefault(item, [])
            if add:
                given.append((who, event["label"]))
            elif (who, event["label"]) in given:
                given.remove((who, event["label"]))
        elif add:
            self._skipped.setdefault(who, set()).add(item)
        else:
            self._skipped.get(who, set()).discard(item)

    def _labeled_by(self, item: str, annotator: str) -> bool:
        return any(who == annotator for who, _ in self._labels_of.get(item, ()))

    def _sync(self, item: str) -> None:
        given = self._labels_of.get(item)
        wanted, current = (given[0][1] if given else None), self._session_labels.get(item)
        if wanted == current:
            return
        if wanted is None:
            self.session.withdraw_labels([item])
            self._session_labels.pop(item, None)
        else:
            self.session.add_labels({item: wanted}, relabel=True)
            self._session_labels[item] = wanted
        self._version += 1

    # ------------------------------------------------------------------ items
    def _free(self, item: str, annotator: str, now: float) -> bool:
        holder = self._held.get(item)
        return holder is None or holder[0] == annotator or now - holder[1] > LEASE_SECONDS

    def _hold(self, item: str, annotator: str) -> str:
        old = self._current.get(annotator)
        if old is not None and self._held.get(old, ("",))[0] == annotator:
            del self._held[old]
        self._held[item] = (annotator, time.monotonic())
        self._current[annotator] = item
        return item

    def _release(self, annotator: str) -> None:
        old = self._current.pop(annotator, None)
        if old is not None and self._held.get(old, ("",))[0] == annotator:
            del self._held[old]

    def next_item(self, annotator: str) -> dict[str, Any] | None:
        """The annotator's current item, or a new one (None when every item is labeled, held or skipped).

        Parameters
        ----------
        annotator : str

        Returns
        -------
        dict or None
            :meth:`item_payload` of the item.
        """
        annotator = check_annotator(annotator)
        with self._lock:
            item = self._choose(annotator)
            return None if item is None else self.item_payload(item, annotator)

    def _choose(self, annotator: str) -> str | None:
        current = self._current.get(annotator)
        if (current is not None and not self._labeled_by(current, annotator)
                and self._held.get(current, ("",))[0] == annotator):
            return current
        now = time.monotonic()
        skipped = self._skipped.get(annotator, set())
        if self.double_label > 0 and self._rng.random() < self.double_label:
            second = self._second_opinion(annotator, skipped, now)
            if second is not None:
                return self._hold(second, annotator)
        for item in self.session.outstanding_ids():
            if item not in self._session_labels and item not in skipped and self._free(item, annotator, now):
                return self._hold(item, annotator)
        for _ in range(5):  # the session's own choice, from the posterior with every label so far
            batch = self.session.next_ids()
            if not batch:
                break
            for item in batch:
                if item not in skipped and self._free(item, annotator, now):
                    return self._hold(item, annotator)
        self._release(annotator)
        return None

    def _second_opinion(self, annotator: str, exclude: set[str], now: float) -> str | None:
        candidates = [i for i, given in self._labels_of.items()
                      if len({who for who, _ in given}) == 1 and given[0][0] != annotator and i not in exclude
                      and self._free(i, annotator, now)]
        if not candidates:
            return None
        return candidates[int(self._rng.integers(len(candidates)))]

    def item_payload(self, item: str, annotator: str | None = None) -> dict[str, Any]:
        """What the page shows of an item: id, image URL, text, attributes, prediction and confidence."""
        predicted, confidence = self._prediction[item]
        labels = self._labels_of.get(item, [])
        from urllib.parse import quote

        return {
            "item_id": item,
            "image": f"image/{quote(item, safe='')}" if self.views.has_image(item) else None,
            "text": self.views.text(item),
            "attributes": self.views.attributes(item),
            "predicted": predicted,
            "confidence": confidence,
            "second_opinion": bool(labels) and all(who != annotator for who, _ in labels),
        }

    # ------------------------------------------------------------------ actions
    def record(self, annotator: str, item: Any, kind: str, label: Any = None,
               request_id: Any = None) -> dict[str, Any]:
        """Record a label (or skip / not sure), committed before returning; then choose the next item.

        Parameters
        ----------
        annotator : str
        item : str
            An item id of the pool.
        kind : {"label", "skip", "unsure"}
        label : str, optional
            A class name (``kind="label"``).
        request_id : str, optional
            The client's id of this action: a repeated request records nothing new.

        Returns
        -------
        dict
            ``recorded`` (False for a repeated request), ``labeled`` (items labeled) and ``next``
            (the next item, or None).

        Raises
        ------
        DataError
            Unknown item or action, a label outside the classes, an item the annotator labeled already.
        """
        annotator = check_annotator(annotator)
        item = str(item)
        if item not in self._prediction:
            raise DataError(f"unknown item id {item[:80]!r}")
        if kind not in KINDS:
            raise DataError(f"unknown action {str(kind)[:20]!r} (one of {', '.join(KINDS)})")
        if kind == "label" and (not isinstance(label, str) or label not in self.classes):
            shown = ", ".join(self.classes[:12]) + (", ..." if len(self.classes) > 12 else "")
            raise DataError(f"label {str(label)[:40]!r} is not one of the {len(self.classes)} classes ({shown})")
        if request_id is not None and (not isinstance(request_id, str) or not 0 < len(request_id) <= 80):
            raise DataError("the request id must be a string of 1-80 characters")
        key = (annotator, item)
        with self._lock:
            if key in self._committing:
                raise DataError(f"item {item!r} is being recorded for {annotator} already")
            if request_id is None or not self.store.has_request(request_id):
                if kind == "label" and self._labeled_by(item, annotator):
                    raise DataError(f"item {item!r} is already labeled by {annotator}: undo it to change it")
            self._committing.add(key)
        try:  # outside the lock: annotators who post at once share one commit (LabelStore.add)
            done = self.store.add(item, annotator, kind, label if kind == "label" else None, request_id=request_id)
        finally:
            with self._lock:
                self._committing.discard(key)
        with self._lock:
            if done["recorded"]:
                self._index({"item_id": item, "annotator": annotator, "kind": kind, "label": label}, add=True)
            if kind == "label":
                self._sync(item)
            if self._current.get(annotator) == item:
                self._release(annotator)
            nxt = self._choose(annotator)
            return {"recorded": done["recorded"], "labeled": len(self._session_labels),
                    "next": None if nxt is None else self.item_payload(nxt, annotator)}

    def undo(self, annotator: str) -> dict[str, Any]:
        """Withdraw the annotator's last action and make its item the current one again.

        Returns
        -------
        dict
            ``undone`` (the action, or None when there was nothing to undo) and ``next`` (the item to show).
        """
        annotator = check_annotator(annotator)
        with self._lock:
            last = self.store.undo_last(annotator)
            if last is None:
                nxt = self._choose(annotator)
            else:
                self._index({**last, "annotator": annotator}, add=False)
                if last["kind"] == "label":
                    self._sync(last["item_id"])
                nxt = self._hold(last["item_id"], annotator)
            return {"undone": last, "labeled": len(self._session_labels),
                    "next": None if nxt is None else self.item_payload(nxt, annotator)}

    # ------------------------------------------------------------------ progress
    def posterior(self):
        """The session's posterior now (cached until the next label)."""
        with self._lock:
            key = self._version
            if self._cache.get("posterior_key") != key:
                self._cache["posterior"] = self.session.posterior(self.n_draws)
                self._cache["posterior_key"] = key
                self._cache.pop("figures", None)
            return self._cache["posterior"], key

    def status(self) -> dict[str, Any]:
        """The panel's figures: the session's status, the stopping rule, annotators, agreement."""
        result, key = self.posterior()
        return panel_status(result, self.store, self.stop_at) | {"revision": key}

    def figure_png(self, kind: str) -> bytes:
        """One of the library's session figures (:meth:`SessionPosterior.plot`) as PNG, for the current posterior."""
        if kind not in FIGURES:
            raise DataError(f"unknown figure {kind!r} (one of {', '.join(FIGURES)})")
        result, key = self.posterior()
        cache = self._cache.setdefault("figures", {})
        if (kind, key) in cache:
            return cache[(kind, key)]
        from matplotlib.figure import Figure

        with self._plot_lock:
            fig = Figure(figsize=(6.4, 3.2))
            try:
                result.plot(kind=kind, ax=fig.subplots())
            except PbassessError:
                raise
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=90)
        data = buf.getvalue()
        cache[(kind, key)] = data
        return data

    def export_state(self) -> bytes:
        """The session's JSON state file, written now (importable by ``pbassess session`` and ``load``)."""
        with self._lock:
            self.session.flush()
        try:
            return self.session.state_path.read_bytes()
        except OSError as exc:
            raise StateError(f"the session state {self.session.state_path} cannot be read: {exc.strerror}") from None

    def labels_csv(self) -> str:
        """Every action, undone ones included, as CSV: seq, item_id, annotator, kind, label, time, undone."""
        import csv

        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["seq", "item_id", "annotator", "kind", "label", "time", "undone"])
        for e in self.store.events(include_undone=True):
            writer.writerow([e["seq"], e["item_id"], e["annotator"], e["kind"], e["label"] or "", e["time"], e["undone"]])
        return out.getvalue()
