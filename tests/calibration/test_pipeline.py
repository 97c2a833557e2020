"""Calibrate -> predict -> compare, on synthetic traces with known answers (no binary needed)."""

import numpy as np
import pytest

import qnmodel as qn
from qnmodel.calibration.pipeline import (
    build_device_network,
    calibrate_and_compare,
    compare,
    measured_curve,
)
from qnmodel.errors import InvalidModelError, TraceError
from qnmodel.reporting.report import write_report

from .._tol import closed_form, exact_fit, exact_mva
from .conftest import make_document

A, R, B, K, Z = 4e-3, 80e6, 65536, 4, 0.010
SIZES = [4096 * 4**k for k in range(6)]


def _device_doc():
    return make_document([{"jobs": 1, "bs_bytes": s, "latency": A + s / R} for s in SIZES])


def _closed_doc(jobs=(1, 2, 4, 8, 16, 32), scale=1.0):
    net = qn.Network.from_demands([(A + B / R) / K] * K, think_time=Z)
    m = qn.mva(net, max(jobs))
    pts = []
    for n in jobs:
        x = float(m.throughput[n - 1]) * scale
        pts.append(
            {
                "jobs": n,
                "bs_bytes": B,
                "x": x,
                "latency": n / x - Z,
                "think_s": Z,
                "samples": [x * (1 + 0.01 * (-1) ** k) for k in range(10)],
            }
        )
    doc = make_document(pts)
    doc["options"].update({"devices": K, "think_s": Z, "dev_select": "random"})
    return doc


def _fit_tol() -> float:
    """The device fit's rounding floor on these noise-free latencies (3.7e-15)."""
    return exact_fit(lambda s, a, r: a + s / r, np.array(SIZES, float), {"a": A, "r": R}, ops=2)


def test_exact_data_gives_zero_error_and_full_coverage(tmp_path):
    c = calibrate_and_compare(_device_doc(), _closed_doc())
    fit = c.calibration["device"]
    assert fit.values["a"] == pytest.approx(A, rel=_fit_tol())  # measured 0
    assert fit.values["r"] == pytest.approx(R, rel=_fit_tol())  # measured 6.7e-16
    assert c.network.K == K and c.network.think_time == Z
    # The model's X moves by at most the demand's relative error (the fit's floor) plus both
    # MVA runs' rounding; R = n / X - Z multiplies that by (R + Z) / R <= 1 + Z / R(1) (3.1).
    # Bounds 1.1e-12 % and 3.3e-12 %; measured 1.3e-14 % and 2.4e-14 %.
    x_rel = _fit_tol() + 2 * exact_mva(K)
    assert c.mape_throughput == pytest.approx(0.0, abs=100 * x_rel)
    assert c.mape_response_time == pytest.approx(0.0, abs=100 * x_rel * (1 + Z / (A + B / R)))
    assert c.coverage == 1.0 and c.coverage_aba == 1.0
    md = write_report(c, tmp_path)
    text = md.read_text()
    assert "MAPE of exact MVA vs measured X(N)**: 0.00%" in text
    assert "inside the BJB throughput band**: 100%" in text
    assert (tmp_path / "report.png").stat().st_size > 10_000


def test_a_ten_percent_faster_system_shows_ten_percent_mape():
    c = calibrate_and_compare(_device_doc(), _closed_doc(scale=1.1))
    # model/measured - 1 = 1/1.1 - 1 = -9.09% at every point; an error e in model/measured
    # (fit floor, two MVA runs, 3 roundings) is e / (1 - 1/1.1) = 11 e relative in the MAPE:
    # bound 1.3e-13, measured 5.9e-16
    e = _fit_tol() + 2 * exact_mva(K) + closed_form(3)
    assert c.mape_throughput == pytest.approx(100 * (1 - 1 / 1.1), rel=11 * e)
    assert (c.table["throughput_error_pct"] < 0).all()


def test_measured_curve_error_bars_and_littles_law_propagation():
    mc = measured_curve(_closed_doc(jobs=(1, 8)))
    row = mc.iloc[1]
    s = np.array([row["throughput"] * (1 + 0.01 * (-1) ** k) for k in range(10)])
    from scipy import stats

    half = stats.t.ppf(0.975, 9) * s.std(ddof=1) / np.sqrt(10)
    # the same t half-width on both sides: mean, 10 squared deviations, a square root, 3
    # products (about 40 roundings; measured 0); Little's law adds 3 more
    assert row["throughput_halfwidth"] == pytest.approx(half, rel=closed_form(40))
    assert row["response_time_halfwidth"] == pytest.approx(
        8 / row["throughput"] ** 2 * half, rel=closed_form(43)
    )
    assert bool(row["steady"])


