"""``qnmodel solve --target`` and the model-file keys ``arrival_rate`` and ``target``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import qnmodel as qn
from qnmodel.io import modelfile
from qnmodel.reporting.report import fmt_g
from qnmodel.solvers.response_laws import response_time_law
from tests._tol import PH_QUANTILE, closed_form

from ._cli import run

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "examples" / "demo_storage.toml"

OPEN_MODEL = """
[model]
name = "open-disks"
arrival_rate = "150/s"
target = "p95 <= 30 ms"

[[station]]
name = "cpu"
demand = "2 ms"

[[station]]
name = "disk"
demand = "5 ms"
"""


def test_solve_with_a_mean_target_answers_the_three_questions():
    code, out, err = run("solve", str(DEMO), "--target", "R <= 50 ms")
    assert code == 0, err
    net = modelfile.load(DEMO).network
    n = qn.max_population(net, "50 ms")
    assert f"largest population meeting it: {n}\n" in out
    assert "fewest servers at the bottleneck 'network' (at n = 40): none:" in out
    up = qn.best_upgrade(net, N=40)
    first = out.split("single upgrades at n = 40, ranked by R")[1].splitlines()[3]
    assert first.split()[:3] == up.best.split()


def test_solve_with_a_percentile_target_as_json():
    code, out, err = run("solve", str(DEMO), "--target", "p95 <= 300 ms", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    cap = doc["capacity"]
    net = modelfile.load(DEMO).network
    assert cap["metric"] == "p95" and cap["method"].startswith("approximate")
    assert cap["max_population"] == qn.max_population(net, "p95 <= 300 ms")
    p95 = response_time_law(net, N=40).quantile(0.95)
    assert cap["baseline"] == pytest.approx(p95, rel=PH_QUANTILE)  # the same law's quantile
    assert [u["value"] for u in cap["upgrades"]] == sorted(u["value"] for u in cap["upgrades"])
    assert doc["schema"] == "qnmodel.solve" and len(doc["results"]) == 40


def test_open_model_file_with_its_own_target(tmp_path):
    path = tmp_path / "open.toml"
    path.write_text(OPEN_MODEL)
    spec = modelfile.load(path)
    assert spec.is_open and spec.target.q == 0.95
    sol = spec.solve()
    assert sol.result.response_time[0] == pytest.approx(
        # 2 stations of 3 operations, amplified through rho by 1 / (1 - 0.75)
        0.002 / (1 - 150 * 0.002) + 0.005 / (1 - 150 * 0.005),
        rel=closed_form(8) / (1 - 0.75),
    )
    code, out, err = run("solve", str(path))
    assert code == 0, err
    lam = qn.max_arrival_rate(spec.network, "p95 <= 30 ms")
    assert "exact: sum of independent sojourn laws, exact for an open tandem" in out
    assert f"largest arrival rate meeting it: {fmt_g(lam)} jobs/s" in out
    assert "saturation arrival rate = 200 jobs/s" in out
    code, out, err = run("plot", str(path), "--out", str(tmp_path / "x.png"))
    assert code != 0 and "this model is open" in err


def test_population_and_arrival_rate_conflict():
    text = OPEN_MODEL.replace('arrival_rate = "150/s"', 'arrival_rate = "150/s"\nN = 4')
    with pytest.raises(
        modelfile.ModelFileError, match="give either N .* or arrival_rate .*not both"
    ):
        modelfile.loads(text)


def test_arrival_rate_with_a_wrong_unit():
    with pytest.raises(modelfile.ModelFileError, match=r"model\.arrival_rate.*40 MB/s"):
        modelfile.loads(OPEN_MODEL.replace('"150/s"', '"40 MB/s"'))


def test_bad_target_in_a_file_names_the_key():
    with pytest.raises(modelfile.ModelFileError, match=r"model\.target.*'fast' is not a time"):
        modelfile.loads(OPEN_MODEL.replace('"p95 <= 30 ms"', '"R < fast"'))


def test_bad_target_on_the_command_line_is_a_usage_error():
    code, out, err = run("solve", str(DEMO), "--target", "p150 <= 1 s")
    assert code == 2 and "strictly between 0 and 100, got 150" in err


RAID_WITH_CACHE = """
[model]
name = "raid-cache"
N = 8
target = "R <= 60 s"

