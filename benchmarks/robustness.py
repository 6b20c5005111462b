"""Issue 23's robustness campaign, reproducible: every case through the command line, classified and counted.

Runs, each ``pbassess`` command in its own process with a timeout (a hang is counted, not waited for):

* the fault and memory cases of ``tests/robustness/_campaign.py`` (write failures, closed or full
  standard output, ``--out`` in the wrong place, ``ulimit -f``, memory checked before allocating,
  grid folders, a session on a full disk);
* the command-line cases of ``tests/robustness/test_cli_options_campaign.py`` (options checked on
  every path, closed standard output), turned into the same kind of cases;
* the damaged-source campaign ``tests/robustness/test_lazy_sources_campaign.py`` (run by pytest, which
  classifies each command's outcome the same way; its per-run lines are read back).

Each outcome is a clear one-line error, the right answer, a traceback (or a crash by a signal), a
silent wrong answer, a hang, or an unclear error (non-zero exit without exactly one line naming the
problem). The goal: none of the last four. Prints the counts by kind and by command, then every case
that missed; exits 1 when any did.

    nice python benchmarks/robustness.py [--jobs 2] [--only SUBSTRING] [--no-lazy] [--timeout 300]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "robustness"))

from _campaign import CLEAR, KINDS, RIGHT, Case, cases, run_case  # noqa: E402


def option_cases() -> list[Case]:
    """The command-line cases of the options campaign, as subprocess cases."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("options_campaign",
                                                  ROOT / "tests" / "robustness" / "test_cli_options_campaign.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = [Case(f"simulate: {' '.join(argv[5:])}", list(argv), wanted=tuple(wanted))
           for argv, wanted in module.SIMULATE_REJECT]
    for i, (body, wanted) in enumerate(module.GRID_REJECT):
        text = '[[experiment]]\ndatasets = "digits-logreg"\nstrategies = ["ts"]\n[[experiment]]\n' + body

        def setup(tmp: Path, text: str = text) -> None:
            (tmp / "grid.toml").write_text(text)

        out.append(Case(f"grid: config count {i}", ["grid", "grid.toml", "--out", "out"],
                        wanted=("grid experiment 2", wanted), setup=setup))
    explore = [(["--min-support", "-1"], ("--min-support", "at least 0")),
               (["--min-support", "nan"], ("--min-support", "finite")),
               (["--seeds", "0"], ("--seeds", "at least 1")),
               (["--arms-per-round", "0"], ("--arms-per-round", "at least 1")),
               (["--budget", "0"], ("--budget", "at least 1")),
               (["--budget", "6.5"], ("--budget", "integer"))]
    out += [Case(f"surface-explore: {' '.join(extra)}", [*module.EXPLORE, *extra], wanted=wanted)
            for extra, wanted in explore]
    out.append(Case("surface: --subsample-labels 0", ["surface", "adult-sex", "--attributes", "race,sex",
                                                      "--estimator", "beta-i", "--subsample-labels", "0"],
                    wanted=("--subsample-labels", "at least 1")))
    out += [Case(f"{argv[0]}: standard output closed, --out given", [*argv, "--out", "out"],
                 wanted=("standard output is closed",), stdout="closed") for argv in module.CLOSED_STDOUT]
    return out


def lazy_campaign(timeout: float) -> list[tuple[str, str, str, str]]:
    """Run the damaged-source campaign under pytest; its (case, command, kind, detail) lines."""
    env = {**os.environ, "PBASSESS_CAMPAIGN_VERBOSE": "1"}
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
                               "tests/robustness/test_lazy_sources_campaign.py"], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return [("lazy-source campaign", "pytest", "hang", f"no answer within {timeout:g} s")]
    rows = []
    for line in done.stdout.splitlines():
        match = re.match(r"^  (\S+)\s+(\S+)\s+(clear error|right answer|traceback|silent wrong answer|unclear "
                         r"error)\s*(.*)$", line)
        if match:
            rows.append(match.groups())
    if not rows:
        rows.append(("lazy-source campaign", "pytest", "traceback", done.stdout[-300:] + done.stderr[-300:]))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2, help="cases run at the same time (default 2)")
    parser.add_argument("--only", default="", help="run only the cases whose name holds this text")
    parser.add_argument("--no-lazy", action="store_true", help="skip the damaged-source campaign (pytest)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds before a case counts as a hang")
    args = parser.parse_args()

    todo = [c for c in [*cases(), *option_cases()] if args.only in c.name]
    for case in todo:
        case.timeout = args.timeout
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pbassess-robustness-") as scratch:
        def one(item: tuple[int, Case]) -> tuple[Case, str, str, float]:
            i, case = item
            t0 = time.perf_counter()
            kind, detail = run_case(case, Path(scratch) / f"case-{i:03d}")
            return case, kind, detail, time.perf_counter() - t0

        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results = []
            for case, kind, detail, seconds in pool.map(one, enumerate(todo)):
                results.append((case.name, case.command, kind, detail))
                print(f"{kind:20s} {seconds:6.1f} s  {case.name}", flush=True)
    rows = list(results)
    if not args.no_lazy and not args.only:
        lazy = lazy_campaign(max(args.timeout, 900.0))
        rows += [(f"lazy source: {case}", command, kind, detail) for case, command, kind, detail in lazy]
    seconds = time.perf_counter() - start

    by_kind = Counter(kind for _, _, kind, _ in rows)
    by_command: dict[str, Counter] = defaultdict(Counter)
    for _, command, kind, _ in rows:
        by_command[command][kind] += 1
    print(f"\nissue 23 robustness campaign: {len(rows)} cases in {seconds:.0f} s")
    print("  " + ", ".join(f"{by_kind[k]} {k}{'s' if by_kind[k] != 1 else ''}" for k in KINDS))
    print(f"\n{'command':16s}" + "".join(f"{k:>22s}" for k in KINDS))
    for command in sorted(by_command):
        print(f"{command:16s}" + "".join(f"{by_command[command][k]:22d}" for k in KINDS))
    missed = [r for r in rows if r[2] not in (CLEAR, RIGHT)]
    if missed:
        print("\ncases that missed:")
        for name, _command, kind, detail in missed:
            print(f"  [{kind}] {name}: {detail[:300]}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
