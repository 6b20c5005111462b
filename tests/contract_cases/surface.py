"""Accuracy surfaces (:func:`pbassess.fit_surface`) on the fit layer: the ACS employment set of the shared mirror.

Arms are combinations of SEX x DIS x NATIVITY (8 arms) over 1,500 labels kept at random from the
277,677 ACS items (all labeled: the others are hidden), so the per-item log-likelihood stays
small. CPredictor has both inferences (exact Beta, and NUTS on the same model); the additive
surface and its confidence-anchored form (``covariate="confidence"``: its posterior alone,
``stack_confidence=False``, and stacked with the confidence, the default on a pool; and, on a synthetic
pool whose confidence is wrong on one rule, the refit with the wider residual prior; and on the built-in
``digits-shift``, that refit mixed with the confidence at its stacking weight), are NUTS only. The data fixture named here (``digits``) is not used: the pool is read
from the mirror inside each case (the contract's fits are memoised, so once per inference).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ATTRIBUTES = ["SEX", "DIS", "NATIVITY"]
LABELS = 1500
NUTS = {"draws": 300, "tune": 500}


def _acs():
    folder = Path(os.environ.get("PBASSESS_DATA_DIR", "/nonexistent")) / "acs_employment_ma"
    if not (folder / "employment_MA_analysis.pq").exists():
        pytest.skip("ACS data absent (PBASSESS_DATA_DIR)")
    from pbassess import load_data
    from pbassess.surface import hide_labels

    return hide_labels(load_data("acs-employment"), LABELS, seed=0)


def _surface(estimator: str, covariate: str | None = None, **options):
    def run(_data, inference, seed):
        from pbassess.surface import fit_surface

        return fit_surface(_acs(), ATTRIBUTES, estimator=estimator, inference=inference, seed=seed,
                           sample_kwargs=NUTS, covariate=covariate, **options)

    return run


def _widened(_data, inference, seed):
    """The default path where the labels show the confidence wrong: the stacked surface refitted with the wider
    residual prior (a pool over-confident by 0.15-0.2 on one rule; the case fails if nothing was refitted)."""
    from pbassess.surface import fit_surface, hide_labels
    from pbassess.surface.synthetic import miscalibrated_surface

    s = miscalibrated_surface(6000, 3, seed=1, n_rules=1, shift=(0.15, 0.2))
    result = fit_surface(hide_labels(s.preds, 600, seed=0), list(s.attributes), estimator="additive",
                         covariate="confidence", inference=inference, seed=seed, sample_kwargs=NUTS)
    assert result.diagnostics["widened_scales"] is True, result.diagnostics
    return result


def _mixture(_data, inference, seed):
    """``confidence_combination="stack"`` where the labels show the confidence wrong: the widened refit mixed with
    the confidence at its stacking weight, strictly between 0 and 1 (built-in ``digits-shift``, 2,000 labels; the
    case fails if the draws are not a mixture)."""
    from pbassess import load_data
    from pbassess.surface import fit_surface, hide_labels

    result = fit_surface(hide_labels(load_data("digits-shift"), 2000, seed=1), ["environment"], estimator="additive",
                         covariate="confidence", inference=inference, seed=seed, sample_kwargs=NUTS,
                         confidence_combination="stack")
    d = result.diagnostics
    assert d["widened_scales"] is True and 0.0 < d["confidence_weight"] < 1.0, d
    return result


#: name -> (function of (data, inference, seed), data fixture name)
CASES = {
    "surface-cpredictor": (_surface("cpredictor"), "digits"),
    "surface-additive": (_surface("additive"), "digits"),
    "surface-anchored": (_surface("additive", "confidence", stack_confidence=False), "digits"),
    "surface-anchored-stacked": (_surface("additive", "confidence"), "digits"),  # stacked: the default on a pool
    "surface-anchored-widened": (_widened, "digits"),  # stacked and refitted with the wider residual prior
    "surface-anchored-mixture": (_mixture, "digits"),  # refitted, then mixed with the confidence ("stack")
}
NUTS_ONLY = {"surface-additive", "surface-anchored", "surface-anchored-stacked", "surface-anchored-widened",
             "surface-anchored-mixture"}
MAIN = {"surface-cpredictor": "accuracy"}
