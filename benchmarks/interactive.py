"""Benchmark of what a person feels first (issue 25): each figure beside its floor, as ratios.

One run prints, each as the median of repeats and as a ratio to a floor measured back to back
in the same run (the machine is shared: the ratios are what count, not the seconds):

* **start-up** (fresh processes, interleaved with the floor ``python -c "import numpy"``):
  ``pbassess --help`` and every subcommand's ``--help`` (target <= 4x the floor), and
  ``pbassess assess digits-logreg --json`` (target < 1 s on a warm cache);
* **conjugate draws in a new process**: the first ``beta_draws`` / ``dirichlet_draws`` call of a
  fresh process, after importing :mod:`pbassess.stats.sampling` (target < 50 ms), beside what a PyTensor-compiled sampler costs there (the
  import of PyTensor alone, and import plus compile on a warm compile cache) -- the
  measurement behind drawing with NumPy's generators (docs/sampling.md);
* **calibration at 10^6 labeled top-1 items, 15 bins**, against the two-bincount floor of the
  frequentist ECE (multiply-and-truncate, ``bincount(2 * bin + correct)`` and
  ``bincount(bin, weights=confidence)``): ``expected_calibration_error`` (target <= 2x),
  ``assess_calibration`` with the conjugate engine (target <= 15x) and its JSON extras,
  computed on demand;
* **top-1 ECE from (N, 10) probability vectors** (:func:`pbassess.calibration.metrics.top1_ece`,
  fused numba max/argmax) against NumPy ``argmax`` + ``max`` + the floor, and the classwise
  (one-vs-rest) ECE from one pass of per-class bin counts against one bincount floor per column;
* **peers**, where installed (skipped otherwise): netcal's ECE, torchmetrics'
  ``multiclass_calibration_error``, relplot's ``smECE`` and ppi_py's PPI++ mean interval,
  each beside pbassess's figure on the same arrays. torchmetrics needs torch, which the project's
  environment does not hold: it runs in another interpreter (``--torch-python``,
  ``$PBASSESS_TORCH_PYTHON``, or ``/work/peers/torch311/bin/python``, a Python 3.11 venv with the
  CPU build of torch), which reads the same arrays from a temporary ``.npz`` and times, interleaved,
  its own NumPy floor and torchmetrics on tensors already built (the figure compared), with torch
  set to numba's thread count.

Usage::

    python benchmarks/interactive.py                 # everything (about two minutes)
    python benchmarks/interactive.py --items 1000000 --repeats 7
    python benchmarks/interactive.py --skip-startup  # only the in-process figures
    python benchmarks/interactive.py --torch-python /work/peers/torch311/bin/python

The real data are read in place from ``PBASSESS_DATA_DIR``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
# A script beside this one must not stand in for an installed package (a benchmarks/coverage.py
# once hid the ``coverage`` package that numba's import looks for).
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)


def median_time(fn: Callable[[], object], repeats: int) -> float:
    """Median wall time of ``repeats`` calls (after one warm-up call)."""
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def paired(fns: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Median times of several functions, measured interleaved (one round calls each once)."""
    for fn in fns.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(ts) for name, ts in times.items()}


def line(name: str, seconds: float, floor: float | None = None, floor_name: str = "floor", target: str = "") -> None:
    ratio = f"{seconds / floor:7.2f}x {floor_name}" if floor else ""
    print(f"  {name:<52s} {seconds * 1e3:10.2f} ms  {ratio}{'  ' + target if target else ''}", flush=True)


