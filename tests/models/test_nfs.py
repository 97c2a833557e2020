"""NFS cache-hit bandwidth model (Cao et al. 2007), protocol costs and the USL."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qnmodel.errors import InvalidModelError, InvalidTypeError, UnitError
from qnmodel.models.nfs import NFSBandwidth, NFSSystem, requests_for
from qnmodel.models.usl import USL, usl_peak_concurrency, usl_throughput

from .._tol import closed_form

GBE = NFSBandwidth("10 GB/s", "1 Gbit/s", "10 GB/s", "80 MB/s")

rates = st.floats(min_value=1e3, max_value=1e12, allow_nan=False, allow_infinity=False)
ratios = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


# --------------------------------------------------------------------------- three cases
def test_units_are_parsed_to_bytes_per_second():
    m = NFSBandwidth("1 GB/s", "940 Mbit/s", "10 GB/s", "80 MB/s")
    assert (m.b1, m.b2, m.b3, m.b4) == (1e9, 117.5e6, 1e10, 80e6)


def test_three_cases_are_the_paper_min_expressions():
    assert GBE.bandwidth(True, False) == 10e9
    assert GBE.bandwidth(True, True) == 10e9
    assert GBE.bandwidth(False, True) == 125e6  # min(b2, b3) = b2
    assert GBE.bandwidth(False, False) == 80e6  # min(b2, b4) = b4
    assert GBE.case_bandwidths() == {"client_hit": 10e9, "server_hit": 125e6, "miss": 80e6}


def test_limiting_hit_ratios_reduce_exactly():
    # awkward values so that 1/(1/b) would not round-trip
    m = NFSBandwidth(3.3e9, 1.1e8, 7.7e9, 9.1e7)
    assert m.bandwidth(1.0, 0.3) == m.b1
    assert m.bandwidth(0.0, 1.0) == min(m.b2, m.b3)
    assert m.bandwidth(0.0, 0.0) == min(m.b2, m.b4)
    arr = m.bandwidth(np.array([1.0, 0.0, 0.0]), np.array([0.5, 1.0, 0.0]))
    assert arr.tolist() == [m.b1, m.b2, m.b4]


def test_time_weighted_mean_by_hand():
    # 1/B = 0.5/10e9 + 0.5*(0.25/125e6 + 0.75/80e6)
    expected = 1.0 / (0.5 / 10e9 + 0.5 * (0.25 / 125e6 + 0.75 / 80e6))
    assert GBE.bandwidth(0.5, 0.25) == pytest.approx(expected, rel=1e-15)


def test_bandwidth_broadcasts_to_a_surface():
    hc = np.linspace(0, 1, 5)[:, None]
    hs = np.linspace(0, 1, 4)[None, :]
    B = GBE.bandwidth(hc, hs)
    assert B.shape == (5, 4)
    assert np.all(np.diff(B, axis=0) > 0) and np.all(np.diff(B[:-1], axis=1) > 0)


def test_bottleneck_names_the_resource():
    assert GBE.bottleneck(True, False) == "b1"
    assert GBE.bottleneck(False, True) == "b2"
    assert GBE.bottleneck(False, False) == "b4"
    ib = NFSBandwidth("10 GB/s", "40 Gbit/s", "10 GB/s", "400 MB/s")
    assert ib.bottleneck(False, False) == "b4"
    assert NFSBandwidth("10 GB/s", "40 Gbit/s", "2 GB/s", "8 GB/s").bottleneck(False, True) == "b3"


@settings(max_examples=150, deadline=None)
@given(rates, rates, rates, rates, ratios, ratios, st.integers(0, 3), st.floats(1.0, 100.0))
def test_property_monotone_in_each_bandwidth(b1, b2, b3, b4, hc, hs, which, factor):
    # the weighted harmonic mean 1 / (hc / b1 + ...) rounds about 10 times on each side
    base = [b1, b2, b3, b4]
    up = list(base)
    up[which] *= factor
    lo = NFSBandwidth(*base).bandwidth(hc, hs)
    hi = NFSBandwidth(*up).bandwidth(hc, hs)
    assert hi >= lo * (1 - closed_form(10))


@settings(max_examples=150, deadline=None)
@given(rates, rates, rates, rates, ratios, ratios)
def test_property_never_above_the_bottleneck_of_the_paths_used(b1, b2, b3, b4, hc, hs):
    m = NFSBandwidth(b1, b2, b3, b4)
    B = m.bandwidth(hc, hs)
    cases = [(hc, b1), ((1 - hc) * hs, min(b2, b3)), ((1 - hc) * (1 - hs), min(b2, b3, b4))]
    used = [b for w, b in cases if w > 0]
    assert min(used) * (1 - closed_form(10)) <= B <= max(used) * (1 + closed_form(10))
    if hc == 0:  # every byte crosses the network and the server memory
        assert B <= min(b2, b3) * (1 + closed_form(10))
    if hc == 0 and hs == 0:
        assert B == min(b2, b3, b4)


# --------------------------------------------------------------------------- bad input
def test_error_hit_ratio_above_one_names_field_and_value():
    with pytest.raises(
        InvalidModelError, match=r"client_hit must be a hit ratio in \[0, 1\], got 1.2"
    ):
        GBE.bandwidth(1.2, 0.0)


def test_error_hit_ratio_negative_in_array_names_index():
    with pytest.raises(InvalidModelError, match=r"server_hit\[1\] must be a hit ratio .* got -0.2"):
        GBE.bandwidth(0.0, [0.1, -0.2])


def test_error_hit_ratio_percent_hint():
    with pytest.raises(InvalidModelError, match=r"got 90.*use 0.9, not 90"):
        GBE.bandwidth(90, 0)


def test_error_hit_ratio_nan():
    with pytest.raises(InvalidModelError, match=r"client_hit must be a hit ratio .* got nan"):
        GBE.bandwidth(float("nan"), 0)


def test_error_hit_ratio_string_is_a_type_error():
    with pytest.raises(InvalidTypeError, match=r"client_hit must be a boolean or a hit ratio"):
        GBE.bandwidth("0.5", 0)


def test_error_bandwidth_zero():
    with pytest.raises(InvalidModelError, match=r"b4 \(storage bandwidth\) must be > 0, got 0"):
        NFSBandwidth(1e9, 1e8, 1e9, 0)


def test_error_bandwidth_wrong_dimension():
    with pytest.raises(UnitError, match=r"b2 \(network bandwidth\).*'1 GB'.*rate"):
        NFSBandwidth(1e9, "1 GB", 1e9, 1e8)


def test_error_bandwidth_ambiguous_unit():
    with pytest.raises(UnitError, match=r"b2 .*ambiguous"):
        NFSBandwidth(1e9, "100 Mb/s", 1e9, 1e8)


def test_error_bottleneck_needs_booleans():
    with pytest.raises(InvalidTypeError, match="must be booleans"):
        GBE.bottleneck(0.5, False)


# --------------------------------------------------------------------------- NFSSystem
def test_system_without_protocol_costs_reduces_to_the_paper_model():
    s = NFSSystem(GBE)
    for hc, hs in [(0, 0), (0, 1), (1, 0), (0.3, 0.6), (0.9, 0.1)]:
        assert s.bandwidth("read", hc, hs) == GBE.bandwidth(hc, hs)
    assert s.case_bandwidths("read") == GBE.case_bandwidths()
    # the paper's write: every byte reaches the disk on close, pipelined: min(b2, b4)
    assert NFSSystem(GBE, form="paper").bandwidth("write") == GBE.miss_bandwidth
    # corrected: the transfer (b2), then the commit (b4)
    assert s.bandwidth("write") == pytest.approx(1 / (1 / 125e6 + 1 / 80e6), rel=closed_form(4))


def test_requests_per_byte_from_rsize_and_wsize():
    s = NFSSystem(GBE, rsize="64 KiB", wsize="16 KiB")
    assert s.requests_per_byte("read") == 1 / 65536
    assert s.requests_per_byte("write") == 1 / 16384


def test_requests_for_uses_ceiling():
    assert requests_for("1 MiB", "32 KiB") == 32
    assert requests_for(32769, 32768) == 2
    assert requests_for(0, "32 KiB") == 0


def test_per_request_server_cpu_limits_small_wsize():
    # c = 1 ms per request: 16 KiB requests -> 16.384 MB/s CPU limit, below the 125 MB/s network
    s = NFSSystem(
        NFSBandwidth("10 GB/s", "1 Gbit/s", "1e15 B/s", "1e15 B/s"),
        wsize="16 KiB",
        server_cpu_per_request="1 ms",
        form="paper",
    )
    cpu = 1.0 / (1e-3 / 16384 + 1e-15)
    assert s.bandwidth("write") == pytest.approx(cpu, rel=closed_form(4))
    assert s.bottleneck("write") == "server_cpu"
    big = NFSSystem(s.bandwidths, wsize="1 MiB", server_cpu_per_request="1 ms", form="paper")
    assert big.bottleneck("write") == "network"
    assert big.bandwidth("write") == pytest.approx(125e6, rel=closed_form(4))
    # corrected: the CPU-bound transfer, then the commit at the (1e15 B/s) disk
    corr = NFSSystem(s.bandwidths, wsize="16 KiB", server_cpu_per_request="1 ms")
    assert corr.bandwidth("write") == pytest.approx(1 / (1 / cpu + 1e-15), rel=closed_form(6))


def test_async_export_merges_disk_writes():
    kw = dict(wsize="32 KiB", disk_access_time="5 ms")
    sync = NFSSystem(GBE, export="sync", **kw)
    asyn = NFSSystem(GBE, export="async", async_merge_size="1 MiB", **kw)
    # per byte at the disk: 1/b4 + a/size
    assert sync.per_byte_times("write")["server_disk"] == pytest.approx(
        1 / 80e6 + 5e-3 / 32768, rel=closed_form(4)
    )
    assert asyn.per_byte_times("write")["server_disk"] == pytest.approx(
        1 / 80e6 + 5e-3 / 2**20, rel=closed_form(4)
    )
    assert asyn.write_bandwidth() > 4 * sync.write_bandwidth()
    # reads do not depend on the export mode
    assert sync.bandwidth("read", 0.2, 0.3) == asyn.bandwidth("read", 0.2, 0.3)


def test_write_timing_without_close_reports_client_memory_speed():
    s = NFSSystem(GBE, form="paper")
    assert s.write_bandwidth(include_close=False) == GBE.b1
    assert s.write_bandwidth(include_close=True) == GBE.miss_bandwidth
    # the clock stopped before close does not reach the disk: the same in both forms
    assert NFSSystem(GBE).write_bandwidth(include_close=False) == GBE.b1
    with pytest.raises(InvalidTypeError, match="include_close"):
        s.write_bandwidth("yes")


def test_write_rejects_hit_ratios():
    with pytest.raises(InvalidModelError, match="flushes every written byte"):
        NFSSystem(GBE).bandwidth("write", 0.5, 0.0)


def test_error_unknown_op_and_export():
    with pytest.raises(InvalidModelError, match=r"op must be one of 'read', 'write'; got 'append'"):
        NFSSystem(GBE).bandwidth("append")
    with pytest.raises(
        InvalidModelError, match=r"export must be one of 'sync', 'async'; got 'nosync'"
    ):
        NFSSystem(GBE, export="nosync")


def test_error_rsize_zero_and_bad_server_cpus():
    with pytest.raises(InvalidModelError, match=r"rsize must be > 0, got 0"):
        NFSSystem(GBE, rsize=0)
    with pytest.raises(InvalidModelError, match=r"server_cpus must be an integer >= 1, got 0"):
        NFSSystem(GBE, server_cpus=0)
    with pytest.raises(InvalidTypeError, match=r"bandwidths must be an NFSBandwidth"):
        NFSSystem((1, 2, 3, 4))


def test_demands_per_file_use_whole_requests():
    s = NFSSystem(
        GBE,
        rsize="32 KiB",
        server_cpu_per_request="100 us",
        client_cpu_per_request="10 us",
        disk_access_time="4 ms",
    )
    S = 100_000  # 4 requests of 32 KiB
    d = s.demands(S, "read", client_hit=0.25, server_hit=0.5)
    # closed forms of a few operations: 2 gamma_n for n roundings on each side (tests/_tol.py)
    assert d["client"] == pytest.approx(0.25 * S / 10e9 + 0.75 * 4 * 10e-6, rel=closed_form(7))
    assert d["network"] == pytest.approx(0.75 * S / 125e6, rel=closed_form(3))
    assert d["server_cpu"] == pytest.approx(0.75 * (4 * 100e-6 + S / 10e9), rel=closed_form(6))
    assert d["server_disk"] == pytest.approx(0.75 * 0.5 * (S / 80e6 + 4 * 4e-3), rel=closed_form(7))
    net = s.network(S, "read", 0.25, 0.5, think_time="1 s")
    assert net.names == ("client", "network", "server_cpu", "server_disk")
    assert net.is_delay.tolist() == [True, False, False, False]
    assert net.think_time == 1.0


def test_client_link_is_a_per_client_delay_station():
    s = NFSSystem(GBE, client_link="100 Mbit/s", server_cpus=2)
    net = s.network("10 MB", "write")
    assert net.names == ("client", "client_link", "network", "server_cpu", "server_disk")
    assert net.is_delay.tolist() == [True, True, False, False, False]
    assert net.station("server_cpu").servers == 2
    assert net.station("client_link").demand == pytest.approx(10e6 / 12.5e6, rel=closed_form(2))
    # the paper's form: one streaming client is held to its own 100 Mbit/s link
    paper = NFSSystem(GBE, client_link="100 Mbit/s", server_cpus=2, form="paper")
    assert paper.write_bandwidth() == pytest.approx(12.5e6, rel=closed_form(3))
    # corrected: the transfer at that link, then the commit at b4 = 80 MB/s
    assert s.write_bandwidth() == pytest.approx(1 / (1 / 12.5e6 + 1 / 80e6), rel=closed_form(4))


# -- the write path's form ----------------------------------------------------------------
def test_corrected_write_is_the_transfer_then_the_commit():
    """1/B_w = 1/B_t + 1/B_d: the transfer's slowest stage, then the disk at the COMMIT."""
    s = NFSSystem(GBE, wsize="1 MiB")
    assert s.form == "corrected"
    # zero protocol costs, memory far faster than the link: 1/(1/b2 + 1/b4)
    expected = 1 / (1 / 125e6 + 1 / 80e6)  # 48.78 MB/s, where min(b2, b4) = 80 MB/s
    assert s.write_bandwidth() == pytest.approx(expected, rel=closed_form(4))
    assert s.bandwidth("write") == s.write_bandwidth()
    assert s.case_bandwidths("write") == {"write": s.write_bandwidth()}
    # with protocol costs: the server CPU (c_s/wsize + 1/b3) is the transfer's slowest
    # stage, the disk pays its positioning per wsize request
    c = NFSSystem(GBE, wsize="1 MiB", server_cpu_per_request="20 ms", disk_access_time="5 ms")
    cpu = 1 / (20e-3 / 2**20 + 1 / 10e9)  # 52.2 MB/s < b2
    disk = 1 / (1 / 80e6 + 5e-3 / 2**20)
    assert c.write_bandwidth() == pytest.approx(1 / (1 / cpu + 1 / disk), rel=closed_form(10))
    # reads, per-byte times, demands and the closed network do not depend on the form
    p = NFSSystem(GBE, wsize="1 MiB", server_cpu_per_request="20 ms", disk_access_time="5 ms",
                  form="paper")  # fmt: skip
    assert p.write_bandwidth() == pytest.approx(min(cpu, disk), rel=closed_form(6))
    assert p.bandwidth("read", 0.2, 0.3) == c.bandwidth("read", 0.2, 0.3)
    assert p.demands("8 MiB", "write") == c.demands("8 MiB", "write")
    assert p.asymptotic_bandwidth("write") == c.asymptotic_bandwidth("write")
    assert p.to_dict()["form"] == "paper" and c.to_dict()["form"] == "corrected"


