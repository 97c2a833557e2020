"""Result types of the solvers and the simulator (floor L1): frozen dataclasses with read-only
arrays, glossary docstrings and ``to_frame()``."""
