"""Contract cases of the hierarchical fits without a conjugate posterior (NUTS only).

* ``hierarchical-calibration``: digits-shift, reliability per environment with bin accuracies
  pooled across environments (the unlabeled ``ood`` environment included);
* ``shift-accuracy-trend`` / ``shift-calibration-trend``: the committed digits-corruptions
  benchmark (the vanilla model, clean test set at intensity 0 and Gaussian noise at 1..5), its
  shift table by intensity, and the accuracy / calibration trend over the intensities.

NUTS is kept small (300 draws per chain after 500 tuning steps) so that each case fits in seconds.
"""

from __future__ import annotations

import functools

import numpy as np

import pbassess as pb

NUTS = {"draws": 300, "tune": 500}


@functools.cache
def _noise_table():
    """Shift table of the vanilla digits model under Gaussian noise, by intensity 0..5 (real data)."""
    from pbassess.shift.table import shift_table

    p = pb.load_data("digits-corruptions")
    corruption = p.group("corruption").astype(str)
    method = p.group("method").astype(str)
    keep = (method == "vanilla") & np.isin(corruption, ["none", "gaussian-noise"])
    return shift_table(p.subset(keep), by="intensity", n_draws=0)


def _accuracy_trend(inference, seed):
    from pbassess.shift.hierarchical import fit_table_trend

    table = _noise_table()
    return fit_table_trend(table, str(table["model"].values[0]), seed=seed, sample_kwargs=NUTS)["result"]


def _calibration_trend(inference, seed):
    from pbassess.shift.hierarchical import fit_calibration_trend

    table = _noise_table()
    return fit_calibration_trend(table, str(table["model"].values[0]), seed=seed, sample_kwargs=NUTS)["result"]


#: name -> (function of (data, inference, seed), data fixture name)
CASES = {
    "hierarchical-calibration": (
        lambda p, inf, s: pb.assess_hierarchical_calibration(p, "environment", bins=5, seed=s, inference=inf,
                                                             sample_kwargs=NUTS),
        "digits_shift",
    ),
    # the trend cases read digits-corruptions themselves (the fixture is not used)
    "shift-accuracy-trend": (lambda _p, inf, s: _accuracy_trend(inf, s), "digits"),
    "shift-calibration-trend": (lambda _p, inf, s: _calibration_trend(inf, s), "digits"),
}
#: none of them has a conjugate posterior
NUTS_ONLY = set(CASES)
