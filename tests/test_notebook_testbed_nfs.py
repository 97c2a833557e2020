"""Execute the NFS-on-the-testbed notebook on the recorded study and check what it reports.

The notebook reads ``data/validation/nfs_20261123.json`` (the study recorded with
``python -m qnmodel.lab.validation.nfs examples/validation/nfs.toml
examples/testbed/nfs_study.toml``),
``nfs_clients_20261124.json`` (N clients in N namespaces, ``nfs_clients_*.toml``),
``nfs_writes_20261124.json`` (``examples/validation/nfs_writes.toml``),
``nfs_throttle_20261124.json`` and ``nfs_components_20261124.json`` (the CPU components,
``examples/validation/nfs_components*.toml``); the numbers it prints must be the recorded
ones, and the recorded studies must show what the docs page says they show. MAPEs are
percent, as in every study.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .test_notebooks_user import execute

DIR = Path(__file__).resolve().parent.parent / "data" / "validation"
DATA = [DIR / "nfs_20261123.json"]
CLIENTS = DIR / "nfs_clients_20261124.json"


def recorded() -> dict:
    return json.loads(DATA[-1].read_text())


def test_n_clients_in_n_namespaces_follow_mva():
    doc = json.loads(CLIENTS.read_text())
    assert doc["units"]["mape"] == "percent"
    curves = {c["configs"][0]["link"]: c for c in doc["curves"]}
    assert set(curves) == {12.5e6, 125e6}  # 100 Mbit/s and 1 Gbit/s
    for link, c in curves.items():
        assert c["clients"]["namespaces"] is True and c["clients"]["link_B_s"] == link
        pts = c["points"]
        assert [p["N"] for p in pts] == [1, 2, 3, 4, 6, 8, 12, 16]
        # the shared keys (requests/s) agree with the study's own (bytes/s)
        assert all(p["x_measured"] * 65536 == pytest.approx(p["X_measured"]) for p in pts)
        # saturated (N >= 4): the link's goodput, rate x 1448/1514, and R = N x D (Little)
        for p in (p for p in pts if p["N"] >= 4):
            assert p["X_measured"] == pytest.approx(link * 1448 / 1514, rel=N4_TOL[link])
            assert p["R_measured"] == pytest.approx(p["N"] * 65536 / p["X_measured"], rel=0.01)
        assert c["mape_x"] <= CLIENTS_MAPE_MAX[link] and c["mape_r"] <= CLIENTS_MAPE_MAX[link]
        assert c["inside_bounds_share"] >= 0.75


def test_recorded_study_is_complete_and_holds_what_the_docs_say():
    s = recorded()
    assert s["study"] == "nfs" and s["machine"]["date"] and s["machine"]["cpus"]
    links = {c["link"] for c in s["configs"]}
    assert links == {12.5e6, 125e6}  # 100 Mbit/s and 1 Gbit/s
    for link in links:  # disks slower and faster than each link
        disks = [c["disk"] for c in s["configs"] if c["link"] == link]
        assert min(disks) < link * 1448 / 1514 < max(disks)
    rows = s["three_case"]
    assert {r["case"] for r in rows} == {"client_hit", "server_hit", "miss", "miss_single"}
    # the page cache was really emptied before every miss pass
    assert all(max(r["resident_after_evict"]) == 0.0 for r in rows if "miss" in r["case"])
    # a server hit runs at b2 = rate x 1448/1514 in every configuration
    assert all(abs(r["err"]) <= SERVER_HIT_TOL for r in rows if r["case"] == "server_hit")
    ns = [p["N"] for p in s["points"]]
    assert ns == sorted(ns) and ns[0] == 1 and ns[-1] == 16 and len(ns) >= 6
    assert s["mape_x"] <= MAPE_X_MAX and s["usl"] is not None
    assert len(s["mixed"]) == 3


@pytest.mark.notebook
def test_testbed_nfs_notebook(monkeypatch):
    s = recorded()
    nb, text, elapsed, images = execute("testbed_nfs.ipynb", monkeypatch)
    assert images >= 2
    assert DATA[-1].name in text
    three = [r for r in s["three_case"] if r["case"] in ("client_hit", "server_hit", "miss")]
    inside = sum(abs(r["err"]) <= 0.05 for r in three)
    assert f"three-case bandwidths within 5 % of the model: {inside} of {len(three)}" in text
    assert f"MAPE X {s['mape_x']:.1f} %" in text  # percent, as every study
    rows = re.findall(r"^\s*(\d+)\s+([\d.]+)\s+([\d.]+)\s+[+-][\d.]+%", text, re.M)
    assert [int(r[0]) for r in rows] == [p["N"] for p in s["points"]]
    # the writes table: the model's corrected form, then seed 001's min, per configuration
    for w in json.loads((DIR / "nfs_writes_20261124.json").read_text())["writes"]:
        cells = (f"{w['model'] / 1e6:5.2f} MB/s {100 * w['err']:+6.1f}% "
                 f"{w['model_paper'] / 1e6:8.2f} MB/s {100 * w['err_paper']:+6.1f}%")  # fmt: skip
        assert f"{w['label']:28s} {w['measured'] / 1e6:7.2f} MB/s {cells}" in text
    # the CPU components' section prints the recorded counts and the 1 Gbit/s N = 1 point
    runs = json.loads(COMPONENTS.read_text())["runs"]
    for run in (runs[0], runs[2]):
        assert (
            f"three-case within 5 %: {sum(run['three_case_within_5pct'])} of 12 with b1 = "
            f"memcpy, {sum(run['three_case_within_5pct_pages'])} of 12 with b1 from the pages"
        ) in text
    comp = runs[0]
    p1 = comp["points"][0]
    assert re.search(
        rf"^\s+N =\s+1\s+{p1['X_measured'] / 1e6:.2f}\s+{p1['X_mva'] / 1e6:.2f}\s+"
        rf"{100 * p1['err_X']:+.1f}%\s+{p1['X_mva_flat'] / 1e6:.2f}",
        text,
        re.M,
    )


SERVER_HIT_TOL = 0.03
# recorded: N >= 4 within 2.2 % (100 Mbit/s) and 2.0 % (1 Gbit/s, CPU-bound on 2 cores) of
# the goodput; MAPE X / R 0.83 / 0.85 % and 3.3 / 3.0 % (N = 1 at 1 Gbit/s is 19 % below MVA)
N4_TOL = {12.5e6: 0.03, 125e6: 0.03}
CLIENTS_MAPE_MAX = {12.5e6: 1.5, 125e6: 4.0}
MAPE_X_MAX = 5.0  # percent


def test_writes_follow_the_series_and_the_throttle_is_faithful():
    w = json.loads((DIR / "nfs_writes_20261124.json").read_text())
    assert len(w["writes"]) == 4
    for row in w["writes"]:
        # recorded -3.8 ... +3.5 % against NFSSystem's corrected form (the transfer, then the
        # commit) and the closed network at N = 1 (link, then disk) ...
        assert row["model_form"] == "corrected"
        assert abs(row["err"]) <= 0.05 and abs(row["err_series"]) <= 0.05
        # ... while seed 001's pipelined min(b2, b4w) (form="paper") is 25-64 % high
        assert row["err_paper"] >= 0.20
    mixed = w["client_mixed"]
    assert [r["client_hit"] for r in mixed] == [0.25, 0.5, 0.75]
    assert all(0 < r["err_from_measured_cases"] <= 0.07 for r in mixed)  # +3.8 ... +6.5 %
    thr = json.loads((DIR / "nfs_throttle_20261124.json").read_text())
    assert thr["ganesha_thread_blkio_cgroups"] == ["/qnm-tnthr-s1"]
    runs = thr["runs"]["6 MB/s, 100 Mbit/s link, with the start barrier, passes of 50 %"]
    nfs = [r["value"] for r in runs if r["variant"] == "nfs4"]
    dd = [r["value"] for r in runs if r["variant"] == "dd4"]
    assert max(nfs) <= 1.01 * max(dd)  # 5.96 against 5.94: no overshoot left
    before = thr["runs"]["6 MB/s, 100 Mbit/s link, before the start barrier"]
    assert max(r["value"] for r in before if r["variant"] == "nfs4") > 1.2 * 6.0
    slow = json.loads((DIR / "nfs_slowdisk_20261124.json").read_text())
    rows = {r["case"]: r for r in slow["three_case"]}
    assert abs(rows["miss"]["err"]) <= 0.05 and abs(rows["server_hit"]["err"]) <= 0.03


COMPONENTS = DIR / "nfs_components_20261124.json"


def test_cpu_components_recorded_bottom_up_with_the_machine_load():
    """The CPU components' recording (``examples/validation/nfs_components*.toml``).

    Recorded at load 0.4-2.9: the loopback READ line's slope e = 0.256 and 0.326 ns/B; with
    it, 1 Gbit/s N = 1 is 2.5 % above the measured 115.5 MB/s (0.2 % without it) and the two
    curves have MAPE X 1.7 and 1.4 %. Client hits: 15.8-17.7 GB/s, seed 001's b1 = memcpy
    +18 ... +60 %, b1 from 1- and 2-page hits -1 ... +1404 % (the per-page cost, a difference
    of two sub-microsecond means, moved 0.016-0.258 us between configurations). The second
    three-case run (6 s miss passes, load 2.9): client hits 14.0-16.0 GB/s, memcpy -8 ... +13 %,
    pages -35 ... +118 %.
    """
    doc = json.loads(COMPONENTS.read_text())
    assert doc["units"] == {"mape": "percent", "err": "fraction"}
    three, c100, three6 = doc["runs"]
    for run in doc["runs"]:  # the machine and its load stored with each recording
        m = run["machine"]
        assert m["cpus"] == 2 and len(m["load_average"]) == 3 and len(m["load_average_after"]) == 3
    for run in (three, c100):
        cl = run["clients"]
        lo = cl["loopback"]
        assert lo["sizes"] == [4096, 65536, 1048576]
        # the slope through the best 4 KiB and 1 MiB loopback READs
        r4, r1m = min(lo["response_s"]["4096"]), min(lo["response_s"]["1048576"])
        assert lo["per_byte_s"] == pytest.approx((r1m - r4) / (1048576 - 4096), rel=1e-12)
        assert cl["read_cpu_per_byte_s"] == lo["per_byte_s"]
        assert 0.2e-9 <= lo["per_byte_s"] <= 0.4e-9  # 0.256 and 0.326 ns/B
        # N clients with the term: every point within 5 %, MAPE X <= 2 %
        assert all(abs(p["err_X"]) <= 0.05 for p in run["points"]) and run["mape_x"] <= 2.0
    p1 = three["points"][0]
    assert three["clients"]["link_B_s"] == 125e6 and p1["N"] == 1
    assert p1["err_X"] == pytest.approx(-0.025, abs=0.002)  # with the term
    assert p1["err_X_flat"] == pytest.approx(0.002, abs=0.002)  # the constant turnaround
    assert c100["clients"]["link_B_s"] == 12.5e6
    rows = [r for r in three["three_case"] if r["case"] == "client_hit"]
    assert len(rows) == 4
    # b1 = memcpy overestimates every client hit on the quiet machine (+18 ... +60 %)
    assert all(0.15 <= r["err"] <= 0.65 for r in rows)
    # the page component: b1 = S / (a + 256 c) with a, c through the 1- and 2-page points
    for run in (three, three6):
        rows = [r for r in run["three_case"] if r["case"] == "client_hit"]
        for r, cal in zip(rows, run["calibration"], strict=True):
            cc = cal["client_cache"]
            t1, t2 = min(cc["time_s"]["4096"]), min(cc["time_s"]["8192"])
            a, c = max(2 * t1 - t2, 0.0), max(t2 - t1, 0.0)
            assert r["model_pages"] == pytest.approx(1048576 / (a + 256 * c), rel=1e-9)
    # within 5 %: 7 and 9 of 12 with b1 = memcpy, 8 and 8 with b1 from the pages
    assert [sum(r["three_case_within_5pct"]) for r in (three, three6)] == [7, 9]
    assert [sum(r["three_case_within_5pct_pages"]) for r in (three, three6)] == [8, 8]
    assert three6["clients"] is None and three6["machine"]["load_average"][0] < 4


def test_client_hits_paired_with_two_b1_components():
    """The three cases with b1 measured right before each client-hit repeat
    (``examples/validation/nfs_cases.toml``, ``nfs_cases_20261124.json``, load 0.5-1.6).

    The machine's memory bandwidth had fallen: client hits 5.4-10.3 GB/s, where the quiet
    recordings of the CPU components (above) had 14-18 GB/s.
    Against the hit measured right after it, b1 read +6.1 ... +26.3 % (the page-cache copies,
    qnbench cpu cachehit) and +7.9 ... +26.7 % (memcpy): the two components miss the same
    way, and neither is within 5 %. Server hits and misses are within 2.5 %.
    """
    import tomllib

    from qnmodel.lab.validation._nfs_spec import parse_spec

    toml = DIR.parents[1] / "examples" / "validation" / "nfs_cases.toml"
    opts = parse_spec(tomllib.loads(toml.read_text()))
    assert (opts["b1"], opts["repeats"], opts["miss_seconds"], len(opts["configs"])) == (
        "cachehit", 5, 6.0, 4,
    )  # fmt: skip
    doc = json.loads((DIR / "nfs_cases_20261124.json").read_text())
    assert doc["machine"]["load_average"][0] < 1.0 and doc["machine"]["load_average_after"][0] < 2
    rows = {(r["config"], r["case"]): r for r in doc["three_case"]}
    hits = [rows[(i, "client_hit")] for i in range(4)]
    for r, cal in zip(hits, doc["calibration"], strict=True):
        assert cal["b1_method"] == "cachehit" and cal["b1"] == max(cal["cachehit_B_s"])
        assert r["model"] == r["model_cachehit"] == cal["b1"]
        assert r["model_memcpy"] == max(cal["memcpy_B_s"])
        # the paired error: the median over the 5 repeats of b1 against the hit right after
        for how in ("cachehit", "memcpy"):
            errs = [(m - x) / x for m, x in zip(cal[f"{how}_B_s"], r["repeats"], strict=True)]
            assert r[f"err_{how}_paired"] == pytest.approx(sorted(errs)[2], rel=1e-12)
        assert 5e9 < min(r["repeats"]) and max(r["repeats"]) < 11e9  # GB/s, far above a link
    paired = [(r["err_cachehit_paired"], r["err_memcpy_paired"]) for r in hits]
    assert [(round(100 * a, 1), round(100 * b, 1)) for a, b in paired] == [
        (24.6, 19.4), (26.3, 26.7), (6.1, 7.9), (15.9, 18.7),
    ]  # fmt: skip
    # server hits and the pipelined misses within 2.5 % of seed 001
    assert all(abs(rows[(i, c)]["err"]) < 0.025 for i in range(4) for c in ("server_hit", "miss"))
    # within 5 % of 12: 8 either way (every client hit misses)
    assert sum(doc["three_case_within_5pct"]) == sum(doc["three_case_within_5pct_memcpy"]) == 8
