"""Simulation-based calibration (Talts et al. 2018) of every pbassess model and conjugate path.

For each case below: parameters and data are drawn from the spec's PyMC model
(:func:`pymc.sample_prior_predictive`), the spec is rebuilt on the simulated counts and refit by
the inference under test (exact conjugate draws, or NUTS for the models without a conjugate
posterior), and the rank of each prior draw among 99 posterior draws is tested for uniformity
(chi-square on 10 equal bins per scalar component, Bonferroni over the components of a model;
:func:`pbassess.inference.sbc.simulation_based_calibration`). A model passes at p >= 0.01.

Prints one line per model (simulations, components tested, p-value, pass/fail, seconds) and
saves a rank-histogram and an ECDF-difference figure per model under ``--out``.

Usage::

    python benchmarks/sbc.py                  # full study (500 simulations per conjugate path, 50 per NUTS model)
    python benchmarks/sbc.py --quick          # 100 conjugate, 20 NUTS simulations
    python benchmarks/sbc.py --only accuracy  # cases whose name contains "accuracy"
    python benchmarks/sbc.py --inference conjugate  # the conjugate paths only (about a minute)
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# a script in benchmarks/ named like a package (e.g. coverage) would shadow it: run from the project root
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(ROOT))

from pbassess.inference.sbc import SBCResult, simulation_based_calibration  # noqa: E402
from pbassess.pymc_models.accuracy import BetaBernoulliSpec, GroupComparisonSpec  # noqa: E402
from pbassess.pymc_models.calibration import CalibrationSpec  # noqa: E402
from pbassess.pymc_models.comparison import PairedComparisonSpec  # noqa: E402
from pbassess.pymc_models.confusion import ConfusionSpec  # noqa: E402
from pbassess.pymc_models.estimation import ConfidencePriorSpec  # noqa: E402
from pbassess.pymc_models.hierarchical import HierarchicalAccuracySpec, HierarchicalCalibrationSpec  # noqa: E402
from pbassess.pymc_models.shift import AccuracyTrendSpec, CalibrationTrendSpec  # noqa: E402
from pbassess.pymc_models.shrinkage import ShrinkageSpec, simulate_prior  # noqa: E402
from pbassess.pymc_models.surface import (  # noqa: E402
    LOOSE_ANCHORED_OPTIONS,
    BetaISpec,
    CPredictorSpec,
    SurfaceModelSpec,
)
from pbassess.surface import ArmCounts  # noqa: E402

ALPHA = 0.01


@dataclass
class Case:
    name: str
    factory: Callable
    inference: str
    conjugate: bool
    note: str = ""
    var_names: list[str] | None = None
    simulator: Callable | None = None


# -- the cases: small designs with unequal labels, an unlabeled cell where the model allows one ------------------
N4 = np.array([5, 20, 100, 0])


def beta_bernoulli(obs):
    k = N4 // 2 if obs is None else obs["correct"]
    return BetaBernoulliSpec(N4, k, alpha=[1.0, 2.0, 0.5, 1.0], beta=[1.0, 5.0, 0.5, 1.0])


def group_comparison(obs):
    n = np.array([10, 40, 3])
    k = n // 2 if obs is None else obs["correct"]
    cells = BetaBernoulliSpec(n, k, 1.0, 1.0, dim="cell", coords=["A", "B", "C"])
    return GroupComparisonSpec(cells, ["A", "B", "C"], [(0, 1), (1, 2)])


def group_ece(obs):
    n = np.array([[5, 15], [30, 10]])
    k = (n // 2).ravel() if obs is None else obs["correct"]
    cells = BetaBernoulliSpec(n.ravel(), k, 1.0, 1.0, dim="cell", coords=["F|0", "F|1", "M|0", "M|1"])
    ece = {"weight": np.array([[0.3, 0.7], [0.6, 0.4]]), "score": np.array([[0.6, 0.9], [0.65, 0.95]])}
    return GroupComparisonSpec(cells, ["F", "M"], [(0, 1)], ece=ece)


CAL_N = np.array([3, 12, 40, 25])
CW_N = np.array([[1, 7, 25, 10], [2, 5, 15, 15]])


def calibration(obs):
    k = CAL_N // 2 if obs is None else obs["correct"]
    c = {"n_labeled": CAL_N, "correct": k, "prior_alpha": np.array([1.0, 1.0, 2.0, 3.0]),
         "prior_beta": np.array([1.0, 1.0, 1.0, 0.5]), "bin_weight": np.array([0.1, 0.2, 0.4, 0.3]),
         "bin_score": np.array([0.3, 0.55, 0.75, 0.95])}
    return CalibrationSpec(c, None)


def calibration_classwise(obs):
    spec = calibration(None if obs is None else {"correct": obs["correct"]})
    c = dict(spec.c)
    cw_k = (CW_N // 2).ravel() if obs is None else obs["classwise_correct"]
    class_n = CW_N.sum(axis=1)
    class_k = class_n // 2 if obs is None else obs["class_correct"]
    weight = CW_N / CW_N.sum(axis=1, keepdims=True)
    c.update({"class_bin_n": CW_N, "class_bin_correct": np.asarray(cw_k).reshape(CW_N.shape),
              "class_bin_alpha": np.ones(CW_N.shape), "class_bin_beta": np.ones(CW_N.shape),
              "class_bin_weight": weight, "class_bin_score": np.tile([0.3, 0.55, 0.75, 0.95], (2, 1)),
              "class_n": class_n, "class_correct": class_k, "class_alpha": np.ones(2), "class_beta": np.ones(2),
              "class_score": (weight * np.array([0.3, 0.55, 0.75, 0.95])).sum(axis=1)})
    return CalibrationSpec(c, ["cat", "dog"])


CONF_TEMPLATE = np.array([[6, 2, 1], [1, 5, 2], [2, 1, 7]])
CONF_CELLS = ConfusionSpec(CONF_TEMPLATE, np.ones((3, 3)), 1 - np.eye(3), ["a", "b", "c"]).cats.cell_category


def confusion(obs):
    counts = CONF_TEMPLATE if obs is None else np.asarray(obs["counts"])[CONF_CELLS]
    return ConfusionSpec(counts, np.full((3, 3), 2.0), 1 - np.eye(3), ["a", "b", "c"])


def paired(obs):
    counts = np.array([10, 3, 2, 20]) if obs is None else obs["counts"]
    return PairedComparisonSpec(counts, 1.0, ["A", "B"])


ARMS_N = np.array([4, 10, 30])


def cpredictor(obs):
    k = ARMS_N // 2 if obs is None else obs["correct"]
    return CPredictorSpec(ArmCounts.from_arrays(ARMS_N, k))


def cpredictor_simulator(n_sim, rng):
    p = rng.beta(1.0, 1.0, size=n_sim)
    return {"global_accuracy": p}, {"correct": rng.binomial(ARMS_N, p[:, None])}


def beta_i(obs):
    k = ARMS_N // 2 if obs is None else obs["correct"]
    return BetaISpec(ArmCounts.from_arrays(ARMS_N, k))


def beta_i_simulator(n_sim, rng):
    # the prior the template declares (centred on the template's labels), then data from it
    spec = beta_i(None)
    theta = rng.beta(spec.alpha, spec.beta, size=(n_sim, ARMS_N.size))
    return {"accuracy": theta}, {"correct": rng.binomial(ARMS_N, theta)}


# smoothing surfaces: 8 arms (3 binary attributes), unequal labels, one arm unlabeled; the additive and
# BernGP intercepts get a fixed prior centre (by default it is the labels' own accuracy, a prior that
# uses the data), the anchored model's centre is the pool's mean logit confidence (label-free)
SURF_N = np.array([3, 10, 0, 25, 6, 40, 2, 15])
SURF_VALUES = ((np.arange(8)[:, None] >> np.arange(3)[::-1]) & 1)
SURF_CONF = np.array([0.62, 0.7, 0.75, 0.8, 0.85, 0.88, 0.9, 0.95])
SURF_POINTS = np.clip(SURF_CONF[:, None] + np.array([-0.1, -0.03, 0.03, 0.08]), 0.5, 0.99)
SURF_POOL = np.array([40, 60, 30, 200, 50, 300, 20, 100])
SURF_OPTIONS = {"additive": {"intercept_loc": 1.5, "interaction_scale": 0.3},
                "berngp": {"intercept_loc": 1.5, "gp": "exact"}, "anchored": {},
                "anchored-loose": dict(LOOSE_ANCHORED_OPTIONS)}  # the wider prior fit_surface widens to


def _surface_spec(kind, obs):
    k = SURF_N // 2 if obs is None else obs["correct"]
    arms = ArmCounts.from_arrays(SURF_N, k, values=SURF_VALUES, attributes=("a", "b", "c"), pool_n=SURF_POOL,
                                 confidence_points=SURF_POINTS)
    anchored = kind.startswith("anchored")
    return SurfaceModelSpec(arms, "additive" if anchored else kind, model_options=SURF_OPTIONS[kind], model_seed=0,
                            covariate="confidence" if anchored else None)


def _surface_simulator(kind, names):
    """Parameters from the template model's prior, then the arms' accuracy and Binomial counts (the
    likelihood is a pm.Potential, which PyMC cannot simulate)."""
    import pymc as pm

    def simulate(n_sim, rng):
        model = _surface_spec(kind, None).model()
        drawn = ["mu", "scale"] if kind == "additive" else (["p"] if kind == "berngp" else ["mu"])
        wanted = list(dict.fromkeys([n for n in names if n != "accuracy"] + drawn))
        prior = pm.sample_prior_predictive(draws=n_sim, model=model, var_names=wanted,
                                           random_seed=int(rng.integers(2**31 - 1)))["prior"]
        got = {n: prior[n].to_numpy()[0] for n in wanted}
        if kind == "additive":
            mu, sc = got["mu"], got["scale"]
            theta = rng.beta(mu * sc, (1 - mu) * sc)
        else:
            theta = got["p" if kind == "berngp" else "mu"]
        truth = {n: got[n] for n in names if n != "accuracy"}
        truth["accuracy"] = theta
        return truth, {"correct": rng.binomial(SURF_N, theta)}

    return simulate


SURFACE_VARS = {"additive": ["intercept", "log_scale", "accuracy"], "berngp": ["f_amplitude", "accuracy"],
                "anchored": ["calibration_loc", "calibration_slope", "arm_sd", "accuracy"]}
SURFACE_VARS["anchored-loose"] = SURFACE_VARS["anchored"]  # the same variables under the wider prior


def surface_case(kind, label):
    return Case(label, lambda obs: _surface_spec(kind, obs), "nuts", False, var_names=SURFACE_VARS[kind],
                simulator=_surface_simulator(kind, SURFACE_VARS[kind]))


HIER_N = np.array([10, 40, 25, 5])


def hierarchical(obs):
    k = HIER_N // 2 if obs is None else obs["k"]
    return HierarchicalAccuracySpec(HIER_N, k, environments=["a", "b", "c", "d"], seed=0)


HC_N = np.array([[5, 20, 30], [10, 10, 40]])


def hierarchical_calibration(obs):
    from types import SimpleNamespace

    k = HC_N // 2 if obs is None else np.asarray(obs["k"]).reshape(HC_N.shape)
    c = SimpleNamespace(n=HC_N, k=k, n_items=HC_N * 10, weight=HC_N / HC_N.sum(1, keepdims=True),
                        score=np.array([[0.5, 0.7, 0.9], [0.55, 0.75, 0.95]]), environments=("x", "y"),
                        bins=("lo", "mid", "hi"))
    return HierarchicalCalibrationSpec(c)


def accuracy_trend(obs):
    n = np.array([40, 40, 40, 40])
    k = np.array([34, 30, 28, 22]) if obs is None else obs["correct"]
    return AccuracyTrendSpec(k, n)


TREND_N = np.array([[10, 30], [20, 20], [30, 10]])
TREND_S = np.array([[0.6, 0.9], [0.6, 0.9], [0.6, 0.9]]) * TREND_N


def calibration_trend(obs):
    k = TREND_N // 2 if obs is None else np.asarray(obs["correct"]).reshape(TREND_N.shape)
    return CalibrationTrendSpec(TREND_N, k, TREND_S)


def confidence_prior(obs):
    n = np.array([10, 20, 0, 15])
    used = n > 0
    k = n // 2
    if obs is not None:
        k = np.zeros_like(n)
        k[used] = obs["correct"]
    return ConfidencePriorSpec([100, 100, 100, 100], n, k, [0.6, 0.8, 0.9, 0.95], [0, 0, 1, 1], ["x", "y"], seed=0)


def shrinkage(obs):
    n = np.array([5, 20, 40, 15])
    k = n // 2 if obs is None else obs["correct"]
    return ShrinkageSpec(n, k, [0.55, 0.7, 0.85, 0.95], [0.1, 0.3, 0.4, 0.2])


CASES = [
    Case("accuracy (Beta-Bernoulli)", beta_bernoulli, "conjugate", True),
    Case("accuracy (Beta-Bernoulli) NUTS", beta_bernoulli, "nuts", False),
    Case("group comparison", group_comparison, "conjugate", True),
    Case("group comparison (ECE)", group_ece, "conjugate", True),
    Case("calibration", calibration, "conjugate", True),
    Case("calibration (classwise)", calibration_classwise, "conjugate", True),
    Case("confusion / cost", confusion, "conjugate", True, var_names=["expected_cost"]),
    Case("paired comparison", paired, "conjugate", True),
    Case("surface CPredictor", cpredictor, "conjugate", True, simulator=cpredictor_simulator,
         var_names=["global_accuracy"]),
    Case("surface Beta-I", beta_i, "conjugate", True, simulator=beta_i_simulator,
         note="expected to fail: its prior is centred on the labels' own accuracy (empirical Bayes, as in the "
              "AAA code), so the posterior uses the data twice"),
    Case("hierarchical accuracy", hierarchical, "nuts", False),
    Case("hierarchical calibration", hierarchical_calibration, "nuts", False),
    Case("accuracy trend", accuracy_trend, "nuts", False),
    Case("calibration trend", calibration_trend, "nuts", False),
    Case("confidence prior (estimation)", confidence_prior, "nuts", False, var_names=["offset", "slope", "strength"]),
    Case("shrinkage calibration", shrinkage, "nuts", False, var_names=["mu", "tau"],
         simulator=lambda n_sim, rng: simulate_prior([5, 20, 40, 15], [0.55, 0.7, 0.85, 0.95], n_sim, rng)),
    surface_case("additive", "surface additive"),
    surface_case("berngp", "surface BernGP"),
    surface_case("anchored", "surface anchored additive"),
    surface_case("anchored-loose", "surface anchored additive, wider residual prior"),
]


def plot(case: Case, res: SBCResult, out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from scipy import stats

    comps = [(v, idx) for v in res.ranks for idx in np.ndindex(res.ranks[v].shape[1:])][:6]
    fig, axes = plt.subplots(2, len(comps), figsize=(2.6 * len(comps), 5.2), squeeze=False)
    n = res.n_simulations
    lo, hi = stats.binom.ppf([0.005, 0.995], n, 1 / res.n_bins)
    for j, (v, idx) in enumerate(comps):
        label = v + ("" if not idx else str(list(idx)))
        counts = res.histogram(v)[idx]
        ax = axes[0, j]
        ax.axhspan(lo, hi, color="0.85", label="99% band")
        ax.bar(np.arange(res.n_bins), counts, width=0.9, color="C0")
        ax.set_title(label, fontsize=9)
        ax.set_xlabel("rank bin")
        u, diff = res.ecdf_difference(v)
        d = diff[idx]
        band = (stats.binom.ppf([[0.005], [0.995]], n, u) / n) - u
        ax = axes[1, j]
        ax.fill_between(u, band[0], band[1], color="0.85", step="post")
        ax.step(u, d, where="post", color="C1")
        ax.axhline(0, color="k", lw=0.5)
        ax.set_xlabel("fractional rank")
    axes[0, 0].set_ylabel("simulations")
    axes[1, 0].set_ylabel("ECDF - uniform")
    fig.suptitle(f"SBC: {case.name} ({case.inference}, {n} simulations, p = {res.p_value:.3g})", fontsize=10)
    fig.tight_layout()
    path = out / (case.name.replace(" ", "_").replace("/", "").replace("(", "").replace(")", "") + ".png")
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="100 conjugate / 20 NUTS simulations (full: 500 / 50)")
    ap.add_argument("--conjugate-sims", type=int, default=None)
    ap.add_argument("--nuts-sims", type=int, default=None)
    ap.add_argument("--only", default=None, help="run the cases whose name contains this text")
    ap.add_argument("--inference", choices=["conjugate", "nuts"], default=None, help="run only these cases")
    ap.add_argument("--seed", type=int, default=20180)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "sbc")
    args = ap.parse_args(argv)
    n_conj = args.conjugate_sims or (100 if args.quick else 500)
    n_nuts = args.nuts_sims or (20 if args.quick else 50)
    args.out.mkdir(parents=True, exist_ok=True)
    logging.getLogger("pymc").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore")
    # NUTS refits: 2 chains x 300 draws after 300 tuning steps (99 ranked draws thinned from 600)
    nuts_kwargs = {"tune": 300, "chains": 2, "progressbar": False}
    seeds = np.random.SeedSequence(args.seed).spawn(len(CASES))
    print(f"{'model':34s} {'inference':9s} {'sims':>5s} {'tests':>5s} {'p-value':>9s}  result   time")
    failed = []
    for case, ss in zip(CASES, seeds, strict=True):
        if (args.only and args.only not in case.name) or (args.inference and case.inference != args.inference):
            continue
        n_sim = n_conj if case.inference == "conjugate" else n_nuts
        n_bins = 10 if n_sim >= 100 else 5  # >= 10 expected simulations per bin
        t0 = time.perf_counter()
        res = simulation_based_calibration(case.factory, n_sim, inference=case.inference, var_names=case.var_names,
                                           n_bins=n_bins, seed=np.random.default_rng(ss), simulator=case.simulator,
                                           draws=None if case.inference == "conjugate" else 300,
                                           sample_kwargs=None if case.inference == "conjugate" else nuts_kwargs)
        dt = time.perf_counter() - t0
        ok = res.passed(ALPHA)
        verdict = "pass" if ok else ("FAIL*" if case.note else "FAIL")
        print(f"{case.name:34s} {case.inference:9s} {n_sim:5d} {res.n_tests:5d} {res.p_value:9.3g}  {verdict:7s} "
              f"{dt:5.0f}s", flush=True)
        for v in res.p_values:
            print(f"    {v:30s} p = {res.variable_p_value(v):.3g}")
        if res.diagnostics:
            bad = sum(1 for d in res.diagnostics if not d.get("ok", True))
            print(f"    NUTS diagnostics not ok in {bad} of {len(res.diagnostics)} refits")
        plot(case, res, args.out)
        if not ok:
            failed.append(case)
    for case in failed:
        print(f"* {case.name}: {case.note or 'unexplained failure'}")
    print(f"figures: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
