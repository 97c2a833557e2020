"""The event simulation of streaming stages (qnmodel.simulate_streaming) and streaming_mva.

References: a lone job's time, serial parts plus the slowest stage's streamed part (exact,
deterministic); a group whose stations carry nothing else is one processor-sharing station
of the largest demand (product form, insensitive to the service law [BCMP75]: exact MVA);
Little's law; the asymptotic bound X <= 1 / D_max ([LZGS84] sec. 5.2); the streaming model's
measured error on an NFS-like read miss (docs/explanation/overlap.md).
"""

from __future__ import annotations

import pytest

import qnmodel as qn
from qnmodel.errors import InvalidModelError, InvalidTypeError, UnitError
from qnmodel.models.streaming import streaming_mva
from qnmodel.simulation.streaming import METHOD_STREAMING

# an NFS read miss: server CPU serial, the disk's read-ahead, the network and the client
# link streaming (the network's other 1 ms serial: its server hits)
NFS = qn.Network.from_demands(
    ["0.3 ms", "4 ms", "3 ms", "3.2 ms"], names=["cpu", "disk", "net", "client"], think_time="2 ms"
)
G = {"disk": "4 ms", "net": "2 ms", "client": "3.2 ms"}


def test_a_lone_job_takes_its_serial_parts_and_the_slowest_stream():
    s = qn.simulate_streaming(NFS, G, 1, think_time=0.0, jobs=100, reps=2)
    # 0.3 (cpu) + 1 (net's serial part) + max(4, 2, 3.2) ms
    assert s.response_time[0] == pytest.approx(5.3e-3, rel=1e-12)
    assert s.response_time_halfwidth[0] == pytest.approx(0.0, abs=1e-15)
    m = streaming_mva(NFS, G, 1, think_time=0.0)
    assert m.response_time[0] == pytest.approx(s.response_time[0], rel=1e-12)
    assert s.method == METHOD_STREAMING


def test_a_group_alone_is_one_processor_sharing_station_of_the_largest_demand():
    net = qn.Network.from_demands([2e-3, 1e-3], names=["disk", "net"], think_time=3e-3)
    s = qn.simulate_streaming(net, {"disk": 2e-3, "net": 1e-3}, [2, 4], jobs=3000, reps=3,
                              seed=4)  # fmt: skip
    exact = qn.mva(qn.Network.from_demands([2e-3], think_time=3e-3), 4)
    for i, n in enumerate((2, 4)):
        r, hw = s.response_time[i], s.response_time_halfwidth[i]
        assert abs(r - exact.response_time[n - 1]) <= hw + 0.01 * r
        assert s.throughput[i] * (r + 3e-3) == pytest.approx(n, rel=0.02)  # Little's law
        # streaming_mva is exact here too
        sm = streaming_mva(net, {"disk": 2e-3, "net": 1e-3}, n)
        assert sm.response_time[n - 1] == pytest.approx(exact.response_time[n - 1], rel=1e-12)


def test_streaming_mva_within_its_measured_error_of_the_simulation():
    # NFS-like miss, Z = 2 ms: the model reads R +10.8 % (N = 2), +6.6 % (4), +2.2 % (16)
    # above the simulation (3 x 3000 cycles, seed N); pessimistic: the slowest stage's
    # queue x its streamed part counts jobs another stage holds back
    for n, err in ((2, 0.12), (4, 0.08), (16, 0.03)):
        s = qn.simulate_streaming(NFS, G, n, jobs=3000, reps=3, seed=n)
        m = streaming_mva(NFS, G, n)
        r, hw = s.response_time[0], s.response_time_halfwidth[0]
        assert 0.0 <= m.response_time[n - 1] / r - 1.0 <= err + hw / r
        assert s.throughput[0] <= 1.0 / 4e-3 * (1 + 1e-3)  # X <= 1 / D_max (the disk)


def test_multi_server_and_delay_stations():
    # a 2-server cpu outside the group, a delay stage in it: at N = 1 still the sum of the
    # serial parts and the slowest stage
    net = qn.Network(
        (qn.Station("cpu", "1 ms", servers=2), qn.Station("wan", "3 ms", kind="delay"),
         qn.Station("disk", "2 ms")),
    )  # fmt: skip
    s = qn.simulate_streaming(net, {"wan": "3 ms", "disk": "2 ms"}, [1, 3], jobs=500, reps=2)
    assert s.response_time[0] == pytest.approx(1e-3 + 3e-3, rel=1e-12)
    # N = 3: the disk (2 ms a job, one server) bounds X by 500/s; the 2-server cpu (1 ms)
    # and the delay stage (no queue) do not; Little's law with Z = 0: X R = N
    x, r = s.throughput[1], s.response_time[1]
    assert x <= 500.0 * (1 + 1e-3) and r >= 4e-3
    assert x * r == pytest.approx(3.0, rel=0.01)


BAD = [
    (dict(network="x"), InvalidTypeError, "network must be a Network, got str"),
    (dict(streamed=[("disk", 1e-3)]), InvalidTypeError, "streamed must be a mapping"),
    (dict(streamed={"disk": 1e-3}), InvalidModelError, "at least two stations"),
    (dict(streamed={"disk": 1e-3, "tape": 1e-3}), InvalidModelError, r"\['tape'\] not in it"),
    (dict(streamed={"disk": 5e-3, "net": 1e-3}), InvalidModelError,
     r"streamed\['disk'\] must lie in \[0, the station's demand 0.004 s\]"),
    (dict(streamed={"disk": "1 MB", "net": 1e-3}), UnitError, r"streamed\['disk'\]"),
    (dict(streamed={"disk": 0, "net": 0}), InvalidModelError, "every streamed part is 0"),
    (dict(N=[]), InvalidModelError, "N must hold at least one population"),
    (dict(N=0), InvalidModelError, r"N\[0\] must be an integer >= 1"),
    (dict(N=20_000), InvalidModelError, "simulate_streaming: N .*: 20000 is more than 10000"),
    (dict(jobs=3), InvalidModelError, "jobs must be an integer >= 10, got 3"),
    (dict(think_time=-1), InvalidModelError, "think_time must be >= 0, got -1"),
    (dict(jobs=1_000_000, reps=3), InvalidModelError, "cycles to simulate"),
]  # fmt: skip


@pytest.mark.parametrize("kw, exc, msg", BAD)
def test_bad_input_names_the_field_and_value(kw, exc, msg):
    args = dict(network=NFS, streamed=G, N=1, jobs=10, reps=1) | kw
    with pytest.raises(exc, match=msg):
        qn.simulate_streaming(**args)


def test_rate_multipliers_are_refused():
    net = qn.Network((qn.Station("disk", "2 ms", rate_multipliers=[1, 1.5]),
                      qn.Station("net", "1 ms")))  # fmt: skip
    with pytest.raises(InvalidModelError, match="station 'disk' has rate_multipliers"):
        qn.simulate_streaming(net, {"disk": 1e-3, "net": 1e-3}, 1)
