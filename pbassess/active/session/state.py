"""The on-disk state of a labeling session: reading, validating, encoding, atomic durable writing, the folder lock.

A session keeps everything in one small JSON *state file*: a fingerprint of the pool, the
settings (target, strategy, prior, batch size, top-m, seed), the random generator's state,
every label given (item id, label, time, in order) and the batch still waiting for labels.
The state is written atomically (temporary file in the same folder, flush, fsync,
``os.replace``, fsync of the folder), under a lock on the folder and only after the new
content is fully validated, so a process killed at any moment leaves a state file that
loads, a label is acknowledged only once it is on disk, and a rejected input (unknown item,
conflicting duplicate, label outside the classes, changed pool) changes nothing. A write that
fails (disk full, read-only folder, ...) raises one :class:`~pbassess.errors.StateError` line
and leaves the previous state in place (:func:`write_state`).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from pbassess.active.session.estimation import check_design
from pbassess.active.session.settings import validate_config
from pbassess.data.predictions import Predictions
from pbassess.errors import ConfigError, StateError

try:  # POSIX advisory locks; without them (Windows) concurrent writers are not excluded
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "DEFAULT_BATCH_SIZE", "STATE_FORMAT", "STATE_VERSION", "atomic_write_bytes", "check_loaded_state", "encode_state",
    "folder_lock", "new_state", "one_line", "os_reason", "pool_fingerprint", "read_state", "rng_from_state",
    "utc_now", "write_state",
]

STATE_FORMAT = "pbassess-labeling-session"
STATE_VERSION = 1
DEFAULT_BATCH_SIZE = 10

#: The rename step of :func:`atomic_write_bytes` (a module attribute so tests can make it crash).
_rename = os.replace


# ---------------------------------------------------------------------------- files
def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Replace ``path`` by ``data`` atomically and durably.

    Writes a temporary file in the same folder, flushes and fsyncs it, renames it over
    ``path`` (``os.replace``, atomic on POSIX) and fsyncs the folder so the rename itself
    survives a power cut. A crash at any point leaves either the old or the new file, never
    a mix; a crash before the rename may leave a hidden ``.<name>.*.tmp`` file behind, which
    the next successful session write removes.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.json"
    >>> _ = atomic_write_bytes(p, b"{}")
    >>> p.read_bytes()
    b'{}'
    """
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        _rename(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_directory(directory)
    return path


def write_state(path: Path, data: bytes) -> None:
    """Write a session state durably, or raise ONE StateError line saying what failed and that nothing is lost.

    The write is atomic (:func:`atomic_write_bytes`): when it fails - disk full, quota, a
    read-only or vanished folder - the state file still holds the previous state and the
    caller has recorded nothing, so the user frees space (or fixes the folder) and repeats
    the command.

    Examples
    --------
    >>> write_state(Path("/no/such/folder/state.json"), b"{}")
    Traceback (most recent call last):
    ...
    pbassess.errors.StateError: could not write the session state /no/such/folder/state.json: No such file or directory (errno 2); nothing was recorded and the previous state is intact: fix the problem and repeat the command
    """
    try:
        atomic_write_bytes(path, data)
    except OSError as exc:
        raise StateError(f"could not write the session state {path}: {os_reason(exc)}; nothing was recorded and the "
                         "previous state is intact: fix the problem and repeat the command") from None
    _remove_stale_temporaries(path)


def os_reason(exc: OSError) -> str:
    """The OS error in words: "No space left on device (errno 28)" (or its message when it has no errno).

    Examples
    --------
    >>> import errno
    >>> os_reason(OSError(errno.ENOSPC, "No space left on device"))
    'No space left on device (errno 28) - free some space'
    >>> os_reason(OSError("simulated   crash"))
    'simulated crash'
    """
    if exc.errno is not None:
        text = exc.strerror or os.strerror(exc.errno)
        hint = " - free some space" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else ""
        return f"{one_line(text)} (errno {exc.errno}){hint}"
    return one_line(exc) or type(exc).__name__


def _fsync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def folder_lock(directory: Path) -> Iterator[None]:
    """Exclusive advisory lock on the state file's folder (serialises session writers).

    Examples
    --------
    >>> import tempfile
    >>> with folder_lock(Path(tempfile.mkdtemp())):
    ...     pass  # read, check and write the state here
    """
    if fcntl is None:  # pragma: no cover
        yield
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _remove_stale_temporaries(path: Path) -> None:
    for tmp in path.parent.glob(f".{path.name}.*.tmp"):
        with contextlib.suppress(OSError):
            tmp.unlink()


def utc_now() -> str:
    """The current UTC time to the second, ISO 8601: the time stamp of labels and state writes.

    Examples
    --------
    >>> utc_now().endswith("+00:00")
    True
    """
    return datetime.now(UTC).isoformat(timespec="seconds")


def one_line(text: Any) -> str:
    """``text`` (any object) as one line, runs of white space collapsed: for one-line error messages.

    Examples
    --------
    >>> one_line(ValueError("bad   value,  see above"))
    'bad value, see above'
    """
    return " ".join(str(text).split())


# ---------------------------------------------------------------------------- pool
def pool_fingerprint(pool: Predictions) -> str:
    """sha256 of the pool's class names, item ids, predicted classes and scores (and probabilities).

    Examples
    --------
    >>> from pbassess import Predictions
    >>> a = Predictions.from_top1(["x", "y"], [0.9, 0.8])
    >>> b = Predictions.from_top1(["x", "y"], [0.9, 0.7])
    >>> pool_fingerprint(a) == pool_fingerprint(a), pool_fingerprint(a) == pool_fingerprint(b)
    (True, False)
    """
    digest = hashlib.sha256()
    digest.update(json.dumps(list(pool.classes)).encode())
    digest.update(b"\x00")
    digest.update("\x1f".join(str(i) for i in pool.item_ids).encode())
    digest.update(b"\x00")
    digest.update(np.asarray(pool.predicted, dtype="<i8").tobytes())
    digest.update(np.asarray(pool.confidence, dtype="<f8").tobytes())
    if pool.probs is not None:
        digest.update(np.ascontiguousarray(pool.probs, dtype="<f8").tobytes())
    return digest.hexdigest()


def rng_from_state(state: dict[str, Any]) -> np.random.Generator:
    """The session's random generator (PCG64) from the bit-generator state recorded in the state file.

    Examples
    --------
    >>> recorded = np.random.default_rng(3).bit_generator.state
    >>> float(rng_from_state(recorded).random()) == float(np.random.default_rng(3).random())
    True
    """
    gen = np.random.Generator(np.random.PCG64())
    gen.bit_generator.state = state
    return gen


# ---------------------------------------------------------------------------- state io
def read_state(path: Path) -> dict[str, Any]:
    """Read and check the shape of the state file ``path``; one StateError line when it is missing or corrupt.

    Examples
    --------
    >>> read_state(Path("no-such-state.json"))
    Traceback (most recent call last):
    ...
    pbassess.errors.StateError: state file not found: no-such-state.json (start a session with `pbassess session start`)
    """
    if not path.exists():
        raise StateError(f"state file not found: {path} (start a session with `pbassess session start`)")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise StateError(f"state file {path} cannot be read: {one_line(exc)}") from None
    try:
        state = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise StateError(f"state file {path} is corrupt (not valid JSON: {one_line(exc)})") from None
    _check_state_shape(state, path)
    return state


def _check_state_shape(state: Any, path: Path) -> None:
    def bad(what: str) -> StateError:
        return StateError(f"state file {path} is corrupt ({what})")

    if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
        raise bad(f"not a pbassess labeling-session state: the 'format' key is not {STATE_FORMAT!r}")
    if state.get("version") != STATE_VERSION:
        raise bad(f"unsupported state version {state.get('version')!r}; this pbassess reads version {STATE_VERSION}")
    for key, kind in (("revision", int), ("pool", dict), ("config", dict), ("rng", dict), ("labels", list),
                      ("outstanding", list), ("batches_issued", int)):
        if not isinstance(state.get(key), kind):
            raise bad(f"key {key!r} is missing or not a {kind.__name__}")
    pool = state["pool"]
    if not isinstance(pool.get("fingerprint"), str) or not isinstance(pool.get("classes"), list):
        raise bad("the pool record lacks its fingerprint or classes")
    cfg = state["config"]
    for key in ("target", "strategy", "prior", "pseudocount", "batch_size", "top_m", "seed", "ttts_beta",
                "epsilon", "bins"):
        if key not in cfg:
            raise bad(f"setting {key!r} is missing")
    for i, entry in enumerate(state["labels"]):
        if not (isinstance(entry, list) and len(entry) == 3 and all(isinstance(v, str) for v in entry)):
            raise bad(f"label entry {i} is not [item_id, label, time]")
    if not all(isinstance(v, str) for v in state["outstanding"]):
        raise bad("the outstanding batch holds a non-string item id")
    try:
        rng_from_state(state["rng"])
    except (TypeError, ValueError, KeyError) as exc:
        raise bad(f"the random generator state is invalid: {one_line(exc)}") from None


def encode_state(state: dict[str, Any]) -> bytes:
    """The state as JSON bytes with one label (and one cost-matrix row) per line: small, human-inspectable, diff-friendly.

    Examples
    --------
    >>> print(encode_state({"format": "f", "labels": [["0", "a", "t"], ["1", "b", "t"]]}).decode(), end="")
    {
     "format": "f",
     "cost_matrix": null,
     "labels": [
      ["0", "a", "t"],
      ["1", "b", "t"]
     ]
    }
    """
    rows = ("cost_matrix", "labels")
    head = {k: v for k, v in state.items() if k not in rows}
    parts = [json.dumps(head, indent=1, allow_nan=False)[:-2]]
    for key in rows:
        value = state.get(key)
        if value is None or not value:
            parts.append(f' "{key}": {json.dumps(value)}')
        else:
            lines = ",\n".join("  " + json.dumps(entry, allow_nan=False) for entry in value)
            parts.append(f' "{key}": [\n{lines}\n ]')
    return (",\n".join(parts) + "\n}\n").encode()


def new_state(pool: Predictions, source: str | None, pool_options: Mapping[str, Any] | None, cfg: dict[str, Any],
              matrix: np.ndarray | None, *, use_pool_labels: bool) -> dict[str, Any]:
    """The state of a new session (revision 0): pool record, settings, generator state, labels so far.

    Examples
    --------
    >>> from pbassess import Predictions
    >>> pool = Predictions.from_top1(["a", "b"], [0.9, 0.8])
    >>> state = new_state(pool, None, None, {"seed": 0}, None, use_pool_labels=False)
    >>> state["revision"], state["pool"]["n_items"], state["labels"], state["pool"]["fingerprint"] == pool_fingerprint(pool)
    (0, 2, [], True)
    """
    now = utc_now()
    labels: list[list[str]] = []
    if use_pool_labels:
        for i in np.flatnonzero(pool.labeled):
            labels.append([str(pool.item_ids[i]), pool.classes[pool.labels[i]], now])
    return {
        "format": STATE_FORMAT, "version": STATE_VERSION, "revision": 0, "created": now, "updated": now,
        "pool": {
            "source": source,
            "options": {k: v for k, v in dict(pool_options or {}).items() if v is not None},
            "name": pool.name, "n_items": pool.n_items, "classes": list(pool.classes),
            "fingerprint": pool_fingerprint(pool),
        },
        "config": cfg,
        "rng": np.random.default_rng(cfg["seed"]).bit_generator.state,
        "batches_issued": 0,
        "outstanding": [],
        "cost_matrix": None if matrix is None else [[int(v) if float(v).is_integer() else float(v) for v in row]
                                                    for row in matrix],
        "labels": labels,
    }


def check_loaded_state(state: dict[str, Any], pool: Predictions, path: Path) -> None:
    """Check the pool's fingerprint, the settings and the cost matrix of a state read from ``path`` (StateError otherwise).

    Examples
    --------
    >>> from pbassess import Predictions
    >>> pool = Predictions.from_top1(["a", "b"], [0.9, 0.8])
    >>> state = {"pool": {"fingerprint": "0" * 64, "n_items": 2}}
    >>> check_loaded_state(state, pool, Path("state.json"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pbassess.errors.StateError: the pool changed since the session started: fingerprint ... of 'classifier' (2 items) does not match 000000000000 recorded in state.json (2 items)
    """
    record = state["pool"]
    found = pool_fingerprint(pool)
    if found != record["fingerprint"]:
        raise StateError(
            f"the pool changed since the session started: fingerprint {found[:12]} of "
            f"{pool.name!r} ({pool.n_items} items) does not match {record['fingerprint'][:12]} "
            f"recorded in {path} ({record.get('n_items')} items)"
        )
    try:
        validate_config(state["config"], pool)
    except ConfigError as exc:
        raise StateError(f"state file {path} is corrupt (invalid setting: {one_line(exc)})") from None
    if state["config"]["strategy"] == "uncertainty":
        problem = check_design(state.get("design"), pool.n_items)
        if problem is None and not set(state["design"]["pi"]) <= {str(i) for i in pool.item_ids}:
            problem = "a labeling probability names an item that is not in the pool"
        if problem is not None:
            raise StateError(f"state file {path} is corrupt ({problem})")
    matrix = state.get("cost_matrix")
    if matrix is not None:
        try:
            arr = np.asarray(matrix, dtype=float)
        except (TypeError, ValueError):
            arr = np.full((0, 0), np.nan)
        k = pool.n_classes
        if arr.shape != (k, k) or not np.all(np.isfinite(arr)) or (arr < 0).any():
            raise StateError(f"state file {path} is corrupt (the cost matrix is not a {k} x {k} matrix of "
                             "non-negative numbers)")
