"""The NFS study's file (``[study] kind = "nfs"``): validated into SI units with defaults."""

from __future__ import annotations

from typing import Any

from ..._validate import as_quantity
from ...errors import InvalidModelError, InvalidTypeError

MiB = 1024**2
_DEFAULTS = {
    "bs": MiB,
    "repeats": 3,
    "runtime": 1.5,
    "warmup": 0.3,
    "hit_size": 16 * MiB,
    "client_hit_size": 8 * MiB,
    "miss_seconds": 3.0,
    "miss_parallel": 4,
}


#: how the study measures the model's b1 (see qnmodel.lab.validation.nfs.three_case_model)
B1_METHODS = ("memcpy", "cachehit")


def _spec_error(field: str, value: Any, rule: str) -> InvalidModelError:
    return InvalidModelError(f"study {field} {rule}, got {value!r}")


def parse_spec(spec: dict) -> dict:
    """Validate the study TOML (parsed) and return it in SI units with defaults filled in.

    Format::

        [study]
        kind = "nfs"
        [nfs]                        # all optional: bs, repeats, runtime, warmup, hit_size,
        repeats = 3                  # client_hit_size, miss_seconds (a miss pass lasts ~this)
        components = false           # true: also the bottom-up CPU components (_nfs_cpu):
                                     # client-cache cost per request/page, READ cost per byte
        b1 = "memcpy"                # the client's memory bandwidth b1 of the model: seed
                                     # 001's (qnbench mem copy, the default) or "cachehit"
                                     # (qnbench cpu cachehit: a page-cache hit's two copies)
        [[nfs.configs]]
        link = "100 Mbit/s"          # both nodes' link rate
        disk = "6 MB/s"              # the server disk's read (and write) throttle
        cases = true                 # false: only the mixed/N-client parts on this one
        [nfs.mixed]                  # optional
        config = 0                   # index into nfs.configs
        server_hit = [0.25, 0.5, 0.75]
        [nfs.writes]                 # optional: timed writes (through COMMIT + close)
        configs = [0, 1]             # on these configurations, vs min(b2, b4 write)
        [nfs.client_mixed]           # optional: client-hit ratios, the rest server hits
        config = 1
        client_hit = [0.25, 0.5, 0.75]
        [nfs.clients]                # optional
        config = 1
        n = [1, 2, 4, 8, 12, 16]
        runtime = "3 s"
        bs = "64 KiB"                # request size of the N-client curve
        namespaces = true            # one namespace (MPI rank) per client, each behind its
                                     # own link; false: N jobs in one client namespace
    """
    if not isinstance(spec, dict):
        raise InvalidTypeError(f"study must be a table (the parsed TOML), got {spec!r}")
    kind = (spec.get("study") or {}).get("kind") if isinstance(spec.get("study"), dict) else None
    if kind != "nfs":
        raise _spec_error("study.kind", kind, 'must be "nfs" for qnmodel.lab.validation.nfs')
    nfs = spec.get("nfs", {})
    if not isinstance(nfs, dict):
        raise InvalidTypeError(f"study nfs must be a table, got {nfs!r}")
    out: dict[str, Any] = {}
    dims = {
        "bs": "size",
        "runtime": "time",
        "warmup": "time",
        "hit_size": "size",
        "client_hit_size": "size",
        "miss_seconds": "time",
    }
    for key, default in _DEFAULTS.items():
        v = nfs.get(key, default)
        if key in ("repeats", "miss_parallel"):
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 20:
                raise _spec_error(f"nfs.{key}", v, "must be an integer 1..20")
            out[key] = v
        else:
            out[key] = as_quantity(v, f"study nfs.{key}", dims[key], positive=True)
    comp = nfs.get("components", False)
    if not isinstance(comp, bool):
        raise _spec_error("nfs.components", comp, "must be true or false")
    out["components"] = comp
    b1 = nfs.get("b1", "memcpy")
    if b1 not in B1_METHODS:
        raise _spec_error("nfs.b1", b1, f"must be one of {', '.join(B1_METHODS)}")
    out["b1"] = b1
    configs = nfs.get("configs")
    if not isinstance(configs, list) or not configs:
        raise _spec_error("nfs.configs", configs, "needs at least one [[nfs.configs]]")
    out["configs"] = []
    for i, c in enumerate(configs):
        if not isinstance(c, dict) or set(c) - {"link", "disk", "label", "cases"}:
            raise _spec_error(f"nfs.configs[{i}]", c, "must be a table of link, disk, label, cases")
        cases = c.get("cases", True)
        if not isinstance(cases, bool):
            raise _spec_error(f"nfs.configs[{i}].cases", cases, "must be true or false")
        link = as_quantity(c.get("link"), f"study nfs.configs[{i}].link", "rate", positive=True)
        disk = as_quantity(c.get("disk"), f"study nfs.configs[{i}].disk", "rate", positive=True)
        label = c.get("label") or f"{link * 8 / 1e6:g} Mbit/s, disk {disk / 1e6:g} MB/s"
        out["configs"].append({"link": link, "disk": disk, "label": str(label), "cases": cases})
    for part, keys in (("mixed", ("config", "server_hit")), ("clients", ("config", "n"))):
        t = nfs.get(part)
        if t is None:
            out[part] = None
            continue
        if not isinstance(t, dict):
            raise _spec_error(f"nfs.{part}", t, "must be a table")
        idx = t.get("config", 0)
        if isinstance(idx, bool) or not isinstance(idx, int) or not 0 <= idx < len(configs):
            raise _spec_error(
                f"nfs.{part}.config", idx, f"must index nfs.configs (0..{len(configs) - 1})"
            )
        vals = t.get(keys[1])
        if not isinstance(vals, list) or not vals:
            raise _spec_error(f"nfs.{part}.{keys[1]}", vals, "must be a non-empty list")
        if part == "mixed" and not all(
            isinstance(h, int | float) and not isinstance(h, bool) and 0 <= h <= 1 for h in vals
        ):
            raise _spec_error("nfs.mixed.server_hit", vals, "must be hit ratios in [0, 1]")
        if part == "clients" and not all(
            isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= 64 for n in vals
        ):
            raise _spec_error("nfs.clients.n", vals, "must be client counts 1..64")
        entry = {"config": idx, keys[1]: sorted(set(vals))}
        if part == "clients":
            entry["bs"] = as_quantity(
                t.get("bs", 64 * 1024), "study nfs.clients.bs", "size", positive=True
            )
            entry["runtime"] = as_quantity(
                t.get("runtime", out["runtime"]), "study nfs.clients.runtime", "time", positive=True
            )
            ns = t.get("namespaces", True)
            if not isinstance(ns, bool):
                raise _spec_error("nfs.clients.namespaces", ns, "must be true or false")
            entry["namespaces"] = ns
        out[part] = entry
    out["writes"] = _writes_spec(nfs.get("writes"), len(configs))
    out["client_mixed"] = _client_mixed_spec(nfs.get("client_mixed"), len(configs))
    if out["mixed"] and not out["configs"][out["mixed"]["config"]]["cases"]:
        i = out["mixed"]["config"]
        raise _spec_error(
            "nfs.mixed.config", i, f"needs the pure cases measured (nfs.configs[{i}].cases = true)"
        )
    return out


