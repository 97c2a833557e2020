"""qnbench against fio in the suite: O_DIRECT random 4 KiB reads of a real file on disk.

The same workload as the accuracy table (docs/explanation/qnbench-accuracy.md, "rand read 4
KiB, disk O_DIRECT, 1 job": ratio 0.98, pairs 0.82-1.17 over 7 pairs): both tools issue
pread(2) on an O_DIRECT file descriptor, so both measure the virtual disk, not the page cache.
The runs are paired (fio then qnbench, then qnbench then fio, ...) and the ratio is taken per
pair; the bound is on the median of five pairs.

Bound: the median pair ratio within [0.85, 1.18]. The 7-pair range measured for the table was
0.82-1.17, i.e. single pairs reach +-17 %; the median of five pairs has a spread of about
1.2 sigma / sqrt(5) of a single pair's, so a median outside [0.85, 1.18] means a systematic
difference (a different access path, a miscounted byte or a cache hit), not noise.
"""

from __future__ import annotations

import json
import statistics
import subprocess

import pytest

from qnmodel import bench

from .._ci import skip_or_fail
from .._parts import need

pytestmark = [pytest.mark.peer, pytest.mark.alone]

RUNTIME = 0.6  # seconds per run (after a 0.2 s ramp)
PAIRS = 5


def _fio(directory: str) -> float:
    cmd = [
        "fio", "--name=peer", f"--directory={directory}", "--rw=randread", "--bs=4k",
        "--size=32M", "--numjobs=1", "--ioengine=psync", "--direct=1", "--time_based",
        f"--runtime={RUNTIME}", "--ramp_time=0.2", "--norandommap", "--randrepeat=0",
        "--invalidate=0", "--output-format=json",
    ]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=120).stdout
    return float(json.loads(out[out.index("{") :])["jobs"][0]["read"]["iops"])


def _qnbench(directory: str) -> float:
    t = bench.run(
        "file", dir=directory, rw="randread", bs="4 KiB", size="32 MiB", jobs=1,
        runtime=RUNTIME, warmup=0.2, access="direct", progress=False,
    )  # fmt: skip
    return float(t.results[0]["throughput_ops_s"])


def test_qnbench_o_direct_random_reads_agree_with_fio(tmp_path):
    need("fio")
    fio_dir, q_dir = tmp_path / "fio", tmp_path / "qnbench"
    fio_dir.mkdir()
    q_dir.mkdir()
    try:
        _qnbench(str(q_dir))  # lays out the file; O_DIRECT needs a filesystem that has it
    except Exception as exc:  # noqa: BLE001 - the reason is the message
        if "O_DIRECT" in str(exc):
            skip_or_fail(f"the filesystem of {tmp_path} has no O_DIRECT: {exc}")
        raise
    med, ratios = _median_ratio(fio_dir, q_dir)
    if not 0.85 <= med <= 1.18:
        # once in CI the virtual disk favoured one tool's file for a while (pairs 1.02, 1.03,
        # 1.27, 1.23, 1.26): five more pairs, each tool on a new file, decide
        print(f"\nfirst five pairs {[round(r, 3) for r in ratios]}: measured again on new files")
        fio_dir, q_dir = tmp_path / "fio2", tmp_path / "qnbench2"
        fio_dir.mkdir()
        q_dir.mkdir()
        _qnbench(str(q_dir))
        med, ratios = _median_ratio(fio_dir, q_dir)
    assert 0.85 <= med <= 1.18, ratios


def _median_ratio(fio_dir, q_dir) -> tuple[float, list[float]]:
    """The median over PAIRS of qnbench / fio IOPS, the pairs in alternating order."""
    ratios = []
    for i in range(PAIRS):
        if i % 2 == 0:
            p, q = _fio(str(fio_dir)), _qnbench(str(q_dir))
        else:
            q, p = _qnbench(str(q_dir)), _fio(str(fio_dir))
        ratios.append(q / p)
    med = statistics.median(ratios)
    print(f"\nqnbench / fio IOPS, O_DIRECT 4 KiB random reads: {[round(r, 3) for r in ratios]} "
          f"median {med:.3f}")  # fmt: skip
    return med, ratios
