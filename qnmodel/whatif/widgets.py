"""Interactive what-if in Jupyter: sliders that redraw the bounds band and the MVA curve.

Needs the optional ``widgets`` extra (``pip install 'qnmodel[widgets]'``,
which brings ipywidgets); ipywidgets and matplotlib are imported only when an
explorer is built.

Each explorer maps slider values to a :class:`~qnmodel.model.network.Network`,
solves it with the same functions as the rest of the library
(:func:`qnmodel.bounds`, :func:`qnmodel.mva`) and redraws with
:func:`qnmodel.reporting.plotting.bounds_vs_measured`; a text line names the
bottleneck and gives X(N) and R(N).

Example (in a notebook)
-----------------------
>>> from qnmodel.whatif.widgets import networked_raid_whatif      # doctest: +SKIP
>>> networked_raid_whatif()                                # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidModelError, InvalidTypeError
from ..model import Network
from ..solvers import bounds as _bounds
from ..solvers import mva as _mva

__all__ = ["Knob", "WhatIfExplorer", "networked_raid_whatif", "NETWORKED_RAID_KNOBS"]


def _ipywidgets():
    try:
        import ipywidgets
    except ImportError as exc:
        raise ImportError(
            "qnmodel.whatif.widgets needs ipywidgets: pip install 'qnmodel[widgets]'"
        ) from exc
    return ipywidgets


@dataclass(frozen=True)
class Knob:
    """One slider: a parameter, its range in display units and the factor to SI.

    Parameters
    ----------
    name : str
        Parameter name passed to the builder (e.g. ``"link_rate"``).
    label : str
        Slider label with its unit, e.g. ``"link [Mbit/s]"``.
    low, high : float
        Range in display units (``low < high``).
    value : float
        Initial value in display units.
    to_si : float
        Multiply the displayed value by this to get SI (1e6 / 8 for Mbit/s to bytes/s).
    log : bool
        Logarithmic slider (for ranges spanning decades).
    step : float, optional
        Step of a linear slider in display units (default: a hundredth of the range).
    """

    name: str
    label: str
    low: float
    high: float
    value: float
    to_si: float = 1.0
    log: bool = False
    step: float | None = None

    def __post_init__(self) -> None:
        if not (self.low < self.high):
            raise InvalidModelError(
                f"Knob {self.name!r}: low must be < high, got {self.low} and {self.high}"
            )
        if not (self.low <= self.value <= self.high):
            raise InvalidModelError(
                f"Knob {self.name!r}: value {self.value} is outside [{self.low}, {self.high}]"
            )
        if self.log and self.low <= 0:
            raise InvalidModelError(f"Knob {self.name!r}: a log slider needs low > 0")

    def widget(self):
        """The ipywidgets slider (its value is in display units)."""
        w = _ipywidgets()
        style = {"description_width": "initial"}
        if self.log:
            import math

            return w.FloatLogSlider(
                value=self.value,
                base=10,
                min=math.log10(self.low),
                max=math.log10(self.high),
                step=0.02,
                description=self.label,
                continuous_update=False,
                style=style,
            )
        return w.FloatSlider(
            value=self.value,
            min=self.low,
            max=self.high,
            step=self.step if self.step is not None else (self.high - self.low) / 100,
            description=self.label,
            continuous_update=False,
            style=style,
        )


class WhatIfExplorer:
    """Sliders -> network -> bounds band + exact MVA, redrawn on every change.

    Parameters
    ----------
    build : callable
        ``build(values) -> Network``, ``values`` a dict of SI values keyed by
        knob name.
    knobs : sequence of Knob
        One slider each.
    N : int
        Initial largest population (a population slider 1..``N_max`` is added).
    N_max : int
        Upper end of the population slider.
    title : str
        Shown above the plot.

    Attributes
    ----------
    sliders : dict of str -> widget
        The knob sliders and ``"N"`` (an IntSlider).
    figure : matplotlib Figure
        Redrawn in place; ``axes`` are its throughput and response-time Axes.
    status : ipywidgets.HTML
        ``"bottleneck: <name> | X(N) = ... jobs/s | R(N) = ... "``.
    network : Network
        The network drawn last; ``last_mva`` its exact MVA result.
    widget : ipywidgets.VBox
        Display this (it is also what ``_ipython_display_`` shows).
    """

    def __init__(
        self,
        build: Callable[[dict[str, float]], Network],
        knobs: list[Knob] | tuple[Knob, ...],
        N: int = 30,
        N_max: int = 200,
        title: str = "what-if",
    ) -> None:
        if not callable(build):
            raise InvalidTypeError(f"build must be callable, got {type(build).__name__}")
        knobs = tuple(knobs)
        for k in knobs:
            if not isinstance(k, Knob):
                raise InvalidTypeError(f"knobs must hold Knob objects, got {type(k).__name__}")
        if len({k.name for k in knobs}) != len(knobs):
            raise InvalidModelError("knob names must be unique")
        if not (isinstance(N_max, int) and isinstance(N, int) and 1 <= N <= N_max):
            raise InvalidModelError(f"need integers 1 <= N <= N_max, got N={N!r}, N_max={N_max!r}")
        w = _ipywidgets()
        from matplotlib.figure import Figure

        self.build = build
        self.knobs = knobs
        self.sliders: dict[str, Any] = {k.name: k.widget() for k in knobs}
        self.sliders["N"] = w.IntSlider(
            value=N,
            min=1,
            max=N_max,
            description="clients N",
            continuous_update=False,
            style={"description_width": "initial"},
        )
        self.figure = Figure(figsize=(10.0, 4.0), layout="constrained")
        self.axes = self.figure.subplots(1, 2)
        self.status = w.HTML()
        self.output = w.Output()
        self.redraws = 0
        for s in self.sliders.values():
            s.observe(self._on_change, names="value")
        self.widget = w.VBox(
            [w.HTML(f"<b>{title}</b>"), *self.sliders.values(), self.status, self.output]
        )
        self.redraw()

    # -- state ----------------------------------------------------------------------------
    def values(self) -> dict[str, float]:
        """Current knob values in SI units, keyed by knob name."""
        return {k.name: float(self.sliders[k.name].value) * k.to_si for k in self.knobs}

    @property
    def N(self) -> int:
        """Current largest population."""
        return int(self.sliders["N"].value)

    def _on_change(self, change: Mapping[str, Any]) -> None:
        self.redraw()

    def redraw(self) -> None:
        """Rebuild the network from the sliders, solve it and redraw the figure."""
        from ..reporting import plotting

        net = self.build(self.values())
        if not isinstance(net, Network):
            raise InvalidTypeError(f"build() must return a Network, got {type(net).__name__}")
        N = self.N
        for ax in self.axes:
            ax.clear()
        plotting.bounds_vs_measured(net, N, axes=self.axes)
        res = _mva(net, N)
        b = _bounds(net, N, method="aba")
        self.network, self.last_mva, self.last_bounds = net, res, b
        r = float(res.response_time[-1])
        r_text = f"{r * 1e3:.4g} ms" if r < 1.0 else f"{r:.4g} s"
        self.status.value = (
            f"bottleneck: <b>{b.bottleneck}</b> | X({N}) = {float(res.throughput[-1]):.4g} jobs/s"
            f" | R({N}) = {r_text} | N* = {b.n_star:.3g}"
        )
        self.redraws += 1
        with self.output:
            from IPython.display import clear_output, display

            clear_output(wait=True)
            # A PNG, not the Figure: a pyplot-free Figure has no image representation
            # unless the notebook ran `%matplotlib inline`, and would show as the text
            # "<Figure size 1000x400 with 2 Axes>".
            display(self.image())

    def image(self):
        """The current figure as an ``IPython.display.Image`` (PNG at 100 dpi)."""
        import io

        from IPython.display import Image

        buf = io.BytesIO()
        self.figure.savefig(buf, format="png", dpi=100)
        return Image(data=buf.getvalue(), format="png")

    def _ipython_display_(self) -> None:  # pragma: no cover - needs a frontend
        from IPython.display import display

        display(self.widget)


#: Sliders of :func:`networked_raid_whatif`: link rate, master cache hit ratio, master CPU
#: time per stripe unit, disk rate (seed 002's what-if parameters, figs. 3-8).
NETWORKED_RAID_KNOBS = (
    Knob("link_rate", "link rate [Mbit/s]", 10.0, 10000.0, 100.0, to_si=1e6 / 8, log=True),
    Knob("master_cache_hit", "master cache hit ratio", 0.0, 0.95, 0.0, step=0.05),
    Knob(
        "master_time_per_unit",
        "master CPU per stripe unit [ms]",
        0.001,
        1.0,
        0.027,
        to_si=1e-3,
        log=True,
    ),  # fmt: skip
    Knob("disk_rate", "disk rate [MB/s]", 1.0, 1000.0, 35.0, to_si=1e6, log=True),
)


def networked_raid_whatif(
    system: Any = None,
    *,
    N: int = 30,
    N_max: int = 200,
    think_time: float | str = 0.0,
    knobs: tuple[Knob, ...] = NETWORKED_RAID_KNOBS,
) -> WhatIfExplorer:
    """What-if sliders over the networked RAID of seed 002 (Cui et al. 2006).

    Parameters
    ----------
    system : NetworkedRAID, optional
        Starting point; default the paper's test bed, writes
        (:meth:`qnmodel.models.storage.NetworkedRAID.cui2006`), in the default
        ``form="corrected"``; pass ``NetworkedRAID.cui2006(form="paper")`` for the
        paper's eqs. 2-10 as printed. The knobs' initial values are taken from it.
    N, N_max : int
        Initial and largest population on the slider.
    think_time : float or str
        Z, seconds or a time string.
    knobs : tuple of Knob
        Which fields get sliders (names are NetworkedRAID fields).

    Returns
    -------
    WhatIfExplorer
        Display it in a notebook; move a slider and the plot follows.
    """
    from ..models.storage import NetworkedRAID

    if system is None:
        system = NetworkedRAID.cui2006(op="write")
    if not isinstance(system, NetworkedRAID):
        raise InvalidTypeError(f"system must be a NetworkedRAID, got {type(system).__name__}")
    start = []
    for k in knobs:
        v = getattr(system, NetworkedRAID.field_name(k.name)) / k.to_si
        v = min(max(v, k.low), k.high)
        start.append(Knob(k.name, k.label, k.low, k.high, v, k.to_si, k.log, k.step))

    def build(values: dict[str, float]) -> Network:
        return system.replace(**values).network(think_time)

    return WhatIfExplorer(
        build,
        start,
        N=N,
        N_max=N_max,
        title=f"networked RAID (Cui et al. 2006, {system.form} form)",
    )
