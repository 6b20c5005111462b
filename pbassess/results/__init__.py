"""Result layer: posteriors as ArviZ DataTrees with summaries, sentences, plots and save/load.

Result classes live in :mod:`pbassess.results.accuracy`, ``.calibration``, ``.cost``,
``.compare`` and ``.hierarchical``; :mod:`pbassess.results.registry` maps each metric to its
class so that :func:`pbassess.load_result` works in a fresh process.
"""

from pbassess.results.base import AssessmentResult, mcmc_diagnostics
from pbassess.results.registry import RESULT_CLASSES, register_result_class, result_class

__all__ = ["RESULT_CLASSES", "AssessmentResult", "mcmc_diagnostics", "register_result_class", "result_class"]
