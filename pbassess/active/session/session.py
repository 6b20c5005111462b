"""A labeling session for a person: batch by batch, resumable, and never losing a label.

A session keeps everything in one small JSON *state file* (:mod:`pbassess.active.session.state`): a
fingerprint of the pool, the settings (target, strategy, prior, batch size, top-m, seed), the
random generator's state, every label given (item id, label, time, in order) and the batch
still waiting for labels. The state is written atomically and durably under a lock on the
folder, only after the new content is fully validated, so a process killed at any moment
leaves a state file that loads, a label is acknowledged only once it is on disk, and a
rejected input (unknown item, conflicting duplicate, label outside the classes, changed pool)
or a failed write (disk full) changes nothing.

Targets, priors and strategies are those of the simulation (:mod:`pbassess.active.model`,
:mod:`pbassess.active.strategies`): a session starts from exactly the prior ``simulate`` uses.

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
import html
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from pbassess.active.arms import build_target_model
from pbassess.active.select import choose_batch
from pbassess.active.session.estimation import (
    UNCERTAINTY,
    issue_uncertainty_batch,
    new_design,
    session_estimates,
)
from pbassess.active.session.labels import label_rows, new_label_entries
from pbassess.active.session.report import write_report
from pbassess.active.session.result import SessionPosterior, session_posterior
from pbassess.active.session.settings import as_float, load_pool, session_cost, validate_config
from pbassess.active.session.state import (
    DEFAULT_BATCH_SIZE,
    check_loaded_state,
    encode_state,
    folder_lock,
    new_state,
    one_line,
    read_state,
    rng_from_state,
    utc_now,
    write_state,
)
from pbassess.constants import CI_PROB, DEFAULT_BINS, DEFAULT_N_DRAWS, DEFAULT_PSEUDOCOUNT
from pbassess.data.predictions import Predictions
from pbassess.errors import ConfigError, DataError, PbassessError, StateError
from pbassess.estimation.active import DEFAULT_UNIFORM_SHARE
from pbassess.stats import bin_edges, bin_index
from pbassess.stats.intervals import check_ci_prob

__all__ = ["LabelingSession"]


class LabelingSession:
    r"""A resumable, crash-safe labeling session over a pool of predictions.

    Create one with :meth:`start`, reopen it with :meth:`load` (alias :meth:`resume`).
    Each call that changes the session (:meth:`next_batch`, :meth:`add_labels`) writes the
    state file atomically before it returns.

    Parameters
    ----------
    state : dict
        The session state (as stored in its state file).
    pool : Predictions
        The pool being labeled.
    path : pathlib.Path
        The state file, rewritten atomically at every change.

    Notes
    -----
    The model behind the labels, for the accuracy targets: predicted class :math:`k` (an arm) has
    :math:`y_k` correct of :math:`n_k` labeled items,

    .. math::

       \theta_k \sim \mathrm{Beta}(\alpha_k, \beta_k), \qquad
       \theta_k \mid y \sim \mathrm{Beta}(\alpha_k + y_k,\; \beta_k + n_k - y_k),

    and Thompson sampling (``ts``, ``least-accurate``) draws
    :math:`\tilde\theta_k \sim \mathrm{Beta}(\alpha_k + y_k, \beta_k + n_k - y_k)` for every arm
    and labels an unlabeled item of :math:`\arg\min_k \tilde\theta_k`. The answer is reported with
    :math:`P(k = \arg\min_j \theta_j \mid y)`, estimated from joint posterior draws. The
    calibration and cost targets put the same kind of conjugate posterior (Beta per confidence bin,
    Dirichlet per confusion row) on each arm and rank arms by their ECE or expected cost.

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
        cost_matrix: Any = None,
        pool_options: Mapping[str, Any] | None = None,
        use_pool_labels: bool = False,
        overwrite: bool = False,
        budget: int | None = None,
        uniform_share: float = DEFAULT_UNIFORM_SHARE,
    ) -> LabelingSession:
        """Create a new session and write its state file.

        Parameters
        ----------
        pool : Predictions, DataFrame, path or registered name
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
            ``epsilon-greedy``; for ``estimation`` also ``uncertainty``: active estimation
            (labeling probabilities from the confidence, inverse-probability-weighted estimate;
            :mod:`pbassess.active.session.estimation`).
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
        cost_matrix : name, array or path, optional
            Cost matrix (rows predicted, columns true) for ``highest-cost``: ``zero-one``
            (default), ``people``, ``superclass``, a (K, K) array or a .csv/.npy/.json file
            (:func:`pbassess.stats.cost.resolve_cost_matrix`).
        pool_options : mapping, optional
            Reader options for a file or name, e.g. ``{"model": "LR", "threshold": 0.5}``.
        use_pool_labels : bool
            Take the labels present in the pool file as already given (default: ignore them).
        overwrite : bool
            Replace an existing state file.
        budget : int, optional
            Strategy ``uncertainty``: the expected number of labels the design spreads over
            the pool (default 10% of the pool, at least one batch).
        uniform_share : float
            Strategy ``uncertainty``: the uniform share of the labeling probabilities.

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
        pool_obj, source = load_pool(pool, pool_options)
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % (2**63))
        matrix, cost_source = session_cost(cost_matrix, pool_obj.classes)
        cfg = {
            "target": target, "strategy": strategy, "batch_size": batch_size, "prior": prior,
            "pseudocount": as_float(pseudocount, "pseudocount"),
            "top_m": top_m, "seed": seed, "ttts_beta": as_float(ttts_beta, "ttts_beta"),
            "epsilon": as_float(epsilon, "epsilon"), "bins": bins,
            "cost_source": cost_source,
        }
        validate_config(cfg, pool_obj)
        state = new_state(pool_obj, source, pool_options, cfg, matrix, use_pool_labels=use_pool_labels)
        if strategy == UNCERTAINTY:
            state["design"], state["rng"] = new_design(pool_obj.n_items, batch_size, seed, budget, uniform_share)
        elif budget is not None:
            raise ConfigError("a label budget applies only to strategy 'uncertainty' (target 'estimation')")
        session = cls(state, pool_obj, path)
        session._model()  # the prior must exist for this target and cost matrix (else one ConfigError line)
        with folder_lock(path.parent):
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
        state = read_state(path)
        record = state["pool"]
        source = pool if pool is not None else record.get("source")
        if source is None:
            raise StateError(f"the session in {path} was started from an in-memory pool: pass it again with "
                             "pool=... (or --pool FILE)")
        options = pool_options if pool_options is not None else record.get("options")
        try:
            pool_obj, _ = load_pool(source, options)
        except PbassessError as exc:
            raise StateError(f"the pool of the session in {path} cannot be loaded ({one_line(exc)}); "
                             "pass its current location with pool=... / --pool") from None
        check_loaded_state(state, pool_obj, path)
        session = cls(state, pool_obj, path)
        unknown = [e[0] for e in state["labels"] if e[0] not in session._index]
        unknown += [i for i in state["outstanding"] if i not in session._index]
        bad_labels = [e[1] for e in state["labels"] if e[1] not in session._class_index]
        if unknown or bad_labels:
            what = f"item id {unknown[0]!r} is not in the pool" if unknown else f"label {bad_labels[0]!r} is not a class"
            raise StateError(f"state file {path} is corrupt ({what})")
        return session

    resume = load

    def _model(self, target: str | None = None):
        cfg = self._state["config"]
        idx, lab = self._labeled_arrays()
        return build_target_model(
            target or cfg["target"], self._pool.predicted, self._pool.confidence, idx, lab,
            prior=cfg["prior"], pseudocount=cfg["pseudocount"], bins=cfg["bins"], cost_matrix=self._cost,
            probs=self._pool.probs, n_classes=self._pool.n_classes,
        )

    # ------------------------------------------------------------------ writing
    @contextlib.contextmanager
    def _mutation(self) -> Iterator[dict[str, Any]]:
        """Lock the folder, check nobody else wrote the state since we read it, yield a copy to edit."""
        with folder_lock(self._path.parent):
            on_disk = read_state(self._path)
            if on_disk["revision"] != self._state["revision"]:
                raise StateError(f"state file {self._path} was changed by another process (revision "
                                 f"{on_disk['revision']}, this session has {self._state['revision']}): load it again")
            yield copy.deepcopy(self._state)

    def _write(self, state: dict[str, Any]) -> None:
        """Write ``state`` durably; only then does it become this session's state (call under the lock)."""
        write_state(self._path, encode_state(state))
        self._state = state

    def _commit(self, state: dict[str, Any]) -> None:
        state["revision"] = int(state["revision"]) + 1
        state["updated"] = utc_now()
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
        if self._state["config"]["strategy"] == UNCERTAINTY:
            return self._next_uncertainty_batch(reissue=reissue)
        with self._mutation() as state:
            cfg = state["config"]
            if reissue:
                state["outstanding"] = []
            available = np.ones(self._pool.n_items, dtype=bool)
            idx, _ = self._labeled_arrays()
            available[idx] = False
            available[[self._index[i] for i in state["outstanding"]]] = False
            rng = rng_from_state(state["rng"])
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

    def _next_uncertainty_batch(self, *, reissue: bool):
        """Strategy ``uncertainty``: the next items of the design, each pi written with it (atomically)."""
        if reissue:  # the design's coins are tossed once: waiting items must be labeled, so show them again
            return self._batch_frame(self._state["outstanding"], self._state["batches_issued"])
        with self._mutation() as state:
            rng = rng_from_state(state["rng"])
            known = set(self._effective_labels()) | set(state["outstanding"])
            ids = issue_uncertainty_batch(state, self._pool.confidence, self._pool.item_ids, known, rng)
            state["rng"] = rng.bit_generator.state
            if ids:
                state["batches_issued"] += 1
                state["outstanding"] = state["outstanding"] + ids
            if ids or state["design"] != self._state["design"]:
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
        rows = label_rows(labels)
        if not rows:
            raise DataError("no labels given: the input has no rows")
        new_entries, seen, counts = new_label_entries(rows, self._effective_labels(), self._index,
                                                       self._pool.classes, relabel=relabel)
        if new_entries:
            with self._mutation() as state:
                now = utc_now()
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

    def withdraw_labels(self, item_ids: Any) -> int:
        """Remove every label of the given items (an undo); they become unlabeled and may be chosen again.

        Parameters
        ----------
        item_ids : iterable of str

        Returns
        -------
        int
            The number of items whose labels were removed.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> from pbassess import Predictions
        >>> pool = Predictions.from_top1(["a", "b"], [0.9, 0.8])
        >>> s = LabelingSession.start(pool, pathlib.Path(tempfile.mkdtemp()) / "s.json",
        ...                           target="least-accurate", seed=0)
        >>> _ = s.add_labels({"0": "a", "1": "a"})
        >>> s.withdraw_labels(["0"]), s.n_labeled
        (1, 1)
        """
        drop = {str(i) for i in item_ids}
        present = drop & set(self._effective_labels())
        if present:
            with self._mutation() as state:
                state["labels"] = [e for e in state["labels"] if e[0] not in present]
                self._commit(state)
        return len(present)

    def serve(self, *, host: str = "127.0.0.1", port: int = 0, token: str | None = None,
              store: str | os.PathLike | None = None, images: Any = None, block: bool = False, **options: Any):
        """Serve this session as a labeling web page (:mod:`pbassess.active.web`).

        Parameters
        ----------
        host : str
            Address to listen on (default loopback only; any other needs a token, generated when omitted).
        port : int
            Port (0: a free one).
        token : str, optional
            Access token checked on every request.
        store : path, optional
            The SQLite label store (default: beside the state file, ``<state>.sqlite``).
        images : array, optional
            One image per pool item, ``(n_items, h, w)``.
        block : bool
            Serve until interrupted (default: serve in a background thread and return at once).
        **options
            ``stop_at``, ``double_label``, ``image_column``, ``text_column`` (:func:`pbassess.active.web.serve_session`).

        Returns
        -------
        pbassess.active.web.LabelServer
            Its ``url``, ``stop()``, and an IFrame of the page in Jupyter.

        Examples
        --------
        >>> import tempfile, pathlib, urllib.request
        >>> s = LabelingSession.start("digits-logreg", pathlib.Path(tempfile.mkdtemp()) / "s.json",
        ...                           target="least-accurate", batch_size=1, seed=0)
        >>> server = s.serve()
        >>> urllib.request.urlopen(server.url + "healthz").read()
        b'ok'
        >>> server.stop()
        """
        from pbassess.active.web import serve_session

        return serve_session(self, host=host, port=port, token=token, store=store, images=images, block=block,
                             **options)

    # ------------------------------------------------------------------ posterior
    def posterior(self, n_draws: int = DEFAULT_N_DRAWS, seed: Any = None, *, ci_prob: float = CI_PROB) -> SessionPosterior:
        """The current posterior: classwise accuracy (and ECE or cost) draws, the answer and its probability.

        Parameters
        ----------
        n_draws : int
            Monte Carlo draws (exact conjugate draws).
        seed : int or Generator, optional
            Default: derived from the session's seed and number of labels, so the same state
            always gives the same summary.
        ci_prob : float
            Mass of the credible intervals (HDIs) of the summary.

        Returns
        -------
        SessionPosterior
        """
        from pbassess.stats.sampling import as_generator

        cfg = self._state["config"]
        if seed is None:
            seed = [int(cfg["seed"]), len(self._state["labels"]), 1]
        rng = np.random.default_rng(seed) if isinstance(seed, list) else as_generator(seed)
        progress = {"outstanding": len(self._state["outstanding"]), "batches_issued": self._state["batches_issued"]}
        result = session_posterior(self._model, self._pool, cfg, self._labeled_arrays(), progress,
                                   n_draws=int(n_draws), rng=rng, ci_prob=check_ci_prob(ci_prob))
        if cfg["target"] == "estimation":
            result.options["estimate"] = session_estimates(self._pool, self._state, self._effective_labels(),
                                                           result.ci_prob)
        return result

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
        pandas.DataFrame with columns ``item_id``, ``label``, ``predicted``, ``time`` (and
        ``probability``, the selection probability of each label, for strategy ``uncertainty``).
        """
        import pandas as pd

        rows: dict[str, list[str]] = {}
        for item, label, when in self._state["labels"]:
            rows[item] = [label, when]
        pred = [self._pool.classes[self._pool.predicted[self._index[i]]] for i in rows]
        frame = pd.DataFrame({"item_id": list(rows), "label": [v[0] for v in rows.values()], "predicted": pred,
                              "time": [v[1] for v in rows.values()]})
        design = self._state.get("design")
        if design is not None:  # strategy uncertainty: each label's selection probability (NaN: outside the design)
            frame["probability"] = [design["pi"].get(i, np.nan) for i in rows]
        return frame

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

    # ------------------------------------------------------------------ summaries and reports
    def status(self, n_draws: int = DEFAULT_N_DRAWS, *, ci_prob: float = CI_PROB) -> dict[str, Any]:
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
        return self.posterior(n_draws, ci_prob=ci_prob).to_json()

    def report(self, out_dir: str | os.PathLike, n_draws: int = DEFAULT_N_DRAWS, *,
               ci_prob: float = CI_PROB) -> dict[str, Path]:
        """Write the figures and ``status.json`` to ``out_dir``.

        Figures: ``accuracy.png`` (posterior accuracy per class with HDIs), ``answer.png``
        (P(being in the answer) per class, or the posterior sd for ``estimation``),
        ``labels.png`` (labels per class against the pool), and ``metric.png`` (ECE or cost
        per class) for the calibration and cost targets.

        Returns
        -------
        dict of name to path
        """
        return write_report(self.posterior(n_draws, ci_prob=ci_prob), out_dir)
