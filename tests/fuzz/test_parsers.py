# ruff: noqa: E501  (strategies read best one per line)
"""Fuzzing every parser: for any input, a valid value or one of our errors, never anything else.

"Our errors" are :class:`qnmodel.errors.QNModelError` subclasses (``InvalidModelError``,
``InvalidTypeError``, ``UnitError``, ``TraceError``, ...): a user who feeds a parser garbage
gets a message naming the field, never a ``KeyError``, ``AttributeError``, ``OverflowError``
or ``RecursionError`` from inside. Each parser is fed both unstructured text or bytes and
structured mutations of a valid input (one field replaced by an arbitrary value), which reach
far deeper than random text does.

Bounded for CI (``FUZZ``, in ``_strategies.py``: 60 examples a test, about 10 s for the module); run longer
on demand with ``HYPOTHESIS_PROFILE=long`` (5000 examples a test)::

    HYPOTHESIS_PROFILE=long .venv/bin/pytest tests/fuzz -q
"""

from __future__ import annotations

import copy
import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from qnmodel import units
from qnmodel.calibration import load_trace
from qnmodel.errors import QNModelError
from qnmodel.io.jmva import from_jmva, to_jmva
from qnmodel.io.modelfile import loads as load_model_text
from qnmodel.io.modelfile import solve
from qnmodel.lab.check.hardware import loads_hardware
from qnmodel.lab.testbed.topology import parse_topology

from ._strategies import (
    FUZZ,
    ROOT,
    finite,
    json_values,
    model_text,
    numbers_text,
    ours_or_value,
    paths_of,
    quantity_text,
    removed,
    replaced,
    scalars,
    toml_value,
    toml_values,
)


# -- units -----------------------------------------------------------------------------------
@FUZZ
@given(st.one_of(st.text(max_size=20), quantity_text), st.sampled_from([None, *units.DIMENSIONS]))
def test_units_parse(text, dimension):
    ours_or_value(units.parse, text, dimension, check=finite)


@FUZZ
@given(scalars, st.sampled_from(list(units.DIMENSIONS)))
def test_units_parse_any_object(value, dimension):
    ours_or_value(units.parse, value, dimension, check=finite)


# -- TOML model files --------------------------------------------------------------------------
MODEL = {
    "model": {"name": "m", "think_time": "1 s", "populations": [1, 3]},
    "station": [
        {"name": "cpu", "demand": "2 ms"},
        {"name": "disk", "size": "64 KiB", "rate": "80 MB/s", "visits": 2},
        {"name": "pool", "demand": "30 ms", "servers": 4},
    ],
}


def test_model_template_is_valid():
    assert solve(load_model_text(model_text(MODEL))).spec.populations.tolist() == [1, 3]


@FUZZ
@given(st.text(max_size=200))
def test_model_file_random_text(text):
    ours_or_value(load_model_text, text)


station_keys = st.sampled_from(["name", "demand", "service_time", "size", "rate", "visits",
                                "kind", "servers", "colour"])  # fmt: skip


@FUZZ
@given(st.integers(0, 2), station_keys, toml_values)
def test_model_file_one_station_field_replaced(i, key, value):
    doc = copy.deepcopy(MODEL)
    doc["station"][i][key] = value
    spec = ours_or_value(load_model_text, model_text(doc))
    if spec is not None:  # valid: it solves, to finite numbers or our error
        sol = ours_or_value(solve, spec)
        if sol is not None:
            X = getattr(sol, "mva", None)
            if X is not None:
                assert all(math.isfinite(x) and x >= 0 for x in X.throughput)


@FUZZ
@given(st.sampled_from(["name", "think_time", "N", "populations", "description"]),
       toml_values)  # fmt: skip
def test_model_file_one_model_field_replaced(key, value):
    doc = copy.deepcopy(MODEL)
    doc["model"].pop("populations")
    doc["model"]["N"] = 3
    doc["model"][key] = value
    if key == "populations":
        doc["model"].pop("N")
    spec = ours_or_value(load_model_text, model_text(doc))
    if spec is not None and int(spec.populations.max()) <= 10_000:
        ours_or_value(solve, spec)


# -- traces: qnbench JSON, fio JSON, CSV -------------------------------------------------------
TRACE = json.loads((ROOT / "data" / "traces" / "emu-closed-loop.json").read_text())


