"""Names and addresses of one emulated run.

Every process, host and state file a run creates carries the run's *prefix* (``m`` and
four random characters), so the leftovers of a run whose driver died can be found and
removed without touching anything else on the machine.

>>> names = RunNames("mab12")
>>> names.host(7), names.address(7), names.link_dev(12)
('mab127', '10.0.0.8', 'to12')
>>> names.owns_shell(["bash", "-is", "mininet:mab127"]), names.owns_shell(["mininet:mab1"])
(True, False)
>>> names.owns_process(["java", "-Dadhoc.testbed.run=mab12", "Worker"])
True
>>> names.owns_process(["babeld", "-c", "/run/adhoc-testbed-mininet/mab12/babel3.conf"])
True
"""
from __future__ import annotations

import ipaddress
import os
import re
import secrets
import string
from dataclasses import dataclass
from pathlib import Path

#: Where run state (driver pid, control sockets, route batches) lives.
STATE_ROOT = Path("/run/adhoc-testbed-mininet")
_PREFIX_RE = re.compile(r"^m[a-z0-9]{4}$")
#: Node addresses live in 10.0.0.0/8: node n has 10.0.0.0 + n + 1.
_BASE = int(ipaddress.IPv4Address("10.0.0.0"))
MAX_NODE_ID = 2**24 - 3


def new_prefix() -> str:
    """A fresh run prefix (an identifier, not an experiment draw, so not seeded).

    >>> bool(_PREFIX_RE.match(new_prefix()))
    True
    """
    alphabet = string.ascii_lowercase + string.digits
    return "m" + "".join(secrets.choice(alphabet) for _ in range(4))


@dataclass(frozen=True)
class RunNames:
    """The names one run uses; ``prefix`` must look like ``m`` + 4 of ``[a-z0-9]``."""

    prefix: str

    def __post_init__(self):
        if not _PREFIX_RE.match(self.prefix):
            raise ValueError(f"run prefix {self.prefix!r}: expected 'm' and 4 of [a-z0-9]")

    def host(self, node: int) -> str:
        """Mininet host name of ``node``."""
        return f"{self.prefix}{int(node)}"

    @staticmethod
    def address(node: int) -> str:
        """The node's IPv4 address (on every interface of its host, /32)."""
        if not 0 <= int(node) <= MAX_NODE_ID:
            raise ValueError(f"node id {node}: expected an integer in 0..{MAX_NODE_ID}")
        return str(ipaddress.IPv4Address(_BASE + int(node) + 1))

    @staticmethod
    def link_dev(neighbor: int) -> str:
        """Name of the veth, inside a host, that leads to ``neighbor``."""
        return f"to{int(neighbor)}"

    @staticmethod
    def tun_dev(neighbor: int) -> str:
        """Name of the TUN device, inside a host, that delays traffic to ``neighbor``."""
        return f"dl{int(neighbor)}"

    @property
    def state_dir(self) -> Path:
        """Folder with this run's state (control socket, route batches)."""
        return STATE_ROOT / self.prefix

    @property
    def state_file(self) -> Path:
        """JSON file naming the driver that owns the run."""
        return STATE_ROOT / f"{self.prefix}.json"

    def owns_shell(self, argv: list[str]) -> bool:
        """True if ``argv`` is the shell of one of this run's Mininet hosts."""
        return bool(argv) and re.fullmatch(rf"mininet:{self.prefix}\d+", argv[-1]) is not None

    @property
    def java_marker(self) -> str:
        """A JVM option that marks this run's Java processes (Spark daemons, executors)."""
        return f"-Dadhoc.testbed.run={self.prefix}"

    def owns_process(self, argv: list[str]) -> bool:
        """True if ``argv`` is an agent/shaper of this run, one of its host shells, one
        of its Java processes, or names a file in its state folder (a routing daemon's
        configuration: a daemon's command line has no room for ``--run``)."""
        state = f"{self.state_dir}/"
        for i, arg in enumerate(argv):
            if arg == self.java_marker or arg.startswith(state):
                return True
            if arg == "--run" and i + 1 < len(argv) and argv[i + 1] == self.prefix:
                return True
        return self.owns_shell(argv)


def process_argv(pid: int) -> list[str] | None:
    """The command line of ``pid``, or None if it is gone."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a]


def process_start(pid: int) -> int | None:
    """Start time of ``pid`` in clock ticks since boot (tells a reused pid apart)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name may contain spaces; fields after the closing parenthesis are fixed.
    return int(stat[stat.rindex(")") + 2:].split()[19])


def all_pids() -> list[int]:
    """Every process id visible now."""
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]
