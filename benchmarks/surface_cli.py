"""Wall time of the issue-21 command in a fresh process, by the state of PyTensor's numba cache.

The command is the one issue 21 times::

    pbassess surface acs-employment --attributes SEX,DIS,NATIVITY,DEAR,DEYE,DREM,MIG,CIT,MAR,RAC1P
        --estimator additive --covariate confidence --subsample-labels 2000 --seed S --json

Each run is a new ``pbassess`` process (imports, data, nutpie's compilation, sampling,
deterministics, diagnostics, LOO, JSON), timed from outside. PyTensor (3.3 and later) keeps the
numba code of every graph it compiles on disk (``~/.pytensor/numba``, keyed by the graph, not by the
data), and nutpie's model compilation goes through it, so what a run pays depends on that cache:

* ``warm``: the cache holds this model's code (a user's second run, whatever its seed or labels):
  one untimed run fills a private cache first, then every timed run reads it;
* ``empty``: a new empty cache for every run (the first run after installing pbassess);
* ``off``: ``PYTENSOR_FLAGS=numba__cache=False`` (numba compiles everything in every process, as
  before the cache: the baseline).

Every state uses its own cache folder under a temporary directory (``base_compiledir``), so the
user's ``~/.pytensor`` is neither read nor written. Python's own bytecode and pbassess's numba
kernels are cached as usual in every state. The runs alternate between the states (seed by seed),
so a slower minute of the machine falls on all of them. Printed: each run's wall seconds, the
fit's own seconds (``fit_seconds`` in the JSON), max R-hat, min bulk ESS and divergences; then per
state the median and maximum wall seconds, and the ratio of each median to ``off``'s.

Run: ``PBASSESS_DATA_DIR=/work/shared/data python benchmarks/surface_cli.py [--seeds 0,1,2,3,4]
[--states warm,empty,off]``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ATTRIBUTES = "SEX,DIS,NATIVITY,DEAR,DEYE,DREM,MIG,CIT,MAR,RAC1P"
STATES = ("warm", "empty", "off")


def command(seed: int) -> list[str]:
    """The issue's command for one seed, run through this interpreter's pbassess."""
    return [sys.executable, "-m", "pbassess", "surface", "acs-employment", "--attributes", ATTRIBUTES,
            "--estimator", "additive", "--covariate", "confidence", "--subsample-labels", "2000",
            "--seed", str(seed), "--json"]


def run_once(seed: int, flags: str) -> dict[str, float]:
    """One fresh process with ``PYTENSOR_FLAGS=flags``: its wall seconds and the fit's figures."""
    env = os.environ.copy()
    env["PYTENSOR_FLAGS"] = flags
    started = time.perf_counter()
    out = subprocess.run(command(seed), capture_output=True, text=True, cwd=ROOT, env=env, check=False)
    wall = time.perf_counter() - started
    if out.returncode != 0:
        raise SystemExit(f"seed {seed} ({flags}) exited {out.returncode}: {out.stderr.strip()[-300:]}")
    result = json.loads(out.stdout)
    diagnostics = result["diagnostics"]
    return {"wall": wall, "fit": result["fit_seconds"], "rhat": diagnostics["max_rhat"],
            "ess": diagnostics["min_ess_bulk"], "div": diagnostics["divergences"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="0,1,2,3,4", help="label seeds, one run per seed and state")
    parser.add_argument("--states", default=",".join(STATES), help="cache states: warm, empty, off")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    states = args.states.split(",")
    unknown = sorted(set(states) - set(STATES))
    if unknown:
        raise SystemExit(f"unknown state {unknown[0]!r}: choose from {', '.join(STATES)}")
    if not os.environ.get("PBASSESS_DATA_DIR"):
        raise SystemExit("set PBASSESS_DATA_DIR to the folder holding acs_employment_ma (../shared/data)")
    scratch = Path(tempfile.mkdtemp(prefix="pbassess-cli-cache-"))
    try:
        warm_dir = scratch / "warm"
        if "warm" in states:
            print("filling the warm cache (one untimed run, seed 0) ...", flush=True)
            run_once(0, f"base_compiledir={warm_dir}")
        runs: dict[str, list[dict[str, float]]] = {state: [] for state in states}
        print(f"{'state':<6} {'seed':>4} {'wall s':>7} {'fit s':>6} {'max R-hat':>9} {'min ESS':>8} {'div':>4}")
        for index, seed in enumerate(seeds):
            order = states if index % 2 == 0 else list(reversed(states))
            for state in order:
                if state == "warm":
                    flags = f"base_compiledir={warm_dir}"
                elif state == "empty":
                    empty_dir = scratch / f"empty-{seed}"
                    flags = f"base_compiledir={empty_dir}"
                else:
                    flags = f"base_compiledir={scratch / 'off'},numba__cache=False"
                run = run_once(seed, flags)
                if state == "empty":
                    shutil.rmtree(empty_dir, ignore_errors=True)
                runs[state].append(run)
                print(f"{state:<6} {seed:>4} {run['wall']:>7.1f} {run['fit']:>6.1f} {run['rhat']:>9.4f} "
                      f"{run['ess']:>8.0f} {run['div']:>4.0f}", flush=True)
        print()
        medians = {state: statistics.median(r["wall"] for r in runs[state]) for state in states}
        print(f"{'state':<6} {'runs':>4} {'median wall s':>13} {'max wall s':>10} {'median fit s':>12} {'/ off':>6}")
        for state in states:
            ratio = f"{medians[state] / medians['off']:.2f}" if "off" in medians else "-"
            print(f"{state:<6} {len(runs[state]):>4} {medians[state]:>13.1f} "
                  f"{max(r['wall'] for r in runs[state]):>10.1f} "
                  f"{statistics.median(r['fit'] for r in runs[state]):>12.1f} {ratio:>6}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
