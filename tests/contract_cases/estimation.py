"""Contract cases of label-efficient estimation and of the shrinkage calibration model.

``estimate()`` returns a table of several estimators (classical, PPI++, Bayesian), which is not
one posterior; the contract holds on its Bayesian part, ``result.bayes`` (the NUTS fit of the
confidence-informed prior through :func:`pbassess.inference.fit`). Neither model has a closed
form (the estimate's fast path is an approximation, the shrinkage model's grid engine a
numerical integral), so both are NUTS only.
"""

from pbassess.calibration.shrinkage import assess_calibration_shrinkage
from pbassess.cli.estimate import hide_labels
from pbassess.estimation import estimate

NUTS = {"draws": 500, "tune": 600}


def _estimate_bayes(preds, inference, seed, by=None, labels=300):
    pool = hide_labels(preds, labels, seed=seed)
    return estimate(pool, by=by, methods="bayes", inference=inference, seed=seed, sample_kwargs=NUTS).bayes


CASES = {
    # the whole pool in 10 confidence bins, 300 of 899 labels kept
    "estimate-bayes": (lambda p, inf, s: _estimate_bayes(p, inf, s), "digits"),
    # six environments with a calibration offset each (the ood environment has no labels)
    "estimate-bayes-regions": (lambda p, inf, s: _estimate_bayes(p, inf, s, by="environment", labels=400),
                               "digits_shift"),
    "calibration-shrinkage": (lambda p, inf, s: assess_calibration_shrinkage(p, inference=inf, seed=s,
                                                                             sample_kwargs=NUTS), "digits"),
}
NUTS_ONLY = {"estimate-bayes", "estimate-bayes-regions", "calibration-shrinkage"}
