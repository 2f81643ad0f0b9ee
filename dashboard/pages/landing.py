"""After an action from a page: where the person lands, and what that page confirms.

The page the action came from is reloaded, unless the action destroyed what it shows: a
removed job's page would answer 404, so removing a job lands on its queue's list at the tab it
was in; obliterating a queue lands on the overview; replaying a dead letter (which removes it)
lands on the job it became. The JSON answer stays the same for every client: htmx reads only
the ``HX-Refresh`` / ``HX-Redirect`` header.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext, gettext_lazy, ngettext, ngettext_lazy

from dashboard.pages import notices
from queues.actions.result import ActionResult
from queues.reads.keys import STATES

# Job ids and queue names are untrusted and may be long: a confirmation shows at most this much
# of one (pages escape it).
_MAX_NAME = 80

# Whole sentences, so that each language can order its words: job and queue names, ids and
# counts are filled in.
_JOB_DONE = {
    "remove": gettext_lazy("Job %(job)s removed"),
    "retry": gettext_lazy("Job %(job)s retried"),
    "promote": gettext_lazy("Job %(job)s promoted"),
    "update-data": gettext_lazy("Job %(job)s: data updated"),
    "add": gettext_lazy("Job %(job)s added"),
}
_JOBS_REMOVED = ngettext_lazy("%(count)s job removed", "%(count)s jobs removed", "count")
_JOBS_RETRIED = ngettext_lazy("%(count)s job retried", "%(count)s jobs retried", "count")
_JOBS_PROMOTED = ngettext_lazy("%(count)s job promoted", "%(count)s jobs promoted", "count")
_JOBS_DONE = {
    "bulk-remove": _JOBS_REMOVED,
    "remove-group": _JOBS_REMOVED,
    "remove-matches": _JOBS_REMOVED,
    "bulk-retry": _JOBS_RETRIED,
    "retry-group": _JOBS_RETRIED,
    "retry-all": _JOBS_RETRIED,
    "retry-matches": _JOBS_RETRIED,
    "bulk-promote": _JOBS_PROMOTED,
    "promote-all": _JOBS_PROMOTED,
    "promote-matches": _JOBS_PROMOTED,
}
_QUEUE_DONE = {
    "pause": gettext_lazy("Queue %(queue)s paused"),
    "resume": gettext_lazy("Queue %(queue)s resumed"),
    "obliterate": gettext_lazy("Queue %(queue)s obliterated"),
}


def _concurrency_done(queue: str, detail: dict[str, Any]) -> str:
    concurrency = detail.get("concurrency")
    if concurrency is None:
        return gettext("Queue %(queue)s: global concurrency removed") % {"queue": queue}
    return gettext("Queue %(queue)s: global concurrency set to %(n)s") % {
        "queue": queue,
        "n": concurrency,
    }


def _rate_limit_done(queue: str, detail: dict[str, Any]) -> str:
    limit = detail.get("rateLimit")
    if not isinstance(limit, dict):
        return gettext("Queue %(queue)s: rate limit removed") % {"queue": queue}
    return gettext("Queue %(queue)s: rate limit set to %(max)s per %(duration)s ms") % {
        "queue": queue,
        "max": limit.get("max"),
        "duration": limit.get("duration"),
    }


def _release_done(queue: str, detail: dict[str, Any]) -> str:
    if detail.get("released"):
        return gettext("Queue %(queue)s: rate limit released") % {"queue": queue}
    return gettext("Queue %(queue)s: no rate limit was in force") % {"queue": queue}


_LIMITS_DONE: dict[str, Callable[[str, dict[str, Any]], str]] = {
    "concurrency": _concurrency_done,
    "rate-limit": _rate_limit_done,
    "rate-limit-release": _release_done,
}


def _retry_done(job: str, detail: dict[str, Any]) -> str:
    allowed, made = detail.get("attempts"), detail.get("attemptsMade")
    if detail.get("resetAttempts") and isinstance(allowed, int):
        return gettext("Job %(job)s retried with fresh attempts: up to %(allowed)s") % {
            "job": job,
            "allowed": allowed,
        }
    if detail.get("exhausted") and isinstance(made, int):
        return gettext(
            "Job %(job)s retried for one more attempt (%(next)s of %(allowed)s): its "
            "attempts were used"
        ) % {"job": job, "next": made + 1, "allowed": allowed}
    return str(_JOB_DONE["retry"]) % {"job": job}


def _name(value: object) -> str:
    text = str(value)
    return text if len(text) <= _MAX_NAME else text[: _MAX_NAME - 1] + "…"


def _with_skipped(text: str, detail: dict[str, Any]) -> str:
    skipped = [_name(slug) for slug in detail.get("skipped") or []]
    if not skipped:
        return text
    return gettext("%(text)s; read-only, skipped: %(skipped)s") % {
        "text": text,
        "skipped": ", ".join(skipped),
    }


def confirmation(result: ActionResult) -> str:
    """What the landing page says about ``result``, as plain text, in the page's language."""
    action, detail, count = result.action, result.detail, result.count
    job = _name(result.job_ids[0]) if result.job_ids else ""
    queue = _name(result.queue or "")
    scheduler = _name(detail.get("scheduler", ""))
    if action == "retry" and job:
        return _retry_done(job, detail)
    if action in _JOB_DONE and job:
        return str(_JOB_DONE[action]) % {"job": job}
    if action in _JOBS_DONE:
        text = _JOBS_DONE[action] % {"count": count}
        refused = detail.get("results") or {}
        if refused:
            return gettext("%(text)s, %(refused)s refused") % {
                "text": text,
                "refused": len(refused),
            }
        return text
    if action in _QUEUE_DONE:
        return str(_QUEUE_DONE[action]) % {"queue": queue}
    if action == "duplicate":
        return gettext("Job %(job)s duplicated as job %(new)s") % {
            "job": job,
            "new": _name(detail.get("newJobId", "?")),
        }
    if action == "priority":
        return gettext("Job %(job)s: priority set to %(priority)s") % {
            "job": job,
            "priority": detail.get("priority"),
        }
    if action == "clean":
        return ngettext(
            "%(count)s job cleaned from %(state)s", "%(count)s jobs cleaned from %(state)s", count
        ) % {"count": count, "state": _name(detail.get("state", ""))}
    if action == "empty":
        return ngettext(
            "Queue %(queue)s emptied: %(count)s job removed",
            "Queue %(queue)s emptied: %(count)s jobs removed",
            count,
        ) % {"queue": queue, "count": count}
    if action in _LIMITS_DONE:
        return _LIMITS_DONE[action](queue, detail)
    if action == "reschedule" and job:
        return gettext("Job %(job)s rescheduled") % {"job": job}
    if action == "remove-unprocessed-children" and job:
        return ngettext(
            "Job %(job)s: %(count)s unprocessed child removed",
            "Job %(job)s: %(count)s unprocessed children removed",
            count,
        ) % {"job": job, "count": count}
    if action == "remove-scheduler":
        return gettext("Job scheduler %(scheduler)s removed") % {"scheduler": scheduler}
    if action == "upsert-scheduler":
        if detail.get("created"):
            return gettext("Job scheduler %(scheduler)s created") % {"scheduler": scheduler}
        return gettext("Job scheduler %(scheduler)s updated") % {"scheduler": scheduler}
    if action == "run-scheduler" and job:
        return gettext("Job scheduler %(scheduler)s ran now: job %(job)s added") % {
            "scheduler": scheduler,
            "job": job,
        }
    if action == "pause-all":
        text = ngettext("%(count)s queue paused", "%(count)s queues paused", count)
        return _with_skipped(text % {"count": count}, detail)
    if action == "resume-all":
        text = ngettext("%(count)s queue resumed", "%(count)s queues resumed", count)
        return _with_skipped(text % {"count": count}, detail)
    if action in ("group-pause", "group-resume", "group-retry"):
        return _group_done(result)
    if action == "drop-completed-dead-letters":
        return ngettext(
            "%(count)s dead letter dropped: its original completed",
            "%(count)s dead letters dropped: their originals completed",
            count,
        ) % {"count": count}
    if action == "replay":
        return gettext("Dead letter %(job)s replayed: job %(new)s of %(queue)s %(how)s") % {
            "job": job,
            "new": _name(detail.get("jobId", "?")),
            "queue": _name(detail.get("queue", "?")),
            "how": _replay_how(str(detail.get("how", "replayed"))),
        }
    return gettext("Done: %(action)s") % {"action": _name(action)}


