"""Read-only views of a labeling session (labels so far, waiting items, display): a mixin of
:class:`pbassess.active.session.LabelingSession`, which holds ``_state``, ``_pool``, ``_path``,
``_index`` and ``_class_index``."""

from __future__ import annotations

import copy
import html
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from pbassess._json import to_jsonable
from pbassess.active.state import _os_reason, atomic_write_bytes
from pbassess.constants import CI_PROB, DEFAULT_DRAWS
from pbassess.data.predictions import Predictions
from pbassess.errors import PbassessError

__all__ = ["SessionViews"]


class SessionViews:
    """Read-only properties and tables of a session (see :class:`~pbassess.active.session.LabelingSession`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from pbassess import Predictions
    >>> from pbassess.active import LabelingSession
    >>> pool = Predictions.from_top1(["a", "b"] * 10, [0.9] * 20)
    >>> s = LabelingSession.start(pool, pathlib.Path(tempfile.mkdtemp()) / "s.json", target="least-accurate",
    ...                           batch_size=4, seed=0)
    >>> _ = s.add_labels({i: "a" for i in s.next_batch()["item_id"]})
    >>> isinstance(s, SessionViews), s.n_labeled, s.config["target"], list(s.labels().columns)[:3]
    (True, 4, 'least-accurate', ['item_id', 'label', 'predicted'])
    """

    _state: dict[str, Any]
    _pool: Predictions
    _path: Path
    _index: dict[str, int]
    _class_index: dict[str, int]

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
    def status(self, n_draws: int = DEFAULT_DRAWS, *, ci_prob: float = CI_PROB) -> dict[str, Any]:
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

    def report(self, out_dir: str | os.PathLike, n_draws: int = DEFAULT_DRAWS, *,
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
        import matplotlib.pyplot as plt

        out = Path(out_dir)
        result = self.posterior(n_draws, ci_prob=ci_prob)
        kinds = ["accuracy", "answer", "labels"] + (["metric"] if result.options["metric"] != "accuracy" else [])
        written: dict[str, Path] = {}
        try:
            out.mkdir(parents=True, exist_ok=True)
            for kind in kinds:
                fig = result.plot(kind=kind)
                try:
                    fig.savefig(out / f"{kind}.png", dpi=110, bbox_inches="tight")
                finally:
                    plt.close(fig)
                written[kind] = out / f"{kind}.png"
            status = (json.dumps(to_jsonable(result.to_json()), indent=1) + "\n").encode()
            written["status"] = atomic_write_bytes(out / "status.json", status)
        except OSError as exc:
            raise PbassessError(f"could not write the report to {out}: {_os_reason(exc)}; the session state is "
                                "unchanged") from None
        return written
