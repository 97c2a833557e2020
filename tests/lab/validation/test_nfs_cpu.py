"""The NFS study's bottom-up CPU terms in closed form (no testbed).

* libnfs' client cache: t(S) = a + ceil(S / 4096) c per request, b1(S) = S / t(S); a and c
  through the 1- and 2-page points;
* a READ's CPU per byte e (``NFSSystem.read_cpu_per_byte``): the client delay's demand per
  file is n_req c_c + S e, so one client's response time is the sum of the demands
  (S / b2 + c_c + S e + S / b3 at one request per file) and the N-client curve still
  saturates at the link (the term is private to each client).
"""

from __future__ import annotations

import math
import re

import pytest

from qnmodel.errors import InvalidModelError, InvalidTypeError
from qnmodel.lab.validation import _nfs_cpu, _nfs_more, write_outputs
from qnmodel.lab.validation import nfs as study
from qnmodel.lab.validation._nfs_spec import parse_spec
from qnmodel.models.nfs import NFSBandwidth, NFSSystem
from qnmodel.models.nfs_network import aggregate_bandwidth
from qnmodel.solvers import mva
from tests._tol import closed_form, exact_mva

BS = 64 * 1024
# 1 Gbit/s goodput, memcpy 10 GB/s, 50 MB/s disk
MODEL = NFSBandwidth(b1=10e9, b2=125e6 * 1448 / 1514, b3=10e9, b4=50e6)


def test_line_through_two_points_and_page_cache_bandwidth():
    a, b = _nfs_cpu.fit_line(1, 0.45e-6, 2, 0.55e-6)
    assert (a, b) == pytest.approx((0.35e-6, 0.10e-6), rel=closed_form(3))
    # 64 KiB = 16 pages: 64 KiB / (0.35 + 16 x 0.10 us) = 33.6 GB/s
    assert _nfs_cpu.page_cache_bandwidth(BS, a, b) == pytest.approx(
        65536 / 1.95e-6, rel=closed_form(3)
    )
    # a partial page costs a whole one: 4097 B = 2 pages
    assert _nfs_cpu.page_cache_bandwidth(4097, 0.0, 1e-6) == pytest.approx(4097 / 2e-6)
    assert _nfs_cpu.page_cache_bandwidth(4096, 0.0, 0.0) == math.inf
    with pytest.raises(InvalidModelError, match=r"two distinct x, got 1 twice"):
        _nfs_cpu.fit_line(1, 0.0, 1, 1.0)
    with pytest.raises(InvalidModelError, match=r"size=0"):
        _nfs_cpu.page_cache_bandwidth(0, 1e-6, 1e-6)
    with pytest.raises(InvalidModelError, match=r"per_page=-1e-06"):
        _nfs_cpu.page_cache_bandwidth(4096, 1e-6, -1e-6)


def test_read_cpu_per_byte_is_a_client_delay_demand():
    cc, e = 50e-6, 0.45e-9
    s = NFSSystem(MODEL, rsize=BS, client_cpu_per_request=cc, read_cpu_per_byte=e)
    d = s.demands(BS, "read", 0.0, 1.0)
    assert d["client"] == pytest.approx(cc + BS * e, rel=closed_form(3))
    assert d["network"] == pytest.approx(BS / MODEL.b2, rel=closed_form(2))
    # a 1 MiB file in 16 READs: 16 turnarounds, the per-byte part once per byte
    assert s.demands(16 * BS, "read", 0.0, 1.0)["client"] == pytest.approx(
        16 * cc + 16 * BS * e, rel=closed_form(3)
    )
    # client hits do not pay it, writes do not either (reads only)
    assert s.demands(BS, "read", 1.0, 0.0)["client"] == pytest.approx(BS / MODEL.b1)
    w = NFSSystem(MODEL, wsize=BS, client_cpu_per_request=cc)
    we = NFSSystem(MODEL, wsize=BS, client_cpu_per_request=cc, read_cpu_per_byte=e)
    assert we.demands(BS, "write") == w.demands(BS, "write")
    # N = 1: the serial sum; R = 548.9 (link) + 50 + 29.5 (client) + 6.6 (server copy) us
    res = mva(s.network(BS, "read", 0.0, 1.0), 16)
    r1 = BS / MODEL.b2 + cc + BS * e + BS / MODEL.b3
    assert res.response_time[0] == pytest.approx(r1, rel=exact_mva(4))
    # many clients: the link's goodput (the term is private to each client)
    agg = aggregate_bandwidth(s, 64, BS, client_hit=0.0, server_hit=1.0)
    assert agg.asymptote == pytest.approx(MODEL.b2, rel=closed_form(2))
    assert agg.bottleneck == "network"
    # streaming (pipelined) server hit: min(b2, 1 / (c_c / rsize + e))
    slow = NFSSystem(MODEL, rsize=BS, client_cpu_per_request=cc, read_cpu_per_byte=1e-7)
    assert slow.case_bandwidths()["server_hit"] == pytest.approx(
        1 / (cc / BS + 1e-7), rel=closed_form(3)
    )
    assert s.to_dict()["read_cpu_per_byte"] == e
    # zero is the model without it, bit for bit
    z = NFSSystem(MODEL, rsize=BS, client_cpu_per_request=cc, read_cpu_per_byte=0)
    assert z.demands(BS) == NFSSystem(MODEL, rsize=BS, client_cpu_per_request=cc).demands(BS)


