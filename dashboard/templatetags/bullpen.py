"""Template helpers: times, durations, progress and collapsible JSON. Everything is escaped."""

from __future__ import annotations

import functools
import json
import re
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from django import template
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils import dateformat
from django.utils.formats import get_format, number_format
from django.utils.html import conditional_escape, format_html, format_html_join
from django.utils.http import RFC3986_SUBDELIMS
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext, ngettext, pgettext

from dashboard.alerts import messages
from dashboard.pages.converters import NameConverter
from queues.alerts.thresholds import Alert
from queues.failures.trends import Trend
from queues.reads.keys import STATES

if TYPE_CHECKING:
    from dashboard.pages.notices import Notice

register = template.Library()

_MAX_DEPTH = 40
_MAX_CHILDREN = 500


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
def progress_percent(progress: Any) -> float | None:
    """A number 0-100 from BullMQ progress: a number, or an object with a percentage in it."""
    value: Any = progress
    if isinstance(progress, dict):
        value = next(
            (progress[k] for k in ("percentage", "percent", "pct", "progress") if k in progress),
            None,
        )
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return max(0.0, min(100.0, float(value)))


@register.filter
def compact_json(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@register.filter
def get_item(mapping: Any, key: str) -> Any:
    return mapping.get(key) if isinstance(mapping, dict) else None


def _scalar(value: Any) -> SafeString:
    kind = (
        "null"
        if value is None
        else "bool"
        if isinstance(value, bool)
        else "num"
        if isinstance(value, (int, float))
        else "str"
    )
    return format_html('<span class="j-{}">{}</span>', kind, json.dumps(value, ensure_ascii=False))


def _tree(value: Any, depth: int) -> SafeString:
    if not isinstance(value, (dict, list)) or not value:
        if isinstance(value, (dict, list)):
            return mark_safe("{}" if isinstance(value, dict) else "[]")  # noqa: S308 - constants
        return _scalar(value)
    if depth >= _MAX_DEPTH:
        return _scalar(json.dumps(value, ensure_ascii=False)[:2000])
    items = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
    shown = items[:_MAX_CHILDREN]
    rows = format_html_join(
        "",
        "<li>{}{}</li>",
        (
            (
                format_html('<span class="j-key">{}</span>: ', key)
                if isinstance(value, dict)
                else format_html('<span class="j-idx">{}</span>: ', key),
                _tree(child, depth + 1),
            )
            for key, child in shown
        ),
    )
    more = (
        format_html(
            '<li class="muted">{}</li>',
            gettext("… %(n)s more") % {"n": len(items) - len(shown)},
        )
        if len(items) > len(shown)
        else ""
    )
    if isinstance(value, dict):
        size = ngettext("%(n)s key", "%(n)s keys", len(items)) % {"n": len(items)}
    else:
        size = ngettext("%(n)s item", "%(n)s items", len(items)) % {"n": len(items)}
    brackets = ("{", "}") if isinstance(value, dict) else ("[", "]")
    return format_html(
        '<details class="j-node"{}><summary>{} <span class="muted">{}</span></summary>'
        "<ul>{}{}</ul>{}</details>",
        mark_safe(" open") if depth < 2 else "",
        brackets[0],
        size,
        rows,
        more,
        brackets[1],
    )


@register.filter
def json_tree(value: Any) -> SafeString:
    """Collapsible JSON: nested ``<details>``; every key and value is escaped."""
    return format_html('<div class="json-tree">{}</div>', _tree(value, 0))


@register.simple_tag
def bullpen_connections() -> str:
    """The Redis connections' names, space-separated, when there are several (live.js tells
    one that is down from the others); empty with one."""
    from queues.redis import connections

    return " ".join(connections.names()) if connections.several() else ""


@register.simple_tag(takes_context=True)
def bullpen_ws_path(context: template.Context) -> str:
    """Where the live websocket is routed (``WEBSOCKET_PATH``), with the page's ticket for a
    basic-auth reader (whose browser may not send the credentials with the handshake)."""
    from dashboard.live import ws_ticket
    from queues.config.settings import get_config

    path = str(get_config()["WEBSOCKET_PATH"])
    principal = getattr(context.get("request"), "bullpen_principal", None)
    ticket = ws_ticket.issue(principal) if principal is not None else ""
    return f"{path}?{urlencode({'ticket': ticket})}" if ticket else path


@register.simple_tag(takes_context=True)
def bullpen_notices(context: template.Context) -> list[Notice]:
    """The confirmations waiting for this page (after an action), read once."""
    from dashboard.pages import notices

    request = context.get("request")
    return notices.pending(request) if request is not None else []


@register.simple_tag
def bullpen_sign_out() -> dict[str, str]:
    """How the Sign out control works: where a session user posts, and the name the basic
    credentials script sends."""
    from dashboard.auth.account_views import logout_url
    from dashboard.auth.basic_auth import SIGNED_OUT

    return {"logout_url": logout_url(), "basic_user": SIGNED_OUT}


@register.simple_tag
def spark(points: list[dict[str, Any]], width: int = 120, height: int = 24) -> SafeString:
    """A tiny inline SVG of completed (green) and failed (red) per minute; the style sheet
    recolours the lines for the page's scheme."""
    if not points:
        return mark_safe("")
    top = max(1, *(max(p["completed"], p["failed"]) for p in points))

    def line(key: str) -> str:
        return _polyline([p[key] for p in points], top, width, height)

    return format_html(
        '<svg class="spark" width="{}" height="{}" viewBox="0 0 {} {}" role="img" '
        'aria-label="{}">'
        '<polyline class="done" fill="none" stroke="#1e7b34" stroke-width="1.2" points="{}"/>'
        '<polyline class="failed" fill="none" stroke="#b3261e" stroke-width="1.2" points="{}"/>'
        "</svg>",
        width,
        height,
        width,
        height,
        gettext("completed and failed per minute"),
        line("completed"),
        line("failed"),
    )


@register.simple_tag
def trend_spark(trend: Trend | None, width: int = 96, height: int = 18) -> SafeString:
    """A failure group's last day, failures per quarter hour, as a small inline SVG."""
    if trend is None:
        return mark_safe("")
    points = trend.buckets()
    peak = max(points)
    top = max(1, peak)
    label = ngettext(
        "%(total)s failure in the last day, at most %(peak)s in a quarter hour",
        "%(total)s failures in the last day, at most %(peak)s in a quarter hour",
        trend.total,
    ) % {"total": trend.total, "peak": peak}
    return format_html(
        '<svg class="spark trend" width="{}" height="{}" viewBox="0 0 {} {}" role="img" '
        'aria-label="{}"><title>{}</title>'
        '<polyline class="failed" fill="none" stroke="#b3261e" stroke-width="1.2" points="{}"/>'
        "</svg>",
        width,
        height,
        width,
        height,
        label,
        label,
        _polyline(points, top, width, height),
    )


def _polyline(values: list[int], top: int, width: int, height: int) -> str:
    """An SVG polyline's points for ``values`` scaled to ``top``. A point between two of the
    same height draws nothing: a quiet hour is 2 points, not 60 (the overview shows a hundred
    of these)."""
    step = width / max(1, len(values) - 1)
    ys = [f"{height - 1 - (n / top) * (height - 2):.1f}" for n in values]
    kept = [
        f"{i * step:.1f},{y}"
        for i, y in enumerate(ys)
        if i in (0, len(ys) - 1) or not ys[i - 1] == y == ys[i + 1]
    ]
    return " ".join(kept)


@register.filter
def job_duration(job: Any) -> Any:
    """Milliseconds from processing to finishing, or None (see ``duration``)."""
    from queues.reads.job_fields import job_duration_ms

    return job_duration_ms(job) if isinstance(job, dict) else None


@register.filter
def is_structured(value: Any) -> bool:
    return isinstance(value, (dict, list))


@register.filter
def due_at(job: Any) -> int | None:
    """When a delayed job runs (ms): its delayed-set score when read, else what it was added
    with (``timestamp + delay``)."""
    if not isinstance(job, dict):
        return None
    due = job.get("dueAt")
    if isinstance(due, int) and not isinstance(due, bool):
        return due
    added, delay = job.get("timestamp"), job.get("delay")
    if isinstance(added, int) and isinstance(delay, int) and delay > 0:
        return added + delay
    return None


@register.filter
def audit_summary(entry: Any) -> list[str]:
    """What an audit row's action did (dashboard.audit.summary), phrase by phrase."""
    from dashboard.audit.summary import summary

    return summary(str(getattr(entry, "action", "")), getattr(entry, "detail", None))


@register.filter
def attempts_used(job: Any) -> dict[str, int] | None:
    """For a job whose attempts are all used ({"made", "allowed", "next"}): retrying it plainly
    gives it one more attempt only, as BullMQ counts on from ``made``; else None."""
    if not isinstance(job, dict):
        return None
    made = job.get("attemptsMade")
    opts = job.get("opts")
    allowed = opts.get("attempts") if isinstance(opts, dict) else None
    if not (isinstance(allowed, int) and not isinstance(allowed, bool) and allowed > 0):
        return None
    if not (isinstance(made, int) and not isinstance(made, bool) and made >= allowed):
        return None
    return {"made": made, "allowed": allowed, "next": made + 1}


@register.filter
def succeeded_on(job: Any) -> str:
    """For a completed job whose earlier attempts failed (BullMQ keeps their reason and stack
    traces on it): "succeeded on attempt 2 of 5"; else an empty string."""
    if not isinstance(job, dict) or job.get("state") != "completed":
        return ""
    if not (job.get("failedReason") or job.get("stacktrace")):
        return ""
    made = job.get("attemptsMade")
    opts = job.get("opts")
    allowed = opts.get("attempts") if isinstance(opts, dict) else None
    limited = isinstance(allowed, int) and not isinstance(allowed, bool) and allowed > 0
    if not (isinstance(made, int) and made > 0):
        return gettext("succeeded on a later attempt")
    if limited:
        return gettext("succeeded on attempt %(made)s of %(allowed)s") % {
            "made": made,
            "allowed": allowed,
        }
    return gettext("succeeded on attempt %(made)s") % {"made": made}


@register.filter
def dead_letter(job: Any, queue: Any) -> dict[str, Any] | None:
    """The dead-letter envelope of a job of the dead-letter queue (``queue``: its slug or a
    dict with one), read from the data even when a list cut it; None for other jobs."""
    from queues.reads.dead_letters import is_dead_letter_queue, read_envelope

    slug = queue.get("slug") if isinstance(queue, dict) else queue
    if not isinstance(job, dict) or not is_dead_letter_queue(slug):
        return None
    return read_envelope(job.get("data"))


@register.filter
def is_dead_letter_queue(slug: Any) -> bool:
    """Whether ``slug`` names a dead-letter queue (its page offers to drop settled letters)."""
    from queues.reads.dead_letters import is_dead_letter_queue as named

    return named(slug)


@functools.lru_cache(maxsize=4096)
def _job_url_head(urlconf: str | None, script_prefix: str, slug: str) -> str:
    url = reverse("bullpen:job", args=[slug, "0"], urlconf=urlconf)
    return url[: -len("0/")]


@register.simple_tag
def job_url(slug: str, job_id: Any) -> str:
    """``{% url 'bullpen:job' slug id %}`` for list rows, without resolving the route for every
    row: the queue's part is reversed once, the id is escaped as the route's converter and
    Django's reverse() escape it."""
    head = _job_url_head(get_urlconf(), get_script_prefix(), slug)
    return head + quote(NameConverter().to_url(str(job_id)), safe=RFC3986_SUBDELIMS + "/~:@") + "/"


def _plain_number(value: float, places: int) -> str:
    """A number with at most ``places`` decimals and no trailing zeros, as floatformat:-N
    writes it, without the locale lookups (this runs for every live progress update)."""
    text = f"{value:.{places}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


@register.filter
def percent_value(value: float) -> str:
    return _plain_number(value, 2)


@register.filter
def percent_text(value: float) -> str:
    return f"{round(value):d}"


# Characters a name may hold that show as nothing or turn the text around: C0 and C1 controls,
# zero-width and direction marks, line and paragraph separators, bidi embeddings, overrides and
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
        alert = Alert(str(alert["rule"]), int(alert["value"]), int(alert["threshold"]))
    return messages.describe(alert)


@register.simple_tag
def bullpen_tab_states() -> list[str]:
    """The states a queue page has a tab for (a BullMQ 5 ``paused`` list shows only when full)."""
    return [state for state in STATES if state != "paused"]


@register.simple_tag
def favicon_href() -> str:
    """The icon inlined as a data URI: a browser asks for a linked icon only after the page's
    load, one request more before the page is quiet."""
    return _favicon_data_uri()


@functools.cache
def _favicon_data_uri() -> str:
    from django.contrib.staticfiles import finders

    found = finders.find("bullpen/favicon.svg")
    path = found[0] if isinstance(found, list) else found
    if not path:
        return ""  # the static file is missing: no icon rather than a broken page
    with open(path, encoding="utf-8") as icon:
        svg = " ".join(icon.read().split())
    return "data:image/svg+xml," + quote(svg, safe=":/=,.")
