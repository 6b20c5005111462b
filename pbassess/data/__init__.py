"""Data layer: the validated :class:`Predictions` container, file readers and the model zoo.

:class:`Predictions` is a read-only view over an :class:`xarray.Dataset` (``Predictions.dataset``;
layout in :mod:`pbassess.data._validate`), numpy- or dask-backed; :func:`as_predictions` turns a
DataFrame, a dict of columns, numpy probabilities (and labels), a Dataset, a file or a registered
name into one with the same validation.
"""

from pbassess.data.convert import as_predictions
from pbassess.data.predictions import Predictions
from pbassess.data.readers import read_predictions
from pbassess.data.registry import list_models, load_data, model_card

__all__ = ["Predictions", "as_predictions", "list_models", "load_data", "model_card", "read_predictions"]
