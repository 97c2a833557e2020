"""The corrected networked-RAID form (pipelined link, RAID5 read-modify-write), by hand.

Hand values: 64 KiB chunks, MSS 1448 B in 1514 B frames (TCP with timestamps at MTU 1500),
100 Mbit/s = 12.5e6 B/s. A full-stripe RAID0 read over 3 servers moves 196608 B in
ceil(196608 / 1448) = 136 frames: 136 * 1514 / 12.5e6 = 16.47232 ms on the master's link.
The paper's form puts the NIC (eq. 7, the same 16.47232 ms) and the network (eq. 9,
196608 / 12.5e6 = 15.72864 ms) in series. A one-chunk RAID5 write moves 2 chunks each way,
ceil(131072 / 1448) = 91 frames: 11.02192 ms per direction; eq. (4) counts 98304 B out, 68
frames: 8.23616 ms on the NIC.
"""

from __future__ import annotations

import numpy as np
import pytest

from qnmodel import NetworkedRAID
from qnmodel.errors import InvalidModelError
from qnmodel.models.storage_corrected import moved_bytes

from .._tol import closed_form, recursion

C = 65536.0
RATE = 12.5e6


def system(k=3, raid="raid0", op="read", chunks=3, form="corrected", **kw):
    base = dict(
        job_size=chunks * C, stripe_unit=C, stripe_width=k, master_time_per_unit=0.0,
        master_time_per_packet=0.0, server_time_per_unit=0.0, server_time_per_packet=0.0,
        link_rate=RATE, disk_seek=0.0, disk_latency=0.0, disk_rate=1e15, mss=1448.0,
        frame_size=1514.0, raid=raid, op=op, form=form,
    )  # fmt: skip
    base.update(kw)
    return NetworkedRAID(**base)


def test_full_stripe_read_is_one_pipelined_transfer():
    d = system().demands()
    assert list(d) == ["cpu_master", "link_out", "link_in", "cpu_server", "disk"]
    assert d["link_in"] == pytest.approx(136 * 1514 / RATE, rel=1e-12)
    assert d["link_in"] == pytest.approx(0.01647232, rel=1e-12)
    assert d["link_out"] == 0.0
    paper = system(form="paper").demands()
    assert paper["nic_master"] == pytest.approx(0.01647232, rel=1e-12)
    assert paper["network"] == pytest.approx(0.01572864, rel=1e-12)
    # N = 1: the paper's form predicts about half the throughput of the corrected one
    x1 = system().mva(1).throughput[0]
    x1_paper = system(form="paper").mva(1).throughput[0]
    assert x1 == pytest.approx(1 / 0.01647232, rel=1e-6)  # (+ the memory disk, 2e-11 s)
    # (the paper's server NIC, eq. 8, adds 136 / 3 frames / 3 servers: 1.830258 ms)
    assert paper["nic_server"] == pytest.approx(136 / 9 * 1514 / RATE, rel=1e-12)
    assert x1_paper == pytest.approx(1 / sum(paper.values()), rel=1e-9)
    assert x1_paper / x1 == pytest.approx(0.01647232 / 0.03403122, rel=1e-5)


def test_raid5_single_chunk_write_is_read_modify_write():
    s = system(raid="raid5", op="write", chunks=1)
    d = s.demands()
    assert d["link_out"] == pytest.approx(91 * 1514 / RATE, rel=1e-12)
    assert d["link_in"] == pytest.approx(0.01102192, rel=1e-12)
    paper = system(raid="raid5", op="write", chunks=1, form="paper").demands()
    assert paper["nic_master"] == pytest.approx(68 * 1514 / RATE, rel=1e-12)
    # saturation: the paper's eq. (4) predicts about a third too much
    x_sat = 1 / max(d.values())
    x_sat_paper = 1 / max(paper.values())
    assert x_sat == pytest.approx(90.7283, rel=1e-5)
    assert x_sat_paper / x_sat == pytest.approx(91 / 68, rel=1e-12)
    assert s.mva(64).throughput[-1] == pytest.approx(x_sat, rel=0.02)


def test_full_stripe_raid5_write_keeps_eq4():
    # 2 data chunks over 3 servers = a whole stripe: parity from the new data, 3 chunks out
    out, inn, rmw = moved_bytes(2 * C, C, 3, "raid5", "write")
    assert (float(out), float(inn), bool(rmw)) == (3 * C, 0.0, False)
    out, inn, rmw = moved_bytes(C, C, 4, "raid6", "write")
    assert (float(out), float(inn), bool(rmw)) == (3 * C, 3 * C, True)
    out, inn, rmw = moved_bytes(C, C, 3, "raid0", "write")
    assert (float(out), float(inn), bool(rmw)) == (C, 0.0, False)
    out, inn, rmw = moved_bytes(np.array([1, 2, 3]) * C, C, 4, "raid5", "write")
    assert rmw.tolist() == [True, True, False]
    assert out.tolist() == [2 * C, 3 * C, 4 * C]


def test_cpu_counts_what_the_master_moves():
    s = system(raid="raid5", op="write", chunks=1, master_time_per_unit=1e-4,
               master_time_per_packet=1e-6)  # fmt: skip
    # 4 chunks moved (2 in, 2 out), 182 packets
    assert s.demands()["cpu_master"] == pytest.approx(4e-4 + 182e-6, rel=1e-12)
    one = system(server_terms="one_server", server_time_per_unit=2e-5, disk_rate=1e9)
    d = one.demands()
    # each server handles one of the 3 chunks
    assert d["cpu_server"] == pytest.approx(2e-5, rel=1e-12)
    assert d["disk"] == pytest.approx(C / 1e9, rel=1e-12)


