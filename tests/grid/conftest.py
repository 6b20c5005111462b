"""One 2-worker LocalCluster shared by the grid tests that dispatch to dask (started once)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def local_client():
    """A Client on a LocalCluster of 2 worker processes, one thread each (pbassess.grid.open_client)."""
    from pbassess.grid import open_client

    client, close = open_client("local:2")
    yield client
    close()
