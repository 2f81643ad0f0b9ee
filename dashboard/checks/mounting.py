"""System checks: what a site that mounts Bullpen forgot, said by ``manage.py check``.

Registered by ``DashboardConfig.ready``. Ids: ``bullpen.E…`` stop ``runserver`` and ``migrate``;
``bullpen.W…`` are printed. Silence one with ``SILENCED_SYSTEM_CHECKS`` when it is intended.
Only the Redis reachability check goes over the network, so it runs with ``check --deploy`` alone.

Here: the settings dict and the installed apps; the websocket route and channel layer in
websocket.py, who may sign in and act in
access_settings.py, Redis in redis_reachable.py.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Mapping
from typing import Any

from django.apps import apps
from django.core.checks import CheckMessage, Error, Warning, register

from queues.config import problems as conf_problems
from queues.config import settings as conf

TAG = "bullpen"
# The access checks a site gets unless it names its own (READ_ACCESS, WRITE_ACCESS).
DEFAULT_READER = "dashboard.access.staff_or_basic_reader"
DEFAULT_OPERATOR = "dashboard.access.staff_or_basic_operator"
OPEN_READS = "dashboard.access.anyone"


def usable_config() -> dict[str, Any] | None:
    """The merged settings, or None when they are unusable (``check_settings`` says why)."""
    if any(p.code.startswith("E") for p in conf_problems.problems()):
        return None
    return conf.get_config()


@register(TAG)
def check_settings(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    found: list[CheckMessage] = []
    for problem in conf_problems.problems():
        kind = Error if problem.code.startswith("E") else Warning
        found.append(kind(problem.message, hint=problem.hint or None, id=f"bullpen.{problem.code}"))
    config = usable_config()
    if config is not None:
        found += _nested_keys(config)
    return found


def _nested_keys(config: Mapping[str, Any]) -> list[CheckMessage]:
    """Unknown keys inside the dict settings, which are otherwise ignored without a word."""
    from queues.alerts.thresholds import DEFAULTS as ALERT_RULES
    from queues.bulk.settings import BulkSettings
    from queues.live.settings import LiveSettings

    # (where in BULLPEN, the dict given there, the keys it may hold)
    nested: list[tuple[str, Mapping[str, Any], Iterable[str]]] = [
        ("BULLPEN['LIVE']", config["LIVE"], LiveSettings.__dataclass_fields__),
        ("BULLPEN['ACTIONS']", config["ACTIONS"], BulkSettings.__dataclass_fields__),
        ("BULLPEN['ALERTS']", config["ALERTS"], [*ALERT_RULES, *conf.ALERT_DELIVERY_KEYS]),
        ("BULLPEN['WORKER']", config["WORKER"], conf.DEFAULTS["WORKER"]),
    ]
    for queue, options in config["QUEUE_OPTIONS"].items():
        where = f"BULLPEN['QUEUE_OPTIONS'][{queue!r}]"
        nested.append((where, options, conf_problems.QUEUE_OPTION_KEYS))
        nested.append((f"{where}['alerts']", options.get("alerts") or {}, ALERT_RULES))
    found: list[CheckMessage] = []
    for where, given, keys in nested:
        valid = sorted(keys)
        unknown = sorted(set(given) - set(valid), key=str)
        if unknown:
            found.append(
                Warning(
                    f"Unknown {where} settings {unknown!r}; they are ignored.",
                    hint="Valid settings there: " + ", ".join(valid) + ".",
                    id="bullpen.W016",
                )
            )
    return found


@register(TAG)
def check_installed_apps(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    found: list[CheckMessage] = []
    if importlib.util.find_spec("channels") is None:
        found.append(
            Error(
                "Channels is not installed: Bullpen's live updates are a Channels websocket.",
                hint="pip install channels daphne (both are dependencies of bullpen).",
                id="bullpen.E001",
            )
        )
    missing = [name for name in ("daphne", "channels") if not apps.is_installed(name)]
    if missing:
        found.append(
            Warning(
                f"{' and '.join(repr(m) for m in missing)} not in INSTALLED_APPS: "
                "'manage.py runserver' serves no websockets, so pages never go live.",
                hint='Add "daphne" first in INSTALLED_APPS, and "channels".',
                id="bullpen.W001",
            )
        )
    names = [config.name for config in apps.get_app_configs()]
    if "daphne" in names and "django.contrib.staticfiles" in names:
        if names.index("daphne") > names.index("django.contrib.staticfiles"):
            found.append(
                Warning(
                    "'daphne' comes after 'django.contrib.staticfiles' in INSTALLED_APPS: "
                    "runserver is staticfiles' own, without websockets.",
                    hint='Move "daphne" before "django.contrib.staticfiles".',
                    id="bullpen.W002",
                )
            )
    if not apps.is_installed("queues"):
        found.append(
            Warning(
                "'dashboard' is installed without 'queues': Bullpen's queue layer has no app "
                "(no runqueueworker command, no checks of its own).",
                hint='Add "queues" to INSTALLED_APPS next to "dashboard".',
                id="bullpen.W003",
            )
        )
    if not apps.is_installed("django_htmx"):
        found.append(
            Error(
                "'django_htmx' is not in INSTALLED_APPS: Bullpen's pages load its template "
                "tags and script, and fail to render without it.",
                hint='Add "django_htmx" to INSTALLED_APPS (it is a dependency of bullpen).',
                id="bullpen.E003",
            )
        )
    return found
