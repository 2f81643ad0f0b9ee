"""What one housekeeping pass has for the pages, handed to the channel layer.

One websocket message per topic per pass: a page gets a few messages a second however busy
the queues are, which is what keeps hundreds of viewers cheap.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from queues.live import protocol as live_protocol
from queues.live.protocol import LiveMessage, Topic

log = logging.getLogger("bullpen.live")

Publish = Callable[[Topic, LiveMessage], Awaitable[None]]
# Each pass, the batch's send time counted is the last batch's or this share of the one
# before, whichever is more: one light pass does not shorten the batch after a heavy one.
SEND_TIME_KEPT = 0.8


class SendTime:
    """How long this process has spent handing its pages their messages (rendering and
    writing them), added up as it goes (dashboard/live/fanout.py adds to it)."""

    def __init__(self) -> None:
        self.total = 0.0

    def add(self, seconds: float) -> None:
        self.total += seconds


class BatchSendTime:
    """One reader's view of :class:`SendTime`: what handing out its last batch took."""

    def __init__(self, spent: SendTime) -> None:
        self.spent = spent
        self._counted = spent.total
        self._recent = 0.0

    def last_batch(self) -> float:
        """Seconds spent sending since the last call, or the decayed figure before it."""
        total = self.spent.total
        taken, self._counted = total - self._counted, total
        self._recent = max(taken, self._recent * SEND_TIME_KEPT)
        return self._recent


class Outbox:
    def __init__(self, publish: Publish, layer_back: Callable[[], None]) -> None:
        """``layer_back`` is called when the channel layer takes messages again after
        refusing some: the pages missed messages."""
        self._publish = publish
        self._layer_back = layer_back
        self.layer_ok = True  # the channel layer took the last message
        self._pending: dict[Topic, list[LiveMessage]] = {}

    def emit(self, topic: Topic, message: LiveMessage) -> None:
        self._pending.setdefault(topic, []).append(message)

    def clear(self) -> None:
        self._pending.clear()

    async def send(self) -> None:
        """Everything emitted since the last send: one message per topic, in the order the
        pass emitted them (progress and rows, then counts).

        With hundreds of pages open, the topic handed over last waits for every page of the
        others to be sent its message first. Sending the overview's counts first shortened
        the overview's wait by as much as it lengthened the queue pages' (bench/RESULTS.md):
        no order is cheaper, and this one keeps each within its earlier figures."""
        pending, self._pending = self._pending, {}
        for topic in pending:
            messages = pending[topic]
            message = messages[0] if len(messages) == 1 else live_protocol.batch_message(messages)
            if not await self.publish(topic, message):
                return  # the channel layer is away: what is left goes stale, resent on return

    async def publish(self, topic: Topic, message: LiveMessage) -> bool:
        """Hand a message to the channel layer now; its failure is the layer's, never the
        queues' Redis's, and never ends live updates."""
        try:
            await self._publish(topic, message)
        except Exception as error:  # any layer's error: in-memory, Redis, or a custom one
            if self.layer_ok:
                log.warning("live updates: the channel layer refused a message: %r", error)
            self.layer_ok = False
            return False
        if not self.layer_ok:
            log.info("live updates: the channel layer takes messages again")
            self.layer_ok = True
            self._layer_back()
        return True
