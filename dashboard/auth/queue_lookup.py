"""From a URL's queue segment to a queue: its one name, its reference, and whether this
request may see it.

Every queue has one name in URLs: the slug its :class:`QueueRef` gives (``orders``, not
``bull:orders``; ``orders@eu`` when there are several connections, the part after ``@``
naming the connection). Access and read-only decisions are made on that name, so another
spelling of the same queue can never slip past a per-queue setting. A queue this request may
not view answers exactly as one that does not exist.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.urls import reverse

from dashboard.audit import writer
from dashboard.auth import queue_access
from dashboard.auth.principal import Principal, from_request
from queues.errors import QueueNotFound
from queues.reads.discovery import known
from queues.reads.keys import QueueRef
from queues.redis.errors import translate_redis_errors


def canonical(segment: str) -> str | None:
    """The queue's one URL name, or None when the segment names no queue this site reads."""
    try:
        return QueueRef.from_slug(segment).slug
    except QueueNotFound:
        return None


def canonical_url(request: HttpRequest) -> str | None:
    """The same page under the queue's canonical name, or None when ``request`` already
    uses it (or names no queue)."""
    match = request.resolver_match
    segment = match.kwargs.get("queue") if match else None
    if match is None or not isinstance(segment, str):
        return None
    name = canonical(segment)
    if name is None or name == segment:
        return None
    url = reverse(match.view_name, kwargs={**match.kwargs, "queue": name})
    query = request.META.get("QUERY_STRING", "")
    return f"{url}?{query}" if query else url


def url_queue(request: HttpRequest, kwargs: dict[str, Any]) -> str | None:
    """The queue segment of the URL that was asked: the resolved URL's own arguments, which
    hold it however the view is called (a view that hands on to another passes it on as it
    likes); the view's keyword when no URL was resolved (a view called directly)."""
    match = request.resolver_match
    segment = match.kwargs.get("queue") if match is not None else None
    if segment is None:
        segment = kwargs.get("queue")
    return segment if isinstance(segment, str) else None


def unknown_queue(segment: str) -> QueueNotFound:
    """What a hidden queue answers: exactly what a queue that does not exist answers."""
    return QueueNotFound(f"Unknown queue {segment!r}")


async def exists(queue: str) -> bool:
    """Whether ``queue`` (a URL name) names a queue found under its prefix."""
    try:
        ref = QueueRef.from_slug(queue)
    except QueueNotFound:
        return False
    async with translate_redis_errors():
        return await known(ref)


async def queue_ref(slug: str) -> QueueRef:
    """The queue a view reads or acts on; QueueNotFound (404) when there is none."""
    ref = QueueRef.from_slug(slug)
    if not await known(ref):
        raise unknown_queue(slug)
    return ref


async def hidden_queue(request: HttpRequest, kwargs: dict[str, Any]) -> str | None:
    """The queue's one name when the URL names a queue this request's principal may not
    view (QUEUE_ACCESS), or one that does not exist; the refusal of a hidden one is audited
    for an authenticated principal."""
    segment = url_queue(request, kwargs)
    if segment is None or not queue_access.restricted():
        return None
    queue = canonical(segment) or segment
    if (await queue_access.for_request(request)).may_view(queue):
        # A queue that does not exist is answered here too, before the view checks its
        # input: were a missing queue's bad input answered 400 and a hidden one's 404, the
        # answers would tell them apart.
        return None if await exists(queue) else queue
    principal = await from_request(request)
    if principal.authenticated:
        await audit_hidden(request, principal, "view", queue)
    return queue


async def audit_hidden(request: HttpRequest, principal: Principal, action: str, queue: str) -> None:
    """A refused look at (or action on) a hidden queue: 404 to the user, a row for operators."""
    match = request.resolver_match
    job_id = str(match.kwargs.get("job_id") or "") if match else ""
    await writer.record(
        request,
        principal,
        action,
        queue=queue,
        job_ids=[job_id] if job_id else [],
        status=404,
        error=writer.HIDDEN_QUEUE,
        refused=True,
        detail={"path": request.path[:300]},
    )
