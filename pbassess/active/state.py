"""The state file of a labeling session: atomic durable writes, locking, validation, label input.

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

from pbassess.active.model import check_prior, check_target
from pbassess.active.strategies import check_strategy
from pbassess.counting import cell_counts
from pbassess.data.predictions import Predictions
from pbassess.errors import ConfigError, DataError, StateError

try:  # POSIX advisory locks; without them (Windows) concurrent writers are not excluded
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

__all__ = ["STATE_FORMAT", "STATE_VERSION", "atomic_write_bytes", "pool_fingerprint", "write_state"]

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
        raise StateError(f"could not write the session state {path}: {_os_reason(exc)}; nothing was recorded and the "
                         "previous state is intact: fix the problem and repeat the command") from None
    _remove_stale_temporaries(path)


def _os_reason(exc: OSError) -> str:
    """The OS error in words: "No space left on device (errno 28)" (or its message when it has no errno)."""
    if exc.errno is not None:
        text = exc.strerror or os.strerror(exc.errno)
        hint = " - free some space" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else ""
        return f"{_one_line(text)} (errno {exc.errno}){hint}"
    return _one_line(exc) or type(exc).__name__


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
def _folder_lock(directory: Path) -> Iterator[None]:
    """Exclusive advisory lock on the state file's folder (serialises session writers)."""
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


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _one_line(text: Any) -> str:
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


def _load_pool(source: Any, options: Mapping[str, Any] | None) -> tuple[Predictions, str | None]:
    """A pool from Predictions, a DataFrame / arrays, a file path or a registered name; and how to find it again.

    In-memory pools (anything but a path or a name) are not recorded: they are passed again on load.
    """
    from pbassess.data.registry import load_data, model_card

    if isinstance(source, Predictions):
        return source, None
    if source is None:
        raise ConfigError("no pool given: pass a Predictions object, a prediction file or a registered name")
    if not isinstance(source, (str, os.PathLike)):
        from pbassess.data import as_predictions

        return as_predictions(source), None
    opts = {k: v for k, v in dict(options or {}).items() if v is not None}
    pool = load_data(source, **opts)
    text = os.fspath(source)
    try:
        model_card(text)
        return pool, text  # a registered name (load_data prefers it over a file of that name)
    except DataError:
        return pool, str(Path(text).resolve())



# ---------------------------------------------------------------------------- config
def _validate_config(cfg: dict[str, Any], pool: Predictions) -> None:
    """Raise ConfigError on any invalid setting (used at start and when loading a state)."""
    check_target(cfg["target"])
    if cfg["strategy"] == "uncertainty":  # active estimation (pbassess.active.session_estimation)
        if cfg["target"] != "estimation":
            raise ConfigError(f"strategy 'uncertainty' serves target 'estimation' only, not {cfg['target']!r}")
    else:
        check_strategy(cfg["strategy"], cfg["target"])
    check_prior(cfg["prior"])
    for key, low in (("batch_size", 1), ("top_m", 1), ("bins", 1)):
        value = cfg[key]
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ConfigError(f"{key} must be an integer of at least {low}, got {value!r}")
    pc = cfg["pseudocount"]
    if isinstance(pc, bool) or not isinstance(pc, (int, float)) or not np.isfinite(pc) or pc <= 0:
        raise ConfigError(f"the pseudocount must be a positive number, got {pc!r}")
    if not 0 < cfg["ttts_beta"] < 1:
        raise ConfigError(f"the top-two TS beta must be strictly between 0 and 1, got {cfg['ttts_beta']!r}")
    if not 0 <= cfg["epsilon"] <= 1:
        raise ConfigError(f"epsilon must lie in [0, 1], got {cfg['epsilon']!r}")
    seed = cfg["seed"]
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ConfigError(f"the seed must be a non-negative integer, got {seed!r}")
    n_arms = int((cell_counts(pool.predicted, pool.n_classes) > 0).sum())
    limit = n_arms if cfg["target"] == "estimation" else n_arms - 1
    if cfg["top_m"] > limit:
        raise ConfigError(f"top_m = {cfg['top_m']} is too large: the pool predicts {n_arms} classes, "
                          f"so top_m must be at most {limit} for target {cfg['target']!r}")
    if cfg["target"] != "highest-cost" and cfg.get("cost_source", "zero-one") not in ("0-1", "zero-one"):
        raise ConfigError(f"a cost matrix only applies to target 'highest-cost', not {cfg['target']!r}")


