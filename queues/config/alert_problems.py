"""What is wrong with the alert settings: thresholds (for every queue and per queue) and
how notices are delivered."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.core.validators import validate_email

from queues.alerts.names import RATE_MIN_JOBS, RATE_WINDOW_MOST_S, RATE_WINDOW_S
from queues.config.problem import Problem
from queues.config.problem import is_number as _number
from queues.config.settings import ALERT_DELIVERY_KEYS


def threshold_problems(config: Mapping[str, Any]) -> list[Problem]:
    """Alert thresholds, for every queue and per queue: numbers, or None (off)."""
    # A non-dict ALERTS is reported with the other dict settings.
    alerts = config["ALERTS"] if isinstance(config["ALERTS"], Mapping) else None
    given: dict[str, Any] = {}
    if alerts is not None:
        rules = {k: v for k, v in alerts.items() if k not in ALERT_DELIVERY_KEYS}
        given["BULLPEN['ALERTS']"] = rules
    options = config["QUEUE_OPTIONS"]
    for queue, per_queue in options.items() if isinstance(options, Mapping) else ():
        if not isinstance(per_queue, Mapping):
            given[f"BULLPEN['QUEUE_OPTIONS'][{queue!r}]"] = per_queue
        else:
            given[f"BULLPEN['QUEUE_OPTIONS'][{queue!r}]['alerts']"] = per_queue.get("alerts") or {}
    found = _delivery(alerts) if alerts is not None else []
    for where, value in given.items():
        if not isinstance(value, Mapping):
            found.append(Problem("E014", f"{where} must be a dict; it is {value!r}."))
            continue
        for rule, limit in value.items():
            if limit is not None and not (_number(limit) and limit >= 0):
                found.append(
                    Problem(
                        "E014",
                        f"{where}[{rule!r}] must be a number, 0 or more, or None (off); "
                        f"it is {limit!r}.",
                    )
                )
            elif rule == "failure_rate_percent" and limit is not None and limit > 100:
                found.append(
                    Problem(
                        "E014",
                        f"{where}[{rule!r}] is a percentage, from 0 to 100; it is {limit!r}.",
                    )
                )
    return found


def _delivery(alerts: Mapping[str, Any]) -> list[Problem]:
    """How alerts reach people: addresses, webhook URLs, the cooldown, the links' base."""
    found = []

    def bad(key: str, should: str) -> None:
        where = f"BULLPEN['ALERTS'][{key!r}]"
        found.append(Problem("E014", f"{where} {should}; it is {alerts[key]!r}."))

    addresses = alerts.get("EMAIL_TO", [])
    if not _list_of(addresses, _is_address):
        bad("EMAIL_TO", "must be a list of e-mail addresses")
    webhooks = alerts.get("WEBHOOKS", [])
    if not _list_of(webhooks, lambda url: _is_url(url, path=True)):
        bad("WEBHOOKS", "must be a list of http:// or https:// URLs")
    cooldown = alerts.get("COOLDOWN", 0)
    if not _number(cooldown) or cooldown < 0:
        bad("COOLDOWN", "must be a number of seconds, 0 or more")
    renotify = alerts.get("RENOTIFY", 0)
    if not _number(renotify) or renotify < 0:
        bad("RENOTIFY", "must be a number of seconds, 0 (never) or more")
    interval = alerts.get("INTERVAL", 1)
    if not _number(interval) or interval <= 0:
        bad("INTERVAL", "must be a number of seconds above 0")
    window = alerts.get("RATE_WINDOW", RATE_WINDOW_S)
    if not _number(window) or not 60 <= window <= RATE_WINDOW_MOST_S:
        bad("RATE_WINDOW", f"must be a number of seconds from 60 to {RATE_WINDOW_MOST_S}")
    least = alerts.get("RATE_MIN_JOBS", RATE_MIN_JOBS)
    if not isinstance(least, int) or isinstance(least, bool) or least < 0:
        bad("RATE_MIN_JOBS", "must be a whole number of jobs, 0 or more")
    base = alerts.get("LINK_BASE", "")
    if not isinstance(base, str) or (base and not _is_url(base, path=False)):
        bad("LINK_BASE", "must be the site's public origin, as 'https://ops.example.com'")
    elif not base and (addresses or webhooks) and not found:
        found.append(
            Problem(
                "W019",
                "Alert notices link to the queue page by its path alone: "
                "BULLPEN['ALERTS']['LINK_BASE'] is not set.",
                "Set it to the site's public origin, as 'https://ops.example.com'.",
            )
        )
    return found


def _list_of(value: Any, each: Callable[[Any], bool]) -> bool:
    return isinstance(value, (list, tuple)) and all(each(item) for item in value)


def _is_address(value: Any) -> bool:
    try:
        validate_email(value)
    except ValidationError:
        return False
    return True


def _is_url(value: Any, *, path: bool) -> bool:
    """An http(s) URL with a host; without a query or fragment unless ``path``."""
    if not isinstance(value, str):
        return False
    parts = urlsplit(value)
    plain = path or not (parts.query or parts.fragment)
    return parts.scheme in ("http", "https") and bool(parts.hostname) and plain
