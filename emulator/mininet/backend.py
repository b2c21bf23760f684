"""Run a plan on the emulated network: the Mininet backend's ``run``.

1. Build the network: every node a host, every link that is up in some epoch a veth
   (:class:`~emulator.mininet.emulation.Emulation`), with the links and routes of epoch 0.
2. Start one agent per node that runs a program and hand each its program, its tuples
   and the routing view of every epoch (:mod:`emulator.mininet.agent`).
3. Start all agents at one wall-clock instant; a SimPy real-time environment
   (``factor = time_scale``) then replaces links and routes at every later epoch of the
   mobility / schedule.
4. After ``duration`` the agents' ``finish`` has run; the run drains until no message is in
   flight (the same total sent and received on two polls in a row) or ``drain`` more
   time units have passed (default: ``duration``, as on the simpy backend).
5. Collect ledger, results and metrics from the agents; read the kernel's byte counters.

Differences from the simpy backend, by construction: agents talk TCP, so a link's
``loss`` drops *packets* (the shaper or netem does) and TCP resends them — a message is
late, not lost; only a message to an unreachable or dead node is lost. Ledger rows carry
the send time (hop times inside the kernel are not observable by the application).
Arrival order may differ; on a loss-free network the result set is the same.

With ``[network] routing = "babel"`` the controller installs no routes: one ``babeld``
per host does (:mod:`emulator.mininet.babel`), started after the links of epoch 0 and
waited for until every reachable pair has a working route, before the agents start; the
agents' ledger still follows the view's least-cost paths (the model), while the kernel
carries the messages along Babel's routes. Any other value: the controller's routes.

The ``[mininet]`` spec table (:class:`~emulator.mininet.options.MininetOptions`):
``time_scale`` (wall seconds per time unit), ``shaping`` (auto | netem | tun),
``agent_timeout``, ``port``, ``spark_master``, ``spark_workers``.
"""
from __future__ import annotations

import dataclasses
import logging
import math
import os
import pickle
import time

import pandas as pd

from contract.outputs import RunOutput, metrics_frame, results_frame
from contract.plan import Plan
from emulator.ledger import empty_frame
from emulator.mininet.babel import BabelDaemons
from emulator.mininet.control import Agents
from emulator.mininet.emulation import Emulation, LinkSetting
from emulator.mininet.options import MininetOptions
from emulator.network import Network

log = logging.getLogger(__name__)

#: Wall seconds between the last agent's ``go`` and virtual time 0.
_LEAD = 0.3
#: Wall seconds between two quiescence polls while draining.
_POLL = 0.05


def epoch_state(view, edges, time_scale: float):
    """Link settings (both directions; missing = down) and next hops of one routing view.

    >>> import networkx as nx
    >>> from emulator.network import NetView
    >>> g = nx.path_graph(3)
    >>> nx.set_edge_attributes(g, 0.5, "delay")
    >>> settings, hops = epoch_state(NetView.from_graph(g), [(0, 1), (1, 2)], 0.01)
    >>> settings[(1, 0)].delay, hops[0]
    (0.005, {1: 1, 2: 1})
    """
    settings = {}
    for u, v in edges:
        for a, b in ((u, v), (v, u)):
            link = view.link(a, b)
            if link is not None:
                settings[(a, b)] = LinkSetting.from_attrs(
                    {"delay": link.delay, "jitter": link.jitter,
                     "bandwidth": link.bandwidth, "loss": link.loss}, time_scale)
    hops = {u: {v: view.next_hop(u, v) for v in view.nodes if v != u} for u in view.nodes}
    return settings, hops


def _edges(dynamics, epochs) -> list[tuple[int, int]]:
    """Every link that is up in at least one of ``epochs``."""
    edges = set()
    for t in epochs:
        for u, v, d in dynamics.snapshot(t).edges(data=True):
            if d.get("up", True):
                edges.add((min(u, v), max(u, v)))
    return sorted(edges)


def _setups(plan: Plan, programs, tuples_by_stream, views, names, opts, runtime,
            drain) -> dict[int, dict]:
    per_node: dict[int, list] = {n: [] for n in programs}
    for name in sorted(tuples_by_stream):
        for tup in tuples_by_stream[name]:
            if tup.origin not in programs:
                raise ValueError(f"stream {name}: tuple {tup.seq} comes from node {tup.origin}, "
                                 f"which runs no program of {plan.algorithm!r}")
            per_node[tup.origin].append(tup)
    addresses = {n: names.address(n) for n in views[0].nodes}
    # The agents' driver reads the plan; the network description stays here (an agent
    # has the epoch views).
    slim = dataclasses.replace(plan, topology=None, dynamics=None, net0=None)
    common = {"plan": pickle.dumps(slim), "time_scale": opts.time_scale,
              "addresses": addresses, "port": opts.port, "bytes_per_unit": plan.bytes_per_unit,
              "header_bytes": plan.header_bytes, "drain": drain,
              "runtime": pickle.dumps(runtime),
              # One copy of the epoch views for all agents (a mobile run has many epochs).
              "views": pickle.dumps(views, protocol=pickle.HIGHEST_PROTOCOL)}
    setups = {}
    for n, program in programs.items():
        try:
            blob = pickle.dumps(program)
        except Exception as exc:
            raise TypeError(f"program of node {n} ({type(program).__name__}) cannot be "
                            f"pickled for its agent: {exc}") from exc
        # Tuples of one node keep the simpy calendar's order: stream name, then sequence.
        setups[n] = dict(common, program=blob, tuples=per_node[n])
    return setups


