"""Process-local fan-out of live messages: one channel-layer subscriber per server process.

Joining every websocket to channel-layer groups makes the layer deliver each message once per
page, and Channels' in-memory layer sweeps all its channels on every receive: the cost of a
message grows with the square of the pages watching. Here each process joins the groups once,
with one channel of its own, and hands each message to the pages of that process that watch
the topic. The channel layer (in memory, or channels-redis between processes) carries a message
once per process, however many pages are open; each process renders it once per kind of viewer
(dashboard/live/render.py) and sends that text to every page of the kind and language. With
QUEUE_ACCESS, a message is first narrowed once per audience (pages whose users see the same
queues). An overview page that says what it shows is sent parts rendered for its view instead
of the counts (overview_parts.py), once per view and language. Without a Redis connection each
process reads its PostgreSQL stores for its own pages and hands their messages to them here
directly (:meth:`Hub.hand_out`), past the channel layer.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

from channels.layers import get_channel_layer
from django.utils import translation

from dashboard.auth.queue_access import EVERYTHING, QueueAccess
from dashboard.auth.viewer import ViewerKind
from dashboard.live import frames, render
from dashboard.live.frames import FrameWriter
from dashboard.live.overview_mirror import OverviewMirror, counts_messages
from dashboard.live.overview_parts import OverviewBatch, OverviewView
from dashboard.services import registry
from dashboard.services.registry import Slot
from queues.cancelling import cancel_and_wait, raise_if_cancelled
from queues.live.outbox import SendTime
from queues.live.protocol import LiveMessage

log = logging.getLogger("bullpen.live")

Deliver = Callable[[str, str], Awaitable[None]]  # (group, text)
# A page that heard from the server within this long does not need the reader's beat (it
# says "stale" after 7 s of silence; the reader beats every 2 s).
BEAT_NOT_NEEDED_WITHIN = 2.0
AccessOf = Callable[[], QueueAccess]  # what the page's user may view now
GroupingOf = Callable[[], render.Grouping]  # how an overview page groups its queues now
ViewOf = Callable[[], "OverviewView | None"]  # what an overview page shows (None: it said not)
# Who a member is and how it is sent to: viewer kind, language, access, grouping, the writer
# of framed messages under daphne, and the overview page's view.
Member = tuple[ViewerKind, str, AccessOf, GroupingOf, "FrameWriter | None", ViewOf]
# The topic whose counts the hub keeps (overview_mirror.py), and the readers' status.
OVERVIEW = "bullpen.overview"
STATUS = "bullpen.status"


def everything() -> QueueAccess:
    return EVERYTHING


def ungrouped() -> render.Grouping:
    return render.UNGROUPED


def no_view() -> OverviewView | None:
    return None


class Hub:
    def __init__(self) -> None:
        # Each member's viewer kind, page language, queue access and grouping: who may be sent
        # what, and how.
        self.members: dict[str, dict[Deliver, Member]] = {}
        self.channel: str | None = None
        # When each page was last sent anything (monotonic seconds).
        self.last_sent: dict[Deliver, float] = {}
        self._pump: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        # Every queue's counts as the overview's messages said, while an overview is open.
        self.mirror = OverviewMirror()
        self.filling = asyncio.Lock()  # held while one page fills the mirror
        # What handing out messages takes here: the live reader sizes its batch by it.
        self.send_time = SendTime()

    async def join(
        self,
        group: str,
        deliver: Deliver,
        kind: ViewerKind,
        language: str = "en",
        access_of: AccessOf = everything,
        grouping_of: GroupingOf = ungrouped,
        writer: FrameWriter | None = None,
        view_of: ViewOf = no_view,
    ) -> None:
        """``writer``: writes a message framed once (frames.py) where the server allows it."""
        layer = get_channel_layer()
        async with self._lock:
            if layer is not None and self.channel is None:
                self.channel = await layer.new_channel(prefix="bullpen-hub.")
                self._pump = asyncio.ensure_future(self._run(layer, self.channel))
            if group not in self.members:
                self.members[group] = {}
                if layer is not None and self.channel is not None:
                    await layer.group_add(group, self.channel)
            self.members[group][deliver] = (kind, language, access_of, grouping_of, writer, view_of)

    async def leave(self, group: str, deliver: Deliver) -> None:
        layer = get_channel_layer()
        async with self._lock:
            members = self.members.get(group)
            if members is None:
                return
            members.pop(deliver, None)
            if not any(deliver in others for others in self.members.values()):
                self.last_sent.pop(deliver, None)
            if not members:
                del self.members[group]
                if group == OVERVIEW:
                    self.mirror.clear()  # nothing keeps it current now
                if layer is not None and self.channel is not None:
                    await layer.group_discard(group, self.channel)

    async def _run(self, layer: Any, channel: str) -> None:
        failures = 0
        while True:
            raise_if_cancelled()
            try:
                message = await layer.receive(channel)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # the layer's Redis went away: wait, then join again
                failures += 1
                if failures == 1:
                    log.warning("live updates: the channel layer does not deliver: %r", error)
                await asyncio.sleep(min(5.0, 0.25 * 2 ** min(failures, 5)))
                await self._rejoin(layer, channel)
                continue
            if failures:
                log.info("live updates: the channel layer delivers again")
                failures = 0
            await self.hand_out(message.get("group", ""), message["payload"])

    async def hand_out(self, group: str, payload: Any) -> None:
        """One message to this process's pages of ``group``, rendered once per kind of viewer."""
        members = self.members.get(group)
        if not members:
            return
        began = time.perf_counter()
        try:
            await self._hand_out(members, group, payload)
        finally:
            self.send_time.add(time.perf_counter() - began)

    async def _hand_out(self, members: dict[Deliver, Member], group: str, payload: Any) -> None:
        now = time.monotonic()
        heard_since = now - BEAT_NOT_NEEDED_WITHIN if _is_beat(payload) else None
        narrowed: dict[Hashable, LiveMessage | None] = {}
        texts: dict[tuple[Hashable, str, str], str] = {}
        framed: dict[str, Any] = {}
        variants: dict[tuple[Hashable, ViewerKind, render.Grouping], str] = {}
        parts = self._overview_batch(group, payload)
        for deliver, member in list(members.items()):
            kind, language, access_of, grouping_of, writer, view_of = member
            if heard_since is not None and self.last_sent.get(deliver, 0.0) > heard_since:
                continue
            try:
                access = access_of()
                audience = access.audience
                view = None if parts is None else view_of()
                if parts is not None and view is not None:
                    # Rendered for the page's view: once per view, language and audience.
                    seen_as = "view:" + view.key
                    text = texts.get((audience, seen_as, language))
                    if text is None:
                        with translation.override(language):
                            text = parts.encode(view, access)
                        texts[audience, seen_as, language] = text
                    if not text:
                        continue
                    await self._send(deliver, writer, group, text, framed, now)
                    continue
                if audience not in narrowed:
                    narrowed[audience] = render.seen_by(payload, access)
                seen = narrowed[audience]
                if seen is None:
                    continue
                grouping = grouping_of()
                key = variants.get((audience, kind, grouping))
                if key is None:
                    key = render.variant(seen, kind, grouping)
                    variants[audience, kind, grouping] = key
                text = texts.get((audience, key, language))
                if text is None:
                    with translation.override(language):
                        text = render.encode(seen, kind, grouping)
                    texts[audience, key, language] = text
                await self._send(deliver, writer, group, text, framed, now)
            except Exception:  # one broken socket must not stop the others' updates
                log.debug("live message not delivered", exc_info=True)

    def _overview_batch(self, group: str, payload: Any) -> OverviewBatch | None:
        """The overview's counts taken into this process's mirror, ready to render for each
        view; None for any other message (a reader's Redis going away drops its queues)."""
        if not isinstance(payload, dict):
            return None
        if group == STATUS and payload.get("type") == "status" and payload.get("redis") == "down":
            self.mirror.forget(str(payload.get("connection") or ""))
        if group != OVERVIEW:
            return None
        if next(counts_messages(payload), None) is None:  # type: ignore[arg-type]
            return None
        return OverviewBatch(self.mirror, self.mirror.take(payload))  # type: ignore[arg-type]

    async def _send(
        self,
        deliver: Deliver,
        writer: FrameWriter | None,
        group: str,
        text: str,
        framed: dict[str, Any],
        now: float,
    ) -> None:
        self.last_sent[deliver] = now
        if writer is not None:
            if text not in framed:
                framed[text] = frames.frame(text)
            if writer(group, framed[text]):
                return
        await deliver(group, text)

    async def _rejoin(self, layer: Any, channel: str) -> None:
        """Subscribe this process's channel to its groups again (a restarted layer Redis
        forgot them)."""
        for group in list(self.members):
            try:
                await layer.group_add(group, channel)
            except Exception:  # still away: the next receive fails and brings us back here
                return

    async def close(self) -> None:
        await cancel_and_wait(self._pump)
        self._pump, self.channel, self.members, self.last_sent = None, None, {}, {}
        self.mirror.clear()


def _is_beat(payload: Any) -> bool:
    if not isinstance(payload, dict):
        return False
    return payload.get("type") == "status" and bool(payload.get("beat"))


HUB: Slot[Hub] = Slot("live-hub")


def hub() -> Hub:
    """This event loop's hub (a server process runs one loop; tests run one per test)."""
    return registry.kept(HUB, Hub)


async def close() -> None:
    for found in await registry.stop(HUB):
        await found.close()
