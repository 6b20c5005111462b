"""Regenerate the active-assessment result tables of docs/active.md (Ji et al., 2021, on the real data).

1. The paper's grid: CIFAR-100 (m = 1, 10) and SVHN (m = 1, 3), least accurate and most
   miscalibrated, TS (MP-TS for m > 1) vs random, uniform and informed priors.
2. The push on CIFAR-100, m = 1, least accurate: every strategy x prior x pseudocount.
3. A transfer check of the push's findings on SVHN (least accurate, m = 1).

Prints markdown tables (labels to MRR 0.99, as % of the pool; "never" if the run-averaged MRR
does not reach 0.99) and the wall time of each block.

4. (``--only cost``) the 2020 paper's cost table on CIFAR-100 (labels to MRR 0.95, highest cost);
5. (``--only adaptive``) TS with the adaptive informed prior vs uniform TS (CIFAR-100, SVHN).

Run: ``python benchmarks/active_experiments.py [--runs 100] [--ece-runs 20] [--only paper|push|transfer|cost|adaptive]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np


def _fmt(x: float) -> str:
    return "never" if x != x else f"{100 * x:.0f}%"


def _fmt_ci(x: float, low: float, high: float) -> str:
    """Labels to MRR with its 90% interval (the band of :func:`labels_to_mrr_interval`), e.g. ``25% (22-31)``."""
    if x != x:
        return "never"
    return f"{100 * x:.0f}% ({100 * low:.0f}-{100 * high:.0f})"


def paper_grid(runs: int, ece_runs: int) -> None:
    from pbassess import load_data
    from pbassess.active.evaluation import summary_table
    from pbassess.active.experiment import simulate

    rows = []
    for data, ms in (("cifar100-resnet110", (1, 10)), ("svhn-resnet", (1, 3))):
        pred = load_data(data)
        for target in ("least-accurate", "most-miscalibrated"):
            for m in ms:
                strategies = ["random-item", "ts"] + (["mpts"] if m > 1 else [])
                r = runs if target == "least-accurate" else ece_runs
                t0 = time.perf_counter()
                ds = simulate(pred, target, strategies, ("uniform", "informed"), pseudocount=2.0, top_m=m,
                              runs=r, seed=0)
                table = summary_table(ds)
                cells = {f"{r.strategy}/{r.prior}": _fmt_ci(r.labels_to_mrr, r.labels_to_mrr_low, r.labels_to_mrr_high)
                         for r in table.itertuples()}
                rows.append((data, target, m, r, cells, time.perf_counter() - t0))
                print(f"  {data} {target} m={m}: {', '.join(f'{k} {v}' for k, v in cells.items())} "
                      f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    print("\n### The paper's experiments (labels to MRR 0.99, % of the pool, 90% interval from the band on the expected MRR curve)\n")
    print("| data | target | m | runs | random-item (uniform) | random-item (informed) | TS (uniform) | TS (informed) "
          "| MP-TS (uniform) | MP-TS (informed) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for data, target, m, r, c, _ in rows:
        mp = (c["mpts/uniform"], c["mpts/informed"]) if m > 1 else ("-", "-")
        print(f"| {data} | {target} | {m} | {r} | {c['random-item/uniform']} | {c['random-item/informed']} "
              f"| {c['ts/uniform']} | {c['ts/informed']} | {mp[0]} | {mp[1]} |")
    print(f"\n(total {sum(r[-1] for r in rows):.0f} s wall)")


def push(runs: int) -> None:
    import pandas as pd

    from pbassess import load_data
    from pbassess.active.evaluation import summary_table
    from pbassess.active.experiment import simulate

    pred = load_data("cifar100-resnet110")
    strategies = ["random-item", "random-arm", "ts", "ttts", "bayes-ucb", "epsilon-greedy", "greedy"]
    frames = []
    t0 = time.perf_counter()
    for pc in (2.0, 10.0, 20.0, 50.0, 100.0):
        priors = ("uniform", "informed", "eb") if pc == 2.0 else ("uniform", "informed")
        ds = simulate(pred, "least-accurate", strategies, priors, pseudocount=pc, runs=runs, seed=0)
        table = summary_table(ds)
        table["pseudocount"] = pc
        frames.append(table)
        print(f"  pseudocount {pc:g} done ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    df = pd.concat(frames, ignore_index=True)
    df.loc[df.prior == "eb", "pseudocount"] = np.nan
    print("\n### Push: CIFAR-100, least accurate, m = 1 (labels to MRR 0.99, % of the pool, 90% band interval)\n")
    cols = [("eb", None)] + [(p, pc) for pc in (2.0, 10.0, 20.0, 50.0, 100.0) for p in ("uniform", "informed")]
    head = " | ".join("empirical Bayes" if p == "eb" else f"{p} pc={pc:g}" for p, pc in cols)
    print(f"| strategy | {head} |")
    print("|---|" + "---|" * len(cols))
    for s in strategies:
        cells = []
        for p, pc in cols:
            sel = df[(df.strategy == s) & (df.prior == p)]
            if pc is not None:
                sel = sel[sel.pseudocount == pc]
            r = sel.iloc[0]
            cells.append(_fmt_ci(r.labels_to_mrr, r.labels_to_mrr_low, r.labels_to_mrr_high))
        print(f"| {s} | " + " | ".join(cells) + " |")
    best = df.sort_values(["labels_to_mrr", "labels_to_mrr_high"]).iloc[0]
    pc_text = "" if best.prior == "eb" else f", pseudocount {best.pseudocount:g}"
    print(f"\nbest: {best.strategy} / {best.prior} prior{pc_text}: "
          f"{_fmt_ci(best.labels_to_mrr, best.labels_to_mrr_low, best.labels_to_mrr_high)} of the pool ({runs} runs); "
          f"total {time.perf_counter() - t0:.0f} s wall")


def transfer(runs: int) -> None:
    """Do the push's winners carry over? SVHN, least accurate, m = 1."""
    import pandas as pd

    from pbassess import load_data
    from pbassess.active.evaluation import summary_table
    from pbassess.active.experiment import simulate

    pred = load_data("svhn-resnet")
    frames = []
    t0 = time.perf_counter()
    for pc in (2.0, 10.0, 50.0, 100.0):
        priors = ("uniform", "informed", "eb") if pc == 2.0 else ("uniform", "informed")
        table = summary_table(simulate(pred, "least-accurate", ["ts", "greedy"], priors, pseudocount=pc, runs=runs,
                                       seed=0))
        table["pseudocount"] = pc
        frames.append(table)
    df = pd.concat(frames, ignore_index=True)
    print("\n### Transfer check: SVHN, least accurate, m = 1 (labels to MRR 0.99, % of the pool, 90% interval)\n")
    cols = [("eb", 2.0)] + [(p, pc) for pc in (2.0, 10.0, 50.0, 100.0) for p in ("uniform", "informed")]
    head = " | ".join("empirical Bayes" if p == "eb" else f"{p} pc={pc:g}" for p, pc in cols)
    print(f"| strategy | {head} |")
    print("|---|" + "---|" * len(cols))
    for s in ("ts", "greedy"):
        cells = []
        for p, pc in cols:
            r = df[(df.strategy == s) & (df.prior == p) & (df.pseudocount == pc)].iloc[0]
            cells.append(_fmt_ci(r.labels_to_mrr, r.labels_to_mrr_low, r.labels_to_mrr_high))
        print(f"| {s} | " + " | ".join(cells) + " |")
    print(f"\n(total {time.perf_counter() - t0:.0f} s wall)")


