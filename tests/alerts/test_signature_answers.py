"""A queue's new-signature answer is reused while its failure counts stand: for a minute at
most, or, while the live reader's token says no event of the queue came, for as long as it
says so. A changed token, or counts, reads the queue again."""

from __future__ import annotations

import asyncio
from collections.abc import Hashable
from typing import Any

import pytest

from queues.alerts import signatures
from queues.alerts.thresholds import read_signatures
from queues.reads.counts import summaries
from queues.reads.keys import QueueRef
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)


async def test_an_answer_stands_while_the_readers_token_does(
    peer: Peer, monkeypatch: pytest.MonkeyPatch
) -> None:
    await asyncio.to_thread(peer, "add", "--queue", "mail", "--name", "send", "--data", "{}")
    await asyncio.to_thread(peer, "work", "--queue", "mail", "--fail", "--count", "1")
    (found,) = await summaries()
    ref = found.ref
    recent = {ref: {"failed": 1}}
    signatures.reset()
    read: list[QueueRef] = []
    real_read = signatures._read

    async def counted(refs: Any, window_s: int) -> Any:
        read.extend(refs)
        return await real_read(refs, window_s)

    monkeypatch.setattr(signatures, "_read", counted)
    # Every answer older than REUSE_S counts as old from here on.
    monkeypatch.setattr(signatures, "REUSE_S", 0.0)
    token: list[Hashable | None] = [("era", 3)]

    async def asked() -> list[str]:
        return (await read_signatures([found], recent, still=lambda _ref: token[0]))[ref]

    (first,) = await asked()
    assert first.startswith("job <n> failed on purpose @ "), first
    assert read == [ref]
    assert await asked() == [first]  # the reader vouches: no read, past REUSE_S
    assert read == [ref]

    token[0] = ("era", 4)  # an event of the queue came: read again
    assert await asked() == [first]
    assert read == [ref, ref]

    token[0] = None  # the reader cannot say: REUSE_S bounds the answer (here at once)
    await asked()
    await asked()
    assert read == [ref, ref, ref, ref]

    # Without a reader (another caller, /metrics), as before: REUSE_S alone.
    monkeypatch.setattr(signatures, "REUSE_S", 60.0)
    await read_signatures([found], recent)
    await read_signatures([found], recent)
    assert read == [ref, ref, ref, ref, ref]

    # Even an answer the reader vouches for is read again after LASTING_S.
    monkeypatch.setattr(signatures, "LASTING_S", 0.0)
    token[0] = ("era", 5)
    await asked()
    await asked()
    assert read == [ref] * 7
