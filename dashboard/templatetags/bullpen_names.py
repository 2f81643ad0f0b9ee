"""Template helpers for names and alerts as text: invisible characters shown, alerts in words."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from django import template
from django.utils import dateformat
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext, pgettext

from dashboard.alerts import messages
from queues.alerts.shown import ACKNOWLEDGED, SILENCED, ShownAlert
from queues.alerts.silences import Hold
from queues.alerts.thresholds import Alert

if TYPE_CHECKING:
    pass

register = template.Library()

# isolates, invisible operators and the byte-order mark.
_INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def _code(char: str) -> str:
    return f"\\u{ord(char):04X}"


@register.filter
def visible(value: Any) -> SafeString:
    """A queue name, job name or id with each invisible or direction-changing character shown
    as ``\\uXXXX`` in a span of its own: ``\\u202Eliame`` cannot pass for "email"."""
    text = str(value)
    if not _INVISIBLE.search(text):
        return conditional_escape(text)
    parts: list[str] = []
    last = 0
    for found in _INVISIBLE.finditer(text):
        parts.append(conditional_escape(text[last : found.start()]))
        parts.append(format_html('<span class="ctrl">{}</span>', _code(found.group())))
        last = found.end()
    parts.append(conditional_escape(text[last:]))
    return mark_safe("".join(parts))  # noqa: S308 - every part escaped above


@register.filter
def visible_text(value: Any) -> str:
    """``visible`` for plain text (a title, a confirmation): the codes without markup."""
    return _INVISIBLE.sub(lambda found: _code(found.group()), str(value))


@register.filter
def alert_label(rule: str) -> str:
    """A rule's short name on an alert badge ("new failure signatures")."""
    return messages.label(rule)


@register.filter
def alert_text(alert: Alert | dict[str, Any]) -> str:
    """What an alert measured, in words, as its notices say it (pages hold alerts as their
    JSON form)."""
    if isinstance(alert, dict):
        # The same numbers as the badge beside it shows (a failure rate keeps its decimal).
        window = alert.get("windowSeconds")
        alert = Alert(
            str(alert["rule"]),
            alert["value"],
            alert["threshold"],
            window_s=None if window is None else int(window),
        )
    return messages.describe(alert)


def _moment(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    moment = datetime.fromtimestamp(seconds, tz=UTC)
    return f"{dateformat.format(moment, pgettext('timestamp format', 'Y-m-d H:i:s'))} UTC"


@register.filter
def hold_text(shown: ShownAlert | dict[str, Any]) -> str:
    """Who holds an alert and until when ("silenced until …, by …"), plain text for a title;
    empty for an alert nobody holds. Pages hold the overview's alerts as JSON, with ``status``
    and ``hold``."""
    if isinstance(shown, dict):
        status, hold = shown.get("status"), Hold.from_json(shown.get("hold") or {})
    else:
        status, hold = shown.status, shown.hold
    if status == SILENCED:
        return gettext("silenced until %(until)s, by %(by)s") % {
            "until": _moment(hold.silenced_until),
            "by": hold.silenced_by or "?",
        }
    if status == ACKNOWLEDGED:
        return gettext("acknowledged by %(by)s at %(at)s") % {
            "by": hold.acknowledged_by,
            "at": _moment(hold.acknowledged_at),
        }
    return ""
