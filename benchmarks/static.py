"""Benchmark of the static (all-labels) assessments: conjugate seconds and NUTS wall times.

Prints one line per figure:

* the conjugate engine on CIFAR-100 (10,000 labeled items, 100 classes): accuracy, calibration
  and the expected cost under the 0-1, people and superclass cost matrices (seconds, after one
  warm-up call that compiles the PyTensor samplers);
* NUTS wall time (fresh model, compile included) of the 100-class Beta-binomial accuracy model
  on the CIFAR-100 counts;
* NUTS wall time of the Dirichlet confusion model on the real SVHN 10 x 10 counts and on a
  synthetic 100-class confusion matrix shaped like CIFAR-100's (10,000 items, accuracy ~0.74,
  each class confused with a few others; ~87% zero cells). Target: <= 30 s for 4 chains x 1000
  draws (+1000 tuning) on 2 cores.

* the build-pool figure (issue 8): reading and assessing 10^7 top-1 items from a text file
  against reading the same columns with pyarrow plus ``np.bincount``, as a ratio (target
  <= 5x), with the peak RSS of each (``--build-pool`` runs only this one).

With ``--compare`` it also times the alternative parametrisations of the 100-class confusion
model that :mod:`pbassess.pymc_models.confusion` was chosen against (several minutes each).

The real data are read in place from ``PBASSESS_DATA_DIR`` (default ``../shared/data`` relative
to the repository root). Timings on a shared machine vary with its load.

Usage::

    python benchmarks/static.py             # all figures
    python benchmarks/static.py --compare   # plus the slower alternative parametrisations
    python benchmarks/static.py --build-pool [--items N]   # only the build-pool figure
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "data"
if "PBASSESS_DATA_DIR" not in os.environ and SHARED.is_dir():
    os.environ["PBASSESS_DATA_DIR"] = str(SHARED)

from pbassess import load_data  # noqa: E402
from pbassess.stats import confusion_counts, region_counts  # noqa: E402
from pbassess.stats.cost import dirichlet_prior, zero_one_cost  # noqa: E402

NUTS = {"draws": 1000, "tune": 1000, "chains": 4, "cores": 2, "progressbar": False}
TARGET_SECONDS = 30.0


def line(name: str, value: float, unit: str = "s", note: str = "") -> None:
    """Print one figure."""
    print(f"{name}: {value:.2f} {unit}" + (f" ({note})" if note else ""), flush=True)


def synthetic_confusion_counts(n_classes: int = 100, n_items: int = 10_000, accuracy: float = 0.74,
                               seed: int = 0) -> np.ndarray:
    """A CIFAR-100-like confusion matrix: uniform true classes, each confused with a few others.

    Rows predicted, columns true. Each true class spreads its mistakes over the other classes
    with Dirichlet(0.1) weights, so most cells are zero, as in CIFAR-100 (85% zero cells).
    """
    rng = np.random.default_rng(seed)
    true = rng.integers(0, n_classes, n_items)
    confusers = rng.dirichlet(np.full(n_classes, 0.1), size=n_classes)
    np.fill_diagonal(confusers, 0.0)
    confusers /= confusers.sum(axis=1, keepdims=True)
    predicted = true.copy()
    wrong = np.flatnonzero(rng.random(n_items) > accuracy)
    cdf = np.cumsum(confusers[true[wrong]], axis=1)
    predicted[wrong] = np.minimum((cdf < rng.random(wrong.size)[:, None]).sum(axis=1), n_classes - 1)
    return confusion_counts(predicted, true, n_classes)


def diagnostics_note(idata, var: str) -> str:
    import arviz as az

    summ = az.summary(idata, var_names=[var], kind="diagnostics")
    div = int(idata["sample_stats"]["diverging"].sum())
    return f"max R-hat {summ['r_hat'].max():.3f}, min bulk ESS {summ['ess_bulk'].min():.0f}, {div} divergences"


def conjugate_figures(cifar) -> None:
    try:
        from pbassess.assess.accuracy import assess_accuracy
    except ImportError:
        assess_accuracy = None
        print("conjugate accuracy CIFAR-100: missing (pbassess.assess.accuracy not present yet)")
    try:
        from pbassess.assess.calibration import assess_calibration
    except ImportError:
        assess_calibration = None
        print("conjugate calibration CIFAR-100: missing (pbassess.assess.calibration not present yet)")
    from pbassess.assess.cost import assess_confusion

    cases = []
    if assess_accuracy is not None:
        cases.append(("conjugate accuracy CIFAR-100", lambda s: assess_accuracy(cifar, seed=s)))
    if assess_calibration is not None:
        cases.append(("conjugate calibration CIFAR-100", lambda s: assess_calibration(cifar, seed=s)))
    for cost in ("zero-one", "people", "superclass"):
        cases.append((f"conjugate cost ({cost}) CIFAR-100", lambda s, c=cost: assess_confusion(cifar, cost_matrix=c, seed=s)))
    for name, run in cases:
        run(0)  # warm-up: compiles the PyTensor samplers once per process
        t = time.perf_counter()
        result = run(1)
        result.summary()  # HDIs and rankings are part of the work
        line(name, time.perf_counter() - t, note="4000 draws, summary table included")


def beta_binomial_figure(cifar) -> None:
    import pymc as pm

    n, k = region_counts(cifar.predicted, cifar.correct, cifar.n_classes)
    t = time.perf_counter()
    try:
        from pbassess.pymc_models.accuracy import beta_binomial_model, sample_posterior
    except ImportError:
        with pm.Model() as model:
            theta = pm.Beta("accuracy", 1.0, 1.0, shape=n.size)
            pm.Binomial("correct", n=n, p=theta, observed=k)
        with model:
            idata = pm.sample(random_seed=1, **NUTS)
        which = "plain pm.Beta model"
    else:
        model = beta_binomial_model(n, k, 1.0, 1.0)
        idata = sample_posterior(model, seed=1, sample_kwargs=NUTS)
        which = "pbassess.pymc_models.accuracy"
    line("NUTS Beta-binomial 100 classes (CIFAR-100 counts)", time.perf_counter() - t,
         note=f"{which}, 4 chains x 1000 draws, 2 cores, compile included; {diagnostics_note(idata, 'accuracy')}")


def confusion_figure(name: str, counts: np.ndarray, *, collapse: bool = True, sampler: str = "nutpie") -> float:
    from pbassess.pymc_models.confusion import confusion_model, sample_confusion_model

    k = counts.shape[0]
    alpha = dirichlet_prior("uniform", k)
    t = time.perf_counter()
    model = confusion_model(counts, alpha, zero_one_cost(k), collapse=collapse)
    idata = sample_confusion_model(model, seed=1, sample_kwargs={**NUTS, "nuts_sampler": sampler})
    seconds = time.perf_counter() - t
    n_params = int(model.categories.alpha.size + model.categories.boosted.sum())
    verdict = "" if k < 100 else (" - within target" if seconds <= TARGET_SECONDS else " - OVER the 30 s target")
    line(f"NUTS Dirichlet confusion {name}", seconds,
         note=f"{sampler}, collapse={collapse}, {n_params} parameters, compile included; "
              f"{diagnostics_note(idata, 'expected_cost')}{verdict}")
    return seconds


def naive_dirichlet_figure(counts: np.ndarray, sampler: str) -> None:
    """The textbook model: pm.Dirichlet rows and a pm.Multinomial likelihood."""
    import pymc as pm

    k = counts.shape[0]
    alpha = dirichlet_prior("uniform", k)
    t = time.perf_counter()
    with pm.Model() as model:
        theta = pm.Dirichlet("confusion", a=alpha)
        pm.Multinomial("counts", n=counts.sum(axis=1), p=theta, observed=counts)
        pm.Deterministic("expected_cost", (theta * zero_one_cost(k)).sum(axis=1))
    with model:
        idata = pm.sample(random_seed=1, nuts_sampler=sampler, var_names=["expected_cost"],
                          compute_convergence_checks=False, **NUTS)
    line("NUTS naive pm.Dirichlet + pm.Multinomial 100 x 100 synthetic", time.perf_counter() - t,
         note=f"{sampler}; {diagnostics_note(idata, 'expected_cost')}")


# =============================================================================== build-pool figure (issue 8)
# Building and assessing a pool of N top-1 items read from a file (pbassess.read_predictions, then
# the accuracy counts and their conjugate posterior via assess_accuracy) against the floor: reading
# the same columns with pyarrow plus np.bincount. Both run in fresh subprocesses of this run (imports
# and the PyTensor compile warmed first, outside the timing) so that each reports its own peak RSS.
BUILD_POOL_ITEMS = 10_000_000
BUILD_POOL_TARGET_RATIO = 5.0


def write_top1_file(path: Path, n_items: int, n_classes: int = 100, seed: int = 0) -> None:
    """A CIFAR-100-like top-1 text file (``Index Correct Predicted Confidence``) of ``n_items`` rows."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    from pbassess.data.cifar100 import CIFAR100_CLASSES

    rng = np.random.default_rng(seed)
    names = pa.array(list(CIFAR100_CLASSES[:n_classes]))
    true = rng.integers(0, n_classes, n_items).astype(np.int32)
    pred = np.where(rng.random(n_items) < 0.74, true, rng.integers(0, n_classes, n_items)).astype(np.int32)
    table = pa.table({"Index": np.arange(n_items), "Correct": pa.DictionaryArray.from_arrays(true, names),
                      "Predicted": pa.DictionaryArray.from_arrays(pred, names),
                      "Confidence": np.round(rng.uniform(0.2, 1.0, n_items), 4)})
    with open(path, "wb") as fh:
        fh.write(b"Index Correct Predicted Confidence\n")
        pacsv.write_csv(table, fh, pacsv.WriteOptions(delimiter=" ", quoting_style="none", include_header=False))


