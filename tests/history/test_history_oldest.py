"""The oldest waiting job of many queues, read on one Redis by one script per batch of
queues: the same ages as reading each queue's by hand, in fewer commands."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from queues.history import read
from queues.history.read import oldest_waiting_ms
from queues.reads.keys import QueueRef
from tests.history.history_support import now_ms
from tests.support.peer import Peer


def evals(redis_client: Any) -> int:
    stats = redis_client.info("commandstats")
    return sum(int(stats[name]["calls"]) for name in ("cmdstat_eval",) if name in stats)


async def test_many_queues_oldest_jobs_read_in_batches(
    peer: Peer, redis_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = ["a", "b", "c", "d", "e"]
    for name in names[:4]:
        await asyncio.to_thread(peer, "add-bulk", "--queue", name, "--name", "n", "--count", "2")
        await asyncio.sleep(0.02)  # each queue's jobs a little younger than the one before
    refs = [QueueRef("bull", name) for name in names]  # "e" has no job at all
    redis_client.delete("bull:d:wait")  # "d" has jobs, none waiting
    now = now_ms()
    expected: dict[QueueRef, int | None] = {}
    for ref in refs:
        tail = redis_client.lindex(ref.key("wait"), -1)
        expected[ref] = (
            None if tail is None else now - int(redis_client.hget(ref.key(tail), "timestamp"))
        )
    assert [expected[ref] is None for ref in refs] == [False, False, False, True, True]
    monkeypatch.setattr(read, "OLDEST_BATCH", 2)
    before = evals(redis_client)
    assert await oldest_waiting_ms(refs, now) == expected
    assert evals(redis_client) - before == 3  # 2 + 2 + 1 queues
    assert expected[refs[0]] > expected[refs[2]]  # type: ignore[operator]
    # One queue alone, and none.
    assert await oldest_waiting_ms(refs[1:2], now) == {refs[1]: expected[refs[1]]}
    assert await oldest_waiting_ms([], now) == {}
