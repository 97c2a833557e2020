"""Emulated disks on the testbed: three block servers whose disks are qnbench's emulated device.

Each server's disk (``disk = { kind = "emu", ... }``) is ONE FCFS station of known law inside
its block server (qnbench ``--serve emu``), served 1.5 ms + 64 KiB / (100 MB/s) = 2.155 ms per
64 KiB chunk, exponentially distributed; each server sits behind its own shaped 1 Gbit/s link,
the master behind another. This is seed 002's networked RAID with disks that serve exactly as
the models assume, so what is left between model and measurement is the real part: TCP, the
shapers and the master's CPU.

1. Bottom-up disk calibration (:func:`qnmodel.lab.validation.bottomup.disk_service`, the server's
   block server saturated over loopback, S = m / X) recovers the configured service within
   5 % (the issue's calibration target); its sampling error is 1/sqrt(completions), about
   1.5 % here.
2. The RAID study's own pieces (:mod:`qnmodel.lab.validation.raid`: ``case_model`` from the
   disk rate = chunk / calibrated service, the master CPU per chunk calibrated over loopback
   and the configured link rate; ``predict``; ``measure``) on full-stripe RAID0 reads: the
   fork-join model (each request forks one chunk to every server and joins, [Varki]) against
   measured X(N), R(N).

The link rate is the configured one: bottom-up link calibration at 1 Gbit/s is CPU-bound on
this 2-core machine when other work shares it (0.48 x the configured rate at load average 20,
while the stripe itself moved 0.66 x through the master's link); at 100 Mbit/s it is within
3.3 % (tests/testbed/test_raid_validation.py).

Measured in three runs (``pytest -s``; load average 20, 15, 5): disks +0.7, +3.5, -0.9 %;
+2.3, +3.1, -0.1 %; +0.7, +2.9, -1.2 % (sampling sd 1.5 %). X against the fork-join model at
N = 1, 2, 4, 8, 16: +22.6, -11.3, +6.5, +4.4, -4.1 %; +36.2, +8.1, +17.1, +3.0, +5.0 %;
+38.7, +23.5, +16.1, +1.6, +3.8 % (MAPE 9.8, 13.9, 16.7 %); the in-series MVA of the same
demands is 2-3 times further off at every N. The gap at low N is the model's structure, not
noise: it puts the master link's transfer of all three chunks after the join, while the
chunks of the members that finish first cross the link while the slowest still serves, and an
idle shaper passes a lone chunk at its burst (measured R(1) 4.1-4.2 ms: the expected slowest
of three 2.2 ms exponential disks, 4.0 ms, plus 0.1-0.2 ms; model 5.7 ms). So the issue's
10 % holds here only once the disks are busy (N >= 8); below, the model errs on the safe side
(the -11.3 % at N = 2 was the most loaded run, its clients short of CPU).

3. The overlapped fork-join (``NetworkedRAID.fork_join(N, structure="forkjoin_overlap")``:
   each chunk crosses the master link as soon as its disk is done) against the same
   measurement. Measured in two runs (load average 1.4, 2.9): X +13.4, +5.5, +4.9, -2.2,
   +2.4 % and +12.8, +1.3, +1.5, -2.2, +2.6 % at N = 1, 2, 4, 8, 16, MAPE 5.7 and 4.1 %,
   where join-then-link had +37.4, +24.1, +15.6, +1.8, +3.6 % and +36.7, +19.1, +11.9,
   +1.8, +3.7 % (MAPE 16.5, 14.6 %); R(1) model 4.72 ms, measured 4.17-4.18 ms. What is
   left at N = 1 is the shaper's burst: an idle link passes a lone chunk at line rate,
   about one chunk's 0.55 ms.

References
----------
.. [Varki] Varki E., "Mean value technique for closed fork-join networks", ACM SIGMETRICS
   Performance Evaluation Review 27(1), 1999.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from qnmodel.lab import testbed
from qnmodel.lab.validation import raid
from qnmodel.lab.validation.bottomup import disk_service, master_cpu_per_unit
from tests.lab.testbed.helpers import leftovers, needs_root, write_topology

pytestmark = [pytest.mark.testbed, pytest.mark.alone, pytest.mark.xdist_group("testbed")]

K, CHUNK = 3, 65536
DISK = '{ kind = "emu", latency = "1.5 ms", rate = "100 MB/s", dist = "exp", servers = 1 }'
TOPOLOGY = '[testbed]\nname = "temu"\n[[clients]]\nname = "master"\nlink = { rate = "1 Gbit/s" }\n'
TOPOLOGY += "".join(
    f'[[servers]]\nname = "m{i}"\nservice = "tcp"\nport = {5300 + i}\n'
    f'link = {{ rate = "1 Gbit/s" }}\ndisk = {DISK}\n'
    for i in range(K)
)
POPS = [1, 2, 4, 8, 16]


@needs_root
def test_emu_disks_calibrate_and_the_fork_join_model_predicts_the_stripe(tmp_path):
    topo = testbed.load_topology(write_topology(tmp_path, TOPOLOGY))
    names = [s.name for s in topo.servers]
    configured = topo.servers[0].disk.service_time(CHUNK)
    doc = testbed.up(topo)
    try:
        assert doc["nodes"]["m0"]["disk"] == {"kind": "emu", "path": None, "latency": 1.5e-3,
                                              "rate": 1e8, "dist": "exp", "servers": 1}  # fmt: skip
        assert "--serve emu" in doc["nodes"]["m0"]["command"]
        # 1. the three disks at once (each in its own namespace; the clients only sleep)
        with ThreadPoolExecutor(K) as pool:
            disks = list(pool.map(lambda s: disk_service(topo, s, bs=CHUNK, runtime="3 s"), names))
        for name, d in zip(names, disks, strict=True):
            print(f"disk {name}: S = {d['service'] * 1e3:.4f} ms (configured "
                  f"{configured * 1e3:.4f}), error {d['error']:+.2%}, sampling sd "
                  f"{d['rel_sd']:.2%} over {d['completions']} completions")  # fmt: skip
            assert d["configured"] == pytest.approx(configured, rel=1e-12)
            # the target; 5 % is 3.4 sampling standard deviations at ~4500 completions
            assert abs(d["error"]) <= 0.05, d
        # 2. master CPU as the RAID study calibrates it, the configured links, then its model
        cpu = master_cpu_per_unit(topo, "master", raid="raid0", op="read", chunks=K, chunk=CHUNK,
                                  servers=K, runtime="0.5 s")  # fmt: skip
        cal = dict(link_rate=topo.servers[0].link.rate, time_per_unit=cpu["time_per_unit"],
                   disk_rate=float(np.median([CHUNK / d["service"] for d in disks])))  # fmt: skip
        case = dict(raid="raid0", op="read", servers=K, chunks=K, label="RAID0 read, emu disks")
        model = raid.case_model(case, cal, float(CHUNK))
        pred = raid.predict(model, POPS)
        over = raid.predict(model, POPS, forkjoin="forkjoin_overlap")
        # the study's window rule (cycles x R(n) after warmup_cycles x R(n), at least 2 s
        # after 0.3 s): R(16) is about 40 ms here, so every population runs 2 s
        p = dict(client="master", chunk=float(CHUNK), populations=POPS, runtime=2.0,
                 warmup=0.3, repeat=2, cycles=8.0, warmup_cycles=3.0)  # fmt: skip
        meas = raid.measure(topo, p, case, {n: pred[n]["r_model"] for n in POPS})
    finally:
        testbed.down(topo)
    assert leftovers("temu") == []
    print(f"calibration: master CPU {cpu['time_per_unit'] * 1e6:.1f} us/chunk; demands "
          f"{model.demands()}")  # fmt: skip
    err_x, err_r, signed = [], [], {}
    for n in POPS:
        m, q = meas[n], pred[n]
        ex = m["x_measured"] / q["x_forkjoin"] - 1
        er = m["r_measured"] / q["r_forkjoin"] - 1
        signed[n] = ex
        err_x.append(abs(ex))
        err_r.append(abs(er))
        print(f"N={n:2d}: X {m['x_measured']:7.1f} /s (fork-join {q['x_forkjoin']:7.1f}, "
              f"{ex:+.1%}; MVA in series {q['x_model']:7.1f}), R {m['r_measured'] * 1e3:6.2f} ms "
              f"(fork-join {q['r_forkjoin'] * 1e3:6.2f}, {er:+.1%})")  # fmt: skip
    mape_x, mape_r = 100 * np.mean(err_x), 100 * np.mean(err_r)
    print(f"MAPE X {mape_x:.1f} %, R {mape_r:.1f} %")
    # 3. the overlapped form: each chunk crosses the master link as soon as its disk is done
    ov = {n: meas[n]["x_measured"] / over[n]["x_forkjoin"] - 1 for n in POPS}
    ov_r = {n: meas[n]["r_measured"] / over[n]["r_forkjoin"] - 1 for n in POPS}
    for n in POPS:
        print(f"N={n:2d}: overlapped X {over[n]['x_forkjoin']:7.1f} /s ({ov[n]:+.1%}), R "
              f"{over[n]['r_forkjoin'] * 1e3:6.2f} ms ({ov_r[n]:+.1%})")  # fmt: skip
    mape_ov = 100 * np.mean([abs(e) for e in ov.values()])
    print(f"overlapped: MAPE X {mape_ov:.1f} % (join-then-link {mape_x:.1f} %)")
    # N = 1: still on the safe side by the shaper's burst (an idle link passes a lone chunk
    # at line rate): +13.4, +12.8 % measured, +1..+14 % re-read from the three runs above; -5 %
    # allows a loaded run's slow clients
    assert -0.05 <= ov[1] <= 0.20, ov
    # over N = 1..16: MAPE 5.7, 4.1 % measured (6.0-6.9 % re-read from the three runs above,
    # where join-then-link had 9.8-16.7 %); busy disks (N >= 8) within the 10 %
    assert mape_ov <= 10.0 and mape_ov < mape_x, (mape_ov, mape_x)
    assert all(abs(ov[n]) <= 0.10 for n in POPS if n >= 8), ov
    # the fork-join structure is right: closer than the in-series MVA at every N
    assert all(e < abs(meas[n]["x_measured"] / pred[n]["x_model"] - 1)
               for n, e in zip(POPS, err_x, strict=True))  # fmt: skip
    # at N = 1 the model errs on the safe side, by structure (module docstring)
    assert signed[1] > 0.0
    # busy disks (N >= 8): the 10 %; never optimistic by more than a loaded
    # machine's run-to-run noise (-11.3 % seen at N = 2, load average 20)
    assert all(abs(signed[n]) <= 0.10 for n in POPS if n >= 8), signed
    assert all(e >= -0.15 for e in signed.values()), signed