TRACE_PATHS = [p for p in paths_of(TRACE) if p]


def test_trace_template_is_valid():
    assert len(load_trace(TRACE).points) > 0


@FUZZ
@given(st.sampled_from(TRACE_PATHS), json_values)
def test_qnbench_trace_one_field_replaced(path, value):
    ours_or_value(load_trace, replaced(TRACE, path, value))


@FUZZ
@given(st.sampled_from(TRACE_PATHS))
def test_qnbench_trace_one_field_removed(path):
    ours_or_value(load_trace, removed(TRACE, path))


@FUZZ
@given(st.one_of(st.binary(max_size=300), st.text(max_size=300).map(str.encode),
                 st.integers(1, len(json.dumps(TRACE)) - 1).map(lambda n: json.dumps(TRACE)[:n].encode())),
       st.sampled_from(["t.json", "t.csv"]))  # fmt: skip
def test_trace_file_random_or_truncated_bytes(tmp_path_factory, content, name):
    p = tmp_path_factory.mktemp("trace") / name
    p.write_bytes(content)
    ours_or_value(load_trace, p)


@FUZZ
@given(st.lists(st.lists(st.one_of(numbers_text, quantity_text, st.text(max_size=5)), min_size=1,
                         max_size=4), max_size=5),
       st.lists(st.sampled_from(["jobs", "latency_mean_s", "throughput_ops_s", "bs_bytes", "op",
                                 "complete", "x"]), min_size=1, max_size=4))  # fmt: skip
def test_csv_trace_random_cells(tmp_path_factory, rows, header):
    text = ",".join(header) + "\n" + "\n".join(",".join(r) for r in rows) + "\n"
    p = tmp_path_factory.mktemp("csv") / "t.csv"
    p.write_text(text)
    ours_or_value(load_trace, p)


# -- testbed topology and hardware descriptions ------------------------------------------------
TOPOLOGY = {
    "testbed": {"name": "tb", "subnet": "10.213.0.0/16"},
    "clients": [{"name": "c1", "link": {"rate": "100 Mbit/s", "delay": "1 ms"}}],
    "servers": [{"name": "s1", "service": "nfs", "disk": {"kind": "tmpfs", "size": "64 MiB"}}],
}
TOPOLOGY_PATHS = [p for p in paths_of(TOPOLOGY) if p]


def test_topology_template_is_valid():
    assert parse_topology(copy.deepcopy(TOPOLOGY)).name == "tb"


@FUZZ
@given(st.sampled_from(TOPOLOGY_PATHS), json_values)
def test_topology_one_field_replaced(path, value):
    ours_or_value(parse_topology, replaced(TOPOLOGY, path, value))


@FUZZ
@given(json_values)
def test_topology_any_document(doc):
    ours_or_value(parse_topology, doc)


# the emu disk table (qnbench's emulated device behind the block server): each key drawn from
# valid values, near misses (zero, negative, out of range, other spellings, other units) and
# arbitrary values
def _mostly(valid, *other):
    """Valid values three times in four, so the accepted branch is reached too."""
    v = st.sampled_from(valid)
    return st.one_of(v, v, v, *other)


emu_disks = st.fixed_dictionaries(
    {"kind": st.just("emu"), "latency": _mostly(["4 ms", "250 us", "1.5 ms", "10 s"], st.sampled_from(["0 s", "0", 0, "10.5 s", "-4 ms", "4 MB", "4", 4, "nan ms"]), quantity_text, scalars)},
    optional={
        "rate": _mostly(["100 MB/s", "1 Gbit/s", "1000 B/s"], st.sampled_from(["999 B/s", "0 MB/s", 0, "-1 MB/s", "5 ms"]), quantity_text, scalars),
        "dist": _mostly(["exp", "const", "exponential", "constant", "deterministic", "EXP "], st.sampled_from(["weibull", ""]), scalars),
        "servers": _mostly([1, 2, 4096], st.integers(-3, 5000), st.sampled_from([0, 4097, 2**63]), scalars),
    },
)  # fmt: skip


