"""User-space link shaping: delay, jitter and loss through TUN devices.

Used when the kernel has no ``sch_netem``. One shaper process runs in each Mininet host
and owns one TUN device per neighbour (``dl<neighbour>``). The host's routes send traffic
for a neighbour into that device; the shaper holds each packet for the link's current
``delay + U(0, jitter)`` (dropping it with probability ``loss``) and writes it back into
the same device, where a policy rule (``iif dl<n> lookup <table>``) sends it out of the
veth to the neighbour. Packets of one link leave in arrival order unless jitter reorders
them, as on the simulated link.

The driver talks to the shaper over its stdin/stdout, one JSON object per line:
``{"dev": "dl3", "delay": 0.01, "jitter": 0.0, "loss": 0.0}`` (seconds) sets a link, and
the shaper answers ``ready`` once its devices exist. End of stdin (the driver stopped or
died) ends the shaper, and the kernel removes its devices.

Run as ``python -m emulator.mininet.shaper --run PREFIX --node N --seed S --dev dl1 ...``.
"""
from __future__ import annotations

import argparse
import fcntl
import heapq
import json
import os
import select
import struct
import sys
import time

import random

_TUNSETIFF = 0x400454CA
_IFF_TUN = 0x0001
_IFF_NO_PI = 0x1000


def open_tun(name: str) -> int:
    """Create (or attach to) TUN device ``name``; returns its non-blocking descriptor."""
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, _TUNSETIFF, struct.pack("16sH", name.encode(), _IFF_TUN | _IFF_NO_PI))
    return fd


class LinkDelay:
    """The packets one TUN device holds and the link's current settings (seconds)."""

    def __init__(self, fd: int):
        self.fd = fd
        self.delay = 0.0
        self.jitter = 0.0
        self.loss = 0.0
        self.last_release = 0.0

    def release_time(self, now: float, rng: random.Random) -> float | None:
        """When a packet read at ``now`` leaves, or None if it is lost."""
        if self.loss > 0.0 and rng.random() < self.loss:
            return None
        if self.jitter > 0.0:
            return now + self.delay + rng.uniform(0.0, self.jitter)
        # Without jitter the link is FIFO even when its delay just dropped.
        self.last_release = max(now + self.delay, self.last_release)
        return self.last_release


def serve(devs: list[str], seed: int, control_in, control_out) -> None:
    """Shape the given devices until ``control_in`` ends."""
    links = {name: LinkDelay(open_tun(name)) for name in devs}
    by_fd = {link.fd: link for link in links.values()}
    rng = random.Random(seed)
    held: list = []  # (release, seq, fd, packet)
    seq = 0
    control_fd = control_in.fileno()
    os.set_blocking(control_fd, False)
    pending = b""
    control_out.write("ready\n")
    control_out.flush()
    while True:
        timeout = max(0.0, held[0][0] - time.monotonic()) if held else None
        readable, _, _ = select.select([control_fd, *by_fd], [], [], timeout)
        now = time.monotonic()
        for fd in readable:
            if fd == control_fd:
                chunk = os.read(control_fd, 65536)
                if not chunk:
                    return
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    if line.strip():
                        update = json.loads(line)
                        link = links[update["dev"]]
                        link.delay = float(update["delay"])
                        link.jitter = float(update["jitter"])
                        link.loss = float(update["loss"])
                continue
            link = by_fd[fd]
            while True:  # drain: one wake-up may cover a burst of packets
                try:
                    packet = os.read(fd, 65536)
                except BlockingIOError:
                    break
                release = link.release_time(now, rng)
                if release is not None:
                    seq += 1
                    heapq.heappush(held, (release, seq, fd, packet))
        now = time.monotonic()
        while held and held[0][0] <= now:
            _, _, fd, packet = heapq.heappop(held)
            try:
                os.write(fd, packet)
            except OSError:
                pass  # the device refused it (e.g. going down): the packet is lost


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, help="run prefix (marks the process)")
    parser.add_argument("--node", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--dev", action="append", default=[])
    args = parser.parse_args(argv)
    serve(args.dev, args.seed, sys.stdin, sys.stdout)


if __name__ == "__main__":
    main()
