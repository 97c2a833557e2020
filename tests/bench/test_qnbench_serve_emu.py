"""The TCP block server with an emulated device (``--engine tcp --serve emu``), over loopback.

Every request the server receives, from all its connections, queues at ONE emulated device of
the server (qnbench ``engines/emu.c``): a request is served in ``a`` seconds, constant or
exponential with that mean, by one of ``--dev-servers`` m servers, first come first served.
The server's disk is then a real FCFS station shared by its clients, and the path around it is
real TCP. The device keeps its own schedule (``engine_stats``: busy time, operations, mean
service), so the utilisation law holds exactly on the device side, and the clients' response
times can be checked against closed forms:

* one client: mean response = mean service + the loopback round trip of the same request
  (measured beside it with ``--serve mem``);
* N clients with exponential think time Z in front of one exponential server: the finite-source
  (machine-repairman) M/M/1 queue, a product-form network whose exact throughput comes from
  mean value analysis ([LZGS84] ch. 6); with m servers the same network with an m-server
  station (load-dependent MVA).

Tolerances come from the sample size: a closed loop's throughput over a window holding n
completions, each an exponential service, has a relative standard deviation of at most
1/sqrt(n) (a renewal count whose cycle has a coefficient of variation <= 1); the tests allow 4
of those against the nominal configuration. Against the closed form evaluated with the
device's *measured* mean service and the clients' measured mean think time most of that
sampling error cancels, and the bound is tighter (measured errors are in the comments).

References
----------
.. [LZGS84] Lazowska E. D., Zahorjan J., Graham G. S., Sevcik K. C., "Quantitative System
   Performance", Prentice-Hall, 1984: utilisation law (eq. 3.1), Little's law (eq. 3.2), exact
   MVA (ch. 6).
"""

from __future__ import annotations

import math

import pytest

import qnmodel
from qnmodel.bench import schema
from tests._steal import results_steal, unstolen

# Times real sleeps and TCP round trips: run alone, after the parallel suite.
pytestmark = pytest.mark.alone


def _run_once(qnb, *args, timeout=120):
    rc, doc, _, err = qnb("--engine", "tcp", "--warmup", "100ms", *args, timeout=timeout)
    assert rc == 0, err
    return schema.validate(doc)["results"]


def run(qnb, *args, timeout=120):
    """One qnbench run, measured again when the hypervisor stole the CPU (tests/_steal.py):
    the round trips and think times here are tenths of a millisecond."""
    return unstolen(lambda: _run_once(qnb, *args, timeout=timeout), results_steal,
                    what=" ".join(map(str, args[:2])))  # fmt: skip


def _loopback_rtt(qnb, bs="4KiB"):
    """Mean response of one client to a memory-serving loopback server (the path's own time)."""
    res = run(qnb, "--serve", "mem", "--bs", bs, "--runtime", "300ms", "--repeat", 3)
    return min(r["latency_s"]["mean"] for r in res)


def test_one_client_sees_the_device_service_plus_the_network(qnb, rt):
    s = 4e-3
    rtt = _loopback_rtt(qnb)
    (res,) = run(qnb, "--serve", "emu", "--dev-latency", "4ms", "--dev-rate", 0, "--dev-dist",
                 "exp", "--bs", "4KiB", "--runtime", "3s", "--seed", 3, *rt)  # fmt: skip
    st = res["engine_stats"]
    n = st["device_ops"][0]
    assert st["service_s"] == pytest.approx(s, rel=1e-12)
    assert st["servers"] == 1
    # every request the client completed was served by the one device, once
    assert abs(n - res["ops"]) <= 1
    # the device's own schedule: the utilisation law U = X S holds exactly but for the window
    # edges (see _edge)
    busy = st["device_busy_s"][0]
    assert abs(busy - n * st["service_s_mean"]) <= _edge(s, 1)
    assert st["utilization"][0] == pytest.approx(busy / res["elapsed_s"], rel=1e-9)
    # the sample mean of n exponential services: relative standard deviation 1/sqrt(n)
    # (n ~ 700: 3.8 %); 4 of them
    assert st["service_s_mean"] == pytest.approx(s, rel=4 / math.sqrt(n))
    # one client never queues: its response is its service plus the loopback path and the
    # server thread's wake-up (measured: +60..+150 us on an idle 2-core machine, rtt ~ 40 us)
    extra = res["latency_s"]["mean"] - st["service_s_mean"]
    assert 0.0 < extra < rtt + 0.5e-3, (extra, rtt)
    assert res["latency_s"]["min"] >= 0.0
    assert res["latency_s"]["mean"] == pytest.approx(s + extra, rel=4 / math.sqrt(n))


