"""pbassess: Bayesian assessment of black-box classifiers.

Posteriors, not point estimates, for the accuracy, calibration and misclassification cost of
a classifier from few labels, and active choice of which items to label next.
"""

from pbassess.constants import CI_PROB
from pbassess.data import Predictions, list_models, load_data, read_predictions
from pbassess.errors import ConfigError, DataError, PbassessError

__version__ = "0.1.0"

__all__ = [
    "CI_PROB", "ConfigError", "DataError", "PbassessError", "Predictions", "__version__", "list_models",
    "load_data", "read_predictions",
]
