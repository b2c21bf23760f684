"""What storing mode reads of a data packet's RPL Packet Information (RFC 6550 §11.2):
whether it is going down (the 'O' flag) and, for the Forwarding-Error 'F' flag of
§11.2.2.3 (DAO inconsistency detection and recovery), who sent it down and who sent it
back.

A real packet carries its flags in a hop-by-hop option, and the node that holds it reads
the neighbour that passed it from the frame. Here the flags live beside the packets, by
message id: for a packet going down, the nodes that sent it down, in order (the last is
the one a node without a route down sends it back to, with 'F' set; the one before, the
node that one sends it back to if it has no other route, and so on); for a packet sent
back, the neighbour that sent it (the route through it is the stale one).

A packet 7 turned down at node 3 to 8 and by 8 to 12, where no route down is left:

>>> paths = DownwardPaths()
>>> paths.went_down(7, 3); paths.went_down(7, 8)
>>> paths.going_down(7), paths.send_back(7, 12)      # 12: back to 8 with 'F'
(True, 8)
>>> paths.returned(7), paths.going_down(7)           # at 8, from 12; it came down to 8
(12, True)
>>> paths.send_back(7, 8)                            # 8 has no route left: back to 3
3
>>> paths.returned(7), paths.going_down(7)           # 3 turned it down: it is routed anew
(8, False)
>>> paths.returned(7) is None
True

Memory: an entry lives until the packet is sent back up to the node that turned it down;
a packet delivered on its way down keeps its list (the protocol is not told of
deliveries): about 150 bytes a packet that went down (a dict entry and a short list),
where the set of ids it replaced took about 60.
"""
from __future__ import annotations


class DownwardPaths:
    """The 'O' and 'F' flags of the packets in flight (see the module docstring)."""

    __slots__ = ("_senders", "_returned")

    def __init__(self):
        #: message id -> the nodes that sent it down, in order ('O' set while any)
        self._senders: dict[int, list[int]] = {}
        #: message id -> the node that sent it back with 'F' set (until it is read)
        self._returned: dict[int, int] = {}

    def went_down(self, msg_id: int, node: int) -> None:
        """``node`` sends the packet down (a route down of its own: 'O' set)."""
        senders = self._senders.get(msg_id)
        if senders is None:
            self._senders[msg_id] = [node]
        else:
            senders.append(node)

    def going_down(self, msg_id: int) -> bool:
        """Whether the packet arrived going down ('O' set)."""
        return msg_id in self._senders

    def send_back(self, msg_id: int, node: int) -> int:
        """``node``, reached going down, has no route down: the packet goes back with
        'F' set to the node that sent it down to ``node``, which is returned."""
        senders = self._senders[msg_id]
        back = senders.pop()
        if not senders:   # back where it was turned down: no longer going down there
            del self._senders[msg_id]
        self._returned[msg_id] = node
        return back

    def returned(self, msg_id: int) -> int | None:
        """The neighbour that sent the packet back with 'F' set, the flag cleared
        (None: it was not sent back)."""
        return self._returned.pop(msg_id, None)