def _edge(s, servers):
    """Bound on busy time - ops x mean service over a window: the busy time counts the parts
    inside the window of the (at most m) requests in service at each edge, the operations only
    those finishing inside; each such part is at most one service, and an exponential service
    longer than 10 S has probability e^-10 = 4.5e-5."""
    return 2 * servers * 10 * s


def _closed_form(s, z, n, servers=1):
    """Exact MVA of the finite-source queue: one FCFS station (demand s, m servers), think z."""
    net = qnmodel.Network([qnmodel.Station("device", s, servers=servers)], think_time=z)
    return qnmodel.mva(net, n)


@pytest.mark.parametrize("servers", [1, 2])
def test_n_clients_share_one_fcfs_device_as_the_closed_form_says(qnb, rt, servers):
    # S = 4 ms exponential, think Z = 8 ms exponential, N = 1, 2, 4, 8 clients. One server:
    # U(N) = 0.33, 0.60, 0.91, 1.00; a device per connection (the bug this guards against)
    # would give X = N / (S + Z) instead, 2x..5x more at N >= 4.
    s, z, pops = 4e-3, 8e-3, (1, 2, 4, 8)
    rtt = _loopback_rtt(qnb)
    res = run(qnb, "--serve", "emu", "--dev-latency", "4ms", "--dev-rate", 0, "--dev-dist",
              "exp", "--dev-servers", servers, "--think", "8ms", "--think-dist", "exp",
              "--bs", "4KiB", "--jobs", ",".join(map(str, pops)), "--runtime", "2s",
              "--seed", 11, *rt)  # fmt: skip
    assert [r["jobs"] for r in res] == list(pops)
    nominal = _closed_form(s, z + rtt, max(pops), servers)
    for r in res:
        n_clients = r["jobs"]
        st = r["engine_stats"]
        ops = st["device_ops"][0]
        assert st["servers"] == servers
        x = r["throughput_ops_s"]
        # the utilisation law on the device's own schedule (per server: U = X S / m)
        busy = st["device_busy_s"][0]
        assert abs(busy - ops * st["service_s_mean"]) <= _edge(s, servers)
        assert st["utilization"][0] == pytest.approx(busy / (servers * r["elapsed_s"]), rel=1e-9)
        # Little's law over the clients: N = X (R + Z)
        cycle = r["latency_s"]["mean"] + r["think_s_mean"]
        assert n_clients == pytest.approx(x * cycle, rel=0.02)
        # against the nominal closed form: 4 sampling standard deviations plus 2 % for the
        # network's share of the cycle being estimated from a separate run
        tol = 4 / math.sqrt(r["ops"]) + 0.02
        assert x == pytest.approx(nominal.throughput[n_clients - 1], rel=tol), (n_clients, tol)
        # against the closed form with this point's measured service and think means (the
        # network path is a delay: the response minus the device's residence is its time)
        measured = _closed_form(st["service_s_mean"], r["think_s_mean"] + rtt, n_clients, servers)
        assert x == pytest.approx(measured.throughput[-1], rel=0.05), n_clients


def test_striped_members_draw_independent_service_times(qnb, rt):
    # RAID0 full-stripe reads over 3 loopback block servers, each with its own exponential
    # 4 ms device: one client waits for the slowest of 3 independent services, E[max] = S H_3
    # = 7.33 ms (H_3 = 1 + 1/2 + 1/3). Before the fix every server seeded its connections
    # alike, so the three chunks of a request drew the SAME time and R(1) was S = 4.19 ms.
    # The max of 3 exponentials has sd S sqrt(1 + 1/4 + 1/9) = 1.17 S; over n ~ 270
    # requests the mean's sd is 3.9 %, and 4 of them are allowed (plus the loopback path).
    s = 4e-3
    rc, doc, _, err = qnb("--engine", "stripe", "--member", "tcp", "--serve", "emu",
                          "--dev-latency", "4ms", "--dev-rate", 0, "--dev-dist", "exp",
                          "--members", 3, "--chunk", "64KiB", "--bs", "192KiB", "--jobs", 1,
                          "--runtime", "2s", "--warmup", "100ms", *rt, timeout=120)  # fmt: skip
    assert rc == 0, err
    (r,) = schema.validate(doc)["results"]
    n = r["ops"]
    expected = s * (1 + 1 / 2 + 1 / 3)
    sd = s * math.sqrt(1 + 1 / 4 + 1 / 9) / math.sqrt(n)
    mean = r["latency_s"]["mean"]
    assert expected - 4 * sd <= mean <= expected + 4 * sd + 0.5e-3, (mean, expected, sd)
