"""The MAC engine under a transport's shared medium: hops in, their fates out.

:class:`MacChannel` is what a transport holds in place of the shared channel's perfect
scheduler (:mod:`emulator.routing.channel`) when ``[mac]`` names a standard. It speaks
the transport's language: times in time units (the engine's in seconds, ``seconds_per
_unit`` apart), nodes by id, hops by any item the transport hands it. ``add`` queues a
hop's frame at its sender, ``next_time`` says when the channel next has something to do,
and ``step(until)`` runs the channel to the first instant that decides a frame (or to
``until``) and returns those decisions as :class:`Fate` rows. An 802.15.4 frame longer
than the PHY carries (aMaxPHYPacketSize, 127 bytes with the MAC header) goes as 6LoWPAN
fragments (:mod:`emulator.mac.sixlowpan`), its fate told once theirs are; with
``fragmentation = false``, or above IPv6's MTU, it is refused at once,
``frame_too_long``, as ns-3's ``LrWpanMac`` refuses it.

The powers between nodes follow the network's epochs (:meth:`rx_dbm_of`): with the
log-distance radio, the radio's received power at each pair's distance (no shadowing
draw); else the links of the epoch are decoded (30 dB above detection), nodes within
``carrier_sense_radius`` (default 2.2 x the epoch's longest link; without positions,
nodes two links apart) are sensed, not decoded (none when ``cs_threshold_dbm`` is not
below ``detect_dbm``: ns-3's rule), and the others unheard. A dead node
neither sends nor hears.

>>> import networkx as nx
>>> from emulator.network import Network
>>> from emulator.mac.config import mac_from_table
>>> g = nx.path_graph(3)
>>> for e in g.edges: g.edges[e].update(cost=1.0, delay=0.01)
>>> class OneEpoch:
...     epochs = [0.0]
...     def snapshot(self, t): return g
>>> mac = MacChannel(mac_from_table({"model": "802.11"}), Network(OneEpoch()), seed=1)
>>> mac.add(0.0, "a", 0, 1, 100)
>>> mac.add(0.0, "b", 2, 1, 100)       # 0 and 2 sense each other (two links apart)
>>> fates = mac.step(1.0) + mac.step(1.0)
>>> [(f.item, f.node, f.reason, f.attempts) for f in fates]
[('a', 1, 'delivered', 1), ('b', 1, 'delivered', 1)]
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from emulator.mac.engine import REASONS, MacEngine
from emulator.mac.sixlowpan import Datagram, Fragment, Reassembly


class Fate(NamedTuple):
    """What became of a hop's frame: at ``node`` (its receiver for ``delivered`` and
    ``collision``, else its sender) at ``time`` (time units), after ``attempts``;
    ``start`` is when its last attempt went on air (``delivered``, ``collision``);
    ``repeated``: an earlier fate of the same frame came first (another receiver of a
    broadcast, or the ``delivered`` before a unicast's ``retry_limit`` when only its
    ACKs were lost). ``frames``: a packet sent as 6LoWPAN fragments, each fragment's
    ``(bytes, attempts, received)`` (``attempts``: theirs summed); None: one frame of
    the hop's size."""

    item: object
    node: int
    time: float
    attempts: int
    reason: str
    start: float
    repeated: bool
    frames: tuple | None = None


#: Fates the sender's MAC decides (the frame gone, its link not known broken).
DROPS = ("channel_access_failure", "queue_full", "queue_expired", "frame_too_long")


