"""The simpy backend: virtual time, the event calendar, transport and the ledger.

Virtual time with SimPy's semantics: every tuple entering the system, every delivery and
every timer is a timeout that files an event in the inbox of its node. The calendar began
as a ``simpy.Environment``; it is now a heap that keeps that environment's order and float
arithmetic exactly (``tests/test_simpy_backend.py`` holds the two equal) at a tenth of the
cost of a SimPy timeout and its callback. The driver (``emulator.driver``) asks for the inboxes of one step
with :meth:`SimpyBackend.collect`, lets a runtime run the node programs, and hands the
messages they sent back to :meth:`SimpyBackend.inject`.

The backend keeps the calendar only; what happens to events at a node that is down is the
driver's rule (``emulator.driver``). Deliveries to a dead node are lost in transport.
With ``[energy]`` (:mod:`emulator.energy`) the backend also keeps the batteries: it looks
at them at the start of every step and kills the nodes whose battery is empty.

Example
-------
>>> import networkx as nx
>>> class Static:
...     epochs = [0.0]
...     def snapshot(self, t):
...         g = nx.Graph(); g.add_edge(0, 1, cost=1.0, delay=0.5); return g
>>> b = SimpyBackend(Static(), seed=1, bytes_per_unit=32, header_bytes=24)
>>> b.schedule(0.2, 0, "timer", "tick")
>>> b.window(0.0, b.next_time(), 0.5)
(0.0, 0.5)
>>> sorted(b.collect(0.5))
[0]
>>> from contract.program import Outgoing
>>> b.inject([Outgoing(0, "data", 0, 1, 0.25, 2.0, "x")])
[0]
>>> b.window(0.5, b.next_time(), 0.5), sorted(b.collect(1.0))   # arrives at 0.75
((0.5, 1.0), [1])
>>> b.next_time()
inf
"""
from __future__ import annotations

import heapq
import logging
import math
from collections import defaultdict

from contract.events import DELIVER, LOST, TUPLE, Event, window_of
from contract.messages import Message, wire_bytes
from contract.plan import Plan
from emulator.energy import Energy, EnergyBook
from emulator.filed_events import FiledEvents
from emulator.ledger import Ledger
from emulator.measured import MeasuredTraffic
from emulator.network import Network
from emulator.routing.host import open_transport

log = logging.getLogger(__name__)

#: An :class:`Event` made from its fields in one tuple, as ``Event(...)`` makes it but
#: without the named tuple's Python ``__new__`` (0.39 -> 0.23 us; a run makes one per
#: tuple and per delivery).
_new_event = tuple.__new__
#: The same for a :class:`Message` (one per message injected).
_new_message = tuple.__new__

