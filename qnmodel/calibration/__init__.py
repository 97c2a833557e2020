"""Calibration: from measured traces to fitted parameters with honest uncertainty.

* :func:`load_trace` - qnbench JSON, CSV or fio JSON into tidy DataFrames;
* :func:`steady_state` - where a run became steady (seed 003's rule, MSER-5);
* :func:`fit_device`, :func:`fit_link`, :func:`fit_cpu_per_unit`,
  :func:`fit_cpu_per_packet` - affine cost fits (positioning + transfer,
  overhead + rate, CPU per unit / per packet);
* :func:`fit_usl` - Universal Scalability Law coefficients and peak;
* :func:`fit_nfs` - NFS case bandwidths b1, b2, b4;
* :func:`fit_rate_multipliers`, :func:`rate_multipliers_from_curve` - the demand and rate
  curve r(j) of a device that serves several requests at once (an SSD, an NVMe drive, an
  array), from a queue-depth sweep;
* :func:`service_demand_law`, :func:`utilization_regression` - demands from
  utilisation and throughput;
* :func:`calibrate_and_compare` - calibrate -> predict -> compare
  (:mod:`qnmodel.calibration.pipeline`; the report: :mod:`qnmodel.reporting.report`);
* :func:`fit_model`, :class:`Parameter`, :class:`Parameters`,
  :class:`CalibrationResult` - the fitting engine underneath.
"""

from .demand_estimation import service_demand_law, utilization_regression
from .device import fit_cpu_per_packet, fit_cpu_per_unit, fit_device, fit_link
from .fit import CalibrationResult, fit_model
from .nfs import fit_nfs
from .parameters import Parameter, Parameters
from .pipeline import Comparison, calibrate_and_compare
from .rate_curve import RateCurveFit, fit_rate_multipliers, rate_multipliers_from_curve
from .steady import SteadyStateResult, steady_state
from .traces import Trace, load_trace, trace_from_document
from .usl import fit_usl, usl_throughput

__all__ = [
    "CalibrationResult",
    "Comparison",
    "Parameter",
    "Parameters",
    "RateCurveFit",
    "SteadyStateResult",
    "Trace",
    "calibrate_and_compare",
    "fit_cpu_per_packet",
    "fit_cpu_per_unit",
    "fit_device",
    "fit_link",
    "fit_model",
    "fit_nfs",
    "fit_rate_multipliers",
    "fit_usl",
    "load_trace",
    "rate_multipliers_from_curve",
    "service_demand_law",
    "steady_state",
    "trace_from_document",
    "usl_throughput",
    "utilization_regression",
]
