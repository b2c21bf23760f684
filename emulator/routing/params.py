"""The protocols' parameters: the RFCs' constants, by their RFC names, in one table each.

``[routing]`` holds ``seconds_per_unit`` (what one time unit of the spec is, in seconds)
and one table per protocol, ``[routing.aodv]``, ``[routing.olsr]``, ``[routing.babel]`` and
``[routing.rpl]``. A value given in a
protocol's table is in time units; a time left out takes the RFC's default in seconds
scaled by ``seconds_per_unit`` (the SMJ experiments use abstract units, the soccer ones
seconds). Counts (``net_diameter``, ``rreq_retries``…) are not scaled.

Examples
--------
>>> aodv = resolve("aodv", {"seconds_per_unit": 0.5})
>>> aodv["hello_interval"], aodv["active_route_timeout"], aodv["net_diameter"]
(2.0, 6.0, 35)
>>> resolve("olsr", {"olsr": {"hello_interval": 0.5}})["hello_interval"]
0.5
>>> resolve("aodv", {"aodv": {"hello_interval": 0}})
Traceback (most recent call last):
...
topologies.schema.FieldError: routing.aodv.hello_interval: expected a number > 0, got 0
"""
from __future__ import annotations

from topologies.schema import Field, FieldError, check_table


def _time(seconds: float, doc: str, source: str = "RFC") -> Field:
    """A time whose default, in seconds, ``source`` gives (an RFC, or an implementation
    where the RFC leaves it open)."""
    return Field("number", seconds, low=0, low_open=True,
                 doc=f"{doc} ({source}: {seconds:g} s)")


def _count(value: int, doc: str, low: int = 1) -> Field:
    return Field("integer", value, low=low, doc=doc)


#: RFC 3561 §10 (and ns-3's route queue, which the RFC leaves open). Times in seconds.
AODV = {
    "hello_interval": _time(1.0, "HELLO_INTERVAL: a node that sent no broadcast for this "
                                 "long broadcasts a HELLO"),
    "allowed_hello_loss": _count(2, "ALLOWED_HELLO_LOSS: HELLOs missed before a neighbour "
                                    "counts as gone"),
    "active_route_timeout": _time(3.0, "ACTIVE_ROUTE_TIMEOUT: an unused route expires"),
    "node_traversal_time": _time(0.04, "NODE_TRAVERSAL_TIME: one hop's expected time "
                                       "(ring and network traversal times derive from it)"),
    "net_diameter": _count(35, "NET_DIAMETER: hops; the widest RREQ's TTL"),
    "rreq_retries": _count(2, "RREQ_RETRIES: network-wide RREQs repeated before giving up",
                           low=0),
    "ttl_start": _count(1, "TTL_START: the first RREQ's TTL (expanding ring search)"),
    "ttl_increment": _count(2, "TTL_INCREMENT: the ring grows by this many hops"),
    "ttl_threshold": _count(7, "TTL_THRESHOLD: past this TTL the RREQ covers the network"),
    "timeout_buffer": _count(2, "TIMEOUT_BUFFER: hops of slack in a ring's wait", low=0),
    "rreq_ratelimit": _count(10, "RREQ_RATELIMIT: RREQs a node originates per "
                                 "ratelimit_interval at most; one more waits for the "
                                 "next (§6.3; ns-3's RreqRateLimit)"),
    "rerr_ratelimit": _count(10, "RERR_RATELIMIT: RERRs a node sends per "
                                 "ratelimit_interval at most; one more is not sent "
                                 "(§6.11; ns-3's RerrRateLimit)"),
    "ratelimit_interval": _time(1.0, "the interval the rate limits count over, from the "
                                     "start (the RFC's second)"),
    "queue_length": _count(64, "packets a node holds while it looks for a route (ns-3's "
                               "MaxQueueLen); one more is dropped as queue_full", low=0),
    "hello": Field("bool", True, doc="neighbours detected by HELLOs (RFC 3561 §6.9)"),
    "link_layer_feedback": Field("bool", True, doc="a frame the MAC could not deliver "
                                                   "breaks the link at once (§6.11)"),
    "gratuitous_reply": Field("bool", False, doc="RREQs carry the G flag (§6.6.3, "
                                                 "optional; ns-3 sets it): an intermediate "
                                                 "node that answers also sends the "
                                                 "destination a RREP to the originator"),
    "rrep_ack": Field("bool", False, doc="an intermediate node answering for a "
                                         "neighbour asks for a RREP-ACK (§6.7, §5.4, as "
                                         "ns-3 does; no blacklist is kept)"),
    "ip_ttl": _count(64, "hops a data packet may take before it is dropped as ttl"),
}

