"""Reporting: the one Markdown report writer (:mod:`qnmodel.reporting.report`), its HTML twin
(:mod:`qnmodel.reporting.html`) and the figures (:mod:`qnmodel.reporting.plotting`)."""