def _floor_worker(path: str, warm: str) -> dict:
    """pyarrow reads the four columns; np.bincount gives n, correct and the score sums per predicted class."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    text = pa.dictionary(pa.int32(), pa.string())
    options = pacsv.ConvertOptions(column_types={"Index": pa.int64(), "Correct": text, "Predicted": text,
                                                 "Confidence": pa.float64()})
    pacsv.read_csv(warm, parse_options=pacsv.ParseOptions(delimiter=" "), convert_options=options)
    t = time.perf_counter()
    table = pacsv.read_csv(path, parse_options=pacsv.ParseOptions(delimiter=" "), convert_options=options)
    pred_col = table["Predicted"].unify_dictionaries()
    names = pred_col.chunk(0).dictionary.to_pylist()
    pred = np.concatenate([c.indices.to_numpy() for c in pred_col.chunks]).astype(np.int64)
    true_col = table["Correct"].unify_dictionaries()
    lookup = np.array([names.index(c) for c in true_col.chunk(0).dictionary.to_pylist()])
    true = lookup[np.concatenate([c.indices.to_numpy() for c in true_col.chunks])]
    conf = table["Confidence"].to_numpy()
    k = len(names)
    n = np.bincount(pred, minlength=k)
    correct = np.bincount(pred, weights=(pred == true), minlength=k)
    np.bincount(pred, weights=conf, minlength=k)
    return {"seconds": time.perf_counter() - t, "accuracy": float(correct.sum() / n.sum())}


def _pbassess_worker(path: str, warm: str) -> dict:
    from pbassess import assess_accuracy, read_predictions

    assess_accuracy(read_predictions(warm), seed=0)  # warm-up: imports and the PyTensor compile
    t = time.perf_counter()
    preds = read_predictions(path)
    built = time.perf_counter() - t
    result = assess_accuracy(preds, seed=1)
    total = time.perf_counter() - t
    accuracy = float(np.sum(result.to_json()["correct"]) / np.sum(result.to_json()["n"]))
    return {"seconds": total, "build_seconds": built, "accuracy": accuracy}


def _worker(which: str, path: str, warm: str) -> int:
    import json
    import resource

    warnings.filterwarnings("ignore")
    out = (_floor_worker if which == "floor" else _pbassess_worker)(path, warm)
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))
    return 0


def build_pool_figure(n_items: int = BUILD_POOL_ITEMS) -> float:
    """Print the build-and-assess time of ``n_items`` top-1 items against pyarrow + np.bincount."""
    import json
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path, warm = Path(folder) / "top1.txt", Path(folder) / "warm.txt"
        write_top1_file(path, n_items)
        write_top1_file(warm, 1000, seed=1)
        runs = {}
        for which in ("floor", "pbassess"):
            done = subprocess.run([sys.executable, __file__, "--build-pool-worker", which, str(path), str(warm)],
                                  capture_output=True, text=True, check=False)
            if done.returncode:
                print(f"build-pool {which} worker failed: {done.stderr.strip().splitlines()[-1:]}")
                return float("nan")
            runs[which] = json.loads(done.stdout.strip().splitlines()[-1])
    floor, ours = runs["floor"], runs["pbassess"]
    assert abs(floor["accuracy"] - ours["accuracy"]) < 1e-12, (floor, ours)
    ratio = ours["seconds"] / floor["seconds"]
    size = f"{n_items:,} top-1 items, 100 classes"
    line(f"build pool floor: pyarrow read + np.bincount ({size})", floor["seconds"],
         note=f"peak RSS {floor['peak_rss_mib']:.0f} MiB")
    line(f"build pool pbassess: read_predictions + assess_accuracy ({size})", ours["seconds"],
         note=f"build {ours['build_seconds']:.2f} s; peak RSS {ours['peak_rss_mib']:.0f} MiB")
    verdict = "within" if ratio <= BUILD_POOL_TARGET_RATIO else "OVER"
    line("build pool ratio pbassess / floor", ratio, unit="x",
         note=f"{verdict} the {BUILD_POOL_TARGET_RATIO:g}x target; same run, shared machine")
    return ratio


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", action="store_true",
                        help="also time the slower alternative parametrisations (several minutes each)")
    parser.add_argument("--build-pool", action="store_true",
                        help="only the build-pool figure (10^7 top-1 items from a file vs pyarrow + np.bincount)")
    parser.add_argument("--items", type=int, default=BUILD_POOL_ITEMS, help="items of the build-pool figure")
    parser.add_argument("--build-pool-worker", nargs=3, metavar=("WHICH", "FILE", "WARM"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.build_pool_worker:
        return _worker(*args.build_pool_worker)
    warnings.filterwarnings("ignore")
    if args.build_pool:
        build_pool_figure(args.items)
        return 0
    import logging

    logging.getLogger("pymc").setLevel(logging.ERROR)

    t = time.perf_counter()
    cifar = load_data("cifar100-resnet110")
    svhn = load_data("svhn-resnet")
    line("load CIFAR-100 and SVHN", time.perf_counter() - t)

    conjugate_figures(cifar)
    beta_binomial_figure(cifar)
    svhn_counts = confusion_counts(svhn.predicted, svhn.labels, svhn.n_classes)
    confusion_figure("10 x 10 (SVHN counts)", svhn_counts)
    synthetic = synthetic_confusion_counts()
    confusion_figure("100 x 100 (synthetic CIFAR-like counts)", synthetic)
    if args.compare:
        confusion_figure("100 x 100 (synthetic CIFAR-like counts)", synthetic, sampler="pymc")
        confusion_figure("100 x 100 (synthetic CIFAR-like counts)", synthetic, collapse=False)
        naive_dirichlet_figure(synthetic, "nutpie")
    build_pool_figure(args.items)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