def test_corrected_write_equals_the_closed_network_at_one_client():
    """Zero protocol costs: B_w = S / R(1) of exact MVA, up to the memory copies 1/b1 + 1/b3."""
    from qnmodel.solvers import mva

    fast = NFSBandwidth(1e15, "100 Mbit/s", 1e15, "6 MB/s")  # memory copies negligible
    s = NFSSystem(fast, wsize="1 MiB")
    S = 22 * 2**20
    corrected = 1 / (1 / 12.5e6 + 1 / 6e6)  # 4.054 MB/s
    assert s.write_bandwidth() == pytest.approx(corrected, rel=closed_form(4))
    closed = float(mva(s.network(S, "write"), 1).throughput[0]) * S
    assert closed == pytest.approx(1 / (2 / 1e15 + 1 / 12.5e6 + 1 / 6e6), rel=1e-12)
    # the two differ by the memory copies alone: 2 x 4.05e6 / 1e15 = 8.1e-9 of the time (the
    # difference of two numbers near 1 keeps ~1e-16 / 8e-9 of relative accuracy: 1.8e-8 seen)
    assert s.write_bandwidth() / closed - 1 == pytest.approx(2 * corrected / 1e15, rel=1e-7)
    # the paper's pipelined form is the slowest stage: 6 MB/s, 1.5 x above
    assert NFSSystem(fast, wsize="1 MiB", form="paper").write_bandwidth() == 6e6


