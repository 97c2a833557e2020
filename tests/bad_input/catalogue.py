# ruff: noqa: E501  (a data table: one row per line reads best)
"""The bad-input catalogue: one row per bad input, the one table behind
``docs/reference/bad-input.md`` and ``tests/bad_input/test_catalogue.py``.

Each row names where the input enters (the Python API, a TOML model file, the ``qnmodel``
command, a trace file, a qnbench option, a JMVA XML file, a testbed topology file, a hardware
description), describes the input, and states the error a user gets: the exception class (for
the command and qnbench, the exit status) and a regular expression its message must match.
The message must name the field and the value; the test runs every row.
"""

from __future__ import annotations

import contextlib
import io
import math
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import qnmodel as qn
from qnmodel import errors, units
from qnmodel.io.modelfile import loads as load_model_text

WHERE = (
    "Python API",
    "TOML model file",
    "CLI",
    "trace file",
    "qnbench option",
    "JMVA XML",
    "topology file",
    "hardware file",
)


class CommandFailed(Exception):
    """A command (``qnmodel`` or ``qnbench``) ended with a non-zero status; the message is its
    standard error."""

    def __init__(self, status: int, stderr: str) -> None:
        self.status = status
        self.stderr = stderr
        super().__init__(f"exit {status}: {stderr.strip()}")


class Exit1(CommandFailed):
    """Exit status 1: the work failed (bad file, bad value)."""


class Exit2(CommandFailed):
    """Exit status 2: a usage error (bad command line)."""


@dataclass(frozen=True)
class Row:
    """One bad input: ``run(tmp_path)`` must raise ``error`` with a message matching ``match``."""

    where: str
    input: str
    error: str
    match: str
    run: Callable[[Path], object]


def error_class(name: str) -> type[BaseException]:
    """The exception class a row names (qnmodel's errors, or the command's exit status)."""
    if name in ("Exit1", "Exit2"):
        return {"Exit1": Exit1, "Exit2": Exit2}[name]
    return getattr(errors, name)


# ---------------------------------------------------------------------------------------
# how each kind of input is fed
# ---------------------------------------------------------------------------------------
GOOD_MODEL = """\
[model]
name = "m"
think_time = "1 s"
N = 4

[[station]]
name = "disk"
demand = "10 ms"
"""


def _model(text: str) -> Callable[[Path], object]:
    return lambda tmp: qn.modelfile.solve(load_model_text(text, source="m.toml"))


def _model_file(content: bytes | str, name: str = "m.toml") -> Callable[[Path], object]:
    def run(tmp: Path):
        p = tmp / name
        p.write_bytes(content.encode() if isinstance(content, str) else content)
        return qn.load_model(p)

    return run


def _cli(*argv: str, files: dict[str, str | bytes] | None = None) -> Callable[[Path], object]:
    def run(tmp: Path):
        from qnmodel.cli import main

        for name, content in (files or {}).items():
            (tmp / name).write_bytes(content.encode() if isinstance(content, str) else content)
        args = [a.replace("{tmp}", str(tmp)) for a in argv]
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                status = main(["-q", *args])
            except SystemExit as exc:  # argparse usage errors
                status = int(exc.code or 0)
        if status == 1:
            raise Exit1(1, err.getvalue())
        if status == 2:
            raise Exit2(2, err.getvalue())
        raise AssertionError(f"qnmodel {' '.join(args)} exited {status}: {err.getvalue()}")

    return run


def _trace(content: bytes | str, name: str = "t.json", *, reader: str = "calibration"):
    def run(tmp: Path):
        p = tmp / name
        p.write_bytes(content.encode() if isinstance(content, str) else content)
        if reader == "bench":
            return qn.bench.load(p)
        from qnmodel.calibration import load_trace

        return load_trace(p)

    return run


def _qnbench(*args: str) -> Callable[[Path], object]:
    def run(tmp: Path):
        exe = qn.bench.executable()
        argv = [str(exe), *(a.replace("{tmp}", str(tmp)) for a in args)]
        p = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=tmp)
        if p.returncode == 0:
            raise AssertionError(f"qnbench {' '.join(args)} succeeded: {p.stdout[:300]}")
        cls = {1: Exit1, 2: Exit2}.get(p.returncode, CommandFailed)
        raise cls(p.returncode, p.stderr)

    return run


def _jmva(text: str | bytes, *, path: bool = False) -> Callable[[Path], object]:
    from qnmodel.io.jmva import from_jmva, read_jmva

    def run(tmp: Path):
        if path:
            p = tmp / "m.jmva"
            p.write_bytes(text.encode() if isinstance(text, str) else text)
            return read_jmva(p)
        return from_jmva(text)

    return run


def _study(text: str) -> Callable[[Path], object]:
    def run(tmp: Path):
        from qnmodel.lab.validation import validate

        p = tmp / "study.toml"
        p.write_text(text)
        return validate(p, tmp / "out")

    return run


RAID_STUDY = f"""\
[study]
kind = "raid"
topology = "{Path(__file__).resolve().parents[2] / "examples" / "testbed" / "raid_100mbit.toml"}"
[raid]
populations = [1]
"""
NFS_STUDY = f"""\
[study]
kind = "nfs"
topology = "{Path(__file__).resolve().parents[2] / "examples" / "testbed" / "nfs_study.toml"}"
[[nfs.configs]]
link = "100 Mbit/s"
disk = "6 MB/s"
"""
LINE_BAD_ROUTING = (
    '{"model": {"type": "Network", "nodes": [{"name": "q", "type": "Queue", "service": {"a": '
    '{"type": "Exp", "params": {"lambda": 2.0}}}}], "classes": [{"name": "a", "type": "Closed", '
    '"population": 1, "refNode": "q"}], "routing": {"matrix": {"a,a": {"q": {"q": "half"}}}}}}'
)

GOOD_TOPOLOGY = """\
[testbed]
name = "tb"
subnet = "10.213.0.0/16"
[[clients]]
name = "c1"
link = { rate = "100 Mbit/s", delay = "1 ms" }
[[servers]]
name = "s1"
service = "nfs"
disk = { kind = "tmpfs", size = "64 MiB" }
"""


EMU_TOPOLOGY = GOOD_TOPOLOGY.replace('service = "nfs"', 'service = "tcp"').replace(
    'disk = { kind = "tmpfs", size = "64 MiB" }',
    'disk = { kind = "emu", latency = "4 ms", rate = "100 MB/s", dist = "exp", servers = 1 }',
)


def _topology(text: str | bytes) -> Callable[[Path], object]:
    from qnmodel.lab.testbed.topology import load_topology

    def run(tmp: Path):
        p = tmp / "tb.toml"
        p.write_bytes(text.encode() if isinstance(text, str) else text)
        return load_topology(p)

    return run


def _hardware(text: str | bytes, *, path: bool = True) -> Callable[[Path], object]:
    from qnmodel.lab.check.hardware import load_hardware, loads_hardware

    def run(tmp: Path):
        if not path:
            return loads_hardware(text)
        p = tmp / "hw.toml"
        p.write_bytes(text.encode() if isinstance(text, str) else text)
        return load_hardware(p)

    return run


def _jmva_text() -> str:
    from qnmodel.io.jmva import to_jmva

    net = qn.Network((qn.Station("disk", {"a": 0.01}),), classes=(qn.ClosedClass("a", 3, 1.0),))
    text = to_jmva(net)
    assert 'population="3"' in text
    return text


JMVA_TEXT = _jmva_text()


def _net(demands=(0.01, 0.02), **kw):
    return qn.Network.from_demands(demands, think_time=kw.pop("think_time", 1.0), **kw)


def _call(f: Callable[[], object]) -> Callable[[Path], object]:
    return lambda tmp: f()


def _overlap_raid():
    """A small RAID0 NetworkedRAID (3 disks, one stripe per request) for the overlap rows."""
    return qn.NetworkedRAID(
        job_size=3 * 65536,
        stripe_unit=65536,
        stripe_width=3,
        master_time_per_unit=30e-6,
        master_time_per_packet=0.0,
        server_time_per_unit=0.0,
        server_time_per_packet=0.0,
        link_rate=125e6,
        disk_seek=0.0,
        disk_latency=0.0,
        disk_rate=65536 / 2.155e-3,
        mss=1448.0,
        frame_size=1514.0,
        raid="raid0",
        op="read",
        server_terms="one_server",
    )


# -- issue 29: planted outputs, hostile sizes, impossible measurements ------------------
def _planted(*argv: str, link: str, directory: bool = False) -> Callable[[Path], object]:
    """``qnmodel ARGV`` with a symbolic link planted at ``{tmp}/LINK`` (to a victim file, or to
    a directory); the victim must be untouched."""
    cli = _cli(*argv, files={"m.toml": GOOD_MODEL})

    def run(tmp: Path):
        victim = tmp / ("victim_dir" if directory else "victim.txt")
        if directory:
            victim.mkdir()
        else:
            victim.write_text("keep me")
        target = tmp / link
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(victim, target_is_directory=directory)
        try:
            return cli(tmp)
        finally:
            assert directory or victim.read_text() == "keep me", "the planted link was followed"

    return run


def _fifo_export(tmp: Path):
    import os

    from qnmodel.io.jmva import write_jmva

    os.mkfifo(tmp / "m.jmva")
    return write_jmva(_net(), tmp / "m.jmva", 3)


FIO_DOC = {
    "fio version": "fio-3.33",
    "global options": {"bs": "4k", "rw": "randread", "numjobs": "1"},
    "jobs": [{"jobname": "j", "error": 0, "read": {"total_ios": 1000, "iops": 100.0,
              "bw_bytes": 409600, "io_bytes": 4096000, "runtime": 10000,
              "lat_ns": {"mean": 1e6, "min": 5e5, "max": 3e6}}}],
}  # fmt: skip


def _fio_doc(**edits: Any) -> str:
    import copy
    import json

    doc = copy.deepcopy(FIO_DOC)
    for path, value in edits.items():
        node = doc
        keys = path.split("__")
        for key in keys[:-1]:
            node = node[int(key)] if key.isdigit() else node[key]
        node[keys[-1]] = value
    return json.dumps(doc)  # NaN and Infinity as Python's json writes them


def _qnbench_doc_bad_samples() -> dict:
    from tests.calibration.conftest import make_document

    doc = make_document([{"jobs": 1, "bs_bytes": 4096, "latency": 0.002}])
    doc["results"][0]["samples"][0]["ops"] += 1000
    return doc


def _line_closed(routing: str, extra_nodes: str = "", lam: str = "2.0") -> str:
    return (
        '{"model": {"type": "Network", "nodes": [{"name": "q", "type": "Queue", "service": {"a": '
        '{"type": "Exp", "params": {"lambda": ' + lam + '}}}}, {"name": "z", "type": "Delay", '
        '"service": {"a": {"type": "Exp", "params": {"lambda": 1.0}}}}' + extra_nodes + "], "
        '"classes": [{"name": "a", "type": "Closed", "population": 2, "refNode": "z"}], '
        '"routing": {"matrix": {"a,a": ' + routing + "}}}}"
    )


def _line(text: str) -> Callable[[Path], object]:
    from qnmodel.io.linejson import from_line_json

    return lambda tmp: from_line_json(text)


RAID_FILE = """\
[model]
name = "r"
think_time = "1 s"
N = 4
[system]
type = "raid"
level = "raid5"
disks = 100_000_000
disk_demand = "10 ms"
"""


QNBENCH_DOC = (
    '{"schema": "qnbench", "schema_version": 1, "engine": "emu", "options": {}, '
    '"results": [], "errors": [], "complete": true}'
)
HUGE = 70 * 2**20  # bytes: above the 64 MiB a text input file may have

# ---------------------------------------------------------------------------------------
# the rows
# ---------------------------------------------------------------------------------------
PY, TOML, CLI, TRACE, QNB, JMVA, TOPO, HW = WHERE

