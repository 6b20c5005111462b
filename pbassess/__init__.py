"""pbassess: Bayesian assessment of black-box classifiers.

Posteriors, not point estimates, for the accuracy, calibration and misclassification cost of
a classifier from few labels, and active choice of which items to label next.
"""

from pbassess._version import __version__
from pbassess.constants import CI_PROB
from pbassess.data import Predictions, as_predictions, list_models, load_data, read_predictions
from pbassess.errors import ConfigError, DataError, PbassessError

# Heavier layers (PyMC, numba) load on first use, so that `import pbassess` and the CLI stay fast.
_LAZY = {
    "assess_accuracy": "pbassess.assess", "assess_calibration": "pbassess.assess",
    "assess_confusion": "pbassess.assess", "compare_groups": "pbassess.assess", "compare_models": "pbassess.assess",
    "assess_hierarchical": "pbassess.assess", "assess_hierarchical_calibration": "pbassess.assess",
    "compare_priors": "pbassess.assess", "PriorComparison": "pbassess.assess",
    "estimate": "pbassess.estimation", "fit_surface": "pbassess.surface", "shift_table": "pbassess.shift",
    "AssessmentResult": "pbassess.results", "LabelingSession": "pbassess.active", "simulate": "pbassess.active",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'pbassess' has no attribute {name!r}")


def load_result(path):
    """Load any saved assessment result (``result.save(path)``) back whole, in any process.

    The class is found through the explicit registry :mod:`pbassess.results.registry`
    (nothing needs to be imported first); every group of the DataTree, including the
    pointwise log-likelihood, comes back.

    Parameters
    ----------
    path : str or pathlib.Path
        A file written by ``result.save(path)``.

    Returns
    -------
    AssessmentResult
        An instance of the saved class (e.g. :class:`~pbassess.assess.AccuracyResult`).

    Examples
    --------
    >>> import pbassess, tempfile, os
    >>> result = pbassess.assess_accuracy(pbassess.load_data(), seed=0)
    >>> path = result.save(os.path.join(tempfile.mkdtemp(), "accuracy.nc"))
    >>> pbassess.load_result(path).to_json()["classes"] == result.to_json()["classes"]
    True
    """
    from pbassess.results.base import AssessmentResult

    return AssessmentResult.load(path)

__all__ = [
    "AssessmentResult", "LabelingSession", "assess_accuracy", "assess_calibration", "assess_confusion",
    "assess_hierarchical", "assess_hierarchical_calibration", "compare_groups", "compare_models", "compare_priors",
    "PriorComparison", "estimate", "fit_surface", "shift_table", "load_result",
    "simulate",
    "CI_PROB", "ConfigError", "DataError", "PbassessError", "Predictions", "__version__", "as_predictions", "list_models",
    "load_data", "read_predictions",
]