def run(plan: Plan, programs: dict, tuples_by_stream: dict, runtime, progress: bool = False,
        options: MininetOptions | None = None) -> RunOutput:
    """Run ``programs`` on an emulated network built from ``plan``; return the raw tables.

    Each node agent runs the one step driver with a copy of ``runtime`` (in-process only:
    the programs run inside the hosts). ``options`` defaults to the spec's ``[mininet]``
    table. Needs root and Mininet. ``info`` carries the shaping mechanism, time scale,
    set-up/tear-down times and the kernel's bytes per link (``bytes_on_wire``) beside the
    ledger's bytes (``bytes``).
    """
    if runtime.name != "inproc":
        # The agents run the programs themselves; a Spark runtime here would be ignored.
        raise ValueError(f"run.runtime: the mininet backend runs node programs in its "
                         f"agents (runtime 'inproc'), got {runtime.name!r}; for Spark on the "
                         "emulated network use [mininet] spark_master / spark_workers")
    if os.geteuid() != 0:
        raise PermissionError("the mininet backend needs root (network namespaces, tc)")
    if options is None:
        options = MininetOptions.from_table(plan.spec.get("mininet"),
                                            source=f"spec of run {plan.name!r}")
    drain = plan.drain
    end = plan.run_end(drain)
    network = Network(plan.dynamics)
    epochs = [t for t in network.epochs if t < end]
    edges = _edges(plan.dynamics, epochs)
    views = [network.view(t) for t in epochs]
    view0 = views[0]
    # Read defensively: a plan built by hand (make_plan) may carry no [network] table.
    daemons = plan.spec.get("network", {}).get("routing", "oracle") == "babel"
    em = Emulation(view0.nodes, edges, time_scale=options.time_scale, seed=plan.seed,
                   shaping=options.shaping, routes="daemons" if daemons else "controller")
    setups = _setups(plan, programs, tuples_by_stream, views, em.names, options, runtime,
                     end - plan.duration)
    wall0 = time.monotonic()
    agents = babel = None
    try:
        em.start()
        em.apply(*epoch_state(view0, edges, options.time_scale))
        if daemons:
            babel = BabelDaemons(em)
            babel.start()
            babel.wait_converged()
        network_s = time.monotonic() - wall0
        agents = Agents(em, programs)
        # What every agent imports anyway (the routing view, the step function) and the
        # programs' own modules, imported once in the zygote before it forks.
        agents.spawn(["emulator.network", "emulator.driver", type(runtime).__module__]
                     + [type(p).__module__ for p in programs.values()])
        agents.handshake(setups, options.agent_timeout)
        setup_s = time.monotonic() - wall0
        counters0 = em.tx_counters()
        log.info("%s: %d hosts, %d links, shaping %s, set up in %.2f s (network %.2f s)",
                 plan.name, len(view0.nodes), len(edges), em.shaping, setup_s, network_s)
        applied = _run_clock(plan, views, end, em, agents, edges, options)
        agents.broadcast(("stop",))
        outputs = agents.collect("outputs", timeout=60.0)
        counters1 = em.tx_counters()
    finally:
        t_stop = time.monotonic()
        if agents is not None:
            agents.close()
        if babel is not None:
            babel.stop()
        em.stop()
        teardown_s = time.monotonic() - t_stop
    output = _output(plan, em, outputs, counters0, counters1, applied,
                     {"setup_s": setup_s, "network_setup_s": network_s,
                      "teardown_s": teardown_s, "wall_s": time.monotonic() - wall0}, options)
    if babel is not None:
        output.info.update(routing="babel", babel=babel.info())
    return output


def _run_clock(plan, views, end, em, agents, edges, opts) -> int:
    """Start the agents, replay the epochs in real time, drain; returns epochs applied."""
    import simpy.rt

    t0 = time.monotonic() + _LEAD
    agents.broadcast(("go", t0))
    env = simpy.rt.RealtimeEnvironment(factor=opts.time_scale, strict=False)
    time.sleep(max(0.0, t0 - time.monotonic()))
    env.sync()
    applied = [1]

    def dynamics():
        for view in views[1:]:
            yield env.timeout(view.epoch_start - env.now)
            em.apply(*epoch_state(view, edges, opts.time_scale))
            applied[0] += 1

    def drain():
        yield env.timeout(plan.duration)
        previous = None
        while env.now < end:
            sent, received, finished = agents.counts(opts.agent_timeout)
            if finished and sent == received and previous == (sent, received):
                return
            previous = (sent, received) if finished else None
            yield env.timeout(_POLL / opts.time_scale)
        log.warning("%s: drain ended at %.3g with messages still in flight", plan.name, end)

    def watch():
        # Fail fast: an agent whose program raised ends the run at once.
        while env.now < plan.duration:
            agents.check()
            yield env.timeout(min(0.25 / opts.time_scale, plan.duration - env.now))

    env.process(dynamics())
    env.process(watch())
    env.run(until=env.process(drain()))
    return applied[0]


