"""The state file of a labeling session, now in :mod:`pbassess.active.session.state` (its public names re-exported here)."""

import os  # noqa: F401  (older code patches ``pbassess.active.state.os``: the os module itself)

from pbassess.active.session.state import (
    DEFAULT_BATCH_SIZE,
    STATE_FORMAT,
    STATE_VERSION,
    atomic_write_bytes,
    check_loaded_state,
    encode_state,
    folder_lock,
    new_state,
    one_line,
    os_reason,
    pool_fingerprint,
    read_state,
    rng_from_state,
    utc_now,
    write_state,
)

__all__ = [
    "DEFAULT_BATCH_SIZE", "STATE_FORMAT", "STATE_VERSION", "atomic_write_bytes", "check_loaded_state", "encode_state",
    "folder_lock", "new_state", "one_line", "os_reason", "pool_fingerprint", "read_state", "rng_from_state",
    "utc_now", "write_state",
]
