"""The session's posterior result, now in :mod:`pbassess.active.session.result` (re-exported here: saved results name this path)."""

from pbassess.active.session.result import SessionPosterior, session_posterior

__all__ = ["SessionPosterior", "session_posterior"]
