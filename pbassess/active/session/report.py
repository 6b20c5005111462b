"""The report of a labeling session on disk: its figures and ``status.json``, written from one posterior."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pbassess._json import to_jsonable
from pbassess.active.session.result import SessionPosterior
from pbassess.active.session.state import atomic_write_bytes, os_reason
from pbassess.errors import PbassessError

__all__ = ["write_report"]


def write_report(result: SessionPosterior, out_dir: str | os.PathLike) -> dict[str, Path]:
    """Write the figures and ``status.json`` of a session's posterior to ``out_dir``.

    Figures: ``accuracy.png`` (posterior accuracy per class with HDIs), ``answer.png``
    (P(being in the answer) per class, or the posterior sd for ``estimation``),
    ``labels.png`` (labels per class against the pool), and ``metric.png`` (ECE or cost
    per class) for the calibration and cost targets. ``status.json`` is written atomically;
    a failed write raises one :class:`~pbassess.errors.PbassessError` line.

    Parameters
    ----------
    result : SessionPosterior
        The posterior to report (:meth:`LabelingSession.posterior`).
    out_dir : path
        The folder to write to (created if needed).

    Returns
    -------
    dict of name to path

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from pbassess import Predictions
    >>> from pbassess.active import LabelingSession
    >>> pool = Predictions.from_top1(["a", "b"] * 5, [0.9] * 10)
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> s = LabelingSession.start(pool, folder / "s.json", target="least-accurate", seed=0)
    >>> sorted(write_report(s.posterior(200), folder / "report"))
    ['accuracy', 'answer', 'labels', 'status']
    """
    import matplotlib.pyplot as plt

    from pbassess._atomic import atomic_path

    out = Path(out_dir)
    kinds = ["accuracy", "answer", "labels"] + (["metric"] if result.options["metric"] != "accuracy" else [])
    written: dict[str, Path] = {}
    try:
        out.mkdir(parents=True, exist_ok=True)
        for kind in kinds:
            fig = result.plot(kind=kind)
            try:
                with atomic_path(out / f"{kind}.png") as tmp:
                    fig.savefig(tmp, dpi=110, bbox_inches="tight", format="png")
            finally:
                plt.close(fig)
            written[kind] = out / f"{kind}.png"
        status = (json.dumps(to_jsonable(result.to_json()), indent=1) + "\n").encode()
        written["status"] = atomic_write_bytes(out / "status.json", status)
    except OSError as exc:
        raise PbassessError(f"could not write the report to {out}: {os_reason(exc)}; the session state is "
                            "unchanged") from None
    return written
