"""Issue 23, writes: atomic output files, one line for a refused write, memory budget under ``ulimit -v``."""

from __future__ import annotations

import errno
import io
import os
import subprocess
import sys

import pytest

from pbassess import _atomic
from pbassess._atomic import atomic_path, atomic_write_bytes, os_failure
from pbassess.cli import main


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "result.json"
    target.write_text("old")

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_atomic.os, "fsync", full)
    with pytest.raises(OSError, match="No space left"):
        atomic_write_bytes(target, b"new")
    with pytest.raises(OSError, match="No space left"), atomic_path(tmp_path / "figure.png") as tmp:
        tmp.write_bytes(b"half")
    monkeypatch.undo()
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.json"]


def test_a_refused_write_is_one_line_naming_the_cause():
    assert os_failure(OSError(errno.EFBIG, "File too large", "out/a.nc")) == (
        "out/a.nc: File too large (errno 27): the file is larger than the file-size limit (ulimit -f)")
    assert "read-only" in os_failure(OSError(errno.EROFS, "Read-only file system"))


class _FullStdout(io.StringIO):
    def write(self, text):
        raise OSError(errno.ENOSPC, "No space left on device")


def test_a_full_standard_output_is_one_line(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdout", _FullStdout())
    code = main(["data", "list"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "pbassess data: error: could not write the result to standard output: No space left" in err


def test_a_file_error_and_running_out_of_memory_are_one_line(capsys, monkeypatch):
    def refused(args):
        raise PermissionError(errno.EACCES, "Permission denied", "/srv/out.nc")

    def exhausted(args):
        raise MemoryError

    for func, wanted in ((refused, "/srv/out.nc: Permission denied (errno 13)"), (exhausted, "ran out of memory")):
        monkeypatch.setattr("pbassess.cli.build_parser", _parser_with(func))
        code = main(["data", "list"])
        err = capsys.readouterr().err
        assert code == 2 and len(err.strip().splitlines()) == 1 and wanted in err, err


def _parser_with(func):
    from pbassess.cli import build_parser as real

    def build(modules=None):
        parser = real(modules)
        for action in parser._actions:
            if hasattr(action, "choices") and isinstance(action.choices, dict) and "data" in action.choices:
                data = action.choices["data"]
                for sub in data._actions:
                    if hasattr(sub, "choices") and isinstance(sub.choices, dict) and "list" in sub.choices:
                        sub.choices["list"].set_defaults(func=func)
        return parser

    return build


def test_the_memory_budget_shrinks_under_ulimit_v():
    code = ("import resource, os; from pbassess.inference.memory import memory_limit, DEFAULT_MEMORY_LIMIT;"
            "size = int(open('/proc/self/statm').read().split()[0]) * os.sysconf('SC_PAGE_SIZE');"
            "resource.setrlimit(resource.RLIMIT_AS, (size + 300 * 2**20, resource.RLIM_INFINITY));"
            "print(memory_limit(), DEFAULT_MEMORY_LIMIT)")
    env = {k: v for k, v in os.environ.items() if k != "PBASSESS_MEMORY_LIMIT"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    limit, default = map(int, done.stdout.split())
    assert 0 < limit <= 300 * 2**20 < default, done.stderr