@FUZZ
@given(
    emu_disks,
    st.one_of(st.just("tcp"), st.just("tcp"), st.just("tcp"), st.sampled_from(["nfs", "none"])),
)
def test_topology_emu_disk(disk, service):
    from qnmodel.lab.testbed.services import emu_options

    doc = copy.deepcopy(TOPOLOGY)
    doc["servers"][0].update(service=service, disk=disk)
    topo = ours_or_value(parse_topology, doc)
    if topo is None:
        return
    d = topo.servers[0].disk
    # accepted: a tcp server, SI values in range, and options qnbench's parser takes as they are
    assert service == "tcp" and d.kind == "emu" and d.dist in ("const", "exp")
    assert 0.0 <= d.latency <= 10.0 and (d.rate is None or d.rate >= 1000.0)
    assert d.latency > 0.0 or d.rate is not None
    assert isinstance(d.servers, int) and 1 <= d.servers <= 4096
    finite(d.service_time(65536))
    assert d.service_time(65536) > 0.0
    opts = emu_options(d)
    assert float(opts[opts.index("--dev-latency") + 1]) == d.latency


HARDWARE = """\
[memory]
transfer_rate = {tr}
bus_width = {bw}
channels = {ch}

[[link]]
name = {ln}
rate = {lr}

[[device]]
name = "sda"
read = {rd}
write = "140 MB/s"

[[node]]
name = {nn}
"""


@FUZZ
@given(st.fixed_dictionaries({k: toml_values for k in ("tr", "bw", "ch", "ln", "lr", "rd", "nn")}))
def test_hardware_fields_replaced(values):
    text = HARDWARE.format(**{k: toml_value(v) for k, v in values.items()})
    hw = ours_or_value(loads_hardware, text)
    if hw is not None:
        assert all(math.isfinite(v) and v > 0 for v in hw.peaks.values())


@FUZZ
@given(st.text(max_size=200))
def test_hardware_random_text(text):
    ours_or_value(loads_hardware, text)


# -- JMVA XML ----------------------------------------------------------------------------------
def _jmva_template() -> str:
    import qnmodel as qn

    net = qn.Network(
        (qn.Station("disk", {"a": 0.01, "b": 0.02}, discipline="PS"),
         qn.Station("cpu", {"a": 0.005, "b": 0.001}, servers=2, discipline="PS")),
        classes=(qn.ClosedClass("a", 3, 1.0), qn.OpenClass("b", 5.0)),
    )  # fmt: skip
    return to_jmva(net)


JMVA = _jmva_template()


def test_jmva_template_round_trips():
    assert from_jmva(JMVA).class_names == ("a", "b")


@FUZZ
@given(st.text(max_size=200))
def test_jmva_random_text(text):
    ours_or_value(from_jmva, text)


@FUZZ
@given(st.data())
def test_jmva_one_attribute_or_text_replaced(data):
    import re

    spots = [m.span(1) for m in re.finditer(r'="([^"]*)"', JMVA)]
    spots += [m.span(1) for m in re.finditer(r">([^<]+)<", JMVA)]
    a, b = data.draw(st.sampled_from(spots))
    value = data.draw(st.one_of(numbers_text, quantity_text, st.text(max_size=8)))
    value = value.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")
    ours_or_value(from_jmva, JMVA[:a] + value + JMVA[b:])


@FUZZ
@given(st.integers(1, len(JMVA) - 1))
def test_jmva_truncated(n):
    ours_or_value(from_jmva, JMVA[:n])


MODEL_1 = (
    "[model]\nname = 'm'\nthink_time = '{z}'\nN = 2\n[[station]]\nname = 'd'\ndemand = '{d}'\n"
)


def test_model_file_denormal_demand_solves_finite():
    sol = solve(load_model_text(MODEL_1.format(z="1 s", d="1e-320 s")))
    assert all(math.isfinite(x) and x > 0 for x in sol.mva.throughput)
    assert sol.mva.throughput[0] == pytest.approx(1.0, rel=1e-15)


def test_model_file_times_that_overflow_are_refused_not_solved_to_zero():
    """Found by hand beside the fuzzer: N (D + Z) = 4e308 s overflowed, and exact MVA and the
    bounds returned X = 0 with overflow warnings; now a clear error names the unit mistake."""
    with pytest.raises(
        QNModelError, match=r"overflows double precision .* are the times in seconds"
    ):
        solve(load_model_text(MODEL_1.format(z="1e308 s", d="1e308 s")))
