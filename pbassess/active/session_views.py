"""Read-only views of a labeling session (labels so far, waiting items, display): a mixin of
:class:`pbassess.active.session.LabelingSession`, which holds ``_state``, ``_pool``, ``_path``,
``_index`` and ``_class_index``."""

from __future__ import annotations

import copy
import html
from pathlib import Path
from typing import Any

import numpy as np

from pbassess.data.predictions import Predictions

__all__ = ["SessionViews"]


class SessionViews:
    """Read-only properties and tables of a session (see :class:`~pbassess.active.session.LabelingSession`)."""

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
