"""One home for a server's disk rate: ``qnmodel.lab.validation.bottomup.disk_rate``.

The NFS study (dd / pread of evicted files, dd conv=fsync) and the networked-RAID study
(qnbench ``file`` direct I/O, ``mem``, the emulated device) both measure a server's disk
there, each with its own ``method``. The measurements themselves are replaced by recorders
here (no root, no testbed); the live tests in tests/testbed measure for real.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from types import SimpleNamespace

import pytest

from qnmodel.errors import InvalidModelError
from qnmodel.lab import testbed
from qnmodel.lab.testbed import TestbedError, pagecache
from qnmodel.lab.validation import _nfs_more, bottomup, raid
from qnmodel.lab.validation import nfs as nfs_study

EXAMPLES = Path(__file__).parents[3] / "examples" / "testbed"


@pytest.fixture
def nfs_topo():
    return testbed.load_topology(EXAMPLES / "nfs_study.toml")  # s1: throttled, 6 MB/s


def _called_names(module) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if isinstance(node, ast.Call):
            f = node.func
            names.add(f.id if isinstance(f, ast.Name) else getattr(f, "attr", ""))
    return names


def test_both_studies_measure_the_disk_in_the_one_home():
    for module in (nfs_study, _nfs_more, raid):
        assert module.disk_rate is bottomup.disk_rate, module.__name__
        called = _called_names(module)
        assert "disk_rate" in called, module.__name__
        assert not called & {"disk_read_rate", "disk_write_rate", "_read_rate", "_write_rate"}


class _Recorder:
    def __init__(self, values):
        self.values, self.calls = list(values), []

    def __call__(self, *args, **kwargs):
        self.calls.append((args, kwargs))
        return self.values.pop(0)


def test_dd_and_pread_reads_route_to_the_page_cache_mechanics(monkeypatch, nfs_topo):
    rec = _Recorder([3e6, 1e6, 2e6, 5e6, 4e6])
    monkeypatch.setattr(pagecache, "_read_rate", rec)
    out = bottomup.disk_rate(nfs_topo, "s1", method="dd", files=["a", "b"], repeat=3)
    assert out == {"rate": 2e6, "repeats": [3e6, 1e6, 2e6], "method": "dd", "op": "read",
                   "engine": "dd (evicted files, blkio group)", "configured": 6e6}  # fmt: skip
    assert [c[0][1:] for c in rec.calls] == [("s1", ["a", "b"])] * 3
    out = bottomup.disk_rate(
        nfs_topo, "s1", method="pread", files=["a"], bs="64 KiB", share=0.5, repeat=2
    )
    assert out["rate"] == 4.5e6 and out["repeats"] == [5e6, 4e6]
    assert rec.calls[-1][1] == {"request": 65536, "share": 0.5}


def test_dd_write_routes_to_the_fsync_mechanics(monkeypatch, nfs_topo):
    rec = _Recorder([7e6, 5e6])
    monkeypatch.setattr(pagecache, "_write_rate", rec)
    out = bottomup.disk_rate(
        nfs_topo, "s1", op="write", method="dd", files=["cal.dat"], size=8 * 2**20, repeat=2
    )
    assert out["rate"] == 6e6 and out["repeats"] == [7e6, 5e6]
    assert out["engine"] == "dd conv=fsync (blkio group)" and out["configured"] == 6e6
    assert rec.calls[0][0][1:] == ("s1", "cal.dat", 8 * 2**20)


def test_auto_keeps_the_raid_studys_methods(monkeypatch, nfs_topo):
    """auto on a throttled disk: qnbench file, direct I/O in the blkio group, 64 MiB, median."""
    seen = {}

    def fake_bench(topo, node, engine, **kw):
        seen.update(kw, engine=engine)
        return SimpleNamespace(results=[{"throughput_B_s": v} for v in (5.9e6, 6.3e6, 6.0e6)])

    monkeypatch.setattr(bottomup, "bench_in", fake_bench)
    out = bottomup.disk_rate(nfs_topo, "s1", op="write")
    assert out["method"] == "file" and out["engine"] == "file direct (blkio group)"
    assert out["rate"] == 6.0e6 and out["configured"] == 6e6
    assert seen["engine"] == "file" and seen["access"] == "direct" and seen["throttled"] is True
    assert seen["rw"] == "write" and seen["size"] == "64 MiB" and seen["repeat"] == 3
    # an emulated disk: bs / the calibrated service time of disk_service
    emu = testbed.load_topology(EXAMPLES / "raid_emu.toml")
    svc = {"bs": 65536, "service": 2e-3, "repeats": [2e-3, 4e-3], "configured": 2.155e-3,
           "engine": "tcp loopback"}  # fmt: skip
    monkeypatch.setattr(bottomup, "disk_service", lambda *a, **k: svc)
    out = bottomup.disk_rate(emu, "m1", bs="64 KiB")
    assert out["method"] == "emu" and out["rate"] == 65536 / 2e-3
    assert out["repeats"] == [65536 / 2e-3, 65536 / 4e-3]


def test_disk_rate_bad_input(nfs_topo):
    with pytest.raises(InvalidModelError, match=r"method must be one of .*got 'fio'"):
        bottomup.disk_rate(nfs_topo, "s1", method="fio")
    with pytest.raises(InvalidModelError, match=r"op must be one of 'read', 'write'; got 'rw'"):
        bottomup.disk_rate(nfs_topo, "s1", op="rw")
    with pytest.raises(TestbedError, match=r"method='dd'\) needs files"):
        bottomup.disk_rate(nfs_topo, "s1", method="dd")
    with pytest.raises(TestbedError, match=r"method='pread'\) needs files"):
        bottomup.disk_rate(nfs_topo, "s1", method="pread", files="a.dat")
    with pytest.raises(TestbedError, match="measures reads"):
        bottomup.disk_rate(nfs_topo, "s1", op="write", method="pread", files=["a"])
    with pytest.raises(TestbedError, match="writes one file"):
        bottomup.disk_rate(nfs_topo, "s1", op="write", method="dd", files=["a", "b"], size=2**20)
    with pytest.raises(TestbedError, match="repeat must be an integer >= 1, got 0"):
        bottomup.disk_rate(nfs_topo, "s1", method="dd", files=["a"], repeat=0)