#: RFC 3626 §18. Times in seconds.
OLSR = {
    "hello_interval": _time(2.0, "HELLO_INTERVAL"),
    "tc_interval": _time(5.0, "TC_INTERVAL: an MPR floods its selectors this often"),
    "neighb_hold_time": _time(6.0, "NEIGHB_HOLD_TIME: a link not heard for this long is "
                                   "lost"),
    "top_hold_time": _time(15.0, "TOP_HOLD_TIME: a TC's topology is kept this long"),
    "dup_hold_time": _time(30.0, "DUP_HOLD_TIME: a message seen is remembered this long"),
    "maxjitter": _time(0.5, "MAXJITTER: HELLOs, TCs and forwarded TCs are jittered up to "
                            "this"),
    "max_messages_per_packet": _count(64, "messages one packet may carry (§3.3; ns-3's "
                                          "OLSR_MAX_MSGS): a node's messages queued "
                                          "within the first one's jitter leave in one "
                                          "packet; 1 sends each at once in its own"),
    "link_layer_feedback": Field("bool", False, doc="a frame the MAC could not deliver "
                                                    "marks the link lost at once (RFC 3626 "
                                                    "§13, optional; off in ns-3)"),
    "ip_ttl": _count(64, "hops a data packet may take before it is dropped as ttl"),
}

#: RFC 8966 Appendix B, with babeld's wireless cost. Times in seconds.
BABEL = {
    "hello_interval": _time(4.0, "Hello interval (an IHU every third)"),
    "update_interval": _time(16.0, "Update interval: a full dump of the routes"),
    "rxcost": _count(256, "the nominal cost of a link that is up (babeld: 96 wired, 256 "
                          "wireless)"),
    "link_layer_feedback": Field("bool", False, doc="a frame the MAC could not deliver "
                                                    "takes the link down at once"),
    "ip_ttl": _count(64, "hops a data packet may take before it is dropped as ttl"),
}

#: RFC 6550 §17 (its defaults), RFC 6206 (Trickle), RFC 6552 (OF0), RFC 6719 (MRHOF);
#: what the RFCs leave open as Contiki-NG sets it. Times in seconds.

def _period(doc: str) -> Field:
    """An optional period in time units (none: the timer never runs).

    >>> f = _period("how often"); (f.default, f.none, f.low, f.low_open)
    (None, True, 0, True)
    """
    return Field("number", None, low=0, low_open=True, none=True, doc=doc)

