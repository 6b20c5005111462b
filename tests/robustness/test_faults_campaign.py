"""Issue 23, faults and memory: write failures, closed or full standard output, --out in the wrong place,
memory checked before allocating, grid folders, a session on a full disk.

Every case runs ``pbassess`` in its own process (see ``tests/robustness/_campaign.py``) and must end in a
clear one-line error or the right answer: never a traceback, a crash, a silent wrong answer or a hang. The
fast cases run in ``make test``; the others are marked slow; ``benchmarks/robustness.py`` runs them all
and prints the counts.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from _campaign import CLEAR, RIGHT, cases, run_case  # noqa: E402

CASES = cases()


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name, marks=() if c.fast else pytest.mark.slow)
                                  for c in CASES])
def test_fault_case(case, tmp_path):
    kind, detail = run_case(case, tmp_path)
    assert kind == (CLEAR if case.expect == "error" else RIGHT), f"{case.name}: {kind}: {detail}"


def test_the_campaign_covers_every_command_and_kind():
    closed = {c.command for c in CASES if c.stdout == "closed"}
    full = {c.command for c in CASES if c.stdout == "full"}
    every = {"estimate", "surface", "surface-explore", "shift", "recalibrate", "assess", "grid", "session",
             "simulate", "compare", "priors", "data"}
    assert closed == full == every
    memory_options = {c.wanted[-1] for c in CASES if "memory checked" in c.name}
    assert {"--draws", "--bins", "--by", "--attributes", "--runs", "synthetic-surface:N:K:SEED"} <= memory_options
