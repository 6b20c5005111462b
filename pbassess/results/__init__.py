"""Result layer: xarray posteriors with summaries, plots and save/load."""

from pbassess.results.base import AssessmentResult, mcmc_diagnostics

__all__ = ["AssessmentResult", "mcmc_diagnostics"]
