"""The store's live reader and a queue Node obliterates: BullMQ's ``obliterate`` deletes the
queue's rows with no notification of its own, and the Queue object that asks for it writes its
version and events cap back into ``meta`` as it connects. The reader tells the overview (the
queue's slug under ``gone``) and the queue's page (``gone``) as the Redis follower does, and
discovery no longer lists it; a queue that still holds something is never dropped."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from queues.cancelling import cancel_and_wait
from queues.live.interest import Interest
from queues.live.protocol import LiveMessage, Topic
from queues.postgres.live_counts import PostgresLiveCounts
from queues.postgres.queue_reads import discover, ref_of
from tests.support.peer import PostgresPeer


def sent_gone(sent: list[tuple[Topic, LiveMessage]]) -> tuple[list[str], list[str]]:
    """The slugs the overview was told are gone, and the queue pages told theirs is."""
    overview = [
        slug
        for topic, message in sent
        if topic == ("overview",) and message["type"] == "counts"
        for slug in message.get("gone", [])
    ]
    pages = [topic[1] for topic, message in sent if message["type"] == "gone"]
    return overview, pages


async def test_a_queue_obliterated_by_node_is_told_gone(
    pg_peer: PostgresPeer, with_pg: dict[str, Any]
) -> None:
    for queue in ("alpha", "bravo"):
        pg_peer("add", "--queue", queue, "--name", "n", "--data", "{}")
    # Its one job done and removed: no job row, but its events stay, and so does the queue.
    removed = '{"removeOnComplete": true}'
    pg_peer("add", "--queue", "empty", "--name", "n", "--data", "{}", "--opts", removed)
    pg_peer("work", "--queue", "empty", "--count", "1")
    sent: list[tuple[Topic, LiveMessage]] = []

    async def publish(topic: Topic, message: LiveMessage) -> None:
        sent.append((topic, message))

    registry = Interest()
    registry.watch_overview()
    registry.show(["alpha@pg", "bravo@pg", "empty@pg"])
    registry.watch_queue("bravo@pg")
    reader = PostgresLiveCounts(publish, "pg", registry=registry, shared=False, poll_s=0.5)
    running = asyncio.ensure_future(reader.run())
    try:
        await until(lambda: len(reader.last_sent) == 3, "every queue's counts")
        await asyncio.to_thread(pg_peer, "obliterate", "--queue", "bravo")
        await until(lambda: sent_gone(sent) == (["bravo@pg"], ["bravo@pg"]), "bravo told gone")
        assert ref_of("bravo", "pg") not in reader.last_sent
        listed = (await discover("pg")).queues
        assert listed == (ref_of("alpha", "pg"), ref_of("empty", "pg"))
        # Several checks later, nothing else is gone.
        await asyncio.sleep(1.5)
        assert sent_gone(sent) == (["bravo@pg"], ["bravo@pg"])
        assert set(reader.last_sent) == {ref_of("alpha", "pg"), ref_of("empty", "pg")}
    finally:
        await cancel_and_wait(running)


async def until(check: Any, what: str, within: float = 20) -> None:
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.05)