class MacChannel:
    """The MAC engine of ``config`` (:class:`~emulator.mac.config.MacConfig`) over the
    nodes of ``network`` (see the module docstring). ``radio``: a
    :class:`topologies.radio.Radio` (its powers under ``log_distance``) or None.
    ``later(item)``: what of an item the fates after its first need (the rest is let go:
    a transport's hop holds its epoch's view); an item is let go altogether once the
    engine has released its frame (:meth:`MacEngine.released`), so memory follows the
    frames in flight."""

    def __init__(self, config, network, radio=None, seconds_per_unit: float = 1.0,
                 seed: int = 0, later=None):
        self.config = config
        self.network = network
        if radio is None:   # a mobility dynamics may carry its own (deliver's dynamics=)
            radio = getattr(network.dynamics, "radio", None)
        self.radio = radio if radio is not None and radio.model == "log_distance" else None
        self.scale = float(seconds_per_unit)
        view = network.build_view(0)
        self.ids = list(view.nodes)
        self.gpos = {u: i for i, u in enumerate(self.ids)}
        self._epoch = view.epoch_start
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, 80211])))
        self.engine = MacEngine(self.rx_dbm_of(view), config.standard, config.channel,
                                seed=rng, duty=config.duty)
        self._rng = rng   # the jitter of broadcasts, after the engine's seed
        std = config.standard
        self._largest = std.max_psdu_bytes - std.header_bytes \
            if hasattr(std, "max_psdu_bytes") else math.inf
        self._refused: list[Fate] = []   # frames too long for the PHY, not yet told
        self._too_long = 0
        self._no_room = 0   # packets a receiver had no reassembly context for
        self._items: dict[int, list] = {}   # by handle: [item, sender's index, air (s), decided]
        self._later = later
        self._handle = 0
        lowpan = config.fragmentation if math.isfinite(self._largest) else None
        self._fragmentation = lowpan   # 6LoWPAN's, under 802.15.4 (None: none)
        self._reassembly = None if lowpan is None else \
            Reassembly(lowpan.contexts, lowpan.max_age / self.scale)

    def add(self, t: float, item, u: int, v: int, nbytes: int, jitter: float = 0.0) -> None:
        """Queue at ``u`` from ``t`` the frame of ``item`` to ``v`` (-1: a broadcast),
        ``U(0, jitter)`` seconds later (drawn from the channel's own seed). A frame is
        never queued before the one ``u`` queued last (its queue is first in, first
        out), nor before the clock (a time that came back from seconds to units)."""
        engine, i = self.engine, self.gpos[u]
        frames = None
        if nbytes > self._largest:
            frames = None if self._fragmentation is None else \
                self._fragmentation.fragments(nbytes, self._largest)
            if not frames:   # the MAC refuses it at once (ns-3: FRAME_TOO_LONG)
                self._refused.append(Fate(item, u, t, 0, "frame_too_long", t, False))
                self._too_long += 1
                return
        ready = t * self.scale + (self._rng.random() * jitter if jitter > 0 else 0.0)
        ready = max(ready, engine.now, engine._last_ready[i])
        broadcast = v < 0
        dst = -1 if broadcast else self.gpos[v]
        if frames is None:
            self._queue(ready, i, dst, nbytes, item)
        else:   # the fragments one after another, each its own frame
            datagram = Datagram(item, u, frames, not broadcast)
            for index, size in enumerate(frames):
                self._queue(ready, i, dst, size, Fragment(datagram, index))
        for handle in engine.released():   # done with: their last fates were told
            self._items.pop(handle, None)

    def _queue(self, ready: float, i: int, dst: int, nbytes: int, item) -> None:
        engine = self.engine
        self._handle += 1
        self._items[self._handle] = [item, i, engine._airtime(nbytes, dst < 0)[0], False]
        engine.enqueue(ready, i, dst, nbytes, self._handle)

    def next_time(self) -> float:
        """When the channel next has something to do (time units; inf: nothing)."""
        if self._refused:
            return self._refused[0].time
        return self.engine.next_time() / self.scale

    def step(self, until: float) -> list[Fate]:
        """Run the channel to the first instant that decides a frame, at most to
        ``until``, following the epochs' powers; the fates decided there."""
        if self._refused:
            refused, self._refused = self._refused, []
            return refused
        engine, network = self.engine, self.network
        while True:
            view, _, end = network.view_span(engine.now / self.scale)
            if view.epoch_start != self._epoch:
                self._epoch = view.epoch_start
                engine.set_rx_dbm(self.rx_dbm_of(view))
            stop = min(until, end)
            out = engine.advance(max(stop * self.scale, engine.now), first=True)
            if len(out.handle) or stop >= until:
                return self._fates(out)

    def _fates(self, out) -> list[Fate]:
        fates, items, ids, scale = [], self._items, self.ids, self.scale
        for handle, node, t, attempts, code in zip(out.handle.tolist(), out.node.tolist(),
                                                   out.time.tolist(), out.attempts.tolist(),
                                                   out.reason.tolist()):
            entry = items[handle]
            reason = REASONS[code]
            if type(entry[0]) is Fragment:
                fates += self._datagram_fates(entry, ids[node], t, attempts, reason)
            else:
                fates.append(Fate(entry[0], ids[node], t / scale, attempts, reason,
                                  (t - entry[2]) / scale, entry[3]))
                if not entry[3] and self._later is not None:
                    entry[0] = self._later(entry[0])
            entry[3] = True
            if reason == "retry_limit" or reason in DROPS:
                del items[handle]   # nothing more will come of it
        return fates

    def _datagram_fates(self, entry, node: int, t: float, attempts: int,
                        reason: str) -> list[Fate]:
        """A fragment's fate: the fates of its packet it completes
        (:class:`~emulator.mac.sixlowpan.Datagram`)."""
        fragment, scale = entry[0], self.scale
        datagram = fragment.datagram
        def feedback(where, when, what):   # the sender's giving up, told as such alone
            return Fate(datagram.item, where, when, attempts, what, when, True)
        if entry[3] and reason not in ("delivered", "collision"):
            # the fragment was delivered, only its ACKs were lost
            return [feedback(node, t / scale, reason)]
        fates = []
        for where, when, what, start in datagram.tell(
                fragment.index, node, t / scale, attempts, reason,
                (t - entry[2]) / scale, self._reassembly):
            if datagram.told_any and datagram.unicast:
                # the packet's fate is told (its receiver had no room): only a later
                # fragment's retry limit still counts, as link-layer feedback
                if what == "retry_limit":
                    fates.append(feedback(where, when, what))
                continue
            fates.append(Fate(datagram.item, where, when, sum(datagram.attempts), what,
                              start, datagram.told_any, datagram.frames()))
            self._no_room += what == "reassembly_full"
            if not datagram.told_any and self._later is not None:
                datagram.item = self._later(datagram.item)
            datagram.told_any = True
        return fates

    def rx_dbm_of(self, view) -> np.ndarray:
        """The power at each node of each node's transmissions in ``view``'s epoch."""
        n, gpos, channel = len(self.ids), self.gpos, self.config.channel
        linked = np.zeros((n, n), bool)
        for u, v in view.link_indices():
            linked[gpos[u], gpos[v]] = True
        where = self._positions(view.epoch_start)
        if where is not None:
            dist = np.linalg.norm(where[:, None, :] - where[None, :, :], axis=-1)
        if self.radio is not None and where is not None:
            rx = np.asarray(self.radio.rx_dbm(dist * self.radio.meters_per_unit), float)
        else:
            if channel.cs_threshold_dbm >= channel.detect_dbm:
                # sensing no farther than detection (ns-3's rule): no ring of nodes
                # sensed but not decoded
                sensed = np.zeros((n, n), bool)
            elif where is None:
                sensed = (linked.astype(np.int64) @ linked.astype(np.int64)) > 0
            else:
                reach = self.config.carrier_sense_radius
                if reach is None:
                    reach = 2.2 * (dist[linked].max() if linked.any() else 0.0)
                sensed = dist <= reach
            rx = np.where(linked, channel.detect_dbm + 30.0,
                          np.where(sensed, (channel.cs_threshold_dbm + channel.detect_dbm) / 2,
                                   -250.0))
        alive = np.array([view._alive_map.get(u, False) for u in self.ids])
        rx[~alive, :] = -np.inf
        rx[:, ~alive] = -np.inf
        np.fill_diagonal(rx, -np.inf)
        return rx

    def rx_dbm(self, u: int, v: int) -> float:
        """The power (dBm) at ``v`` of ``u``'s transmissions in the engine's epoch
        (-inf: unheard)."""
        mw = float(self.engine._rx_mw[self.gpos[u], self.gpos[v]])
        return 10.0 * math.log10(mw) if mw > 0 else -math.inf

    def _positions(self, t: float) -> np.ndarray | None:
        """Every node's position in the epoch at ``t`` (an ``n x 2`` array), None if a
        node has none."""
        snapshot = self.network.dynamics.snapshot(t)
        pos = dict(snapshot.nodes(data="pos"))
        if any(pos.get(u) is None for u in self.ids):
            return None
        return np.array([tuple(pos[u])[:2] for u in self.ids], float)

    def counters(self) -> dict:
        """The run's MAC figures at the clock: ``mac_collisions`` (frames a node locked
        onto and lost), ``mac_retries``, ``mac_drops_by_reason`` and
        ``channel_busy_fraction`` (the mean over nodes of the share of the time each
        sensed the channel busy)."""
        c, busy = self.engine.counters(), self._busy_fraction()
        return {"mac_collisions": int(c["collisions"].sum()),
                "mac_retries": int(c["retries"].sum()),
                "mac_drops_by_reason": {**c["drops_by_reason"],
                                        "frame_too_long": self._too_long,
                                        "reassembly_full": self._no_room},
                "channel_busy_fraction": float(busy.mean()) if len(busy) else math.nan}

    def _busy_fraction(self) -> np.ndarray:
        busy, now = self.engine.counters()["busy_time"], self.engine.now
        return busy / now if now > 0 else np.zeros(len(self.ids))

    def metric_rows(self) -> list[tuple]:
        """Each node's ``mac_collisions``, ``mac_retries`` and ``channel_busy_fraction``
        at the clock, as ``metrics.parquet`` rows ``(time, node, "network", metric,
        value)``."""
        c, busy = self.engine.counters(), self._busy_fraction()
        t = self.engine.now / self.scale
        return [(t, node, "network", metric, value)
                for i, node in enumerate(self.ids)
                for metric, value in (("mac_collisions", int(c["collisions"][i])),
                                      ("mac_retries", int(c["retries"][i])),
                                      ("channel_busy_fraction", float(busy[i])))]