def test_inconsistent_inputs_are_refused():
    doc = _closed_doc()
    doc["results"][1]["bs_bytes"] = 4096
    with pytest.raises(TraceError, match="CLOSED_TRACE must be a closed loop at one request size"):
        calibrate_and_compare(_device_doc(), doc)
    dev = make_document([{"jobs": 2, "bs_bytes": s, "latency": A} for s in SIZES])
    with pytest.raises(TraceError, match="DEVICE_TRACE must sweep request sizes at one client"):
        calibrate_and_compare(dev, _closed_doc())
    import pandas as pd

    net = build_device_network({"a": A, "r": R}, "64 KiB", devices=2)
    assert net.demands[0] == pytest.approx((A + B / R) / 2, rel=closed_form(3))
    # One comparison serves `calibrate` and `report --measured`: either quantity may be
    # missing (its columns are NaN), not both.
    with pytest.raises(InvalidModelError, match="needs a 'throughput' or a 'response_time'"):
        compare(net, pd.DataFrame({"n": [1], "think_time": [1.0]}))
    only_x = compare(net, pd.DataFrame({"n": [1], "throughput": [1.0]}))
    assert np.isnan(only_x.mape_response_time) and only_x.mape_throughput > 0


def test_compare_refuses_populations_that_are_not_positive_integers():
    # Before the fix, n = [0, 2.7, 5] compared n = 0 with the model at N = 5 (index -1)
    # and truncated 2.7 to 2.
    import pandas as pd

    net = build_device_network({"a": A, "r": R}, "64 KiB", devices=2)
    x = qn.mva(net, 5).throughput
    for n, bad in (([0, 2, 5], "0"), ([1, 2.7, 5], "2.7"), ([1, -3, 5], "-3")):
        frame = pd.DataFrame({"n": n, "throughput": x[[0, 1, 4]], "response_time": [1.0] * 3})
        with pytest.raises(
            InvalidModelError, match=rf"measured n\[\d\] must be an integer >= 1, got {bad}"
        ):
            compare(net, frame)


def test_relative_errors_are_model_minus_measured_over_measured():
    import pandas as pd

    net = build_device_network({"a": A, "r": R}, "64 KiB", devices=2)
    m = qn.mva(net, 4)
    measured = pd.DataFrame(
        {"n": [1, 4], "throughput": m.throughput[[0, 3]] * 0.8,
         "response_time": m.response_time[[0, 3]] * 1.25}
    )  # fmt: skip
    c = compare(net, measured)
    # model/measured - 1 = 1/0.8 - 1 = +25% (X), 1/1.25 - 1 = -20% (R): 3 roundings in the
    # ratio, amplified 1.25 / 0.25 = 5 (X) and 0.8 / 0.2 = 4 (R) by the subtraction, one more
    # for x 100 and one for the mean (measured 7.1e-16, bound 5.0e-15)
    rel = 5 * closed_form(5)
    assert c.table["throughput_error_pct"].tolist() == pytest.approx([25.0, 25.0], rel=rel)
    assert c.table["response_time_error_pct"].tolist() == pytest.approx([-20.0, -20.0], rel=rel)
    assert c.mape_throughput == pytest.approx(25.0, rel=rel)
    assert c.mape_response_time == pytest.approx(20.0, rel=rel)


def test_report_names_the_traces_own_sample_interval(tmp_path):
    # The stored closed loop was sampled every 0.5 s; the report said "0.1 s samples".
    # (The synthetic documents of this file carry no interval_s option: their sample times.)
    from pathlib import Path

    traces = Path(__file__).resolve().parents[2] / "data" / "traces"
    c = calibrate_and_compare(traces / "emu-size-sweep.json", traces / "emu-closed-loop.json")
    text = " ".join(c.notes)
    assert "of the 500 ms throughput samples" in text and "100 ms" not in text
    c = calibrate_and_compare(_device_doc(), _closed_doc())  # samples every 0.1 s
    assert "of the 100 ms throughput samples" in " ".join(c.notes)


def test_compare_checks_multiserver_models_against_the_asymptotic_band():
    # BJB assume single-server stations: with a two-server station the band is ABA.
    net = qn.Network((qn.Station("cpu", "10 ms", servers=2), qn.Station("disk", "4 ms")))
    m = qn.mva(net, 8)
    c = compare(net, {"n": [1, 8], "throughput": m.throughput[[0, 7]]})
    assert c.band == "aba" and "throughput_aba_lower" in c.table
    aba = qn.bounds(net, 8, method="aba")
    assert c.table["throughput_aba_upper"].tolist() == aba.throughput_upper[[0, 7]].tolist()
    assert c.mape_throughput == pytest.approx(0.0, abs=1e-12) and c.coverage == 1.0


