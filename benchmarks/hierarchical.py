"""Benchmark of the hierarchical models' default NUTS settings.

Prints, for each case, the NUTS wall time (first fit, which includes compiling the model, and
a second fit of the same model), the minimum bulk ESS, the maximum R-hat and the number of
divergences, under the project's NUTS defaults (:func:`pbassess.inference.merge_sample_kwargs` with the
models' :data:`pbassess.pymc_models.hierarchical.HIERARCHICAL_NUTS_DEFAULTS`):

* the fairness data (../shared/data/fairness, read in place through PBASSESS_DATA_DIR): the
  hierarchical accuracy of classifier LR across the groups of each data set;
* a synthetic 5 environments x 100 predicted classes data set drawn from the environment x
  class model itself (~20 labeled items per cell, like CIFAR-100 split five ways);
* the hierarchical calibration model on the adult race-sex groups.

Usage::

    python benchmarks/hierarchical.py                 # all cases, default sampler
    python benchmarks/hierarchical.py --sampler pymc  # PyMC's own NUTS instead of nutpie
    python benchmarks/hierarchical.py --quick         # only adult race-sex and 5 x 100
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

from pbassess.hierarchical.models import (  # noqa: E402
    HIERARCHICAL_NUTS_DEFAULTS,
    accuracy_model,
    calibration_counts,
    calibration_model,
    environment_counts,
)
from pbassess.inference import merge_sample_kwargs, sample_model  # noqa: E402
from pbassess.results import mcmc_diagnostics  # noqa: E402

FAIRNESS_CASES = [
    ("adult-sex", "race-sex"),
    ("compas-race", "sex-race"),
    ("german-sex", "sex-age"),
    ("bank-age", "age"),
    ("ricci-race", "Race"),
]


def synthetic_5x100(seed: int = 0):
    """Counts drawn from the environment x class model: mu=1.1, spreads 0.4 / 0.8 / 0.3."""
    rng = np.random.default_rng(seed)
    n_env, n_cls = 5, 100
    eta = (1.1 + 0.4 * rng.standard_normal(n_env)[:, None] + 0.8 * rng.standard_normal(n_cls)[None, :]
           + 0.3 * rng.standard_normal((n_env, n_cls)))
    theta = 1 / (1 + np.exp(-eta))
    n = rng.poisson(20, size=(n_env, n_cls))
    k = rng.binomial(n, theta)
    return n, k, [f"env{e}" for e in range(n_env)], [f"class{c:02d}" for c in range(n_cls)]


def run_case(label: str, build, settings: dict, seed: int = 1) -> dict:
    times = []
    diag: dict = {}
    for repeat in range(2):
        model = build()
        t0 = time.perf_counter()
        idata = sample_model(model, seed=seed + repeat, log_likelihood=False, sample_kwargs=settings,
                             defaults=HIERARCHICAL_NUTS_DEFAULTS)
        times.append(time.perf_counter() - t0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            diag = mcmc_diagnostics(idata)
    row = {"case": label, "first_s": times[0], "second_s": times[1], **diag}
    print(f"{label:<34} {times[0]:7.1f} {times[1]:7.1f} {diag['min_ess_bulk']:8.0f} {diag['max_rhat']:6.3f} "
          f"{diag['divergences']:5d}", flush=True)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sampler", default=None, help="nutpie or pymc (default: the project default)")
    parser.add_argument("--target-accept", type=float, default=None)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    settings = {k: v for k, v in {"sampler": args.sampler, "target_accept": args.target_accept}.items() if v}
    shown = merge_sample_kwargs(settings, defaults=HIERARCHICAL_NUTS_DEFAULTS, progressbar=False)
    print(f"NUTS settings: {shown}")
    print(f"{'case':<34} {'wall_s':>7} {'again_s':>7} {'min_ESS':>8} {'R-hat':>6} {'div':>5}")
    from pbassess import load_data

    rows = []
    cases = FAIRNESS_CASES[:1] if args.quick else FAIRNESS_CASES
    have_data = bool(os.environ.get("PBASSESS_DATA_DIR")) and Path(os.environ["PBASSESS_DATA_DIR"]).is_dir()
    if have_data:
        for name, by in cases:
            pred = load_data(name, model="score_LR")
            c = environment_counts(pred, by)
            rows.append(run_case(f"{name} by {by} (E={len(c.environments)})",
                                 lambda c=c: accuracy_model(c.n, c.k, environments=c.environments), settings))
        if not args.quick:
            pred = load_data("adult-sex", model="score_LR")
            c = environment_counts(pred, "race-sex")
            rows.append(run_case("adult-sex by race-sex, Beta kind",
                                 lambda c=c: accuracy_model(c.n, c.k, environments=c.environments, kind="beta"),
                                 settings))
            cal = calibration_counts(pred, "race-sex", bins=10)
            rows.append(run_case("adult-sex race-sex calibration", lambda: calibration_model(cal), settings))
    else:
        print("(fairness data not found: set PBASSESS_DATA_DIR; skipping the fairness cases)")
    n, k, envs, classes = synthetic_5x100()
    rows.append(run_case("synthetic 5 env x 100 classes",
                         lambda: accuracy_model(n, k, environments=envs, classes=classes), settings))
    worst = max(r["divergences"] for r in rows)
    print(f"total divergences over all cases: {sum(r['divergences'] for r in rows)} (worst case {worst})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
