"""The raid validation study on a real testbed (root): bottom-up calibration and a live subset.

Known values: TCP goodput through an htb-shaped veth is rate x 1448 / 1514 (MTU 1500), so
the calibrated wire rate is the configured one; a blkio read throttle on the disk holding a
directory caps direct reads at its configured rate.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from qnmodel.lab import testbed, validation
from qnmodel.lab.validation import bottomup
from tests.lab.testbed.helpers import leftovers, needs_root, write_topology

pytestmark = [pytest.mark.testbed, pytest.mark.alone, pytest.mark.xdist_group("testbed")]

ROOT = Path(__file__).resolve().parents[3]
QUICK = ROOT / "examples" / "testbed" / "raid_study_quick.toml"

CAL_TOPOLOGY = """
[testbed]
name = "trcal"
[[clients]]
name = "c1"
link = {{ rate = "100 Mbit/s" }}
[[servers]]
name = "s1"
service = "tcp"
file_size = "8 MiB"
link = {{ rate = "100 Mbit/s" }}
disk = {{ kind = "throttled", path = "{path}", read_rate = "20 MB/s" }}
"""


@needs_root
def test_calibration_recovers_link_rate_and_disk_throttle(tmp_path):
    disk_parent = Path("/var/tmp")
    topo = testbed.load_topology(write_topology(tmp_path, CAL_TOPOLOGY.format(path=disk_parent)))
    testbed.up(topo)
    try:
        read = bottomup.link_rate(topo, "c1", "s1", op="read")
        write = bottomup.link_rate(topo, "c1", "s1", op="write")
        disk = bottomup.disk_rate(topo, "s1", op="read")
    finally:
        testbed.down(topo)
    print(f"link read {read['rate']:.5g} ({read['repeats']}), write {write['rate']:.5g}, "
          f"disk {disk['rate']:.5g} ({disk['repeats']}) B/s")  # fmt: skip
    # the configured rates within 5 % (the target); measured here within 1 %
    assert read["rate"] == pytest.approx(12.5e6, rel=0.05)
    assert write["rate"] == pytest.approx(12.5e6, rel=0.05)
    assert disk["configured"] == 20e6 and disk["rate"] == pytest.approx(20e6, rel=0.05)
    assert leftovers("trcal") == []


UNSHAPED = """
[testbed]
name = "trunsh"
[[clients]]
name = "c1"
[[servers]]
name = "s1"
service = "tcp"
port = 5390
"""


@needs_root
def test_link_calibration_of_an_unshaped_link(tmp_path):
    """No rate configured: the requests are sized for 10 Gbit/s (64 MiB at most), and the
    measured rate is the veth's own (1.9-2.6 GB/s here), with no configured rate to meet."""
    topo = testbed.load_topology(write_topology(tmp_path, UNSHAPED))
    testbed.up(topo)
    try:
        r = bottomup.link_rate(topo, "c1", "s1", op="read", repeat=2)
    finally:
        testbed.down(topo)
    assert r["configured"] is None and r["sizes"] == [1448, 1 << 26]
    assert r["rate"] > 125e6  # faster than any link the topologies shape
    assert leftovers("trunsh") == []