def _run(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    elapsed = time.perf_counter() - t0
    if done.returncode not in (0,):
        raise RuntimeError(f"{' '.join(cmd)} failed: {done.stderr.decode()[-500:]}")
    return elapsed


def startup(repeats: int) -> None:
    """Fresh-process figures, each interleaved with the floor ``python -c "import numpy"``."""
    env = dict(os.environ)
    floor_cmd = [PYTHON, "-c", "import numpy"]
    from pbassess.cli import COMMAND_MODULES

    commands = [["--help"]] + [[name, "--help"] for name in COMMAND_MODULES] + [["session", "start", "--help"]]
    print(f"start-up (fresh processes, medians of {repeats}; floor: python -c 'import numpy')", flush=True)
    floors = []
    for args in commands:
        f_times, c_times = [], []
        for _ in range(repeats):
            f_times.append(_run(floor_cmd, env))
            c_times.append(_run([PYTHON, "-m", "pbassess.cli", *args], env))
        floor, value = statistics.median(f_times), statistics.median(c_times)
        floors.append(floor)
        ok = "ok" if value <= 4 * floor else "OVER"
        line("pbassess " + " ".join(args), value, floor, "import numpy", f"target <= 4x: {ok}")
    assess = [PYTHON, "-m", "pbassess.cli", "assess", "digits-logreg", "--json", "--seed", "1"]
    _run(assess, env)  # warm the caches (numba, the data's parsed form)
    f_times, a_times = [], []
    for _ in range(repeats):
        f_times.append(_run(floor_cmd, env))
        a_times.append(_run(assess, env))
    value, floor = statistics.median(a_times), statistics.median(f_times)
    line("pbassess assess digits-logreg --json (warm)", value, floor, "import numpy",
         f"target < 1 s: {'ok' if value < 1.0 else 'OVER'}")


_FIRST_DRAW = """
import time
from pbassess.stats.sampling import beta_draws, dirichlet_draws
t0 = time.perf_counter()
beta_draws([2.0, 3.0], [5.0, 1.0], 4000, seed=0)
t1 = time.perf_counter()
dirichlet_draws([[1.0, 2.0, 3.0]], 4000, seed=0)
t2 = time.perf_counter()
import sys
print(t1 - t0, t2 - t1, "pytensor" in sys.modules)
"""

_PYTENSOR = """
import time
t0 = time.perf_counter()
import pytensor
import pytensor.tensor as pt
t1 = time.perf_counter()
rng = pt.random.type.random_generator_type("rng")
a = pt.vector("a"); b = pt.vector("b"); n = pt.iscalar("n")
f = pytensor.function([rng, a, b, n], pt.random.beta(a, b, size=(n, a.shape[0]), rng=rng).owner.outputs)
t2 = time.perf_counter()
print(t1 - t0, t2 - t0)
"""


def first_draws(repeats: int) -> None:
    """The first conjugate draws of a new process, beside a PyTensor sampler's start-up there."""
    env = dict(os.environ)
    print(f"conjugate draws in a new process (medians of {repeats})", flush=True)
    rows: dict[str, list[float]] = {"beta": [], "dirichlet": [], "import": [], "compile": []}
    imported = False
    subprocess.run([PYTHON, "-c", _PYTENSOR], capture_output=True, env=env, cwd=ROOT)  # warm PyTensor's cache
    for _ in range(repeats):
        out = subprocess.run([PYTHON, "-c", _FIRST_DRAW], capture_output=True, text=True, env=env, cwd=ROOT)
        beta, dirichlet, imported_now = out.stdout.split()
        rows["beta"].append(float(beta))
        rows["dirichlet"].append(float(dirichlet))
        imported |= imported_now == "True"
        out = subprocess.run([PYTHON, "-c", _PYTENSOR], capture_output=True, text=True, env=env, cwd=ROOT)
        imp, comp = out.stdout.split()
        rows["import"].append(float(imp))
        rows["compile"].append(float(comp))
    med = {k: statistics.median(v) for k, v in rows.items()}
    line("first beta_draws of the process (4000 x 2)", med["beta"], target=f"target < 50 ms: "
         f"{'ok' if med['beta'] < 0.05 else 'OVER'}")
    line("first dirichlet_draws (4000 x 1 x 3)", med["dirichlet"])
    line("PyTensor: import alone (what a disk cache must pay)", med["import"])
    line("PyTensor: import + compile a Beta sampler (warm cache)", med["compile"])
    print(f"  PyTensor imported by the draws: {imported}", flush=True)


def _top1_pool(n: int, k: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, k)) * 2.0
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    labels = np.where(rng.random(n) < 0.8, probs.argmax(axis=1), rng.integers(0, k, n))
    return probs, labels


