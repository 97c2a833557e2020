"""The NFS study's summary in the units every study uses, and its report (no testbed).

Known values: exact MVA of seed 001's closed network (the link a queue with D = bs / b2, a
per-request turnaround a delay Z0) and "measured" N-client points made from it by hand, X at
MVA / 1.1 and R at MVA / 1.2 at every N: the model's errors are then +10 % in X and +20 % in
R everywhere, MAPE X 10.0 %, R 20.0 % -- percent, as the raid and stripe kinds and
``qnmodel validate``'s report print them. The response-time bounds are N / the throughput
bounds (no think time), so the measured R = MVA lies inside them.
"""

from __future__ import annotations

import json
import math

import pytest

from qnmodel.lab import validation
from qnmodel.lab.validation import _nfs_runs
from qnmodel.lab.validation import nfs as study
from qnmodel.models.nfs import NFSSystem
from qnmodel.models.nfs_network import aggregate_bandwidth
from qnmodel.solvers import mva

BS = 64 * 1024
NS = (1, 2, 4, 8)


def _summary(x_scale=1.1, r_scale=1.2):
    model = study.three_case_model(12.5e6, 50e6, 5e9)
    system = NFSSystem(model, rsize=BS, client_cpu_per_request=2e-4)
    res = mva(system.network(BS, "read", 0.0, 1.0), max(NS))
    agg = aggregate_bandwidth(system, max(NS), BS, client_hit=0.0, server_hit=1.0)
    points = []
    for n in NS:
        x = res.throughput[n - 1] * BS / x_scale
        r = res.response_time[n - 1] / r_scale
        reps = [
            {"jobs": n, "bs_bytes": BS, "throughput_B_s": x,
             "latency_s": {"mean": r, "p50": r, "p99": 2 * r, "max": 3 * r}}
            for _ in range(3)
        ]  # fmt: skip
        points.append(_nfs_runs._point(n, reps, BS, res, res, agg))
    three = [
        {"case": "server_hit", "model": 11.0, "measured": 10.0, "err": 0.1},
        {"case": "miss", "model": 6.0, "measured": 5.0, "err": 0.2},
        {"case": "miss_single", "model": 1.0, "measured": 2.0, "err": -0.5},
    ]
    s = {"study": "nfs", "three_case": three, "clients": {"points": points, "usl": None}}
    return study._totals(s), res, agg


def test_mape_is_percent_as_in_every_study():
    s, _, _ = _summary()
    assert s["mape_x"] == pytest.approx(10.0, rel=1e-9)
    assert s["mape_r"] == pytest.approx(20.0, rel=1e-9)
    # the three cases only (miss_single is not one of seed 001's three): (10 + 20) / 2
    assert s["mape_three_case"] == pytest.approx(15.0, rel=1e-9)
    assert s["three_case_within_5pct"] == [False, False]
    assert s["units"] == {"mape": "percent", "err": "fraction"}
    # the study agrees with the shared summary of its points (also percent)
    shared = validation.summarize(s["points"])
    assert shared["mape_x"] == pytest.approx(s["mape_x"], rel=1e-12)
    assert shared["mape_r"] == pytest.approx(s["mape_r"], rel=1e-12)


def test_points_carry_the_shared_keys_in_requests_per_second():
    s, res, agg = _summary(1.0, 1.0)
    for p in s["points"]:
        assert set(validation.POINT_KEYS) <= set(p)
        n = p["n"]
        assert p["x_measured"] == pytest.approx(res.throughput[n - 1], rel=1e-12)
        assert p["x_lower"] * BS == pytest.approx(agg.bandwidth_lower[n - 1], rel=1e-12)
        # no think time: R bounds are N / X bounds, and MVA lies between them
        assert p["r_lower"] == pytest.approx(n / p["x_upper"], rel=1e-12)
        assert p["r_lower"] * (1 - 1e-9) <= p["r_model"] <= p["r_upper"] * (1 + 1e-9)
    assert validation.summarize(s["points"])["inside_bounds_share"] == 1.0


