"""Bullpen's one settings dict: ``settings.BULLPEN`` merged over these documented defaults.

Read it with :func:`get_config`; the cache is cleared when a test changes ``BULLPEN`` with
``override_settings``. A module that keeps state built from these settings (clients, the queue
list) registers its own reset with :func:`on_change`; this module imports none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from difflib import get_close_matches
from functools import cache
from typing import Any, TypeVar
from urllib.parse import urlsplit

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
    "LIVE": {},  # overrides of queues.follower.LiveSettings (documented in docs/configuration.md)
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
    # Bearer token for /metrics (Prometheus); empty: metrics are off.
    "METRICS_TOKEN": "",
    # Newest completed jobs per queue whose run time feeds /metrics' duration histogram.
    "METRICS_DURATION_SAMPLE": 100,
    # Alert thresholds for every queue (see queues/alerts.py); QUEUE_OPTIONS[q]["alerts"] per queue.
    "ALERTS": {},
    # Newest failed jobs read to build failure groups.
    "FAILURE_GROUP_BUDGET": 10000,
    # Jobs one search reads when the request names no budget (never more than 1,000,000).
    "SEARCH_BUDGET": 100_000,
    # Characters of each job field a search reads and matches against.
    "SEARCH_FIELD_CAP": 16384,
    # Seconds to wait for Redis before a request fails with 503.
    "REDIS_TIMEOUT": 5.0,
    # The worker runner (``manage.py runqueueworker``, queues/runner/), merged key by key:
    # modules whose @job_handler decorators register handlers; handlers by dotted path per
    # queue ({"email": "app.jobs.send"} or {"email": {"handler": "app.jobs.send",
    # "concurrency": 10}}); seconds SIGTERM/SIGINT wait for in-flight jobs; the queue keeping
    # copies of jobs whose last attempt failed (under the first prefix).
    "WORKER": {
        "modules": [],
        "handlers": {},
        "shutdown_timeout": 30.0,
        "dead_letter_queue": "dead-letter",
    },
    # Bulk actions run in the background (queues/background/): overrides of
    # queues.background.settings.BackgroundSettings (documented in docs/configuration.md).
    "ACTIONS": {},
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


Reset = TypeVar("Reset", bound=Callable[[], None])

# Resets of state built from the settings, each registered by the module that owns the state.
_resets: list[Callable[[], None]] = []


def on_change(reset: Reset) -> Reset:
    """Call ``reset`` whenever ``BULLPEN`` changes (a decorator for a module's own reset)."""
    _resets.append(reset)
    return reset


@receiver(setting_changed)
def _clear_on_change(*, setting: str, **kwargs: Any) -> None:
    if setting == "BULLPEN":
        get_config.cache_clear()
        for reset in _resets:
            reset()


# ---- validation (read by dashboard/checks.py, which turns problems into system checks) ------

# Keys accepted besides DEFAULTS': the short form of PREFIXES.
ALIASES = ("PREFIX",)
_POSITIVE = (
    "SCAN_COUNT",
    "LIST_FIELD_CAP",
    "DETAIL_FIELD_CAP",
    "REDIS_TIMEOUT",
    "FAILURE_GROUP_BUDGET",
    "SEARCH_BUDGET",
    "SEARCH_FIELD_CAP",
)
_NOT_NEGATIVE = ("DISCOVERY_INTERVAL", "DETAIL_LOG_LINES", "METRICS_DURATION_SAMPLE")
_MAPPINGS = (
    "QUEUE_OPTIONS",
    "BASIC_AUTH_USERS",
    "BASIC_AUTH_PLAIN",
    "LIVE",
    "ALERTS",
    "WORKER",
    "ACTIONS",
)
_PAGE_SIZES = ("MIN_PAGE_SIZE", "DEFAULT_PAGE_SIZE", "MAX_PAGE_SIZE")
# What QUEUE_OPTIONS may say about one queue.
QUEUE_OPTION_KEYS = ("display_name", "description", "read_only", "alerts")


@dataclass(frozen=True)
class Problem:
    """A setting that cannot work as given. ``code`` is its check id: E… errors, W… warnings."""

    code: str
    message: str
    hint: str = ""


def problems() -> list[Problem]:
    """What is wrong with ``settings.BULLPEN``; an empty list when it can be used."""
    user = getattr(settings, "BULLPEN", {}) or {}
    if not isinstance(user, Mapping):
        return [Problem("E010", "BULLPEN must be a dict.", "BULLPEN = {'REDIS_URL': ..., ...}")]
    found = _unknown_keys(user)
    if "PREFIX" in user and "PREFIXES" in user:
        found.append(
            Problem("W014", "BULLPEN has both PREFIX and PREFIXES; PREFIX is ignored.", "Keep one.")
        )
    config = {**DEFAULTS, **user}
    if "PREFIX" in user and "PREFIXES" not in user:
        config["PREFIXES"] = [user["PREFIX"]]
    prefix_problems = _prefixes(config["PREFIXES"])
    found += prefix_problems
    if not prefix_problems:
        found += _queue_names(config, list(config["PREFIXES"]))
    found += _values(config)
    return found


def _unknown_keys(user: Mapping[str, Any]) -> list[Problem]:
    valid = sorted([*DEFAULTS, *ALIASES])
    found = []
    for key in sorted(set(user) - set(valid), key=str):
        close = get_close_matches(str(key), valid, n=1)
        guess = f" Did you mean {close[0]!r}?" if close else ""
        found.append(
            Problem(
                "W013",
                f"Unknown BULLPEN setting {key!r}; it is ignored.{guess}",
                "Valid settings: " + ", ".join(valid) + ".",
            )
        )
    return found


def _prefixes(prefixes: Any) -> list[Problem]:
    if isinstance(prefixes, str) or not isinstance(prefixes, (list, tuple)) or not prefixes:
        return [
            Problem(
                "E011",
                "BULLPEN['PREFIXES'] must be a non-empty list of key prefixes.",
                "BullMQ's default prefix is 'bull': PREFIXES = ['bull'].",
            )
        ]
    bad = [p for p in prefixes if not isinstance(p, str) or not p]
    if bad:
        return [Problem("E011", f"BULLPEN['PREFIXES'] holds invalid prefixes: {bad!r}.")]
    return []


def _queue_names(config: Mapping[str, Any], prefixes: list[str]) -> list[Problem]:
    found = []
    queues, options = config["QUEUES"], config["QUEUE_OPTIONS"]
    if isinstance(queues, str) or not isinstance(queues, (list, tuple)):
        return [Problem("E014", "BULLPEN['QUEUES'] must be a list of queue names.")]
    for name in queues:
        reason = _slug_problem(name, prefixes)
        if reason:
            found.append(Problem("E012", f"BULLPEN['QUEUES'] entry {name!r}: {reason}", _SLUG_HINT))
    for name in options if isinstance(options, Mapping) else ():
        reason = _slug_problem(name, prefixes)
        if reason:
            found.append(
                Problem("W015", f"BULLPEN['QUEUE_OPTIONS'] key {name!r}: {reason}", _SLUG_HINT)
            )
    return found


_SLUG_HINT = (
    "Name a queue under the first prefix by its name ('email') and one under another "
    "configured prefix as '<prefix>:<name>' ('other:email')."
)


def _slug_problem(slug: Any, prefixes: list[str]) -> str:
    if not isinstance(slug, str) or not slug:
        return "a queue name must be a non-empty string."
    prefix, sep, name = slug.rpartition(":")
    if not sep:
        return ""
    if not name:
        return "the queue name after the last ':' is empty."
    if prefix not in prefixes:
        # BullMQ refuses ':' in queue names, so the part before the last ':' must be a prefix.
        return f"BullMQ queue names cannot contain ':', and {prefix!r} is not one of PREFIXES."
    return ""


def _values(config: Mapping[str, Any]) -> list[Problem]:
    found = []

    def bad(key: str, should: str) -> None:
        found.append(Problem("E014", f"BULLPEN[{key!r}] {should}; it is {config[key]!r}."))

    url = config["REDIS_URL"]
    if not isinstance(url, str) or urlsplit(url).scheme not in ("redis", "rediss", "unix"):
        bad("REDIS_URL", "must be a redis://, rediss:// or unix:// URL")
    for key in _POSITIVE:
        if not _number(config[key]) or config[key] <= 0:
            bad(key, "must be a number above 0")
    for key in _NOT_NEGATIVE:
        if not _number(config[key]) or config[key] < 0:
            bad(key, "must be a number, 0 or more")
    for key in _MAPPINGS:
        if not isinstance(config[key], Mapping):
            bad(key, "must be a dict")
    options = config["QUEUE_OPTIONS"]
    for queue, given in options.items() if isinstance(options, Mapping) else ():
        if not isinstance(given, Mapping) or not isinstance(given.get("alerts") or {}, Mapping):
            found.append(
                Problem(
                    "E014",
                    f"BULLPEN['QUEUE_OPTIONS'][{queue!r}] must be a dict (its 'alerts' a dict "
                    f"too); it is {given!r}.",
                )
            )
    if not isinstance(config["METRICS_TOKEN"], str):
        bad("METRICS_TOKEN", "must be a string (empty: metrics off)")
    if not isinstance(config["LIVE_KEY_PREFIX"], str) or not config["LIVE_KEY_PREFIX"]:
        bad("LIVE_KEY_PREFIX", "must be a non-empty string")
    if not isinstance(config["READ_ONLY"], bool):
        bad("READ_ONLY", "must be True or False")
    path = config["WEBSOCKET_PATH"]
    if not isinstance(path, str) or not path.startswith("/") or not path.endswith("/"):
        bad("WEBSOCKET_PATH", "must be a path starting and ending with '/'")
    sizes = [config[key] for key in _PAGE_SIZES]
    if not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in sizes):
        found.append(
            Problem(
                "E013",
                "MIN_PAGE_SIZE, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE must be whole numbers above 0.",
            )
        )
    elif not sizes[0] <= sizes[1] <= sizes[2]:
        found.append(
            Problem(
                "E013",
                f"Page sizes are inconsistent: MIN_PAGE_SIZE {sizes[0]}, DEFAULT_PAGE_SIZE "
                f"{sizes[1]}, MAX_PAGE_SIZE {sizes[2]}.",
                "They must satisfy MIN_PAGE_SIZE <= DEFAULT_PAGE_SIZE <= MAX_PAGE_SIZE.",
            )
        )
    return found


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
