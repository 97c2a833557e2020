"""Unit strings: SI inside, bits vs bytes and decimal vs binary decided once, traps rejected."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qnmodel import units
from qnmodel.errors import InvalidTypeError, UnitError
from qnmodel.units import format_quantity, parse, parse_quantity


def test_the_four_examples_of_the_issue_exactly():
    assert parse("100 Mbit/s") == 12.5e6
    assert parse("16 KiB") == 16384
    assert parse("35 MB/s") == 35e6
    assert parse("4.9 ms") == 0.0049


@pytest.mark.parametrize(
    ("text", "value", "dim"),
    [
        # bits versus bytes: 8 bits make a byte
        ("8 bit", 1.0, "size"),
        ("1 kbit", 125.0, "size"),
        ("1 Gbit/s", 125e6, "rate"),
        ("100 Mbps", 12.5e6, "rate"),
        ("10 Gbps", 1.25e9, "rate"),
        ("56 Kbit/s", 7000.0, "rate"),
        ("1 Kibit", 128.0, "size"),
        # decimal versus binary prefixes
        ("1 kB", 1e3, "size"),
        ("1 KiB", 1024.0, "size"),
        ("1 MB", 1e6, "size"),
        ("1 MiB", 1048576.0, "size"),
        ("1 GiB", 2.0**30, "size"),
        ("2 TiB", 2.0 * 2**40, "size"),
        ("1 PB", 1e15, "size"),
        ("1 MiB/s", 1048576.0, "rate"),
        ("1.5 GB/s", 1.5e9, "rate"),
        ("512 B", 512.0, "size"),
        # times
        ("1 s", 1.0, "time"),
        ("2 min", 120.0, "time"),
        ("1 h", 3600.0, "time"),
        ("0.027 ms", 2.7e-5, "time"),
        ("250 us", 250e-6, "time"),
        ("250 µs", 250e-6, "time"),
        ("7 ns", 7e-9, "time"),
        ("3 sec", 3.0, "time"),
        # frequencies / event rates
        ("2.4 GHz", 2.4e9, "frequency"),
        ("100 KHz", 1e5, "frequency"),
        ("5000 IOPS", 5000.0, "frequency"),
        ("30 req/s", 30.0, "frequency"),
        # spelling of the number and spacing
        ("100Mbit/s", 12.5e6, "rate"),
        ("  4.9ms ", 0.0049, "time"),
        ("1e3 ms", 1.0, "time"),
        (".5 s", 0.5, "time"),
        ("1_000 B", 1000.0, "size"),
        ("+2 KiB", 2048.0, "size"),
    ],
)
def test_parse_quantity_values_and_dimensions(text, value, dim):
    got, got_dim = parse_quantity(text)
    assert got == value  # exact: conversions round once, from exact decimal factors
    assert got_dim == dim
    assert parse(text, dimension=dim) == value


def test_constants_agree_with_strings():
    assert units.KiB == parse("1 KiB") and units.MB == parse("1 MB")
    assert units.Mbit_per_s == parse("1 Mbit/s") and units.Gbit_per_s == parse("1 Gbit/s")
    assert units.ms == parse("1 ms") and units.us == parse("1 us") and units.ns == parse("1 ns")


@pytest.mark.parametrize(
    ("text", "advice"),
    [
        ("1 KB", r"'KB' in '1 KB' is ambiguous: write 'kB' for 1000 bytes or 'KiB' for 1024"),
        ("3 KB/s", r"'KB/s' .* ambiguous: write 'kB/s'"),
        ("100 Mb/s", r"'Mb/s' .* ambiguous: write 'Mbit/s' for bits or 'MB/s' for bytes"),
        ("100 Mb", r"'Mb' .* ambiguous: write 'Mbit' for bits or 'MB' for bytes"),
        ("4 kb", r"'kb' .* ambiguous"),
        ("4 Kb", r"'Kb' .* ambiguous: write 'Kbit' for bits"),
        ("1 Gib", r"'Gib' .* ambiguous: write 'Gibit'"),
        ("8 b", r"'b' .* ambiguous: write 'bit' for bits or 'B' for bytes"),
        ("8 b/s", r"'b/s' .* ambiguous"),
        ("1 mb", r"'mb' .* ambiguous: write 'Mbit' for megabits or 'MB' for megabytes"),
        ("1 mB", r"'mB' .* ambiguous: 'm' is milli"),
    ],
)
def test_ambiguous_units_are_rejected_with_advice(text, advice):
    with pytest.raises(UnitError, match=rf"^unit {advice}"):
        parse(text)


@pytest.mark.parametrize("text", ["3 parsec", "2 furlong/s", "5 Ms", "5 mbit/s", "1 kiB", "4 MBps"])
def test_unknown_unit(text):
    with pytest.raises(UnitError, match=r"^unknown unit '.*' in '.*'; known units are times"):
        parse(text)


@pytest.mark.parametrize("text", ["4.9", "16", " 1e3 "])
def test_number_without_unit(text):
    with pytest.raises(UnitError, match=r"has no unit; add one"):
        parse(text)


@pytest.mark.parametrize("text", ["ms", "", "fast", "inf s", "nan ms", "1.2.3 ms"])
def test_unreadable(text):
    with pytest.raises(UnitError):
        parse(text)
    with pytest.raises(ValueError):  # UnitError is a ValueError
        parse(text)


def test_unreadable_message_names_the_text():
    with pytest.raises(UnitError, match=r"^cannot read 'fast' as '<number> <unit>'"):
        parse("fast")


@pytest.mark.parametrize("text", ["1e400 s", "1e1000000 s", "1e-1000000 s", "9e999999999 ms"])
def test_overflow_is_not_finite(text):
    # beyond float's range, and beyond Decimal's (decimal.Overflow before, a traceback)
    if "-" in text:  # underflows to 0: a finite quantity
        assert parse(text) == 0.0
        return
    with pytest.raises(UnitError, match=rf"'{text}' is not a finite quantity"):
        parse(text)


@pytest.mark.parametrize("bad", [4.9, None, b"4.9 ms", ["4.9 ms"]])
def test_parse_needs_a_string(bad):
    with pytest.raises(InvalidTypeError, match=r"a quantity string like '4.9 ms' is required, got"):
        parse(bad)


def test_wrong_dimension_message():
    with pytest.raises(
        UnitError, match=r"^'4.9 ms' is a time \(s\), but a size \(bytes\) is required here$"
    ):
        parse("4.9 ms", dimension="size")
    with pytest.raises(UnitError, match=r"is a rate \(bytes/s\), but a frequency \(Hz\)"):
        parse("10 MB/s", dimension="frequency")


def test_unknown_dimension():
    with pytest.raises(UnitError, match=r"^dimension must be one of .*got 'length'"):
        parse("1 s", dimension="length")
    with pytest.raises(UnitError, match=r"^dimension must be one of .*got 'length'"):
        format_quantity(1.0, "length")


@pytest.mark.parametrize(
    ("value", "dim", "text"),
    [
        (0.0049, "time", "4.9 ms"),
        (2.5, "time", "2.5 s"),
        (3e-7, "time", "300 ns"),
        (16384, "size", "16 KiB"),
        (3 * 2**30, "size", "3 GiB"),
        (100, "size", "100 B"),
        (12.5e6, "rate", "12.5 MB/s"),
        (2.4e9, "frequency", "2.4 GHz"),
        (0.0, "time", "0 s"),  # zero keeps the SI unit
        (0.0, "size", "0 B"),
        (float("inf"), "time", "inf s"),
        (0.000104858, "time", "104.9 us"),
    ],
)
def test_format_quantity_examples(value, dim, text):
    assert format_quantity(value, dim) == text


_DIMS = st.sampled_from(["time", "size", "rate", "frequency"])
_MAGNITUDE = st.floats(min_value=1e-12, max_value=1e16, allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(_MAGNITUDE, st.booleans(), _DIMS, st.integers(1, 15))
def test_format_then_parse_round_trips_within_digits(mag, negative, dim, digits):
    value = -mag if negative else mag
    text = format_quantity(value, dim, digits=digits)
    back = parse(text, dimension=dim)
    # %.{digits}g rounds to `digits` significant digits: half a unit in the last place.
    assert math.isclose(back, value, rel_tol=0.5 * 10.0 ** (1 - digits) * (1 + 1e-9))


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("40k IOPS", 40e3),  # the planner's "40k IOPS", as "40 kHz" already was
        ("40 kIOPS", 40e3),
        ("40K IOPS", 40e3),  # upper-case K: no binary reading of an event rate
        ("1.2M IOPS", 1.2e6),
        ("2 G iops", 2e9),
        ("250k ops/s", 250e3),
        ("3 Mreq/s", 3e6),
        ("40 kHz", 40e3),
    ],
)
def test_event_rates_take_decimal_prefixes(text, value):
    assert parse(text, dimension="frequency") == value


@pytest.mark.parametrize("text", ["40 KiIOPS", "4 mIOPS", "40 kk IOPS"])
def test_event_rates_refuse_other_prefixes(text):
    with pytest.raises(UnitError, match=r"^unknown unit .* frequencies \(Hz, kHz, IOPS, kIOPS"):
        parse(text)


def test_an_arrival_rate_in_kilo_iops_is_one_in_kilohertz():
    import qnmodel as qn

    net = qn.Network.from_demands(["15 us", "80 us"], servers=[1, 4])
    a, b = qn.open_network(net, "40k IOPS"), qn.open_network(net, "40 kHz")
    assert a.response_time.tolist() == b.response_time.tolist()


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("latency_mean_ms", ("latency_mean", 1e-3, "time")),
        ("R [us]", ("R", 1e-6, "time")),
        ("R (s)", ("R", 1.0, "time")),
        ("throughput_ops_s", ("throughput", 1.0, "frequency")),
        ("throughput_B_s", ("throughput", 1.0, "rate")),
        ("throughput [kIOPS]", ("throughput", 1e3, "frequency")),
        ("bs_bytes", ("bs", 1.0, "size")),
        ("bs [KiB]", ("bs", 1024.0, "size")),
        ("n", ("n", None, None)),
        ("response_time", ("response_time", None, None)),
    ],
)
def test_split_header_reads_the_unit_of_a_column(header, expected):
    from qnmodel.units import split_header

    assert split_header(header) == expected


@pytest.mark.parametrize(
    ("header", "message"),
    [("R [msec]", "column 'R [msec]': unknown unit 'msec'"),
     ("size [KB]", "column 'size [KB]': unit 'KB' is ambiguous")],
)  # fmt: skip
def test_split_header_refuses_an_unknown_bracketed_unit(header, message):
    from qnmodel.units import split_header

    with pytest.raises(UnitError, match=re.escape(message)):
        split_header(header)


@pytest.mark.parametrize(
    ("value", "dim", "text"),
    [
        (20, "time", "a time needs its unit: write '20 ms' or '20 s'"),
        (0.5, "size", "a size needs its unit: write '0.5 KiB' or '0.5 B'"),
        (100, "rate", "a rate needs its unit: write '100 MB/s' or '100 Mbit/s'"),
        (40, "frequency", "a frequency needs its unit: write '40/s' or '40 IOPS'"),
    ],
)
def test_bare_number_fix_names_both_readings(value, dim, text):
    from qnmodel.units import bare_number_fix

    assert bare_number_fix(value, dim) == text
