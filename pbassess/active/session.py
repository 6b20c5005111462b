"""A labeling session for a person: batch by batch, resumable, and never losing a label.

A session keeps everything in one small JSON *state file*: a fingerprint of the pool, the
settings (target, strategy, prior, batch size, top-m, seed), the random generator's state,
every label given (item id, label, time, in order) and the batch still waiting for labels.
The state is written atomically (temporary file in the same folder, flush, fsync,
``os.replace``, fsync of the folder), under a lock on the folder and only after the new
content is fully validated, so a process killed at any moment leaves a state file that
loads, a label is acknowledged only once it is on disk, and a rejected input (unknown item,
conflicting duplicate, label outside the classes, changed pool) changes nothing.

The pool's own true labels, if any, are ignored (unless ``use_pool_labels=True``): in a real
session they are what the person provides.

Examples
--------
>>> import tempfile, pathlib
>>> import numpy as np
>>> from pbassess import Predictions
>>> from pbassess.active.session import LabelingSession
>>> rng = np.random.default_rng(0)
>>> pool = Predictions.from_probs(rng.dirichlet(np.ones(3), 60), classes=["a", "b", "c"])
>>> path = pathlib.Path(tempfile.mkdtemp()) / "state.json"
>>> s = LabelingSession.start(pool, path, target="least-accurate", batch_size=4, seed=1)
>>> batch = s.next_batch()
>>> list(batch.columns), len(batch)
(['item_id', 'predicted', 'score', 'batch'], 4)
>>> s.add_labels({i: "a" for i in batch["item_id"]})["added"]
4
>>> LabelingSession.load(path, pool).status()["labeled"]
4
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import html
import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from pbassess._json import to_jsonable
from pbassess.active.select import (
    STRATEGIES,
    TARGETS,
    BetaArms,
    build_target_model,
    choose_batch,
    target_answer,
)
from pbassess.constants import DEFAULT_BINS, DEFAULT_DRAWS, DEFAULT_PSEUDOCOUNT
from pbassess.data.predictions import Predictions
from pbassess.errors import ConfigError, DataError, PbassessError, StateError
from pbassess.results.base import AssessmentResult
from pbassess.stats import beta_hdi, bin_edges, bin_index, hdi_from_draws

try:  # POSIX advisory locks; without them (Windows) concurrent writers are not excluded
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

__all__ = ["LabelingSession", "SessionPosterior", "atomic_write_bytes", "pool_fingerprint"]

STATE_FORMAT = "pbassess-labeling-session"
STATE_VERSION = 1
DEFAULT_BATCH_SIZE = 10
PRIORS = ("uniform", "informed")

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
    """A pool from a Predictions object, a file path or a registered name; and how to find it again."""
    from pbassess.data.registry import load_data, model_card

    if isinstance(source, Predictions):
        return source, None
    if source is None:
        raise ConfigError("no pool given: pass a Predictions object, a prediction file or a registered name")
    opts = {k: v for k, v in dict(options or {}).items() if v is not None}
    pool = load_data(source, **opts)
    text = os.fspath(source)
    try:
        model_card(text)
        return pool, text  # a registered name (load_data prefers it over a file of that name)
    except DataError:
        return pool, str(Path(text).resolve())


def _resolve_cost(cost: Any, classes: tuple[str, ...]) -> tuple[np.ndarray | None, str]:
    """A K x K cost matrix from None (0-1), an array, a file (.npy/.csv/.json) or a registered name."""
    k = len(classes)
    if cost is None:
        return None, "0-1"
    source = "matrix"
    if isinstance(cost, (str, os.PathLike)):
        text = os.fspath(cost)
        path = Path(text)
        if path.exists():
            source = str(path.resolve())
            matrix = _read_cost_file(path, classes)
        else:
            source = text
            matrix = _named_cost(text, classes)
    else:
        try:
            matrix = np.asarray(cost, dtype=float)
        except (TypeError, ValueError):
            raise ConfigError("the cost matrix must hold numbers") from None
    if matrix.shape != (k, k):
        raise ConfigError(f"the cost matrix has shape {matrix.shape}, expected ({k}, {k}) for {k} classes")
    if not np.all(np.isfinite(matrix)) or (matrix < 0).any():
        raise ConfigError("the cost matrix must hold finite, non-negative numbers")
    return matrix, source


def _read_cost_file(path: Path, classes: tuple[str, ...]) -> np.ndarray:
    try:
        if path.suffix == ".npy":
            return np.load(path, allow_pickle=False).astype(float)
        if path.suffix == ".json":
            raw = json.loads(path.read_text())
            return np.asarray(raw["cost"] if isinstance(raw, dict) else raw, dtype=float)
        import pandas as pd

        frame = pd.read_csv(path, index_col=0)
        names = [str(c) for c in frame.columns]
        rows = [str(r) for r in frame.index]
        if sorted(names) == sorted(classes) and sorted(rows) == sorted(classes):
            frame.columns, frame.index = names, rows
            return frame.loc[list(classes), list(classes)].to_numpy(dtype=float)
        return np.loadtxt(path, delimiter=",", ndmin=2)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"cost matrix file {path}: {_one_line(exc)}") from None


def _named_cost(name: str, classes: tuple[str, ...]) -> np.ndarray:
    """A registered cost matrix from :mod:`pbassess.stats.cost`, when that module is present."""
    try:
        from pbassess.stats import cost as cost_module  # type: ignore[attr-defined]
    except ImportError:
        raise ConfigError(f"cost {name!r} is neither a file nor a known cost matrix "
                          "(pass a .csv/.npy/.json file)") from None
    for attr in ("cost_matrix", "named_cost_matrix", "get_cost_matrix"):
        func = getattr(cost_module, attr, None)
        if callable(func):
            try:
                return np.asarray(func(name, classes=list(classes)), dtype=float)
            except TypeError:
                return np.asarray(func(name), dtype=float)
    raise ConfigError(f"cost {name!r} is neither a file nor a known cost matrix (pass a .csv/.npy/.json file)")


# ---------------------------------------------------------------------------- config
def _validate_config(cfg: dict[str, Any], pool: Predictions) -> None:
    """Raise ConfigError on any invalid setting (used at start and when loading a state)."""
    if cfg["target"] not in TARGETS:
        raise ConfigError(f"unknown target {cfg['target']!r} (choose from {', '.join(TARGETS)})")
    if cfg["strategy"] not in STRATEGIES:
        raise ConfigError(f"unknown strategy {cfg['strategy']!r} (choose from {', '.join(STRATEGIES)})")
    if cfg["prior"] not in PRIORS:
        raise ConfigError(f"unknown prior {cfg['prior']!r} (choose 'uniform' or 'informed')")
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
    n_arms = int((np.bincount(pool.predicted, minlength=pool.n_classes) > 0).sum())
    limit = n_arms if cfg["target"] == "estimation" else n_arms - 1
    if cfg["top_m"] > limit:
        raise ConfigError(f"top_m = {cfg['top_m']} is too large: the pool predicts {n_arms} classes, "
                          f"so top_m must be at most {limit} for target {cfg['target']!r}")
    if cfg["target"] != "highest-cost" and cfg.get("cost_source", "0-1") != "0-1":
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


# ---------------------------------------------------------------------------- session
class LabelingSession:
    """A resumable, crash-safe labeling session over a pool of predictions.

    Create one with :meth:`start`, reopen it with :meth:`load` (alias :meth:`resume`).
    Each call that changes the session (:meth:`next_batch`, :meth:`add_labels`) writes the
    state file atomically before it returns.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import numpy as np
    >>> from pbassess import Predictions
    >>> pool = Predictions.from_top1(["a", "b"] * 20, np.linspace(0.5, 0.99, 40))
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "s.json"
    >>> s = LabelingSession.start(pool, path, target="most-accurate", strategy="random-arm", seed=3)
    >>> b = s.next_batch()
    >>> s.add_labels(dict(zip(b["item_id"], b["predicted"])))["labeled"]
    10
    """

    def __init__(self, state: dict[str, Any], pool: Predictions, path: Path) -> None:
        self._state = state
        self._pool = pool
        self._path = path
        self._index = {str(item): i for i, item in enumerate(pool.item_ids)}
        self._class_index = {c: i for i, c in enumerate(pool.classes)}
        matrix = state.get("cost_matrix")
        self._cost = None if matrix is None else np.asarray(matrix, dtype=float)

    # ------------------------------------------------------------------ creation
    @classmethod
    def start(
        cls,
        pool: Predictions | str | os.PathLike,
        state_path: str | os.PathLike,
        *,
        target: str,
        strategy: str = "ts",
        batch_size: int = DEFAULT_BATCH_SIZE,
        prior: str = "uniform",
        pseudocount: float = DEFAULT_PSEUDOCOUNT,
        top_m: int = 1,
        seed: int | None = None,
        ttts_beta: float = 0.5,
        epsilon: float = 0.1,
        bins: int = DEFAULT_BINS,
        cost: Any = None,
        pool_options: Mapping[str, Any] | None = None,
        use_pool_labels: bool = False,
        overwrite: bool = False,
    ) -> LabelingSession:
        """Create a new session and write its state file.

        Parameters
        ----------
        pool : Predictions, path or registered name
            The items to label with the model's predictions. A file or a name is recorded
            in the state so :meth:`load` finds it again; an in-memory pool must be passed
            again to :meth:`load`.
        state_path : path
            The JSON state file to create.
        target : str
            ``least-accurate``, ``most-accurate``, ``most-miscalibrated``, ``highest-cost``
            or ``estimation``.
        strategy : str
            ``random-item``, ``random-arm``, ``ts``, ``ttts``, ``mpts``, ``bayes-ucb`` or
            ``epsilon-greedy``.
        batch_size : int
            Items per batch.
        prior : {"uniform", "informed"}
            Uniform Beta(pc/2, pc/2) or informed Beta(pc * s_k, pc * (1 - s_k)) with s_k the
            model's mean confidence of predicted class k over the pool.
        pseudocount : float
            Prior strength pc.
        top_m : int
            Size of the answer set (the m least accurate classes, ...).
        seed : int, optional
            Seed of the session's random generator (drawn and recorded when omitted).
        ttts_beta : float
            Probability of the leader in top-two Thompson sampling.
        epsilon : float
            Exploration probability of epsilon-greedy.
        bins : int
            Confidence bins inside each class (``most-miscalibrated``).
        cost : array, path or name, optional
            Cost matrix (rows predicted, columns true) for ``highest-cost``; default 0-1.
        pool_options : mapping, optional
            Reader options for a file or name, e.g. ``{"model": "LR", "threshold": 0.5}``.
        use_pool_labels : bool
            Take the labels present in the pool file as already given (default: ignore them).
        overwrite : bool
            Replace an existing state file.

        Returns
        -------
        LabelingSession

        Examples
        --------
        >>> import tempfile, pathlib
        >>> from pbassess import Predictions
        >>> pool = Predictions.from_top1(["a", "b", "a"], [0.9, 0.8, 0.7])
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "s.json"
        >>> LabelingSession.start(pool, path, target="least-accurate", seed=0).config["strategy"]
        'ts'
        """
        path = Path(state_path)
        if path.exists() and not overwrite:
            raise StateError(f"state file {path} already exists (continue it with `pbassess session add`, "
                             "or pass --force / overwrite=True to start over)")
        if not path.parent.is_dir():
            raise StateError(f"the folder of the state file does not exist: {path.parent}")
        pool_obj, source = _load_pool(pool, pool_options)
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % (2**63))
        matrix, cost_source = _resolve_cost(cost, pool_obj.classes)
        cfg = {
            "target": target, "strategy": strategy, "batch_size": batch_size, "prior": prior,
            "pseudocount": _as_float(pseudocount, "pseudocount"),
            "top_m": top_m, "seed": seed, "ttts_beta": _as_float(ttts_beta, "ttts_beta"),
            "epsilon": _as_float(epsilon, "epsilon"), "bins": bins,
            "cost_source": cost_source,
        }
        _validate_config(cfg, pool_obj)
        now = _now()
        labels: list[list[str]] = []
        if use_pool_labels:
            for i in np.flatnonzero(pool_obj.labeled):
                labels.append([str(pool_obj.item_ids[i]), pool_obj.classes[pool_obj.labels[i]], now])
        state = {
            "format": STATE_FORMAT, "version": STATE_VERSION, "revision": 0, "created": now, "updated": now,
            "pool": {
                "source": source,
                "options": {k: v for k, v in dict(pool_options or {}).items() if v is not None},
                "name": pool_obj.name, "n_items": pool_obj.n_items, "classes": list(pool_obj.classes),
                "fingerprint": pool_fingerprint(pool_obj),
            },
            "config": cfg,
            "rng": np.random.default_rng(seed).bit_generator.state,
            "batches_issued": 0,
            "outstanding": [],
            "cost_matrix": None if matrix is None else [[int(v) if float(v).is_integer() else float(v) for v in row]
                                                        for row in matrix],
            "labels": labels,
        }
        session = cls(state, pool_obj, path)
        with _folder_lock(path.parent):
            session._write(state)
        return session

    @classmethod
    def load(
        cls,
        state_path: str | os.PathLike,
        pool: Predictions | str | os.PathLike | None = None,
        *,
        pool_options: Mapping[str, Any] | None = None,
    ) -> LabelingSession:
        """Reopen a session from its state file.

        Parameters
        ----------
        state_path : path
        pool : Predictions, path or name, optional
            The pool, when it was given in memory at start or its file has moved; by default
            the file or name recorded in the state. Either way its fingerprint must match.
        pool_options : mapping, optional
            Reader options for ``pool`` (default: those recorded in the state).

        Raises
        ------
        StateError
            Missing or corrupt state file, or a pool that changed since the session started.

        Examples
        --------
        >>> LabelingSession.load("no-such-state.json")
        Traceback (most recent call last):
        ...
        pbassess.errors.StateError: state file not found: no-such-state.json (start a session with `pbassess session start`)
        """
        path = Path(state_path)
        state = _read_state(path)
        record = state["pool"]
        source = pool if pool is not None else record.get("source")
        if source is None:
            raise StateError(f"the session in {path} was started from an in-memory pool: pass it again with "
                             "pool=... (or --pool FILE)")
        options = pool_options if pool_options is not None else record.get("options")
        try:
            pool_obj, _ = _load_pool(source, options)
        except PbassessError as exc:
            raise StateError(f"the pool of the session in {path} cannot be loaded ({_one_line(exc)}); "
                             "pass its current location with pool=... / --pool") from None
        found = pool_fingerprint(pool_obj)
        if found != record["fingerprint"]:
            raise StateError(
                f"the pool changed since the session started: fingerprint {found[:12]} of "
                f"{pool_obj.name!r} ({pool_obj.n_items} items) does not match {record['fingerprint'][:12]} "
                f"recorded in {path} ({record.get('n_items')} items)"
            )
        try:
            _validate_config(state["config"], pool_obj)
        except ConfigError as exc:
            raise StateError(f"state file {path} is corrupt (invalid setting: {_one_line(exc)})") from None
        matrix = state.get("cost_matrix")
        if matrix is not None:
            try:
                arr = np.asarray(matrix, dtype=float)
            except (TypeError, ValueError):
                arr = np.full((0, 0), np.nan)
            k = pool_obj.n_classes
            if arr.shape != (k, k) or not np.all(np.isfinite(arr)) or (arr < 0).any():
                raise StateError(f"state file {path} is corrupt (the cost matrix is not a {k} x {k} matrix of "
                                 "non-negative numbers)")
        session = cls(state, pool_obj, path)
        unknown = [e[0] for e in state["labels"] if e[0] not in session._index]
        unknown += [i for i in state["outstanding"] if i not in session._index]
        bad_labels = [e[1] for e in state["labels"] if e[1] not in session._class_index]
        if unknown or bad_labels:
            what = f"item id {unknown[0]!r} is not in the pool" if unknown else f"label {bad_labels[0]!r} is not a class"
            raise StateError(f"state file {path} is corrupt ({what})")
        return session

    resume = load

    # ------------------------------------------------------------------ read-only views
    @property
    def state_path(self) -> Path:
        """The state file."""
        return self._path

    @property
    def pool(self) -> Predictions:
        """The pool (its own labels, if any, are not used)."""
        return self._pool

    @property
    def config(self) -> dict[str, Any]:
        """The session's settings (a copy)."""
        return copy.deepcopy(self._state["config"])

    @property
    def n_labeled(self) -> int:
        """Number of distinct items labeled so far."""
        return len(self._effective_labels())

    def _effective_labels(self) -> dict[str, str]:
        """item id -> label, the last entry winning (relabels append an entry)."""
        return {entry[0]: entry[1] for entry in self._state["labels"]}

    def labels(self):
        """The labels given so far: one row per item (latest label), in the order first given.

        Returns
        -------
        pandas.DataFrame with columns ``item_id``, ``label``, ``predicted``, ``time``.
        """
        import pandas as pd

        rows: dict[str, list[str]] = {}
        for item, label, when in self._state["labels"]:
            rows[item] = [label, when]
        pred = [self._pool.classes[self._pool.predicted[self._index[i]]] for i in rows]
        return pd.DataFrame({"item_id": list(rows), "label": [v[0] for v in rows.values()], "predicted": pred,
                             "time": [v[1] for v in rows.values()]})

    def outstanding(self):
        """The items issued in batches and still waiting for a label (a DataFrame like :meth:`next_batch`)."""
        return self._batch_frame(self._state["outstanding"], None)

    def _batch_frame(self, ids: list[str], batch_number: int | None):
        import pandas as pd

        idx = np.array([self._index[i] for i in ids], dtype=np.int64)
        classes = np.asarray(self._pool.classes, dtype=object)
        frame = pd.DataFrame({
            "item_id": pd.Series(list(ids), dtype=object),
            "predicted": pd.Series(classes[self._pool.predicted[idx]] if idx.size else [], dtype=object),
            "score": pd.Series(self._pool.confidence[idx], dtype=float),
        })
        if batch_number is not None:
            frame["batch"] = batch_number
        return frame

    def _labeled_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        eff = self._effective_labels()
        idx = np.fromiter((self._index[i] for i in eff), dtype=np.int64, count=len(eff))
        lab = np.fromiter((self._class_index[v] for v in eff.values()), dtype=np.int64, count=len(eff))
        return idx, lab

    def _model(self, target: str | None = None):
        cfg = self._state["config"]
        idx, lab = self._labeled_arrays()
        return build_target_model(
            target or cfg["target"], self._pool.predicted, self._pool.confidence, idx, lab,
            prior=cfg["prior"], pseudocount=cfg["pseudocount"], bins=cfg["bins"], cost=self._cost,
            probs=self._pool.probs, n_classes=self._pool.n_classes,
        )

    # ------------------------------------------------------------------ writing
    @contextlib.contextmanager
    def _mutation(self) -> Iterator[dict[str, Any]]:
        """Lock the folder, check nobody else wrote the state since we read it, yield a copy to edit."""
        with _folder_lock(self._path.parent):
            on_disk = _read_state(self._path)
            if on_disk["revision"] != self._state["revision"]:
                raise StateError(f"state file {self._path} was changed by another process (revision "
                                 f"{on_disk['revision']}, this session has {self._state['revision']}): load it again")
            yield copy.deepcopy(self._state)

    def _write(self, state: dict[str, Any]) -> None:
        """Write ``state`` durably; only then does it become this session's state (call under the lock)."""
        data = _encode_state(state)
        atomic_write_bytes(self._path, data)
        _remove_stale_temporaries(self._path)
        self._state = state

    def _commit(self, state: dict[str, Any]) -> None:
        state["revision"] = int(state["revision"]) + 1
        state["updated"] = _now()
        self._write(state)

    # ------------------------------------------------------------------ batches
    def next_batch(self, *, reissue: bool = False):
        """Choose the next batch of items to label, record it as outstanding and return it.

        Each of the ``batch_size`` slots picks an arm (predicted class) with the session's
        strategy from the current posterior, then a uniformly random unlabeled item of that
        class (without replacement; exhausted classes drop out). Items of earlier batches
        still waiting for labels are not issued again.

        Parameters
        ----------
        reissue : bool, default False
            Put the outstanding items back into the pool first (they may be chosen again);
            use it when an earlier batch was abandoned.

        Returns
        -------
        pandas.DataFrame
            Columns ``item_id``, ``predicted`` (the model's class), ``score`` (its
            confidence) and ``batch`` (the batch number); empty when every item is labeled
            or waiting.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> from pbassess import Predictions
        >>> pool = Predictions.from_top1(["a", "b"] * 5, [0.9] * 10)
        >>> s = LabelingSession.start(pool, pathlib.Path(tempfile.mkdtemp()) / "s.json",
        ...                           target="least-accurate", batch_size=3, seed=0)
        >>> len(s.next_batch()), len(s.next_batch()), len(s.outstanding())
        (3, 3, 6)
        """
        with self._mutation() as state:
            cfg = state["config"]
            if reissue:
                state["outstanding"] = []
            available = np.ones(self._pool.n_items, dtype=bool)
            idx, _ = self._labeled_arrays()
            available[idx] = False
            available[[self._index[i] for i in state["outstanding"]]] = False
            rng = _rng_from_state(state["rng"])
            item_bins = None
            if cfg["target"] == "most-miscalibrated":
                item_bins = bin_index(self._pool.confidence, bin_edges(bins=cfg["bins"]))
            chosen = choose_batch(
                self._model(), self._pool.predicted, available, cfg["strategy"], cfg["batch_size"], rng,
                top_m=cfg["top_m"], ttts_beta=cfg["ttts_beta"], epsilon=cfg["epsilon"], n_labeled=int(idx.size),
                item_bins=item_bins,
            )
            ids = [str(self._pool.item_ids[i]) for i in chosen]
            if ids:
                state["batches_issued"] += 1
            state["outstanding"] = state["outstanding"] + ids
            state["rng"] = rng.bit_generator.state
            if ids or reissue:
                self._commit(state)
        return self._batch_frame(ids, self._state["batches_issued"])

    # ------------------------------------------------------------------ labels
    def add_labels(self, labels: Any, *, relabel: bool = False) -> dict[str, int]:
        """Record true labels; all or nothing.

        Parameters
        ----------
        labels : mapping, DataFrame, path or sequence of pairs
            ``{item_id: label}``, a DataFrame / CSV file with columns ``item_id`` and
            ``label``, or ``[(item_id, label), ...]``. Labels are class names.
        relabel : bool, default False
            Allow changing the label of an item labeled before (the new label wins; both
            stay in the state's history).

        Returns
        -------
        dict
            ``added`` (new items), ``relabeled``, ``unchanged`` (same label given again:
            accepted and ignored), ``labeled`` (items labeled in total) and ``outstanding``.

        Raises
        ------
        DataError
            Unknown item id, missing label, label outside the classes, an item given twice
            with different labels, or a different label for an item already labeled
            without ``relabel``. Nothing is recorded then.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> from pbassess import Predictions
        >>> pool = Predictions.from_top1(["a", "b"], [0.9, 0.8])
        >>> s = LabelingSession.start(pool, pathlib.Path(tempfile.mkdtemp()) / "s.json",
        ...                           target="least-accurate", seed=0)
        >>> s.add_labels({"0": "a"})["added"], s.add_labels({"0": "a"})["unchanged"]
        (1, 1)
        >>> s.add_labels({"0": "b"})
        Traceback (most recent call last):
        ...
        pbassess.errors.DataError: item '0' (row 0) is already labeled 'a'; pass relabel=True (--relabel) to change it to 'b'
        """
        rows = _label_rows(labels)
        if not rows:
            raise DataError("no labels given: the input has no rows")
        current = self._effective_labels()
        seen: dict[str, tuple[str, str]] = {}
        new_entries: list[list[str]] = []
        counts = {"added": 0, "relabeled": 0, "unchanged": 0}
        shown = ", ".join(self._pool.classes[:6]) + (", ..." if self._pool.n_classes > 6 else "")
        for item, raw_label, where in rows:
            if item not in self._index:
                raise DataError(f"{where}: unknown item id {item!r} (not in the pool of {self._pool.n_items} items)")
            label = self._normalise_label(raw_label)
            if label is None:
                if raw_label == "":
                    raise DataError(f"{where}: item {item!r} has an empty label (remove the row to skip the item)")
                raise DataError(f"{where}: label {raw_label!r} of item {item!r} is not one of the "
                                f"{self._pool.n_classes} classes ({shown})")
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
        if new_entries:
            with self._mutation() as state:
                now = _now()
                for entry in new_entries:
                    entry[2] = now
                state["labels"] = state["labels"] + new_entries
                done = {e[0] for e in new_entries} | set(seen)
                state["outstanding"] = [i for i in state["outstanding"] if i not in done]
                self._commit(state)
        elif any(i in seen for i in self._state["outstanding"]):
            with self._mutation() as state:  # labels already known: just clear them from the waiting list
                state["outstanding"] = [i for i in state["outstanding"] if i not in seen]
                self._commit(state)
        return {**counts, "labeled": self.n_labeled, "outstanding": len(self._state["outstanding"])}

    def _normalise_label(self, value: str) -> str | None:
        if value in self._class_index:
            return value
        try:
            as_float = float(value)
        except ValueError:
            return None
        if as_float.is_integer() and str(int(as_float)) in self._class_index:
            return str(int(as_float))
        return None

    # ------------------------------------------------------------------ posterior
    def posterior(self, n_draws: int = DEFAULT_DRAWS, seed: Any = None) -> SessionPosterior:
        """The current posterior: classwise accuracy (and ECE or cost) draws, the answer and its probability.

        Parameters
        ----------
        n_draws : int
            Monte Carlo draws (exact conjugate draws).
        seed : int or Generator, optional
            Default: derived from the session's seed and number of labels, so the same state
            always gives the same summary.

        Returns
        -------
        SessionPosterior
        """
        import xarray as xr

        cfg = self._state["config"]
        target, m = cfg["target"], cfg["top_m"]
        if seed is None:
            seed = [int(cfg["seed"]), len(self._state["labels"]), 1]
        rng = np.random.default_rng(seed)
        classes = np.asarray(self._pool.classes, dtype=str)
        acc_model: BetaArms = self._model("least-accurate")  # type: ignore[assignment]
        acc_draws = acc_model.metric_draws(int(n_draws), rng)
        data = {"accuracy": (("chain", "draw", "class"), acc_draws[None])}
        valid = acc_model.valid
        if target in ("most-miscalibrated", "highest-cost"):
            model = self._model()
            metric = model.metric_name
            metric_draws = model.metric_draws(int(n_draws), rng)
            data[metric] = (("chain", "draw", "class"), metric_draws[None])
        else:
            metric, metric_draws = "accuracy", acc_draws
        if target == "estimation":
            a, b = acc_model.alpha, acc_model.beta
            sd = np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
            order = np.lexsort((np.arange(sd.size), -np.where(valid, sd, -np.inf)))
            answer, probability, p_member = [int(a) for a in order[:m]], None, np.full(sd.size, np.nan)
        else:
            answer, probability, p_member = target_answer(metric_draws, valid, m, lowest=target == "least-accurate")
        idx, lab = self._labeled_arrays()
        pred_lab = self._pool.predicted[idx]
        k = self._pool.n_classes
        counts = xr.Dataset(
            {
                "pool": ("class", np.bincount(self._pool.predicted, minlength=k)),
                "labeled": ("class", np.bincount(pred_lab, minlength=k)),
                "correct": ("class", np.bincount(pred_lab, weights=(lab == pred_lab), minlength=k).astype(np.int64)),
                "accuracy_alpha": ("class", acc_model.alpha),
                "accuracy_beta": ("class", acc_model.beta),
                "p_answer": ("class", p_member),
            },
            coords={"class": classes},
        )
        posterior = xr.Dataset(data, coords={"chain": [0], "draw": np.arange(int(n_draws)), "class": classes})
        options = {
            "target": target, "top_m": m, "strategy": cfg["strategy"], "metric": metric,
            "answer": [str(classes[a]) for a in answer], "probability": probability,
            "outstanding": len(self._state["outstanding"]), "batches_issued": self._state["batches_issued"],
            "labeled": int(idx.size), "exhausted": bool(int(idx.size) + len(self._state["outstanding"])
                                                        >= self._pool.n_items),
        }
        prior = {"kind": cfg["prior"], "pseudocount": cfg["pseudocount"], "bins": cfg["bins"],
                 "cost": cfg.get("cost_source", "0-1")}
        return SessionPosterior(posterior, counts, prior=prior, data_summary=self._pool.describe() | {
            "n_labeled": int(idx.size)}, engine="conjugate", options=options)

    def status(self, n_draws: int = DEFAULT_DRAWS) -> dict[str, Any]:
        """Labels so far, the posterior summary per class, and the answer with its probability.

        Returns
        -------
        dict
            ``labeled``, ``pool_items``, ``outstanding``, ``target``, ``top_m``, ``strategy``,
            ``metric``, ``answer`` (class names), ``probability`` (posterior probability that
            the answer is exactly the true top-m set; ``None`` for ``estimation``),
            ``ci_prob``, ``sentence`` and ``classes`` (one dict per class: ``pool``,
            ``labeled``, ``correct``, ``mean`` and ``hdi`` of the target's metric,
            ``accuracy_mean``, ``accuracy_hdi``, ``p_answer``).
        """
        return self.posterior(n_draws).to_json()

    def report(self, out_dir: str | os.PathLike, n_draws: int = DEFAULT_DRAWS) -> dict[str, Path]:
        """Write the figures and ``status.json`` to ``out_dir``.

        Figures: ``accuracy.png`` (posterior accuracy per class with HDIs), ``answer.png``
        (P(being in the answer) per class, or the posterior sd for ``estimation``),
        ``labels.png`` (labels per class against the pool), and ``metric.png`` (ECE or cost
        per class) for the calibration and cost targets.

        Returns
        -------
        dict of name to path
        """
        import matplotlib.pyplot as plt

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        result = self.posterior(n_draws)
        kinds = ["accuracy", "answer", "labels"] + (["metric"] if result.options["metric"] != "accuracy" else [])
        written: dict[str, Path] = {}
        for kind in kinds:
            fig = result.plot(kind=kind)
            target = out / f"{kind}.png"
            fig.savefig(target, dpi=110, bbox_inches="tight")
            plt.close(fig)
            written[kind] = target
        status_path = out / "status.json"
        atomic_write_bytes(status_path, (json.dumps(to_jsonable(result.to_json()), indent=1) + "\n").encode())
        written["status"] = status_path
        return written

    # ------------------------------------------------------------------ display
    def __repr__(self) -> str:
        cfg = self._state["config"]
        return (f"LabelingSession({self._pool.name!r}: target={cfg['target']}, strategy={cfg['strategy']}, "
                f"{self.n_labeled}/{self._pool.n_items} labeled, {len(self._state['outstanding'])} waiting, "
                f"state={str(self._path)!r})")

    def _repr_html_(self) -> str:
        cfg = self._state["config"]
        result = self.posterior(1000)
        table = result.summary()
        head = (f"<p><b>Labeling session</b> on <code>{html.escape(self._pool.name)}</code> &mdash; target "
                f"<b>{html.escape(cfg['target'])}</b> (top {cfg['top_m']}), strategy {html.escape(cfg['strategy'])}, "
                f"batch {cfg['batch_size']}; {self.n_labeled} of {self._pool.n_items} items labeled, "
                f"{len(self._state['outstanding'])} waiting.<br>{html.escape(result.sentence())}</p>")
        return head + table.to_html(float_format=lambda v: f"{v:.3f}", max_rows=40)


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


