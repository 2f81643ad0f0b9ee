"""Every route of ``dashboard.urls``, its included route lists walked: the whole pattern under
the mount point, its name, and the names of its arguments."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from django.urls import URLPattern, URLResolver

import dashboard.urls


@dataclass(frozen=True)
class Route:
    pattern: str  # e.g. "api/queues/<bullpen_name:queue>/jobs/"
    name: str | None
    arguments: frozenset[str]


def every_route(
    patterns: Iterable[Any] | None = None, prefix: str = "", arguments: frozenset[str] = frozenset()
) -> Iterator[Route]:
    for entry in dashboard.urls.urlpatterns if patterns is None else patterns:
        pattern = prefix + str(entry.pattern)
        given = arguments | frozenset(entry.pattern.converters)
        if isinstance(entry, URLResolver):
            yield from every_route(entry.url_patterns, pattern, given)
        else:
            assert isinstance(entry, URLPattern)
            yield Route(pattern, entry.name, given)