@needs_root
def test_quick_raid_study(tmp_path):
    out = tmp_path / "out"
    s = validation.validate(QUICK, out)
    assert leftovers("trraid") == []
    doc = json.loads((out / "summary.json").read_text())
    assert doc["machine"]["cpus"] == os.cpu_count() and doc["machine"]["date"]
    cal = doc["calibration"]
    print(json.dumps({c["label"]: (round(c["mape_x"], 2), round(c["mape_r"], 2),
                                   c["inside_bounds_share"]) for c in s["cases"]}))  # fmt: skip
    print("max calibration error", cal["max_abs_error"])
    # every link direction within 3 % of its configured rate (the target is 5 %):
    # one SCHED_FIFO stream, the slope of two request sizes, the best of 5 repeats; measured
    # 0.07-0.30 % here and in the recorded 100 Mbit/s grid on an idle machine (the median of
    # two streams, before, read up to 12.6 % low while other work loaded the 2 cores)
    assert cal["max_abs_error"] < 0.03
    assert len(s["points"]) == 6

    # The corrected model, from component benchmarks only, against the best of the three
    # repeats (other work on the 2 shared cores only slows a repeat: under load average 12
    # one repeat at N = 1 ran at 50 jobs/s against 60). Recorded full grids
    # (data/validation/raid_100mbit*.json, means): RAID0 1.0-3.9 % MAPE of X, RAID5 one-chunk
    # writes 6-16 %; live runs of this subset, best repeats: 3.9 % and 6.9 %.
    def mape_best(label):
        pts = [p for p in s["points"] if p["case"] == label]
        return validation.mape([p["x_model"] for p in pts], [p["x_best"] for p in pts])

    print("MAPE X, best repeats:", mape_best("RAID0 read, 3 servers, 3 x chunk"),
          mape_best("RAID5 write, 3 servers, 1 x chunk"))  # fmt: skip
    assert mape_best("RAID0 read, 3 servers, 3 x chunk") < 5.0
    assert mape_best("RAID5 write, 3 servers, 1 x chunk") < 15.0
    # BJB's bounds meet at N = 1 (R = D) and are narrow while one station dominates: the
    # recorded grids have 76-92 % of their points inside, live runs 4 or 5 of 6
    assert s["inside_bounds_share"] >= 0.5
    # Repeats with more than 3 % of the CPU stolen by the hypervisor were measured again: the
    # ones used are under it, unless a point ran out of rounds (then it says so)
    st = doc["steal"]
    print("steal", st, [p["steal"] for p in s["points"]])
    assert st["max_steal"] == 0.03 and st["rejected"] == sum(
        len(p["rejected"]) for p in s["points"]
    )
    for p in s["points"]:
        assert len(p["steal"]) == p["repeats"] == 3
        assert sum(v > 0.03 for v in p["steal"]) == p["disturbed"], p["n"]
        assert all(r["steal"] > 0.03 for r in p["rejected"])
    # full-stripe reads follow exact MVA point by point: two live runs with the steal limit
    # -0.9 ... +0.1 % at N = 1, 4, 16; the repeats they set aside, 5.7-7.1 % stolen, read
    # +1.2 ... +2.1 % (before the limit, one run at load average 0.3 read +2.3, +5.1 and
    # +7.8 %: stolen CPU slows the shaped link); 2.5 % allowed,
    # and a point that had to use stolen repeats is only held to the slow side's limit
    for p in s["points"]:
        if not p["case"].startswith("RAID0"):
            continue
        if p["disturbed"]:
            assert p["r_measured"] > 0.975 * p["r_model"], p["n"]
        else:
            assert p["r_measured"] == pytest.approx(p["r_model"], rel=0.025), p["n"]
    # A lone read-modify-write is no faster than a real link lets it be: two phases of
    # 2 chunks (91 frames of 1514 B each way) at 12.5 MB/s, 22.04 ms. The topology's one-frame
    # shaper bucket measured 21.82-21.95 ms; htb's default bucket (10 frames, passed at veth
    # speed after each phase's idle gap) made it 19.70 ms, which this assertion refuses.
    one = [p for p in s["points"] if p["case"].startswith("RAID5") and p["n"] == 1][0]
    link = 2 * 91 * 1514 / 12.5e6
    print(f"RAID5 one-chunk write at N = 1: best {one['r_best']:.5f} s, link {link:.5f} s")
    assert 0.97 * link < one["r_best"] < 1.1 * one["r_model"]


@needs_root
def test_not_root_is_refused_before_anything_is_created(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(testbed.TestbedError, match="needs root"):
        validation.validate(QUICK, tmp_path / "out")
    monkeypatch.undo()
    assert leftovers("trraid") == []


@needs_root
def test_a_server_that_dies_mid_study_leaves_nothing_behind(tmp_path):
    study = tmp_path / "study.toml"
    study.write_text(
        QUICK.read_text().replace('topology = "raid_100mbit.toml"',
                                  f'topology = "{QUICK.parent / "raid_100mbit.toml"}"')
        .replace("populations = [1, 4, 16]", "populations = [1, 2, 3, 4, 5, 6, 7, 8]")
    )  # fmt: skip
    topo = testbed.load_topology(QUICK.parent / "raid_100mbit.toml")
    caught: list[BaseException] = []

    def target():
        try:
            validation.validate(study, tmp_path / "out")
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            caught.append(exc)

    t = threading.Thread(target=target)
    t.start()
    pid = None
    deadline = time.monotonic() + 60
    while pid is None and time.monotonic() < deadline and t.is_alive():
        doc = testbed.status(topo)
        if doc["up"]:
            pid = doc["nodes"]["m2"]["pid"]
        time.sleep(0.2)
    assert pid is not None
    time.sleep(2.0)  # into the calibration
    os.kill(pid, 9)
    t.join(300)
    assert not t.is_alive()
    assert caught and isinstance(caught[0], testbed.TestbedError), caught
    assert leftovers("trraid") == []
    assert not (tmp_path / "out" / "summary.json").exists()
