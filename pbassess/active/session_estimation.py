"""Active estimation inside a labeling session, now in :mod:`pbassess.active.session.estimation` (re-exported here)."""

from pbassess.active.session.estimation import (
    UNCERTAINTY,
    check_design,
    default_budget,
    issue_uncertainty_batch,
    new_design,
    session_estimates,
)

__all__ = ["UNCERTAINTY", "check_design", "default_budget", "issue_uncertainty_batch", "new_design", "session_estimates"]
