"""Bullpen's one settings dict: ``settings.BULLPEN`` merged over these documented defaults.

Read it with :func:`get_config`; the cache is cleared when a test changes ``BULLPEN`` with
``override_settings``.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

DEFAULTS: dict[str, Any] = {
    # Where the queues live. ``rediss://`` and ``redis://user:password@host`` work.
    "REDIS_URL": "redis://127.0.0.1:6379/0",
    # Key prefixes to look for queues under; the first is the default one, whose queues are
    # addressed by their bare name in URLs (others as ``<prefix>:<name>``).
    "PREFIXES": ["bull"],
    # Queues to show even before they have any key in Redis.
    "QUEUES": [],
    # Per-queue display options: {"email": {"display_name": ..., "description": ...}}.
    "QUEUE_OPTIONS": {},
    # Seconds a discovered queue list is served before it is re-scanned (0: scan every time).
    "DISCOVERY_INTERVAL": 30.0,
    # SCAN batch size used by discovery.
    "SCAN_COUNT": 5000,
    # Characters of a job field (data, return value, stack trace...) shipped in job lists.
    "LIST_FIELD_CAP": 2048,
    # Characters of a job field shown on the job page before it is cut (the API has it whole).
    "DETAIL_FIELD_CAP": 262144,
    # Log lines shown on the job page (newest last).
    "DETAIL_LOG_LINES": 1000,
    # Page sizes accepted by job lists.
    "MIN_PAGE_SIZE": 10,
    "MAX_PAGE_SIZE": 300,
    "DEFAULT_PAGE_SIZE": 50,
    # Path of the live websocket (dashboard.routing.websocket_urlpatterns mounts it).
    "WEBSOCKET_PATH": "/ws/bullpen/",
    # Live updates (queues/follower.py): seconds between count re-reads of a busy queue, the
    # slow full refresh, and the prefix of Bullpen's own keys (the live lease, watcher lists).
    "LIVE": {"counts_interval": 0.25, "full_refresh": 10.0},
    "LIVE_KEY_PREFIX": "bullpen",
    # Access: callables taking a dashboard.principal.Principal. The defaults let staff users
    # with bullpen.view / bullpen.operate (and basic-auth users) read / act.
    "READ_ACCESS": "dashboard.access.staff_or_basic_reader",
    "WRITE_ACCESS": "dashboard.access.staff_or_basic_operator",
    # Basic-auth users: {"name": "<Django password hash from make_password()>"}.
    "BASIC_AUTH_USERS": {},
    # Basic-auth users with plain passwords (the standalone site fills it from its environment).
    "BASIC_AUTH_PLAIN": {},
    # Refuse every action (403), whoever asks; per queue: QUEUE_OPTIONS[q]["read_only"].
    "READ_ONLY": False,
    # Seconds to wait for Redis before a request fails with 503.
    "REDIS_TIMEOUT": 5.0,
}


@cache
def get_config() -> dict[str, Any]:
    user = getattr(settings, "BULLPEN", {}) or {}
    config = {**DEFAULTS, **user}
    # The short form of the SPEC: BULLPEN = {"REDIS_URL": ..., "PREFIX": "bull"}.
    if "PREFIX" in user and "PREFIXES" not in user:
        config["PREFIXES"] = [user["PREFIX"]]
    config["PREFIXES"] = list(config["PREFIXES"])
    return config


def default_prefix() -> str:
    prefixes: list[str] = get_config()["PREFIXES"]
    return prefixes[0] if prefixes else "bull"


@receiver(setting_changed)
def _clear_on_change(*, setting: str, **kwargs: Any) -> None:
    if setting == "BULLPEN":
        get_config.cache_clear()
        from queues import connection, discovery
        from queues.actions import handles

        connection.reset()
        discovery.reset()
        handles.reset()
