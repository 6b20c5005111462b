"""The names of the surface estimators and inferences (a module without imports: the CLI reads it at start-up).

Examples
--------
>>> ESTIMATORS[0], "advi" in INFERENCES
('cpredictor', True)
"""

__all__ = ["ESTIMATORS", "INFERENCES"]

#: Every estimator of :func:`pbassess.surface.fit_surface`.
ESTIMATORS = ("cpredictor", "beta-i", "berngp", "betagp", "betagp-sl", "betagp-slp", "additive")
#: Its inferences: exact conjugate draws (CPredictor, Beta-I), NUTS, or ADVI (an opt-in fast path).
INFERENCES = ("conjugate", "nuts", "advi")
