"""The reader's pace: an event after a quiet spell is read and sent at once, a busy stream in
batches of ``read_pause``, longer the longer this process takes to send its pages an update."""

from __future__ import annotations

import math

from queues.live.follower import Follower
from queues.live.interest import Interest
from queues.live.outbox import BatchSendTime, SendTime
from queues.live.protocol import LiveMessage, Topic
from queues.live.settings import LiveSettings
from queues.live.streams import StreamReader


async def _drop(topic: Topic, message: LiveMessage) -> None:
    return None


def test_a_read_after_a_quiet_one_is_followed_by_the_next_at_once() -> None:
    reader = StreamReader(block_ms=1000, read_pause=0.03)
    # The first read, or one after a read that returned nothing: no pause.
    assert reader.pause_after(asked_at=100.0, now=100.001) == 0.0


def test_a_busy_stream_is_read_once_per_read_pause_counted_from_the_reads_start() -> None:
    reader = StreamReader(block_ms=1000, read_pause=0.03)
    reader._quiet = False  # the read before this one returned events
    assert abs(reader.pause_after(asked_at=100.0, now=100.01) - 0.02) < 1e-9
    # A read that waited the whole pause for its events is followed by the next at once.
    assert reader.pause_after(asked_at=100.0, now=100.03) == 0.0
    assert reader.pause_after(asked_at=100.0, now=100.5) == 0.0


def test_forgetting_the_streams_makes_the_next_read_a_quiet_one() -> None:
    reader = StreamReader(block_ms=1000, read_pause=0.03)
    reader._quiet = False
    reader.forget_all()
    assert reader.pause_after(asked_at=100.0, now=100.0) == 0.0


def test_watchers_count_every_watch_of_every_page() -> None:
    registry = Interest()
    assert registry.watchers == 0
    registry.watch_overview()
    registry.watch_overview()
    registry.watch_queue("bull~mail")
    registry.watch_queue("bull~mail")
    registry.watch_queue("bull~pay")
    registry.watch_job("bull~mail", "7")
    registry.watch_node("bull~mail", "8")
    assert registry.watchers == 7
    registry.unwatch_queue("bull~mail")
    registry.unwatch_overview()
    assert registry.watchers == 5


def test_the_batch_is_twice_what_sending_the_last_one_took_within_its_bounds() -> None:
    settings = LiveSettings(read_pause=0.03, read_pause_max=0.1)
    assert settings.send_share == 0.5
    spent = SendTime()
    registry = Interest()
    follower = Follower(_drop, registry, settings=settings, send_time=spent)
    follower.watching.add_own(registry)
    assert follower._read_pause() == 0.03  # nothing sent yet
    spent.add(0.01)  # 500 pages on a quiet machine
    assert follower._read_pause() == 0.03  # 20 ms: under the least batch
    spent.add(0.03)
    assert abs(follower._read_pause() - 0.06) < 1e-9
    spent.add(0.2)  # a loaded machine
    assert follower._read_pause() == 0.1  # read_pause_max
    follower.watching.idle_since = -math.inf  # nobody has watched for long: history alone
    settings.unwatched_read_pause = 0.5
    assert follower._read_pause() == 0.5


def test_a_light_batch_after_a_heavy_one_shortens_the_next_batch_by_a_fifth_a_pass() -> None:
    spent = SendTime()
    batches = BatchSendTime(spent)
    spent.add(0.02)
    spent.add(0.01)  # two messages of one batch
    assert abs(batches.last_batch() - 0.03) < 1e-9
    spent.add(0.001)
    assert abs(batches.last_batch() - 0.024) < 1e-9
    assert abs(batches.last_batch() - 0.0192) < 1e-9
    spent.add(0.05)
    assert abs(batches.last_batch() - 0.05) < 1e-9
    # Another reader of the same process (a second Redis) sees the same sends from its start.
    other = BatchSendTime(spent)
    spent.add(0.004)
    assert abs(other.last_batch() - 0.004) < 1e-9


def test_the_batch_grows_with_this_processs_pages_and_is_longest_for_history_alone() -> None:
    """The floor a watch, where one is set (off by default)."""
    assert LiveSettings().read_pause_per_watcher == 0.0
    settings = LiveSettings(
        read_pause=0.03, read_pause_per_watcher=0.0001, read_pause_max=0.1, unwatched_read_pause=0.1
    )
    registry = Interest()
    follower = Follower(_drop, registry, settings=settings)
    follower.watching.add_own(registry)  # nothing watched: not idle until IDLE_AFTER
    assert follower._read_pause() == 0.03
    for _ in range(100):
        registry.watch_overview()
    assert follower._read_pause() == 0.03  # 100 watches at 0.1 ms: under the least batch
    for _ in range(700):
        registry.watch_queue("bull~mail")
    assert abs(follower._read_pause() - 0.08) < 1e-9
    for _ in range(1000):
        registry.watch_queue("bull~pay")
    assert follower._read_pause() == 0.1  # read_pause_max
    follower.watching.idle_since = -math.inf  # nobody has watched for long: history alone
    assert follower._read_pause() == 0.1
    settings.unwatched_read_pause = 0.5
    assert follower._read_pause() == 0.5