RPL = {
    "root": Field("integer", None, none=True,
                  doc="the DODAG root's node id; none: the query node (emulator.deliver: "
                      "the lowest node id)"),
    "objective": Field("choice", "mrhof", choices=("mrhof", "of0"),
                       doc="the objective function: mrhof (RFC 6719, ETX) or of0 (RFC "
                           "6552, hop count). A link's ETX is the link model's, exact, "
                           "on the ideal medium; under a [mac] model it is learnt from "
                           "the MAC's acknowledgements, and OF0's step of rank follows "
                           "it as in Contiki-NG (3 x ETX - 2, from 1 to 9)"),
    "dio_interval_min": _time(0.008, "Imin of the DIOs' Trickle timer (DEFAULT_DIO_"
                                     "INTERVAL_MIN: 2^3 ms)"),
    "dio_interval_doublings": _count(20, "Trickle's doublings: Imax = Imin x 2^this "
                                         "(DEFAULT_DIO_INTERVAL_DOUBLINGS)", low=0),
    "dio_redundancy_constant": _count(10, "Trickle's k: a DIO is suppressed once k "
                                          "consistent ones were heard in the interval "
                                          "(DEFAULT_DIO_REDUNDANCY_CONSTANT); 0: never",
                                      low=0),
    "min_hop_rank_increase": _count(256, "MinHopRankIncrease: the root's rank, OF0's "
                                         "rank unit (DEFAULT_MIN_HOP_RANK_INCREASE)"),
    "step_of_rank": _count(3, "OF0's step_of_rank (DEFAULT_STEP_OF_RANK)"),
    "rank_factor": _count(1, "OF0's rank_factor (DEFAULT_RANK_FACTOR)"),
    "rank_stretch": _count(0, "OF0's stretch_of_rank (DEFAULT_RANK_STRETCH)", low=0),
    "parent_switch_threshold": _count(192, "MRHOF's PARENT_SWITCH_THRESHOLD: a parent "
                                           "is left for a path this much cheaper only",
                                      low=0),
    "max_link_metric": _count(512, "MRHOF's MAX_LINK_METRIC: a link of a greater ETX x "
                                   "128 is no parent's (ETX 4)"),
    "max_path_cost": _count(32768, "MRHOF's MAX_PATH_COST: a greater path cost is no "
                                   "route"),
    "dao_delay": _time(1.0, "DelayDAO: a DAO leaves this long after the change it tells "
                            "(DEFAULT_DAO_DELAY)"),
    "dao_interval": _time(60.0, "a node sends its parent its routes again this often "
                                "(no DAO-ACK is used: a lost DAO waits for the next)",
                          "this testbed"),
    "max_dao_bytes": Field("integer", 116, low=74,
                           doc="a DAO's bytes at most (IPv6 and ICMPv6 headers included): "
                               "more targets go in more DAOs; 116 is an 802.15.4 frame's "
                               "payload (127 less the 11-byte MAC header), 74 one target "
                               "a DAO (Contiki-NG's storing mode)"),
    "dao_ack": Field("bool", False, doc="DAOs ask for a DAO-ACK (the K flag, §9.3); one "
                                        "unanswered is sent again, and a parent that "
                                        "answers none counts as lost (local repair)"),
    "dao_ack_timeout": _time(5.0, "with dao_ack: a DAO unanswered this long is sent "
                                  "again (RPL_DAO_RETRANSMISSION_TIMEOUT)", "Contiki-NG"),
    "dao_max_retransmissions": _count(5, "with dao_ack: resends before the parent counts "
                                         "as lost (Contiki-NG's RPL_DAO_MAX_"
                                         "RETRANSMISSIONS)", low=0),
    "route_lifetime": _time(1800.0, "a downward route not refreshed by a DAO for this "
                                    "long expires (30 lifetime units of 60 s)",
                            "Contiki-NG"),
    "dis_delay": _time(5.0, "a node with no parent sends its first DIS this long after "
                            "the start (RPL_DIS_START_DELAY)", "Contiki-NG"),
    "dis_interval": _time(30.0, "and another this often while it has none "
                                "(RPL_DIS_INTERVAL)", "Contiki-NG"),
    "version_interval": _period("global repair: the root increments the DODAG version "
                                "this often (time units); none: never"),
    "probing_interval": _period("under a [mac]: each node probes one neighbour with a "
                                "unicast DIO this often x U(0.5, 1.5) (time units; "
                                "Contiki-NG's periodic probing, its RPL_PROBING_INTERVAL "
                                "90 s in rpl-lite, 120 s in rpl-classic; off here by "
                                "default, docs/NOTES.md), the parent if its link "
                                "statistics are stale, "
                                "else the one measured longest ago; none: only the "
                                "urgent probes"),
    "link_layer_feedback": Field("bool", True, doc="a frame the MAC could not deliver "
                                                   "drops the neighbour (local repair "
                                                   "when it was the parent): at once on "
                                                   "the ideal medium; under a [mac] once "
                                                   "its learnt ETX makes it no parent"),
    "forwarding_error": Field("bool", True,
                              doc="RFC 6550 §11.2.2.3's DAO inconsistency recovery: a "
                                  "packet going down that meets a node with no route "
                                  "down goes back with the 'F' flag to the node that "
                                  "sent it down, which drops that stale route and "
                                  "forwards the packet again (summary "
                                  "rpl_forwarding_errors); false: such a packet is "
                                  "dropped as no_route"),
    "ip_ttl": _count(64, "hops a data packet may take before it is dropped as ttl"),
}

#: ``[routing]``: the unit and one table per protocol.
ROUTING_SCHEMA = {
    "seconds_per_unit": Field("number", 1.0, low=0, low_open=True,
                              doc="seconds in one time unit: the RFC times are scaled by it"),
    "aodv": Field("table", {}, doc="AODV's parameters (RFC 3561 names; below)"),
    "olsr": Field("table", {}, doc="OLSR's parameters (RFC 3626 names; below)"),
    "babel": Field("table", {}, doc="the emulated Babel's parameters (RFC 8966; below)"),
    "rpl": Field("table", {}, doc="RPL's parameters (RFC 6550 names; below)"),
}
TABLES = {"aodv": AODV, "olsr": OLSR, "babel": BABEL, "rpl": RPL}


def check(table: dict, where: str = "routing") -> dict:
    """``[routing]`` checked, each protocol's table too (nothing filled in)."""
    clean = check_table(ROUTING_SCHEMA, table, where)
    for name, schema in TABLES.items():
        check_table(schema, clean[name], f"{where}.{name}", fill_defaults=False)
    return clean


def resolve(protocol: str, table: dict | None = None, where: str = "routing") -> dict:
    """The parameters of ``protocol`` in time units: ``[routing.<protocol>]`` over the RFC
    defaults, times scaled by ``seconds_per_unit``."""
    if protocol not in TABLES:
        raise FieldError(where, f"expected one of {', '.join(TABLES)}, got {protocol!r}")
    clean = check(table or {}, where)
    schema, given = TABLES[protocol], clean[protocol]
    params = check_table(schema, given, f"{where}.{protocol}")
    for key, rule in schema.items():
        if key not in given and rule.kind == "number" and rule.default is not None:
            params[key] = rule.default / clean["seconds_per_unit"]
    return params