@settings(max_examples=100, deadline=None)
@given(rates, rates, rates, rates, st.floats(0, 1e-3), st.floats(0, 1e-2))
def test_property_corrected_write_below_paper_and_above_serial(b1, b2, b3, b4, c, a):
    """S / sum(D) (all stages in series) <= corrected <= paper (the slowest stage)."""
    kw = dict(server_cpu_per_request=c, disk_access_time=a, wsize=2**20)
    corr = NFSSystem(NFSBandwidth(b1, b2, b3, b4), **kw)
    paper = NFSSystem(NFSBandwidth(b1, b2, b3, b4), form="paper", **kw)
    serial = 1.0 / sum(corr.per_byte_times("write").values())
    assert serial <= corr.write_bandwidth() * (1 + 1e-12)
    assert corr.write_bandwidth() <= paper.write_bandwidth() * (1 + 1e-12)
    # and at least half the paper's: two stages in series, the slower one at the paper's rate
    assert corr.write_bandwidth() >= 0.5 * paper.write_bandwidth() * (1 - 1e-12)


def test_error_bad_form():
    msg = r"form must be one of 'paper', 'corrected'; got 'Paper'"
    with pytest.raises(InvalidModelError, match=msg):
        NFSSystem(GBE, form="Paper")
    with pytest.raises(InvalidModelError, match=r"form must be one of .*; got None"):
        NFSSystem(GBE, form=None)


