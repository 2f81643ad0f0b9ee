"""Who may read. Reads are open in the standalone site unless ``READ_ACCESS`` names a check."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpRequest
from django.utils.module_loading import import_string

from queues.conf import get_config


def _allow_all(request: HttpRequest) -> bool:
    return True


def read_check() -> Callable[[Any], Any]:
    dotted = get_config().get("READ_ACCESS")
    return import_string(dotted) if dotted else _allow_all


def reads_are_open() -> bool:
    """No read check configured: anyone who reaches the site may read."""
    return read_check() is _allow_all


async def can_read(request: HttpRequest) -> bool:
    check = read_check()
    if check is _allow_all:
        return True
    # Host checks touch request.user and the database: run them off the event loop.
    return bool(await sync_to_async(check)(request))


def is_read_only(queue_slug: str | None = None) -> bool:
    config = get_config()
    if config.get("READ_ONLY"):
        return True
    if queue_slug is None:
        return False
    options = config.get("QUEUE_OPTIONS", {}).get(queue_slug, {})
    return bool(options.get("read_only", False))


async def can_read_scope(scope: dict[str, Any]) -> bool:
    """The read check for a websocket: the same callable, given the connection's scope."""
    check = read_check()
    if check is _allow_all:
        return True
    return bool(await sync_to_async(check)(scope))
