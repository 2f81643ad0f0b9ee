"""Template helpers for moments and spans: relative and absolute times, durations."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from django import template
from django.utils import dateformat
from django.utils.formats import get_format, number_format
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.timezone import localtime
from django.utils.translation import gettext, pgettext

if TYPE_CHECKING:
    pass

register = template.Library()


def _as_datetime(ms: Any) -> datetime | None:
    if not isinstance(ms, (int, float)) or isinstance(ms, bool) or ms <= 0:
        return None
    try:
        return datetime.fromtimestamp(ms / 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _unit(unit: str) -> str:
    """A time unit's short form in the page's language (app.js gets the same words)."""
    return pgettext("time unit", unit)


def relative(ms: float, now_ms: float) -> str:
    seconds = (now_ms - ms) / 1000
    future = seconds < 0
    seconds = abs(seconds)
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min"), (1, "s")):
        if seconds >= size or unit == "s":
            amount = int(seconds // size)
            pattern = gettext("in {n} {unit}") if future else gettext("{n} {unit} ago")
            return pattern.format(n=amount, unit=_unit(unit))
    return ""


# How English writes a moment (Django's date format letters); other languages choose theirs.
ISO_FORMAT = "Y-m-d H:i:s"


def _absolute(moment: datetime) -> str:
    """The moment to the millisecond, in UTC, as the page's language writes dates."""
    pattern = pgettext("timestamp format", "Y-m-d H:i:s")
    millis = f"{moment.microsecond // 1000:03d}"
    if pattern == ISO_FORMAT:  # the common case, kept cheap for long lists
        return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{millis} UTC"
    return f"{dateformat.format(moment, pattern)}{get_format('DECIMAL_SEPARATOR')}{millis} UTC"


@register.filter
def timestamp(ms: Any) -> SafeString:
    """``<time>`` with the absolute UTC time; app.js keeps the relative text fresh."""
    moment = _as_datetime(ms)
    if moment is None:
        return format_html('<span class="muted">{}</span>', "—" if ms in (None, "") else str(ms))
    absolute = _absolute(moment)
    rel = relative(float(ms), time.time() * 1000)
    # Every part is made here from a number, so there is nothing to escape: plain formatting
    # keeps this cheap for lists that show three times per row.
    return mark_safe(  # noqa: S308
        f'<time datetime="{moment.isoformat()}" data-ms="{int(ms)}" title="{absolute}">'
        f'<span class="abs">{absolute}</span> <span class="rel">{rel}</span></time>'
    )


@register.filter
def minute_clock(ms: Any) -> str:
    """A minute's hour and minute in the site's time zone, as the history charts' axes write
    them ("02:41"); "" for what is not a time."""
    moment = _as_datetime(ms)
    return "" if moment is None else localtime(moment).strftime("%H:%M")


@register.filter
def duration(ms: Any) -> str:
    if not isinstance(ms, (int, float)) or isinstance(ms, bool):
        return "—"
    if ms < 1000:
        return f"{int(ms)} ms"
    if ms < 60_000:
        return f"{number_format(ms / 1000, 1)} {_unit('s')}"
    if ms < 3_600_000:
        return f"{int(ms // 60_000)} {_unit('min')} {int(ms % 60_000 // 1000)} {_unit('s')}"
    return f"{int(ms // 3_600_000)} {_unit('h')} {int(ms % 3_600_000 // 60_000)} {_unit('min')}"


@register.filter
def seconds_span(seconds: Any) -> str:
    """A whole number of seconds in the two largest units: "42 s", "3 min 5 s", "2 d 4 h"."""
    if not isinstance(seconds, int) or isinstance(seconds, bool) or seconds < 0:
        return "—"
    if seconds < 60:
        return f"{seconds} {_unit('s')}"
    if seconds < 3600:
        return f"{seconds // 60} {_unit('min')} {seconds % 60} {_unit('s')}"
    if seconds < 86400:
        return f"{seconds // 3600} {_unit('h')} {seconds % 3600 // 60} {_unit('min')}"
    return f"{seconds // 86400} {_unit('d')} {seconds % 86400 // 3600} {_unit('h')}"


@register.filter
def job_duration(job: Any) -> Any:
    """Milliseconds from processing to finishing, or None (see ``duration``)."""
    from queues.reads.job_fields import job_duration_ms

    return job_duration_ms(job) if isinstance(job, dict) else None
