"""A MAC under the shared channel: 802.11b DCF and 802.15.4 unslotted CSMA/CA.

``standards`` holds the constants by the standards' names (ns-3's defaults),
``airtime`` a frame's duration on air, ``bianchi`` the saturation model the engine is
held to, and ``engine`` the compiled channel: frames queued per node contend, collide,
are acknowledged, retried and dropped as on a real radio. Not yet used by the transports.
"""
