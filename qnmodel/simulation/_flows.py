"""Fluid links for :mod:`qnmodel.simulation.storage`: flows through two links at once.

A flow moves ``bytes`` from the master to a member (direction ``OUT``: the master link's
egress and the member link's ingress) or back (``IN``: the member's egress and the master's
ingress), at its max-min fair share of the two links ([BG92] sec. 6.5.2). Two engines with
one interface (``add``, ``peek``, ``take``):

* :class:`FairLinks`, any case: progressive filling over every link at each change of the
  flows (O(F + L^2)), each flow's progress kept in bytes (O(F) per change);
* :class:`EqualShares`, when both directions share their rate (processor sharing) and no
  member link is slower than the master's of its direction: then the master link is every
  flow's bottleneck (a member link carries at most the master's F flows at a rate at least
  the master's, so its share is never smaller) and each of the F flows of a direction moves
  at cap / F. Progress is then kept in *virtual time* -- the bytes each flow of the
  direction has received, which grows at cap / F -- and every flow ends at a fixed virtual
  tag (start + bytes): a heap gives the next end in O(log F), as in the simulation of
  processor sharing by virtual time ([Kle76] sec. 4.4). Same results as :class:`FairLinks`
  up to the rounding of sums.

A *mark* is an event ``mark`` bytes before a flow's end (the sequential sender's buffer).

References
----------
.. [BG92] D. Bertsekas, R. Gallager, *Data Networks*, 2nd ed., Prentice-Hall 1992,
   sec. 6.5.2 (max-min fairness, progressive filling).
.. [Kle76] L. Kleinrock, *Queueing Systems, Vol. 2: Computer Applications*, Wiley 1976,
   sec. 4.4 (processor sharing).
"""

from __future__ import annotations

import heapq
import itertools
import math

__all__ = ["OUT", "IN", "Link", "Flows", "FairLinks", "EqualShares", "allocate"]

OUT, IN = 0, 1


class Link:
    """A link of ``cap`` units/s; ``fcfs``: only its earliest flow moves."""

    __slots__ = ("cap", "fcfs", "flows")

    def __init__(self, cap: float, fcfs: bool) -> None:
        self.cap, self.fcfs, self.flows = cap, fcfs, []


class _Flow:
    __slots__ = ("rem", "links", "rate", "then", "mark")

    def __init__(self, rem, links, then, mark) -> None:
        self.rem, self.links, self.rate, self.then, self.mark = rem, links, 0.0, then, mark


def allocate(flows: list) -> None:
    """Max-min fair rates of the flows that may move (progressive filling, [BG92] 6.5.2).

    Repeatedly the link of the smallest fair share (remaining capacity over its unfixed
    flows) fixes its flows at that share, which every other link they cross then loses.
    A flow waiting behind another at an FCFS link gets rate 0.
    """
    cap: dict = {}
    waiting: dict = {}
    for f in flows:
        f.rate = 0.0
        links = f.links
        if any(ln.fcfs and ln.flows[0] is not f for ln in links):
            continue
        for ln in links:
            w = waiting.get(ln)
            if w is None:
                waiting[ln] = [f]
                cap[ln] = ln.cap
            else:
                w.append(f)
    count = {ln: len(w) for ln, w in waiting.items()}
    while count:
        ln = min(count, key=lambda x: cap[x] / count[x])
        share = cap[ln] / count[ln]
        for f in waiting[ln]:
            if f.rate > 0.0:
                continue
            f.rate = share
            for x in f.links:
                cap[x] -= share
                count[x] -= 1
                if count[x] == 0:
                    del count[x]
        count.pop(ln, None)


