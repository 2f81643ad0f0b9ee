"""One name per queue in URLs: the slug its :class:`QueueRef` gives (``orders``, not
``bull:orders``). Access and read-only decisions are made on that name, so another spelling
of the same queue can never slip past a per-queue setting."""

from __future__ import annotations

from django.http import HttpRequest
from django.urls import reverse

from queues.errors import QueueNotFound
from queues.reads.keys import QueueRef


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
