"""System helpers of the testbed: commands, root check, Debian packages, our own processes.

Every helper here acts only on names given to it; the callers pass names that carry the
testbed's prefix (``qnm-<name>-``), so nothing else on the machine is ever touched.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from ...errors import QNModelError

__all__ = [
    "TestbedError",
    "DEBIAN_PACKAGES",
    "require_root",
    "run",
    "ensure_commands",
    "netns_inode",
    "pids_in_netns",
    "process_start_time",
    "kill_pids",
]


class TestbedError(QNModelError, RuntimeError):
    """The testbed cannot be brought up, torn down or queried (the message says why)."""

    __test__ = False  # not a pytest test class


#: command -> Debian package that provides it
DEBIAN_PACKAGES = {
    "ip": "iproute2",
    "tc": "iproute2",
    "rpcbind": "rpcbind",
    "ganesha.nfsd": "nfs-ganesha",
    "nfs-cat": "libnfs-utils",
}
#: file -> Debian package that provides it
DEBIAN_FILES = {
    "/usr/lib/x86_64-linux-gnu/ganesha/libfsalvfs.so": "nfs-ganesha-vfs",
}


def require_root(action: str) -> None:
    """Raise :class:`TestbedError` unless the effective user is root."""
    if os.geteuid() != 0:
        raise TestbedError(
            f"qnmodel testbed {action} needs root (it creates network namespaces, veth links, "
            "tc shapers, cgroups and mounts): run it as root, e.g. with sudo"
        )


def run(
    cmd: Sequence[str], *, check: bool = True, timeout: float = 30.0, input: str | None = None
) -> subprocess.CompletedProcess:
    """Run a command; on failure raise :class:`TestbedError` with its stderr."""
    try:
        cp = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout, input=input)
    except FileNotFoundError:
        raise TestbedError(f"command not found: {cmd[0]}") from None
    except subprocess.TimeoutExpired:
        raise TestbedError(f"command timed out after {timeout:g} s: {' '.join(cmd)}") from None
    if check and cp.returncode != 0:
        msg = " ".join((cp.stderr or cp.stdout).split())
        raise TestbedError(f"'{' '.join(cmd)}' failed (exit {cp.returncode}): {msg}")
    return cp


def _missing(commands: Iterable[str], files: Iterable[str]) -> list[str]:
    pkgs: list[str] = []
    for c in commands:
        if shutil.which(c) is None and DEBIAN_PACKAGES[c] not in pkgs:
            pkgs.append(DEBIAN_PACKAGES[c])
    for f in files:
        if not Path(f).exists() and DEBIAN_FILES[f] not in pkgs:
            pkgs.append(DEBIAN_FILES[f])
    return pkgs


def ensure_commands(commands: Iterable[str], files: Iterable[str] = (), log=None) -> list[str]:
    """Install the Debian packages that provide missing ``commands``/``files``.

    Runs ``apt-get update`` then ``apt-get install -y PACKAGES`` once; returns the packages it
    installed. Raises :class:`TestbedError` naming the packages and the apt-get error when it
    cannot (no apt-get, no network, not Debian).
    """
    commands, files = list(commands), list(files)
    pkgs = _missing(commands, files)
    if not pkgs:
        return []
    # libnfs-dev is installed with the others: qnbench's nfs engine is built against it.
    if "libnfs-dev" not in pkgs and not Path("/usr/include/nfsc/libnfs.h").exists():
        pkgs.append("libnfs-dev")
    how = f"apt-get update && apt-get install -y {' '.join(pkgs)}"
    if shutil.which("apt-get") is None:
        raise TestbedError(f"missing Debian packages {', '.join(pkgs)} and no apt-get: {how}")
    if log:
        log(f"installing {', '.join(pkgs)} (apt-get)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", *pkgs]):
        try:
            cp = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
        except subprocess.TimeoutExpired:
            raise TestbedError(f"'{' '.join(cmd)}' timed out; install by hand: {how}") from None
        if cp.returncode != 0:
            tail = " ".join(cp.stderr.split()[-40:])
            raise TestbedError(
                f"cannot install {', '.join(pkgs)}: '{' '.join(cmd)}' failed ({tail}); "
                f"install by hand: {how}"
            )
    still = _missing(commands, files)
    if still:
        raise TestbedError(f"installed {', '.join(pkgs)} but still missing: {', '.join(still)}")
    return pkgs


def netns_inode(name: str) -> int | None:
    """The inode of a named network namespace (``/run/netns/NAME``), or None."""
    try:
        return os.stat(f"/run/netns/{name}").st_ino
    except OSError:
        return None


def netns_of(pid: int) -> str | None:
    """The network namespace of a process (``net:[inode]``), or None if it is gone."""
    try:
        return os.readlink(f"/proc/{pid}/ns/net")
    except OSError:
        return None


def pids_in_netns(inodes: Iterable[int]) -> list[int]:
    """Processes whose network namespace is one of ``inodes`` (the namespaces we created)."""
    want = {f"net:[{i}]" for i in inodes}
    if not want:
        return []
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            if os.readlink(f"/proc/{d}/ns/net") in want:
                out.append(int(d))
        except OSError:
            continue
    return out


def process_start_time(pid: int) -> int | None:
    """Start time of a process in clock ticks since boot (``/proc/PID/stat`` field 22)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat[stat.rindex(")") + 2 :].split()[19])


def kill_pids(pids: Iterable[int], grace: float = 2.0) -> list[int]:
    """SIGTERM the given processes, SIGKILL what is left after ``grace`` seconds.

    Returns the pids that were still alive at the end (normally none).
    """
    pids = [p for p in set(pids) if p != os.getpid()]
    for p in pids:
        try:
            os.kill(p, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    alive = pids
    while alive and time.monotonic() < deadline:
        time.sleep(0.02)
        alive = [p for p in alive if _alive(p)]
    for p in alive:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    time.sleep(0.05)
    return [p for p in alive if _alive(p)]


def _alive(pid: int) -> bool:
    try:
        # reap our own children so they do not linger as zombies
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return state[state.rindex(")") + 2] != "Z"
