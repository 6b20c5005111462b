"""What the first NUTS fit of a process pays to compile the model, with and without
:func:`pbassess.inference.plain_slice_errors`.

A command such as ``pbassess surface acs-employment --estimator additive --covariate confidence``
runs in a fresh process, so it pays numba's first-time compilation. nutpie copies the gradient
into the sampler's buffer with ``out[...] = grad``, and numba compiles, for the first slice
assignment of a process, an error message that formats both shapes as strings. pbassess compiles
every nutpie model inside ``plain_slice_errors()``, which gives that error numba's fixed message.

Each repeat starts two fresh processes back to back, in alternating order: one as pbassess runs
(``plain``), one with the block replaced by a no-op (``numba``, numba's own message). Each
process fits one model and prints the seconds of ``nutpie.compile_pymc_model`` and of the whole
fit. The figures are the medians over the repeats and their ratio (same machine, same minutes).

Models: ``beta-binomial`` (``assess_accuracy(load_data("digits-logreg"), inference="nuts")``: the
accuracy per predicted class, the built-in data) and ``anchored`` (the anchored additive surface, ``fit_surface(...,
covariate="confidence")``, on ACS employment's 2,554 arms with 2,000 random labels when
``PBASSESS_DATA_DIR`` holds it, else on the miscalibrated synthetic surface; 4 x 50 draws after 50
tuning steps, since sampling is not what is measured).

Run: ``PBASSESS_DATA_DIR=/work/shared/data python benchmarks/nuts_compile.py [--repeats 3]
[--models beta-binomial,anchored]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ACS = ["SEX", "DIS", "NATIVITY", "DEAR", "DEYE", "DREM", "MIG", "CIT", "MAR", "RAC1P"]

CHILD = r"""
import contextlib, json, sys, time, warnings
warnings.simplefilter("ignore")
start = time.perf_counter()
import nutpie
import pbassess.inference.sampling as sampling
if sys.argv[2] == "numba":
    sampling.plain_slice_errors = contextlib.nullcontext
compile_seconds = []
original = nutpie.compile_pymc_model
def timed(*args, **kwargs):
    t = time.perf_counter()
    try:
        return original(*args, **kwargs)
    finally:
        compile_seconds.append(time.perf_counter() - t)
nutpie.compile_pymc_model = timed
short = {"draws": 50, "tune": 50, "chains": 4}
model = sys.argv[1]
imported = time.perf_counter()
if model == "beta-binomial":
    from pbassess import assess_accuracy, load_data
    assess_accuracy(load_data("digits-logreg"), inference="nuts", seed=0, sample_kwargs=short)
else:
    from pbassess import load_data
    from pbassess.surface import count_arms, fit_surface, hide_labels
    acs = json.loads(sys.argv[3])
    if acs:
        arms = count_arms(hide_labels(load_data("acs-employment"), 2000, seed=0), acs)
    else:
        from pbassess.surface.synthetic import miscalibrated_surface
        surface = miscalibrated_surface(100_000, 8, seed=2021)
        arms = count_arms(hide_labels(surface.preds, 2000, seed=0), list(surface.attributes))
    fit_surface(arms, estimator="additive", covariate="confidence", seed=0, sample_kwargs=short)
done = time.perf_counter()
print(json.dumps({"compile": sum(compile_seconds), "fit": done - imported, "process": done - start}))
"""


def run_child(model: str, mode: str, acs: list[str]) -> dict[str, float]:
    """One fresh process: the seconds of its nutpie compilation, its fit and the whole process."""
    out = subprocess.run([sys.executable, "-c", CHILD, model, mode, json.dumps(acs)], capture_output=True,
                         text=True, cwd=ROOT, env=os.environ.copy(), check=False)
    if out.returncode != 0:
        raise SystemExit(f"{model} ({mode}) failed: {out.stderr.strip().splitlines()[-1]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--models", default="beta-binomial,anchored")
    args = parser.parse_args()
    data_dir = os.environ.get("PBASSESS_DATA_DIR")
    acs = ACS if data_dir and any(Path(data_dir).glob("acs*")) else []
    print(f"surface data: {'ACS employment, 2,000 labels' if acs else 'miscalibrated synthetic surface, 2,000 labels'}")
    print(f"{'model':<15} {'mode':<6} {'compile s (median)':>19} {'fit s':>7} {'process s':>10}  compile per repeat")
    for model in args.models.split(","):
        runs: dict[str, list[dict[str, float]]] = {"plain": [], "numba": []}
        started = time.perf_counter()
        for repeat in range(args.repeats):
            order = ("plain", "numba") if repeat % 2 == 0 else ("numba", "plain")
            for mode in order:
                runs[mode].append(run_child(model, mode, acs))
        medians = {}
        for mode in ("plain", "numba"):
            figures = {key: statistics.median(r[key] for r in runs[mode]) for key in ("compile", "fit", "process")}
            medians[mode] = figures
            each = " ".join(f"{r['compile']:.2f}" for r in runs[mode])
            print(f"{model:<15} {mode:<6} {figures['compile']:>19.2f} {figures['fit']:>7.2f} {figures['process']:>10.2f}  {each}")
        ratio = medians["plain"]["compile"] / medians["numba"]["compile"]
        saved = medians["numba"]["compile"] - medians["plain"]["compile"]
        print(f"{model:<15} plain / numba compile: {ratio:.2f} ({saved:.1f} s less); "
              f"fit {medians['plain']['fit'] / medians['numba']['fit']:.2f}  [{time.perf_counter() - started:.0f} s]")


if __name__ == "__main__":
    main()
