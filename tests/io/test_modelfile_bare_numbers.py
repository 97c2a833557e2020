"""Issue 26 item 1: a quantity a person writes in a model file carries its unit.

``think_time = 20`` was read as 20 s; it is refused, naming the file, the line, the key, the
value and the fix. Zero reads the same in every unit and stays accepted; Python callers of
``with_values`` keep plain numbers as SI (the API's rule), the command line does not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from qnmodel.io.modelfile import ModelFileError, load, loads, with_values

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

CLASSES = """\
[model]
think_time = "200 ms"

[[class]]
name = "read"
N = 4

[[class]]
name = "write"
N = 2
think_time = "1 s"

[[station]]
name = "disk"
demand = "6 ms"
"""

OPEN = """\
[model]
arrival_rate = "40/s"

[[station]]
name = "disk"
demand = "6 ms"
"""


def refused(text: str, *, source: str = "m.toml") -> ModelFileError:
    with pytest.raises(ModelFileError) as exc:
        loads(text, source=source)
    return exc.value


@pytest.mark.parametrize(
    ("text", "old", "new", "key", "message"),
    [
        (CLASSES, 'think_time = "1 s"', "think_time = 1", "class[1].think_time",
         "got the bare number 1: a time needs its unit: write '1 ms' or '1 s'"),
        (OPEN, 'arrival_rate = "40/s"', "arrival_rate = 40", "model.arrival_rate",
         "got the bare number 40: a frequency needs its unit: write '40/s' or '40 IOPS'"),
        (OPEN, 'arrival_rate = "40/s"', 'arrival_rate = ["10/s", 40]', "model.arrival_rate",
         "got the bare number 40: a frequency needs its unit"),
        (OPEN, "[[station]]", "target = 0.05\n[[station]]", "model.target",
         "got the bare number 0.05: a target names its metric and its unit: write "
         "'R <= 0.05 ms' (a mean response time), 'p95 <= 0.05 ms' or 'X >= 0.05/s'"),
        (OPEN, "[[station]]", 'target = "R <= 5"\n[[station]]', "model.target",
         "target 'R <= 5': the bound 5 has no unit; write 'R <= 5 ms' or 'R <= 5 s'"),
    ],
)  # fmt: skip
def test_bare_numbers_in_model_tables_are_refused(text, old, new, key, message):
    bad = text.replace(old, new)
    assert bad != text
    err = refused(bad)
    assert err.key == key
    assert str(err).startswith(f"m.toml:{err.line}: {key}: ")
    assert message in str(err)


@pytest.mark.parametrize(
    ("example", "old", "new", "key", "message"),
    [
        ("raid_array.toml", 'disk_demand = "8 ms"', "disk_demand = 0.008", "system.disk_demand",
         "got the bare number 0.008: a time needs its unit: write '0.008 ms' or '0.008 s'"),
        ("nfs.toml", 'file_size = "64 MiB"', "file_size = 67108864", "system.file_size",
         "got the bare number 67108864: a size needs its unit: write '67108864 KiB' or "
         "'67108864 B'"),
        ("nfs.toml", 'b4 = "80 MB/s"', "b4 = 80", "system.b4",
         "got the bare number 80: a rate needs its unit: write '80 MB/s' or '80 Mbit/s'"),
        ("nfs.toml", 'disk_access_time = "1 ms"', "disk_access_time = 1",
         "system.disk_access_time", "a time needs its unit: write '1 ms' or '1 s'"),
        ("networked_raid.toml", 'link_rate = "100 Mbit/s"', "link_rate = 100",
         "system.link_rate", "got the bare number 100: a rate needs its unit"),
        ("networked_raid.toml", 'link_rate = "100 Mbit/s"', "TRate_e = 12500000",
         "system.TRate_e", "got the bare number 12500000: a rate needs its unit"),
    ],
)  # fmt: skip
def test_bare_numbers_in_system_tables_are_refused(example, old, new, key, message):
    text = (EXAMPLES / example).read_text()
    bad = text.replace(old, new)
    assert bad != text
    err = refused(bad)
    assert err.key == key and message in str(err)


def test_a_cache_size_in_bytes_needs_its_unit():
    # with an item_size, size and working_set are bytes; without one, they count items
    base = (EXAMPLES / "nfs.toml").read_text()
    text = base.replace("server_hit = 0.5", 'server_cache = { size = 1073741824, '
                        'working_set = "4 GiB", item_size = "64 MiB" }')  # fmt: skip
    err = refused(text)
    assert err.key == "system.server_cache.size"
    assert "got the bare number 1073741824: a size needs its unit" in str(err)
    text = base.replace("server_hit = 0.5", "server_cache = { size = 16, working_set = 64 }")
    assert loads(text).network.K > 0


def test_zero_and_dimensionless_numbers_stay_accepted():
    # 0 is 0 in every unit; visits, servers, hit ratios and scv have no unit
    spec = loads(OPEN.replace('demand = "6 ms"', 'service_time = "6 ms"\nvisits = 2\nscv = 0.5')
                 .replace('arrival_rate = "40/s"', 'arrival_rate = [0, "40/s"]'))  # fmt: skip
    assert spec.network.demands.tolist() == [0.012]
    spec = loads(CLASSES.replace('think_time = "1 s"', "think_time = 0"))
    assert spec.multiclass.think_time.tolist() == [0.2, 0.0]
    for example in ("nfs.toml", "networked_raid.toml", "raid_array.toml"):
        load(EXAMPLES / example)  # client_hit = 0.0, master_cache_hit = 0.0, disks = 4


def test_with_values_from_python_reads_numbers_as_si_the_command_line_does_not():
    spec = load(EXAMPLES / "demo_storage.toml")
    assert with_values(spec, {"think_time": 0.02}).network.think_time == 0.02
    assert with_values(spec, {"think_time": "20 ms"}).network.think_time == 0.02
    with pytest.raises(ModelFileError, match=r"model\.think_time: got the bare number 20: a time"):
        with_values(spec, {"think_time": 20}, units_required=True)
    with pytest.raises(ModelFileError, match=r"station\[4\]\.service_time: got the bare number"):
        with_values(spec, {"disk.service_time": 0.005}, units_required=True)