@settings(max_examples=100, deadline=None)
@given(rates, rates, rates, rates, ratios, ratios, st.floats(0, 1e-3), st.floats(0, 1e-2))
def test_property_single_stream_between_serial_and_saturation(b1, b2, b3, b4, hc, hs, c, a):
    """S / sum(D) (no overlap) <= streaming bandwidth <= saturation of the shared stations."""
    s = NFSSystem(NFSBandwidth(b1, b2, b3, b4), server_cpu_per_request=c, disk_access_time=a)
    per_byte = s.per_byte_times("read", hc, hs)
    serial = 1.0 / sum(per_byte.values())
    stream = s.bandwidth("read", hc, hs)
    sat = s.asymptotic_bandwidth("read", hc, hs)
    assert serial <= stream * (1 + closed_form(12))
    assert stream <= sat * (1 + closed_form(12))


def test_asymptote_of_a_pure_miss_is_the_papers_miss_bandwidth():
    s = NFSSystem(GBE)
    assert s.asymptotic_bandwidth("read", 0, 0) == pytest.approx(80e6, rel=1e-15)
    assert s.asymptotic_bandwidth("read", 0, 1) == pytest.approx(125e6, rel=1e-15)
    assert s.asymptotic_bandwidth("read", 1, 0) == math.inf


