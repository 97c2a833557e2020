"""Symbolic forms: lambdify of every expression equals the numpy kernel; sensitivities."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sp = pytest.importorskip("sympy", reason="the symbolic module needs sympy")

from qnmodel import demands as dk  # noqa: E402
from qnmodel import symbolic as sy  # noqa: E402
from qnmodel.errors import InvalidModelError  # noqa: E402
from qnmodel.models.storage import STATIONS, NetworkedRAID  # noqa: E402
from qnmodel.models.storage_corrected import CORRECTED_STATIONS  # noqa: E402
from qnmodel.solvers.bounds import aba_from_aggregates, bjb_from_aggregates  # noqa: E402
from tests._tol import closed_form  # noqa: E402

SYMS = sy.parameter_symbols()
ARGS = [SYMS[k] for k in SYMS]
CASES = [
    (raid, op, terms)
    for raid in ("raid0", "raid10", "raid5", "raid6")
    for op in ("read", "write")
    for terms in ("paper", "one_server", "all_servers")
]
_LAMBDAS: dict = {}


def lambdas(raid, op, terms):
    key = (raid, op, terms)
    if key not in _LAMBDAS:
        dem = sy.demand_expressions(raid, op, terms, form="paper")
        inter = sy.intermediate_expressions(raid, op, terms, form="paper")
        _LAMBDAS[key] = (
            {k: sp.lambdify(ARGS, e, "math") for k, e in dem.items()},
            {k: sp.lambdify(ARGS, e, "math") for k, e in inter.items()},
        )
    return _LAMBDAS[key]


systems = st.builds(
    dict,
    S_m=st.integers(1, 10**11).map(float),
    STU_m=st.sampled_from([4096.0, 16384.0, 65536.0]),
    STP_m=st.integers(3, 12),
    P_m=st.floats(0, 1),
    P_sn=st.floats(0, 1),
    T_mpro=st.floats(1e-7, 1e-2),
    T_mp=st.floats(1e-7, 1e-2),
    T_snpro=st.floats(1e-7, 1e-2),
    T_snp=st.floats(1e-7, 1e-2),
    MSS=st.integers(500, 9000).map(float),
    Frame_e=st.just(9100.0),
    TRate_e=st.floats(1e5, 1e11),
    seek=st.floats(0, 2e-2),
    latency=st.floats(0, 1e-2),
    TRate_d=st.floats(1e5, 1e10),
)


@settings(max_examples=80, deadline=None)
@given(p=systems, case=st.sampled_from(CASES))
def test_lambdified_demands_equal_the_numeric_functions(p, case):
    raid, op, terms = case
    sys = NetworkedRAID.from_symbols(**p, raid=raid, op=op, server_terms=terms, form="paper")
    dem, inter = lambdas(raid, op, terms)
    vals = [p[str(s)] for s in ARGS]
    numeric = sys.demands()
    for k in STATIONS:
        # eqs. (2)-(10) of [Cui06] evaluated twice in different orders: at most ~16 operations
        assert dem[k](*vals) == pytest.approx(numeric[k], rel=closed_form(16), abs=1e-300), k
    i = sys.intermediates()
    assert inter["raid_bytes"](*vals) == pytest.approx(i["raid_bytes"], rel=1e-14)
    assert inter["packets"](*vals) == i["packets"]
    assert inter["server_packets"](*vals) == pytest.approx(i["server_packets"], rel=1e-14)
    assert inter["disk_unit_time"](*vals) == pytest.approx(
        float(dk.disk_unit_time(p["seek"], p["latency"], p["STU_m"], p["TRate_d"])), rel=1e-14
    )


BOUND_SYMS = sy.bound_symbols()
B_ARGS = [BOUND_SYMS[k] for k in ("N", "D", "D_max", "D_avg", "Z")]
BOUND_FNS = {
    m: {k: sp.lambdify(B_ARGS, e, "math") for k, e in sy.bound_expressions(m).items()}
    for m in ("aba", "bjb")
}


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(1, 10**6),
    demands=st.lists(st.floats(1e-6, 1e3), min_size=1, max_size=12),
    z=st.one_of(st.just(0.0), st.floats(1e-9, 1e4)),
)
def test_lambdified_bounds_equal_the_broadcasting_kernels(n, demands, z):
    d = np.array(demands)
    D, Dmax, Davg = d.sum(), d.max(), d.mean()
    kern = {
        "aba": aba_from_aggregates(n, D, Dmax, z),
        "bjb": bjb_from_aggregates(n, D, Dmax, Davg, z),
    }
    keys = ("throughput_lower", "throughput_upper", "response_time_lower", "response_time_upper")
    for m in ("aba", "bjb"):
        for key, want in zip(keys, kern[m], strict=True):
            got = BOUND_FNS[m][key](n, D, Dmax, Davg, z)
            # a bound's closed form (~8 operations) from the same aggregates
            assert got == pytest.approx(float(want), rel=closed_form(16)), (m, key)


_NR_BOUNDS: dict = {}


@settings(max_examples=40, deadline=None)
@given(
    p=systems,
    method=st.sampled_from(["aba", "bjb"]),
    op=st.sampled_from(["read", "write"]),
    n=st.integers(1, 500),
    z=st.one_of(st.just(0.0), st.floats(1e-3, 1e3)),
)
def test_lambdified_networked_raid_bounds_equal_the_solver(p, method, op, n, z):
    # the composed expressions (eqs. 2-10 inside eq. 1 and its relatives) against the numeric
    # path: NetworkedRAID -> Network -> qnmodel.bounds
    if (method, op) not in _NR_BOUNDS:
        exprs = sy.networked_raid_bounds(method, "raid5", op, form="paper")
        args = [*ARGS, BOUND_SYMS["N"], BOUND_SYMS["Z"]]
        _NR_BOUNDS[(method, op)] = {k: sp.lambdify(args, e, "math") for k, e in exprs.items()}
    sys = NetworkedRAID.from_symbols(**p, raid="raid5", op=op, form="paper")
    b = sys.bounds(n, method=method, think_time=z)
    vals = [p[str(s)] for s in ARGS]
    for key, f in _NR_BOUNDS[(method, op)].items():
        # eqs. (2)-(10) (~16 operations a demand) summed over 7 stations into a bound's closed
        # form: ~128 operations on either path
        assert f(*vals, n, z) == pytest.approx(float(getattr(b, key)[-1]), rel=closed_form(128)), (
            key
        )


def test_bjb_lower_response_bound_is_eq1_for_z0():
    b = sy.bound_expressions("bjb")
    a = sy.bound_symbols()
    r = b["response_time_lower"].subs(a["Z"], 0)
    eq1 = sp.Max(a["N"] * a["D_max"], a["D"] + (a["N"] - 1) * a["D_avg"])
    assert sp.simplify(r - eq1) == 0


def test_networked_raid_bounds_evaluate_to_the_solver():
    sys = NetworkedRAID.cui2006(form="paper", P_m=0.2)
    exprs = sy.networked_raid_bounds("bjb", form="paper")
    b = sys.bounds(10, think_time=5.0)
    for key in ("throughput_lower", "response_time_lower", "response_time_upper"):
        got = sy.evaluate(exprs[key], sys, N=10, Z=5.0)
        assert got == pytest.approx(getattr(b, key)[-1], rel=closed_form(128))  # as above
    with pytest.raises(InvalidModelError, match=r"no value for symbol\(s\) \['N', 'Z'\]"):
        sy.evaluate(exprs["response_time_lower"], sys)


def test_evaluate_demands_and_latex():
    sys = NetworkedRAID.cui2006(form="paper")
    for k, e in sy.demand_expressions(form="paper").items():
        assert sy.evaluate(e, sys) == pytest.approx(sys.demands()[k], rel=1e-13)
    tex = sy.to_latex(sy.demand_expressions(form="paper"))
    assert tex.startswith("\\begin{aligned}") and "D_{Cm} &=" in tex and "D_{d} &=" in tex
    assert r"\left\lceil" in tex and r"\mathit{TRate}_{e}" in tex
    assert sy.to_latex(sy.demand_expressions(op="read", form="paper")["network"]) == (
        r"\frac{S_{m} \left(1 - P_{m}\right)}{\mathit{TRate}_{e}}"
    )
    assert "D_{\\max}" in sy.to_latex(sy.bound_expressions("aba")["response_time_lower"])


def test_every_station_has_a_latex_name():
    assert set(sy._STATION_LATEX) == set(STATIONS) | set(CORRECTED_STATIONS)
    assert STATIONS == tuple(sy.demand_expressions(form="paper"))
    assert CORRECTED_STATIONS == tuple(sy.demand_expressions())  # the default form


def test_choices_are_checked():
    with pytest.raises(InvalidModelError, match="raid must be one of"):
        sy.demand_expressions(raid="raid4")
    with pytest.raises(InvalidModelError, match="packets must be"):
        sy.demand_expressions(packets="round")
    with pytest.raises(InvalidModelError, match="form must be one of"):
        sy.demand_expressions(form="pipelined")
    with pytest.raises(InvalidModelError, match="method must be"):
        sy.bound_expressions("exact")


def test_sensitivity_at_n1_is_the_share_of_the_demand():
    # At N = 1 every bound and MVA equal D = sum D_k: closed forms for the elasticities.
    sys = NetworkedRAID.cui2006(form="paper")
    d = sys.demands()
    D = sum(d.values())
    df = sy.sensitivity(sys, [1, 40], methods=("bjb", "aba", "mva")).set_index(["parameter", "n"])
    net_share = (d["nic_master"] + d["network"] + d["nic_server"]) / D
    for tag in ("bjb_r_lower", "bjb_r_upper", "aba_r_upper", "mva_r"):
        # the bounds are differentiated by sympy: sums of ~7 demands of ~8 operations each side;
        # MVA by central differences at rel_step 1e-3, whose truncation error is rel_step^2
        # (R = a + b / v at N = 1: measured 1.0e-6)
        tol = 10 * 1e-3**2 if tag == "mva_r" else closed_form(64)
        assert df.loc[("TRate_e", 1), f"elasticity_{tag}"] == pytest.approx(-net_share, rel=tol)
        # every demand but the per-unit CPU term scales with the miss rate 1 - P_m
        unit_term = 0.027e-3 * 200e6 / 16384
        assert df.loc[("P_m", 1), f"elasticity_{tag}"] == pytest.approx(
            (D - unit_term) / D, rel=tol
        )
    assert df.loc[("P_m", 1), "elasticity_of"] == "1 - value"
    # at N = 40 the BJB lower bound is N D_max: its elasticity in the link rate is exactly -1
    assert df.loc[("TRate_e", 40), "elasticity_bjb_r_lower"] == pytest.approx(-1.0, rel=1e-12)


@pytest.mark.parametrize("form", ["paper", "corrected"])
def test_bound_derivative_matches_finite_differences_of_the_solver(form):
    # for the corrected form, networked_raid_bounds(form="corrected") composes the same
    # expressions, but building it takes sympy 10-15 s: the chain rule through the aggregates
    # is checked here instead
    sys = NetworkedRAID.cui2006(form=form, P_m=0.3)
    n = 6
    df = sy.sensitivity(
        sys, n, parameters=["T_mp", "seek", "link_rate"], methods=("bjb",), think_time=20.0
    )
    for _, row in df.iterrows():
        v = row["value"]
        h = 1e-6 * v

        def r(x, name=row["name"]):
            return sys.replace(**{name: x}).bounds(n, think_time=20.0).response_time_upper[-1]

        fd = (r(v + h) - r(v - h)) / (2 * h)
        # the difference quotient's rounding: r to ~20 operations, over 2 h = 2e-6 v, relative
        # to the derivative r' = elasticity r / v; its truncation (h / v)^2 is far below
        tol = closed_form(20) / (2e-6 * abs(row["elasticity_bjb_r_upper"]))
        assert row["d_bjb_r_upper"] == pytest.approx(fd, rel=tol)


def test_sensitivity_errors():
    sys = NetworkedRAID.cui2006(form="paper")
    with pytest.raises(InvalidModelError, match=r"N must be an integer >= 1, got 0"):
        sy.sensitivity(sys, [0])
    with pytest.raises(InvalidModelError, match=r"N must be an integer >= 1, got 2.5"):
        sy.sensitivity(sys, [1, 2.5])  # never truncated to 2
    with pytest.raises(InvalidModelError, match=r"N must hold integers >= 1, got \[\]"):
        sy.sensitivity(sys, [])
    assert sy.sensitivity(sys, np.int64(2), parameters=["seek"], methods=("bjb",)).n.tolist() == [2]
    with pytest.raises(InvalidModelError, match="methods must be a subset"):
        sy.sensitivity(sys, 1, methods=("exact",))
    with pytest.raises(InvalidModelError, match="unknown NetworkedRAID parameter"):
        sy.sensitivity(sys, 1, parameters=["bandwidth"])
    assert math.isfinite(sy.sensitivity(sys, 2, parameters=["P_sn"])["d_mva_r"].iloc[0])


_CORRECTED: dict = {}


@settings(max_examples=120, deadline=None)
@given(p=systems, case=st.sampled_from(CASES), chunks=st.sampled_from([None, 1, 2, 3, 11]))
def test_lambdified_corrected_demands_equal_the_numeric_functions(p, case, chunks):
    # the default form: its Piecewise read-modify-write against the numpy composition
    raid, op, terms = case
    if chunks is not None:  # around the stripe's data: small writes are read-modify-writes
        p = dict(p, S_m=chunks * p["STU_m"])
    if case not in _CORRECTED:
        dem = sy.demand_expressions(raid, op, terms)
        _CORRECTED[case] = {k: sp.lambdify(ARGS, e, "math") for k, e in dem.items()}
    sys = NetworkedRAID.from_symbols(**p, raid=raid, op=op, server_terms=terms)
    assert sys.form == "corrected"
    vals = [p[str(s)] for s in ARGS]
    numeric = sys.demands()
    assert tuple(numeric) == tuple(_CORRECTED[case])
    for k, f in _CORRECTED[case].items():
        assert f(*vals) == pytest.approx(numeric[k], rel=1e-12, abs=1e-300), k


def test_corrected_expressions_show_the_read_modify_write():
    i = sy.intermediate_expressions("raid5", "write")
    s = sy.parameter_symbols()
    small = {s["S_m"]: 65536, s["STU_m"]: 65536, s["STP_m"]: 3}
    full = {**small, s["S_m"]: 131072}
    assert i["bytes_out"].subs(small) == 131072 and i["bytes_in"].subs(small) == 131072
    assert i["bytes_out"].subs(full) == 196608 and i["bytes_in"].subs(full) == 0
    tex = sy.to_latex(sy.demand_expressions())
    assert r"D_{\mathit{out}} &=" in tex and r"D_{\mathit{in}} &=" in tex
    assert (
        sy.demand_expressions(op="read", form="paper")["network"]
        == s["S_m"] * (1 - s["P_m"]) / s["TRate_e"]
    )


def test_sensitivity_at_n1_of_the_corrected_form_is_the_share_of_the_demand():
    sys = NetworkedRAID.cui2006()
    d = sys.demands()
    D = sum(d.values())
    df = sy.sensitivity(sys, [1], parameters=["TRate_e"], methods=("bjb", "mva"))
    link_share = (d["link_out"] + d["link_in"]) / D  # the corrected form's only link stations
    for tag in ("bjb_r_lower", "bjb_r_upper", "mva_r"):
        assert df[f"elasticity_{tag}"].iloc[0] == pytest.approx(-link_share, rel=1e-5)