def _replay_how(how: str) -> str:
    """How a dead letter came back (words queues/ chooses, a machine's: translated here)."""
    words = {
        "re-added": gettext("re-added"),
        "retried": gettext("retried"),
        "replayed": gettext("replayed"),
    }
    return words.get(how, how)


def _group_done(result: ActionResult) -> str:
    detail = result.detail
    queues = len(detail.get("queues") or [])
    values: dict[str, object] = {
        "group": _name(detail.get("group", "")),
        "queues": queues,
        "jobs": ngettext("%(count)s job", "%(count)s jobs", result.count) % {"count": result.count},
    }
    if result.action == "group-retry":
        text = ngettext(
            "Group %(group)s: retrying %(jobs)s failed in %(queues)s queue",
            "Group %(group)s: retrying %(jobs)s failed in %(queues)s queues",
            queues,
        )
    elif result.action == "group-pause":
        text = ngettext(
            "Group %(group)s: %(queues)s queue paused",
            "Group %(group)s: %(queues)s queues paused",
            queues,
        )
    else:
        text = ngettext(
            "Group %(group)s: %(queues)s queue resumed",
            "Group %(group)s: %(queues)s queues resumed",
            queues,
        )
    return _with_skipped(text % values, detail)


def destination(result: ActionResult) -> str | None:
    """Where to land when the current page no longer shows anything true; None: reload it."""
    detail = result.detail
    if result.action == "remove" and result.queue:
        url = reverse("bullpen:queue", args=[result.queue])
        state = detail.get("from")
        return f"{url}?{urlencode({'state': state})}" if state in STATES else url
    if result.action == "obliterate":
        return reverse("bullpen:overview")
    if result.action == "replay" and detail.get("queue") and detail.get("jobId"):
        return reverse("bullpen:job", args=[detail["queue"], detail["jobId"]])
    return None


def answer_accepted(response: HttpResponseBase) -> None:
    """A bulk action accepted from a page: the page stays where it is and follows it (the
    progress bar, then the confirmation, from static/bullpen/actions.js)."""
    response["HX-Reswap"] = "none"


def answer_page(request: HttpRequest, response: HttpResponseBase, result: ActionResult) -> None:
    """An htmx request succeeded: keep the confirmation and tell htmx where to go."""
    notices.add(request, response, confirmation(result))
    url = destination(result)
    if url is None:
        response["HX-Refresh"] = "true"
    else:
        response["HX-Redirect"] = url
