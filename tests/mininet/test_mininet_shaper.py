"""The TUN shaper's per-link model: delay, jitter, loss, FIFO (no network needed)."""
import random

import pytest

from emulator.mininet.shaper import LinkDelay


def test_loss_drops_about_the_configured_share_and_jitter_stays_in_range():
    link = LinkDelay(fd=-1)
    link.delay, link.jitter, link.loss = 0.010, 0.004, 0.25
    rng = random.Random(3)
    times = [link.release_time(100.0, rng) for _ in range(4000)]
    kept = [t for t in times if t is not None]
    assert len(kept) / len(times) == pytest.approx(0.75, abs=0.03)
    assert min(kept) >= 100.010 and max(kept) <= 100.014
    assert max(kept) - min(kept) > 0.003                 # jitter really spreads them


def test_without_jitter_a_link_stays_fifo_when_its_delay_drops():
    link = LinkDelay(fd=-1)
    rng = random.Random(1)
    link.delay = 0.050
    first = link.release_time(0.0, rng)
    link.delay = 0.001                                    # the schedule shortens the link
    second = link.release_time(0.010, rng)
    assert first == pytest.approx(0.050) and second == pytest.approx(0.050)
    assert link.release_time(0.100, rng) == pytest.approx(0.101)
