"""Print the dataset-shift table of every method on ``digits-corruptions`` (Ovadia et al. 2019).

Run ``python benchmarks/shift.py [--draws D] [--seed S]``. For each method and intensity
(pooled over the six corruption types) it prints accuracy, NLL, Brier score, ECE with its 95 %
HDI, mean entropy and the OOD AUROC, then the probability that the ECE rises from intensity to
intensity, and the wall time of the table (which depends on the machine's load).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    import pbassess
    from pbassess.shift import shift_table, worsening

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    preds = pbassess.load_data("digits-corruptions")
    start = time.perf_counter()
    table = shift_table(preds, by="intensity", n_draws=args.draws, seed=args.seed)
    elapsed = time.perf_counter() - start
    cells = shift_table(preds, by=("corruption", "intensity"), n_draws=0)
    print(f"digits-corruptions: {preds.n_items} rows, {table.sizes['model']} methods, "
          f"{table.attrs['n_ood']} OOD items per method\n")
    print(f"{'method':>13s} {'int.':>4s} {'n':>5s} {'acc':>6s} {'nll':>6s} {'brier':>6s} {'ece':>6s} "
          f"{'ece 95% HDI':>16s} {'entropy':>7s} {'auroc':>6s} {'acc range over corruptions':>27s}")
    for model in table["model"].values:
        for level in table.level.values:
            c = table.sel(model=model, level=level)
            per = cells["accuracy"].sel(model=model).where(cells["intensity"] == level, drop=True).values
            lo, hi = c.ece_hdi.values
            print(f"{model:>13s} {level:>4s} {int(c.n):5d} {float(c.accuracy):6.3f} {float(c.nll):6.3f} "
                  f"{float(c.brier):6.3f} {float(c.ece):6.3f} [{lo:6.3f}, {hi:6.3f}] {float(c.entropy):7.3f} "
                  f"{float(c.auroc_ood):6.3f} {np.nanmin(per):12.3f} .. {np.nanmax(per):.3f}")
    w = worsening(table, "ece")
    print("\nP(ECE rises from intensity to intensity):")
    for model in w.model.values:
        steps = " ".join(f"{p:.2f}" for p in w.p_step.sel(model=model).values)
        print(f"{model:>13s}: {steps}  P(monotone) = {float(w.p_monotone.sel(model=model)):.3f}")
    print(f"\nshift table by intensity with {args.draws} draws per cell: {elapsed:.2f} s wall "
          "(measured on a shared 2-core machine under load by other jobs)")


if __name__ == "__main__":
    main()
