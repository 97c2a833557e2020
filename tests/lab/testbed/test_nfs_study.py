"""Seed 001's NFS study on the testbed (qnmodel.lab.validation.nfs): spec checks, faults,
live subset.

Known values: a server-cache hit through a 100 Mbit/s link runs at the TCP goodput,
rate x 1448/1514 = 11.96 MB/s (seed 001's b2); a miss with several requests in flight at
min(b2, b4), the disk's blkio throttle b4 = 6 MB/s; one client with one request in flight reads
the disk and then sends, so it lies between the series rate 1/(1/b2 + 1/b4) = 4.0 MB/s (closed
network at N = 1, no overlap) and min(b2, b4); N closed-loop clients of a saturated link see
R(N) = N x D (Little's law), the MVA curve.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time

import pytest

from qnmodel.errors import InvalidModelError, InvalidTypeError, UnitError
from qnmodel.lab import testbed
from qnmodel.lab.validation import nfs as study
from tests._parts import need_built
from tests.lab.testbed.helpers import leftovers, needs_root, write_topology

LIVE = [pytest.mark.testbed, pytest.mark.alone, pytest.mark.xdist_group("testbed"), needs_root]

TOPOLOGY = """
[testbed]
name = "{name}"
[[clients]]
name = "c1"
link = {{ rate = "100 Mbit/s" }}
[[servers]]
name = "s1"
service = "nfs"
link = {{ rate = "100 Mbit/s" }}
disk = {{ kind = "{kind}", path = "/var/tmp"{extra} }}
"""


def spec(**nfs):
    doc = {
        "repeats": 2,
        "runtime": "1 s",
        "miss_seconds": "2 s",
        "configs": [{"link": "100 Mbit/s", "disk": "6 MB/s"}],
    }
    doc.update(nfs)
    return {"study": {"kind": "nfs"}, "nfs": doc}


@pytest.mark.parametrize(
    ("doc", "error", "match"),
    [
        ({"study": {"kind": "raid"}, "nfs": {}}, InvalidModelError, r"study\.kind.*'raid'"),
        ([], InvalidTypeError, "study must be a table"),
        (spec(configs=[]), InvalidModelError, r"nfs\.configs.*at least one"),
        (spec(configs=[{"link": "0 Mbit/s", "disk": "6 MB/s"}]), InvalidModelError,
         r"nfs\.configs\[0\]\.link must be > 0"),
        (spec(configs=[{"link": "100 Mbit/s", "disk": "6 ms"}]), UnitError,
         r"nfs\.configs\[0\]\.disk"),
        (spec(configs=[{"link": "1 Gbit/s", "disk": "6 MB/s", "colour": 1}]), InvalidModelError,
         r"nfs\.configs\[0\]"),
        (spec(repeats=0), InvalidModelError, r"nfs\.repeats must be an integer 1\.\.20"),
        (spec(mixed={"config": 3, "server_hit": [0.5]}), InvalidModelError,
         r"nfs\.mixed\.config must index"),
        (spec(mixed={"server_hit": [1.5]}), InvalidModelError, r"nfs\.mixed\.server_hit.*\[0, 1\]"),
        (spec(clients={"n": [0, 2]}), InvalidModelError, r"nfs\.clients\.n.*1\.\.64"),
        (spec(configs=[{"link": "1 Gbit/s", "disk": "6 MB/s", "cases": "no"}]),
         InvalidModelError, r"nfs\.configs\[0\]\.cases must be true or false"),
        (spec(configs=[{"link": "1 Gbit/s", "disk": "6 MB/s", "cases": False}],
              mixed={"server_hit": [0.5]}), InvalidModelError,
         r"nfs\.mixed\.config needs the pure cases measured"),
        (spec(clients={"n": [1, 2], "runtime": -1}), InvalidModelError,
         r"nfs\.clients\.runtime must be"),
        (spec(clients={"n": [1, 2], "namespaces": "yes"}), InvalidModelError,
         r"nfs\.clients\.namespaces must be true or false, got 'yes'"),
        (spec(writes={"configs": [1]}), InvalidModelError,
         r"nfs\.writes\.configs must be indices of nfs\.configs \(0\.\.0\), got \[1\]"),
        (spec(writes=[0]), InvalidModelError, r"nfs\.writes must be a table"),
        (spec(client_mixed={"client_hit": [0.5, 1.0]}), InvalidModelError,
         r"nfs\.client_mixed\.client_hit must be hit ratios in \(0, 1\)"),
        (spec(client_mixed={"config": 2, "client_hit": [0.5]}), InvalidModelError,
         r"nfs\.client_mixed\.config must index"),
        (spec(b1="stream"), InvalidModelError, r"nfs\.b1 must be one of memcpy, cachehit"),
    ],
)  # fmt: skip
def test_bad_study_specs_are_clear_errors(doc, error, match):
    with pytest.raises(error, match=match):
        study.parse_spec(doc)


def test_spec_defaults_and_units():
    opts = study.parse_spec(spec(clients={"n": [4, 1, 2, 2]}))
    assert opts["bs"] == 2**20 and opts["repeats"] == 2 and opts["runtime"] == 1.0
    assert opts["configs"][0] == {
        "link": 12.5e6,
        "disk": 6e6,
        "label": "100 Mbit/s, disk 6 MB/s",
        "cases": True,
    }
    assert opts["clients"]["n"] == [1, 2, 4] and opts["clients"]["bs"] == 64 * 1024
    assert opts["clients"]["namespaces"] is True  # one namespace (MPI rank) per client
    assert opts["mixed"] is None and opts["writes"] == [] and opts["client_mixed"] is None
    opts = study.parse_spec(spec(writes={"configs": [0, 0]},
                                 client_mixed={"client_hit": [0.75, 0.25]}))  # fmt: skip
    assert opts["writes"] == [0] and opts["client_mixed"] == {
        "config": 0,
        "client_hit": [0.25, 0.75],
    }


def test_study_topology_adds_one_namespace_per_client(tmp_path):
    topo = testbed.load_topology(
        write_topology(tmp_path, TOPOLOGY.format(name="tnst", kind="dir", extra=""))
    )
    t, c, s = study.study_topology(topo, 12.5e6, 50e6, clients=16)
    assert [n.name for n in t.clients] == ["c1"] + [f"c1_{k}" for k in range(2, 17)]
    assert [n.index for n in t.nodes] == list(range(17))  # one /24 each, the server last
    assert len({t.address(n.name) for n in t.nodes}) == 17
    assert all(n.link.rate == 12.5e6 for n in t.nodes) and s == "s1" and c == "c1"


def test_study_topology_sets_the_rates_and_refuses_a_tmpfs_server(tmp_path):
    topo = testbed.load_topology(
        write_topology(tmp_path, TOPOLOGY.format(name="tnst", kind="dir", extra=""))
    )
    t, c, s = study.study_topology(topo, 125e6, 50e6)
    assert (c, s) == ("c1", "s1") and t.node("c1").link.rate == t.node("s1").link.rate == 125e6
    assert t.node("s1").disk.kind == "throttled" and t.node("s1").disk.read_rate == 50e6
    tmpfs = testbed.parse_topology(
        {
            "testbed": {"name": "tnst"},
            "clients": [{"name": "c1"}],
            "servers": [{"name": "s1", "service": "nfs", "disk": {"kind": "tmpfs"}}],
        }
    )
    with pytest.raises(InvalidModelError, match=r"servers\.s1\.disk\.kind = 'tmpfs'.*miss"):
        study.study_topology(tmpfs, 125e6, 50e6)


def test_three_case_model_of_a_configuration():
    m = study.three_case_model(12.5e6, 6e6, 5e9)
    assert m.b2 == pytest.approx(12.5e6 * 1448 / 1514)
    cases = m.case_bandwidths()
    assert cases == {"client_hit": 5e9, "server_hit": m.b2, "miss": 6e6}


def _fake(tmp_path, name, text):
    d = tmp_path / "bin"
    d.mkdir(exist_ok=True)
    (d / name).write_text(f"#!/bin/sh\n{text}\n")
    (d / name).chmod(0o755)
    return d


@pytest.mark.parametrize(
    ("program", "text", "match"),
    [
        ("ganesha.nfsd", "echo 'fake ganesha: cannot load FSAL VFS' >&2; exit 3",
         r"nfs server of 's1' exited with status 3 before listening: .*cannot load FSAL VFS"),
        ("rpcbind", "echo 'fake rpcbind: cannot bind' >&2; exit 4",
         r"nfs server of 's1' exited with status 1 .*rpcbind exited \(status 4\) before it "
         r"listened"),
    ],
)  # fmt: skip
@pytest.mark.testbed
@pytest.mark.alone
@pytest.mark.xdist_group("testbed")
@needs_root
def test_ganesha_or_rpcbind_failing_to_start_is_a_clear_error(tmp_path, monkeypatch, program,
                                                               text, match):  # fmt: skip
    bindir = _fake(tmp_path, program, text)
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    topo = testbed.load_topology(
        write_topology(tmp_path, TOPOLOGY.format(name="tnfail", kind="dir", extra=""))
    )
    with pytest.raises(testbed.TestbedError, match=match):
        testbed.up(topo, install=False)
    assert leftovers("tnfail") == []


@pytest.mark.testbed
@pytest.mark.alone
@pytest.mark.xdist_group("testbed")
@needs_root
def test_ganesha_missing_is_a_clear_error(tmp_path, monkeypatch):
    """Without the package (and without installing it): the script names what is missing."""
    real = subprocess.run(["sh", "-c", "command -v rpcbind"], capture_output=True, text=True)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    os.symlink(real.stdout.strip(), bindir / "rpcbind")
    for tool in ("ip", "tc", "sh", "mount", "mkdir", "unshare", "sysctl", "sleep", "umount"):
        path = subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True,
                              text=True).stdout.strip()  # fmt: skip
        if path:
            os.symlink(path, bindir / tool)
    monkeypatch.setenv("PATH", str(bindir))
    topo = testbed.load_topology(
        write_topology(tmp_path, TOPOLOGY.format(name="tnmiss", kind="dir", extra=""))
    )
    with pytest.raises(testbed.TestbedError, match=r"status 127 .*ganesha\.nfsd is not installed"):
        testbed.up(topo, install=False)
    monkeypatch.setenv("PATH", os.defpath)
    assert leftovers("tnmiss") == []


@pytest.mark.testbed
@pytest.mark.alone
@pytest.mark.xdist_group("testbed")
@needs_root
def test_server_dying_mid_study_stops_it_and_down_leaves_nothing(tmp_path):
    need_built("nfs")
    topo = testbed.load_topology(
        write_topology(tmp_path, TOPOLOGY.format(name="tndie", kind="dir", extra=""))
    )
    killed = []

    def kill_ganesha_once_up():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not killed:
            doc = testbed.status(topo)
            if doc["up"]:
                time.sleep(1.0)  # inside the measurements
                out = subprocess.run(["ip", "netns", "pids", "qnm-tndie-s1"],
                                     capture_output=True, text=True).stdout.split()  # fmt: skip
                for pid in out:
                    try:
                        comm = open(f"/proc/{pid}/comm").read().strip()
                    except OSError:
                        continue
                    if comm == "ganesha.nfsd":
                        os.kill(int(pid), 9)
                        killed.append(int(pid))
            time.sleep(0.05)

    t = threading.Thread(target=kill_ganesha_once_up)
    t.start()
    try:
        with pytest.raises(testbed.TestbedError, match=r"(not running any more|nfs.*failed)"):
            study.run(spec(repeats=3, runtime="2 s"), topo, tmp_path / "out")
    finally:
        t.join()
    assert killed
    assert leftovers("tndie") == []
    assert not (tmp_path / "out" / "summary.json").exists()


# Tolerances from the recorded study (data/validation/nfs_20261123.json, load 12-18 on the 2
# shared cores) and runs of this subset: server hits within 5 %, the pipelined miss within
# 2.0 % at 1 Gbit/s behind a 50 MB/s disk, N = 1..4 clients within 5.3 % (X) and 6.6 % (R).
# The 6 MB/s disk is not used here (slow); its several-readers miss read 7.0-7.7 MB/s until
# passes got qnbench's start barrier and stopped at 50 % of the files (a reader wrapped around
# to its cached head): see data/validation/nfs_slowdisk_20261124.json and the docs page.
@pytest.mark.testbed
@pytest.mark.alone
@pytest.mark.xdist_group("testbed")
@needs_root
def test_live_subset_three_cases_mixture_and_n_clients(tmp_path):
    need_built("nfs")
    topo = testbed.load_topology(
        write_topology(tmp_path, TOPOLOGY.format(name="tnlive", kind="dir", extra=""))
    )
    doc = spec(
        repeats=3,
        miss_seconds="5 s",  # +9 % on 2 s passes before the start barrier and 50 % passes
        configs=[
            {"link": "1 Gbit/s", "disk": "50 MB/s"},
            {"link": "100 Mbit/s", "disk": "50 MB/s", "cases": False},  # only N clients
        ],
        mixed={"config": 0, "server_hit": [0.5]},
        clients={"config": 1, "n": [1, 2, 4], "runtime": "1.5 s"},
    )
    s = study.run(doc, topo, tmp_path / "out")
    assert leftovers("tnlive") == []
    assert (tmp_path / "out" / "summary.json").exists()
    assert {r["config"] for r in s["three_case"]} == {0}
    for i in (0,):
        rows = {r["case"]: r for r in s["three_case"] if r["config"] == i}
        print(i, {k: (round(r["measured"] / 1e6, 3), round(r["err"], 4)) for k, r in rows.items()})
        # evicted means evicted: no page of a miss file was left in the server's cache
        assert max(rows["miss"]["resident_after_evict"]) == 0.0
        # b4 read bottom-up under the throttle recovers the configured rate
        assert s["calibration"][i]["b4"] == pytest.approx(50e6, rel=0.05)
        # server hit: the link's goodput b2; pipelined miss: min(b2, b4)
        # (at 1 Gbit/s the 2 shared cores -- ganesha, libnfs, two htb shapers -- limit a hit:
        # 0.3-7.4 % below b2 in this test's runs at load 4-18, 0.5-2.5 % in the recorded study;
        # at 100 Mbit/s 0.0-0.4 %)
        assert rows["server_hit"]["err"] == pytest.approx(0.0, abs=0.10)
        assert rows["miss"]["err"] == pytest.approx(0.0, abs=0.05)
        # one request in flight: between the series rate and min(b2, b4)
        single = rows["miss_single"]
        assert 0.97 * single["model_series"] <= single["measured"] <= 1.03 * single["model"]
        # client hit: libnfs' page cache, far above the link
        assert rows["client_hit"]["measured"] > 10 * rows["server_hit"]["measured"]
        # b1 both ways, each repeat right before a client-hit repeat: memcpy is the model's
        # (the default), the page-cache copies beside it; paired, both read +6 ... +27 % in
        # nfs_cases_20261124.json (single pairs by hand: hit / cachehit 0.40-1.43)
        cal = s["calibration"][i]
        assert cal["b1_method"] == "memcpy" and cal["b1"] == max(cal["memcpy_B_s"])
        ch = rows["client_hit"]
        assert len(cal["cachehit_B_s"]) == len(cal["memcpy_B_s"]) == len(ch["repeats"]) == 3
        assert ch["model"] == ch["model_memcpy"] and ch["model_cachehit"] > 1e9
        assert abs(ch["err_cachehit_paired"]) < 0.5 and abs(ch["err_memcpy_paired"]) < 0.5
    # h_s = 0.5 at 1 Gbit/s behind 50 MB/s: between the two pure cases
    (mix,) = s["mixed"]
    rows = {r["case"]: r for r in s["three_case"] if r["config"] == 0}
    assert rows["miss_single"]["measured"] < mix["measured"] < rows["server_hit"]["measured"]
    # N clients through 100 Mbit/s, each in its own namespace behind its own link (one MPI
    # rank each): exact MVA within 6 %, Little's law R = N x D. The best of 3 repeats: the
    # link caps each one, other work on the 2 cores only lowers one (the mean of 2 repeats of
    # N jobs in one namespace missed by 18.7 % once during a full test run beside other suites;
    # recorded with namespaces: 0.8 % MAPE, N = 1 3.2 % below MVA)
    print({k: s[k] for k in ("mape_x", "mape_r", "mape_x_best", "mape_r_best")})
    assert s["mape_x_best"] < 6.0 and s["mape_r_best"] < 7.0  # percent
    assert [p["N"] for p in s["points"]] == [1, 2, 4] and s["clients"]["namespaces"]
    assert set(s) >= {"mape_x", "mape_r", "inside_bounds_share", "points", "three_case"}


@pytest.mark.testbed
@pytest.mark.alone
@pytest.mark.xdist_group("testbed")
@needs_root
def test_live_write_runs_at_the_series_rate_not_the_pipelined_one(tmp_path):
    """A write timed through COMMIT + close: the link, then the disk (1/(1/b2 + 1/b4w)).

    Recorded (data/validation/nfs_writes_20261124.json, load 13-18): -1.6 ... +3.5 % against
    the series at 100 Mbit/s and 1 Gbit/s, while seed 001's pipelined min(b2, b4w) is 25-64 %
    high (+24.7 % here, 100 Mbit/s behind a 50 MB/s disk).
    """
    need_built("nfs")
    topo = testbed.load_topology(
        write_topology(tmp_path, TOPOLOGY.format(name="tnwrite", kind="dir", extra=""))
    )
    doc = spec(
        repeats=2,
        miss_seconds="1 s",  # an 11 MiB file
        configs=[{"link": "100 Mbit/s", "disk": "50 MB/s", "cases": False}],
        writes={"configs": [0]},
    )
    s = study.run(doc, topo, tmp_path / "out")
    assert leftovers("tnwrite") == []
    (w,) = s["writes"]
    keys = ("measured", "model", "model_paper", "model_series", "b4_write", "commit_close_s")
    print({k: w[k] for k in keys})
    # b4w read by dd conv=fsync under the 50 MB/s throttle (recorded 42.5-43.6 MB/s)
    assert 0.7 * 50e6 <= max(w["b4_write"]) <= 1.05 * 50e6
    assert w["err_series"] == pytest.approx(0.0, abs=0.08)
    assert w["model_form"] == "corrected" and w["err"] == pytest.approx(0.0, abs=0.08)
    assert w["measured"] < 0.9 * w["model_paper"]  # the pipelined path is far too fast
    assert min(w["commit_close_s"]) > 0.1  # the disk works at the COMMIT


@pytest.mark.testbed
@pytest.mark.alone
@pytest.mark.xdist_group("testbed")
@needs_root
def test_live_cpu_components_client_cache_pages_and_read_cpu_per_byte(tmp_path):
    """The bottom-up CPU components (``components = true``) at 1 Gbit/s, re-measured.

    Recorded (data/validation/nfs_components_20261124.json, load 0.4-2.7, and one earlier
    run at load 0.6): loopback READs 38.5-62.9 us at 4 KiB and 305.7-496.8 us at 1 MiB, slope
    e = 0.26-0.42 ns/B; 1 Gbit/s N = 1 with the term 2.5 % above the mean and 3.3 % below the
    best repeat. Client-cache hits of 1 and 2 pages took 0.23-0.67 us per request. The limits
    leave room for load (at load 5 the constant turnaround had missed N = 1 by 19 %).
    """
    need_built("nfs")
    topo = testbed.load_topology(
        write_topology(tmp_path, TOPOLOGY.format(name="tncpu", kind="dir", extra=""))
    )
    doc = spec(
        repeats=3,
        miss_seconds="1 s",
        components=True,
        configs=[{"link": "1 Gbit/s", "disk": "250 MB/s"}],
        clients={"config": 0, "n": [1, 2], "runtime": "1.5 s"},
    )
    s = study.run(doc, topo, tmp_path / "out")
    assert leftovers("tncpu") == []
    cc = s["calibration"][0]["client_cache"]
    lo = s["clients"]["loopback"]
    ch = next(r for r in s["three_case"] if r["case"] == "client_hit")
    p1 = s["points"][0]
    print({"per_request_us": cc["per_request_s"] * 1e6, "per_page_us": cc["per_page_s"] * 1e6,
           "b1_pages": cc["b1"], "client_hit": ch["measured"], "err_pages": ch["err_pages"],
           "e_ns": lo["per_byte_s"] * 1e9, "err_middle": lo["err_middle"],
           "err_x1": p1["err_X"], "err_x1_flat": p1["err_X_flat"]})  # fmt: skip
    assert s["machine"]["load_average"] and s["machine"]["load_average_after"]
    # the loopback line: a positive slope, within a factor 2.5 of the recorded 0.26-0.42 ns/B
    assert 0.1e-9 <= lo["per_byte_s"] <= 1.0e-9
    assert lo["per_request_s"] > 0
    # N = 1 at 1 Gbit/s: the series model of the constant turnaround within 15 % of the best
    # repeat. An idle machine's one client reaches the link's goodput (119.0-119.2 MB/s): the
    # shaper's 1 ms bucket lets the turnaround overlap the transfer, which a series model
    # cannot (-9.4 % in an idle run, -12.9 % in one CI run). The per-byte term then adds
    # exactly its own time to R(1) = the sum of the demands: (bs - 4096) e per READ, the 4 KiB
    # turnaround having lost its 4096 e (with it: -12.1 / -12.2 % in two idle runs, -15.7 % in
    # that CI run, -2.5 ... -5.4 % under some load). No repeat beats the link.
    bs = 64 * 1024
    assert s["clients"]["turnaround_s"] > 0  # the turnaround is not clamped at zero
    assert p1["X_mva_flat"] == pytest.approx(p1["X_best"], rel=0.15)
    assert bs / p1["X_mva"] - bs / p1["X_mva_flat"] == pytest.approx(
        (bs - 4096) * lo["per_byte_s"], rel=1e-6
    )
    assert p1["X_mva"] <= p1["X_mva_flat"]
    assert p1["X_best"] <= 125e6 * 1448 / 1514 * 1.02
    # N = 2 saturates the link
    assert s["points"][1]["X_best"] == pytest.approx(125e6 * 1448 / 1514, rel=0.05)
    # libnfs' cache: a 1- or 2-page hit costs well under 2 us, and the 1 MiB prediction
    # is b1 = S / (a + 256 c) of those two
    t1, t2 = (min(cc["time_s"][k]) for k in ("4096", "8192"))
    assert 0 < t1 < 2e-6 and 0 < t2 < 2e-6
    a, c = max(2 * t1 - t2, 0.0), max(t2 - t1, 0.0)
    assert cc["b1"] == pytest.approx(1048576 / (a + 256 * c), rel=1e-9)
    assert ch["model_pages"] == cc["b1"]
