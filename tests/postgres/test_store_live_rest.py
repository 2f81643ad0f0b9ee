"""The store's live reader rests while no page anywhere watches: it neither re-reads the
counts of every queue every few seconds nor follows notifications, and reads them afresh once
a page watches again."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from queues.cancelling import cancel_and_wait
from queues.live.interest import Interest
from queues.live.protocol import LiveMessage, Topic
from queues.postgres.live_counts import PostgresLiveCounts
from tests.support.peer import PostgresPeer


async def test_the_store_reader_rests_while_nobody_watches(
    pg_peer: PostgresPeer, with_pg: dict[str, Any]
) -> None:
    pg_peer("add", "--queue", "shop", "--name", "first", "--data", "{}")
    sent: list[tuple[Topic, LiveMessage]] = []

    async def publish(topic: Topic, message: LiveMessage) -> None:
        sent.append((topic, message))

    registry = Interest()
    reader = PostgresLiveCounts(publish, "pg", registry=registry, shared=False, poll_s=0.5)
    reader.rows.watching.IDLE_AFTER = 0.3  # idle soon after nobody watches, not after 30 s
    running = asyncio.ensure_future(reader.run())
    try:
        await until(lambda: waiting_sent(sent) == 1, "the first pass's counts")
        await until(lambda: reader.rows.watching.idle and not reader.last_sent, "a rest")
        sent.clear()
        pg_peer("add", "--queue", "shop", "--name", "second", "--data", "{}")
        # Several of its quiet re-reads' time (0.5 s) and passes: nothing read, nothing sent.
        await asyncio.sleep(2.0)
        assert sent == [] and not reader.last_sent

        registry.watch_overview()  # a page watches again: the counts as they are now
        await until(lambda: waiting_sent(sent) == 2, "the counts after the rest")
    finally:
        await cancel_and_wait(running)


def waiting_sent(sent: list[tuple[Topic, LiveMessage]]) -> int | None:
    """The waiting count of ``shop`` in the last overview message sent, if any."""
    found = None
    for topic, message in sent:
        if topic == ("overview",) and message.get("type") == "counts":
            for entry in message.get("queues", []):
                if entry.get("slug", "").startswith("shop"):
                    found = entry["counts"].get("waiting")
    return found


async def until(check: Any, what: str, within: float = 15) -> None:
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.05)