def test_link_fit_on_minima_ignores_points_slowed_by_other_work():
    # Loopback TCP on a shared host: whole points run slow (their median 3x the stack's cost)
    # while each point's fastest message still costs overhead + S / rate. The fit on the minima
    # recovers both exactly; the default fit on medians is bent by the slowed points.
    from qnmodel.calibration.pipeline import calibrate_link

    ov, rate = 13e-6, 8e9
    sizes = [64, 1024, 16384, 65536, 262144]
    doc = make_document([{"jobs": 1, "bs_bytes": s, "latency": ov + s / rate} for s in sizes])
    doc["engine"] = doc["options"]["engine"] = "tcp"
    for i, res in enumerate(doc["results"]):
        t = ov + res["bs_bytes"] / rate
        res["latency_s"].update(min=t, p50=3 * t if i in (1, 3) else t)
    fit = calibrate_link(doc, latency="min")
    assert fit.values["overhead"] == pytest.approx(ov, rel=1e-6)
    assert fit.values["rate"] == pytest.approx(rate, rel=1e-6)
    assert np.max(np.abs(np.asarray(fit.fitted) / np.asarray(fit.y) - 1)) < 1e-6
    bent = calibrate_link(doc)
    assert abs(bent.values["overhead"] / ov - 1) > 0.1
    with pytest.raises(InvalidModelError, match="latency"):
        calibrate_link(doc, latency="p99")


def _parallel_doc(servers=4, jobs=(1, 2, 4, 8, 16)):
    """A queue-depth sweep (no think time) of one device with ``servers`` constant-time
    servers: X(j) = min(j, m) / S exactly."""
    S = A + B / R
    pts = [
        {"jobs": n, "bs_bytes": B, "x": min(n, servers) / S, "latency": S * max(1, n / servers)}
        for n in jobs
    ]
    doc = make_document(pts)
    doc["options"].update({"devices": 1, "think_s": 0.0, "dev_servers": servers})
    return doc


def test_a_parallel_device_gets_a_hint_naming_the_rate_curve_fitter(tmp_path):
    from qnmodel.calibration import rate_multipliers_from_curve

    c = calibrate_and_compare(_device_doc(), _parallel_doc())
    # (model - measured) / measured with model X = 1/S at every depth: 0, -50, -75, -75, -75 %
    assert c.mape_throughput == pytest.approx(55.0, rel=1e-9)
    (hint,) = c.hints
    assert "MAPE 55.0 %" in hint and "4.0x its one-queue limit" in hint
    assert "qnmodel.fit_rate_multipliers" in hint and "trace says 4 servers" in hint
    assert "**Hint**: the single-queue model misses X" in write_report(c, tmp_path).read_text()
    # ... and the fitter it names does reproduce the measured curve: r(j) = min(j, 4)
    fit = rate_multipliers_from_curve(measured_curve(_parallel_doc()))
    assert fit.rate_multipliers.tolist() == pytest.approx(
        [min(j, 4) for j in range(1, 17)], rel=closed_form(3)
    )
    m = qn.mva(qn.Network([fit.station("device")]), 16)
    assert m.throughput.tolist() == pytest.approx(
        [min(j, 4) / (A + B / R) for j in range(1, 17)], rel=1e-12
    )


def test_a_good_single_queue_fit_gets_no_hint():
    assert calibrate_and_compare(_device_doc(), _closed_doc()).hints == ()
    # a poor fit that is not a parallel device (the model predicts MORE than measured): none
    assert calibrate_and_compare(_device_doc(), _closed_doc(scale=0.5)).hints == ()


def test_report_column_says_the_error_bar_overlaps_the_band():
    """issue 26 item 10: the column headed "in BJB" said "yes" for points outside the band
    whose error bar reached it (the headline counted 6 of 10 inside, the column 10)."""
    from qnmodel.reporting.report import comparison_table

    # 5 % faster than the model, with a +-1 % spread: outside the narrow band of a balanced
    # network, some error bars still reaching it
    c = calibrate_and_compare(_device_doc(), _closed_doc(scale=1.05))
    table = comparison_table(c)
    header = [h.strip() for h in table.splitlines()[0].strip("|").split("|")]
    rows = [[x.strip() for x in r.strip("|").split("|")] for r in table.splitlines()[2:]]
    inside = [r[header.index("in BJB")] for r in rows]  # the point itself inside the band
    meets = [r[header.index("bar meets BJB")] for r in rows]  # its error bar reaches it
    assert inside.count("yes") == int(c.table["inside_bounds"].sum())
    assert meets.count("yes") == int(c.table["inside_bounds_with_error"].sum())
    assert inside.count("yes") <= meets.count("yes")  # a point inside has its bar inside
