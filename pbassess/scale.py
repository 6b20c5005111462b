"""Where dask work runs: the local threaded scheduler by default, or a dask.distributed cluster.

Every computation pbassess triggers on dask-backed data goes through :func:`compute`:

* ``client=`` (a :class:`distributed.Client`, or a scheduler address such as
  ``"tcp://10.0.0.5:8786"``) sends the work to that cluster;
* otherwise, when the environment variable :data:`SCHEDULER_ENV` (``PBASSESS_DASK_SCHEDULER``)
  holds an address, a client connected to it is made once per process and used;
* otherwise dask's own default applies: the local threaded scheduler, or a distributed client
  the user already made current (``Client(...)`` in the same session).

Start a local cluster and point pbassess at it::

    dask scheduler &                       # prints tcp://HOST:8786
    dask worker tcp://HOST:8786 --nthreads 1 --nworkers 2 &
    PBASSESS_DASK_SCHEDULER=tcp://HOST:8786 pbassess assess pool_dir/

The same command reaches a remote cluster by giving its address.
"""

from __future__ import annotations

import os
from typing import Any

from pbassess.errors import ConfigError

__all__ = ["SCHEDULER_ENV", "close_clients", "compute", "get_client", "scheduler_description"]

#: Environment variable holding a dask.distributed scheduler address.
SCHEDULER_ENV: str = "PBASSESS_DASK_SCHEDULER"

_CLIENTS: dict[str, Any] = {}


def _connect(address: str) -> Any:
    if address not in _CLIENTS:
        try:
            from distributed import Client
        except ImportError:  # pragma: no cover - distributed is a dependency
            raise ConfigError("a scheduler address needs the 'distributed' package") from None
        try:
            _CLIENTS[address] = Client(address, set_as_default=False, timeout="10s")
        except OSError as exc:
            raise ConfigError(f"cannot reach the dask scheduler at {address!r}: {exc}") from None
    return _CLIENTS[address]


def close_clients() -> None:
    """Close the clients made from scheduler addresses (they are otherwise kept for the process).

    Examples
    --------
    >>> close_clients()  # safe to call at any time, also when no client was made
    >>> _CLIENTS
    {}
    """
    while _CLIENTS:
        _, client = _CLIENTS.popitem()
        client.close()


def get_client(client: Any = None) -> Any:
    """The distributed client to use, or ``None`` for dask's default (local threads).

    Parameters
    ----------
    client : distributed.Client or str, optional
        A client, or a scheduler address to connect to; by default the address in
        ``PBASSESS_DASK_SCHEDULER`` if set.

    Examples
    --------
    >>> import os
    >>> if "PBASSESS_DASK_SCHEDULER" not in os.environ:
    ...     assert get_client() is None     # local threads
    """
    if client is None:
        address = os.environ.get(SCHEDULER_ENV, "").strip()
        return _connect(address) if address else None
    if isinstance(client, str):
        return _connect(client)
    if not hasattr(client, "get") or not hasattr(client, "scheduler"):
        raise ConfigError(f"client must be a dask.distributed Client or an address, got {type(client).__name__}")
    return client


def compute(*collections: Any, client: Any = None) -> tuple[Any, ...]:
    """Compute dask collections on the chosen scheduler (see the module docstring).

    Examples
    --------
    >>> import dask.array as da
    >>> compute(da.ones(10, chunks=5).sum())
    (np.float64(10.0),)
    """
    import dask

    chosen = get_client(client)
    if chosen is None:
        return dask.compute(*collections)
    return dask.compute(*collections, scheduler=chosen)


def scheduler_description(client: Any = None) -> str:
    """A short text naming where dask work would run (for logs and benchmark output).

    Examples
    --------
    >>> import os
    >>> if "PBASSESS_DASK_SCHEDULER" not in os.environ:
    ...     print(scheduler_description())
    local threads
    """
    chosen = get_client(client)
    if chosen is not None:
        return f"dask.distributed at {chosen.scheduler.address}"
    import dask

    configured = dask.config.get("scheduler", None)
    return "local threads" if configured in (None, "threads", "threading") else f"dask scheduler {configured!r}"
