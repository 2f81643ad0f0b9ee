"""The live websocket: a page says what it watches; the follower's messages come back."""

from __future__ import annotations

import time
from typing import Any

from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.sessions import InstanceSessionWrapper

from dashboard import fanout, live
from dashboard.access import allows, read_check
from dashboard.principal import from_scope
from queues import counts, interest
from queues.follower import counts_entry

MAX_WATCHES = 50


class LiveConsumer(AsyncJsonWebsocketConsumer):  # type: ignore[misc]
    async def connect(self) -> None:
        self.groups_joined: set[str] = set()
        self.queues: set[str] = set()
        self.jobs: set[interest.JobKey] = set()
        self.overview = False
        if not await allows(read_check(), await from_scope(self.scope)):
            await self.close(code=4403)
            return
        await self.accept()
        self._live_send = _under_session_wrappers(self.base_send)
        follower = live.ensure_started()
        await self._join(("status",))
        state = "down" if follower.redis_ok is False else "ok"
        await self.send_json({"type": "status", "redis": state})

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if not isinstance(content, dict):
            await self.send_json({"type": "error", "error": "expected a JSON object"})
            return
        if content.get("reset"):
            await self._unwatch_all()
        watch = content.get("watch")
        if watch is None:
            return
        if len(self.groups_joined) >= MAX_WATCHES:
            await self.send_json({"type": "error", "error": "too many watches on one socket"})
            return
        follower = live.ensure_started()
        if watch == "overview":
            await self._join(("overview",))
            if not self.overview:
                self.overview = True
                interest.local.watch_overview()
        elif watch == "queue" and isinstance(content.get("queue"), str):
            slug = content["queue"]
            await self._join(("queue", slug))  # its counts, rows and progress
            if slug not in self.queues:
                self.queues.add(slug)
                interest.local.watch_queue(slug)
        elif (
            watch == "job"
            and isinstance(content.get("queue"), str)
            and isinstance(content.get("id"), str)
        ):
            key = (content["queue"], content["id"])
            await self._join(("job", *key))
            if key not in self.jobs:
                self.jobs.add(key)
                interest.local.watch_job(*key)
        else:
            await self.send_json({"type": "error", "error": "unknown watch"})
            return
        follower.wake.set()
        snapshot = follower.snapshot() or await _read_snapshot()
        if snapshot is not None:
            await self.send_json(snapshot)

    async def disconnect(self, code: int) -> None:
        await self._unwatch_all()
        for group in list(getattr(self, "groups_joined", ())):
            await fanout.hub().leave(group, self._deliver)
        self.groups_joined = set()

    async def _deliver(self, text: str) -> None:
        """A live message for this page (from the process's hub, already encoded)."""
        try:
            await self._live_send({"type": "websocket.send", "text": text})
        except Exception:  # the socket closed under us: stop watching now, not never
            await self._unwatch_all()

    async def _join(self, topic: tuple[str, ...]) -> None:
        group = live.group_name(topic)
        if group not in self.groups_joined:
            await fanout.hub().join(group, self._deliver)
            self.groups_joined.add(group)

    async def _unwatch_all(self) -> None:
        for slug in getattr(self, "queues", set()):
            interest.local.unwatch_queue(slug)
        for key in getattr(self, "jobs", set()):
            interest.local.unwatch_job(*key)
        if getattr(self, "overview", False):
            interest.local.unwatch_overview()
        self.queues, self.jobs, self.overview = set(), set(), False
        status = live.group_name(("status",))
        for group in list(getattr(self, "groups_joined", ())):
            if group != status:
                await fanout.hub().leave(group, self._deliver)
                self.groups_joined.discard(group)


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


async def _read_snapshot() -> dict[str, Any] | None:
    """Counts for a page whose process has none yet (it started a moment ago, or another
    process reads the event streams): one round trip, as a page load costs."""
    try:
        found = await counts.summaries()
    except Exception:  # Redis away: the status message says so, counts come when it is back
        return None
    queues = [counts_entry(s.ref, s.counts, s.paused) for s in found]
    return {"type": "counts", "queues": queues, "at": int(time.time() * 1000)}
