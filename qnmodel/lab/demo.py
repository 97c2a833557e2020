"""The demos: what ``qnmodel demo`` and ``qnmodel calibrate --demo`` do.

* :func:`run_demo` - measure this machine with qnbench (a bottom-up device
  sweep and a separate end-to-end closed loop), calibrate, predict the bounds
  and the exact MVA curve, compare, and write ``report.md`` / ``report.png``;
* :func:`run_offline_demo` - solve a model file (the bundled demo storage
  system by default) and write its table, plots and report, no measurement;
* :func:`run_main_demo` - both, plus the networked-RAID test bed of Cui et al.
  (2006): the whole ``qnmodel demo``.

Model assumptions to keep in mind
---------------------------------
Exact MVA is exact for product-form networks: FCFS stations with
exponentially distributed service, any distribution at delay stations (think
time). The measured end-to-end run therefore uses emulated devices with
exponential service of mean a + B/r (``dev_dist="exp"``) and constant think
time; with deterministic service (``dev_dist="const"``) queues are shorter
than MVA predicts and the measured throughput sits above the MVA curve
between the knee and saturation (still inside the asymptotic bounds).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..calibration.pipeline import DEMO_DEVICE, DEMO_SIZES, calibrate_and_compare
from ..io import modelfile
from ..reporting.report import write_model_report, write_report
from ..units import format_quantity

__all__ = [
    "DEMO_DEVICE",
    "DEMO_SIZES",
    "run_demo",
    "run_main_demo",
    "run_offline_demo",
]


def run_offline_demo(
    out_dir: str | os.PathLike,
    model: str | os.PathLike | None = None,
    *,
    model_text: str | None = None,
) -> dict:
    """Solve a storage model and write its table and plots (no measurement).

    Parameters
    ----------
    out_dir : path
        Directory to write into (created if needed).
    model : path, optional
        A TOML model file; the bundled demo storage system when omitted
        (:data:`qnmodel.io.modelfile.DEMO_MODEL_TOML`, also shipped as
        ``examples/demo_storage.toml``).
    model_text : str, optional
        The TOML text of a model, instead of a file (e.g.
        :data:`qnmodel.io.modelfile.PAPER_MODEL_TOML`).

    Returns
    -------
    dict
        Paths written (as str): ``model``, ``csv``, ``markdown``, ``html`` (the report as
        one self-contained page), ``json``, ``plot``, ``utilization``.
    """
    if model_text is not None:
        spec = modelfile.loads(model_text, source="<model text>", default_name="model")
        text = model_text
    elif model is None:
        spec = modelfile.loads(
            modelfile.DEMO_MODEL_TOML, source="demo_storage.toml", default_name="demo-storage"
        )
        text = modelfile.DEMO_MODEL_TOML
    else:
        spec = modelfile.load(model)
        text = Path(model).read_text(encoding="utf-8")
    paths = write_model_report(spec, out_dir, model_text=text)
    order = ("model", "csv", "markdown", "html", "json", "plot", "utilization")
    return {k: str(paths[k]) for k in order}


def _say(progress: bool, msg: str) -> None:
    if progress:
        print(f"[calibrate] {msg}", file=sys.stderr, flush=True)


def _known_answer(fit, e2e, seconds: float) -> str:
    a, r = fit.values["a"], fit.values["r"]
    return (
        "## Known answer\n\n"
        f"The emulated device was configured with a = "
        f"{format_quantity(DEMO_DEVICE['dev_latency'], 'time')} and r = "
        f"{format_quantity(DEMO_DEVICE['dev_rate'], 'rate')}; the fit found a = "
        f"{format_quantity(a, 'time')} ({100 * (a / DEMO_DEVICE['dev_latency'] - 1):+.1f}%) "
        f"and r = {format_quantity(r, 'rate')} "
        f"({100 * (r / DEMO_DEVICE['dev_rate'] - 1):+.1f}%). The measured "
        "latency includes the client's timer wake-up overhead (tens of microseconds), "
        "which the fit attributes to a.\n\n"
        f"Measured on {e2e.host.get('hostname', '?')} ({e2e.host.get('cpu_model', '?')}, "
        f"{e2e.host.get('cpus', '?')} CPUs); total time {seconds:.1f} s.\n"
    )


def _constant_service_section(const_cmp) -> str:
    t = const_cmp.table
    worst = t["throughput_error_pct"].abs()
    return (
        "## Sensitivity to the service-time distribution\n\n"
        "The same closed loop with *constant* service times (not product form): MAPE of "
        f"MVA vs measured X(N) = {const_cmp.mape_throughput:.2f}%; "
        f"{const_cmp.coverage:.0%} of the points inside the BJB band and "
        f"{const_cmp.coverage_aba:.0%} inside the ABA band. Deterministic service queues "
        "less than exponential service, so the measured X(N) lies above the MVA curve "
        "between the knee and saturation (largest deviation "
        f"{worst.max():.1f}% at N = {int(t.loc[worst.idxmax(), 'n'])}). The asymptotic "
        "bounds hold for any service-time distribution; the balanced job bounds, like "
        "MVA, assume product form, and points above their upper bound show it. "
        "Trace: `closed_loop_const.json`.\n"
    )


def run_demo(
    out_dir: str | os.PathLike,
    *,
    progress: bool = True,
    plot: Callable[..., Any] | None = None,
    runtime: float = 1.0,
    jobs: tuple[int, ...] = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32),
    executable_path: str | os.PathLike | None = None,
    constant_service_check: bool = True,
) -> Path:
    """Measure, calibrate, solve and report on this machine (about 30-40 s).

    1. Bottom-up: qnbench's emulated device (a = 4 ms, r = 80 MB/s, constant
       service time) at one client, request sizes 4 KiB .. 1 MiB: fit a, r.
    2. End-to-end: the same device parameters, K = 4 devices chosen at random,
       exponential service (the product-form case), 64 KiB requests, constant
       think time 10 ms, closed loop over ``jobs`` clients, ``runtime`` s each.
    3. Build the network from the fitted a, r only; BJB bounds and exact MVA;
       compare; cross-check the demands with the service-demand law on the
       devices' measured utilisations; write ``report.md`` and ``report.png``
       (plus the traces as JSON) into ``out_dir``.
    4. Optionally (``constant_service_check``) repeat step 2 with constant
       service times and report the model error there too.

    Parameters
    ----------
    out_dir : path
        Created if needed.
    progress : bool
        Progress lines on stderr.
    plot : callable, optional
        ``plot(net, N, measured) -> axes``; :func:`qnmodel.reporting.plotting.bounds_vs_measured`
        by default.
    runtime : float
        Seconds per closed-loop point.
    jobs : tuple of int
        Closed-loop populations.
    executable_path : path, optional
        qnbench binary (default: :func:`qnmodel.bench.executable`).
    constant_service_check : bool
        Also run the closed loop with constant service times and report how
        far MVA (which assumes exponential service) is from it.

    Returns
    -------
    pathlib.Path
        The Markdown report.
    """
    from .. import bench
    from .._files import check_outputs, output_dir

    out = output_dir(out_dir)
    names = ("device_sweep.json", "closed_loop.json", "closed_loop_const.json", "report.md",
             "report.png", "report.html")  # fmt: skip
    check_outputs(out / n for n in names)  # before the measurement, which a refusal would lose
    t0 = time.monotonic()
    kw: dict[str, Any] = {}
    if executable_path is not None:
        kw["executable_path"] = executable_path
    sizes = DEMO_SIZES
    _say(progress, f"1/3 bottom-up device sweep: {len(sizes)} request sizes, one client ...")
    dev = bench.run(
        "emu",
        jobs=[1],
        bs=sizes,
        dev_dist="const",
        devices=1,
        runtime=0.3,
        warmup=0.05,
        progress=False,
        **DEMO_DEVICE,
        **kw,
    )
    dev.save(out / "device_sweep.json")
    _say(progress, f"    done in {time.monotonic() - t0:.1f} s")
    _say(
        progress,
        f"2/3 end-to-end closed loop: N = {list(jobs)}, {runtime:g} s per point "
        f"(about {len(jobs) * (runtime + 0.2):.0f} s) ...",
    )

    def closed_loop(dist: str):
        # The end-to-end run: K = 4 devices chosen at random, 64 KiB requests, Z = 10 ms.
        return bench.run(
            "emu",
            jobs=list(jobs),
            bs=65536,
            devices=4,
            dev_select="random",
            dev_dist=dist,
            think=0.010,
            think_dist="const",
            runtime=runtime,
            warmup=0.1,
            progress=progress,
            **DEMO_DEVICE,
            **kw,
        )

    e2e = closed_loop("exp")
    e2e.save(out / "closed_loop.json")
    const_cmp = None
    if constant_service_check:
        _say(progress, "    the same with constant (deterministic) service times ...")
        e2e_const = closed_loop("const")
        e2e_const.save(out / "closed_loop_const.json")
        const_cmp = calibrate_and_compare(dev, e2e_const)
    _say(progress, f"3/3 calibrating, solving, writing the report ({time.monotonic() - t0:.1f} s)")
    cmp = calibrate_and_compare(dev, e2e)
    sections = [_known_answer(cmp.calibration["device"], e2e, time.monotonic() - t0)]
    if const_cmp is not None:
        sections.append(_constant_service_section(const_cmp))
    path = write_report(
        cmp,
        out,
        plot=plot,
        title="qnmodel demo: calibrate -> predict -> compare",
        sections=tuple(sections),
    )
    _say(
        progress,
        f"MAPE(X) = {cmp.mape_throughput:.2f}%, inside BJB = {cmp.coverage:.0%}; report: {path}",
    )
    return path


def run_main_demo(
    out_dir: str | os.PathLike,
    *,
    progress: bool = True,
    say: Callable[[str], None] | None = None,
) -> dict:
    """What ``qnmodel demo`` does without ``--offline``: the main job.

    1. measure this machine with qnbench, calibrate, predict bounds and the MVA
       curve, and compare with the measured curve (:func:`run_demo`);
    2. solve the networked-RAID test bed of Cui et al. (2006) and the bundled
       demo storage model, writing their tables and bounds-and-MVA plots.

    ``say`` receives a line per step. Returns the paths written (as str):
    ``report``, ``report_html`` (the same report as one self-contained page, figures
    embedded), ``paper_<kind>`` and ``model_<kind>``.
    """
    say = say or (lambda _msg: None)
    paths = {}
    say("[1/3] measure -> calibrate -> predict -> compare (qnbench on this machine)")
    report = run_demo(out_dir, progress=progress)
    paths["report"] = str(report)
    paths["report_html"] = str(report.with_suffix(".html"))  # one self-contained page
    say("[2/3] solving the networked-RAID test bed of Cui et al. (2006)")
    paper = run_offline_demo(out_dir, model_text=modelfile.PAPER_MODEL_TOML)
    paths.update({f"paper_{k}": v for k, v in paper.items()})
    say("[3/3] solving the bundled demo storage model")
    demo = run_offline_demo(out_dir)
    paths.update({f"model_{k}": v for k, v in demo.items()})
    return paths
