"""Bullpen's one settings dict: ``settings.BULLPEN`` merged over these documented defaults.

Read it with :func:`get_config`; the cache is cleared when a test changes ``BULLPEN`` with
``override_settings``. A module that keeps state built from these settings (clients, the queue
list) registers its own reset with :func:`on_change`; this module imports none of them.
What can be wrong with the dict is said by :mod:`queues.config.problems`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any, TypeVar

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

DEFAULTS: dict[str, Any] = {
    # Where the queues live. ``rediss://`` and ``redis://user:password@host`` work.
    "REDIS_URL": "redis://127.0.0.1:6379/0",
    # Several Redis servers under names, the first the default (queues/redis/connections.py):
    # {"eu": {"URL": "redis://…"}, "us": {"URL": "…"}}. Empty: REDIS_URL alone, as "default".
    "CONNECTIONS": {},
    # Key prefixes to look for queues under; the first is the default one, whose queues are
    # addressed by their bare name in URLs (others as ``<prefix>:<name>``).
    "PREFIXES": ["bull"],
    # Queues to show even before they have any key in Redis.
    "QUEUES": [],
    # Per-queue display options: {"email": {"display_name": ..., "description": ...}}.
    "QUEUE_OPTIONS": {},
    # What separates the parts of a queue's name (``t0042-mail``): the overview groups queues
    # by the part before it or after it.
    "GROUP_DELIMITER": "-",
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
    # The header's language menu, shown where the site routes Django's set_language view;
    # False hides it (the site chooses the language its own way).
    "LANGUAGE_SWITCHER": True,
    # Live updates (queues/live/follower.py): seconds between count re-reads of a busy queue, the
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
    # Scopes of basic-auth users, named by QUEUE_ACCESS rules as "scope:<name>":
    # {"alice": ["tenant42", "billing"]}.
    "BASIC_AUTH_SCOPES": {},
    # Per-queue access (dashboard/auth/queue_access_rules.py): a list of rules, the first whose
    # "QUEUES" glob matches a queue deciding who may "VIEW" and "OPERATE" it; a queue no rule
    # matches is hidden. None: every queue is open to whoever READ_ACCESS / WRITE_ACCESS let in.
    "QUEUE_ACCESS": None,
    # Refuse every action (403), whoever asks; per queue: QUEUE_OPTIONS[q]["read_only"].
    "READ_ONLY": False,
    # Bearer token for /metrics (Prometheus); empty: metrics are off.
    "METRICS_TOKEN": "",
    # Newest completed jobs per queue whose run time feeds /metrics' duration histogram.
    "METRICS_DURATION_SAMPLE": 100,
    # /metrics' history histograms (bullpen_job_wait_seconds, bullpen_job_run_seconds) per job
    # name as well as per queue (names can be many: each is a series).
    "METRICS_PER_JOB_NAME": False,
    # The live reader records job history (queues/history/): counts, wait and run times per
    # queue and job name, kept 90 days under LIVE_KEY_PREFIX. It then reads the event streams
    # whether or not a page is open.
    "HISTORY_RECORDING": True,
    # Alert thresholds for every queue (see queues/alerts/thresholds.py);
    # QUEUE_OPTIONS[q]["alerts"] per queue.
    # Also how alerts reach people (ALERT_DELIVERY_KEYS; queues/alerts/watch.py): "EMAIL_TO" and
    # "WEBHOOKS" (lists), "COOLDOWN" (900 s per queue and rule), "INTERVAL" (30 s between
    # evaluations), "LINK_BASE" (the site's public origin, for links to queue pages).
    "ALERTS": {},
    # Newest failed jobs read to build failure groups.
    "FAILURE_GROUP_BUDGET": 10000,
    # Seconds a failed tab waits for its failure groups to show them above its list; past it
    # (or 0) they load after the page into a closed fold.
    "FAILURE_GROUPS_WAIT": 0.25,
    # Jobs one search reads when the request names no budget (never more than 1,000,000).
    "SEARCH_BUDGET": 100_000,
    # Characters of each job field a search reads and matches against.
    "SEARCH_FIELD_CAP": 16384,
    # Bytes one search's answer streams at most; it then ends with an "error" line saying so.
    "SEARCH_STREAM_MAX_BYTES": 16 * 1024 * 1024,
    # Job field paths masked before anything leaves the server (queues/reads/redaction.py):
    # ["data.password", "data.*.token", "returnvalue.apiKey", "**.secret"].
    "REDACT": [],
    # Seconds to wait for Redis before a request fails with 503.
    "REDIS_TIMEOUT": 5.0,
    # Seconds a cancel request waits for the job's worker to cancel it before answering 409.
    "CANCEL_WAIT": 5.0,
    # The worker runner (``manage.py runqueueworker``, queues/runner/), merged key by key:
    # modules whose @job_handler decorators register handlers; handlers by dotted path per
    # queue ({"email": "app.jobs.send"} or {"email": {"handler": "app.jobs.send",
    # "concurrency": 10}}); seconds SIGTERM/SIGINT wait for in-flight jobs; the queue keeping
    # copies of jobs whose last attempt failed (under the first prefix); the resident memory
    # (MiB) past which a worker process drains and exits to be restarted (None: no ceiling).
    "WORKER": {
        "modules": [],
        "handlers": {},
        "shutdown_timeout": 30.0,
        "dead_letter_queue": "dead-letter",
        "max_memory_mb": None,
    },
    # The MCP server (``manage.py bullpen_mcp``, dashboard/mcp/): "ACTIONS" adds the retry,
    # retry-group, pause and resume tools; "USER" is who it acts as (a Django user of that
    # name lends it groups and permissions for QUEUE_ACCESS), "SCOPES" what rules name as
    # "scope:<name>". Merged key by key.
    "MCP": {"ACTIONS": False, "USER": "mcp", "SCOPES": []},
    # Bulk actions, run by the bulk-action executor (queues/bulk/): overrides of
    # queues.bulk.settings.BulkSettings (documented in docs/configuration.md).
    "ACTIONS": {},
}

# Keys of ALERTS that say how alerts are delivered or measured; every other key is a rule.
ALERT_DELIVERY_KEYS = (
    "EMAIL_TO",
    "WEBHOOKS",
    "COOLDOWN",
    "INTERVAL",
    "RENOTIFY",
    "LINK_BASE",
    "RATE_WINDOW",
    "RATE_MIN_JOBS",
)


@cache
def get_config() -> dict[str, Any]:
    user = getattr(settings, "BULLPEN", {}) or {}
    config = {**DEFAULTS, **user}
    # The short form: BULLPEN = {"REDIS_URL": ..., "PREFIX": "bull"}.
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