def _writes_spec(t, n: int) -> list[int]:
    """``[nfs.writes] configs = [...]``: the configurations whose writes are measured."""
    if t is None:
        return []
    if not isinstance(t, dict) or set(t) - {"configs"}:
        raise _spec_error("nfs.writes", t, "must be a table with configs = [indices]")
    idx = t.get("configs")
    if (
        not isinstance(idx, list)
        or not idx
        or not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < n for i in idx)
    ):
        raise _spec_error("nfs.writes.configs", idx, f"must be indices of nfs.configs (0..{n - 1})")
    return sorted(set(idx))


def _client_mixed_spec(t, n: int) -> dict | None:
    """``[nfs.client_mixed] config = i, client_hit = [...]`` (the rest server hits)."""
    if t is None:
        return None
    if not isinstance(t, dict) or set(t) - {"config", "client_hit"}:
        raise _spec_error("nfs.client_mixed", t, "must be a table of config, client_hit")
    idx = t.get("config", 0)
    if isinstance(idx, bool) or not isinstance(idx, int) or not 0 <= idx < n:
        raise _spec_error("nfs.client_mixed.config", idx, f"must index nfs.configs (0..{n - 1})")
    hits = t.get("client_hit")
    if (
        not isinstance(hits, list)
        or not hits
        or not all(
            isinstance(h, int | float) and not isinstance(h, bool) and 0 < h < 1 for h in hits
        )
    ):
        raise _spec_error("nfs.client_mixed.client_hit", hits, "must be hit ratios in (0, 1)")
    return {"config": idx, "client_hit": sorted(set(hits))}