class Flows:
    """Max-min fair flows, each over any tuple of links (module docstring)."""

    def __init__(self) -> None:
        self.flows: list = []
        self.t = 0.0  # the flows' ``rem`` hold at this time
        self.dirty = False
        self.next = (math.inf, None, False)

    def add_path(self, t: float, nbytes: float, links: tuple, then, mark=None) -> None:
        """Start a flow of ``nbytes`` over ``links`` at time t; a mark ``mark`` bytes
        before its end."""
        self._advance(t)
        f = _Flow(nbytes, links, then, mark or None)
        self.flows.append(f)
        for ln in links:
            ln.flows.append(f)
        self.dirty = True

    def _advance(self, t: float) -> None:
        dt = t - self.t
        if dt > 0.0:
            for f in self.flows:
                f.rem -= f.rate * dt
        self.t = t

    def peek(self):
        """(time, flow, is a mark) of the next flow event; (inf, None, False) if none."""
        if self.dirty:
            allocate(self.flows)
            self.dirty = False
            t = self.t
            tf, nxt, marked = math.inf, None, False
            for f in self.flows:
                r = f.rate
                if r > 0.0:
                    if f.mark:
                        tt = t + (f.rem - f.mark) / r
                        if tt < tf:
                            tf, nxt, marked = tt, f, True
                    tt = t + f.rem / r
                    if tt < tf:
                        tf, nxt, marked = tt, f, False
            self.next = (tf, nxt, marked)
        return self.next

    def take(self, t: float, f, marked: bool):
        """Process the event :meth:`peek` gave at time t: the flow's ``then``."""
        self._advance(t)
        self.dirty = True
        if marked:
            f.mark = None
            return f.then
        self.flows.remove(f)
        for ln in f.links:
            ln.flows.remove(f)
        return f.then


class FairLinks(Flows):
    """Max-min fair flows between the master and the members: the general engine."""

    def __init__(self, spec) -> None:
        super().__init__()
        fo, fi = spec.discipline_out == "fcfs", spec.discipline_in == "fcfs"
        m_out, m_in = Link(spec.rate_out, fo), Link(spec.rate_in, fi)
        self.paths = (
            [(m_out, Link(spec.server_in, fo)) for _ in range(spec.K)],
            [(Link(spec.server_out, fi), m_in) for _ in range(spec.K)],
        )

    def add(self, t: float, nbytes: float, direction: int, member: int, then, mark) -> None:
        """Start a flow of ``nbytes`` at time t; ``mark`` bytes before its end, a mark."""
        self.add_path(t, nbytes, self.paths[direction][member], then, mark)


class EqualShares:
    """Flows that share each master link direction equally (module docstring): fast."""

    def __init__(self, spec) -> None:
        self.cap = (spec.rate_out, spec.rate_in)
        self.n = [0, 0]  # flows in progress per direction
        self.v = [0.0, 0.0]  # virtual time: bytes each flow of the direction has received
        self.t = [0.0, 0.0]  # when ``v`` was last brought up to date
        self.heaps: tuple = ([], [])  # (virtual tag, seq, is a mark, then)
        self.seq = itertools.count()

    def add(self, t: float, nbytes: float, direction: int, member: int, then, mark) -> None:
        """Start a flow of ``nbytes`` at time t; ``mark`` bytes before its end, a mark."""
        self._advance(direction, t)
        end = self.v[direction] + nbytes
        heap = self.heaps[direction]
        heapq.heappush(heap, (end, next(self.seq), False, then))
        if mark:
            heapq.heappush(heap, (end - mark, next(self.seq), True, then))
        self.n[direction] += 1

    def _advance(self, i: int, t: float) -> None:
        if self.n[i]:
            self.v[i] += (t - self.t[i]) * self.cap[i] / self.n[i]
        self.t[i] = t

    def peek(self):
        """(time, direction, is a mark) of the next flow event; (inf, None, False) if none."""
        best = (math.inf, None, False)
        for i in (0, 1):
            heap = self.heaps[i]
            if heap:
                tt = self.t[i] + (heap[0][0] - self.v[i]) * self.n[i] / self.cap[i]
                if tt < best[0]:
                    best = (tt, i, heap[0][2])
        return best

    def take(self, t: float, i: int, marked: bool):
        """Process the event :meth:`peek` gave at time t: the flow's ``then``."""
        self._advance(i, t)
        _tag, _s, _m, then = heapq.heappop(self.heaps[i])
        if not marked:
            self.n[i] -= 1
        return then
