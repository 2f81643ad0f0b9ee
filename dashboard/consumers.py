"""The live websocket: a page says what it watches; the follower's messages come back.

A page that starts watching gets the present at once (counts, and its list or job read fresh,
rendered by the page's own partials), so nothing that changed between the page load and the
subscription is missed; live messages follow.
"""

from __future__ import annotations

import contextlib
from typing import Any, TypeGuard

from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.sessions import InstanceSessionWrapper

from dashboard import fanout, live, live_render, shared_reads
from dashboard.access import allows, read_check
from dashboard.forms.reads import PAGE_SIZES
from dashboard.principal import from_scope
from dashboard.viewer import ViewerKind, verified_kind, viewer_kind
from queues import counts, interest, live_protocol
from queues.detail import job_live_view
from queues.errors import BullpenError
from queues.interest import Interest
from queues.keys import QueueRef
from queues.listing import job_page
from queues.live.counts import counts_entry

MAX_WATCHES = 50
MAX_ID = 1024  # longer queue names or job ids cannot be BullMQ's
SNAPSHOT_ERRORS = (BullpenError, OSError, ConnectionError)


class LiveConsumer(AsyncJsonWebsocketConsumer):  # type: ignore[misc]
    # What this process's pages watch: this page's watches are counted there (set on accept).
    registry: Interest

    async def connect(self) -> None:
        self.groups_joined: set[str] = set()
        self.delivered: dict[str, int] = {}
        self.queues: set[str] = set()
        self.jobs: set[interest.JobKey] = set()
        self.overview = False
        principal = await from_scope(self.scope)
        if not await allows(read_check(), principal):
            await self.close(code=4403)
            return
        self.socket_kind: ViewerKind = await viewer_kind(principal)
        self.kind = self.socket_kind
        await self.accept()
        self._live_send = _under_session_wrappers(self.base_send)
        follower = live.ensure_started()
        self.registry = live.interest()
        await self._join(("status",))
        state = "down" if follower.redis_ok is False else "ok"
        await self.send_json({"type": "status", "redis": state})

    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any
    ) -> None:
        # A frame that is not JSON text is a client's mistake, not the server's: it is answered,
        # and the socket stays open (Channels' default raises: a traceback and a 1011 close).
        if text_data is None:
            await self.send_json({"type": "error", "error": "expected JSON text, not binary"})
            return
        try:
            content = await self.decode_json(text_data)
        except (ValueError, RecursionError):
            await self.send_json({"type": "error", "error": "expected JSON: this does not parse"})
            return
        await self.receive_json(content, **kwargs)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if not isinstance(content, dict):
            await self.send_json({"type": "error", "error": "expected a JSON object"})
            return
        if content.get("reset"):
            await self._unwatch_all()
        # Rendered for the viewer the page was rendered for (signed by the page's view).
        self.kind = verified_kind(content.get("viewer")) or self.socket_kind
        watch = content.get("watch")
        if watch is None or watch == "status":
            return
        if len(self.groups_joined) >= MAX_WATCHES:
            await self.send_json({"type": "error", "error": "too many watches on one socket"})
            return
        slug, job_id = content.get("queue"), content.get("id")
        follower = live.ensure_started()
        if watch == "overview":
            await self._join(("overview",))
            if not self.overview:
                self.overview = True
                self.registry.watch_overview()
        elif watch == "queue" and _valid(slug):
            await self._join(("queue", slug))  # its counts, rows and progress
            if slug not in self.queues:
                self.queues.add(slug)
                self.registry.watch_queue(slug)
        elif watch == "job" and _valid(slug) and _valid(job_id):
            key = (slug, job_id)
            await self._join(("job", *key))
            if key not in self.jobs:
                self.jobs.add(key)
                self.registry.watch_job(*key)
        else:
            await self.send_json({"type": "error", "error": "unknown watch"})
            return
        follower.wake.set()
        snapshot = follower.snapshot() or await _read_counts()
        if snapshot is not None:
            await self.send_json(snapshot)
        if watch == "queue" and _valid(slug):
            await self._send_list(slug, content)
        elif watch == "job" and _valid(slug) and _valid(job_id):
            await self._send_job(slug, job_id)

    async def disconnect(self, code: int) -> None:
        await self._unwatch_all()
        for group in list(getattr(self, "groups_joined", ())):
            await fanout.hub().leave(group, self._deliver)
        self.groups_joined = set()

    async def _send_list(self, slug: str, spec: dict[str, Any]) -> None:
        """The page's list as Redis holds it now, unless a live change came in meanwhile
        (newer than this read, or as new: the page keeps that one)."""
        group = live.group_name(("queue", slug))
        seen = self.delivered.get(group, 0)
        state = str(spec.get("state") or "waiting")
        page, per_page = _whole(spec.get("page"), 1), _whole(spec.get("per_page"), 50)
        order = "asc" if spec.get("order") == "asc" else "desc"
        kind = self.kind

        async def read() -> str:
            found = await job_page(QueueRef.from_slug(slug), state, page, per_page, order)
            return live_render.list_html(slug, found, kind, PAGE_SIZES)

        try:
            key = (slug, state, page, per_page, order, kind)
            html = await shared_reads.list_reads().get(key, read)
        except SNAPSHOT_ERRORS:
            return  # the status message says when Redis is away; a bad spec shows nothing
        if self.delivered.get(group, 0) == seen:
            await self.send_json({"type": "list", "queue": slug, "html": html})

    async def _send_job(self, slug: str, job_id: str) -> None:
        group = live.group_name(("job", slug, job_id))
        seen = self.delivered.get(group, 0)
        try:
            job = await job_live_view(QueueRef.from_slug(slug), job_id)
        except SNAPSHOT_ERRORS:
            return
        if self.delivered.get(group, 0) == seen:
            message = live_protocol.job_message(slug, job)
            await self.send_json(live_render.render(message, self.kind))

    async def _deliver(self, group: str, text: str) -> None:
        """A live message for this page (from the process's hub, already encoded)."""
        self.delivered[group] = self.delivered.get(group, 0) + 1
        try:
            await self._live_send({"type": "websocket.send", "text": text})
        except Exception:  # the socket closed under us: stop watching now, not never
            await self._unwatch_all()

    async def _join(self, topic: tuple[str, ...]) -> None:
        group = live.group_name(topic)
        if group not in self.groups_joined:
            await fanout.hub().join(group, self._deliver, self.kind)
            self.groups_joined.add(group)

    async def _unwatch_all(self) -> None:
        for slug in getattr(self, "queues", set()):
            self.registry.unwatch_queue(slug)
        for key in getattr(self, "jobs", set()):
            self.registry.unwatch_job(*key)
        if getattr(self, "overview", False):
            self.registry.unwatch_overview()
        self.queues, self.jobs, self.overview = set(), set(), False
        status = live.group_name(("status",))
        for group in list(getattr(self, "groups_joined", ())):
            if group != status:
                await fanout.hub().leave(group, self._deliver)
                self.groups_joined.discard(group)


def _valid(value: Any) -> TypeGuard[str]:
    return isinstance(value, str) and 0 < len(value) <= MAX_ID


def _whole(value: Any, default: int) -> int:
    with contextlib.suppress(TypeError, ValueError):
        return int(value)
    return default


def _under_session_wrappers(send: Any) -> Any:
    """The ASGI send beneath Channels' session middleware, for live messages.

    The session wrapper reads the lazy session's state on every message it passes on, though
    it acts only on HTTP responses; with hundreds of pages, a few messages a second each, that
    was a tenth of the server's fan-out time. The session was resolved when the socket
    connected and a live message never changes it.
    """
    while isinstance(getattr(send, "__self__", None), InstanceSessionWrapper):
        send = send.__self__.real_send
    return send


async def _read_counts() -> live_protocol.CountsMessage | None:
    """Counts for a page whose process has none yet (it started a moment ago, or another
    process reads the event streams): one round trip, as a page load costs."""
    try:
        found = await counts.summaries()
    except Exception:  # Redis away: the status message says so, counts come when it is back
        return None
    return live_protocol.counts_message([counts_entry(s.ref, s.counts, s.paused) for s in found])