[system]
type = "networked_raid"
reference = "cui2006"
op = "read"
master_cache = { size = 500, working_set = 1000, popularity = "uniform" }
"""


def test_storage_system_with_a_cache_in_a_model_file():
    from qnmodel.models.cache import Cache
    from qnmodel.models.storage import NetworkedRAID
    from qnmodel.models.storage_cache import CachedNetworkedRAID

    spec = modelfile.loads(RAID_WITH_CACHE)
    by_hand = CachedNetworkedRAID(
        NetworkedRAID.cui2006(op="read"), master_cache=Cache(500, 1000, "uniform")
    )
    # the default (corrected) form: P_m = 0.5 halves the link's 136987 frames of 1518 B
    assert spec.network.station("link_in").demand == pytest.approx(
        0.5 * 136987 * 1518 / 12.5e6, rel=1e-10
    )
    assert spec.storage_model == by_hand
    code, out, err = modelfile_cli(spec)
    assert code == 0, err
    assert "master cache: 2x (1000 items)" in out.split("ranked by R")[1].splitlines()[3]


def modelfile_cli(spec):
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write(spec.text)
    return run("solve", f.name)


@pytest.mark.parametrize(
    ("cache", "key", "message"),
    [
        ("{ size = -5, working_set = 1000 }", "size", "must be finite and >= 0, got -5"),
        ("{ size = 5, working_set = 0.5 }", "working_set", "at least one item, got 0.5"),
        ("{ size = 5, working_set = 100, alpha = 0 }", "alpha", "must be > 0, got 0"),
    ],
)
def test_bad_cache_in_a_model_file_names_the_key(cache, key, message):
    text = RAID_WITH_CACHE.replace(
        'master_cache = { size = 500, working_set = 1000, popularity = "uniform" }',
        f"master_cache = {cache}",
    )
    with pytest.raises(modelfile.ModelFileError, match=rf"system\.master_cache\.{key}.*{message}"):
        modelfile.loads(text)


ARRAY_MODEL = """
[model]
name = "six-disk-array"
arrival_rate = ["600/s", "1000/s", "1300/s"]
target = "R <= 20 ms"

