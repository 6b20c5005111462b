"""Scheduler selection: local threads by default, a dask.distributed cluster on request."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from pbassess.counting import count_cells
from pbassess.data.lazy import read_lazy_predictions
from pbassess.data.synthetic import write_synthetic_pool
from pbassess.errors import ConfigError
from pbassess.scale import SCHEDULER_ENV, close_clients, get_client, scheduler_description


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as lc:
        yield lc


def test_default_is_local_threads(monkeypatch):
    monkeypatch.delenv(SCHEDULER_ENV, raising=False)
    assert get_client() is None
    assert scheduler_description() == "local threads"
    with pytest.raises(ConfigError, match="Client or an address"):
        get_client(42)


def test_client_and_environment_send_work_to_the_cluster(tmp_path, cluster, monkeypatch):
    from distributed import Client

    write_synthetic_pool(tmp_path / "pool", 3000, 3, form="probs", labeled_fraction=0.4, rows_per_file=1000,
                         row_group_size=500, seed=2)
    lazy = read_lazy_predictions(tmp_path / "pool", rows_per_chunk=500)
    local = count_cells(lazy, ("predicted", "bin"), item_stats=("nll",))
    with Client(cluster, set_as_default=False) as client:
        before = client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.task_prefixes))
        assert not any(p.startswith("pbassess-read") for p in before)
        remote = count_cells(lazy, ("predicted", "bin"), item_stats=("nll",), client=client)
        after = client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.task_prefixes))
        assert any(p.startswith("pbassess-read") for p in after)     # the reads ran on the cluster
        assert scheduler_description(client) == f"dask.distributed at {cluster.scheduler_address}"
    xr.testing.assert_identical(local, remote)
    monkeypatch.setenv(SCHEDULER_ENV, cluster.scheduler_address)
    via_env = count_cells(lazy, "predicted")
    np.testing.assert_array_equal(via_env["n_pool"], local["n_pool"].sum("bin"))
    assert get_client().scheduler.address == cluster.scheduler_address
    close_clients()
