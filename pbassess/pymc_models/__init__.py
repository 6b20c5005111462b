"""PyMC models over sufficient counts, with named dims and coords (layer 3)."""

from pbassess.pymc_models.accuracy import beta_binomial_model, sample_posterior
from pbassess.pymc_models.calibration import reliability_model
from pbassess.pymc_models.confusion import confusion_model, sample_confusion_model

__all__ = ["beta_binomial_model", "confusion_model", "reliability_model", "sample_confusion_model", "sample_posterior"]
