"""Symbolic forms (sympy) of the networked-RAID demands and of the ABA/BJB bounds.

Every demand formula of Cui et al. (2006), eqs. (2)-(10), and the bounds of
Lazowska et al. (ABA, BJB, with think time) exist here as sympy expressions
over the paper's own symbols, so a notebook can show them
(:func:`to_latex`), substitute numbers (:func:`evaluate`), differentiate them
(:func:`sensitivity`) or turn them into fast functions (``sympy.lambdify``).
The test suite checks that ``lambdify`` of every expression equals the numpy
kernel in :mod:`qnmodel.demands` and :mod:`qnmodel.solvers.bounds`.

Both demand compositions of :class:`~qnmodel.models.storage.NetworkedRAID` are
here, chosen by ``form``: ``"corrected"`` (the default, as for the class;
:mod:`qnmodel.models.storage_corrected`) and ``"paper"`` (eqs. 2-10 as printed).
The corrected form's read-modify-write (a RAID5/RAID6 write smaller than a
stripe) is a ``Piecewise`` in S_m < (STP_m - p) STU_m.

sympy is imported only inside the functions (an optional dependency:
``pip install qnmodel[symbolic]``).

References
----------
.. [Cui06] Cui B., Liu J., Wang G., Liu J., Journal on Communications
   27(1):69-74, 2006, eqs. (1)-(10).
.. [LZGS] E. D. Lazowska et al., *Quantitative System Performance*, 1984,
   sec. 5.2 (ABA) and 5.3 (BJB).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ._validate import as_population
from .errors import InvalidModelError, InvalidTypeError
from .models.storage import PARAMETERS, SYMBOLS, NetworkedRAID

__all__ = [
    "parameter_symbols",
    "intermediate_expressions",
    "demand_expressions",
    "bound_expressions",
    "networked_raid_bounds",
    "to_latex",
    "evaluate",
    "sensitivity",
    "LATEX_NAMES",
]

#: LaTeX for each paper symbol (multi-letter names set upright-italic as one word)
LATEX_NAMES: dict[str, str] = {
    "S_m": "S_{m}",
    "STU_m": r"\mathit{STU}_{m}",
    "STP_m": r"\mathit{STP}_{m}",
    "P_m": "P_{m}",
    "P_sn": "P_{sn}",
    "T_mpro": "T_{mpro}",
    "T_mp": "T_{mp}",
    "T_snpro": "T_{snpro}",
    "T_snp": "T_{snp}",
    "MSS": r"\mathit{MSS}",
    "Frame_e": r"\mathit{Frame}_{e}",
    "TRate_e": r"\mathit{TRate}_{e}",
    "seek": r"\mathit{seek}",
    "latency": r"\mathit{latency}",
    "TRate_d": r"\mathit{TRate}_{d}",
    "N": "N",
    "Z": "Z",
    "D": "D",
    "D_max": r"D_{\max}",
    "D_avg": r"D_{\mathrm{avg}}",
}

_STATION_LATEX = {
    "link_out": r"D_{\mathit{out}}",
    "link_in": r"D_{\mathit{in}}",
    "cpu_master": "D_{Cm}",
    "nic_master": "D_{Nm}",
    "network": "D_{Net}",
    "nic_server": "D_{Nsn}",
    "cpu_server": "D_{Csn}",
    "disk": "D_{d}",
}

_BOUND_KEYS = ("throughput_lower", "throughput_upper", "response_time_lower", "response_time_upper")


def _sympy():
    try:
        import sympy
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("qnmodel.symbolic needs sympy: pip install 'qnmodel[symbolic]'") from exc
    return sympy


def parameter_symbols() -> dict[str, Any]:
    """Paper symbol -> sympy Symbol (probabilities nonnegative, everything else positive).

    Keys are those of :data:`qnmodel.models.storage.SYMBOLS`: ``S_m, STU_m,
    STP_m, P_m, P_sn, T_mpro, T_mp, T_snpro, T_snp, MSS, Frame_e, TRate_e,
    seek, latency, TRate_d``.
    """
    sp = _sympy()
    out = {}
    for sym in SYMBOLS:
        if sym in ("P_m", "P_sn"):
            out[sym] = sp.Symbol(sym, nonnegative=True)
        elif sym == "STP_m":
            out[sym] = sp.Symbol(sym, positive=True, integer=True)
        else:
            out[sym] = sp.Symbol(sym, positive=True)
    return out


def _check_choices(
    raid: str, op: str, server_terms: str, packets: str, form: str = "paper"
) -> None:
    from .models.storage import CHOICES

    choices = (("raid", raid), ("op", op), ("server_terms", server_terms), ("form", form))
    for name, value in choices:
        if value not in CHOICES[name]:
            raise InvalidModelError(f"{name} must be one of {CHOICES[name]}, got {value!r}")
    if packets not in ("ceiling", "continuous"):
        raise InvalidModelError(f"packets must be 'ceiling' or 'continuous', got {packets!r}")


def intermediate_expressions(
    raid: str = "raid5",
    op: str = "write",
    server_terms: str = "paper",
    packets: str = "ceiling",
    form: str = "corrected",
) -> dict[str, Any]:
    """The intermediate quantities of a demand composition as expressions.

    Both forms: ``raid_bytes`` S_mRi (eqs. 4-5), ``visit`` (the 1/STP_m
    prefactor of eqs. 6, 8, 10 under ``server_terms``) and ``disk_unit_time``
    (the bracket of eq. 10). ``form="paper"``: ``packets`` IP_num (eq. 3),
    ``server_bytes`` S_sn, ``server_packets`` IP_snum. ``form="corrected"``:
    ``bytes_out`` and ``bytes_in`` (what the master sends to and receives from
    the servers, :func:`qnmodel.models.storage_corrected.moved_bytes`),
    ``packets_out`` and ``packets_in`` (eq. 3 for each direction), and
    ``server_bytes``, ``server_packets`` (one server's share of both directions).

    Parameters
    ----------
    raid, op, server_terms, form
        As in :class:`~qnmodel.models.storage.NetworkedRAID` (``form``
        ``"corrected"`` by default, as there).
    packets : {"ceiling", "continuous"}
        ``"ceiling"`` is eq. (3) as printed, IP_num = ceiling(S_mRi/MSS);
        ``"continuous"`` drops the ceiling (S_mRi/MSS) so that derivatives
        with respect to S_m and MSS are the average slope instead of zero.
    """
    sp = _sympy()
    _check_choices(raid, op, server_terms, packets, form)
    s = parameter_symbols()
    w = s["STP_m"]
    if op == "read" or raid == "raid0":
        factor = sp.Integer(1)
    elif raid in ("raid1", "raid10"):
        factor = sp.Integer(2)
    elif raid == "raid5":
        factor = w / (w - 1)  # eq. (4)
    else:
        factor = w / (w - 2)
    s_r = s["S_m"] * factor

    def count(nbytes):
        return sp.ceiling(nbytes / s["MSS"]) if packets == "ceiling" else nbytes / s["MSS"]

    visit = {"paper": 1 / w, "one_server": sp.Integer(1), "all_servers": w}[server_terms]
    common = {
        "raid_bytes": s_r,
        "visit": visit,
        "disk_unit_time": s["seek"] + s["latency"] + s["STU_m"] / s["TRate_d"],
    }
    if form == "paper":
        ip = count(s_r)
        return {**common, "packets": ip, "server_bytes": s_r / w, "server_packets": ip / w}
    # corrected form: what moves each way (storage_corrected.moved_bytes)
    parity = {"raid5": 1, "raid6": 2}.get(raid, 0)
    if op == "read":
        out, inn = sp.Integer(0), s["S_m"]
    elif parity:
        small = s["S_m"] + parity * s["STU_m"]  # read-modify-write [CLGK94]: each way
        rmw = sp.StrictLessThan(s["S_m"], (w - parity) * s["STU_m"])
        out = sp.Piecewise((small, rmw), (s_r, True))
        inn = sp.Piecewise((small, rmw), (sp.Integer(0), True))
    else:
        out, inn = s_r, sp.Integer(0)
    pk_out, pk_in = count(out), count(inn)
    return {
        **common,
        "bytes_out": out,
        "bytes_in": inn,
        "packets_out": pk_out,
        "packets_in": pk_in,
        "server_bytes": (out + inn) / w,
        "server_packets": (pk_out + pk_in) / w,
    }


def demand_expressions(
    raid: str = "raid5",
    op: str = "write",
    server_terms: str = "paper",
    packets: str = "ceiling",
    form: str = "corrected",
) -> dict[str, Any]:
    """Station demands as sympy expressions, seconds per job.

    Keys as :meth:`NetworkedRAID.demands`. ``form="corrected"`` (default):
    ``cpu_master`` (eq. 2 over the moved bytes), ``link_out`` and ``link_in``
    (eq. 7 for each direction), ``cpu_server`` (eq. 6), ``disk`` (eq. 10), see
    :func:`qnmodel.models.storage_corrected.corrected_demands`. ``form="paper"``
    ([Cui06] as printed): ``cpu_master`` (eq. 2), ``nic_master`` (eq. 7),
    ``network`` (eq. 9), ``nic_server`` (eq. 8), ``cpu_server`` (eq. 6),
    ``disk`` (eq. 10). Parameters as :func:`intermediate_expressions`.

    Examples
    --------
    >>> d = demand_expressions(op="read", form="paper")
    >>> d["network"]
    S_m*(1 - P_m)/TRate_e
    >>> demand_expressions(op="read", packets="continuous")["link_in"]
    Frame_e*S_m*(1 - P_m)/(MSS*TRate_e)
    """
    inter = intermediate_expressions(raid, op, server_terms, packets, form)
    return _demands_from(inter, form)


def _demands_from(i: Mapping[str, Any], form: str = "paper") -> dict[str, Any]:
    s = parameter_symbols()
    miss = 1 - s["P_m"]
    frame_time = s["Frame_e"] / s["TRate_e"]
    server = {
        "cpu_server": miss
        * i["visit"]
        * (s["T_snpro"] * i["server_bytes"] / s["STU_m"] + s["T_snp"] * i["server_packets"]),
        "disk": miss
        * i["visit"]
        * (1 - s["P_sn"])
        * i["disk_unit_time"]
        * i["server_bytes"]
        / s["STU_m"],
    }
    if form == "corrected":
        moved = i["bytes_out"] + i["bytes_in"]
        units = (s["P_m"] * s["S_m"] + miss * moved) / s["STU_m"]  # a hit: eq. (2)'s own units
        return {
            "cpu_master": s["T_mpro"] * units
            + miss * s["T_mp"] * (i["packets_out"] + i["packets_in"]),
            "link_out": miss * i["packets_out"] * frame_time,
            "link_in": miss * i["packets_in"] * frame_time,
            **server,
        }
    return {
        "cpu_master": s["T_mpro"] * s["S_m"] / s["STU_m"] + miss * s["T_mp"] * i["packets"],
        "nic_master": miss * i["packets"] * frame_time,
        "network": miss * i["raid_bytes"] / s["TRate_e"],
        "nic_server": miss * i["visit"] * i["server_packets"] * frame_time,
        **server,
    }


def _aggregate_symbols():
    sp = _sympy()
    return {
        "N": sp.Symbol("N", positive=True),
        "D": sp.Symbol("D", positive=True),
        "D_max": sp.Symbol("D_max", positive=True),
        "D_avg": sp.Symbol("D_avg", positive=True),
        "Z": sp.Symbol("Z", nonnegative=True),
    }


def bound_expressions(method: str = "bjb") -> dict[str, Any]:
    """ABA or BJB bounds on X(N) and R(N) in the aggregates D, D_max, D_avg and Z.

    Single-server queueing stations, think time Z ([LZGS] sec. 5.2-5.3);
    with Z = 0 the BJB lower response-time bound is [Cui06] eq. (1),
    ``max(N D_max, D + (N-1) D_avg)``.

    Parameters
    ----------
    method : {"bjb", "aba"}

    Returns
    -------
    dict
        ``throughput_lower``, ``throughput_upper`` (jobs/s),
        ``response_time_lower``, ``response_time_upper`` (s), in the symbols
        ``N, D, D_max, D_avg, Z`` (see :func:`bound_symbols`).
    """
    sp = _sympy()
    a = _aggregate_symbols()
    N, D, Dmax, Davg, Z = a["N"], a["D"], a["D_max"], a["D_avg"], a["Z"]
    if method == "aba":
        return {
            "throughput_lower": N / (N * D + Z),
            "throughput_upper": sp.Min(N / (D + Z), 1 / Dmax),
            "response_time_lower": sp.Max(D, N * Dmax - Z),
            "response_time_upper": N * D,
        }
    if method == "bjb":
        shrink_hi = (N - 1) * Davg * D / (D + Z)  # (N-1) D_avg / (1 + Z/D)
        shrink_lo = (N - 1) * Dmax * N * D / (N * D + Z)  # (N-1) D_max / (1 + Z/(N D))
        return {
            "throughput_lower": N / (D + Z + shrink_lo),
            "throughput_upper": sp.Min(1 / Dmax, N / (D + Z + shrink_hi)),
            "response_time_lower": sp.Max(N * Dmax - Z, D + shrink_hi),
            "response_time_upper": D + shrink_lo,
        }
    raise InvalidModelError(f"method must be 'bjb' or 'aba', got {method!r}")


def bound_symbols() -> dict[str, Any]:
    """The symbols of :func:`bound_expressions`: ``N, D, D_max, D_avg, Z``."""
    return _aggregate_symbols()


def networked_raid_bounds(
    method: str = "bjb",
    raid: str = "raid5",
    op: str = "write",
    server_terms: str = "paper",
    packets: str = "ceiling",
    form: str = "corrected",
) -> dict[str, Any]:
    """Bounds of the networked-RAID system in the paper's symbols, N and Z.

    The demand expressions of ``form`` are substituted into
    :func:`bound_expressions` with D = sum of the K demands, D_max their
    maximum and D_avg = D / K (K = 5 stations in the default corrected form,
    6 in the paper's). With ``form="paper"``, ``method="bjb"`` and Z = 0 the
    lower response-time bound is the paper's eq. (1) with eqs. (2)-(10)
    inserted, "the bound model" of [Cui06] sec. 3.2.
    """
    sp = _sympy()
    d = list(demand_expressions(raid, op, server_terms, packets, form).values())
    a = _aggregate_symbols()
    total = sp.Add(*d)
    sub = {a["D"]: total, a["D_max"]: sp.Max(*d), a["D_avg"]: total / len(d)}
    return {k: v.subs(sub) for k, v in bound_expressions(method).items()}


def to_latex(obj: Any, names: Mapping[str, str] | None = None) -> str:
    """LaTeX of an expression, or of a dict of expressions as an ``aligned`` block.

    Paper symbols are typeset with :data:`LATEX_NAMES`; station keys of a
    demand dict become the paper's names (D_{Cm}, D_{Nm}, ...).

    Examples
    --------
    >>> print(to_latex(demand_expressions(op="read", form="paper")["network"]))
    \\frac{S_{m} \\left(1 - P_{m}\\right)}{\\mathit{TRate}_{e}}
    """
    sp = _sympy()
    names = dict(LATEX_NAMES, **(names or {}))

    def one(expr) -> str:
        expr = sp.sympify(expr)
        table = {s: names[s.name] for s in expr.free_symbols if s.name in names}
        return sp.latex(expr, symbol_names=table)

    if isinstance(obj, Mapping):
        rows = []
        for key, expr in obj.items():
            lhs = _STATION_LATEX.get(key, r"\mathrm{" + str(key).replace("_", r"\_") + "}")
            rows.append(f"{lhs} &= {one(expr)}")
        return "\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}"
    return one(obj)


def _values(system: NetworkedRAID) -> dict[str, float]:
    if not isinstance(system, NetworkedRAID):
        raise InvalidTypeError(f"system must be a NetworkedRAID, got {type(system).__name__}")
    return system.symbols()


def evaluate(expr: Any, system: NetworkedRAID, **extra: float) -> float:
    """Substitute a system's parameters (and e.g. ``N=``, ``Z=``) into an expression."""
    sp = _sympy()
    vals = _values(system)
    by_name = {**vals, **extra}
    expr = sp.sympify(expr)
    sub = {s: by_name[s.name] for s in expr.free_symbols if s.name in by_name}
    missing = [s.name for s in expr.free_symbols if s.name not in by_name]
    if missing:
        raise InvalidModelError(f"no value for symbol(s) {sorted(missing)}; pass them as keywords")
    free = sorted(sub, key=lambda s: s.name)
    return float(sp.lambdify(free, expr, "math")(*[sub[s] for s in free]))


def sensitivity(
    system: NetworkedRAID,
    N: int | Sequence[int],
    parameters: Sequence[str] | None = None,
    think_time: float = 0.0,
    methods: Sequence[str] = ("bjb", "mva"),
    rel_step: float = 1e-3,
):
    """dR/dparameter at populations N: symbolic for the bounds, finite differences for MVA.

    Parameters
    ----------
    system : NetworkedRAID
        The operating point (its ``raid``, ``op``, ``server_terms`` and ``form`` are kept).
    N : int or sequence of int
        Populations at which to differentiate (>= 1).
    parameters : sequence of str, optional
        Paper symbols or field names; default every numeric parameter except
        STP_m (an integer).
    think_time : float
        Z in seconds (>= 0).
    methods : subset of {"bjb", "aba", "mva"}
        ``bjb``/``aba``: exact derivatives of the lower and upper response-time
        bounds, by the chain rule through the aggregates,
        dR/dp = R_D dD/dp + R_Dmax dD_b/dp + R_Davg dD/dp / K with b the
        bottleneck station, every factor differentiated by sympy
        (:func:`bound_expressions`, :func:`demand_expressions` of the
        system's ``form``). The packet counts keep eq. (3)'s ceiling in value;
        their derivatives with respect to S_m, MSS and STP_m are the ceiling's
        average slope, that of bytes / MSS.
        ``mva``: central differences of exact MVA with step ``rel_step`` x
        value (one-sided where a central step would leave the domain, e.g.
        P_m = 0); eq. (3)'s ceiling is kept, hence the relatively large step.
    rel_step : float
        Relative step of the finite differences (> 0).

    Returns
    -------
    pandas.DataFrame
        One row per (parameter, n): ``parameter`` (paper symbol), ``name``,
        ``value`` (SI), ``n``, ``response_time`` (exact MVA R(n), s), then for
        each method and bound ``d_<tag>`` (s per SI unit) and
        ``elasticity_<tag>``, with tags ``bjb_r_lower``, ``bjb_r_upper``,
        ``aba_r_lower``, ``aba_r_upper``, ``mva_r``. The elasticity is the
        dimensionless (x / R) dR/dx that compares parameters of different
        units: -0.5 means 1% more of x cuts R by 0.5%. For the hit rates
        P_m and P_sn, x is the **miss** rate 1 - P (``elasticity_of`` says
        which), since an elasticity at a hit rate of 0 would always be 0.
    """
    import numpy as np
    import pandas as pd

    sp = _sympy()
    vals = _values(system)
    if isinstance(N, str) or not isinstance(N, Iterable):
        N = [N]
    n_list = [as_population(v, "N") for v in N]  # 2.5 or 0 rejected, never truncated
    if not n_list:
        raise InvalidModelError(f"N must hold integers >= 1, got {N!r}")
    if not rel_step > 0:
        raise InvalidModelError(f"rel_step must be > 0, got {rel_step!r}")
    if parameters is None:
        params = [p for p in SYMBOLS if p != "STP_m"]
    else:
        params = [PARAMETERS[system.field_name(p)][0] for p in parameters]
    for m in methods:
        if m not in ("bjb", "aba", "mva"):
            raise InvalidModelError(f"methods must be a subset of ('bjb', 'aba', 'mva'), got {m!r}")
    syms = parameter_symbols()
    order = list(syms)
    args = [syms[k] for k in order]
    point = [vals[k] for k in order]
    # Demands with each packet count as a symbol of its own, evaluated at the printed
    # ceiling; its derivative is that of bytes / MSS (the ceiling's mean slope).
    form = system.form
    inter = intermediate_expressions(
        system.raid, system.op, system.server_terms, "continuous", form
    )
    w = syms["STP_m"]
    if form == "paper":
        ip = {"packets": sp.Symbol("IP_num", positive=True)}
        fixed = dict(inter, **ip, server_packets=ip["packets"] / w)
        at_ceiling = {"packets": system.intermediates()["packets"]}
    else:
        ip = {k: sp.Symbol(f"IP_{k[8:]}", nonnegative=True) for k in ("packets_out", "packets_in")}
        fixed = dict(inter, **ip, server_packets=(ip["packets_out"] + ip["packets_in"]) / w)
        i_now = system.intermediates()
        at_ceiling = {
            f"packets_{d}": float(math.ceil(i_now[f"bytes_{d}"] / system.mss))
            for d in ("out", "in")
        }
    dem = list(_demands_from(fixed, form).values())
    K = len(dem)
    args_ip = [*args, *ip.values()]
    point_ip = [*point, *(at_ceiling[k] for k in ip)]

    def at_point(e) -> float:
        return float(sp.lambdify(args_ip, e, "math")(*point_ip))

    d_now = np.array([at_point(e) for e in dem])
    b = int(np.argmax(d_now))
    # dD_k/dp = dD_k/dp|_IP + sum_j dD_k/dIP_j * d(bytes_j/MSS)/dp at the point.
    dd = {
        p: np.array(
            [
                at_point(
                    sp.diff(e, syms[p])
                    + sum(sp.diff(e, s) * sp.diff(inter[k], syms[p]) for k, s in ip.items())
                )
                for e in dem
            ]
        )
        for p in params
    }
    agg = _aggregate_symbols()
    a_args = [agg["N"], agg["D"], agg["D_max"], agg["D_avg"], agg["Z"]]
    D, Dmax = float(d_now.sum()), float(d_now.max())
    net_mva = system.mva(max(n_list), think_time=think_time) if "mva" in methods else None
    rows = []
    bound_fns = {}
    for method in [m for m in methods if m != "mva"]:
        for bound, e in bound_expressions(method).items():
            if not bound.startswith("response_time"):
                continue
            fns = [sp.lambdify(a_args, e, "math")]
            fns += [
                sp.lambdify(a_args, sp.diff(e, agg[x]), "math") for x in ("D", "D_max", "D_avg")
            ]
            bound_fns[(method, bound)] = fns
    for n in n_list:
        r_mva = float(net_mva.response_time[n - 1]) if net_mva is not None else float("nan")
        at = (n, D, Dmax, D / K, think_time)
        for p in params:
            name = SYMBOLS[p]
            v = vals[p]
            prob = PARAMETERS[name][1] == "probability"
            x, sign = (1.0 - v, -1.0) if prob else (v, 1.0)
            row = {
                "parameter": p, "name": name, "value": v, "n": n, "response_time": r_mva,
                "elasticity_of": "1 - value" if prob else "value",
            }  # fmt: skip
            for (method, bound), (f, f_d, f_max, f_avg) in bound_fns.items():
                r = f(*at)
                g = f_d(*at) * dd[p].sum() + f_max(*at) * dd[p][b] + f_avg(*at) * dd[p].sum() / K
                tag = f"{method}_{bound.replace('response_time_', 'r_')}"
                row[f"d_{tag}"] = float(g)
                row[f"elasticity_{tag}"] = float(sign * g * x / r) if r else float("nan")
            if net_mva is not None:
                g = _mva_derivative(system, name, v, n, think_time, rel_step)
                row["d_mva_r"] = g
                row["elasticity_mva_r"] = sign * g * x / r_mva if r_mva else float("nan")
            rows.append(row)
    return pd.DataFrame(rows)


def _mva_derivative(system, name, v, n, think_time, rel_step) -> float:
    kind = PARAMETERS[name][1]
    h = rel_step * v if v != 0 else rel_step
    if kind == "probability":
        h = min(h, 0.5 * rel_step) if v != 0 else rel_step

    def r_at(x):
        return float(system.replace(**{name: x}).mva(n, think_time=think_time).response_time[-1])

    lo_ok = v - h >= 0 and (kind != "probability" or v - h <= 1)
    hi_ok = kind != "probability" or v + h <= 1
    if lo_ok and hi_ok:
        return (r_at(v + h) - r_at(v - h)) / (2 * h)
    if hi_ok:
        return (r_at(v + h) - r_at(v)) / h
    return (r_at(v) - r_at(v - h)) / h