# ---------------------------------------------------------------------------- result
class SessionPosterior(AssessmentResult):
    """The posterior of a labeling session at one moment (returned by :meth:`LabelingSession.posterior`).

    ``posterior`` holds draws of ``accuracy`` (and ``ece`` or ``cost`` for those targets) with
    dims ``(chain, draw, class)``; ``counts`` holds per class the pool size, labels, correct
    labels, the accuracy's Beta parameters and ``p_answer``; ``options`` the target, ``top_m``,
    ``answer`` and ``probability``. Accuracy HDIs are exact (Beta); ECE and cost HDIs come
    from the draws.
    """

    metric = "labeling-session"

    def summary(self):
        """One row per class: pool size, labels, posterior mean and HDI of the target's metric and accuracy, P(answer)."""
        import pandas as pd

        c = self.counts
        alpha, beta = c["accuracy_alpha"].to_numpy(), c["accuracy_beta"].to_numpy()
        acc_hdi = beta_hdi(alpha, beta, self.ci_prob)
        frame = pd.DataFrame(
            {
                "pool": c["pool"].to_numpy(), "labeled": c["labeled"].to_numpy(), "correct": c["correct"].to_numpy(),
                "accuracy_mean": alpha / (alpha + beta), "accuracy_hdi_low": acc_hdi[:, 0],
                "accuracy_hdi_high": acc_hdi[:, 1],
            },
            index=pd.Index(c["class"].to_numpy().astype(str), name="class"),
        )
        metric = self.options.get("metric", "accuracy")
        if metric != "accuracy":
            draws = self.draws(metric)
            hdi = hdi_from_draws(draws, self.ci_prob)
            frame[f"{metric}_mean"] = draws.mean(axis=0)
            frame[f"{metric}_hdi_low"] = hdi[:, 0]
            frame[f"{metric}_hdi_high"] = hdi[:, 1]
        frame["p_answer"] = c["p_answer"].to_numpy()
        return frame

    def _accuracy_sd(self) -> np.ndarray:
        a, b = self.counts["accuracy_alpha"].to_numpy(), self.counts["accuracy_beta"].to_numpy()
        return np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))

    def sentence(self) -> str:
        """One sentence with the answer and its posterior probability."""
        opts = self.options
        n, answer, m, target = opts["labeled"], opts["answer"], opts["top_m"], opts["target"]
        names = ", ".join(repr(a) for a in answer)
        when = f"After {n} labels" if n else "With no labels yet (prior only)"
        if target == "estimation":
            sd = dict(zip(self.counts["class"].to_numpy().astype(str), self._accuracy_sd(), strict=True))
            return (f"{when}, the classwise accuracy is least certain for class {names} "
                    f"(posterior sd {sd[answer[0]]:.3f}).")
        prob = opts["probability"]
        if m == 1:
            verb = {"least-accurate": "is the least accurate", "most-accurate": "is the most accurate",
                    "most-miscalibrated": "is the most miscalibrated (classwise ECE)",
                    "highest-cost": "has the highest expected cost"}[target]
            return f"{when}, predicted class {names} {verb}, with posterior probability {prob:.2f}."
        group = {"least-accurate": f"the {m} least accurate predicted classes are",
                 "most-accurate": f"the {m} most accurate predicted classes are",
                 "most-miscalibrated": f"the {m} most miscalibrated predicted classes are",
                 "highest-cost": f"the {m} predicted classes with the highest expected cost are"}[target]
        return f"{when}, {group} {names}, with posterior probability {prob:.2f} that this is exactly the set."

    def _answer_label(self) -> str:
        target, m = self.options["target"], self.options["top_m"]
        what = {"least-accurate": "least accurate", "most-accurate": "most accurate",
                "most-miscalibrated": "most miscalibrated", "highest-cost": "highest cost"}[target]
        return f"P(the {what})" if m == 1 else f"P(among the {m} {what})"

    def to_json(self) -> dict[str, Any]:
        """The status object of ``pbassess session status --json``."""
        table = self.summary()
        metric = self.options.get("metric", "accuracy")
        rows = []
        for name, row in table.iterrows():
            entry = {
                "class": name, "pool": int(row["pool"]), "labeled": int(row["labeled"]), "correct": int(row["correct"]),
                "accuracy_mean": float(row["accuracy_mean"]),
                "accuracy_hdi": [float(row["accuracy_hdi_low"]), float(row["accuracy_hdi_high"])],
            }
            if metric == "accuracy":
                entry["mean"], entry["hdi"] = entry["accuracy_mean"], entry["accuracy_hdi"]
            else:
                entry["mean"] = float(row[f"{metric}_mean"])
                entry["hdi"] = [float(row[f"{metric}_hdi_low"]), float(row[f"{metric}_hdi_high"])]
            entry["p_answer"] = None if np.isnan(row["p_answer"]) else float(row["p_answer"])
            rows.append(entry)
        opts = self.options
        return to_jsonable({
            "labeled": opts["labeled"], "pool_items": int(table["pool"].sum()), "outstanding": opts["outstanding"],
            "batches_issued": opts["batches_issued"], "exhausted": opts["exhausted"],
            "target": opts["target"], "top_m": opts["top_m"], "strategy": opts["strategy"], "metric": metric,
            "answer": opts["answer"], "probability": opts["probability"], "ci_prob": self.ci_prob,
            "prior": self.prior, "sentence": self.sentence(), "classes": rows,
        })

    def plot(self, kind: str = "accuracy", ax: Any = None):
        """Draw one of the report's figures and return the Figure.

        Parameters
        ----------
        kind : {"accuracy", "answer", "labels", "metric"}
            Posterior accuracy per class with HDIs; P(being in the answer) per class (posterior
            sd for ``estimation``); labels per class against the pool size; the target's ECE or
            cost per class with HDIs.
        ax : matplotlib Axes, optional
        """
        import matplotlib.pyplot as plt

        table = self.summary()
        k = len(table)
        if ax is None:
            _, ax = plt.subplots(figsize=(min(16.0, max(6.0, 0.16 * k + 2)), 3.6 if k <= 30 else 4.4))
        fig = ax.figure
        x = np.arange(k)
        names = list(table.index)
        answer = set(self.options["answer"])
        colors = ["tab:red" if n in answer else "tab:blue" for n in names]
        pct = int(round(100 * self.ci_prob))
        if kind in ("accuracy", "metric"):
            metric = "accuracy" if kind == "accuracy" else self.options["metric"]
            if metric == "accuracy" and kind == "metric":
                raise ConfigError("the 'metric' figure exists only for the most-miscalibrated and highest-cost targets")
            mean = table[f"{metric}_mean"].to_numpy()
            low, high = table[f"{metric}_hdi_low"].to_numpy(), table[f"{metric}_hdi_high"].to_numpy()
            ax.errorbar(x, mean, yerr=[mean - low, high - mean], fmt="none", ecolor="0.6", capsize=2)
            ax.scatter(x, mean, c=colors, zorder=3, s=16)
            label = {"accuracy": "accuracy", "ece": "classwise ECE", "cost": "expected cost"}[metric]
            ax.set_ylabel(f"posterior {label}\n(mean, {pct}% HDI)")
            ax.set_title(f"{self.sentence()}", fontsize=8)
        elif kind == "answer":
            if self.options["target"] == "estimation":
                ax.bar(x, self._accuracy_sd(), color=colors)
                ax.set_ylabel("posterior sd of accuracy")
            else:
                ax.bar(x, table["p_answer"].to_numpy(), color=colors)
                ax.set_ylim(0, 1)
                ax.set_ylabel(self._answer_label())
            ax.set_title(f"{self.sentence()}", fontsize=8)
        elif kind == "labels":
            ax.bar(x, table["pool"].to_numpy(), color="0.85", label="pool")
            ax.bar(x, table["labeled"].to_numpy(), color=colors, label="labeled")
            ax.set_ylabel("items per predicted class")
            ax.set_yscale("symlog", linthresh=10)
            ax.legend(fontsize=8)
            ax.set_title(f"{self.options['labeled']} labels so far", fontsize=9)
        else:
            raise ConfigError(f"unknown figure {kind!r} (choose accuracy, answer, labels or metric)")
        ax.set_xticks(x)
        ax.set_xticklabels(names, rotation=90 if k > 12 else 0, fontsize=6 if k > 30 else 9)
        ax.set_xlabel("predicted class")
        fig.tight_layout()
        return fig
