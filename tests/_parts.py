"""The system parts a test needs, from the one table ``.ci/system-parts.tsv``.

``need("fio")`` skips the calling test when fio is not on this machine, with a reason naming
the part, what it is for and the command that installs it; ``need_built("nfs")`` does the same
for an optional part of the installed package's build (``qnmodel.bench.build_info()``: the nfs
engine, the MPI build, the fuzz targets), naming why the build left it out. Under CI both fail
instead (:func:`tests._ci.skip_or_fail`): there every part must be present.

The checks mirror ``.ci/system-packages.sh``: ``cmd:NAME`` (on PATH or in /usr/sbin),
``file:PATH``, ``glob:PATTERN``, alternatives separated by ``|``.
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from ._ci import skip_or_fail

TABLE = Path(__file__).resolve().parents[1] / ".ci" / "system-parts.tsv"
INSTALL_ALL = ".ci/system-packages.sh (as root) installs every part"


@dataclass(frozen=True)
class Part:
    name: str
    group: str
    check: str
    packages: tuple[str, ...]
    purpose: str

    def present(self) -> bool:
        for alt in self.check.split("|"):
            kind, _, arg = alt.partition(":")
            if kind == "cmd" and (shutil.which(arg) or os.access(f"/usr/sbin/{arg}", os.X_OK)):
                return True
            if kind == "file" and os.path.exists(arg):
                return True
            if kind == "glob" and glob.glob(arg):
                return True
        return False

    @property
    def install(self) -> str:
        return f"apt-get install -y {' '.join(self.packages)}"


@functools.cache
def parts() -> dict[str, Part]:
    """The table's rows by part name."""
    out = {}
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#") or line.startswith("part\t"):
            continue
        name, group, check, packages, purpose = line.split("\t")
        out[name] = Part(name, group, check, tuple(packages.split()), purpose)
    return out


def missing(*names: str) -> str | None:
    """Why the parts ``names`` cannot be used here (each missing one, its use and the command
    that installs it), or None when all are present."""
    table = parts()
    unknown = [n for n in names if n not in table]
    if unknown:
        raise KeyError(f"parts {unknown} are not in {TABLE}")
    gone = [table[n] for n in names if not table[n].present()]
    if not gone:
        return None
    what = "; ".join(f"{p.name} ({p.purpose}) is not installed: {p.install}" for p in gone)
    return f"{what} (or {INSTALL_ALL})"


def need(*names: str) -> None:
    """Skip the calling test (fail it under CI) unless every part in ``names`` is here."""
    why = missing(*names)
    if why is not None:
        skip_or_fail(why)


def need_built(part: str) -> None:
    """Skip the calling test (fail it under CI) unless the installed build made ``part``
    (``"nfs"``, ``"mpi"`` or ``"fuzz"``); the reason is the build's own record."""
    from qnmodel.bench import build_info

    info = build_info()[part]
    if not info["built"]:
        skip_or_fail(
            f"the installed qnmodel was built without its {part} part: {info['detail']}; "
            "`make install` rebuilds once the part is installed"
        )
