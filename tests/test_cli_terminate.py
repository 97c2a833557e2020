"""SIGTERM ends a ``qnmodel`` command as Ctrl-C does: its children stop, the status says so.

A service manager or a CI runner stops a job with SIGTERM, sent to the one process it
started. The command must unwind (take its testbed down, stop its qnbench) rather than die
and leave its children running; here ``qnmodel bench`` with a 30 s qnbench run under it.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

from qnmodel import cli

from ._cli import run
from ._user_env import user_env

#: an option value no other process on the machine carries, to find our qnbench by
MARK = "4.321 ms"


def _ours() -> list[str]:
    ps = subprocess.run(
        ["ps", "-ww", "-eo", "stat=,args="], capture_output=True, text=True, check=True
    )
    return [ln for ln in ps.stdout.splitlines()
            if "--dev-latency 0.004321" in ln and not ln.lstrip().startswith("Z")]  # fmt: skip


def test_sigterm_stops_the_command_and_its_qnbench():
    argv = [sys.executable, "-c", "import sys; from qnmodel.cli import main; sys.exit(main())",
            "bench", "emu", "jobs=1", "bs=64 KiB",
            f"dev_latency={MARK}", "dev_rate=50 MB/s", "runtime=30 s"]  # fmt: skip
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=user_env(), cwd="/")  # fmt: skip
    try:
        deadline = time.monotonic() + 30.0
        while not _ours():  # qnbench is running under the command
            assert p.poll() is None, p.communicate()
            assert time.monotonic() < deadline, "qnbench did not start"
            time.sleep(0.05)
        # past the fork: the command waits on qnbench (a signal inside subprocess.Popen
        # itself, before it returns the child, cannot reach our handler's cleanup)
        time.sleep(0.5)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=25)  # the run itself would take 30 s
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 143, (out, err)
    assert "qnmodel: terminated" in err
    assert _ours() == [], "qnbench outlived the command"


def test_the_handler_is_ours_only_while_a_command_runs():
    before = signal.getsignal(signal.SIGTERM)
    assert run("--version")[0] == 0
    assert signal.getsignal(signal.SIGTERM) is before
    seen = []
    # a handler the embedding program installed is left alone
    signal.signal(signal.SIGTERM, lambda *_: seen.append(1))
    try:
        mine = signal.getsignal(signal.SIGTERM)
        assert run("solve", "/nonexistent.toml")[0] == 1
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, before)
    assert isinstance(cli.Terminated(), KeyboardInterrupt)
