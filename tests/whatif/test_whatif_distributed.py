"""Dask sweeps (qnmodel.whatif.distributed) give the in-process frame exactly."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import qnmodel as qn
from qnmodel.errors import InvalidTypeError
from qnmodel.whatif import sweep

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.mark.xdist_group("dask")
def test_same_frame_as_in_process(client, capsys):
    net = qn.Network.from_demands([0.01, 0.02, 0.005], think_time=0.1, names=["cpu", "disk", "net"])
    grid = dict(cpu=np.linspace(0.001, 0.02, 7), disk=np.linspace(0.005, 0.05, 11),
                think_time=[0.0, 0.1, 1.0])  # fmt: skip
    a = sweep(net, [1, 8, 32], **grid)
    from qnmodel.whatif.distributed import sweep_distributed

    b = sweep_distributed(net, [1, 8, 32], client=client, chunk_size=40, max_in_flight=2,
                          progress=True, **grid)  # fmt: skip
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert "6/6 chunks" in capsys.readouterr().err  # 231 points in chunks of 40
    with pytest.raises(InvalidTypeError, match="dask.distributed Client"):
        sweep_distributed(net, 4, client=object(), cpu=[0.01])


@pytest.mark.xdist_group("dask")
def test_same_frame_for_a_storage_system(client):
    from qnmodel.models.storage import NetworkedRAID
    from qnmodel.whatif.distributed import sweep_distributed

    raid = NetworkedRAID.cui2006()
    grid = dict(link_rate=["100 Mbit/s", "1 Gbit/s"], disk_rate=["40 MB/s", "80 MB/s"])
    a = sweep(raid, 16, **grid)
    b = sweep_distributed(raid, 16, client=client, chunk_size=1, **grid)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
