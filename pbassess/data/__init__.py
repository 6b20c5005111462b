"""Data layer: the validated :class:`Predictions` container, file readers and the model zoo."""

from pbassess.data.predictions import Predictions
from pbassess.data.readers import read_predictions
from pbassess.data.registry import list_models, load_data, model_card

__all__ = ["Predictions", "list_models", "load_data", "model_card", "read_predictions"]
