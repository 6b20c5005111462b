"""Active assessment: the compiled batched simulation engine and the labeling session.

One target model serves both (:mod:`pbassess.active.model`: targets, priors; :mod:`pbassess.active.strategies`:
strategies): ``simulate`` predicts what a session with the same settings does.
"""

from pbassess._lazy import lazy_exports

#: Each public name and the module it lives in (imported on first use: see :mod:`pbassess._lazy`).
_EXPORTS = {
    "labels_to_mrr_table": "pbassess.active.experiment",
    "simulate": "pbassess.active.experiment",
    "PRIORS": "pbassess.active.model",
    "TARGETS": "pbassess.active.model",
    "register_prior": "pbassess.active.model",
    "target_prior": "pbassess.active.model",
    "SimulationResult": "pbassess.active.result",
    "LabelingSession": "pbassess.active.session",
    "SessionPosterior": "pbassess.active.session",
    "STRATEGIES": "pbassess.active.strategies",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "PRIORS", "STRATEGIES", "TARGETS", "LabelingSession", "SessionPosterior", "SimulationResult", "labels_to_mrr_table",
    "register_prior", "simulate", "target_prior",
]
