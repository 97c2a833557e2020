"""The description of a system: what is being modelled (floor L1).

Stations (:class:`Station`), fork-join elements (:class:`ForkJoin`), classes
(:class:`ClosedClass`, :class:`OpenClass`) and the networks that hold them; service-time laws
(:mod:`qnmodel.model.laws`). Every solver and the simulator read a network through its one
compiled array form.
"""