def test_validate_report_of_an_nfs_summary_prints_percent(tmp_path):
    s, _, _ = _summary()
    s.update(kind="nfs", title="nfs", topology=None)
    validation.write_outputs(s, tmp_path)
    report = (tmp_path / "report.md").read_text()
    assert "MAPE of X(n): 10.0 %, of R(n): 20.0 %" in report
    assert "MAPE X 10.0 %, R 20.0 %" in report  # the N-clients section
    doc = json.loads((tmp_path / "summary.json").read_text())
    assert math.isclose(doc["mape_x"], 10.0, rel_tol=1e-9)
    assert (tmp_path / "n_clients.png").stat().st_size > 0


def test_a_study_without_n_clients_still_reports(tmp_path):
    """Writes or mixtures only: no MAPE to give, and the report says n/a instead of failing."""
    s = study._totals({"study": "nfs", "three_case": [], "clients": None})
    assert math.isnan(s["mape_x"]) and math.isnan(s["inside_bounds_share"]) and s["points"] == []
    s.update(kind="nfs", title="nfs writes", topology=None)
    validation.write_outputs(s, tmp_path)
    assert "MAPE of X(n): n/a, of R(n): n/a" in (tmp_path / "report.md").read_text()
    assert json.loads((tmp_path / "summary.json").read_text())["mape_x"] is None


def test_write_series_is_the_closed_network_at_one_client():
    """One client writing S bytes: R(1) = the sum of the demands, 1/B = sum of 1/b."""
    from qnmodel.lab.validation._nfs_more import write_series
    from qnmodel.models.nfs import NFSBandwidth

    system = NFSSystem(NFSBandwidth(b1=4e9, b2=12e6, b3=4e9, b4=6e6), wsize=2**20)
    expected = 1.0 / (2 / 4e9 + 1 / 12e6 + 1 / 6e6)  # 3.9999 MB/s
    assert write_series(system, 22 * 2**20) == pytest.approx(expected, rel=1e-12)
    # the model's corrected form: the transfer (at b2) then the commit (at b4), 4 MB/s
    assert system.write_bandwidth() == pytest.approx(1 / (1 / 12e6 + 1 / 6e6), rel=1e-12)
    # seed 001's pipelined write path is the slowest stage: min(b2, b4) = 6 MB/s, 1.5x above
    paper = NFSSystem(NFSBandwidth(b1=4e9, b2=12e6, b3=4e9, b4=6e6), wsize=2**20, form="paper")
    assert paper.write_bandwidth() == pytest.approx(6e6, rel=1e-12)


def test_recorded_writes_are_reproduced_by_both_forms():
    """The recorded write study, from its own b2 and b4w: paper = min, corrected = series.

    data/validation/nfs_writes_20261124.json: seed 001's min(b2, b4w) (``form="paper"``) is
    what the run printed as its model, +24.7 ... +64.3 %; the corrected form (the transfer,
    then the commit) is within -3.8 ... +3.5 % of the measured write bandwidth.
    """
    from pathlib import Path

    from qnmodel.lab.testbed.delay import goodput_factor
    from qnmodel.models.nfs import NFSBandwidth

    doc = json.loads(
        (Path(__file__).parents[3] / "data/validation/nfs_writes_20261124.json").read_text()
    )
    errs, errs_paper = [], []
    for w in doc["writes"]:
        b2, b4w = w["link_B_s"] * goodput_factor(), max(w["b4_write"])
        bw = NFSBandwidth(b1=1e15, b2=b2, b3=1e15, b4=b4w)  # memcpy far above b2
        paper = NFSSystem(bw, wsize=w["bs_bytes"], form="paper").write_bandwidth()
        corrected = NFSSystem(bw, wsize=w["bs_bytes"]).write_bandwidth()
        assert paper == pytest.approx(w["model_paper"], rel=1e-12)  # the run's own number
        assert corrected == pytest.approx(w["model"], rel=1e-12)
        errs.append(corrected / w["measured"] - 1)
        errs_paper.append(paper / w["measured"] - 1)
    assert errs == pytest.approx([-0.0157, -0.0213, 0.0351, -0.0377], abs=5e-5)
    assert errs_paper == pytest.approx([0.4646, 0.2470, 0.4411, 0.6435], abs=5e-5)