ROWS: list[Row] = [
    # -- units at the Python API ---------------------------------------------------------
    Row(PY, 'a time without a unit: `units.parse("4.9", "time")`', "UnitError", r"'4\.9' has no unit",
        _call(lambda: units.parse("4.9", "time"))),
    Row(PY, 'an unknown unit: `"4.9 parsec"`', "UnitError", r"unknown unit 'parsec'",
        _call(lambda: units.parse("4.9 parsec"))),
    Row(PY, 'an unknown prefix: `"4.9 Xs"`', "UnitError", r"unknown unit 'Xs'",
        _call(lambda: units.parse("4.9 Xs"))),
    Row(PY, 'an ambiguous size: `"16 KB"` (kB or KiB?)', "UnitError", r"'KB' in '16 KB' is ambiguous",
        _call(lambda: units.parse("16 KB"))),
    Row(PY, 'bits or bytes? `"100 Mb/s"`', "UnitError", r"'Mb/s' in '100 Mb/s' is ambiguous",
        _call(lambda: units.parse("100 Mb/s"))),
    Row(PY, 'a size where a time is expected: demand `"16 KiB"`', "UnitError",
        r"Station 's0': demand: '16 KiB' is a size .* a time",
        _call(lambda: _net(["16 KiB"]))),
    Row(PY, 'a rate where a time is expected: think time `"100 MB/s"`', "UnitError",
        r"think_time: '100 MB/s' is a rate",
        _call(lambda: _net(think_time="100 MB/s"))),
    Row(PY, 'bits where a rate is expected: `"100 Mbit"` as a rate', "UnitError",
        r"'100 Mbit' is a size .* a rate",
        _call(lambda: units.parse("100 Mbit", "rate"))),
    Row(PY, 'a frequency where a time is expected: demand `"40000/s"`', "UnitError",
        r"Station 's0': demand: '40000/s' is a frequency",
        _call(lambda: _net(["40000/s"]))),
    Row(PY, 'an empty quantity string `""`', "UnitError", r"cannot read '' as '<number> <unit>'",
        _call(lambda: units.parse(""))),
    Row(PY, 'a unit without a number: `"ms"`', "UnitError", r"cannot read 'ms'",
        _call(lambda: units.parse("ms"))),
    Row(PY, 'NaN in a string: `"nan s"`', "UnitError", r"cannot read 'nan s'",
        _call(lambda: units.parse("nan s"))),
    Row(PY, 'an overflowing quantity: `"1e400 s"`', "UnitError", r"'1e400 s' is not a finite quantity",
        _call(lambda: units.parse("1e400 s"))),
    Row(PY, "a number instead of a string: `units.parse(4.9)`", "InvalidTypeError",
        r"got 4\.9 of type float", _call(lambda: units.parse(4.9))),
    Row(PY, 'an unknown dimension: `units.parse("1 s", "length")`', "UnitError",
        r"dimension must be one of .* got 'length'", _call(lambda: units.parse("1 s", "length"))),
    # -- networks and solvers -------------------------------------------------------------
    Row(PY, "no stations: `Network.from_demands([])`", "InvalidModelError",
        r"demands is empty", _call(lambda: _net([]))),
    Row(PY, "a NaN demand", "InvalidModelError", r"Station 's1': demand must be finite, got nan",
        _call(lambda: _net([0.01, float("nan")]))),
    Row(PY, "an infinite demand", "InvalidModelError", r"Station 's0': demand must be finite, got inf",
        _call(lambda: _net([math.inf]))),
    Row(PY, "a negative demand", "InvalidModelError", r"Station 's1': demand must be >= 0, got -0\.5",
        _call(lambda: _net([0.01, -0.5]))),
    Row(PY, 'a word as a demand: `["fast"]`', "UnitError", r"Station 's0': demand: cannot read 'fast'",
        _call(lambda: _net(["fast"]))),
    Row(PY, "one number instead of a list of demands", "InvalidTypeError",
        r"demands must be a sequence with one entry per station, got float",
        _call(lambda: _net(0.01))),
    Row(PY, "a 2-D array of demands for a single-class network", "InvalidModelError",
        r"give classes \(ClosedClass/OpenClass, one per row of demands\) or N \(one population per row\)",
        _call(lambda: _net(np.ones((2, 2))))),
    Row(PY, "`None` as the demands", "InvalidTypeError", r"demands must be a sequence with one entry per station, got NoneType",
        _call(lambda: _net(None))),
    Row(PY, "fewer names than demands", "InvalidModelError",
        r"names has 1 entries but demands has 2", _call(lambda: _net(names=["a"]))),
    Row(PY, "fewer server counts than demands", "InvalidModelError",
        r"servers has 1 entries but demands has 2", _call(lambda: _net(servers=[2]))),
    Row(PY, "an unknown station kind", "InvalidModelError", r"kinds\[1\] must be one of .*'disk'",
        _call(lambda: _net(kinds=["queue", "disk"]))),
    Row(PY, "zero servers", "InvalidModelError", r"servers\[1\] must be an integer >= 1, got 0",
        _call(lambda: _net(servers=[1, 0]))),
    Row(PY, "a fractional server count", "InvalidModelError",
        r"servers\[1\] must be an integer >= 1, got 1\.5", _call(lambda: _net(servers=[1, 1.5]))),
    Row(PY, "two stations with the same name", "InvalidModelError",
        r"station names must be unique; 'a' appears twice", _call(lambda: _net(names=["a", "a"]))),
    Row(PY, "a negative think time", "InvalidModelError", r"think_time must be >= 0, got -1",
        _call(lambda: _net(think_time=-1))),
    Row(PY, "an infinite think time", "InvalidModelError", r"think_time must be finite, got inf",
        _call(lambda: _net(think_time=math.inf))),
    Row(PY, "population zero: `mva(net, 0)`", "InvalidModelError",
        r"N must be an integer >= 1, got 0", _call(lambda: qn.mva(_net(), 0))),
    Row(PY, "a negative population", "InvalidModelError", r"N must be an integer >= 1, got -3",
        _call(lambda: qn.mva(_net(), -3))),
    Row(PY, "a fractional population `2.5`", "InvalidModelError",
        r"N must be an integer >= 1, got 2\.5", _call(lambda: qn.mva(_net(), 2.5))),
    Row(PY, "a NaN population", "InvalidModelError", r"N must be an integer >= 1, got nan",
        _call(lambda: qn.mva(_net(), float("nan")))),
    Row(PY, "an infinite population", "InvalidModelError", r"N must be an integer >= 1, got inf",
        _call(lambda: qn.mva(_net(), math.inf))),
    Row(PY, "a boolean population `True`", "InvalidTypeError",
        r"N must be an integer >= 1, got the boolean True", _call(lambda: qn.mva(_net(), True))),
    Row(PY, 'a population as a string `"10"`', "InvalidTypeError",
        r"N must be an integer >= 1, got '10' of type str", _call(lambda: qn.mva(_net(), "10"))),
    Row(PY, "a list of demands instead of a Network: `mva([0.1], 5)`", "InvalidTypeError",
        r"net must be a Network.*list", _call(lambda: qn.mva([0.1], 5))),
    Row(PY, "a population past memory: single-class `mva(net, 10**12)`", "LatticeTooLargeError",
        r"exact MVA of N = 1000000000000 jobs .* more than the allowed 1024 MiB \(max_memory", _call(lambda: qn.mva(_net(), 10**12))),
    Row(PY, "bounds for a population past memory: `bounds(net, 10**12)`", "LatticeTooLargeError",
        r"bounds for n = 1\.\.1000000000000 would need .* more than the allowed",
        _call(lambda: qn.bounds(_net(), 10**12))),
    Row(PY, "times that overflow (demands of `1e308` s, a unit mistake)", "InvalidModelError",
        r"overflows double precision .* are the times in seconds",
        _call(lambda: qn.mva(_net([1e308, 1e308]), 2))),
    Row(PY, "JMVA text as bytes: `from_jmva(b\"<model/>\")`", "InvalidTypeError",
        r"text must be a str of JMVA XML, got bytes",
        _call(lambda: __import__("qnmodel.io.jmva", fromlist=["x"]).from_jmva(b"<model/>"))),
    Row(PY, "a multi-class lattice past memory", "LatticeTooLargeError",
        r"lattice .* max_memory",
        _call(lambda: qn.mva_multiclass(qn.Network.from_demands(
            [[0.01, 0.02], [0.02, 0.01], [0.01, 0.01]], N=[2000, 2000, 2000],
            disciplines=["PS", "PS"])))),
    Row(PY, "`max_memory` without a unit-bearing dimension: `max_memory=\"5 s\"`", "UnitError",
        r"max_memory: '5 s' is a time",
        _call(lambda: qn.mva_multiclass(qn.Network.from_demands([[0.01]], N=[3]), max_memory="5 s"))),
    Row(PY, "a rank-3 demand array for multi-class MVA", "InvalidModelError",
        r"demands must be a non-empty C x K matrix .* shape \(1, 1, 1\)",
        _call(lambda: qn.Network.from_demands(np.ones((1, 1, 1)), N=[3]))),
    Row(PY, "per-class populations of a different length than the demand rows", "InvalidModelError",
        r"N has 3 entries but demands has 2 rows \(classes\)",
        _call(lambda: qn.Network.from_demands([[0.01], [0.02]], N=[1, 2, 3]))),
    Row(PY, "a negative per-class population", "InvalidModelError",
        r"N\[1\] must be an integer >= 0, got -1",
        _call(lambda: qn.Network.from_demands([[0.01], [0.02]], N=[1, -1]))),
    Row(PY, "an unknown bounds method", "InvalidModelError",
        r"method must be one of .*got 'tight'", _call(lambda: qn.bounds(_net(), 5, method="tight"))),
    Row(PY, "an unknown approximate-MVA method", "InvalidModelError",
        r"method must be one of .*got 'bard'",
        _call(lambda: qn.amva(_net(), 5, method="bard"))),
    Row(PY, "a negative AMVA tolerance", "InvalidModelError", r"tol must be .*got -1e-06",
        _call(lambda: qn.amva(_net(), 5, tol=-1e-6))),
    Row(PY, "AMVA with zero iterations", "InvalidModelError",
        r"max_iter must be an integer >= 1, got 0", _call(lambda: qn.amva(_net(), 5, max_iter=0))),
    Row(PY, "a negative arrival rate", "InvalidModelError", r"arrival_rate must be >= 0, got -5",
        _call(lambda: qn.open_network(_net(), -5))),
    Row(PY, "a NaN arrival rate", "InvalidModelError", r"arrival_rate must be finite, got nan",
        _call(lambda: qn.open_network(_net(), float("nan")))),
    Row(PY, 'a time where an arrival rate is expected: `"5 ms"`', "UnitError",
        r"arrival_rate: '5 ms' is a time",
        _call(lambda: qn.open_network(_net(), "5 ms"))),
    Row(PY, "an open network at utilisation 1", "UnstableModelError",
        r"utili[sz]ation .*>= 1|saturated",
        _call(lambda: qn.open_network(_net([0.01, 0.02]), 50.0))),
    Row(PY, "a hit ratio given in percent (90)", "InvalidModelError",
        r"must be a hit ratio in \[0, 1\], got 90.*use 0\.9, not 90",
        _call(lambda: qn.NFSBandwidth("5 GB/s", "1 Gbit/s", "5 GB/s", "80 MB/s").bandwidth(90, 0))),
    Row(PY, 'an NFS bandwidth in bits without "/s" (`"1 Gbit"`)', "UnitError",
        r"b2 \(network bandwidth\): '1 Gbit' is a size .* a rate",
        _call(lambda: qn.NFSBandwidth("5 GB/s", "1 Gbit", "5 GB/s", "80 MB/s"))),
    Row(PY, "an empty rate-multiplier curve", "InvalidModelError", r"rate_multipliers is empty",
        _call(lambda: qn.Station("d", 0.01, rate_multipliers=[]))),
    Row(PY, "a zero in the rate-multiplier curve", "InvalidModelError",
        r"rate_multipliers\[1\] must be finite and > 0.* got 0",
        _call(lambda: qn.Station("d", 0.01, rate_multipliers=[1, 0]))),
    Row(PY, "a closed class with a negative population", "InvalidModelError",
        r"ClosedClass 'batch': N must be an integer >= 0, got -2",
        _call(lambda: qn.ClosedClass("batch", -2, 0.0))),
    Row(PY, "a closed class of 10**30 jobs (past 2^53, where counts stop being exact)",
        "InvalidModelError", r"ClosedClass 'batch': N must be at most 2\^53 = 9007199254740992 .*got a 31-digit number",
        _call(lambda: qn.ClosedClass("batch", 10**30, 0.0))),
    Row(PY, "an open class with a negative rate", "InvalidModelError",
        r"arrival_rate must be >= 0, got -1|rate.*-1",
        _call(lambda: qn.OpenClass("web", -1.0))),
    Row(PY, "simulation with zero replications", "InvalidModelError",
        r"replications must be an integer >= 2, got 0|replications.*0",
        _call(lambda: qn.simulate(_net(), 3, replications=0))),
    Row(PY, "simulation confidence 1.5", "InvalidModelError", r"confidence .*1\.5",
        _call(lambda: qn.simulate(_net(), 3, confidence=1.5))),
    Row(PY, "an unknown service distribution", "InvalidModelError", r"service.*'gamma-ish'",
        _call(lambda: qn.simulate(_net(), 3, service="gamma-ish"))),
    Row(PY, "a routing row whose probabilities sum to 0.9", "InvalidModelError",
        r"routing\['source'\]: its probabilities sum to 0\.9; every row sums to 1",
        _call(lambda: qn.Network([qn.Station("d", service_time=0.01)],
                                 routing={"source": {"d": 0.9}, "d": {"sink": 1.0}}))),
    Row(PY, "simulating a routed network with a finite capacity", "InvalidModelError",
        r"simulate: station 'd' has a finite capacity and the network a routing",
        _call(lambda: qn.simulate(qn.Network([qn.Station("d", service_time=0.01, capacity=3)],
                                             routing={"think": {"d": 1.0}, "d": {"think": 1.0}}),
                                  2, seed=1))),
    Row(PY, "an unknown qnbench engine", "BenchError", r"--engine: 'warp' is not one of null,emu",
        _call(lambda: qn.bench.run("warp", runtime=0.01))),
    Row(PY, 'a time where a block size is expected: `bench.run(bs="4 ms")`', "UnitError",
        r"bs.*'4 ms' is a time",
        _call(lambda: qn.bench.run("null", bs="4 ms", runtime=0.01))),
    Row(PY, "a trace source of the wrong type: `load_trace(42)`", "TraceError",
        r"source must be a file path or a parsed JSON document, got int",
        _call(lambda: qn.calibration.load_trace(42))),
    Row(PY, "an unknown trace format", "InvalidModelError", r"format must be one of .*'xlsx'",
        _call(lambda: qn.calibration.load_trace({}, format="xlsx"))),
    Row(PY, "a model file path that does not exist", "InvalidModelError", r"no such model file",
        _call(lambda: qn.load_model("/nonexistent/model.toml"))),
    Row(PY, "model text of the wrong type (bytes)", "InvalidTypeError",
        r"text must be a str of TOML, got bytes",
        _call(lambda: load_model_text(GOOD_MODEL.encode()))),
    Row(PY, 'an unknown demand composition: `NetworkedRAID.cui2006(form="pipelined")`', "InvalidModelError",
        r"form must be one of 'paper', 'corrected'; got 'pipelined'",
        _call(lambda: qn.NetworkedRAID.cui2006(form="pipelined"))),
    Row(PY, 'an unknown NFS write form: `NFSSystem(bw, form="pipelined")`', "InvalidModelError",
        r"form must be one of 'paper', 'corrected'; got 'pipelined'",
        _call(lambda: qn.NFSSystem(qn.NFSBandwidth("5 GB/s", "1 Gbit/s", "5 GB/s", "80 MB/s"), form="pipelined"))),
    # -- TOML model files ------------------------------------------------------------------
    Row(TOML, "no `[model]` table", "InvalidModelError", r"missing \[model\] table",
        _model('[[station]]\nname = "d"\ndemand = "1 ms"\n')),
    Row(TOML, "a TOML syntax error", "InvalidModelError", r"m\.toml:2: not valid TOML",
        _model('[model]\nthink_time = = 1\n')),
    Row(TOML, "an unknown top-level table `[modle]`", "InvalidModelError",
        r"modle: unknown key; allowed keys here are model, station",
        _model(GOOD_MODEL + "[modle]\nx = 1\n")),
    Row(TOML, "an unknown station key (`demnad`)", "InvalidModelError",
        r"station\[0\]\.demnad: unknown key", _model(GOOD_MODEL.replace("demand =", "demnad ="))),
    Row(TOML, "a think time without a unit (`think_time = \"1\"`)", "InvalidModelError",
        r"model\.think_time: '1' has no unit", _model(GOOD_MODEL.replace('"1 s"', '"1"'))),
    Row(TOML, "a size as a think time (`\"1 MiB\"`)", "InvalidModelError",
        r"model\.think_time: '1 MiB' is a size", _model(GOOD_MODEL.replace('"1 s"', '"1 MiB"'))),
    Row(TOML, "a negative demand (`\"-10 ms\"`)", "InvalidModelError",
        r"station\[0\]\.demand: must be finite and >= 0, got '-10 ms'",
        _model(GOOD_MODEL.replace('"10 ms"', '"-10 ms"'))),
    Row(TOML, "an infinite demand (`inf`)", "InvalidModelError",
        r"station\[0\]\.demand: must be finite and >= 0, got inf",
        _model(GOOD_MODEL.replace('"10 ms"', "inf"))),
    Row(TOML, "a NaN demand (`nan`)", "InvalidModelError",
        r"station\[0\]\.demand: must be finite and >= 0, got nan",
        _model(GOOD_MODEL.replace('"10 ms"', "nan"))),
    Row(TOML, "a demand as a boolean", "InvalidModelError",
        r"station\[0\]\.demand: must be a time .* got True",
        _model(GOOD_MODEL.replace('"10 ms"', "true"))),
    Row(TOML, "population zero", "InvalidModelError", r"model\.N: .*>= 1, got 0",
        _model(GOOD_MODEL.replace("N = 4", "N = 0"))),
    Row(TOML, 'population as a string (`"ten"`)', "InvalidModelError",
        r"model\.N: .*'ten'",
        _model(GOOD_MODEL.replace("N = 4", 'N = "ten"'))),
    Row(TOML, "an empty populations list", "InvalidModelError",
        r"model\.populations: is empty",
        _model(GOOD_MODEL.replace("N = 4", "populations = []"))),
    Row(TOML, "both N and populations", "InvalidModelError",
        r"give either N or populations, not both",
        _model(GOOD_MODEL.replace("N = 4", "N = 4\npopulations = [1, 2]"))),
    Row(TOML, "a population past memory (`N = 10_000_000_000`)",
        "InvalidModelError", r"model\.N: N = 10000000000 populations .* more than the allowed",
        _model(GOOD_MODEL.replace("N = 4", "N = 10_000_000_000"))),
    Row(TOML, "a population range past memory (`{ start = 1, stop = 10**12, step = 1 }`)",
        "InvalidModelError", r"model\.populations: N = 1000000000000 populations .* more than the allowed",
        _model(GOOD_MODEL.replace("N = 4", "populations = { start = 1, stop = 1_000_000_000_000 }"))),
    Row(TOML, "a range with stop below start", "InvalidModelError",
        r"model\.populations\.stop: must be >= start \(8\), got 2",
        _model(GOOD_MODEL.replace("N = 4", "populations = { start = 8, stop = 2 }"))),
    Row(TOML, "zero servers", "InvalidModelError", r"station\[0\]\.servers: must be an integer >= 1, got 0",
        _model(GOOD_MODEL + "servers = 0\n")),
    Row(TOML, "an unknown station kind", "InvalidModelError", r"station\[0\]\.kind: .*'disk'",
        _model(GOOD_MODEL + 'kind = "disk"\n')),
    Row(TOML, "a station without a name", "InvalidModelError",
        r"station\[0\]: missing name", _model(GOOD_MODEL.replace('name = "disk"\n', ""))),
    Row(TOML, "two stations with the same name", "InvalidModelError", r"station\[1\]\.name: duplicate station name 'disk' \(also station\[0\]\)",
        _model(GOOD_MODEL + '[[station]]\nname = "disk"\ndemand = "1 ms"\n')),
    Row(TOML, "a size without a rate", "InvalidModelError",
        r"station\[0\]\.size: size needs a rate",
        _model(GOOD_MODEL.replace('demand = "10 ms"', 'size = "64 KiB"'))),
    Row(TOML, "a rate in bits where bytes were meant is fine, but a rate without unit is not "
        "(`rate = \"100\"`)", "InvalidModelError", r"station\[0\]\.rate: '100' has no unit",
        _model(GOOD_MODEL.replace('demand = "10 ms"', 'size = "64 KiB"\nrate = "100"'))),
    Row(TOML, "a think time as a bare number (`think_time = 20`: 20 ms or 20 s?)",
        "InvalidModelError",
        r"model\.think_time: got the bare number 20: a time needs its unit: write '20 ms' or "
        r"'20 s'", _model(GOOD_MODEL.replace('"1 s"', "20"))),
    Row(TOML, "a demand as a bare number (`demand = 0.01`)", "InvalidModelError",
        r"station\[0\]\.demand: got the bare number 0\.01: a time needs its unit",
        _model(GOOD_MODEL.replace('"10 ms"', "0.01"))),
    Row(TOML, "a target with a bare bound (`target = \"R <= 5\"`)", "InvalidModelError",
        r"model\.target: target 'R <= 5': the bound 5 has no unit; write 'R <= 5 ms' or "
        r"'R <= 5 s'", _model(GOOD_MODEL.replace("N = 4", 'N = 4\ntarget = "R <= 5"'))),
    Row(TOML, "a time where a rate is expected (`rate = \"5 ms\"`)", "InvalidModelError",
        r"station\[0\]\.rate: '5 ms' is a time",
        _model(GOOD_MODEL.replace('demand = "10 ms"', 'size = "64 KiB"\nrate = "5 ms"'))),
    Row(TOML, "an unknown system type", "InvalidModelError", r"system\.type: .*'san'",
        _model(GOOD_MODEL + '[system]\ntype = "san"\n')),
    Row(TOML, 'a networked RAID with an unknown `form` (`"corrected"` or `"paper"`)', "InvalidModelError",
        r"m\.toml:6: system\.form: form must be one of 'paper', 'corrected'; got 'Paper'",
        _model('[model]\nN = 4\n[system]\ntype = "networked_raid"\nreference = "cui2006"\n'
               'form = "Paper"\n')),
    Row(TOML, "an empty file", "InvalidModelError", r"missing \[model\] table", _model("")),
    Row(TOML, "a truncated file (cut inside a string)", "InvalidModelError",
        r"not valid TOML", _model(GOOD_MODEL[:40])),
    Row(TOML, "a binary file", "InvalidModelError", r"m\.toml: (cannot read the file|not a text)",
        _model_file(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe" * 10)),
    Row(TOML, "an enormous file (70 MiB)", "InvalidModelError",
        r"m\.toml: .*73400320 bytes.*larger than",
        _model_file(b"# " + b"x" * (HUGE - 3) + b"\n")),
    Row(TOML, "a JSON file given as a model", "InvalidModelError", r"not valid TOML",
        _model_file(QNBENCH_DOC, "trace.json")),
    Row(TOML, "a YAML file given as a model", "InvalidModelError", r"not valid TOML",
        _model_file("model:\n  population: 4\n", "m.yaml")),
    Row(TOML, "a directory given as the model file", "InvalidModelError",
        r"cannot read the model file: a directory", lambda tmp: qn.load_model(tmp)),
    # -- the qnmodel command ---------------------------------------------------------------
    Row(CLI, "`qnmodel solve` without a model file", "Exit2", r"usage",
        _cli("solve")),
    Row(CLI, "`qnmodel solve missing.toml`", "Exit1", r"no such model file", _cli("solve", "{tmp}/missing.toml")),
    Row(CLI, "`qnmodel solve m.toml --format xml`", "Exit2", r"invalid choice: 'xml'",
        _cli("solve", "{tmp}/m.toml", "--format", "xml", files={"m.toml": GOOD_MODEL})),
    Row(CLI, "`qnmodel solve` of a model with a negative demand", "Exit1",
        r"error: .*m\.toml:\d+: station\[0\]\.demand: must be finite and >= 0, got '-10 ms'",
        _cli("solve", "{tmp}/m.toml", files={"m.toml": GOOD_MODEL.replace('"10 ms"', '"-10 ms"')})),
    Row(CLI, "`qnmodel solve` of a binary file", "Exit1", r"error: .*m\.toml",
        _cli("solve", "{tmp}/m.toml", files={"m.toml": b"\x00\x01\xff" * 50})),
    Row(CLI, "`qnmodel bench emu jobs=abc`", "Exit2", r"--jobs: 'abc' is not an integer",
        _cli("bench", "emu", "jobs=abc", "runtime=0.01 s")),
    Row(CLI, "`qnmodel bench emu` with an option without `=`", "Exit2", r"KEY=VALUE.*'jobs'",
        _cli("bench", "emu", "jobs")),
    Row(CLI, "`qnmodel bench warp` (unknown engine)", "Exit2", r"--engine: 'warp' is not one of",
        _cli("bench", "warp")),
    Row(CLI, "`qnmodel calibrate` of a truncated trace", "Exit1", r"truncated",
        _cli("calibrate", "{tmp}/d.json", "{tmp}/d.json", files={"d.json": QNBENCH_DOC[:60]})),
    Row(CLI, "`qnmodel check --hardware` of a description with a bare number", "Exit1",
        r"link\[0\]\.rate must be a quantity with its unit.*got 40",
        _cli("check", "--hardware", "{tmp}/hw.toml",
             files={"hw.toml": '[[link]]\nname = "ib0"\nrate = 40\n'})),
    Row(CLI, "`qnmodel solve --target 'R <= 5'` (5 ms or 5 s?)", "Exit2",
        r"--target 'R <= 5': the bound 5 has no unit; write 'R <= 5 ms' or 'R <= 5 s'",
        _cli("solve", "{tmp}/m.toml", "--target", "R <= 5", files={"m.toml": GOOD_MODEL})),
    Row(CLI, "`qnmodel solve --set think_time=20` (a bare number)", "Exit2",
        r"--set think_time=20: model\.think_time: got the bare number 20: a time needs its unit",
        _cli("solve", "{tmp}/m.toml", "--set", "think_time=20", files={"m.toml": GOOD_MODEL})),
    Row(CLI, "`qnmodel plot --measured` of a CSV whose response times have no unit", "Exit1",
        r"m\.csv: column 'response_time' holds times without a unit \(first value 12\.5\): name "
        r"it with its unit, e\.g\. 'response_time_ms'",
        _cli("plot", "{tmp}/m.toml", "--measured", "{tmp}/m.csv", "--out", "{tmp}/p.png",
             files={"m.toml": GOOD_MODEL, "m.csv": "n,throughput,response_time\n1,80,12.5\n"})),
    Row(CLI, "`qnmodel sweep` varying an unknown station", "Exit2",
        r"cannot set 'tape\.demand': .* a station among \['disk'\]",
        _cli("sweep", "{tmp}/m.toml", "--vary", "tape.demand=1 ms,2 ms",
             files={"m.toml": GOOD_MODEL})),
    # -- trace files -----------------------------------------------------------------------
    Row(TRACE, "a trace file that does not exist", "TraceError", r"no such trace file",
        lambda tmp: qn.calibration.load_trace(tmp / "none.json")),
    Row(TRACE, "a CSV trace column of latencies without a unit (`latency_mean`)", "TraceError",
        r"t\.csv: column 'latency_mean' has no unit: name it with its unit, e\.g\. "
        r"'latency_mean_ms', 'latency_mean_s' or 'latency_mean \[ms\]'",
        _trace("jobs,latency_mean\n1,6.5\n", "t.csv")),
    Row(TRACE, "an empty trace file", "TraceError", r"t\.json: the file is empty", _trace("")),
    Row(TRACE, "a truncated qnbench JSON", "TraceError", r"t\.json: truncated",
        _trace(QNBENCH_DOC[:70])),
    Row(TRACE, "a binary file as a trace", "TraceError", r"t\.json: not a text file",
        _trace(b"\xff\xd8\xff\xe0" * 64)),
    Row(TRACE, "a JSON list instead of an object", "TraceError",
        r"t\.json: a trace is a JSON object, got a JSON list", _trace("[1, 2, 3]")),
    Row(TRACE, "JSON of another tool (no schema key)", "TraceError",
        r"not a qnbench trace \(no 'schema' key\) nor fio JSON", _trace('{"sysbench": 1}')),
    Row(TRACE, "a qnbench trace of a newer schema version (99)", "TraceError",
        r"schema_version.*99", _trace(QNBENCH_DOC.replace('"schema_version": 1', '"schema_version": 99'))),
    Row(TRACE, "a JSON document of another schema (`\"schema\": \"iperf\"`)", "TraceError",
        r"schema.*'iperf'", _trace(QNBENCH_DOC.replace('"qnbench"', '"iperf"'))),
    Row(TRACE, "an enormous trace (70 MiB)", "TraceError", r"t\.json: .*73400320 bytes.*larger than",
        _trace(b" " * HUGE)),
    Row(TRACE, "a CSV trace without a measured column", "TraceError",
        r"t\.csv: CSV header \['jobs', 'colour'\] has none of the measured columns",
        _trace("jobs,colour\n1,red\n", "t.csv")),
    Row(TRACE, "a CSV trace with a unit string in a number column", "TraceError",
        r"line 3, column 'latency_mean_s': '5 ms'",
        _trace("jobs,latency_mean_s\n1,0.005\n2,5 ms\n", "t.csv")),
    Row(TRACE, "`bench.load` of a binary file", "TraceError", r"t\.json: not a text file",
        _trace(b"\x00\xff" * 100, reader="bench")),
    Row(TRACE, "`bench.load` of a truncated trace", "TraceError", r"truncated|not valid JSON",
        _trace(QNBENCH_DOC[:50], reader="bench")),
    Row(TRACE, "`bench.load` of a missing file", "TraceError", r"cannot read trace .*none\.json",
        lambda tmp: qn.bench.load(tmp / "none.json")),
    # -- qnbench options ---------------------------------------------------------------------
    Row(QNB, "`--jobs 0`", "Exit2", r"--jobs", _qnbench("--engine", "null", "--jobs", "0")),
    Row(QNB, "`--jobs -1`", "Exit2", r"--jobs", _qnbench("--engine", "null", "--jobs", "-1")),
    Row(QNB, "`--jobs abc`", "Exit2", r"--jobs.*abc", _qnbench("--engine", "null", "--jobs", "abc")),
    Row(QNB, "`--engine cpu --cpu-op cachehit --bs 6000` (not whole 4 KiB pages)", "Exit2", r"cachehit needs --bs a multiple of 4KiB and at most --size \(16777216\), got --bs 6000",
        _qnbench("--engine", "cpu", "--cpu-op", "cachehit", "--bs", "6000")),
    Row(QNB, "`--engine cpu --cpu-op cachehit --bs 1MiB --size 512KiB` (a read larger than the cache)", "Exit2", r"at most --size \(524288\), got --bs 1048576",
        _qnbench("--engine", "cpu", "--cpu-op", "cachehit", "--bs", "1MiB", "--size", "512KiB")),
    Row(QNB, "`--runtime 5 parsec` (unknown unit)", "Exit2", r"--runtime.*5parsec",
        _qnbench("--engine", "null", "--runtime", "5parsec")),
    Row(QNB, "`--runtime -1s`", "Exit2", r"--runtime", _qnbench("--engine", "null", "--runtime", "-1s")),
    Row(QNB, "`--runtime 5MB` (a size where a time is expected)", "Exit2", r"--runtime.*5MB",
        _qnbench("--engine", "null", "--runtime", "5MB")),
    Row(QNB, "`--bs 4KB` (ambiguous)", "Exit2", r"--bs.*4KB", _qnbench("--engine", "null", "--bs", "4KB")),
    Row(QNB, "`--bs 4ms` (a time where a size is expected)", "Exit2", r"--bs.*4ms",
        _qnbench("--engine", "null", "--bs", "4ms")),
    Row(QNB, "`--bs 4XiB` (unknown prefix)", "Exit2", r"--bs.*4XiB", _qnbench("--engine", "null", "--bs", "4XiB")),
    Row(QNB, "`--dev-rate 100Mbit` (bits where a rate is expected)", "Exit2", r"--dev-rate.*100Mbit",
        _qnbench("--engine", "emu", "--dev-rate", "100Mbit")),
    Row(QNB, "`--dev-latency nan`", "Exit2", r"--dev-latency.*nan",
        _qnbench("--engine", "emu", "--dev-latency", "nan")),
    Row(QNB, "`--dev-latency 1e999s`", "Exit2", r"--dev-latency.*1e999s",
        _qnbench("--engine", "emu", "--dev-latency", "1e999s")),
    Row(QNB, "`--serve disk` (unknown server kind)", "Exit2", r"--serve: 'disk' is not one of mem,file,emu",
        _qnbench("--engine", "tcp", "--serve", "disk")),
    Row(QNB, "`--serve emu` with no service time (`--dev-latency 0 --dev-rate 0`)", "Exit2",
        r"--serve emu needs --dev-latency > 0 or --dev-rate > 0",
        _qnbench("--engine", "tcp", "--serve", "emu", "--dev-latency", "0", "--dev-rate", "0")),
    Row(QNB, "`--dev-servers 0`", "Exit2", r"--dev-servers 0 must be between 1 and 4096",
        _qnbench("--engine", "tcp", "--serve", "emu", "--dev-servers", "0")),
    Row(QNB, "`--dev-dist weibull` (unknown service law)", "Exit2", r"--dev-dist: 'weibull' is not one of const,exp",
        _qnbench("--engine", "tcp", "--serve", "emu", "--dev-dist", "weibull")),
    Row(QNB, "`--engine warp`", "Exit2", r"warp", _qnbench("--engine", "warp")),
    Row(QNB, "an unknown option `--speed 11`", "Exit2", r"--speed", _qnbench("--engine", "null", "--speed", "11")),
    Row(QNB, "`--think abc`", "Exit2", r"--think.*abc", _qnbench("--engine", "null", "--think", "abc")),
    # -- JMVA XML ------------------------------------------------------------------------------
    Row(JMVA, "not XML", "InvalidModelError", r"not a JMVA XML document", _jmva("hello")),
    Row(JMVA, "truncated XML", "InvalidModelError", r"not a JMVA XML document",
        _jmva("<model><parameters><classes number=")),
    Row(JMVA, "XML of another tool (`<svg>`)", "InvalidModelError",
        r"not a JMVA model: expected <model><parameters>", _jmva("<svg></svg>")),
    Row(JMVA, "a model without classes", "InvalidModelError", r"JMVA model has no <classes>",
        _jmva("<model><parameters><classes/></parameters></model>")),
    Row(JMVA, "a fractional population", "InvalidModelError", r"population 2\.5 is not an integer",
        _jmva('<model><parameters><classes><closedclass name="c" population="2.5"/></classes>'
              "</parameters></model>")),
    Row(JMVA, "an infinite population", "InvalidModelError", r"class 'c' population.*inf",
        _jmva('<model><parameters><classes><closedclass name="c" population="inf"/></classes>'
              "</parameters></model>")),
    Row(JMVA, "a population of 1e308 (found by the fuzzer: it overflowed int64 deep inside)",
        "InvalidModelError", r"ClosedClass 'a': N must be at most 2\^53 .* got a 309-digit number",
        lambda tmp: __import__("qnmodel.io.jmva", fromlist=["x"]).from_jmva(
            JMVA_TEXT.replace('population="3"', 'population="1e308"'))),
    Row(JMVA, "a JMVA file that does not exist", "InvalidModelError", r"missing\.jmva: no such JMVA file",
        lambda tmp: __import__("qnmodel.io.jmva", fromlist=["read_jmva"]).read_jmva(tmp / "missing.jmva")),
    Row(JMVA, "a binary JMVA file", "InvalidModelError", r"m\.jmva: not a text file",
        _jmva(b"\x00\x9f\x92\x96" * 40, path=True)),
    Row(JMVA, "an XML bomb (nested entities)", "InvalidModelError", r"declares a document type or entities .* refused",
        _jmva('<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">'
              '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">'
              ']><model><parameters>&c;</parameters></model>')),
    # -- testbed topology files -------------------------------------------------------------------
    Row(TOPO, "a public subnet", "InvalidModelError", r"testbed\.subnet must be a private /16.*'8\.8\.0\.0/16'",
        _topology(GOOD_TOPOLOGY.replace("10.213.0.0/16", "8.8.0.0/16"))),
    Row(TOPO, "a subnet that is not an address", "InvalidModelError",
        r"testbed\.subnet must be an IPv4 network.*'lan'",
        _topology(GOOD_TOPOLOGY.replace("10.213.0.0/16", "lan"))),
    Row(TOPO, "no clients", "InvalidModelError", r"clients: a testbed needs at least one client",
        _topology(GOOD_TOPOLOGY.split("[[clients]]")[0] + "[[servers]]" + GOOD_TOPOLOGY.split("[[servers]]")[1])),
    Row(TOPO, "a link rate without a unit", "InvalidModelError|InvalidTypeError", r"clients\[0\].*rate.*100",
        _topology(GOOD_TOPOLOGY.replace('"100 Mbit/s"', '"100"'))),
    Row(TOPO, "a negative link delay", "InvalidModelError", r"clients\[0\].*delay.*-1 ms",
        _topology(GOOD_TOPOLOGY.replace('"1 ms"', '"-1 ms"'))),
    Row(TOPO, "a node name that is also a host command (`c1; rm -rf /`)", "InvalidModelError",
        r"clients\[0\]\.name.*'c1; rm -rf /'",
        _topology(GOOD_TOPOLOGY.replace('name = "c1"', 'name = "c1; rm -rf /"'))),
    Row(TOPO, "a path-like node name (`../../etc`)", "InvalidModelError",
        r"clients\[0\]\.name.*'\.\./\.\./etc'",
        _topology(GOOD_TOPOLOGY.replace('name = "c1"', 'name = "../../etc"'))),
    Row(TOPO, "an unknown key", "InvalidModelError", r"testbed\.colour: unknown key \(allowed: name, subnet, priority\)",
        _topology(GOOD_TOPOLOGY.replace('[testbed]\n', '[testbed]\ncolour = "red"\n'))),
    Row(TOPO, "a binary topology file", "InvalidModelError", r"tb\.toml: not a text file",
        _topology(b"\xff\xfe\x00\x00" * 30)),
    Row(TOPO, "not TOML", "InvalidModelError", r"tb\.toml: not valid TOML", _topology("{ nope")),
    Row(TOPO, "an emu disk with an unknown service law", "InvalidModelError",
        r"servers\[0\]\.disk\.dist: unknown service law 'weibull'",
        _topology(EMU_TOPOLOGY.replace('dist = "exp"', 'dist = "weibull"'))),
    Row(TOPO, "an emu disk with a negative service time", "InvalidModelError",
        r"servers\[0\]\.disk\.latency must be >= 0, got '-4 ms'",
        _topology(EMU_TOPOLOGY.replace('"4 ms"', '"-4 ms"'))),
    Row(TOPO, "an emu disk's service time without a unit", "UnitError",
        r"servers\[0\]\.disk\.latency = 4 has no unit",
        _topology(EMU_TOPOLOGY.replace('"4 ms"', "4"))),
    Row(TOPO, "an emu disk with no service time (neither latency nor rate)", "InvalidModelError",
        r"servers\[0\]\.disk: an emu disk needs latency > 0",
        _topology(EMU_TOPOLOGY.replace('latency = "4 ms", rate = "100 MB/s", ', ""))),
    Row(TOPO, "an emu disk with 0 servers", "InvalidModelError",
        r"servers\[0\]\.disk\.servers must be an integer 1\.\.4096, got 0",
        _topology(EMU_TOPOLOGY.replace("servers = 1", "servers = 0"))),
    Row(TOPO, "an emu disk on an NFS server (ganesha cannot export it)", "InvalidModelError",
        r"servers\[0\]\.disk\.kind: an emu disk lives inside qnbench's TCP block server.*not 'nfs'.*nfs-ganesha exports a file system",
        _topology(EMU_TOPOLOGY.replace('service = "tcp"', 'service = "nfs"'))),
    Row(TOPO, "an enormous topology file (70 MiB)", "InvalidModelError",
        r"tb\.toml: .*73400320 bytes.*larger than", _topology(b"#" * (HUGE - 1) + b"\n")),
    # -- hardware descriptions ---------------------------------------------------------------------
    Row(HW, "a link rate as a bare number (bits or bytes?)", "InvalidTypeError",
        r"link\[0\]\.rate must be a quantity with its unit.*got 40",
        _hardware('[[link]]\nname = "ib0"\nrate = 40\n')),
    Row(HW, "a memory transfer rate in bytes (a rate where a frequency is expected)", "UnitError",
        r"memory\.transfer_rate.*'1333 MB/s' is a rate",
        _hardware('[memory]\ntransfer_rate = "1333 MB/s"\nbus_width = "64 bit"\n')),
    Row(HW, "zero memory channels", "InvalidModelError", r"hw\.toml\.memory\.channels must be >= 1, got 0",
        _hardware('[memory]\ntransfer_rate = "1333 MT/s"\nbus_width = "64 bit"\nchannels = 0\n')),
    Row(HW, "an unknown table", "InvalidModelError", r"'gpu'",
        _hardware('[gpu]\nrate = "1 TB/s"\n')),
    Row(HW, "a node without a name", "InvalidModelError", r"node\[0\]\.name must be a non-empty string",
        _hardware('[[link]]\nname = "ib0"\nrate = "40 Gbit/s"\n[[node]]\n')),
    Row(HW, "no component with a peak", "InvalidModelError", r"no component with a peak",
        _hardware('[[node]]\nname = "a"\n')),
    Row(HW, "a missing hardware file", "InvalidModelError", r"hw\.toml.*(no such|cannot read)",
        lambda tmp: __import__("qnmodel.lab.check.hardware", fromlist=["x"]).load_hardware(tmp / "hw.toml")),
    Row(HW, "a binary hardware file", "InvalidModelError", r"hw\.toml: not a text",
        _hardware(b"\x00\xff\xfe" * 30)),
    Row(HW, "hardware text of the wrong type (bytes)", "InvalidTypeError", r"text must be a str.*bytes",
        _hardware(b'[[link]]\nname = "ib0"\nrate = "40 Gbit/s"\n', path=False)),
    # capacity targets, caches, fork-join fan-out, LINE JSON, validation studies, the newer
    # qnbench workloads
    Row(PY, "a target that does not parse (`\"R < fast\"`)", "InvalidModelError", r"target 'R < fast'.*'fast' is not a time",
        lambda tmp: qn.max_population(qn.Network.from_demands([0.01, 0.02]), "R < fast")),
    Row(PY, "a mean target in the wrong unit (`\"R <= 40 MB/s\"`)", "UnitError", r"'40 MB/s' is a rate.*a time \(s\) is required",
        lambda tmp: qn.max_population(qn.Network.from_demands([0.01, 0.02]), "R <= 40 MB/s")),
    Row(PY, "a percentile target outside (0, 100) (`\"p150 <= 1 s\"`)", "InvalidModelError", r"percentile must be strictly between 0 and 100, got 150",
        lambda tmp: qn.max_population(qn.Network.from_demands([0.01, 0.02]), "p150 <= 1 s")),
    Row(PY, "a throughput target given as a time (`\"X >= 5 ms\"`)", "UnitError", r"'5 ms' is a time.*frequency",
        lambda tmp: qn.max_population(qn.Network.from_demands([0.01, 0.02]), "X >= 5 ms")),
    Row(PY, "a cache of negative size", "InvalidModelError", r"cache size.*got -1",
        lambda tmp: __import__("qnmodel.models.cache", fromlist=["x"]).Cache(size=-1, working_set=100)),
    Row(PY, "a cache working set of no items", "InvalidModelError", r"working_set must hold at least one item, got 0",
        lambda tmp: __import__("qnmodel.models.cache", fromlist=["x"]).Cache(size=10, working_set=0)),
    Row(PY, "a Zipf popularity with alpha = 0", "InvalidModelError", r"alpha \(Zipf exponent\) must be > 0, got 0",
        lambda tmp: __import__("qnmodel.models.cache", fromlist=["x"]).Cache(size=10, working_set=100, popularity="zipf", alpha=0)),
    Row(PY, "a fork-join fan-out larger than its branches", "InvalidModelError", r"ForkJoin 'fj': fanout must be between 1 and .* n = 2, got fanout=3",
        lambda tmp: qn.ForkJoin("fj", [qn.Station("a", "1 ms"), qn.Station("b", "1 ms")], fanout=3)),
    Row(PY, "a LINE JSON document that is not JSON", "InvalidModelError", r"not a LINE JSON document",
        lambda tmp: __import__("qnmodel.io.linejson", fromlist=["x"]).from_line_json("not json")),
    Row(PY, "a LINE JSON document of another version (`9.9`)", "InvalidModelError", r"version '9.9' is not supported",
        lambda tmp: __import__("qnmodel.io.linejson", fromlist=["x"]).from_line_json('{"format": "line-model", "version": "9.9", "model": {}}')),
    Row(PY, "a LINE JSON model that is not a network", "InvalidModelError", r"expected a model of type 'Network', got 'Layered'",
        lambda tmp: __import__("qnmodel.io.linejson", fromlist=["x"]).from_line_json('{"model": {"type": "Layered"}}')),
    Row(PY, "a validation study of an unknown kind", "InvalidModelError", r"study\.kind: no validation study of kind 'nope'",
        _study('[study]\nkind = "nope"\n')),
    Row(PY, "a validation study kind that is a path (`../etc`)", "InvalidModelError", r"study\.kind must be a name such as 'raid', got '\.\./etc'",
        _study('[study]\nkind = "../etc"\n')),
    Row(PY, "a validation study without a `[study]` table", "InvalidModelError", r"a study needs a \[study\] table",
        _study('[raid]\nservers = 3\n')),
    Row(PY, "a validation study naming a topology file that does not exist", "InvalidModelError", r"cannot read topology .*missing\.toml",
        _study('[study]\nkind = "raid"\ntopology = "missing.toml"\n')),
    Row(TOML, "`arrival_rate` and `N` in one model", "InvalidModelError", r"model\.arrival_rate: give either N .* or arrival_rate",
        _model(GOOD_MODEL.replace("N = 4", 'N = 4\narrival_rate = "100/s"'))),
    Row(TOML, "`arrival_rate = \"40 MB/s\"` (a byte rate, not a request rate)", "InvalidModelError", r"model\.arrival_rate: '40 MB/s' is a rate \(bytes/s\).*frequency",
        _model(GOOD_MODEL.replace("N = 4", 'arrival_rate = "40 MB/s"'))),
    Row(TOML, "a negative `arrival_rate`", "InvalidModelError", r"model\.arrival_rate: must be finite and >= 0, got '-5/s'",
        _model(GOOD_MODEL.replace("N = 4", 'arrival_rate = "-5/s"'))),
    Row(TOML, "a `target` that does not parse", "InvalidModelError", r"model\.target: target 'R <= soon'",
        _model(GOOD_MODEL.replace("N = 4", 'N = 4\ntarget = "R <= soon"'))),
    Row(QNB, "`--rate -5/s` (open loop)", "Exit2", r"--rate: rate '-5/s' is negative", _qnbench("--engine", "emu", "--rate", "-5/s")),
    Row(QNB, "`--rate 5MB/s` (a byte rate for the arrival rate)", "Exit2", r"--rate: unknown or ambiguous unit 'MB/s'", _qnbench("--engine", "emu", "--rate", "5MB/s")),
    Row(QNB, "`--arrivals burst`", "Exit2", r"--arrivals: 'burst' is not one of poisson,constant", _qnbench("--engine", "emu", "--rate", "100/s", "--arrivals", "burst")),
    Row(QNB, "`--meta-tree deep`", "Exit2", r"--meta-tree: 'deep' is not one of easy,hard", _qnbench("--engine", "meta", "--meta-tree", "deep")),
    Row(QNB, "`--meta-op create,rename`", "Exit2", r"--meta-op: 'rename' is not one of", _qnbench("--engine", "meta", "--meta-op", "create,rename")),
    Row(QNB, "`--file-layout striped`", "Exit2", r"--file-layout: 'striped' is not one of per-job,shared", _qnbench("--engine", "file", "--file-layout", "striped")),
    Row(QNB, "`--netns a,b` for a run of one rank", "Exit2", r"--netns names 2 namespace\(s\) for 1 rank\(s\)", _qnbench("--engine", "null", "--netns", "a,b")),
    Row(QNB, "`--netns ../etc` (not a namespace name)", "Exit2", r"'\.\./etc' \(rank 0\) is not a namespace name", _qnbench("--engine", "null", "--netns", "../etc")),
    # found by the fuzzers of tests/fuzz/test_parsers_formats.py and test_qnbench_options.py
    Row(PY, "a LINE JSON node without a name", "InvalidModelError", r"LINE nodes\[0\]: name must be a string, got None",
        lambda tmp: __import__("qnmodel.io.linejson", fromlist=["x"]).from_line_json('{"model": {"type": "Network", "nodes": [{"type": "Queue"}], "classes": [{"name": "a"}]}}')),
    Row(PY, "LINE JSON bytes that are not UTF-8", "InvalidModelError", r"not a LINE JSON document: 'utf-8' codec can't decode",
        lambda tmp: __import__("qnmodel.io.linejson", fromlist=["x"]).from_line_json(b'{"model": "\xff"}')),
    Row(PY, "a LINE JSON routing probability given as text", "InvalidModelError", r"routing probability 'q' -> 'q' must be in \[0, 1\], got 'half'",
        lambda tmp: __import__("qnmodel.io.linejson", fromlist=["x"]).from_line_json(LINE_BAD_ROUTING)),
    Row(PY, "a stripe study with an unknown member kind (`members = [\"ssd\"]`)", "InvalidModelError", r"stripe\.members: 'ssd' is not one of 'emu-exp', 'emu-const', 'file'",
        _study('[study]\nkind = "stripe"\n[stripe]\nmembers = ["ssd"]\n')),
    Row(PY, "a stripe study with a width qnbench cannot run (`widths = [64]`)", "InvalidModelError", r"stripe\.widths must be integers 2\.\.16, got \[64\]",
        _study('[study]\nkind = "stripe"\n[stripe]\nwidths = [64]\n')),
    Row(PY, "a raid study case whose level is a list (`raid = []`)", "InvalidModelError", r"raid\.cases\[0\]\.raid must be 'raid0' or 'raid5', got \[\]",
        _study(RAID_STUDY + '[[raid.cases]]\nraid = []\n')),
    Row(PY, "a raid study with `repeat = true`", "InvalidModelError", r"raid\.repeat must be an integer 1\.\.50, got True",
        _study(RAID_STUDY.replace("[raid]\n", "[raid]\nrepeat = true\n"))),
    Row(PY, "a search space whose start point has two levels", "InvalidModelError", r"start must be one level of each of chunk, bs, jobs, got \(65536, 1\)",
        lambda tmp: __import__("qnmodel.lab.experiments.search", fromlist=["x"]).SearchSpace(start=(65536, 1))),
    Row(QNB, "an option value holding a newline and a terminal escape sequence", "Exit2", r"exit 2: qnbench: --arrivals: 'po\\x0aisson\\x1b\[31m' is not one of poisson,constant$",
        _qnbench("--engine", "emu", "--rate", "100/s", "--arrivals", "po\nisson\x1b[31m")),
    # the testbed's shaper bucket, the RAID study's windows, the NFS study's new parts
    Row(TOPO, "a link `burst` smaller than one frame (`burst = \"1000 B\"`)", "InvalidModelError", r"clients\[0\]\.link\.burst must hold one frame \(mtu \+ 14 = 1514 B\)",
        _topology(GOOD_TOPOLOGY.replace('delay = "1 ms" }', 'delay = "1 ms", burst = "1000 B" }'))),
    Row(TOPO, "a link `burst` given as a rate (`\"1 MB/s\"`)", "UnitError", r"clients\[0\]\.link\.burst: '1 MB/s' is a rate \(bytes/s\), but a size \(bytes\) is required",
        _topology(GOOD_TOPOLOGY.replace('delay = "1 ms" }', 'delay = "1 ms", burst = "1 MB/s" }'))),
    Row(PY, "a raid study with `cycles = -1`", "InvalidModelError", r"raid\.cycles must be a number 0\.\.1000, got -1",
        _study(RAID_STUDY.replace("[raid]\n", "[raid]\ncycles = -1\n"))),
    Row(PY, "a raid study with `warmup_cycles = \"3\"` (text)", "InvalidModelError", r"raid\.warmup_cycles must be a number 0\.\.1000, got '3'",
        _study(RAID_STUDY.replace("[raid]\n", '[raid]\nwarmup_cycles = "3"\n'))),
    Row(PY, "an NFS study writing a configuration that does not exist", "InvalidModelError", r"nfs\.writes\.configs .*must be indices of nfs\.configs \(0\.\.0\)",
        _study(NFS_STUDY + "[nfs.writes]\nconfigs = [3]\n")),
    Row(PY, "an NFS study with a client-hit ratio of 1.5", "InvalidModelError", r"nfs\.client_mixed\.client_hit .*must be hit ratios in \(0, 1\)",
        _study(NFS_STUDY + "[nfs.client_mixed]\nconfig = 0\nclient_hit = [1.5]\n")),
    Row(PY, "an NFS study with `namespaces = \"yes\"`", "InvalidModelError", r"nfs\.clients\.namespaces .*must be true or false",
        _study(NFS_STUDY + '[nfs.clients]\nconfig = 0\nn = [1, 2]\nnamespaces = "yes"\n')),
    # the networked RAID's fork-join with the master link inside the fork
    Row(PY, 'an unknown fork-join structure: `NetworkedRAID.cui2006().fork_join(4, structure="overlap")`', "InvalidModelError",
        r"structure must be one of 'forkjoin', 'forkjoin_overlap'; got 'overlap'",
        _call(lambda: qn.NetworkedRAID.cui2006().fork_join(4, structure="overlap"))),
    Row(PY, 'the overlapped link on the paper\'s form: `NetworkedRAID.cui2006(form="paper").fork_join(4, structure="forkjoin_overlap")`', "InvalidModelError",
        r"structure='forkjoin_overlap' needs form='corrected' .*got form='paper'",
        _call(lambda: qn.NetworkedRAID.cui2006(form="paper").fork_join(4, structure="forkjoin_overlap"))),
    Row(PY, "a raid study with an unknown fork-join structure (`forkjoin = \"overlap\"`)", "InvalidModelError", r"raid\.forkjoin must be 'forkjoin' or 'forkjoin_overlap', got 'overlap'",
        _study(RAID_STUDY.replace("[raid]\n", '[raid]\nforkjoin = "overlap"\n'))),
    Row(PY, "a raid study with an unknown access pattern (`access = \"rand\"`)", "InvalidModelError", r"raid\.access must be 'sequential' or 'random', got 'rand'",
        _study(RAID_STUDY.replace("[raid]\n", '[raid]\naccess = "rand"\n'))),
    Row(PY, "a raid study with a steal limit given as a percentage (`max_steal = 3`)", "InvalidModelError", r"raid\.max_steal must be a share of the CPU time in \(0, 1\], got 3",
        _study(RAID_STUDY.replace("[raid]\n", '[raid]\nmax_steal = 3\n'))),
    Row(PY, "a raid study with `steal_retries = -1`", "InvalidModelError", r"raid\.steal_retries must be an integer 0\.\.20, got -1",
        _study(RAID_STUDY.replace("[raid]\n", '[raid]\nsteal_retries = -1\n'))),
    Row(PY, "a raid study with the overlapped link on the paper's form", "InvalidModelError", r"raid\.forkjoin = 'forkjoin_overlap' needs raid\.form = 'corrected'.*got form 'paper'",
        _study(RAID_STUDY.replace("[raid]\n", '[raid]\nform = "paper"\nforkjoin = "forkjoin_overlap"\n'))),
    Row(PY, "an NFS study with `components = \"yes\"`", "InvalidModelError", r"nfs\.components must be true or false, got 'yes'",
        _study(NFS_STUDY.replace("[[nfs.configs]]", '[nfs]\ncomponents = "yes"\n[[nfs.configs]]'))),
    Row(PY, "an NFS study with an unknown b1 method (`b1 = \"stream\"`)", "InvalidModelError", r"nfs\.b1 must be one of memcpy, cachehit, got 'stream'",
        _study(NFS_STUDY.replace("[[nfs.configs]]", '[nfs]\nb1 = "stream"\n[[nfs.configs]]'))),
    Row(PY, "a READ's CPU per byte given as a unit string (`\"1 ns\"`)", "InvalidTypeError", r"read_cpu_per_byte must be a number of seconds per byte, got '1 ns'",
        _call(lambda: qn.NFSSystem(qn.NFSBandwidth("5 GB/s", "1 Gbit/s", "5 GB/s", "80 MB/s"), read_cpu_per_byte="1 ns"))),
    Row(PY, "a negative READ CPU per byte", "InvalidModelError", r"read_cpu_per_byte must be a finite number of seconds per byte >= 0, got -1e-09",
        _call(lambda: qn.NFSSystem(qn.NFSBandwidth("5 GB/s", "1 Gbit/s", "5 GB/s", "80 MB/s"), read_cpu_per_byte=-1e-9))),
    Row(PY, "a single queue whose capacity is below its servers", "InvalidModelError",
        r"capacity K = 2 is below servers m = 4: K counts the jobs in service too",
        _call(lambda: qn.single_queue("100/s", "10 ms", servers=4, capacity=2))),
    Row(PY, "a finite-capacity queue with non-exponential service (M/G/m/K)",
        "InvalidModelError", r"capacity K = 8 with scv = 0\.5 .* is not supported",
        _call(lambda: qn.single_queue("100/s", "10 ms", servers=2, capacity=8, scv=0.5))),
    Row(PY, "a negative squared coefficient of variation", "InvalidModelError",
        r"scv must be finite and >= 0 .* got -1",
        _call(lambda: qn.single_queue("100/s", "10 ms", scv=-1))),
    Row(PY, "a single queue at utilisation 1 (no capacity limit)", "UnstableModelError",
        r"saturated: utilisation rho = .* stable only for arrival_rate < m / S = 100/s",
        _call(lambda: qn.single_queue("100/s", "10 ms"))),
    Row(PY, "a priority that is not an integer", "InvalidModelError",
        r"priorities\[1\] must be an integer, got 0\.5",
        _call(lambda: qn.priority_queue(["10/s", "10/s"], ["1 ms", "2 ms"], [0, 0.5]))),
    Row(PY, "a negative load for Erlang's B formula", "InvalidModelError",
        r"a must be a finite offered load >= 0 Erlangs .* got -1",
        _call(lambda: qn.erlang_b(4, -1.0))),
    # the description floor: disciplines, capacities, laws, names; what each solver supports
    Row(PY, 'an unknown discipline: `Station("d", 0.01, discipline="SJF")`', "InvalidModelError",
        r"Station 'd': discipline must be one of 'FCFS', 'PS', 'LCFS-PR', 'IS', 'HOL', 'PRIO-PR'; got 'SJF'",
        _call(lambda: qn.Station("d", 0.01, discipline="SJF"))),
    Row(PY, 'a delay station with another discipline: `kind="delay", discipline="PS"`', "InvalidModelError",
        r"Station 'd': kind='delay' is the discipline 'IS' .*got discipline='PS'",
        _call(lambda: qn.Station("d", 0.01, kind="delay", discipline="PS"))),
    Row(PY, "a station whose capacity is below its servers", "InvalidModelError",
        r"Station 'd': capacity=2 is below servers=3",
        _call(lambda: qn.Station("d", 0.01, servers=3, capacity=2))),
    Row(PY, "a service-time law and an SCV both", "InvalidModelError",
        r"Station 'd': give scv or service \(a law, whose SCV is 0\), not both",
        _call(lambda: qn.Station("d", 0.01, scv=0.5, service="deterministic"))),
    Row(PY, "visits with a demand (the demand already counts them)", "InvalidModelError",
        r"Station 'd': visits go with service_time",
        _call(lambda: qn.Station("d", 0.01, visits=2))),
    Row(PY, 'a station name with a trailing space: `"disk "`', "InvalidModelError",
        r"Station name 'disk ' begins or ends with white space",
        _call(lambda: qn.Station("disk ", 0.01))),
    Row(PY, "a station name with a terminal escape", "InvalidModelError",
        r"contains the invisible or control character U\+001B",
        _call(lambda: qn.Station("disk\x1b[2J", 0.01))),
    Row(PY, "classes given by position: `Network(stations, [ClosedClass(...)])`", "InvalidTypeError",
        r"give the classes by keyword, classes=\[\.\.\.\]",
        _call(lambda: qn.Network([qn.Station("d", 0.01)], [qn.ClosedClass("a", 1)]))),
    Row(PY, "a demand matrix given to `mva_multiclass`", "InvalidTypeError",
        r"mva_multiclass takes a Network, got list; a C x K demand matrix is qnmodel\.Network\.from_demands",
        _call(lambda: qn.mva_multiclass([[0.01, 0.02]], [3]))),
    Row(PY, "exact multi-class MVA of a FCFS station whose classes' service times differ", "InvalidModelError",
        r"mva_multiclass cannot solve FCFS stations whose classes have different service times \(station 'disk'\): use qnmodel\.amva",
        _call(lambda: qn.mva_multiclass(qn.Network.from_demands([[0.01], [0.02]], N=[1, 1], names=["disk"])))),
    Row(PY, "`mva_exact` of a deterministic FCFS station (`scv=0`; `mva` solves it approximately)", "InvalidModelError",
        r"mva cannot solve non-exponential service \(SCV != 1\) at FCFS stations \(station 'disk'\): use qnmodel\.mva \(one closed class, single-server stations\) or qnmodel\.amva",
        _call(lambda: qn.mva_exact(qn.Network([qn.Station("disk", 0.01, scv=0.0)]), 3))),
    Row(PY, "MVA of a two-server FCFS station with non-exponential service (`servers=2, scv=0`)", "InvalidModelError",
        r"mva: station 'disk' has 2 servers and non-exponential service \(scv = \[0\.0\]\); the residual-life correction is for one server: use qnmodel\.simulate",
        _call(lambda: qn.mva(qn.Network([qn.Station("disk", 0.01, servers=2, scv=0.0)]), 3))),
    Row(PY, "MVA of a non-exponential FCFS station beside a multi-server station", "InvalidModelError",
        r"mva with non-exponential FCFS stations \(residual-life correction, \['disk'\]\) takes single-server and delay stations; \['cpu'\] have several servers: use qnmodel\.amva",
        _call(lambda: qn.mva(qn.Network([qn.Station("cpu", 0.004, servers=2), qn.Station("disk", 0.01, scv=0.0)]), 3))),
    Row(PY, "a station SCV that is NaN", "InvalidModelError",
        r"Station 'd': scv must be finite and >= 0 .* got nan",
        _call(lambda: qn.Station("d", 0.01, scv=float("nan")))),
    Row(PY, "an open network with a closed class", "InvalidModelError",
        r"open_network solves open classes; classes \['b'\] are closed: use qnmodel\.mixed_network",
        _call(lambda: qn.open_network(qn.Network([qn.Station("d", 0.01)], classes=[qn.ClosedClass("b", 2), qn.OpenClass("w", 1.0)])))),
    Row(PY, "MVA of a network holding a fork-join", "InvalidModelError",
        r"mva cannot solve fork-join elements \(station 'fj'\): use qnmodel\.fork_join",
        _call(lambda: qn.mva(qn.Network([qn.ForkJoin("fj", [qn.Station("a", 0.01), qn.Station("b", 0.01)])]), 2))),
    Row(TOML, 'an unknown station discipline (`discipline = "SJF"`)', "InvalidModelError",
        r"station\[0\]\.discipline: must be one of \['FCFS', 'PS', 'LCFS-PR', 'IS', 'HOL', 'PRIO-PR'\], got 'SJF'",
        _model(GOOD_MODEL + 'discipline = "SJF"\n')),
    # -- issue 29: outputs never follow a planted link; refused before the work ----------
    Row(CLI, "`qnmodel plot m.toml --out o.png` where `o.png` is a planted symbolic link", "Exit1",
        r"output '.*o\.png' is a symbolic link \(to '.*victim\.txt'\): refusing to write through it",
        _planted("plot", "{tmp}/m.toml", "--out", "{tmp}/o.png", link="o.png")),
    Row(CLI, "`qnmodel plot --utilization` with a link planted at the sibling `o_utilization.png`", "Exit1",
        r"output '.*o_utilization\.png' is a symbolic link",
        _planted("plot", "{tmp}/m.toml", "--utilization", "--out", "{tmp}/o.png", link="o_utilization.png")),
    Row(CLI, "`qnmodel bench null --out b.json` where `b.json` is a planted link (refused before the run)", "Exit1",
        r"output '.*b\.json' is a symbolic link",
        _planted("bench", "null", "--out", "{tmp}/b.json", link="b.json")),
    Row(CLI, "`qnmodel check --out DIR` with a link planted at `DIR/check.md` (refused before measuring)", "Exit1",
        r"output '.*d/check\.md' is a symbolic link",
        _planted("check", "--measured", "{tmp}/none.json", "--out", "{tmp}/d", link="d/check.md")),
    Row(CLI, "`qnmodel calibrate A B --out DIR` with a link planted at `DIR/report.png`", "Exit1",
        r"output '.*d/report\.png' is a symbolic link",
        _planted("calibrate", "a.json", "b.json", "--out", "{tmp}/d", link="d/report.png")),
    Row(CLI, "`qnmodel report m.toml --out DIR` where `DIR` is a planted link to another directory", "Exit1",
        r"output directory '.*/d' is a symbolic link",
        _planted("report", "{tmp}/m.toml", "--out", "{tmp}/d", link="d", directory=True)),
    Row(PY, "an export to a FIFO: `write_jmva(net, fifo)` (opening it would block)", "InvalidModelError",
        r"output '.*m\.jmva' is not a regular file", _fifo_export),
    # -- issue 29: parsers are linear; over-long strings are refused by their length ------
    Row(PY, 'a quantity of 60 000 spaces: `units.parse("1 a" + 60000 * " " + "b")`', "UnitError",
        r"quantity string '1 a +'\.\.\. has 60004 characters, more than the 100 \(qnmodel\.units\.MAX_QUANTITY_CHARS\)",
        _call(lambda: units.parse("1 a" + 60000 * " " + "b", "time"))),
    Row(TOML, "a demand of 5000 spaces between number and unit", "InvalidModelError",
        r"station\[0\]\.demand: quantity string '10 m +'\.\.\. has 5005 characters, more than the 100",
        _model(GOOD_MODEL.replace('"10 ms"', '"10 m' + " " * 5000 + 's"'))),
    Row(PY, "a target of a megabyte: `as_target(\"R <= 1 a\" + 2**20 * \" \" + \"b\")`", "InvalidModelError",
        r"target 'R <= 1 a +'\.\.\. has 1048585 characters, more than the 200",
        _call(lambda: qn.solvers.targets.as_target("R <= 1 a" + 2**20 * " " + "b"))),
    # -- issue 29: memory and work are bounded before anything is allocated or run --------
    Row(TOML, "a population of ten million (`N = 10_000_000`): solving and printing needs 22 GiB", "InvalidModelError",
        r"model\.N: N = 10000000 populations .* at 1 station\(s\) would need about 2\.258e\+04 MiB, more than the allowed 1024 MiB",
        _model(GOOD_MODEL.replace("N = 4", "N = 10_000_000"))),
    Row(TOML, "a population list whose largest entry is past memory (`populations = [1, 5_000_000]`)", "InvalidModelError",
        r"model\.populations: N = 5000000 populations .* more than the allowed",
        _model(GOOD_MODEL.replace("N = 4", "populations = [1, 5_000_000]"))),
    Row(TOML, "a RAID of a hundred million disks (`disks = 100_000_000`)", "InvalidModelError",
        r"system\.disks?.*disks must be at most 4096 \(qnmodel\.models\.raid\.MAX_DISKS\) for raid5, got 100000000",
        _model(RAID_FILE)),
    Row(PY, "a simulation of `run_length=1e12` s (years of events)", "InvalidModelError",
        r"simulate: run_length=1e\+12 s .* would simulate about .* events, more than the limit of 6e\+09",
        _call(lambda: qn.simulate(_net(), 5, run_length=1e12))),
    Row(PY, "a fork-join curve of `N = 10**12` jobs (7 TiB of results)", "LatticeTooLargeError",
        r"fork_join of N = 1000000000000 jobs .* would need about .* MiB, more than the allowed 1024 MiB",
        _call(lambda: qn.fork_join(qn.Network([qn.ForkJoin("fj", [qn.Station("a", 0.01), qn.Station("b", 0.01)])]), 10**12))),
    # -- issue 29: readers refuse values that cannot be -----------------------------------
    Row(TRACE, "fio JSON with NaN IOPS", "TraceError",
        r"t\.json: jobs\[0\]\.iops must be a finite number >= 0, got nan",
        _trace(_fio_doc(jobs__0__read__iops=float("nan")))),
    Row(TRACE, "fio JSON with an infinite runtime", "TraceError",
        r"jobs\[0\]\.runtime must be a finite number >= 0, got inf",
        _trace(_fio_doc(jobs__0__read__runtime=float("inf")))),
    Row(TRACE, "fio JSON with a negative runtime", "TraceError",
        r"jobs\[0\]\.runtime must be a finite number >= 0, got -5",
        _trace(_fio_doc(jobs__0__read__runtime=-5))),
    Row(TRACE, 'fio JSON with `numjobs = "0"`', "TraceError",
        r"jobs\[0\]\.numjobs must be a whole number >= 1, got '0'",
        _trace(_fio_doc(**{"global options__numjobs": "0"}))),
    Row(TRACE, "a CSV trace with `nan` in a measured cell", "TraceError",
        r"t\.csv: line 2, column 'throughput_ops_s': 'nan' is not a finite number",
        _trace("jobs,throughput_ops_s\n1,nan\n", "t.csv")),
    Row(TRACE, "a CSV trace with `inf` in a measured cell", "TraceError",
        r"line 2, column 'latency_mean_s': 'inf' is not a finite number",
        _trace("jobs,throughput_ops_s,latency_mean_s\n1,100,inf\n", "t.csv")),
    Row(TRACE, "a CSV trace with `jobs = 2.7` (once read as 2)", "TraceError",
        r"line 2, column 'jobs' must be a whole number >= 1, got '2\.7'",
        _trace("jobs,throughput_ops_s\n2.7,100\n", "t.csv")),
    Row(TRACE, "a CSV trace with `jobs = 0`", "TraceError",
        r"line 2, column 'jobs' must be a whole number >= 1, got '0'",
        _trace("jobs,throughput_ops_s\n0,100\n", "t.csv")),
    Row(TRACE, "a qnbench document whose interval samples do not add up to its totals", "TraceError",
        r"results\[0\]\.samples: their ops add up to .*, but results\[0\]\.ops is .*; the samples must partition the measured period",
        lambda tmp: __import__("qnmodel.calibration", fromlist=["x"]).load_trace(_qnbench_doc_bad_samples())),
    Row(CLI, "`qnmodel plot --measured m.csv` with a negative measured throughput", "Exit1",
        r"m\.csv: row 2, column 'throughput' must be a finite number >= 0 \(a measured value\), got -40",
        _cli("plot", "{tmp}/m.toml", "--measured", "{tmp}/m.csv", "--out", "{tmp}/o.png",
             files={"m.toml": GOOD_MODEL, "m.csv": "n,throughput\n1,0.9\n2,-40\n"})),
    Row(CLI, "`qnmodel plot --measured m.csv` with NaN measured response times", "Exit1",
        r"row 1, column 'response_time' must be a finite number >= 0 .*got nan",
        _cli("plot", "{tmp}/m.toml", "--measured", "{tmp}/m.csv", "--out", "{tmp}/o.png",
             files={"m.toml": GOOD_MODEL, "m.csv": "n,response_time_s\n1,nan\n"})),
    Row(JMVA, "a duplicate `<servicetime>` for one class (the second once won)", "InvalidModelError",
        r"JMVA station 'disk': <servicetime> for customerclass 'a' appears twice",
        _jmva(re.sub(r"(<servicetime [^>]*>[^<]*</servicetime>)", r"\1\1", JMVA_TEXT, count=1))),
    Row(PY, "a LINE JSON closed class whose routing row sums to 0.5", "InvalidModelError",
        r"LINE class 'a': the routing probabilities from 'q' sum to 0\.5; each row must sum to 1",
        _line(_line_closed('{"q": {"z": 0.5}, "z": {"q": 1.0}}'))),
    Row(PY, "a LINE JSON closed class whose routing row sums to 2", "InvalidModelError",
        r"routing probabilities from 'z' sum to 2; each row must sum to 1",
        _line(_line_closed('{"q": {"z": 1.0}, "z": {"q": 1.0, "z": 1.0}}'))),
    Row(PY, "a LINE JSON closed class routed to a sink", "InvalidModelError",
        r"LINE class 'a': a closed class is routed 'q' -> sink 'out' with probability 0\.5",
        _line(_line_closed('{"q": {"z": 0.5, "out": 0.5}, "z": {"q": 1.0}}', ', {"name": "out", "type": "Sink"}'))),
    Row(PY, 'a LINE JSON service rate `"lambda": true` (once read as 1.0)', "InvalidModelError",
        r"LINE node 'q': Exp params\.lambda must be a number \(a rate, 1/s\), got True",
        _line(_line_closed('{"q": {"z": 1.0}, "z": {"q": 1.0}}', lam="true"))),
    Row(CLI, "`qnmodel bench null --out .` (a directory; once checked only after the run)", "Exit1",
        r"output '\.' is a directory: an output must be a regular file or a new name",
        _cli("bench", "null", "--out", ".")),
    Row(TRACE, "fio JSON with a negative block size (`bs = -4096`)", "TraceError",
        r"jobs\[0\]\.bs must be a whole number of bytes >= 0, got -4096",
        _trace(_fio_doc(**{"global options__bs": -4096}))),
    Row(TRACE, "a CSV trace with an empty `jobs` cell (once a ValueError traceback)", "TraceError",
        r"line 2, column 'jobs' must be a whole number >= 1, got ''",
        _trace("jobs,throughput_ops_s\n,100\n", "t.csv")),
    Row(PY, "measured points with a NaN throughput given to `compare`", "InvalidModelError",
        r"measured: row 2, column 'throughput' must be a finite number >= 0 .*got nan",
        _call(lambda: __import__("qnmodel.calibration.comparison", fromlist=["x"]).compare(_net(), {"n": [1, 2], "throughput": [0.9, float("nan")]}))),
    Row(PY, "a named group whose members differ (`groups={\"shelf\": [\"a\", \"b\"]}`)", "InvalidModelError",
        r"groups\['shelf'\]: station 'b' differs from 'a' in demand",
        _call(lambda: qn.best_upgrade(qn.Network.from_demands([0.004, 0.005], names=["a", "b"]), N=4, groups={"shelf": ["a", "b"]}))),
    Row(PY, "servers asked of a device with a rate curve (`count=\"servers\"`)", "InvalidModelError",
        r"has rate_multipliers.*count='devices'",
        _call(lambda: qn.min_servers(qn.Network((qn.Station("nvme", "80 us", rate_multipliers=[1, 1.8]),)), "nvme", "R <= 1 ms", arrival_rate=100.0, count="servers"))),
    Row(PY, "`streaming_mva(net, streamed, N=10**9)` (once a numpy MemoryError)", "LatticeTooLargeError",
        r"the streaming MVA curve n = 1\.\.1000000000 at 2 stations would need about .* MiB",
        _call(lambda: __import__("qnmodel.models.streaming", fromlist=["x"]).streaming_mva(_net(), {"s0": 0.005, "s1": 0.01}, 10**9))),
    Row(PY, "`streaming_mva` with `streamed` a list of names (once a TypeError traceback)", "InvalidTypeError",
        r"streamed must be a mapping \{station name: streamed part of its demand \(s\)\}, got \['s0', 's1'\]",
        _call(lambda: __import__("qnmodel.models.streaming", fromlist=["x"]).streaming_mva(_net(), ["s0", "s1"], 5))),
    Row(PY, "`streaming_mva` at a station with a rate curve (once read as one server)", "InvalidModelError",
        r"streaming_mva: station 'a' has rate_multipliers, which a streaming group does not model \(a rate curve would be read as one server\)",
        _call(lambda: __import__("qnmodel.models.streaming", fromlist=["x"]).streaming_mva(qn.Network([qn.Station("a", 1.0, rate_multipliers=[1, 2]), qn.Station("b", 1.0)]), {"a": 0.5, "b": 0.5}, 5))),
    Row(PY, "`thread_pool_open` of a subsystem whose only demand is 1e-320 s (once a math domain error)", "InvalidModelError",
        r"the subsystem's largest demand: 1e-320 s is below 2\.23e-308 s \(a subnormal number\)",
        _call(lambda: qn.thread_pool_open(qn.Network([qn.Station("cpu", 1e-320)]), 5.0, threads=2))),
    Row(PY, "a group named like a station outside it (`groups={\"g\": [\"d1\", \"d2\"]}` beside a station `g`; once answered for the group)", "InvalidModelError",
        r"groups: the group name 'g' is also a station outside the group",
        _call(lambda: qn.min_servers(qn.Network([qn.Station("d1", "5 ms"), qn.Station("g", "1 ms"), qn.Station("d2", "5 ms")]), "g", "R <= 100 ms", arrival_rate=1.0, groups={"g": ["d1", "d2"]}))),
    Row(PY, "`min_servers` of a station named like an automatic group (`\"d1..d2\"` beside `d1`, `d2`)", "InvalidModelError",
        r"'d1\.\.d2' names both a station and the group 'd1\.\.d2 \(2 identical\)'.*ambiguous",
        _call(lambda: qn.min_servers(qn.Network([qn.Station("d1", "5 ms"), qn.Station("d1..d2", "1 ms"), qn.Station("d2", "5 ms")]), "d1..d2", "R <= 100 ms", arrival_rate=1.0))),
    Row(PY, "fork-join members of SCV 1e5 (once an open R below that at SCV 1e4; at 1e8 a negative R)", "InvalidModelError",
        r"fork_join: 'fj': SCV 100000 is above 10000 .* two-moment fits lose their accuracy",
        _call(lambda: qn.fork_join(qn.Network([qn.ForkJoin("fj", [qn.Station(f"m{i}", 0.01, scv=1e5) for i in range(4)])]), arrival_rate=20.0))),
    Row(PY, "a fork-join of 1001 non-exponential members (once hours of quadrature)", "InvalidModelError",
        r"fork_join: 'fj' has non-exponential branches, .*: 1001 is more than 1000",
        _call(lambda: qn.fork_join(qn.Network([qn.ForkJoin("fj", [qn.Station(f"m{i}", 0.01, scv=0.5) for i in range(1001)])]), 1))),
    Row(PY, "fork-join members of SCV 3 and demand 1e-320 s (once a ZeroDivisionError, closed R = [0, nan])", "InvalidModelError",
        r"fork_join: 'fj' branch demands: 1e-320 s is below 2\.23e-308 s",
        _call(lambda: qn.fork_join(qn.Network([qn.ForkJoin("fj", [qn.Station(f"m{i}", 1e-320, scv=3.0) for i in range(4)])]), arrival_rate=5.0))),
    Row(PY, "a HOL station of SCV 1e300 under `amva` (once a hang)", "InvalidModelError",
        r"station 'cpu': SCV 1e\+300 is above 10000 .* the priority MVA",
        _call(lambda: qn.amva(qn.Network([qn.Station("cpu", {"a": 0.002, "b": 0.006}, discipline="HOL", scv=1e300), qn.Station("disk", {"a": 0.008, "b": 0.003}, discipline="PRIO-PR")], classes=[qn.ClosedClass("a", 3, priority=0), qn.ClosedClass("b", 3, priority=1)])))),
    Row(PY, "a response-time law at population 10**7 (once an hour of work)", "InvalidModelError",
        r"response_time_law: N .*: 10000000 is more than 100000",
        _call(lambda: __import__("qnmodel.solvers.response_laws", fromlist=["x"]).response_time_law(qn.Network([qn.Station("d", "5 ms", servers=4)], think_time=1.0), N=10**7))),
    Row(PY, "a percentile at a station of SCV 1e300 (once an OverflowError)", "InvalidModelError",
        r"response_time_law: the stations' service: SCV 1e\+300 is above 10000",
        _call(lambda: qn.best_upgrade(qn.Network([qn.Station("d", "5 ms", servers=3, scv=1e300)]), arrival_rate=100.0, target="p95 <= 50 ms"))),
    Row(PY, "a percentile at a 3-server station of demand 1e-320 s (once a hang)", "InvalidModelError",
        r"response_time_law: the queueing stations' demands: 1e-320 s is below 2\.23e-308 s",
        _call(lambda: __import__("qnmodel.solvers.response_laws", fromlist=["x"]).response_time_law(qn.Network([qn.Station("d", 1e-320, servers=3)]), arrival_rate=100.0))),
    Row(PY, "`best_upgrade` of 20000 different stations (once hours: every candidate solves the whole network)", "InvalidModelError",
        r"best_upgrade: candidates x stations .*: 1200000000 is more than 250000",
        _call(lambda: qn.best_upgrade(qn.Network([qn.Station(f"d{i}x", f"{5 + i % 1000} ms") for i in range(20000)]), arrival_rate=0.1))),
    Row(PY, "`min_servers(count=\"devices\")` needing 600000 devices (once a hang)", "InvalidModelError",
        r"target R <= 30 ms is not met with 20000 devices at group 'disk1\.\.disk4 \(4 identical\)', the most min_servers writes out",
        _call(lambda: qn.min_servers(qn.Network([qn.Station(f"disk{i}", "5 ms") for i in range(1, 5)]), "disk1", "R <= 30 ms", arrival_rate=1e7, count="devices"))),
    Row(PY, "`NetworkedRAID.overlap(N, disk_scv=100)` (once R(2) = 74 ms above R(3) = 14 ms)", "InvalidModelError",
        r"disk_scv: SCV 100 is above 10 .* the overlapped model's two-moment fits",
        _call(lambda: _overlap_raid().overlap(4, disk_scv=100.0))),
    Row(PY, "`NetworkedRAID.overlap(N=10**9)` (once a numpy MemoryError; 10**5 took minutes)", "InvalidModelError",
        r"overlap: N \(each population n = 1\.\.N is solved in turn.*: 1000000000 is more than 10000",
        _call(lambda: _overlap_raid().overlap(10**9, disk_scv=0.0))),
    Row(PY, "`mixed_network` with a priority closed class of 10**6 jobs (once X = nan returned)", "InvalidModelError",
        r"mixed_network: the priority MVA lost precision at the closed populations \{'b': 1000000\}",
        _call(lambda: qn.mixed_network(qn.Network([qn.Station("cpu", {"a": 0.002, "b": 0.006}, discipline="HOL"), qn.Station("disk", {"a": 0.008, "b": 0.003}, discipline="PRIO-PR")], classes=[qn.OpenClass("a", 5.0, priority=1), qn.ClosedClass("b", 10**6, priority=0)])))),
    Row(PY, "a response-time law at t = nan (once nan returned)", "InvalidModelError",
        r"t must be a time in s, got nan",
        _call(lambda: __import__("qnmodel.solvers.response_laws", fromlist=["x"]).response_time_law(qn.Network.from_demands([0.005]), N=3).cdf(float("nan")))),
    Row(PY, "`amva` of a priority network with demands of 1e300 s (once nan returned)", "InvalidModelError",
        r"amva: the priority MVA lost precision .* at the demands",
        _call(lambda: qn.amva(qn.Network([qn.Station("d", {"a": 1e300, "b": 1e300}, discipline="HOL")], classes=[qn.ClosedClass("a", 3, priority=0), qn.ClosedClass("b", 2, priority=1)])))),
]  # fmt: skip


def row_id(i: int, row: Row) -> str:
    """A stable test id: the row number and its place."""
    slug = re.sub(r"[^a-z0-9]+", "-", row.where.lower()).strip("-")
    return f"{i + 1:03d}-{slug}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table() -> str:
    """The catalogue as the Markdown table of ``docs/reference/bad-input.md``."""
    lines = [
        "| # | where | input | error | message matches |",
        "|---|---|---|---|---|",
    ]
    for i, r in enumerate(ROWS):
        err = {"Exit1": "exit status 1", "Exit2": "exit status 2 (usage)"}.get(
            r.error, f"`{r.error}`"
        )
        lines.append(f"| {i + 1} | {r.where} | {_cell(r.input)} | {err} | `{_cell(r.match)}` |")
    return "\n".join(lines) + "\n"
