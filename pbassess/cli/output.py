"""The finishing half of the option groups: a failed fit in words, the files of ``--out``/``--plot``, printing.

Used through :mod:`pbassess.cli.options` (which re-exports :func:`finish`, :func:`save_outputs`,
:func:`diagnostics_message` and :func:`finish_diagnostics`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from pbassess._atomic import atomic_path, atomic_write_bytes, os_failure
from pbassess.errors import ConfigError, PbassessError

__all__ = ["STRICT_EXIT", "diagnostics_message", "emit_json", "finish", "finish_diagnostics", "prepare_out_dir",
           "save_outputs"]


def emit_json(obj: Any) -> None:
    """Print exactly one JSON object on stdout (NaN becomes null).

    Examples
    --------
    >>> emit_json({"mean": float("nan"), "seed": 1})
    {"mean": null, "seed": 1}
    """
    from pbassess._json import to_jsonable

    print(json.dumps(to_jsonable(obj), allow_nan=False))

#: Exit status of a command whose fit failed its diagnostics under ``--strict``.
STRICT_EXIT: int = 3


# ------------------------------------------------------------------------------ diagnostics
def _failure_parts(diag: dict[str, Any]) -> list[str]:
    parts = []
    rhat, threshold = diag.get("max_rhat"), diag.get("rhat_threshold", 1.01)
    if rhat is not None and rhat > threshold:
        parts.append(f"the chains disagree (R-hat {rhat:.3f}, should be at most {threshold:g})")
    ess = [v for v in (diag.get("min_ess_bulk"), diag.get("min_ess_tail")) if v is not None]
    need = diag.get("min_ess", 100)
    if ess and min(ess) < need:
        parts.append(f"too few independent draws (effective sample size {min(ess):.0f}, needs at least {need:.0f})")
    if diag.get("divergences"):
        parts.append(f"{int(diag['divergences'])} divergent transitions (the sampler could not explore part of "
                     "the posterior)")
    return parts or list(diag.get("problems") or []) or ["see the diagnostics"]


_ADVICE = ("Try more --tune and --draws (e.g. --tune 2000 --draws 2000) and --target-accept 0.99, or a simpler "
           "model.")


def diagnostics_message(diag: dict[str, Any] | None) -> str:
    """A plain-words sentence on a failed fit: which quantity, what it means, what to try ('' when fine).

    Examples
    --------
    >>> diagnostics_message({"ok": True})
    ''
    >>> print(diagnostics_message({"ok": False, "max_rhat": 1.026, "rhat_threshold": 1.01, "min_ess_bulk": 96,
    ...                            "min_ess": 100, "divergences": 3}))  # doctest: +NORMALIZE_WHITESPACE
    The NUTS fit failed its diagnostics, so do not trust these numbers yet: the chains disagree (R-hat 1.026,
    should be at most 1.01); too few independent draws (effective sample size 96, needs at least 100); 3
    divergent transitions (the sampler could not explore part of the posterior). Try more --tune and --draws
    (e.g. --tune 2000 --draws 2000) and --target-accept 0.99, or a simpler model.
    """
    if not diag or diag.get("ok", True):
        return ""
    return ("The NUTS fit failed its diagnostics, so do not trust these numbers yet: "
            + "; ".join(_failure_parts(diag)) + ". " + _ADVICE)


def _with_diagnostics(sentence: str, diag: dict[str, Any]) -> str:
    """The headline sentence saying, in words, why the fit failed (once, even when the result's own note says it)."""
    message = diagnostics_message(diag)
    if not message or not sentence:
        return sentence or message
    text = sentence.rstrip()
    text += "" if text.endswith((".", "!", "?")) else "."
    if "failed its diagnostics" in text:  # the result's own short note is there: add what it means and what to try
        detail = "; ".join(_failure_parts(diag))
        return f"{text} In words: {detail}. {_ADVICE}"
    return f"{text} {message}"


def finish_diagnostics(result: Any, args: argparse.Namespace, command: str) -> int:
    """Warn on stderr when a fit failed its diagnostics; the exit status (``STRICT_EXIT`` under --strict)."""
    diag = getattr(result, "diagnostics", None) or {}
    if diag.get("ok", True):
        if diag.get("rhat_note") and not getattr(args, "json", False):
            print(f"pbassess {command}: note: {diag['rhat_note']}", file=sys.stderr)
        return 0
    message = diagnostics_message(diag)
    print(f"pbassess {command}: warning: {message[0].lower()}{message[1:]}", file=sys.stderr)
    return STRICT_EXIT if getattr(args, "strict", False) else 0


# ------------------------------------------------------------------------------ saving and finishing
def _write_report(out: Path, title: str, sentence: str, table: Any, seed: Any, files: list[Path]) -> Path:
    from pbassess.report import markdown_table

    lines = [f"# {title}", "", sentence, ""]
    if seed is not None:
        lines += [f"Seed {seed}.", ""]
    if table is not None:
        try:
            lines += [markdown_table(table), ""]
        except Exception:  # noqa: BLE001 - a report without the table is still a report
            lines += ["```", table.to_string(), "```", ""]
    lines += [f"![{f.stem}]({f.name})" for f in files if f.suffix == ".png"]
    return atomic_write_bytes(out / "report.md", "\n".join(lines) + "\n")


def prepare_out_dir(path: str | os.PathLike, option: str = "--out") -> Path:
    """The folder ``path`` of ``option``, created when missing, or one line saying why it cannot be written to.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> prepare_out_dir(folder / "new").is_dir()
    True
    >>> _ = (folder / "file").write_text("x")
    >>> prepare_out_dir(folder / "file")
    Traceback (most recent call last):
    ...
    pbassess.errors.ConfigError: --out .../file is a file, not a folder: give a new or an existing folder
    """
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{option} {out} is a file, not a folder: give a new or an existing folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PbassessError(f"{option} {out}: could not create the folder: {os_failure(exc)}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise PbassessError(f"{option} {out}: the folder is not writable: choose a folder you may write to")
    return out


def save_outputs(result: Any, args: argparse.Namespace, name: str, *, payload: Any = None,
                 sentence: str | None = None, table: Any = None) -> dict[str, Any]:
    """Write ``--out DIR`` (``<name>.nc`` via the result's ``save``, its figure, ``report.md``) and ``--plot FILE``.

    A result without ``save`` is written as netCDF when it is an xarray Dataset, else as JSON.
    Returns the written paths (``netcdf``, ``figures``, ``report``).
    """
    written: dict[str, Any] = {"figures": []}
    out_dir, plot = getattr(args, "out", None), getattr(args, "plot", None)
    if not out_dir and not plot:
        return written
    failed: PbassessError | None = None
    try:
        if out_dir:
            out = prepare_out_dir(out_dir)
            if hasattr(result, "save"):
                try:
                    written["netcdf"] = Path(result.save(out / f"{name}.nc") or out / f"{name}.nc")
                except OSError:
                    raise
                except Exception as exc:  # noqa: BLE001 - one line for the user (after the other files), no traceback
                    failed = PbassessError(f"could not save the {type(result).__name__} to {out / f'{name}.nc'}: "
                                           f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
            elif hasattr(result, "to_netcdf"):
                view = result.to_netcdf(engine="h5netcdf")  # a memoryview of an in-memory file
                try:
                    data = view.tobytes()
                finally:
                    view.release()
                written["netcdf"] = atomic_write_bytes(out / f"{name}.nc", data)
            if payload is not None:
                from pbassess._json import to_jsonable

                written["json"] = atomic_write_bytes(out / f"{name}.json",
                                                     json.dumps(to_jsonable(payload), allow_nan=False) + "\n")
            try:
                figure = _figure(result)
            except NotImplementedError:  # a result without a figure
                figure = None
            except Exception as exc:  # noqa: BLE001 - e.g. a heatmap of a one-attribute surface: files without it
                print(f"pbassess {name}: note: no figure written ({' '.join(str(exc).split())[:200]})", file=sys.stderr)
                figure = None
            if figure is not None:
                written["figures"].append(_savefig(figure, out / f"{name}.png"))
            text = sentence if sentence is not None else (result.sentence() if hasattr(result, "sentence") else "")
            if table is None and hasattr(result, "summary"):
                with contextlib.suppress(Exception):
                    table = result.summary()
            written["report"] = _write_report(out, f"pbassess {name}", text, table, getattr(args, "seed", None),
                                              written["figures"])
        if plot:
            try:
                figure = _figure(result)
            except NotImplementedError:
                figure = None
            if figure is None:
                raise ConfigError(f"--plot: this command's result has no figure ({type(result).__name__})")
            written["figures"].append(_savefig(figure, Path(plot)))
    except OSError as exc:
        raise PbassessError(f"could not write {out_dir or plot}: {os_failure(exc)}") from None
    if failed is not None:
        raise failed
    return written


def _figure(result: Any):
    import xarray as xr

    if isinstance(result, (xr.Dataset, xr.DataArray)) or not callable(getattr(result, "plot", None)):
        return None
    import matplotlib

    matplotlib.use("Agg")
    from pbassess.report import as_figure

    return as_figure(result.plot())


def _savefig(figure: Any, path: Path) -> Path:
    import matplotlib.pyplot as plt

    try:
        with atomic_path(path) as tmp:
            figure.savefig(tmp, dpi=120, bbox_inches="tight", format=path.suffix.lstrip(".") or "png")
    finally:
        plt.close(figure)
    return path


def finish(result: Any, args: argparse.Namespace, command: str, *, name: str | None = None,
           payload: Any = None, text: Any = None, save: bool = True) -> int:
    """Save (``--out``/``--plot``), print (one JSON object, or the sentence and ``text``) and return the status.

    The JSON object is ``payload`` (default ``result.to_json()``) with the ``seed`` and, when the fit
    failed its diagnostics, ``diagnostics_message``; its ``sentence`` then says why. ``text`` is a
    callable printing the human-readable table after the sentence.
    """
    diag = getattr(result, "diagnostics", None) or {}
    message = diagnostics_message(diag)
    wants_json = bool(getattr(args, "json", False))
    if payload is None and wants_json:
        # only a JSON answer pays for the JSON's extras (e.g. the calibration decision's operating
        # characteristics, a simulation of seconds); the sentence comes from the result itself
        payload = result.to_json() if hasattr(result, "to_json") else {}
    sentence = payload.get("sentence") if isinstance(payload, dict) else None
    if sentence is None and hasattr(result, "sentence"):
        sentence = result.sentence()
    if message:
        sentence = _with_diagnostics(sentence or "", diag)
    if isinstance(payload, dict):
        if "seed" not in payload and getattr(args, "seed", None) is not None:
            payload["seed"] = args.seed
        if message:
            payload["sentence"] = sentence
            payload["diagnostics_message"] = message
    save_error = None
    if save:
        try:
            save_outputs(result, args, name or command, sentence=sentence)
        except PbassessError as exc:  # still print the result; the exit status says the files are missing
            save_error = exc
    if wants_json:
        emit_json(payload)
    else:
        if sentence:
            print(sentence)
        if callable(text):
            text()
        if getattr(args, "seed", None) is not None:
            print(f"seed {args.seed}" + (f"; written to {args.out}" if getattr(args, "out", None) else ""))
        elif getattr(args, "out", None):
            print(f"written to {args.out}")
    status = finish_diagnostics(result, args, command)
    if save_error is not None:
        print(f"pbassess {command}: error: {' '.join(str(save_error).split())}", file=sys.stderr)
        return 2
    return status