[[station]]
name = "cpu"
demand = "0.5 ms"
""" + "".join(
    f'\n[[station]]\nname = "disk{i}"\nservice_time = "5 ms"\nvisits = {1 / 6!r}\n'
    for i in range(1, 7)
)


def test_open_file_with_several_rates_is_asked_at_its_largest_stable_rate(tmp_path):
    """Issue 26 item 5: the questions were asked at 1300/s, where the array is saturated
    (saturation 6 / 5 ms = 1200/s), and every answer was 'inf (unstable)'."""
    path = tmp_path / "array.toml"
    path.write_text(ARRAY_MODEL)
    code, out, err = run("solve", str(path))
    assert code == 0, err
    assert (
        "asked at 1000 jobs/s, the largest of the 3 listed rates below saturation "
        "(1200 jobs/s; 1 listed rate is above it)" in out
    )
    # the bottleneck is the array: how many members meet R <= 20 ms at 1000/s
    net = modelfile.load(path).network
    members = qn.min_servers(net, "disk1", "R <= 20 ms", arrival_rate=1000.0, count="devices")
    assert (
        "fewest members of the bottleneck group 'disk1..disk6 (6 identical)' "
        f"(at 1000 jobs/s): {members}\n" in out
    )
    table = out.split("ranked by R")[1].splitlines()
    assert table[3].split()[:8] == ["disk1..disk6", "(6", "identical):", "all", "6",
                                    "members", "2x", "faster"]  # fmt: skip
    code, out, err = run("solve", str(path), "--format", "json")
    cap = json.loads(out)["capacity"]
    assert cap["workload"] == {
        "arrival_rate": 1000.0, "saturation_arrival_rate": pytest.approx(1200.0, rel=1e-12),
        "listed_rates": 3, "unstable_rates": 1, "stable": True,
    }  # fmt: skip
    assert cap["bottleneck_group"] == "disk1..disk6 (6 identical)"
    assert cap["min_servers_count"] == "devices" and cap["min_servers"] == members
    up = qn.best_upgrade(net, arrival_rate=1000.0, target="R <= 20 ms")
    assert [u["option"] for u in cap["upgrades"]] == list(up.options)
    assert cap["speedup"] == 2.0
    assert cap["upgrades"][0]["response_time_ratio"] == pytest.approx(
        cap["baseline"] / cap["upgrades"][0]["value"], rel=1e-15
    )


def test_open_file_whose_rates_are_all_unstable_asks_what_makes_it_stable(tmp_path):
    path = tmp_path / "array.toml"
    path.write_text(ARRAY_MODEL.replace('["600/s", "1000/s", "1300/s"]', '["1300/s", "1250/s"]'))
    code, out, err = run("solve", str(path))
    assert code == 0, err
    assert (
        "no listed arrival rate is stable (saturation 1200 jobs/s): the questions below are "
        "asked at the largest, 1300 jobs/s -- what makes it stable" in out
    )
    rows = out.split("ranked by R (now inf (unstable)):")[1].splitlines()
    # 0.5 ms / (1 - 0.65) + 2.5 ms / (1 - 1300 x 2.5 ms / 6) = 1.429 + 5.455 ms
    assert rows[3].split()[3:10] == ["all", "6", "members", "2x", "faster", "6.883", "ms"]
    assert "one more member (7)" in out
    assert "    still unstable with: cpu: 2x faster; cpu: 2 servers" in out
    assert "inf (unstable)  " not in out.split("target R")[1]  # no row of an unstable option


def test_group_key_in_a_model_file(tmp_path):
    text = """
[model]
N = 20
think_time = "100 ms"

[[station]]
name = "cpu"
demand = "1 ms"
""" + "".join(f'\n[[station]]\nname = "{n}"\ndemand = "4 ms"\ngroup = "shelf"\n' for n in "abc")
    spec = modelfile.loads(text)
    assert spec.groups == {"shelf": ("a", "b", "c")}
    path = tmp_path / "shelf.toml"
    path.write_text(text)
    code, out, err = run("solve", str(path), "--target", "R <= 100 ms")
    assert code == 0, err
    assert "shelf (3 identical): one more member (4)" in out
    assert "fewest members of the bottleneck group 'shelf (3 identical)'" in out
    bad = text.replace('name = "c"\ndemand = "4 ms"', 'name = "c"\ndemand = "5 ms"')
    with pytest.raises(modelfile.ModelFileError, match="station 'c' differs from 'a' in demand"):
        modelfile.loads(bad)
    with pytest.raises(modelfile.ModelFileError, match=r"station\[1\]\.group.*must be a string"):
        modelfile.loads(text.replace('group = "shelf"', "group = 3", 1))
    with pytest.raises(modelfile.ModelFileError, match=r"station\[1\]\.group.*non-empty group"):
        modelfile.loads(text.replace('group = "shelf"', 'group = " "', 1))
    with pytest.raises(modelfile.ModelFileError, match="has 1 member"):
        modelfile.loads(text.replace('group = "shelf"', 'group = "one"', 1))
    classes = text.replace("N = 20", "") + (
        '\n[[class]]\nname = "r"\nN = 2\n\n[[class]]\nname = "w"\nN = 1\n'
    )
    with pytest.raises(modelfile.ModelFileError, match="groups are single-class"):
        modelfile.loads(classes)
