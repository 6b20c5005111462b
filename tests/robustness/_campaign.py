"""Issue 23's fault and memory campaign: cases run through the ``pbassess`` command line, each in its own process.

Each :class:`Case` names a command line (``{tmp}`` is the case's scratch folder), how standard output is
connected (a pipe, ``/dev/full`` or closed), an optional file-size limit (``ulimit -f``), and what must
happen: ``"error"`` (exit non-zero with exactly one line on stderr holding every ``wanted`` text) or
``"ok"`` (exit 0 and ``check(tmp, stdout)`` true). :func:`run_case` classifies the outcome as one of
:data:`KINDS`; ``after(tmp)`` checks what must hold of the files afterwards (nothing half written, nothing
foreign deleted), and a failed check makes the outcome a silent wrong answer.

Used by ``tests/robustness/test_faults_campaign.py`` (a fast part in ``make test``, the rest marked slow)
and by ``benchmarks/robustness.py`` (every case, with the counts by kind and command).
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

CLEAR, RIGHT, TRACEBACK, WRONG, HANG, UNCLEAR = (
    "clear error", "right answer", "traceback", "silent wrong answer", "hang", "unclear error")
#: Every outcome kind; the goal is none of the last four.
KINDS = (CLEAR, RIGHT, TRACEBACK, WRONG, HANG, UNCLEAR)


@dataclass
class Case:
    """One command line and what it must give (see the module docstring)."""

    name: str
    argv: list[str]
    expect: str = "error"
    wanted: tuple[str, ...] = ()
    stdout: str = "pipe"
    fsize: int | None = None
    vmem: int | None = None  # ulimit -v (RLIMIT_AS), bytes
    env: dict[str, str] = field(default_factory=dict)
    setup: Callable[[Path], None] | None = None
    check: Callable[[Path, str], bool] | None = None
    after: Callable[[Path], bool] | None = None
    timeout: float = 300.0
    fast: bool = False
    notes: bool = False  # lines on stderr before the error are allowed (the command's own progress notes)

    @property
    def command(self) -> str:
        return self.argv[0] if self.argv[0] != "session" else "session"


def _limits(case: Case) -> Callable[[], None]:
    def apply() -> None:
        os.setsid()  # its own process group: a hang is killed whole
        if case.fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (case.fsize, case.fsize))
        if case.vmem is not None:
            resource.setrlimit(resource.RLIMIT_AS, (case.vmem, case.vmem))
        if case.stdout == "closed":
            os.close(1)

    return apply


def run_case(case: Case, tmp: Path) -> tuple[str, str]:
    """Run ``case`` in ``tmp`` and return ``(kind, detail)``."""
    tmp.mkdir(parents=True, exist_ok=True)
    if case.setup is not None:
        case.setup(tmp)
    argv = [a.replace("{tmp}", str(tmp)) for a in case.argv]
    env = {**os.environ, **case.env}
    stdout = {"pipe": subprocess.PIPE, "full": open("/dev/full", "w"), "closed": None}[case.stdout]  # noqa: SIM115
    proc = subprocess.Popen([sys.executable, "-m", "pbassess.cli", *argv], cwd=tmp, env=env, stdout=stdout,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_limits(case))
    try:
        out, err = proc.communicate(timeout=case.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return HANG, f"no answer within {case.timeout:g} s"
    finally:
        if case.stdout == "full":
            stdout.close()
    out = out or ""
    code = proc.returncode
    lines = [line for line in err.strip().splitlines() if line.strip()]
    if code < 0 or "Traceback (most recent call last)" in err:
        return TRACEBACK, f"exit {code}: {err.strip()[-300:]}"
    if case.after is not None and not case.after(tmp):
        return WRONG, f"exit {code}; the files afterwards are wrong: {err.strip()[-200:]}"
    if case.expect == "error":
        if code == 0:
            return WRONG, f"exit 0 where an error was due: {out.strip()[:200]}"
        errors = [line for line in lines if ": error:" in line]
        if (len(lines) == 1 or (case.notes and len(errors) == 1 and lines[-1] == errors[0])) and all(
                w in lines[-1] for w in case.wanted):
            return CLEAR, lines[-1]
        return UNCLEAR, f"exit {code}: {' | '.join(lines)[:300]}"
    if code != 0:
        return UNCLEAR, f"exit {code} where an answer was due: {' | '.join(lines)[:300]}"
    if case.check is not None and not case.check(tmp, out):
        return WRONG, f"the answer is wrong: {out.strip()[:200]}"
    return RIGHT, ""


# ----------------------------------------------------------------------------- the command lines
EXPLORE = ["surface-explore", "adult-sex", "--attributes", "race,sex", "--estimator", "beta-i", "--budget", "60",
           "--seed", "1"]
GRID_TOML = textwrap.dedent("""\
    [grid]
    kind = "estimation"

    [[experiment]]
    datasets = ["digits-logreg"]
    labels = [60]
    seeds = [0]
    methods = ["classical"]
    runs = 2
    """)


def _grid_file(tmp: Path) -> None:
    (tmp / "grid.toml").write_text(GRID_TOML)


#: One ordinary command line per command (what each prints goes to standard output).
COMMANDS: dict[str, tuple[list[str], Callable[[Path], None] | None]] = {
    "assess": (["assess", "digits-logreg", "--seed", "1", "--json"], None),
    "estimate": (["estimate", "digits-logreg", "--labels", "100", "--seed", "1", "--json"], None),
    "surface": (["surface", "adult-sex", "--attributes", "race,sex", "--estimator", "beta-i", "--seed", "1",
                 "--json"], None),
    "surface-explore": ([*EXPLORE, "--json"], None),
    "shift": (["shift", "digits-shift", "--by", "environment", "--seed", "1", "--json"], None),
    "recalibrate": (["recalibrate", "digits-logreg", "--method", "temperature", "--seed", "1", "--json"], None),
    "grid": (["grid", "grid.toml", "--out", "g", "--json"], _grid_file),
    "session": (["session", "start", "digits-logreg", "--state", "s.json", "--target", "least-accurate",
                 "--seed", "1"], None),
    "simulate": (["simulate", "digits-logreg", "--strategy", "ts", "--runs", "2", "--seed", "1", "--json",
                  "--quiet"], None),
    "compare": (["compare", "digits-shift", "--by", "environment", "--seed", "1", "--json"], None),
    "priors": (["priors", "digits-logreg", "--prior", "uniform", "--prior", "informed", "--seed", "1", "--json"],
               None),
    "data": (["data", "show", "digits-shift", "--json"], None),
}
#: The commands with ``--out DIR`` and a command line using it.
OUT_COMMANDS = {
    "assess": ["assess", "digits-logreg", "--seed", "1"],
    "estimate": ["estimate", "digits-logreg", "--labels", "100", "--seed", "1"],
    "shift": ["shift", "digits-shift", "--by", "environment", "--seed", "1"],
    "recalibrate": ["recalibrate", "digits-logreg", "--method", "temperature", "--seed", "1"],
    "simulate": ["simulate", "digits-logreg", "--strategy", "ts", "--runs", "2", "--seed", "1", "--quiet"],
    "compare": ["compare", "digits-shift", "--by", "environment", "--seed", "1"],
    "surface": ["surface", "adult-sex", "--attributes", "race,sex", "--estimator", "beta-i", "--seed", "1"],
}


def _json_answer(tmp: Path, out: str) -> bool:
    try:
        return isinstance(json.loads(out), (dict, list))
    except ValueError:
        return False


def _no_out(tmp: Path) -> bool:
    """Refused before anything was written: no output folder."""
    return not (tmp / "out").exists() and not (tmp / "g").exists() and not (tmp / "s.json").exists()


def _no_temporaries(tmp: Path) -> bool:
    """A failed write leaves no half-written file behind (only hidden temporaries could be, and none are)."""
    return not [p for p in tmp.rglob(".*.tmp*")]


def _a_file(tmp: Path) -> None:
    (tmp / "afile").write_text("not a folder")


def _afile_intact(tmp: Path) -> bool:
    return (tmp / "afile").read_text() == "not a folder"


def _foreign_store(tmp: Path) -> None:
    _grid_file(tmp)
    (tmp / "g" / "grid.zarr").mkdir(parents=True)
    (tmp / "g" / "grid.zarr" / "precious.txt").write_text("mine")


def _foreign_kept(tmp: Path) -> bool:
    return (tmp / "g" / "grid.zarr" / "precious.txt").read_text() == "mine"


def _stale_temporaries(tmp: Path) -> None:
    _grid_file(tmp)
    for folder in (tmp / "g" / ".grid.zarr.k1ll3d.tmp" / "grid.zarr", tmp / "g" / "cells" / ".cell.x1.tmp"):
        folder.mkdir(parents=True)
        (folder / "zarr.json").write_text("{}")
    (tmp / "g" / "cells" / "notes.txt").write_text("keep")


def _stale_cleaned(tmp: Path) -> bool:
    g = tmp / "g"
    return (not list(g.glob(".grid.zarr.*.tmp")) and not list((g / "cells").glob(".*.tmp"))
            and (g / "cells" / "notes.txt").read_text() == "keep" and (g / "grid.zarr" / "zarr.json").exists())


def _no_state(tmp: Path) -> bool:
    return not (tmp / "s.json").exists() and not list(tmp.glob(".s.json.*"))


def _memory_grid(tmp: Path) -> None:
    (tmp / "big.toml").write_text('[grid]\nkind = "surface"\n\n[[experiment]]\n'
                                  'datasets = "synthetic-surface:100000000:12:0"\nattributes = ["a0", "a1"]\n'
                                  'estimators = ["beta-i"]\nbudgets = 100\n')


def cases() -> list[Case]:
    """Every fault and memory case of issue 23 (the ``fast`` ones run in ``make test``)."""
    out: list[Case] = []
    fast_commands = {"data"}
    for command, (argv, setup) in COMMANDS.items():
        out.append(Case(f"{command}: standard output closed", argv, wanted=("standard output is closed",),
                        stdout="closed", setup=setup, after=_no_out, fast=command in fast_commands))
        # session start says on stderr that it started (the state is written) before printing the batch
        out.append(Case(f"{command}: standard output on a full disk (/dev/full)", argv,
                        wanted=("could not write", "No space left on device"), stdout="full", setup=setup,
                        fast=command in fast_commands, notes=command == "session"))
    for command, argv in OUT_COMMANDS.items():
        fast = False
        out += [
            Case(f"{command}: --out an existing file", [*argv, "--out", "afile"],
                 wanted=("--out", "afile", "is a file, not a folder"), setup=_a_file, after=_afile_intact, fast=fast),
            Case(f"{command}: --out under a file", [*argv, "--out", "afile/sub"],
                 wanted=("--out", "afile/sub", "Not a directory"), setup=_a_file, after=_afile_intact),
            Case(f"{command}: --out in an unwritable place", [*argv, "--out", "/proc/pbassess-out"],
                 wanted=("--out", "/proc/pbassess-out", "could not create the folder")),
            Case(f"{command}: --out past the file-size limit (ulimit -f 512 bytes)", [*argv, "--out", "out"],
                 wanted=("File too large", "ulimit -f"), fsize=512, after=_no_temporaries, fast=fast),
        ]
    # the case: the netCDF file passes the limit mid-write (was a traceback, then a segmentation fault)
    out += [Case(f"{command}: --out past the file-size limit mid-file (ulimit -f 16 KiB)",
                 [*OUT_COMMANDS[command], "--out", "out"], wanted=("File too large", "ulimit -f"), fsize=16384,
                 after=_no_temporaries, fast=command == "assess") for command in ("assess", "surface")]
    memory = [
        ("shift", ["shift", "digits-shift", "--draws", "100000000", "--seed", "1"], "--draws"),
        ("recalibrate", ["recalibrate", "digits-logreg", "--method", "platt", "--draws", "100000000"], "--draws"),
        ("recalibrate", ["recalibrate", "digits-logreg", "--method", "platt", "--bins", "100000000"], "--bins"),
        ("estimate", ["estimate", "digits-logreg", "--labels", "100", "--bins", "100000000"], "--bins"),
        ("estimate", ["estimate", "acs-employment", "--labels", "5000", "--by", "AGEP", "--seed", "1"], "--by"),
        ("surface", ["surface", "acs-employment", "--attributes", "AGEP,SCHL,MAR,SEX,RAC1P", "--estimator",
                     "berngp", "--seed", "1"], "--attributes"),
        ("simulate", ["simulate", "digits-logreg", "--strategy", "ts", "--prior", "adaptive", "--runs", "2000000",
                      "--seed", "1", "--quiet"], "--runs"),
        ("grid", ["grid", "big.toml", "--out", "g"], "synthetic-surface:N:K:SEED"),
    ]
    # the setting: a 3 GiB address space (ulimit -v), where these ended in MemoryError
    out += [Case(f"{argv[0]}: memory checked under ulimit -v 3 GiB ({option})", argv, wanted=("needs about", option),
                 vmem=3 * 2**30, after=_no_out) for _, argv, option in memory[:4]]
    for command, argv, option in memory:
        # the estimate by AGEP (94 groups) fits in 2 GiB: a 64 MiB budget makes its check fire
        env = {"PBASSESS_MEMORY_LIMIT": "64MiB"} if "AGEP" in argv else {}
        out.append(Case(f"{command}: memory checked before allocating ({option})", argv,
                        wanted=("needs about", "limit", option), env=env,
                        setup=_memory_grid if command == "grid" else None, after=_no_out,
                        fast=command in ("shift", "grid")))
    out += [
        Case("grid: a grid.zarr pbassess did not write is refused", ["grid", "grid.toml", "--out", "g"],
             wanted=("was not written by pbassess grid", "nothing was deleted"), setup=_foreign_store,
             after=_foreign_kept, fast=True),
        Case("grid: stale temporary folders of killed runs are cleaned", ["grid", "grid.toml", "--out", "g", "--json"],
             expect="ok", setup=_stale_temporaries, check=_json_answer, after=_stale_cleaned),
        Case("session: start under a full disk (ulimit -f 0) records nothing", COMMANDS["session"][0],
             wanted=("could not write the session state", "nothing was recorded"), fsize=0, after=_no_state,
             fast=True),
    ]
    # the same command lines with standard output in order: the answer (one JSON object, or the session's batch)
    for command, (argv, setup) in COMMANDS.items():
        out.append(Case(f"{command}: the answer reaches a pipe", argv, expect="ok", setup=setup,
                        check=_batch if command == "session" else _json_answer, fast=command == "data"))
    out += [
        Case("assess: --plot in an unwritable place", ["assess", "digits-logreg", "--seed", "1", "--plot",
                                                       "/proc/pbassess.png"], wanted=("/proc/pbassess.png",)),
        Case("assess: --plot under a file", ["assess", "digits-logreg", "--seed", "1", "--plot", "afile/x.png"],
             wanted=("afile/x.png", "Not a directory"), setup=_a_file, after=_afile_intact),
        Case("assess: --plot past the file-size limit", ["assess", "digits-logreg", "--seed", "1", "--plot", "p.png"],
             wanted=("File too large", "ulimit -f"), fsize=2048, after=_no_temporaries),
        Case("compare: --save past the file-size limit", [*OUT_COMMANDS["compare"], "--save", "c.nc"],
             wanted=("File too large", "ulimit -f"), fsize=2048, after=_no_temporaries),
        Case("demo: --out an existing file", ["demo", "--out", "afile"], wanted=("afile",), setup=_a_file,
             after=_afile_intact),
        Case("session: report --out past the file-size limit", ["session", "report", "--state", "s.json", "--out",
                                                                "rep"], wanted=("File too large",), fsize=2048,
             setup=_started_session),
    ]
    return out


def _batch(tmp: Path, out: str) -> bool:
    """The first batch of a new session: a CSV of item ids, and the state file beside it."""
    return out.startswith("item_id") and len(out.strip().splitlines()) > 1 and (tmp / "s.json").exists()


def _started_session(tmp: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "pbassess.cli", *COMMANDS["session"][0]], cwd=tmp,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
