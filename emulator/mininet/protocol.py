"""The agents' framed protocol: a 4-byte big-endian length, then a pickled object.

Frames are tuples whose first item names them. Driver -> agent (over a Unix socket, which
crosses network namespaces): ``("setup", dict)``, ``("go", t0_monotonic)``,
``("status",)``, ``("stop",)``. Agent -> driver: ``("hello", node)``,
``("ready", node)``, ``("counts", node, sent, received, finished)``,
``("outputs", node, dict)``, ``("error", node, text)``. Agent -> agent (TCP over the
emulated network): ``("msg", Message)``.

>>> import socket
>>> a, b = socket.socketpair()
>>> send_frame(a, ("status",)); recv_frame(b)
('status',)
>>> a.close(); recv_frame(b) is None
True
"""
from __future__ import annotations

import pickle
import socket
import struct

_HEADER = struct.Struct(">I")
MAX_FRAME = 1 << 30


def encode(obj) -> bytes:
    """One frame's bytes."""
    body = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    if len(body) > MAX_FRAME:
        raise ValueError(f"frame of {len(body)} bytes exceeds {MAX_FRAME}")
    return _HEADER.pack(len(body)) + body


def send_frame(sock: socket.socket, obj) -> None:
    """Send one frame (blocking)."""
    sock.sendall(encode(obj))


def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def recv_frame(sock: socket.socket):
    """The next frame, or None when the peer closed the connection."""
    header = _recv_exact(sock, _HEADER.size)
    if header is None:
        return None
    (length,) = _HEADER.unpack(header)
    if length > MAX_FRAME:
        raise ValueError(f"frame header announces {length} bytes (> {MAX_FRAME})")
    body = _recv_exact(sock, length)
    if body is None:
        return None
    return pickle.loads(body)