class SimpyBackend:
    """Network, transport, ledger and the calendar of node events, in virtual time."""

    name = "simpy"
    #: Windows on a grid of virtual time: the driver may run nodes ahead or defer them
    #: (``emulator.lookahead``).
    runs_ahead = True
    #: Whether nodes may die at run time (batteries): see ``energy`` below.
    mortal = False

    def __init__(self, dynamics, seed: int, bytes_per_unit: int, header_bytes: int,
                 medium: str = "links", interference_radius: float | None = None, *,
                 reorder: bool = False, queue_max_wait: float | None = None,
                 routing: str = "oracle", routing_params: dict | None = None,
                 horizon: float | None = None, energy: Energy | None = None, mains=(),
                 sample_interval: float = 1.0, measured_from: float = 0.0, mac=None,
                 radio=None, seconds_per_unit: float = 1.0, capture=None):
        # The clock and the calendar of node events: SimPy's own semantics (see _run)
        # on a heap of (key, filing order, node, event), which costs a tenth of a SimPy
        # timeout and its callback per event.
        self._now = 0.0
        self._calendar: list = []
        self.network = Network(dynamics)
        self.ledger = Ledger()
        self.transport = open_transport(self.network, self.ledger, seed, medium,
                                        interference_radius, self._positions,
                                        reorder=reorder, max_wait=queue_max_wait,
                                        routing=routing, routing_params=routing_params,
                                        horizon=horizon,
                                        bytes_per_unit=bytes_per_unit, mac=mac,
                                        radio=radio, seconds_per_unit=seconds_per_unit,
                                        capture=capture)
        #: The run's :class:`~emulator.pcap.capture.Capture`, None without one.
        self.capture = capture
        self._window_start, self._first_collect = 0.0, True
        self.horizon = horizon
        #: The batteries (None without ``[energy]``). Nodes that may die at run time
        #: make the driver run every node in step order (no run-ahead) and judge a
        #: delivery by the receiver's state when it arrives.
        self.energy = None
        if energy is not None:
            self.energy = EnergyBook(energy, self.network.build_view(0).nodes, mains)
            self.transport.energy = self.energy
            self.runs_ahead, self.mortal = False, True
        self._sample_interval = sample_interval
        self.bytes_per_unit = bytes_per_unit
        self.header_bytes = header_bytes
        self._inbox: dict[int, list] = defaultdict(list)
        self._late: list = []          # events due before now (iterated steps)
        self._order = 0
        self._pending: list[float] = []   # times of filed-but-not-fired timeouts (a heap)
        # Events filed all at once (schedule_all: the run's own tuples), sorted by the
        # calendar's key beside the heap, with their times beside the pending heap.
        self._filed = FiledEvents()
        self._next_msg_id = 0
        self._wire: dict[float, int] = {}   # wire bytes by size_units (inject)
        #: How many loss notices (``LOST`` events) the last :meth:`collect` returned: the
        #: driver looks for them only then (inf: not counted).
        self.notices = 0
        self._notices = 0            # those taken since the last collect returned
        self._notice_keys: list = []   # the calendar keys of the notices filed (a heap)
        #: The traffic after the warm-up (``[run] warmup``), counted only when there is
        #: one: a run without keeps its books and its ``info`` as they were.
        self.measured = MeasuredTraffic(measured_from) if measured_from > 0 else None

    @classmethod
    def from_plan(cls, plan: Plan) -> "SimpyBackend":
        """The backend for a run's plan (``[network]``: medium, interference radius,
        reorder, queue_max_wait, routing; ``[routing]``: the protocol's parameters). A
        protocol's periodic timers run until the run's end
        (:meth:`~contract.plan.Plan.run_end`); with ``[run] warmup`` the traffic after
        it is counted apart (:attr:`measured`)."""
        from emulator.mac.config import mac_of_spec
        from emulator.routing.params import resolve
        from topologies.radio import radio_from_table

        network = plan.spec.get("network", {})
        routing = network.get("routing", "oracle")
        params = None if routing == "oracle" else resolve(routing, plan.spec.get("routing"))
        if routing == "rpl" and params["root"] is None:   # the DODAG collects to the query
            params["root"] = plan.query.node
        energy = Energy.from_table(plan.spec.get("energy"))
        mains = []
        if energy is not None:
            mains += [plan.query.node] if energy.query_node_mains else []
            mains += [s.node for s in plan.streams] if energy.sources_mains else []
        return cls(plan.dynamics, plan.seed, plan.bytes_per_unit, plan.header_bytes,
                   network.get("medium", "links"), network.get("interference_radius"),
                   reorder=network.get("reorder", False),
                   queue_max_wait=network.get("queue_max_wait"), routing=routing,
                   routing_params=params,
                   horizon=plan.run_end(plan.drain),
                   energy=energy, mains=mains, sample_interval=plan.memory_interval,
                   measured_from=plan.spec.get("run", {}).get("warmup", 0.0),
                   mac=mac_of_spec(plan.spec),
                   radio=radio_from_table(plan.spec.get("radio")),
                   seconds_per_unit=plan.spec.get("routing", {}).get("seconds_per_unit",
                                                                     1.0),
                   capture=_capture(plan, routing, params))

    def _positions(self, t: float) -> dict:
        """Node positions of the epoch in force at ``t`` (for an interference radius)."""
        epoch = self.network.epochs[self.network.epoch_index(t)]
        return {u: tuple(d["pos"]) for u, d in
                self.network.dynamics.snapshot(epoch).nodes(data=True)}

    # -- the calendar -------------------------------------------------------------------
    def schedule(self, time: float, node: int, kind: str, payload) -> None:
        """File an event for ``node`` at virtual ``time``."""
        self._order += 1
        event = Event(float(time), self._order, kind, payload)
        if time < self._now:
            self._late.append((node, event))
            self._notices += kind == LOST
        else:
            # The key SimPy's env.timeout(time - now) would get (now + delay, which can
            # differ from ``time`` in the last bit), and the filing order as its event id.
            now = self._now
            key = now + (time - now)
            heapq.heappush(self._calendar, (key, self._order, node, event))
            heapq.heappush(self._pending, float(time))
            if kind == LOST:
                heapq.heappush(self._notice_keys, key)

    @property
    def now(self) -> float:
        """The calendar's clock: the stop of the last :meth:`collect` (an event filed
        at a time before it has been handed out)."""
        return self._now

    def _schedule_deliveries(self, arrivals) -> None:
        """File a delivery at each ``(arrival time, message)`` at its receiver, as
        :meth:`schedule` would one by one (inlined: a run files one per message)."""
        now, order, calendar, pending = self._now, self._order, self._calendar, self._pending
        push = heapq.heappush
        for time, msg in arrivals:
            order += 1
            event = _new_event(Event, (float(time), order, DELIVER, msg))
            if time < now:
                self._late.append((msg.dst, event))
            else:
                push(calendar, (now + (time - now), order, msg.dst, event))
                push(pending, float(time))
        self._order = order

    def schedule_all(self, events) -> None:
        """File many ``(time, node, kind, payload)`` events, as :meth:`schedule` would
        one by one in the given order.

        They are kept sorted beside the calendar heap and merged with it by the same
        key: 10^5 tuples filed up front would otherwise make every pop and push of the
        heap pay for a heap of 10^5 entries."""
        now, entries, times = self._now, [], []
        for time, node, kind, payload in events:
            if kind == LOST:    # not counted here (nothing files them so): never sure
                self._notices = math.inf
            self._order += 1
            event = _new_event(Event, (float(time), self._order, kind, payload))
            if time < now:
                self._late.append((node, event))
            else:
                entries.append((now + (time - now), self._order, node, event))
                times.append(float(time))
        self._filed.add(entries, times)

    def collect(self, until: float) -> dict[int, list]:
        """Run the clock to ``until`` and return the events due before it, by node.

        The transport first decides every hop that starts before the window's start:
        that fixes every delivery before ``until`` when the step is no longer than the
        smallest link delay, and decides nothing the window's own messages could change.
        When the driver asks again in the same window (its programs have run and their
        messages are in), the hops starting inside the window are decided too: with
        shorter links (zero delay) their deliveries still fall inside it.
        """
        self.transport.advance(self._window_start if self._first_collect else until)
        if self._first_collect and self.energy is not None:
            self._check_batteries(self._window_start)
        self._first_collect = False
        arrivals = self.transport.take_arrivals()
        if arrivals:
            self._schedule_deliveries(arrivals)
            if self.measured is not None:   # the traffic after the warm-up
                for arrival, msg in arrivals:
                    self.measured.arrived(arrival, msg)
        for t, msg, reason, _ in self.transport.take_losses():
            self.schedule(t, msg.src, LOST, (msg, reason))   # the sender learns of it
        if until > self._now:
            self._run(until)
        if self._late:
            for node, event in self._late:
                self._inbox[node].append(event)
            self._late.clear()
        # the loss notices among the events returned (:attr:`notices`)
        self.notices = self._notices
        if self._notices != math.inf:
            self._notices = 0
        if not self._inbox:     # a window's second call, most often: nothing due
            return {}
        inbox = dict(self._inbox)   # a plain dict: a wrong lookup fails, adds no node
        self._inbox.clear()         # (a key only for a node with an event)
        return inbox

    def _check_batteries(self, t: float) -> None:
        """Kill the nodes whose battery is empty at ``t`` (the transport has decided
        every hop before ``t``), and note every residual energy up to ``t``."""
        died = self.energy.check(t)
        self.energy.sample_until(t, self._sample_interval)
        if died:
            log.info("battery empty at t=%.4g: node%s %s", t, "s" * (len(died) > 1),
                     ", ".join(map(str, died)))
            self.network.kill(died, t)
            self.transport.forget_views()

    def charge_work(self, events_by_node: dict) -> None:
        """Charge each node's battery for the tuples and messages its operator is about
        to handle (``[energy] cpu_j_per_tuple``; nothing without ``[energy]``)."""
        if self.energy is not None:
            for node, events in events_by_node.items():
                items = sum(1 for e in events if e.kind in (TUPLE, DELIVER))
                if items:
                    self.energy.work(node, items)

    def _run(self, until: float) -> None:
        """What ``simpy.Environment.run(until)`` does with our timeouts: file every event
        whose key is before the stop (``now + (until - now)``; SimPy's stop event is
        urgent, so an event keyed exactly there waits), in key then filing order, and
        move the clock to the stop."""
        now = self._now
        stop = now + (until - now)
        calendar, inbox = self._calendar, self._inbox
        fired = self._filed.take_before(stop)
        if calendar and calendar[0][0] < stop:
            pop, heaped = heapq.heappop, []
            while calendar and calendar[0][0] < stop:
                heaped.append(pop(calendar))
            # both runs sorted: one merge by (key, filing order), which is unique
            fired = sorted(fired + heaped) if fired else heaped
        if fired:
            # events fire in time order: as many of the earliest pending times go
            self._filed.drop_times(len(fired), self._pending)
            for _, _, node, event in fired:
                inbox[node].append(event)
        notices = self._notice_keys
        while notices and notices[0] < stop:   # the loss notices just taken
            heapq.heappop(notices)
            self._notices += 1
        self._now = stop

    def window(self, t_prev: float, t_next: float, step: float) -> tuple[float, float]:
        """The driver's next step: the window of the grid of ``step``
        (:func:`~contract.events.window_of`) that holds ``t_next``, never one before the
        end of the previous step, ``t_prev``. Windows are cells of one fixed grid, so a
        node run ahead (``emulator.lookahead``) can tell its windows in advance."""
        # the grid's cells are in time order: the later time's cell is the later cell
        t0, t1 = window_of(t_next if t_next >= t_prev else t_prev, step)
        self._window_start, self._first_collect = t0, True
        return t0, t1

    @property
    def epochs(self) -> list[float]:
        """Start times of the network's epochs."""
        return self.network.epochs

    def views(self, starts) -> list:
        """Routing views of the epochs starting at ``starts``, built apart from the
        transport's own (so its current view and trees stay cached)."""
        return [self.network.build_view(self.network.epoch_index(s)) for s in starts]

    def always_up(self, nodes) -> set:
        """The nodes of ``nodes`` that are alive in every epoch."""
        up = set(nodes)
        for view in self.views(self.network.epochs):
            known = set(view.nodes)
            up = {u for u in up if u in known and view.alive(u)}
        return up

    def next_change(self, t: float) -> float:
        """The first epoch of the network after ``t`` (inf if none)."""
        return self.network.next_change(t)

    def next_time(self) -> float:
        """Time of the next pending event (inf when nothing is pending)."""
        if self._late or self._inbox:   # (collect leaves the inbox empty: no key
            return self._now            # without an event)
        return min(self._pending[0] if self._pending else math.inf,
                   self._filed.first_time(),
                   self.transport.next_time(),
                   self.energy.next_empty() if self.energy is not None else math.inf)

    # -- messages -----------------------------------------------------------------------
    def inject(self, outgoing) -> list[int]:
        """Transport the programs' :class:`~contract.program.Outgoing` messages in the
        given order; returns their message ids."""
        first = self._next_msg_id
        per_unit, header, send = self.bytes_per_unit, self.header_bytes, self.transport.send
        measured, capture = self.measured, self.capture
        wire = self._wire     # bytes by size in units: most messages share a few sizes
        for msg_id, out in enumerate(outgoing, first):
            units = out.size_units
            if (size := wire.get(units)) is None:
                size = wire[units] = wire_bytes(units, per_unit, header)
            msg = _new_message(Message, (msg_id, out.kind, out.src, out.dst, out.sent_at,
                                         units, size, out.payload))
            if measured is not None:
                measured.injected(msg, out.free)
            if capture is not None:
                capture.data_sent(msg_id, out.payload)
            if out.free:        # a free signal: at once, outside the network
                self.schedule(out.sent_at, out.dst, DELIVER, msg)
            else:
                send(msg)
        self._next_msg_id = first + len(outgoing)
        return list(range(first, self._next_msg_id))

    def view(self, t: float):
        """The routing view in force at ``t``."""
        return self.network.view(t)

    def ledger_frame(self):
        """The ledger of the run so far."""
        return self.ledger.frame()

    def capture_frame(self):
        """The packets kept for a capture (:meth:`Capture.frame
        <emulator.pcap.capture.Capture.frame>`), None without ``[run] capture``."""
        return None if self.capture is None else self.capture.frame()

    def info(self) -> dict:
        """Facts for meta.json / the summary."""
        info = {"backend": self.name, "messages": self._next_msg_id,
                "hops": self.transport.hops, "lost": dict(self.transport.lost),
                "epochs": len(self.network._dynamics_epochs),
                "network": self.transport.stats()}
        if self.measured is not None:
            control_log = getattr(self.transport, "control_log", None)   # a protocol's
            info["measured"] = self.measured.figures(
                self.transport.drops, self.transport.arrivals,
                None if control_log is None else control_log.frame())
        if self.energy is not None:
            info["energy"] = self.energy.summary(self._end_time())
        return info

    def _end_time(self) -> float:
        """The run's end for the batteries' books: the horizon, or the clock."""
        return self.horizon if self.horizon is not None else self._now

    def metric_rows(self, interval: float) -> list[tuple]:
        """The network's series for ``metrics.parquet`` (``source = "network"``), per
        node and ``interval``: control packets and bytes it sent, data packets it
        dropped by reason (``drops_<reason>``); with ``[energy]`` the residual energy
        of every battery-powered node (``energy_j``)."""
        rows = self.transport.series(interval)
        if self.energy is not None:
            self.energy.sample_until(self._end_time(), interval)
            rows += self.energy.series()
        return rows


def _capture(plan: Plan, routing: str, params: dict | None):
    """The run's :class:`~emulator.pcap.capture.Capture` under ``[run] capture``, else
    None."""
    if not plan.spec.get("run", {}).get("capture", False):
        return None
    from emulator.pcap.capture import Capture

    return Capture(None if routing == "oracle" else routing, params,
                   plan.spec.get("routing", {}).get("seconds_per_unit", 1.0))
