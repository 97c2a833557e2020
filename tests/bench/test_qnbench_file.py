"""Black-box tests of the file engine: every access path, safety, cleanup, errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest

from qnmodel.bench import schema

ACCESS = ("sync", "stdio", "mmap", "direct")
RW = ("read", "write", "randread", "randwrite")


@pytest.mark.parametrize("access", ACCESS)
@pytest.mark.parametrize("rw", RW)
def test_every_access_path_and_pattern_moves_the_requested_bytes(qnb, tmp_path, access, rw):
    rc, doc, _, err = qnb(
        "--engine",
        "file",
        "--dir",
        tmp_path,
        "--size",
        "1MiB",
        "--bs",
        "16KiB",
        "--rw",
        rw,
        "--access",
        access,
        "--runtime",
        "40ms",
        "--warmup",
        "0",
        "--jobs",
        "2",
    )
    if access == "direct" and rc == 1 and "O_DIRECT" in err:
        pytest.skip(f"filesystem of {tmp_path} lacks O_DIRECT: {err.strip()}")
    assert rc == 0, err
    schema.validate(doc)
    (r,) = doc["results"]
    assert r["complete"] and r["ops"] > 0
    assert r["bytes"] == r["ops"] * 16384
    if "write" in rw:
        assert r["engine_stats"]["fsync_close_s"] > 0
        assert r["elapsed_s"] >= r["engine_stats"]["fsync_close_s"]
    assert list(tmp_path.iterdir()) == [], "qnbench must remove everything it created"


def test_process_workers(qnb, tmp_path):
    rc, doc, _, err = qnb(
        "--engine",
        "file",
        "--dir",
        tmp_path,
        "--size",
        "1MiB",
        "--bs",
        "64KiB",
        "--rw",
        "randwrite",
        "--workers",
        "process",
        "--runtime",
        "100ms",
        "--jobs",
        "1,2",
    )
    assert rc == 0, err
    assert [r["jobs"] for r in doc["results"]] == [1, 2]
    assert all(r["ops"] > 0 and r["complete"] for r in doc["results"])
    assert doc["results"][1]["cpu"]["user_s"] + doc["results"][1]["cpu"]["sys_s"] > 0
    assert list(tmp_path.iterdir()) == []


def test_sequential_read_covers_the_file_in_order(qnb, tmp_path):
    # --ops = blocks in the file: exactly one pass, as many bytes as the file
    rc, doc, _, err = qnb(
        "--engine",
        "file",
        "--dir",
        tmp_path,
        "--size",
        "256KiB",
        "--bs",
        "4KiB",
        "--ops",
        "64",
        "--runtime",
        "30s",
        "--warmup",
        "0",
    )
    assert rc == 0, err
    assert doc["results"][0]["bytes"] == 256 * 1024


def test_leaves_foreign_files_alone_and_makes_its_own_directory(qnb, tmp_path):
    foreign = tmp_path / "job0.dat"
    foreign.write_bytes(b"precious")
    link_target = tmp_path / "target"
    link_target.write_bytes(b"do not touch")
    rc, doc, _, err = qnb(
        "--engine",
        "file",
        "--dir",
        tmp_path,
        "--size",
        "64KiB",
        "--bs",
        "4KiB",
        "--rw",
        "write",
        "--runtime",
        "30ms",
    )
    assert rc == 0, err
    assert foreign.read_bytes() == b"precious"
    assert link_target.read_bytes() == b"do not touch"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["job0.dat", "target"]


def test_missing_dir_is_a_runtime_error_with_json(qnb, tmp_path):
    rc, doc, _, err = qnb("--engine", "file", "--dir", tmp_path / "nope", "--runtime", "10ms")
    assert rc == 1
    assert doc["complete"] is False and doc["results"] == []
    assert "is not an existing directory" in doc["errors"][0]
    assert "is not an existing directory" in err


def test_bad_file_options_are_usage_errors(qnb, tmp_path):
    for args, msg in [
        (["--bs", "1MiB", "--size", "64KiB"], "larger than the file"),
        (["--access", "direct", "--bs", "1000"], "multiple of 512"),
    ]:
        rc, _, out, err = qnb("--engine", "file", "--dir", tmp_path, *args)
        assert rc == 2 and out == "" and msg in err


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_prints_partial_results_and_cleans_up(qnbench_exe, tmp_path, sig):
    p = subprocess.Popen(
        [
            str(qnbench_exe),
            "--engine",
            "file",
            "--dir",
            str(tmp_path),
            "--size",
            "1MiB",
            "--bs",
            "4KiB",
            "--rw",
            "randwrite",
            "--runtime",
            "30s",
            "--warmup",
            "0",
            "--interval",
            "20ms",
            "--jobs",
            "1,2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not list(tmp_path.glob("qnbench-*/job0.dat")):
        time.sleep(0.01)
    time.sleep(0.3)
    p.send_signal(sig)
    out, err = p.communicate(timeout=20)
    assert p.returncode == 1, err
    doc = json.loads(out)
    schema.validate(doc)
    assert doc["complete"] is False
    assert any("interrupted" in e for e in doc["errors"])
    (r,) = doc["results"]
    assert r["complete"] is False and r["ops"] > 0 and r["jobs"] == 1
    assert list(tmp_path.iterdir()) == []


def test_enospc_is_reported_and_earlier_points_kept(qnb, tmp_path):
    mnt = tmp_path / "small"
    mnt.mkdir()
    m = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mnt)], capture_output=True, text=True
    )
    if m.returncode != 0:
        pytest.skip(
            f"cannot mount a small tmpfs to provoke ENOSPC (needs root): {m.stderr.strip()}"
        )
    try:
        rc, doc, _, err = qnb(
            "--engine",
            "file",
            "--dir",
            mnt,
            "--size",
            "1MiB",
            "--bs",
            "64KiB",
            "--runtime",
            "50ms",
            "--jobs",
            "1,4",
        )
        assert rc == 1
        schema.validate(doc)
        assert doc["complete"] is False
        assert len(doc["results"]) == 1 and doc["results"][0]["complete"]
        assert "ENOSPC" in doc["errors"][0] and "No space left on device" in err
        assert os.listdir(mnt) == []
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def test_drop_caches_needs_root_and_says_so(qnb, tmp_path):
    rc, doc, _, err = qnb("--engine", "file", "--dir", tmp_path, "--size", "256KiB",
                          "--rw", "randread", "--drop-caches", "--runtime", "30ms")  # fmt: skip
    if os.geteuid() != 0:
        assert rc == 2 and "needs root" in err
        return
    if rc == 1:  # root, but /proc/sys is read-only (a container): a clear runtime error
        assert "drop_caches" in doc["errors"][0]
        return
    assert rc == 0, err
    assert doc["options"]["drop_caches"] is True and doc["results"][0]["ops"] > 0


def test_fsync_every_n_writes_is_timed_in_the_writes(qnb, tmp_path):
    base = ("--engine", "file", "--dir", tmp_path, "--size", "256KiB", "--bs", "4KiB",
            "--rw", "randwrite", "--runtime", "150ms", "--warmup", "0")  # fmt: skip
    rc, plain, _, err = qnb(*base)
    assert rc == 0, err
    rc, synced, _, err = qnb(*base, "--fsync", "1")
    assert rc == 0, err
    # an fsync per write costs at least a few microseconds more than a page-cache write
    assert (synced["results"][0]["latency_s"]["p50"]
            > 2 * plain["results"][0]["latency_s"]["p50"])  # fmt: skip
    assert synced["options"]["fsync"] == 1
