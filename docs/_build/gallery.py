"""The figures of the documentation gallery, drawn at build from the library.

Each entry is one function that returns a matplotlib Figure; ``docs/gallery.md`` shows the
figures in a grid (``<!-- gallery -->``) and each function's source under its heading, via
the ``--8<-- [start:NAME]`` markers below. The functions use only the public API and the
measured data committed in ``data/traces/`` and ``data/validation/``.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TRACES = ROOT / "data" / "traces"
VALIDATION = ROOT / "data" / "validation"


@dataclass(frozen=True)
class Entry:
    name: str
    title: str
    draw: Callable

    @property
    def anchor(self) -> str:
        return self.name.replace("_", "-")


def draw(entry: Entry, dpi: int = 72) -> bytes:
    """The entry's figure as PNG bytes (closed after drawing)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = entry.draw()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


# --8<-- [start:bounds_band]
def bounds_band():
    """Bounds band, exact MVA curve and measured points of one emulated device."""
    import qnmodel as qn
    from qnmodel.calibration import load_trace
    from qnmodel.reporting import plotting

    trace = load_trace(TRACES / "emu-closed-loop.json")  # qnbench emu, 1..16 clients
    pts = trace.points
    # the device qnbench emulated: 5 ms positioning + 64 KiB at 50 MB/s; 20 ms think time
    net = qn.Network([qn.Station("device", 0.005 + 65536 / 50e6)], think_time="20 ms")
    measured = {
        "n": pts["jobs"],
        "throughput": pts["throughput_ops_s"],
        "response_time": pts["latency_mean_s"],
    }
    axes = plotting.bounds_vs_measured(net, 16, measured)
    return axes[0].figure


# --8<-- [end:bounds_band]


# --8<-- [start:utilization_bottleneck]
def utilization_bottleneck():
    """Utilisation of every station against n, with the bottleneck and the knee N*."""
    import qnmodel as qn
    from qnmodel.reporting import plotting

    net = qn.Network.from_demands(
        ["0.4 ms", "0.524 ms", "5.243 ms", "0.7 ms", "4.88 ms"],
        think_time="50 ms",
        names=["client_cpu", "client_nic", "network", "server_cpu", "disk"],
    )
    ax = plotting.utilization(qn.mva(net, 40), n_star=qn.bounds(net, 40).n_star)
    return ax.figure


# --8<-- [end:utilization_bottleneck]


# --8<-- [start:whatif_heatmap]
def whatif_heatmap():
    """Response time at 32 clients over link rate and master cache hit rate (seed 002)."""
    import numpy as np

    import qnmodel as qn
    from qnmodel.reporting import plotting

    system = qn.NetworkedRAID.cui2006(op="read")
    grid = qn.sweep(
        system,
        N=[32],
        methods=("mva",),
        link_rate=np.array([12.5e6, 25e6, 62.5e6, 125e6, 312.5e6]),
        master_cache_hit=np.linspace(0.0, 0.8, 5),
    )
    ax = plotting.heatmap(
        grid, "link_rate", "master_cache_hit", "response_time_mva", annotate=True, logx=True,
        xlabel="link rate [B/s]", ylabel="master cache hit rate P_m", label="R(32) [s]",
    )  # fmt: skip
    return ax.figure


# --8<-- [end:whatif_heatmap]


# --8<-- [start:sensitivity_curves]
def sensitivity_curves():
    """Response time against concurrency for four link rates (seed 002, fig. 3's study)."""
    import numpy as np

    import qnmodel as qn
    from qnmodel.reporting import plotting

    system = qn.NetworkedRAID.cui2006(op="read")
    grid = qn.sweep(
        system, N=range(1, 33), methods=("mva",), link_rate=np.array([12.5e6, 62.5e6, 125e6])
    )
    ax = plotting.sensitivity(grid, "n", "response_time_mva", hue="link_rate")
    return ax.figure


# --8<-- [end:sensitivity_curves]


