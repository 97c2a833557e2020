"""``qnmodel bench plan``: the model-guided measurement plan from the command line."""

from __future__ import annotations

import io

import pandas as pd

from ._cli import run


def test_plan_printed_and_as_csv():
    args = ("bench", "plan", "a=4 ms", "r=50 MB/s", "devices=4", "think=4 ms", "max_jobs=16")
    rc, out, _ = run(*args)
    assert rc == 0
    assert out.splitlines()[0] == "23 runs"
    assert "bs 4096 B: knee N* = 7.92, jobs [1, 4, 6, 7, 8, 9, 16]" in out
    rc, out, _ = run(*args, "--format", "csv")
    frame = pd.read_csv(io.StringIO(out))
    assert rc == 0 and len(frame) == 23 and set(frame["bs_bytes"]) == {4096, 262144, 1048576}


def test_plan_of_a_model_file(tmp_path):
    f = tmp_path / "m.toml"
    f.write_text(
        '[model]\nname = "m"\nthink_time = "40 ms"\nN = 20\n'
        '[[station]]\nname = "cpu"\ndemand = "5 ms"\n'
        '[[station]]\nname = "disk"\ndemand = "10 ms"\n'
    )
    rc, out, _ = run("bench", "plan", f"model={f}", "max_jobs=20")
    assert (
        rc == 0
        and out.strip() == "client counts (dense around the knee): [1, 3, 4, 5, 6, 7, 11, 20]"
    )


def test_plan_bad_input_is_a_usage_error():
    rc, _, err = run("bench", "plan", "a=4 kg")
    assert rc == 2 and "a" in err


def test_plan_run_on_emulated_devices():
    rc, out, _ = run("-q", "bench", "plan", "a=1 ms", "r=1 GB/s", "max_jobs=2",
                     "sizes=4KiB,64KiB", "run=1", "budget=0.2 s", "warmup=0.01 s",
                     "--format", "csv")  # fmt: skip
    frame = pd.read_csv(io.StringIO(out))
    assert rc == 0 and len(frame) == 4 and (frame["throughput_ops_s"] > 0).all()
