"""Template helpers for a job's facts: when it runs, its attempts, dead letters, its URL."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from django import template
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils.http import RFC3986_SUBDELIMS
from django.utils.translation import gettext

from dashboard.pages.converters import NameConverter

if TYPE_CHECKING:
    pass

register = template.Library()


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
