"""Plots of bounds, mean values, measurements and what-if studies.

Every function draws on the Axes it is given (or on new ones), returns the
Axes and never calls ``plt.show()``: the caller decides whether to show,
save or embed. matplotlib is imported only when a function is called.

Conventions
-----------
* Throughput is drawn in jobs/s; times in ms, or s when they reach seconds.
* A bounds band is a shaded region between the lower and the upper bound;
  ABA (asymptotic) is lighter and wider, BJB (balanced job) darker and
  narrower, and the exact MVA curve runs inside both.
* An axis turns logarithmic by itself when its data are positive and span at
  least two decades (``log="auto"``); pass ``True`` or ``False`` to decide.
* Measured points are never hidden: the axes include every point and both ends
  of its error bar, a value a logarithmic axis cannot show is marked at its
  edge, and the legend goes where it covers no point (beside the axes when
  every corner would).

Example
-------
>>> import matplotlib
>>> matplotlib.use("Agg")
>>> import qnmodel as qn
>>> from qnmodel import plotting
>>> net = qn.Network.from_demands(["5 ms", "8 ms", "2 ms"], think_time="100 ms")
>>> axes = plotting.bounds_vs_measured(net, 30)
>>> [ax.get_ylabel() for ax in axes]
['throughput X(n) [jobs/s]', 'response time R(n) [ms]']
"""

from __future__ import annotations

from ._style import BAND_STYLE, time_scale
from .check import check_figures
from .curves import bounds_band, bounds_vs_measured, utilization
from .grids import bottleneck_map, heatmap, sensitivity
from .validation import overlap_response, regime_errors, validation_curves

__all__ = [
    "bounds_band",
    "bounds_vs_measured",
    "utilization",
    "sensitivity",
    "heatmap",
    "bottleneck_map",
    "check_figures",
    "time_scale",
    "BAND_STYLE",
    "validation_curves",
    "regime_errors",
    "overlap_response",
]
