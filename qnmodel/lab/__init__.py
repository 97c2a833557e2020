"""The laboratory: what measures real machines (root, namespaces, servers).

* :mod:`qnmodel.lab.testbed` - network namespaces, shaped links, NFS and block servers;
* :mod:`qnmodel.lab.check` - bottom-up hardware checks across nodes;
* :mod:`qnmodel.lab.experiments` - planned measurements and parameter searches;
* :mod:`qnmodel.lab.validation` - validation studies (calibrate, predict, measure, compare);
* :mod:`qnmodel.lab.demo` - the main job of ``qnmodel demo``.
"""