def test_forms_in_networks_and_grids():
    s = system(k=4, chunks=4, server_terms="one_server")
    net = s.network(expand_servers=True)
    assert net.names[:3] == ("cpu_master", "link_out", "link_in")
    assert len(net.names) == 3 + 2 * 4
    fj = s.network(structure="forkjoin")
    assert [st.name for st in fj.stations[:3]] == ["cpu_master", "link_out", "link_in"]
    grid = s.demand_grid(stripe_width=np.array([2, 3, 4]), job_size=np.array([2, 3, 4]) * C)
    np.testing.assert_allclose(
        grid["link_in"], [91 * 1514 / RATE, 136 * 1514 / RATE, 182 * 1514 / RATE],
        rtol=closed_form(3),
    )  # fmt: skip
    paper = s.demand_grid(form="paper")
    assert "nic_master" in paper
    assert s.replace(form="paper").demands()["network"] == pytest.approx(
        4 * C / RATE, rel=closed_form(3)
    )
    with pytest.raises(InvalidModelError, match="form"):
        system(form="pipelined")
    # the paper's test bed takes the default form too; its printed form on request
    assert NetworkedRAID.cui2006().form == "corrected"
    assert NetworkedRAID.cui2006(form="paper").form == "paper"


def _default_system(**kw):
    """``system()`` without a ``form`` argument: whatever the class defaults to."""
    s = system(**kw)
    fields = {f: getattr(s, f) for f in s.__dataclass_fields__ if f != "form"}
    return NetworkedRAID(**fields)


def test_corrected_is_the_default_form_everywhere_a_system_is_built():
    assert NetworkedRAID.__dataclass_fields__["form"].default == "corrected"
    s = _default_system()
    assert s.form == "corrected" and s == system(form="corrected")
    assert NetworkedRAID.cui2006().form == "corrected"
    assert NetworkedRAID.from_symbols(**NetworkedRAID.cui2006().symbols()).form == "corrected"
    assert NetworkedRAID.cui2006(op="read").network().names == (
        "cpu_master", "link_out", "link_in", "cpu_server", "disk"
    )  # fmt: skip
    # the paper's form stays one argument away, and reference files may name it
    assert NetworkedRAID.cui2006(form="paper").demands()["network"] == pytest.approx(
        24.0, rel=closed_form(8)
    )
    assert NetworkedRAID.cui2006().replace(form="paper") == NetworkedRAID.cui2006(form="paper")


def test_default_and_paper_forms_differ_as_the_hand_values_say():
    # full-stripe RAID0 read, N = 1: X_paper / X_default = 16.47232 / 34.03122 ms = 0.484
    x1 = _default_system().mva(1).throughput[0]
    x1_paper = system(form="paper").mva(1).throughput[0]
    assert x1 == pytest.approx(1 / 0.01647232, rel=1e-6)
    assert x1_paper / x1 == pytest.approx(0.01647232 / 0.03403122, rel=1e-5)
    assert x1_paper / x1 == pytest.approx(0.484, abs=5e-4)
    # one-chunk RAID5 write: the paper's saturation is 91/68 = 1.34 times the default's
    d = _default_system(raid="raid5", op="write", chunks=1).demands()
    paper = system(raid="raid5", op="write", chunks=1, form="paper").demands()
    ratio = max(d.values()) / max(paper.values())
    assert ratio == pytest.approx(91 / 68, rel=1e-12)
    assert ratio == pytest.approx(1.34, abs=5e-3)


def test_an_unknown_form_is_refused_naming_the_field():
    with pytest.raises(
        InvalidModelError, match="form must be one of 'paper', 'corrected'; got 'pipelined'"
    ):
        NetworkedRAID.cui2006(form="pipelined")
    with pytest.raises(InvalidModelError, match="form"):
        NetworkedRAID.cui2006().replace(form="Paper")


def test_a_master_cache_hit_still_costs_the_masters_per_unit_time():
    # eq. (2): T_mpro S_m / STU_m is paid on a hit too; a full hit left the network empty
    s = system(op="read", master_time_per_unit=1e-4, master_time_per_packet=1e-6)
    miss = s.demands()["cpu_master"]
    assert miss == pytest.approx(3e-4 + 136e-6, rel=1e-12)  # 3 chunks in, 136 packets
    hit = s.replace(master_cache_hit=1.0).demands()
    assert hit["cpu_master"] == pytest.approx(3e-4, rel=1e-12)
    assert hit["link_in"] == hit["disk"] == 0.0
    half = s.replace(master_cache_hit=0.5).demands()["cpu_master"]
    assert half == pytest.approx(3e-4 + 0.5 * 136e-6, rel=1e-12)
    # a full hit leaves the master CPU alone: N = 4 queue at one 3e-4 s station, R = 4 D
    assert s.replace(master_cache_hit=1.0).mva(4).response_time[-1] == pytest.approx(
        12e-4, rel=recursion(4, 4 * 5 + 2)
    )


def test_intermediates_say_what_the_corrected_form_moves():
    i = system(raid="raid5", op="write", chunks=1).intermediates()
    assert (i["bytes_out"], i["bytes_in"], i["read_modify_write"]) == (2 * C, 2 * C, 1.0)
    assert i["raid_bytes"] == 1.5 * C  # eq. (4), the paper's count, kept beside
    i = system().intermediates()  # full-stripe RAID0 read
    assert (i["bytes_out"], i["bytes_in"], i["read_modify_write"]) == (0.0, 3 * C, 0.0)
    assert "bytes_out" not in system(form="paper").intermediates()