# --8<-- [start:calibration_fit]
def calibration_fit():
    """Device fit t = a + B / r to a qnbench size sweep, with its 95 % confidence band."""
    import matplotlib.pyplot as plt
    import numpy as np

    from qnmodel.calibration import fit_device, load_trace

    pts = load_trace(TRACES / "emu-size-sweep.json").points
    B, t = pts["bs_bytes"].to_numpy(float), pts["service_s_mean"].to_numpy(float)
    fit = fit_device(B, t, seek_floor=None)
    a, r = fit.values["a"], fit.values["r"]
    x = np.geomspace(B.min(), B.max(), 100)
    # delta method: var t(x) = g' C g with g = (dt/da, dt/dr) = (1, -x / r^2)
    g = np.vstack([np.ones_like(x), -x / r**2])
    band = 1.96 * np.sqrt(np.einsum("in,ij,jn->n", g, fit.covariance, g))
    fig, ax = plt.subplots(figsize=(5, 3.4))
    ax.fill_between(x, (a + x / r - band) * 1e3, (a + x / r + band) * 1e3, alpha=0.3,
                    label="95 % confidence band")  # fmt: skip
    ax.plot(x, (a + x / r) * 1e3, label=f"fit: a = {a * 1e3:.3g} ms, r = {r / 1e6:.3g} MB/s")
    ax.plot(B, t * 1e3, "o", label="measured (qnbench emu)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("request size B [bytes]")
    ax.set_ylabel("service time [ms]")
    ax.legend(fontsize=8)
    return fig


# --8<-- [end:calibration_fit]


# --8<-- [start:open_latency]
def open_latency():
    """Open network: response time against offered IOPS, to the saturation of the bottleneck."""
    import matplotlib.pyplot as plt
    import numpy as np

    import qnmodel as qn

    net = qn.Network([
        qn.Station("controller", "20 us"),
        qn.Station("ssd", "250 us", servers=8),   # 8 devices behind one queue: Erlang C
        qn.Station("network", "15 us"),
    ])  # fmt: skip
    top = 1 / max(20e-6, 250e-6 / 8, 15e-6)  # the bottleneck's saturation rate
    rates = np.linspace(0.02, 0.985, 120) * top
    res = qn.open_network(net, rates)
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    ax.plot(rates / 1e3, res.response_time * 1e6, label="mean response time")
    ax.axvline(top / 1e3, color="0.4", ls="--", lw=1, label=f"saturation {top / 1e3:.0f}k IOPS")
    ax.set_xlabel("offered load [thousand IOPS]")
    ax.set_ylabel("response time [us]")
    ax.set_yscale("log")
    ax.set_title(f"open network; bottleneck: {res.bottleneck}")
    ax.legend(fontsize=8)
    return fig


# --8<-- [end:open_latency]


# --8<-- [start:forkjoin_vs_naive]
def forkjoin_vs_naive():
    """A 4-way stripe: fork-join MVA and the simulator against the two naive models."""
    import matplotlib.pyplot as plt
    import numpy as np

    import qnmodel as qn

    d, Z, N = 0.005, 0.02, 12
    members = [qn.Station(f"m{i}", d) for i in range(4)]
    fj = qn.Network([qn.ForkJoin("stripe", members)], think_time=Z)
    approx = qn.fork_join(fj, N)
    series = qn.mva(qn.Network(members, think_time=Z), N)  # members one after another
    single = qn.mva(qn.Network([qn.Station("one", d)], think_time=Z), N)  # one combined device
    ns = [1, 2, 4, 8, 12]
    sims = [qn.simulate(fj, N=n, run_length=60.0, warmup=2.0, replications=5, seed=n)
            for n in ns]  # fmt: skip
    r = np.array([float(np.ravel(s.response_time)[0]) for s in sims])
    h = np.array([float(np.ravel(s.response_time_halfwidth)[0]) for s in sims])
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    ax.plot(approx.n, approx.response_time * 1e3, label="fork-join MVA (approximate)")
    ax.errorbar(ns, r * 1e3, yerr=h * 1e3, fmt="o", ms=4, capsize=3, label="simulation (95 % CI)")
    ax.plot(series.n, series.response_time * 1e3, ":", label="naive: members in series")
    ax.plot(single.n, single.response_time * 1e3, "--", label="naive: one combined station")
    ax.set_xlabel("clients N")
    ax.set_ylabel("response time [ms]")
    ax.set_title("4-way stripe, exponential members of mean 5 ms")
    ax.legend(fontsize=8)
    return fig


# --8<-- [end:forkjoin_vs_naive]


# --8<-- [start:percentile_curves]
def percentile_curves():
    """p50, p95 and p99 of an open tandem of two M/M/1 queues: exact against the simulator."""
    import matplotlib.pyplot as plt
    import numpy as np

    import qnmodel as qn

    net = qn.Network([qn.Station("cpu", "2 ms"), qn.Station("disk", "5 ms")])
    rates = np.linspace(10.0, 175.0, 12)
    qs = (0.5, 0.95, 0.99)
    exact = {q: [qn.fork_join(net, arrival_rate=lam).response_time_quantile(q) for lam in rates]
             for q in qs}  # fmt: skip
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for q, color in zip(qs, ("tab:blue", "tab:orange", "tab:red"), strict=True):
        ax.plot(rates, np.array(exact[q]) * 1e3, color=color, label=f"p{q * 100:g} exact")
    for lam in rates[1::3]:
        s = qn.simulate(net, arrival_rate=lam, run_length=400.0, warmup=5.0, replications=4,
                        seed=int(lam), quantiles=qs)  # fmt: skip
        for q, color in zip(qs, ("tab:blue", "tab:orange", "tab:red"), strict=True):
            ax.plot(lam, s.response_time_quantile(q) * 1e3, "o", color=color, ms=4)
    ax.plot([], [], "ko", ms=4, label="simulation")
    ax.set_xlabel("arrival rate [jobs/s]")
    ax.set_ylabel("response time [ms]")
    ax.set_yscale("log")
    ax.set_title("response-time percentiles, open M/M/1 tandem")
    ax.legend(fontsize=8)
    return fig


# --8<-- [end:percentile_curves]


# --8<-- [start:stripe_measured]
def stripe_measured():
    """qnbench stripe (RAID0, 4 emulated members) measured against the models, N = 1..32."""
    import matplotlib.pyplot as plt

    from qnmodel.lab.validation import stripe

    frame, _doc = stripe.load(VALIDATION / "stripe.json")  # recorded, see the fork-join page
    g = frame[frame["case"] == "raid0-read w=4 emu-exp"].sort_values("n")
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    ax.plot(g.n, g.r_measured * 1e3, "ko", label="measured (qnbench stripe)")
    ax.plot(g.n, g.fj_r * 1e3, label="fork-join MVA (approximate)")
    ax.errorbar(g.n, g.sim_r * 1e3, yerr=g.sim_r_hw * 1e3, fmt="s", ms=3, capsize=3,
                label="simulation (95 % CI)")  # fmt: skip
    ax.plot(g.n, g.series_r * 1e3, ":", label="naive: members in series")
    ax.plot(g.n, g.one_r * 1e3, "--", label="naive: one combined station")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")  # the factor of two at light load stays visible
    ax.set_xlabel("clients N")
    ax.set_ylabel("mean response time [ms]")
    ax.set_title("RAID0 full-stripe reads, 4 exponential members of 4 ms")
    ax.legend(fontsize=8)
    return fig


# --8<-- [end:stripe_measured]


# --8<-- [start:stripe_p99]
def stripe_p99():
    """Measured p99 of RAID0 stripes of 2, 4, 8 members against the fork-join percentile."""
    import matplotlib.pyplot as plt

    from qnmodel.lab.validation import stripe

    frame, _doc = stripe.load(VALIDATION / "stripe.json")
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for w, color in zip((2, 4, 8), ("tab:blue", "tab:orange", "tab:red"), strict=True):
        g = frame[frame["case"] == f"raid0-read w={w} emu-exp"].sort_values("n")
        ax.plot(g.n, g.p99_measured * 1e3, "o", color=color, ms=4, label=f"{w} members measured")
        ax.plot(g.n, g.fj_p99 * 1e3, "-", color=color, label=f"{w} members model")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("clients N")
    ax.set_ylabel("p99 response time [ms]")
    ax.set_title("p99 of full-stripe reads: model vs measured")
    ax.legend(fontsize=8)
    return fig


# --8<-- [end:stripe_p99]


#: The regime grid of issue 28 (docs/explanation/overlap.md): study name in the page's
#: table, recorded summary (six cases each: RAID0 reads over 2, 3 and 4 servers, RAID5 reads
#: over 4, RAID0 writes over 3, RAID5 one-chunk writes over 4; N = 1..32).
REGIME_STUDIES = (
    ("ratio_q", "raid_emu_ratio_q_20261127.json"),
    ("ratio_1", "raid_emu_ratio_1_20261127.json"),
    ("emu_overlap", "raid_emu_ratio_4_20261127.json"),
    ("ratio_1_const", "raid_emu_ratio_1_const_20261127.json"),
)
#: The cases drawn as R(n) below the errors: (study, case label)
REGIME_CURVES = (
    ("ratio_1", "RAID0 read, 3 servers, 3 x chunk"),
    ("ratio_1", "RAID5 write, 4 servers, 1 x chunk"),
    ("emu_overlap", "RAID0 read, 3 servers, 3 x chunk"),
)


# --8<-- [start:overlap_regime]
def overlap_regime():
    """Overlapped structure and exact MVA against the testbed, over the disk/link ratio."""
    import json

    import matplotlib.pyplot as plt

    from qnmodel.lab.validation.raid import regime_rows
    from qnmodel.reporting import plotting

    docs = {name: json.loads((VALIDATION / file).read_text()) for name, file in REGIME_STUDIES}
    rows = [row for doc in docs.values() for row in regime_rows(doc)]
    fig, axes = plt.subplots(2, 3, figsize=(15.0, 8.6), layout="constrained")
    plotting.regime_errors(rows, axes=axes[0], target=10.0)
    for ax, (study, label) in zip(axes[1], REGIME_CURVES, strict=True):
        doc = docs[study]
        plotting.overlap_response([p for p in doc["points"] if p["case"] == label], ax=ax)
        ratio = next(r["ratio"] for r in regime_rows(doc) if r["label"] == label)
        ax.set_title(f"{label}, d/c = {ratio:.2f}", fontsize="medium")
    return fig


# --8<-- [end:overlap_regime]


ENTRIES = (
    Entry("bounds_band", "Bounds band, exact MVA and measured points", bounds_band),
    Entry(
        "utilization_bottleneck",
        "Utilisation per station and the bottleneck",
        utilization_bottleneck,
    ),  # fmt: skip
    Entry("whatif_heatmap", "What-if heatmap: link rate x cache hit rate", whatif_heatmap),
    Entry("sensitivity_curves", "Sensitivity: response time vs concurrency", sensitivity_curves),
    Entry("calibration_fit", "Calibration fit with its confidence band", calibration_fit),
    Entry("open_latency", "Open network: latency vs offered IOPS", open_latency),
    Entry("forkjoin_vs_naive", "Fork-join stripe vs the naive models", forkjoin_vs_naive),
    Entry("percentile_curves", "Response-time percentiles: exact vs simulated", percentile_curves),
    Entry("stripe_measured", "Striping measured: qnbench stripe vs the models", stripe_measured),
    Entry("stripe_p99", "Striping measured: p99 vs the fork-join percentile", stripe_p99),
    Entry("overlap_regime", "Overlapped stages measured: error against d/c", overlap_regime),
)