# --------------------------------------------------------------------------- USL
def test_usl_formula_and_limits():
    assert usl_throughput(1, 7.0, 0.3, 0.01) == 7.0
    assert usl_throughput(10, 2.0, 0.0, 0.0) == 20.0  # linear
    x = usl_throughput(np.array([1, 4, 16]), 1.0, 0.1, 0.001)
    np.testing.assert_allclose(x, [1, 4 / (1 + 0.3 + 0.012), 16 / (1 + 1.5 + 0.24)], rtol=1e-15)


def test_usl_peak_matches_the_argmax():
    u = USL(lam="11 MB/s", sigma=0.05, kappa=(1 - 0.05) / 18**2)
    assert u.lam == 11e6
    assert u.peak_concurrency == pytest.approx(18.0, rel=1e-14)
    n = np.arange(1, 60)
    assert int(n[np.argmax(u.throughput(n))]) == u.peak_clients == 18
    assert u.max_throughput == pytest.approx(float(u.throughput(18)), rel=closed_form(12))


def test_usl_without_coherency_has_no_peak():
    assert usl_peak_concurrency(0.2, 0.0) == math.inf
    u = USL(2.0, 0.25, 0.0)
    assert u.peak_clients == math.inf and u.max_throughput == 8.0
    assert USL(2.0, 0.0, 0.0).max_throughput == math.inf