def floor_ece(conf: np.ndarray, correct: np.ndarray, n_bins: int) -> float:
    """The two-bincount floor of the frequentist ECE (equal-width bins, multiply-and-truncate)."""
    idx = (conf * n_bins).astype(np.intp)
    np.minimum(idx, n_bins - 1, out=idx)
    both = np.bincount(2 * idx + correct, minlength=2 * n_bins)
    score = np.bincount(idx, weights=conf, minlength=n_bins)
    return float(np.abs(both[1::2] - score).sum() / conf.size)


def in_process(n_items: int, repeats: int, torch_python: str | None = None) -> None:
    from pbassess import Predictions
    from pbassess.assess.calibration import assess_calibration
    from pbassess.calibration import metrics as M

    n_bins, k = 15, 10
    probs, labels = _top1_pool(n_items, k)
    predicted, conf = probs.argmax(axis=1), probs.max(axis=1)
    correct = predicted == labels
    classes = [str(c) for c in range(k)]
    pool = Predictions.from_top1(predicted, conf, labels, classes=classes)
    print(f"calibration, {n_items:,} labeled top-1 items, {n_bins} bins (medians of {repeats}, interleaved with "
          "the floor)", flush=True)
    warnings.simplefilter("ignore")
    t = paired({"floor": lambda: floor_ece(conf, correct, n_bins),
                "ece": lambda: M.expected_calibration_error(conf, correct, n_bins)}, repeats)
    line("floor: two-bincount frequentist ECE", t["floor"], t["floor"])
    line("expected_calibration_error", t["ece"], t["floor"], target=f"target <= 2x: "
         f"{'ok' if t['ece'] <= 2 * t['floor'] else 'OVER'}")
    warm_floor = t["floor"]
    t = paired({"floor": lambda: floor_ece(conf, correct, n_bins),
                "assess": lambda: assess_calibration(pool, bins=n_bins, seed=0)},
               max(3, repeats // 2))
    # The floor measured between assess_calibration calls runs slower (caches and freed pages gone),
    # so the target is judged against the faster of the two floors: the stricter ratio.
    strict = min(t["floor"], warm_floor)
    line("  floor between assess_calibration calls", t["floor"], t["floor"])
    line("assess_calibration (conjugate)", t["assess"], strict, "floor", target=f"target <= 15x: "
         f"{'ok' if t['assess'] <= 15 * strict else 'OVER'} ({t['assess'] / t['floor']:.2f}x the floor between calls)")
    result = assess_calibration(pool, bins=n_bins, seed=0)
    t0 = time.perf_counter()
    result.to_json()
    line("  its to_json() (extras computed on demand, first call)", time.perf_counter() - t0)
    p_pool = Predictions.from_probs(probs, labels, classes=classes)
    t = paired({"floor": lambda: floor_ece(conf, correct, n_bins),
                "assess": lambda: assess_calibration(p_pool, bins=n_bins, seed=0)}, max(3, repeats // 2))
    line("assess_calibration, full probability vectors", t["assess"], min(t["floor"], warm_floor), "floor",
         f"({t['assess'] / t['floor']:.2f}x the floor between calls)")

    print(f"top-1 and classwise ECE from ({n_items:,}, {k}) probability vectors", flush=True)

    def numpy_top1():
        p, c = probs.argmax(axis=1), probs.max(axis=1)
        return floor_ece(c, p == labels, n_bins)

    def floor_classwise():
        out = 0.0
        for j in range(k):
            out += floor_ece(probs[:, j], (labels == j).astype(np.intp), n_bins)
        return out / k

    t = paired({"numpy": numpy_top1, "top1": lambda: M.top1_ece(probs, labels, n_bins)}, repeats)
    line("floor: NumPy argmax + max + two-bincount ECE", t["numpy"], t["numpy"])
    line("top1_ece (fused numba max/argmax)", t["top1"], t["numpy"], "numpy floor")
    torchmetrics_peer(probs, labels, n_bins, repeats, torch_python, t)
    t = paired({"floor": floor_classwise, "cw": lambda: M.classwise_ece(probs, labels, n_bins)}, repeats)
    line("floor: K two-bincount one-vs-rest ECEs", t["floor"], t["floor"])
    line("classwise_ece (one pass of per-class bin counts)", t["cw"], t["floor"])

    print("peers on the same arrays (skipped where not installed)", flush=True)
    if importlib.util.find_spec("netcal") is not None:
        from netcal.metrics import ECE

        t = paired({"netcal": lambda: ECE(bins=n_bins).measure(conf, correct.astype(int)),
                    "pbassess": lambda: M.expected_calibration_error(conf, correct, n_bins, convention="netcal")},
                   repeats)
        line("netcal ECE", t["netcal"])
        line("pbassess ECE (netcal convention)", t["pbassess"], t["netcal"], "netcal")
    else:
        print("  netcal: not installed, skipped", flush=True)
    if importlib.util.find_spec("relplot") is not None:
        import relplot

        from pbassess.calibration.smooth import smooth_ece

        y = correct.astype(float)
        t = paired({"relplot": lambda: relplot.smECE(conf, y), "pbassess": lambda: smooth_ece(conf, y)},
                   max(3, repeats // 2))
        line("relplot smECE", t["relplot"])
        line("pbassess smooth_ece", t["pbassess"], t["relplot"], "relplot")
    else:
        print("  relplot: not installed, skipped", flush=True)
    if importlib.util.find_spec("ppi_py") is not None:
        import ppi_py

        from pbassess.estimation.frequentist import ppi_mean_interval

        n_lab = max(n_items // 100, 10)
        y, f_lab, f_unl = correct[:n_lab].astype(float), conf[:n_lab], conf[n_lab:]
        t = paired({"ppi_py": lambda: ppi_py.ppi_mean_ci(y, f_lab, f_unl, alpha=0.05),
                    "pbassess": lambda: ppi_mean_interval(y, f_lab, f_unl, 0.95)}, repeats)
        line(f"ppi_py ppi_mean_ci ({n_lab:,} labeled)", t["ppi_py"])
        line("pbassess ppi_mean_interval", t["pbassess"], t["ppi_py"], "ppi_py")
    else:
        print("  ppi_py: not installed, skipped", flush=True)


_TORCH_PEER = """
import statistics, sys, time
import numpy as np
import torch
from torchmetrics.functional.classification import multiclass_calibration_error

path, n_bins, repeats, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
torch.set_num_threads(threads)
data = np.load(path)
probs, labels = data["probs"], data["labels"]
k = probs.shape[1]


def floor():
    p, c = probs.argmax(axis=1), probs.max(axis=1)
    idx = np.minimum((c * n_bins).astype(np.intp), n_bins - 1)
    both = np.bincount(2 * idx + (p == labels), minlength=2 * n_bins)
    score = np.bincount(idx, weights=c, minlength=n_bins)
    return float(np.abs(both[1::2] - score).sum() / c.size)


tp, tl = torch.from_numpy(probs), torch.from_numpy(labels)
fns = {
    "floor": floor,
    "tensors": lambda: multiclass_calibration_error(tp, tl, num_classes=k, n_bins=n_bins, norm="l1"),
    "tensors_no_checks": lambda: multiclass_calibration_error(tp, tl, num_classes=k, n_bins=n_bins, norm="l1",
                                                              validate_args=False),
    "from_numpy": lambda: multiclass_calibration_error(torch.from_numpy(probs), torch.from_numpy(labels),
                                                       num_classes=k, n_bins=n_bins, norm="l1"),
}
for fn in fns.values():
    fn()
times = {name: [] for name in fns}
for _ in range(repeats):
    for name, fn in fns.items():
        t0 = time.perf_counter()
        fn()
        times[name].append(time.perf_counter() - t0)
value = float(fns["tensors"]())
print(torch.__version__, threads, value, *(statistics.median(times[name]) for name in fns))
"""


def _torch_python(given: str | None) -> str | None:
    """The interpreter that has torch and torchmetrics: --torch-python, $PBASSESS_TORCH_PYTHON, or the peer venv."""
    if given:
        return given
    if os.environ.get("PBASSESS_TORCH_PYTHON"):
        return os.environ["PBASSESS_TORCH_PYTHON"]
    if importlib.util.find_spec("torchmetrics") is not None:
        return PYTHON
    default = Path("/work/peers/torch311/bin/python")
    return str(default) if default.exists() else None


def torchmetrics_peer(probs: np.ndarray, labels: np.ndarray, n_bins: int, repeats: int, python: str | None,
                      ours: dict[str, float]) -> None:
    """torchmetrics' top-1 ECE on the same arrays, timed in its own interpreter (it needs torch).

    The arrays go through a temporary ``.npz``; the peer process times, interleaved, its own
    NumPy floor (the same argmax + max + two-bincount ECE as here), torchmetrics on tensors
    already built (with and without its argument checks) and from the NumPy arrays, with torch
    set to numba's thread count. The figure compared is torchmetrics on built tensors with its
    default checks; the ratio is given raw and against each process's own floor.
    """
    import tempfile

    from pbassess.calibration import metrics as M

    if python is None:
        print("  torchmetrics: not installed (give --torch-python or $PBASSESS_TORCH_PYTHON), skipped", flush=True)
        return
    import numba

    threads = numba.get_num_threads()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "arrays.npz"
        np.savez(path, probs=probs, labels=labels.astype(np.int64))
        done = subprocess.run([python, "-c", _TORCH_PEER, str(path), str(n_bins), str(repeats), str(threads)],
                              capture_output=True, text=True)
    if done.returncode != 0:
        print(f"  torchmetrics: the peer interpreter {python} failed: {done.stderr.strip().splitlines()[-1:]}",
              flush=True)
        return
    version, _, value, floor, tensors, no_checks, from_numpy = done.stdout.split()
    floor, tensors, no_checks, from_numpy = (float(x) for x in (floor, tensors, no_checks, from_numpy))
    same = M.top1_ece(probs, labels, n_bins, convention="torchmetrics")
    print(f"  torchmetrics {version} in {python} ({threads} threads, as numba here); its ECE {float(value):.6f}, "
          f"pbassess convention='torchmetrics' {same:.6f}", flush=True)
    line("  its NumPy floor (in that process)", floor, floor, "its floor")
    line("  torchmetrics multiclass_calibration_error (tensors)", tensors, floor, "its floor",
         f"pbassess / torchmetrics = {ours['top1'] / tensors:.2f} raw, "
         f"{(ours['top1'] / ours['numpy']) / (tensors / floor):.2f} floor-normalised "
         f"(target <= 1: {'ok' if ours['top1'] <= tensors else 'OVER'})")
    line("  torchmetrics, validate_args=False", no_checks, floor, "its floor")
    line("  torchmetrics from NumPy arrays (torch.from_numpy)", from_numpy, floor, "its floor")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=1_000_000, help="items of the in-process figures (default 10^6)")
    parser.add_argument("--repeats", type=int, default=7, help="repeats per figure (default 7)")
    parser.add_argument("--skip-startup", action="store_true", help="only the in-process figures")
    parser.add_argument("--torch-python", default=None,
                        help="a Python with torch and torchmetrics (default: $PBASSESS_TORCH_PYTHON, this Python if it "
                             "has torchmetrics, else /work/peers/torch311/bin/python if present)")
    args = parser.parse_args(argv)
    if not args.skip_startup:
        startup(max(3, args.repeats // 2))
        first_draws(max(3, args.repeats // 2))
    in_process(args.items, args.repeats, _torch_python(args.torch_python))
    return 0


if __name__ == "__main__":
    sys.exit(main())
