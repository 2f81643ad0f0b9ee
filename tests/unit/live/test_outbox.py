"""The live outbox: one message per topic per pass, in the order the pass emitted them."""

from __future__ import annotations

from queues.live import protocol as live_protocol
from queues.live.outbox import Outbox
from queues.live.protocol import LiveMessage, Topic


async def test_topics_go_in_the_order_emitted_and_each_gets_one_message() -> None:
    sent: list[tuple[Topic, LiveMessage]] = []

    async def publish(topic: Topic, message: LiveMessage) -> None:
        sent.append((topic, message))

    outbox = Outbox(publish, layer_back=lambda: None)
    progress = live_protocol.progress_message("mail", [], "queue")
    outbox.emit(("queue", "mail"), progress)
    outbox.emit(("queue", "mail"), live_protocol.counts_message([], 0))
    outbox.emit(("status",), live_protocol.status_message(True, beat=True))
    outbox.emit(("overview",), live_protocol.counts_message([], 0))
    await outbox.send()

    assert [topic for topic, _ in sent] == [("queue", "mail"), ("status",), ("overview",)]
    batch = sent[0][1]
    assert batch["type"] == "batch" and len(batch["messages"]) == 2  # type: ignore[typeddict-item]
    await outbox.send()
    assert len(sent) == 3  # nothing is sent twice