def test_usl_efficiency_is_one_at_one_client():
    u = USL(3.0, 0.1, 0.01)
    assert u.efficiency(1) == 1.0
    assert u.efficiency(10) == pytest.approx(1 / (1 + 0.9 + 0.9), rel=closed_form(5))


def test_usl_errors_name_the_coefficient():
    with pytest.raises(InvalidModelError, match=r"sigma must be in \[0, 1\], got 1.5"):
        USL(1.0, 1.5, 0.0)
    with pytest.raises(
        InvalidModelError, match=r"kappa \(coherency\) must be finite and >= 0, got -0.1"
    ):
        USL(1.0, 0.1, -0.1)
    with pytest.raises(InvalidModelError, match=r"lam must be > 0, got 0"):
        USL(0, 0.1, 0.1)
    with pytest.raises(InvalidModelError, match=r"N must be finite and >= 1 \(clients\), got 0.5"):
        usl_throughput([1, 0.5], 1.0, 0.1, 0.1)


def test_usl_evaluation_agrees_with_the_calibration_module():
    usl_fit = pytest.importorskip("qnmodel.calibration.usl", reason="calibration module")
    n = np.arange(1, 65)
    for lam, s, k in [(1.0, 0.0, 0.0), (11e6, 0.05, 0.0029), (3.0, 0.9, 0.1)]:
        np.testing.assert_allclose(
            usl_throughput(n, lam, s, k), usl_fit.usl_throughput(n, lam, s, k), rtol=1e-15
        )