def _as_float(value: Any, what: str) -> float:
    if isinstance(value, bool):
        raise ConfigError(f"{what} must be a number, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{what} must be a number, got {value!r}") from None


def _rng_from_state(state: dict[str, Any]) -> np.random.Generator:
    gen = np.random.Generator(np.random.PCG64())
    gen.bit_generator.state = state
    return gen


# ---------------------------------------------------------------------------- state io
def _read_state(path: Path) -> dict[str, Any]:
    if not path.exists():
        raise StateError(f"state file not found: {path} (start a session with `pbassess session start`)")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise StateError(f"state file {path} cannot be read: {_one_line(exc)}") from None
    try:
        state = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise StateError(f"state file {path} is corrupt (not valid JSON: {_one_line(exc)})") from None
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
        _rng_from_state(state["rng"])
    except (TypeError, ValueError, KeyError) as exc:
        raise bad(f"the random generator state is invalid: {_one_line(exc)}") from None


def _encode_state(state: dict[str, Any]) -> bytes:
    """JSON with one label (and one cost-matrix row) per line: small, human-inspectable, diff-friendly."""
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


def _new_state(pool: Predictions, source: str | None, pool_options: Mapping[str, Any] | None, cfg: dict[str, Any],
               matrix: np.ndarray | None, *, use_pool_labels: bool) -> dict[str, Any]:
    """The state of a new session (revision 0): pool record, settings, generator state, labels so far."""
    now = _now()
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


def _session_cost(cost_matrix: Any, cost: Any, classes: tuple[str, ...]) -> tuple[np.ndarray | None, str]:
    """The session's cost matrix (None for 0-1) and how it is recorded, via the one resolver."""
    from pbassess.stats.cost import cost_matrix_name, resolve_cost_matrix

    if cost is not None and cost_matrix is not None:
        raise ConfigError("pass the cost matrix once, as cost_matrix= (cost= is its old spelling)")
    spec = cost_matrix if cost_matrix is not None else cost
    name = cost_matrix_name(spec)
    if name == "zero-one":
        return None, name
    return resolve_cost_matrix(spec, classes), name


def _check_loaded_state(state: dict[str, Any], pool: Predictions, path: Path) -> None:
    """The pool's fingerprint, the settings and the cost matrix of a state read from ``path`` (StateError otherwise)."""
    record = state["pool"]
    found = pool_fingerprint(pool)
    if found != record["fingerprint"]:
        raise StateError(
            f"the pool changed since the session started: fingerprint {found[:12]} of "
            f"{pool.name!r} ({pool.n_items} items) does not match {record['fingerprint'][:12]} "
            f"recorded in {path} ({record.get('n_items')} items)"
        )
    try:
        _validate_config(state["config"], pool)
    except ConfigError as exc:
        raise StateError(f"state file {path} is corrupt (invalid setting: {_one_line(exc)})") from None
    if state["config"]["strategy"] == "uncertainty":
        from pbassess.active.session_estimation import check_design

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


# ---------------------------------------------------------------------------- label input
def _normalise_label(value: str, class_index: Mapping[str, int]) -> str | None:
    """A label as a class name: the name itself, or an integer spelled "3.0" for class "3"; None if neither."""
    if value in class_index:
        return value
    try:
        as_float = float(value)
    except ValueError:
        return None
    if as_float.is_integer() and str(int(as_float)) in class_index:
        return str(int(as_float))
    return None


