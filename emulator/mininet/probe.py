"""Measure an emulated path from inside its hosts: UDP round trips and TCP throughput.

``ping`` is not installed everywhere, so a small Python echo/sink runs in the far host
(``python -m emulator.mininet.probe server ...``) and a client in the near one; both are
marked with the run prefix, so a crash leaves nothing the cleanup cannot find.
"""
from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import time

PORT = 7999


def _server(addr: str, mode: str) -> None:
    if mode == "echo":
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind((addr, PORT))
        print("ready", flush=True)
        while True:
            data, peer = sock.recvfrom(65535)
            sock.sendto(data, peer)
    listener = socket.create_server((addr, PORT))
    print("ready", flush=True)
    conn, _ = listener.accept()
    while conn.recv(1 << 16):
        pass


def _client(addr: str, mode: str, count: int, nbytes: int) -> dict:
    if mode == "echo":
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.settimeout(5.0)
        rtts = []
        for i in range(count):
            t = time.monotonic()
            sock.sendto(i.to_bytes(4, "big") + bytes(max(0, nbytes - 4)), (addr, PORT))
            sock.recvfrom(65535)
            rtts.append(time.monotonic() - t)
            time.sleep(0.02)
        return {"rtts": rtts}
    conn = socket.create_connection((addr, PORT), timeout=30)
    chunk = bytes(1 << 16)
    t = time.monotonic()
    sent = 0
    while sent < nbytes:
        conn.sendall(chunk)
        sent += len(chunk)
    conn.shutdown(socket.SHUT_WR)
    conn.recv(1)  # the sink closes once it has read everything
    return {"bytes": sent, "seconds": time.monotonic() - t}


def measure(em, u: int, v: int, mode: str = "echo", count: int = 10,
            nbytes: int = 64) -> dict:
    """Run a probe from node ``u`` to node ``v`` of a started Emulation.

    ``mode="echo"``: ``count`` UDP round trips of ``nbytes`` (returns ``rtts`` in seconds);
    ``mode="tcp"``: send ``nbytes`` over TCP (returns ``bytes`` and ``seconds``).
    """
    addr = em.names.address(v)
    base = [sys.executable, "-m", "emulator.mininet.probe", "--run", em.names.prefix,
            "--addr", addr, "--mode", mode]
    server = em.hosts[v].popen(base + ["server"], stdout=subprocess.PIPE, text=True)
    try:
        if server.stdout.readline().strip() != "ready":
            raise RuntimeError(f"probe server in node {v} did not start")
        out = em.hosts[u].cmd(" ".join(base + ["--count", str(count), "--bytes", str(nbytes),
                                               "client"]))
        return json.loads(out.strip().splitlines()[-1])
    finally:
        server.kill()
        server.wait()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, help="run prefix (marks the process)")
    parser.add_argument("--addr", required=True)
    parser.add_argument("--mode", choices=["echo", "tcp"], default="echo")
    parser.add_argument("--count", type=int, default=10)
    parser.add_argument("--bytes", type=int, default=64)
    parser.add_argument("role", choices=["server", "client"])
    args = parser.parse_args(argv)
    if args.role == "server":
        _server(args.addr, args.mode)
    else:
        print(json.dumps(_client(args.addr, args.mode, args.count, args.bytes)))


if __name__ == "__main__":
    main()
