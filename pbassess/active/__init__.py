"""Active assessment: the compiled batched simulation engine and the labeling session."""

from pbassess.active.experiment import labels_to_mrr_table, simulate
from pbassess.active.session import LabelingSession, SessionPosterior

__all__ = ["LabelingSession", "SessionPosterior", "labels_to_mrr_table", "simulate"]
