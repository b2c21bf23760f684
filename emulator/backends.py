"""The backends a run can use, by name: ``simpy`` (virtual time) and ``mininet`` (real hosts).

A backend is a function ``run(plan, programs, tuples_by_stream, runtime, progress=False)
-> RunOutput``; both go through the one step driver (``emulator.driver``).

>>> BACKENDS.names()
['mininet', 'simpy']
"""
from __future__ import annotations

from contract.plan import Plan
from contract.registry import Registry


def run_simpy(plan: Plan, programs: dict, tuples_by_stream: dict, runtime,
              progress: bool = False):
    """Run on the simpy backend: the driver over SimPy's virtual clock."""
    from emulator.driver import execute
    from emulator.simpy_backend import SimpyBackend

    return execute(plan, programs, tuples_by_stream, runtime, drain=plan.drain,
                   progress=progress, backend=SimpyBackend.from_plan(plan),
                   run_ahead=plan.spec.get("run", {}).get("run_ahead", True))


#: A routing protocol's own counts (``Protocol.counters``) the summary carries when the
#: run has them: RPL's packets sent back with the Forwarding-Error flag (RFC 6550
#: §11.2.2.3), over the whole run.
PROTOCOL_COUNTS = ("rpl_forwarding_errors",)


def network_summary(plan: Plan, output) -> dict:
    """The simpy backend's keys of a run's summary (its entry's ``summary_keys``): the
    routing protocol's control traffic (ledger rows of ``kind = "routing"``: packets,
    bytes, cost), the first data packet's wait for a route per flow, the share of data
    messages delivered and their mean delay from sending to arrival, the drops by
    reason (JSON text: a table cell) and the protocol's own counts
    (:data:`PROTOCOL_COUNTS`).

    >>> import pandas as pd
    >>> from types import SimpleNamespace
    >>> ledger = pd.DataFrame({"kind": ["data", "routing"], "size_bytes": [88, 52],
    ...                        "cost": [2.0, 1.5]})
    >>> info = {"network": {"sent": 4, "delivered": 3, "drops_by_reason": {"no_route": 1},
    ...                     "route_discovery_latency_mean": 0.25, "message_delay_mean": 0.5}}
    >>> network_summary(None, SimpleNamespace(ledger=ledger, info=info))
    {'routing_control_messages': 1, 'routing_control_bytes': 52, 'routing_control_cost': 1.5, 'route_discovery_latency_mean': 0.25, 'delivery_ratio': 0.75, 'message_delay_mean': 0.5, 'drops_by_reason': '{"no_route": 1}'}
    """
    import json
    import math

    net = output.info.get("network", {})
    control = output.ledger[output.ledger["kind"] == "routing"]
    sent = net.get("sent", 0)
    return {"routing_control_messages": int(len(control)),
            "routing_control_bytes": int(control["size_bytes"].sum()),
            "routing_control_cost": float(control["cost"].sum()),
            "route_discovery_latency_mean": float(net.get("route_discovery_latency_mean",
                                                          math.nan)),
            "delivery_ratio": net.get("delivered", 0) / sent if sent else math.nan,
            "message_delay_mean": float(net.get("message_delay_mean", math.nan)),
            "drops_by_reason": json.dumps(net.get("drops_by_reason", {}), sort_keys=True),
            **{key: net[key] for key in PROTOCOL_COUNTS if key in net},
            **mac_summary(net),
            **energy_summary(output)}


def mac_summary(net: dict) -> dict:
    """With a ``[mac]`` model: frames a receiver locked onto and lost
    (``mac_collisions``), retransmissions (``mac_retries``), frames the MAC dropped by
    reason (JSON text) and the mean share of the run each node sensed the channel busy
    (``channel_busy_fraction``); nothing without.

    >>> mac_summary({"mac": {"mac_collisions": 3, "mac_retries": 5, "channel_busy_fraction":
    ...     0.25, "mac_drops_by_reason": {"retry_limit": 1}}})
    {'mac_collisions': 3, 'mac_retries': 5, 'mac_drops_by_reason': '{"retry_limit": 1}', 'channel_busy_fraction': 0.25}
    """
    import json

    mac = net.get("mac")
    if mac is None:
        return {}
    return {"mac_collisions": int(mac["mac_collisions"]),
            "mac_retries": int(mac["mac_retries"]),
            "mac_drops_by_reason": json.dumps(mac["mac_drops_by_reason"], sort_keys=True),
            "channel_busy_fraction": float(mac["channel_busy_fraction"])}


def energy_summary(output) -> dict:
    """With ``[energy]``: joules spent by every node over the run (``energy_total_j``),
    per distinct result (``energy_per_result_j``, inf with none), the first death (NaN
    if none) and the nodes dead at the end, and under ``radio_states`` the radio-on
    fractions (:data:`RADIO_ON_KEYS`); nothing without.

    >>> import pandas as pd
    >>> from types import SimpleNamespace
    >>> info = {"energy": {"total_j": 3.0, "first_node_death": 4.5, "nodes_dead_at_end": 2}}
    >>> energy_summary(SimpleNamespace(info=info, results=pd.DataFrame({"group": [1, 1, 2]})))
    {'energy_total_j': 3.0, 'energy_per_result_j': 1.5, 'first_node_death': 4.5, 'nodes_dead_at_end': 2}
    """
    import math

    energy = output.info.get("energy")
    if energy is None:
        return {}
    results = int(output.results["group"].nunique()) if len(output.results) else 0
    return {"energy_total_j": float(energy["total_j"]),
            "energy_per_result_j": energy["total_j"] / results if results else math.inf,
            "first_node_death": float(energy["first_node_death"]),
            "nodes_dead_at_end": int(energy["nodes_dead_at_end"]),
            **{key: float(energy[key]) for key in RADIO_ON_KEYS if key in energy}}


#: radio_states' summary keys: the mean and largest fraction of the run a node's radio
#: was on (sending, receiving or listening).
RADIO_ON_KEYS = ("radio_on_fraction_mean", "radio_on_fraction_max")


run_simpy.summary_keys = network_summary

BACKENDS = Registry("backend", {"simpy": "emulator.backends:run_simpy",
                                "mininet": "emulator.mininet.backend:run"})
