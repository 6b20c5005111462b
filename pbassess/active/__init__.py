"""Active assessment: the compiled batched simulation engine and the labeling session.

One target model serves both (:mod:`pbassess.active.model`: targets, priors; :mod:`pbassess.active.strategies`:
strategies): ``simulate`` predicts what a session with the same settings does.
"""

from pbassess.active.experiment import labels_to_mrr_table, simulate
from pbassess.active.model import PRIORS, TARGETS, register_prior, target_prior
from pbassess.active.result import SimulationResult
from pbassess.active.session import LabelingSession, SessionPosterior
from pbassess.active.strategies import STRATEGIES

__all__ = [
    "PRIORS", "STRATEGIES", "TARGETS", "LabelingSession", "SessionPosterior", "SimulationResult", "labels_to_mrr_table",
    "register_prior", "simulate", "target_prior",
]
