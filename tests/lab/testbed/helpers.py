"""Helpers of the testbed tests: topology files and what a testbed may have left behind."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from qnmodel.lab.testbed.state import STATE_ROOT

IS_ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not IS_ROOT, reason="the testbed needs root (namespaces, tc)")


def write_topology(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "topology.toml"
    p.write_text(text)
    return p


def host_links() -> set[str]:
    out = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    return {line.split(":")[1].strip().split("@")[0] for line in out.splitlines()}


def alive(pid: int, start: int | None) -> bool:
    """A process that is running (not a zombie) and still the one that was started."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    fields = stat[stat.rindex(")") + 2 :].split()
    return fields[0] != "Z" and (start is None or int(fields[19]) == start)


def leftovers(name: str, pids=()) -> list[str]:
    """Everything of testbed ``name`` still on the machine (empty after a clean ``down``)."""
    pat = re.compile(rf"^qnm-{name}-")
    left = (
        [f"netns {n}" for n in os.listdir("/run/netns") if pat.match(n)]
        if Path("/run/netns").is_dir()
        else []
    )
    for hierarchy in ("blkio", "cpu"):
        root = Path("/sys/fs/cgroup") / hierarchy
        if root.is_dir():
            left += [f"cgroup {hierarchy}/{c}" for c in os.listdir(root) if pat.match(c)]
    with open("/proc/self/mounts") as f:
        left += [
            f"mount {line.split()[1]}"
            for line in f
            if f"qnm-{name}-" in line or f"{STATE_ROOT}/{name}/" in line
        ]
    if (STATE_ROOT / name).exists():
        left.append(f"state dir {STATE_ROOT / name}")
    left += [f"process {p}" for p, start in pids if alive(p, start)]
    left += [f"host link {link}" for link in host_links() if link.startswith("qnm")]
    return left