#: Bytes of headers per packet on a veth: Ethernet II (14), IPv4 without options (20) and
#: TCP with the timestamp option Linux sets by default (32).
PACKET_HEADER_BYTES = 14 + 20 + 32


def wire_breakdown(wire: int, packets: int, payload: int) -> dict:
    """What the kernel counted on the veths, split into what explains it.

    ``payload_bytes``: the framed, pickled messages TCP carried, summed over each hop of
    their paths (:mod:`.agent`); ``header_bytes``: every packet's Ethernet/IPv4/TCP headers, data and
    pure ACKs, handshakes and closes alike; ``other_bytes``: the rest (ARP and IPv6 neighbour
    discovery, whose packets are not 66 bytes; retransmissions; kernel routes that
    differed from the view's path).

    >>> wire_breakdown(10_000, 100, 3_000)
    {'payload_bytes': 3000, 'header_bytes': 6600, 'packets': 100, 'other_bytes': 400}
    """
    headers = packets * PACKET_HEADER_BYTES
    return {"payload_bytes": payload, "header_bytes": headers, "packets": packets,
            "other_bytes": wire - payload - headers}


def wire_summary(plan: Plan, output: RunOutput) -> dict:
    """This backend's keys of a run's summary (its entry's ``summary_keys``): what the
    kernel counted per interface, ``bytes_on_wire``, and why the wire carries more than
    the ledger (``wire_<part>`` of :func:`wire_breakdown`: pickled payloads, headers).

    >>> from types import SimpleNamespace
    >>> info = {"bytes_on_wire": 900, "wire_breakdown": {"packets": 3}}
    >>> wire_summary(None, SimpleNamespace(info=info))
    {'bytes_on_wire': 900, 'wire_packets': 3}
    """
    if "bytes_on_wire" not in output.info:
        return {}
    summary = {"bytes_on_wire": output.info["bytes_on_wire"]}
    for part, value in output.info["wire_breakdown"].items():
        summary[f"wire_{part}"] = value
    return summary


run.summary_keys = wire_summary


def _output(plan, em, outputs, counters0, counters1, epochs_applied, timings, opts):
    ledgers, results, metrics, dropped = [], [], [], {}
    for node in sorted(outputs):
        out = outputs[node][2]
        for key, count in out["dropped"].items():
            dropped[key] = dropped.get(key, 0) + count
        ledgers.append(out["ledger"])
        results.append(out["results"])
        metrics.append(out["metrics"])
    led = pd.concat(ledgers, ignore_index=True) if ledgers else empty_frame()
    led = led.sort_values(["time", "msg_id"], kind="stable").reset_index(drop=True)
    wire = {f"{u}-{v}": counters1[(u, v)][0] - counters0.get((u, v), (0, 0))[0]
            for (u, v) in sorted(counters1)}
    packets = sum(counters1[k][1] - counters0.get(k, (0, 0))[1] for k in counters1)
    lost = int(led.groupby("msg_id")["lost"].any().sum()) if len(led) else 0
    info = {
        "backend": "mininet",
        "messages": int(led["msg_id"].nunique()),
        "hops": int((~led["lost"]).sum()),
        "lost": {"no_route": lost} if lost else {},
        "dropped": dropped,
        "epochs": len(plan.dynamics.epochs),
        "epochs_applied": epochs_applied,
        "shaping": em.shaping,
        "netem_probe": em.netem_probe,
        "time_scale": opts.time_scale,
        "run_prefix": em.names.prefix,
        "hosts": len(em.nodes),
        "links": len(em.edges),
        "bytes": int(led.loc[~led["lost"], "size_bytes"].sum()),
        "bytes_on_wire": int(sum(wire.values())),
        "bytes_on_wire_by_link": wire,
        "wire_breakdown": wire_breakdown(
            int(sum(wire.values())), packets,
            sum(o[2]["payload_hop_bytes"] for o in outputs.values())),
        "delivered": sum(o[2]["received"] for o in outputs.values()),
        **{k: round(v, 3) for k, v in timings.items()},
        "build_s": round(em.timings.get("build_s", math.nan), 3),
    }
    metrics = pd.concat(metrics, ignore_index=True) if metrics else metrics_frame([])
    results = results_frame(pd.concat(results, ignore_index=True).to_dict("records")
                            if results else [])
    traces: dict[str, list] = {}
    for node in sorted(outputs):
        for table, rows in outputs[node][2].get("traces", {}).items():
            traces.setdefault(table, []).extend(rows)
    return RunOutput(led, metrics, results, info, traces)
