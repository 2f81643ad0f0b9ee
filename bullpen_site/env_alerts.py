"""The standalone site's alert thresholds and timings, read from environment text.

``ALERT_THRESHOLDS="waiting=5000 failure_rate_percent=10 RENOTIFY=3600 delayed=None"`` sets keys of
``BULLPEN["ALERTS"]`` (any rule, and ``INTERVAL``, ``COOLDOWN``, ``RENOTIFY``, ``RATE_WINDOW``,
``RATE_MIN_JOBS``); ``None`` turns a rule off. A value that is not a number is kept as it was
written, for the system checks to refuse by its key (the site does not start); an item that is
not ``key=value`` stops the site here, with the variable's name.
"""

from __future__ import annotations

from bullpen_site.env_access import BadEnvironment

# Given by variables of their own (ALERT_EMAIL_TO, ALERT_WEBHOOK_URL, ALERT_LINK_BASE).
_OWN_VARIABLES = ("EMAIL_TO", "WEBHOOKS", "LINK_BASE")


def thresholds(text: str) -> dict[str, int | float | str | None]:
    """``"waiting=5000 delayed=None COOLDOWN=1.5"`` → ``{"waiting": 5000, "delayed": None,
    "COOLDOWN": 1.5}``."""
    found: dict[str, int | float | str | None] = {}
    for item in text.split():
        key, sep, value = item.partition("=")
        if not (sep and key and value):
            raise BadEnvironment(f"ALERT_THRESHOLDS: {item!r} is not <key>=<value>")
        if key in _OWN_VARIABLES:
            raise BadEnvironment(f"ALERT_THRESHOLDS: {key} is set by ALERT_{key} instead")
        found[key] = _value(value)
    return found


def _value(text: str) -> int | float | str | None:
    if text == "None":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text
