"""A labeling session for a person: batch by batch, resumable, and never losing a label.

One module per idea, with public names between them:

- :mod:`~pbassess.active.session.session`: :class:`LabelingSession` (batches, labels, posterior, views);
- :mod:`~pbassess.active.session.state`: the state file (read, check, encode, atomic write, folder lock, fingerprint);
- :mod:`~pbassess.active.session.settings`: the settings, the cost matrix and loading the pool;
- :mod:`~pbassess.active.session.labels`: label rows from the user's input, checked into new entries;
- :mod:`~pbassess.active.session.estimation`: target ``estimation`` with strategy ``uncertainty``;
- :mod:`~pbassess.active.session.result`: :class:`SessionPosterior`, the posterior at one moment;
- :mod:`~pbassess.active.session.report`: the report's figures and ``status.json``.

Examples
--------
>>> import tempfile, pathlib
>>> from pbassess import Predictions
>>> from pbassess.active.session import LabelingSession
>>> pool = Predictions.from_top1(["a", "b"] * 5, [0.9] * 10)
>>> s = LabelingSession.start(pool, pathlib.Path(tempfile.mkdtemp()) / "s.json", target="least-accurate", seed=0)
>>> len(s.next_batch())
10
"""

from pbassess.active.session.result import SessionPosterior
from pbassess.active.session.session import LabelingSession
from pbassess.active.session.state import (  # noqa: F401  (the constants and write_state: as session.py had them)
    DEFAULT_BATCH_SIZE,
    STATE_FORMAT,
    STATE_VERSION,
    atomic_write_bytes,
    pool_fingerprint,
    write_state,
)

__all__ = ["LabelingSession", "SessionPosterior", "atomic_write_bytes", "pool_fingerprint"]