@pytest.mark.parametrize(
    ("value", "error", "match"),
    [
        (-1e-9, InvalidModelError, r"read_cpu_per_byte must be a finite number .* got -1e-09"),
        (math.inf, InvalidModelError, r"read_cpu_per_byte must be a finite number .* got inf"),
        ("1 ns", InvalidTypeError, r"read_cpu_per_byte must be a number of seconds per byte"),
        (True, InvalidTypeError, r"read_cpu_per_byte must be a number .* got True"),
    ],
)
def test_read_cpu_per_byte_bad_input(value, error, match):
    with pytest.raises(error, match=match):
        NFSSystem(MODEL, read_cpu_per_byte=value)


def test_components_key_and_client_hit_rows(tmp_path):
    base = {"study": {"kind": "nfs"}, "nfs": {"configs": [{"link": "1 Gbit/s", "disk": "50 MB/s"}]}}
    assert parse_spec(base)["components"] is False
    base["nfs"]["components"] = True
    assert parse_spec(base)["components"] is True
    base["nfs"]["components"] = 1
    with pytest.raises(InvalidModelError, match=r"nfs\.components must be true or false, got 1"):
        parse_spec(base)
    # a client-hit row compares the measured hit with b1 = memcpy (model) and with the b1 the
    # client-cache component predicts (model_pages)
    cfg = {"label": "x", "link": 125e6, "disk": 50e6}
    model = study.three_case_model(125e6, 50e6, 10e9)
    cases = {
        "client_hit": [4e9, 5e9],
        "server_hit": [119e6],
        "miss_parallel": [49e6],
        "miss": [35e6],
        "resident_after_evict": [0.0],
        "client_cache": {"b1": 5.2e9, "size": 1048576},
        # each b1 repeat measured right before the client-hit repeat of the same index
        "memcpy": [10e9, 9e9],
        "cachehit": [4.4e9, 6e9],
    }
    rows = study._case_rows(0, cfg, model, cases, model)
    ch = next(r for r in rows if r["case"] == "client_hit")
    assert ch["model"] == 10e9 and ch["err"] == pytest.approx(1.0)
    assert ch["model_pages"] == 5.2e9 and ch["err_pages"] == pytest.approx(0.04)
    # both b1s, best repeat against the best hit, and the median of the pairs' errors:
    # memcpy (10 - 4) / 4 = 1.5 and (9 - 5) / 5 = 0.8; cachehit 0.1 and 0.2
    assert (ch["model_memcpy"], ch["err_memcpy"]) == (10e9, pytest.approx(1.0))
    assert ch["err_memcpy_paired"] == pytest.approx(1.15)
    assert (ch["model_cachehit"], ch["err_cachehit"]) == (6e9, pytest.approx(0.2))
    assert ch["err_cachehit_paired"] == pytest.approx(0.15)
    assert "err_memcpy" not in next(r for r in rows if r["case"] == "server_hit")
    # the misses against the series network and the streaming server: at one in flight the
    # stream moves at 1 / (1/b1 + max(1/b2, 1/b4)), the series at 1 / (1/b1 + 1/b2 + 1/b4)
    b1, b2 = 10e9, model.b2
    one = next(r for r in rows if r["case"] == "miss_single")
    assert one["model_streaming"] == pytest.approx(1 / (1 / b1 + 1 / min(b2, 50e6)), rel=1e-12)
    assert one["err_streaming"] == pytest.approx(one["model_streaming"] / 35e6 - 1, rel=1e-12)
    four = next(r for r in rows if r["case"] == "miss")
    assert four["in_flight"] == 4
    assert four["model_streaming"] == _nfs_more.miss_bandwidth(model, 4, "streaming")
    assert four["model_series"] == _nfs_more.miss_bandwidth(model, 4, "series")
    assert _nfs_more.miss_bandwidth(model, 1, "series") == pytest.approx(
        1 / (1 / b1 + 1 / b2 + 1 / 50e6), rel=1e-12
    )
    # four readers keep the slower of disk and link busy: both near min(b2, b4) = b4
    assert four["model_series"] < four["model_streaming"] <= min(b2, 50e6)
    assert four["model_streaming"] == pytest.approx(50e6, rel=0.01)
    s = study._totals({"three_case": rows, "clients": None})
    errs = [one["err_streaming"], four["err_streaming"]]
    assert s["mape_miss_streaming"] == pytest.approx(50 * sum(map(abs, errs)), rel=1e-12)
    # the report's cases section carries both models' errors
    s.update(kind="nfs", title="nfs", topology=None)
    write_outputs(s, tmp_path)
    report = (tmp_path / "report.md").read_text()
    assert re.search(r"\| +x \| +miss \(4 in flight\) \| +49 \|", report), report
    assert f"{100 * four['err_streaming']:.1f} %" in report
    # client hit: +100 % vs memcpy, +4 % vs the pages; server hit -0.1 %; miss +2.0 %
    assert s["three_case_within_5pct"] == [False, True, True]
    assert s["three_case_within_5pct_pages"] == [True, True, True]
    assert s["three_case_within_5pct_memcpy"] == [False, True, True]