def _new_label_entries(rows: list[tuple[str, str, str]], current: Mapping[str, str], index: Mapping[str, int],
                       classes: tuple[str, ...], *, relabel: bool) -> tuple[list[list[str]], dict, dict[str, int]]:
    """Validate label rows against the pool and the labels so far, all or nothing.

    Returns the new entries ``[item, label, ""]`` (time filled in when written), the items seen
    (item -> (label, where)) and the counts ``added``, ``relabeled``, ``unchanged``; raises one
    DataError line on the first bad row.
    """
    class_index = {c: i for i, c in enumerate(classes)}
    seen: dict[str, tuple[str, str]] = {}
    new_entries: list[list[str]] = []
    counts = {"added": 0, "relabeled": 0, "unchanged": 0}
    shown = ", ".join(classes[:6]) + (", ..." if len(classes) > 6 else "")
    for item, raw_label, where in rows:
        if item not in index:
            raise DataError(f"{where}: unknown item id {item!r} (not in the pool of {len(index)} items)")
        label = _normalise_label(raw_label, class_index)
        if label is None:
            if raw_label == "":
                raise DataError(f"{where}: item {item!r} has an empty label (remove the row to skip the item)")
            raise DataError(f"{where}: label {raw_label!r} of item {item!r} is not one of the "
                            f"{len(classes)} classes ({shown})")
        if item in seen:
            if seen[item][0] != label:
                raise DataError(f"item {item!r} is given twice with different labels: {seen[item][0]!r} "
                                f"({seen[item][1]}) and {label!r} ({where})")
            counts["unchanged"] += 1
            continue
        seen[item] = (label, where)
        before = current.get(item)
        if before == label:
            counts["unchanged"] += 1
            continue
        if before is not None and not relabel:
            raise DataError(f"item {item!r} ({where}) is already labeled {before!r}; pass relabel=True "
                            f"(--relabel) to change it to {label!r}")
        counts["relabeled" if before is not None else "added"] += 1
        new_entries.append([item, label, ""])
    return new_entries, seen, counts


def _text(value: Any) -> str:
    """A cell as text: missing -> "", 3.0 -> "3", surrounding blanks stripped."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value).strip()


def _label_rows(labels: Any) -> list[tuple[str, str, str]]:
    """(item_id, label, where) triples from a mapping, DataFrame, CSV path or pairs."""
    import pandas as pd

    if isinstance(labels, (str, os.PathLike)):
        path = Path(labels)
        if not path.exists():
            raise DataError(f"labels file not found: {path}")
        try:
            frame = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
            raise DataError(f"labels file {path} cannot be read as CSV: {_one_line(exc)}") from None
        frame.columns = [str(c).strip() for c in frame.columns]
        return _frame_rows(frame, f"labels file {path}", line_offset=2)
    if isinstance(labels, pd.DataFrame):
        return _frame_rows(labels, "labels", line_offset=None)
    if isinstance(labels, Mapping):
        return [(_text(k), _text(v), f"row {r}") for r, (k, v) in enumerate(labels.items())]
    try:
        pairs = list(labels)
    except TypeError:
        raise DataError(f"labels must be a mapping, a DataFrame, a CSV path or (item_id, label) pairs, "
                        f"not {type(labels).__name__}") from None
    rows = []
    for r, pair in enumerate(pairs):
        if isinstance(pair, (str, bytes)) or len(pair) != 2:
            raise DataError(f"labels row {r} is not an (item_id, label) pair")
        rows.append((_text(pair[0]), _text(pair[1]), f"row {r}"))
    return rows


def _frame_rows(frame: Any, what: str, line_offset: int | None) -> list[tuple[str, str, str]]:
    cols = [str(c) for c in frame.columns]
    for need in ("item_id", "label"):
        if need not in cols:
            raise DataError(f"{what} has no {need!r} column (columns: {', '.join(cols) or 'none'})")

    where = (lambda r: f"line {r + line_offset}") if line_offset is not None else (lambda r: f"row {r}")
    return [(_text(i), _text(v), where(r)) for r, (i, v) in enumerate(zip(frame["item_id"], frame["label"], strict=True))]


