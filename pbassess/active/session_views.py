"""The session's read-only views, now methods of :class:`pbassess.active.session.LabelingSession` (re-exported here as ``SessionViews``)."""

from pbassess.active.session.session import LabelingSession

#: The views (labels, outstanding, status, report, ...) are methods of the session itself now.
SessionViews = LabelingSession

__all__ = ["SessionViews"]
