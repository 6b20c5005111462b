"""The method names of :func:`pbassess.estimation.estimate` (a module without imports: the CLI reads it at start-up).

Examples
--------
>>> [m for m in METHODS if m not in LEGACY_METHODS]
['classical', 'wilson', 'ppi', 'bayes']
"""

__all__ = ["LEGACY_METHODS", "METHODS"]

#: Method names of :func:`~pbassess.estimation.estimate`.
METHODS: tuple[str, ...] = ("classical", "wald", "wilson", "ppi", "ppi-wald", "bayes")

#: The constructions before 0.2 (Wald intervals, zero width at the boundary), kept by name; ``"all"`` leaves them out.
LEGACY_METHODS: tuple[str, ...] = ("wald", "ppi-wald")