def cost_table(runs: int) -> None:
    """The 2020 paper's appendix Table 2 on CIFAR-100 (ESTIM): labels until MRR 0.95 for the
    highest-cost class, people and superclass matrices with mistake costs 2, 5, 10, 20,
    pseudocount 1: non-active (random-item) vs TS with an uninformative vs an informed prior."""
    from pbassess import load_data
    from pbassess.active.experiment import simulate
    from pbassess.stats.cost import people_cost_matrix, superclass_cost_matrix

    pred = load_data("cifar100-resnet110")
    print(f"\n### Cost table: CIFAR-100, highest-cost class, labels to MRR 0.95 (% of the pool, {runs} runs)\n")
    print("| cost matrix | mistake cost | non-active | TS uninformative | TS informative |")
    print("|---|---|---|---|---|")
    t0 = time.perf_counter()
    for label, build in (("people", people_cost_matrix), ("superclass", superclass_cost_matrix)):
        for cost in (2, 5, 10, 20):
            res = simulate(pred, "highest-cost", ["random-item", "ts"], ("uniform", "informed"), pseudocount=1.0,
                           runs=runs, seed=0, cost_matrix=build(list(pred.classes), mistake_cost=float(cost)))
            l2m = res.labels_to_mrr(threshold=0.95)
            cells = [_fmt(l2m[key]) for key in (("random-item", "uniform"), ("ts", "uniform"), ("ts", "informed"))]
            print(f"| {label} | {cost} | " + " | ".join(cells) + " |", flush=True)
    print(f"\n(total {time.perf_counter() - t0:.0f} s wall)")


def adaptive(runs: int) -> None:
    """TS with the adaptive informed prior (ESTIM, pbassess.active.adaptive) beside uniform TS in the
    same NumPy loop: least accurate class, m = 1, labels to MRR 0.99 with its 90% band interval."""
    from pbassess import load_data
    from pbassess.active.adaptive import simulate_adaptive
    from pbassess.active.evaluation import labels_to_mrr, labels_to_mrr_interval

    print(f"\n### Adaptive informed prior: least accurate, m = 1 (labels to MRR 0.99, % of the pool, {runs} runs)\n")
    print("| data | TS, uniform prior | TS, adaptive prior |")
    print("|---|---|---|")
    for data, budget in (("cifar100-resnet110", 4000), ("svhn-resnet", 16000)):
        pred = load_data(data)
        cells = []
        for prior in ("uniform", "adaptive"):
            out = simulate_adaptive(pred, prior=prior, runs=runs, budget=budget, log_every=100, seed=0)
            labels = (np.arange(out.mrr.shape[1]) + 1) * 100
            low, high = labels_to_mrr_interval(out.mrr, labels, pred.n_items)
            cells.append(_fmt_ci(labels_to_mrr(out.mrr, labels, pred.n_items), low, high))
        print(f"| {data} | {cells[0]} | {cells[1]} |", flush=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=100)
    p.add_argument("--ece-runs", type=int, default=20)
    p.add_argument("--only", choices=("paper", "push", "transfer", "cost", "adaptive"), default=None)
    args = p.parse_args()
    os.environ.setdefault("PBASSESS_DATA_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"))
    np.set_printoptions(precision=3)
    if args.only in (None, "paper"):
        paper_grid(args.runs, args.ece_runs)
    if args.only in (None, "push"):
        push(args.runs)
    if args.only in (None, "transfer"):
        transfer(args.runs)
    if args.only == "cost":  # the cost table and the adaptive prior run only when asked for
        cost_table(args.runs)
    if args.only == "adaptive":
        adaptive(args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
