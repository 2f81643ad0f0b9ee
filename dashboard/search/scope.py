"""Which queues a search over every queue covers: the one place that decides it, so that rules
about who may read which queue apply to every cross-queue search and its results page alike."""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase

from django.http import HttpRequest

from dashboard.auth.queue_access import QueueAccess, for_request
from queues.reads.discovery import discovered
from queues.reads.keys import QueueRef


def matches_pattern(ref: QueueRef, patterns: Sequence[str]) -> bool:
    """A queue named by one of ``patterns``: its URL name or bare name, exactly or by a glob
    (``tenant-*``, ``mail-?``); no patterns name every queue."""
    if not patterns:
        return True
    return any(
        fnmatchcase(ref.slug, pattern) or fnmatchcase(ref.name, pattern) for pattern in patterns
    )


async def queues_to_search(request: HttpRequest, patterns: Sequence[str]) -> list[QueueRef]:
    """The queues a search by this request covers, in the overview's order of names: those
    its user may view (QUEUE_ACCESS) and ``patterns`` name."""
    return await queues_seen_by(await for_request(request), patterns)


async def queues_seen_by(access: QueueAccess, patterns: Sequence[str]) -> list[QueueRef]:
    """The same for a principal with no request (the MCP server's)."""
    found = await discovered()
    named = sorted(ref for ref in found.queues if matches_pattern(ref, patterns))
    return access.visible(named, lambda ref: ref.slug)
