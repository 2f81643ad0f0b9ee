"""The live websocket: a page says what it watches; the follower's messages come back.

A page that starts watching gets the present at once (counts, and its list or job read fresh,
unless nothing changed since the page was read, rendered by the page's own partials); live
messages follow. An overview page that says what it shows (``listed``) gets its live parts
rendered on the server (overview_parts.py) instead of every queue's counts. What a page may
ask is bounded (forms/live.py, the ``max_*`` keys of ``LIVE``), and the socket closes once its
user may no longer read (socket_auth.py).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from channels.generic.websocket import AsyncJsonWebsocketConsumer

from dashboard.audit import writer
from dashboard.auth import queue_access
from dashboard.auth.access import allows, read_check
from dashboard.auth.principal import from_scope, refreshed
from dashboard.auth.viewer import ViewerKind, verified_kind, viewer_kind
from dashboard.forms.answer import valid
from dashboard.forms.watch import WatchForm
from dashboard.live import channel_groups, fanout, frames, present, socket_auth, socket_limits
from dashboard.live.overview_parts import OverviewView, view_of
from dashboard.live.present import SNAPSHOT_ERRORS
from dashboard.live.reader_counts import list_unchanged
from dashboard.live.render import UNGROUPED, Grouping
from dashboard.live.session_send import beneath_sessions
from dashboard.live.socket_language import socket_language
from dashboard.services import lifecycle
from queues.errors import BadParameter, QueueNotFound
from queues.live import interest
from queues.live.interest import Interest
from queues.live.settings import LiveSettings
from queues.reads.discovery import known
from queues.reads.flow import members, read_flow
from queues.reads.keys import QueueRef

log = logging.getLogger("bullpen.live")

# The handshake of a client already holding its share of sockets is refused with this code.
TOO_MANY_SOCKETS = 4429
# A re-check that could not run (the database away): the page reconnects and is checked anew.
RECHECK_FAILED = 4500
# Jobs of a flow tree one page follows live besides its own (their states alone).
FLOW_LIVE_NODES = 25
# Reads of a page's list while live rows keep reaching the page meanwhile.
_LIST_READS = 3
_FULL = "this server process watches as many queues and jobs as it may; try again later"


class LiveConsumer(AsyncJsonWebsocketConsumer):  # type: ignore[misc]
    # What this process's pages watch: this page's watches are counted there (set on accept).
    registry: Interest

    async def connect(self) -> None:
        self.groups_joined: set[str] = set()
        self.delivered: dict[str, int] = {}
        self.queues: set[str] = set()
        self.jobs: set[interest.JobKey] = set()
        self.nodes: set[interest.JobKey] = set()  # jobs of the page's flow tree
        self.overview = False
        self.shown: list[str] = []  # the rows this socket's overview shows
        self.grouping: Grouping = UNGROUPED  # and how it groups its queues
        self.view: OverviewView | None = None  # what its overview shows, where it said
        self.client: str | None = None
        self.session_group: str | None = None
        self.recheck: asyncio.Task[None] | None = None
        self.signed_out = False
        self.language = socket_language(self.scope)
        self.limits = LiveSettings.from_config()
        self.principal = principal = await from_scope(self.scope)
        if not await allows(read_check(), principal):
            await self.close(code=socket_auth.SIGNED_OUT)
            return
        client = socket_limits.client_of(principal, self.scope)
        if not socket_limits.enter(client, self.limits.max_sockets_per_client):
            await self.close(code=TOO_MANY_SOCKETS)
            return
        self.client = client
        self.socket_kind: ViewerKind = await viewer_kind(principal)
        self.access = await queue_access.for_principal(principal)
        self.kind = self.socket_kind
        await self.accept()
        self._live_send = beneath_sessions(self.base_send)
        protocol = frames.protocol_beneath(self._live_send)
        self._frames = None if protocol is None else frames.writes_frames(protocol, self._tally)
        await self._follow_sign_out()
        self.recheck = asyncio.ensure_future(self._recheck_every(self.limits.auth_recheck_interval))
        # The services start with the server; where its start is not hooked, with this page.
        lifecycle.start_services()
        running = channel_groups.followers()
        self.registry = channel_groups.interest()
        await self._join(("status",))
        # Only what the readers have found: a reader that has not reached its Redis yet says
        # nothing here, and its first finding reaches the page through the status group.
        if all(follower.redis_ok is True for follower in running):
            await self.send_json({"type": "status", "redis": "ok"})
        for follower in (follower for follower in running if follower.redis_ok is False):
            await self.send_json(
                {"type": "status", "redis": "down", "connection": follower.connection}
            )

    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any
    ) -> None:
        # A frame that is not JSON text is a client's mistake, not the server's: it is answered,
        # and the socket stays open (Channels' default raises: a traceback and a 1011 close).
        if self.signed_out:
            return  # closing: the page hears nothing more
        if text_data is None:
            await self._refuse("expected JSON text, not binary")
            return
        try:
            content = await self.decode_json(text_data)
        except (ValueError, RecursionError):
            await self._refuse("expected JSON: this does not parse")
            return
        await self.receive_json(content, **kwargs)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if not isinstance(content, dict):
            await self._refuse("expected a JSON object")
            return
        try:
            asked = valid(WatchForm(content)).cleaned_data
        except BadParameter as error:
            await self._refuse(str(error))
            return
        if asked["reset"]:
            await self._unwatch_all()
        # Rendered for the viewer the page was rendered for (signed by the page's view).
        self.kind = verified_kind(asked["viewer"]) or self.socket_kind
        watch, slug, list_stands = asked["watch"], "", False
        if watch in ("", "status"):
            return
        if watch == "overview":
            if not self.overview:
                if not self._room_for_one_more():
                    await self._refuse(self._too_many())
                    return
                self.overview = True
                self.registry.watch_overview()
            self.grouping = (asked["group"], asked["delimiter"]) if asked["group"] else UNGROUPED
            self.view = view_of(self.grouping, asked)
            # Sent again whenever the page's list changes (a filter, another page).
            self.registry.unshow(self.shown)
            self.shown = asked["shown"]
            self.registry.show(self.shown)
            await self._join(("overview",))
        else:
            found = await self._known_queue(asked["queue"])
            if found is None:
                return
            slug = found
            first_watch = slug not in self.queues
            if watch == "queue" and not await self._watch_queue(slug):
                return
            # No event of the queue since the page's list was read (checked once its rows'
            # changes reach this socket): it stands. A later ask ("read again") reads it.
            list_stands = first_watch and list_unchanged(slug, asked["list_at"])
            if watch == "job" and not await self._watch_job(slug, asked["id"]):
                return
            if watch == "job" and asked["flow"]:
                await self._watch_flow(slug, asked["id"])
        running = channel_groups.followers()
        for follower in running:
            follower.wake.set()
        only, view = (None, self.view) if watch == "overview" else (slug, None)
        audience = (self.access, self.kind, self.grouping, self.language)
        counts = await present.counts_now(running, only, asked["since"], view, *audience)
        if counts is not None:
            await self.send_json(counts)
        if watch == "queue" and list_stands:
            await self.send_json({"type": "list", "queue": slug, "stands": True})
        elif watch == "queue":
            await self._send_list(slug, asked)
        elif watch == "job":
            await self._send_job(slug, asked["id"])

    async def bullpen_signed_out(self, event: dict[str, Any]) -> None:
        """This socket's session signed out (in any process: socket_auth.py)."""
        await self._sign_out()

    async def disconnect(self, code: int) -> None:
        if self.recheck is not None:
            self.recheck.cancel()  # never awaited here: a re-check may be what closes it
        await self._leave_all()
        if self.session_group is not None and self.channel_layer is not None:
            await self.channel_layer.group_discard(self.session_group, self.channel_name)
        if self.client is not None:
            socket_limits.leave(self.client)
            self.client = None

    # ---- what a page may watch ---------------------------------------------------------------
    async def _refuse(self, why: str) -> None:
        await self.send_json({"type": "error", "error": why})

    def _watching(self) -> int:
        return len(self.queues) + len(self.jobs) + len(self.nodes) + int(self.overview)

    def _room_for_one_more(self) -> bool:
        return self._watching() < self.limits.max_watches

    def _too_many(self) -> str:
        return f"too many watches on one socket (at most {self.limits.max_watches})"

    async def _known_queue(self, slug: str) -> str | None:
        """The queue's one name when this site knows it (discovered, configured, or in Redis);
        otherwise the page is told, and nothing is watched."""
        try:
            ref = QueueRef.from_slug(slug)
            if not self.access.may_view(ref.slug):
                # A queue hidden from this user (QUEUE_ACCESS) is refused as an unknown one.
                if self.principal.authenticated:
                    await writer.record_refused_watch(self.scope, self.principal, ref.slug)
                found = False
            else:
                found = await known(ref)
        except QueueNotFound:
            found = False
        except SNAPSHOT_ERRORS:
            await self._refuse("the queue cannot be looked up now (Redis unreachable)")
            return None
        if not found:
            await self._refuse("no such queue")
            return None
        return ref.slug

    async def _watch_queue(self, slug: str) -> bool:
        """Its counts, rows and progress."""
        if slug not in self.queues:
            if not self._room_for_one_more():
                await self._refuse(self._too_many())
                return False
            if not self.registry.watch_queue(slug):
                await self._refuse(_FULL)
                return False
            self.queues.add(slug)
        await self._join(("queue", slug))
        return True

    async def _watch_job(self, slug: str, job_id: str) -> bool:
        key = (slug, job_id)
        if key not in self.jobs:
            if not self._room_for_one_more():
                await self._refuse(self._too_many())
                return False
            if not self.registry.watch_job(*key):
                await self._refuse(_FULL)
                return False
            self.jobs.add(key)
        await self._join(("job", *key))
        return True

    async def _watch_flow(self, slug: str, job_id: str) -> None:
        """The other jobs of the job's flow tree, breadth first from its root, as many as the
        socket has room for (at most ``FLOW_LIVE_NODES``): their states move on the page's
        tree. Only their states are followed (no log tailed); none is refused aloud."""
        room = min(FLOW_LIVE_NODES, self.limits.max_watches - self._watching())
        if room <= 0:
            return
        try:
            flow = await read_flow(QueueRef.from_slug(slug), job_id, max_nodes=room + 1)
        except SNAPSHOT_ERRORS:
            return
        for key in members(flow)[: room + 1]:
            if key in self.nodes or key == (slug, job_id) or not self.access.may_view(key[0]):
                continue
            if not self._room_for_one_more() or not self.registry.watch_node(*key):
                return
            self.nodes.add(key)
            await self._join(("job", *key))

    # ---- who may still read ------------------------------------------------------------------
    async def _follow_sign_out(self) -> None:
        """A session's socket joins its session's group, which its sign-out tells."""
        key = getattr(self.scope.get("session"), "session_key", None)
        if self.principal.via != "session" or not key or self.channel_layer is None:
            return
        self.session_group = socket_auth.session_group(key)
        await self.channel_layer.group_add(self.session_group, self.channel_name)

    async def _recheck_every(self, seconds: float) -> None:
        while not self.signed_out:
            await asyncio.sleep(seconds)
            try:
                still = await socket_auth.may_still_read(self.principal, self.scope)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("live updates: a socket's user could not be checked", exc_info=True)
                await self.close(code=RECHECK_FAILED)
                return
            if not still:
                await self._sign_out()
            elif queue_access.restricted():
                # Groups and permissions change: the queues it sees follow them.
                now = await refreshed(self.principal, self.scope)
                self.access = await queue_access.for_principal(now)

    async def _sign_out(self) -> None:
        """Tell the page its user may no longer read, and close: it asks for a sign-in."""
        if self.signed_out:
            return
        self.signed_out = True
        await self._leave_all()  # nothing more is sent but this
        text = socket_auth.SIGNED_OUT_TEXT
        await self.send_json({"type": "signed-out", "text": text})
        await self.close(code=socket_auth.SIGNED_OUT, reason=text)

    # ---- what a page is sent -----------------------------------------------------------------
    async def _send_list(self, slug: str, spec: dict[str, Any]) -> None:
        """The page's list as Redis holds it now. A live change that reached the page while
        it was read may be missing from it (a row added by a delta would be swapped away),
        so the list is read again then; it is sent anyway after a few tries, since on a
        queue that changes all the time a list a moment old beats a list never sent (it may
        be the one that fills a gap from before the reader followed the queue)."""
        group = channel_groups.group_name(("queue", slug))
        for _attempt in range(_LIST_READS):
            seen = self.delivered.get(group, 0)
            try:
                html = await present.list_html(slug, spec, self.kind, self.language)
            except SNAPSHOT_ERRORS:
                return  # the status message says when Redis is away; a bad spec shows nothing
            if self.delivered.get(group, 0) == seen:
                break
        await self.send_json({"type": "list", "queue": slug, "html": html})

    async def _send_job(self, slug: str, job_id: str) -> None:
        group = channel_groups.group_name(("job", slug, job_id))
        seen = self.delivered.get(group, 0)
        try:
            rendered = await present.job(slug, job_id, self.kind, self.language)
        except SNAPSHOT_ERRORS:
            return
        if self.delivered.get(group, 0) == seen:
            await self.send_json(rendered)

    def _access(self) -> queue_access.QueueAccess:
        return self.access

    def _view(self) -> OverviewView | None:
        return self.view

    def _grouping(self) -> Grouping:
        return self.grouping

    def _tally(self, group: str) -> None:
        self.delivered[group] = self.delivered.get(group, 0) + 1

    async def _deliver(self, group: str, text: str) -> None:
        """A live message for this page (from the process's hub, already encoded)."""
        self._tally(group)
        try:
            await self._live_send({"type": "websocket.send", "text": text})
        except Exception:  # the socket closed under us: stop watching now, not never
            await self._unwatch_all()

    async def _join(self, topic: tuple[str, ...]) -> None:
        group = channel_groups.group_name(topic)
        if group not in self.groups_joined:
            member = (self.kind, self.language, self._access, self._grouping, self._frames)
            await fanout.hub().join(group, self._deliver, *member, self._view)
            self.groups_joined.add(group)

    async def _leave_all(self) -> None:
        """Stop watching, the status included."""
        await self._unwatch_all()
        for group in list(getattr(self, "groups_joined", ())):
            await fanout.hub().leave(group, self._deliver)
        self.groups_joined = set()

    async def _unwatch_all(self) -> None:
        if not hasattr(self, "registry"):
            return  # refused before it was accepted: it never watched anything
        for slug in getattr(self, "queues", set()):
            self.registry.unwatch_queue(slug)
        for key in getattr(self, "jobs", set()):
            self.registry.unwatch_job(*key)
        for key in getattr(self, "nodes", set()):
            self.registry.unwatch_node(*key)
        if getattr(self, "overview", False):
            self.registry.unwatch_overview()
        self.registry.unshow(getattr(self, "shown", []))
        self.queues, self.jobs, self.overview, self.shown, self.view = set(), set(), False, [], None
        self.nodes = set()
        status = channel_groups.group_name(("status",))
        for group in list(getattr(self, "groups_joined", ())):
            if group != status:
                await fanout.hub().leave(group, self._deliver)
                self.groups_joined.discard(group)
