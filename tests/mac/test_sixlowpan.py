"""6LoWPAN fragmentation under the 802.15.4 MAC (emulator.mac.sixlowpan): a packet longer
than a frame goes as RFC 4944 fragments, reassembled at each hop."""
import networkx as nx
import pandas as pd
import pytest

from emulator import deliver
from emulator.mac.sixlowpan import (FRAG1_HEADER_BYTES, FRAGN_HEADER_BYTES, Datagram,
                                    Fragmentation, Reassembly)
from topologies.schema import FieldError

LARGEST = 116   # an 802.15.4 frame's payload under short addresses (127 - 11)


def _star(n):
    g = nx.star_graph(n)
    for e in g.edges:
        g.edges[e].update(cost=1.0, delay=1e-6, bandwidth=1e6)
    return g


def _messages(sizes, src=1, dst=0):
    return pd.DataFrame({"msg_id": range(len(sizes)), "src": src, "dst": dst,
                         "sent_at": 0.0, "size_bytes": sizes})


@pytest.mark.parametrize("nbytes", [117, 200, 300, 541, 1000, 1280])
def test_fragments_carry_the_packet_in_multiples_of_eight(nbytes):
    sizes = Fragmentation().fragments(nbytes, LARGEST)
    payloads = [sizes[0] - FRAG1_HEADER_BYTES] + [s - FRAGN_HEADER_BYTES for s in sizes[1:]]
    assert sum(payloads) == nbytes
    assert all(s <= LARGEST for s in sizes)
    assert all(p % 8 == 0 for p in payloads[:-1]) and payloads[-1] > 0
    # as much as fits in each but the last: 104 bytes (116 less 5, to a multiple of 8)
    assert all(p == 104 for p in payloads[:-1])


def test_a_fragmented_packet_costs_what_its_fragments_sent_alone_cost():
    """300 bytes go as 109 + 109 + 97: the packet arrives when the last of three packets
    of those sizes sent at once does, and the radios spend the same."""
    energy = {"model": "radio_states"}
    packet = deliver(_star(3), _messages([300]), medium="shared",
                     mac={"model": "802.15.4"}, energy=energy, seed=3)
    apart = deliver(_star(3), _messages([109, 109, 97]), medium="shared",
                    mac={"model": "802.15.4", "fragmentation": False}, energy=energy,
                    seed=3)
    assert packet["loss_reason"].tolist() == [""]
    assert (apart["loss_reason"] == "").all()
    assert packet["arrived_at"][0] == apart["arrived_at"].max()
    assert packet.attrs["energy"]["state_s"] == apart.attrs["energy"]["state_s"]
    # three frames of 126, 126 and 114 bytes with the MAC header and SHR/PHR at 32 µs
    # a byte, each acknowledged: at least their airtime
    assert packet["arrived_at"][0] > (126 + 126 + 114) * 32e-6


def test_above_the_mtu_or_without_fragmentation_a_packet_is_refused():
    out = deliver(_star(2), _messages([100, 300, 1281]), medium="shared",
                  mac={"model": "802.15.4"})
    assert out["loss_reason"].tolist() == ["", "", "frame_too_long"]
    assert out.attrs["mac"]["mac_drops_by_reason"]["frame_too_long"] == 1
    off = deliver(_star(2), _messages([100, 300]), medium="shared",
                  mac={"model": "802.15.4", "fragmentation": False})
    assert off["loss_reason"].tolist() == ["", "frame_too_long"]


def test_a_receiver_reassembles_as_many_packets_at_once_as_it_has_contexts():
    """Four leaves send the hub a 300-byte packet each at once: their fragments
    interleave at the hub, which with one context drops the first fragment of a packet
    that comes while another is being reassembled."""
    msgs = pd.DataFrame({"msg_id": range(4), "src": [1, 2, 3, 4], "dst": 0,
                         "sent_at": 0.0, "size_bytes": 300})
    full = {}
    for contexts in (1, 4):
        full[contexts] = 0
        for seed in (1, 2, 3):
            out = deliver(_star(4), msgs, medium="shared", seed=seed,
                          mac={"model": "802.15.4", "reassembly_contexts": contexts})
            counted = out.attrs["mac"]["mac_drops_by_reason"]["reassembly_full"]
            assert counted == (out["loss_reason"] == "reassembly_full").sum()
            full[contexts] += counted
    assert full[4] == 0 and full[1] >= 2


def test_contexts_are_freed_by_the_last_fragment_or_the_timer():
    book = Reassembly(contexts=1, max_age=8.0)
    a, b, c = (Datagram(name, 1, [116, 109]) for name in "abc")
    assert book.open(0, a, 0.0)
    assert not book.open(0, b, 5.0)      # a holds the only context
    assert book.open(0, b, 8.0)          # a's fragments never all came: freed at 8 s
    book.close(0, b)
    assert book.open(0, c, 8.5)          # b's last fragment freed it
    assert book.open(1, a, 8.5)          # contexts are per node


def test_a_broadcast_packet_reaches_the_receivers_that_hold_every_fragment():
    book = Reassembly(contexts=2, max_age=8.0)
    packet = Datagram("dio", 0, [116, 109, 40], unicast=False)
    told = []
    for index, fates in enumerate([[(1, "delivered"), (2, "delivered"), (3, "delivered")],
                                   [(1, "delivered"), (2, "collision"), (3, "delivered")],
                                   [(1, "delivered"), (2, "delivered"), (3, "delivered")]]):
        for node, reason in fates:
            told += packet.tell(index, node, float(index), 1, reason, 0.0, book)
    assert [(node, t, reason) for node, t, reason, _ in told] == [
        (2, 1.0, "collision"), (1, 2.0, "delivered"), (3, 2.0, "delivered")]
    assert packet.frames() == ((116, 1, True), (109, 1, True), (40, 1, True))


def test_a_fragment_failing_at_the_sender_loses_the_packet_once_all_are_decided():
    book = Reassembly(contexts=2, max_age=8.0)
    packet = Datagram("data", 1, [116, 109, 40])
    assert packet.tell(0, 0, 0.01, 1, "delivered", 0.005, book) == []
    assert packet.tell(1, 1, 0.05, 4, "retry_limit", 0.04, book) == []
    # the third still goes (Contiki-NG queues them all); the packet's fate comes with it
    assert packet.tell(2, 0, 0.06, 1, "delivered", 0.055, book) == [
        (1, 0.06, "retry_limit", 0.005)]
    assert packet.frames() == ((116, 1, True), (109, 4, False), (40, 1, True))


def test_fragmentation_keys_belong_to_802_15_4():
    with pytest.raises(FieldError, match='^mac.fragmentation: a key of model "802.15.4"'):
        deliver(_star(2), _messages([100]), medium="shared",
                mac={"model": "802.11", "fragmentation": False})
    with pytest.raises(FieldError, match="^mac.reassembly_contexts: expected an integer >= 1"):
        deliver(_star(2), _messages([100]), medium="shared",
                mac={"model": "802.15.4", "reassembly_contexts": 0})
    with pytest.raises(FieldError, match="^mac.reassembly_timeout: expected a number > 0"):
        deliver(_star(2), _messages([100]), medium="shared",
                mac={"model": "802.15.4", "reassembly_timeout": 0})
