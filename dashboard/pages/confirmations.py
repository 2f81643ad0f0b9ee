"""What the page says after an action, from what it did: one sentence per action, in the
page's language (``CONFIRMATIONS``, the action's name in its result to how its sentence is
made). Whole sentences, so that each language can order its words; job and queue names, ids
and counts are filled in."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext, gettext_lazy, ngettext, ngettext_lazy

from dashboard.alerts import messages
from queues.actions.result import ActionResult

# Job ids and queue names are untrusted and may be long: a confirmation shows at most this much
# of one (pages escape it).
_MAX_NAME = 80


@dataclass(frozen=True)
class Done:
    """What a confirmation is made from: an action's result, its names cut to be shown."""

    result: ActionResult

    @property
    def detail(self) -> dict[str, Any]:
        return self.result.detail

    @property
    def count(self) -> int:
        return self.result.count

    @property
    def job(self) -> str:
        return _name(self.result.job_ids[0]) if self.result.job_ids else ""

    @property
    def queue(self) -> str:
        return _name(self.result.queue or "")

    @property
    def scheduler(self) -> str:
        return _name(self.detail.get("scheduler", ""))


# What the landing page says after an action, from what it did; None: the action's result
# lacks what its sentence names (a job), and the page says "Done: <action>".
Confirm = Callable[[Done], str | None]


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


_JOB_RETRIED = gettext_lazy("Job %(job)s retried")


def _one_job(text: Any) -> Confirm:
    """A sentence about the one job the action took."""
    return lambda done: str(text) % {"job": done.job} if done.job else None


def _jobs(text: Any) -> Confirm:
    """A count of jobs, and of the ones refused when some were."""

    def confirm(done: Done) -> str:
        said = text % {"count": done.count}
        refused = done.detail.get("results") or {}
        if refused:
            return gettext("%(text)s, %(refused)s refused") % {
                "text": said,
                "refused": len(refused),
            }
        return str(said)

    return confirm


def _queue(text: Any) -> Confirm:
    return lambda done: str(text) % {"queue": done.queue}


def _counted(text: Any) -> Confirm:
    """A plural sentence on the action's count, the queue's name filled in when it names it."""
    return lambda done: str(text % {"count": done.count, "queue": done.queue})


def _queues(text: Any) -> Confirm:
    """Queues paused or resumed across the dashboard, and the read-only ones skipped."""
    return lambda done: _with_skipped(text % {"count": done.count}, done.detail)


def _retried(done: Done) -> str | None:
    if not done.job:
        return None
    detail = done.detail
    allowed, made = detail.get("attempts"), detail.get("attemptsMade")
    if detail.get("resetAttempts") and isinstance(allowed, int):
        return gettext("Job %(job)s retried with fresh attempts: up to %(allowed)s") % {
            "job": done.job,
            "allowed": allowed,
        }
    if detail.get("exhausted") and isinstance(made, int):
        return gettext(
            "Job %(job)s retried for one more attempt (%(next)s of %(allowed)s): its "
            "attempts were used"
        ) % {"job": done.job, "next": made + 1, "allowed": allowed}
    return str(_JOB_RETRIED) % {"job": done.job}


def _duplicated(done: Done) -> str:
    return gettext("Job %(job)s duplicated as job %(new)s") % {
        "job": done.job,
        "new": _name(done.detail.get("newJobId", "?")),
    }


def _prioritised(done: Done) -> str:
    return gettext("Job %(job)s: priority set to %(priority)s") % {
        "job": done.job,
        "priority": done.detail.get("priority"),
    }


def _cleaned(done: Done) -> str:
    return ngettext(
        "%(count)s job cleaned from %(state)s",
        "%(count)s jobs cleaned from %(state)s",
        done.count,
    ) % {"count": done.count, "state": _name(done.detail.get("state", ""))}


def _children_removed(done: Done) -> str | None:
    if not done.job:
        return None
    return ngettext(
        "Job %(job)s: %(count)s unprocessed child removed",
        "Job %(job)s: %(count)s unprocessed children removed",
        done.count,
    ) % {"job": done.job, "count": done.count}


def _concurrency_set(done: Done) -> str:
    concurrency = done.detail.get("concurrency")
    if concurrency is None:
        return gettext("Queue %(queue)s: global concurrency removed") % {"queue": done.queue}
    return gettext("Queue %(queue)s: global concurrency set to %(n)s") % {
        "queue": done.queue,
        "n": concurrency,
    }


def _rate_limit_set(done: Done) -> str:
    limit = done.detail.get("rateLimit")
    if not isinstance(limit, dict):
        return gettext("Queue %(queue)s: rate limit removed") % {"queue": done.queue}
    return gettext("Queue %(queue)s: rate limit set to %(max)s per %(duration)s ms") % {
        "queue": done.queue,
        "max": limit.get("max"),
        "duration": limit.get("duration"),
    }


def _rate_limit_released(done: Done) -> str:
    if done.detail.get("released"):
        return gettext("Queue %(queue)s: rate limit released") % {"queue": done.queue}
    return gettext("Queue %(queue)s: no rate limit was in force") % {"queue": done.queue}


def _scheduler_removed(done: Done) -> str:
    return gettext("Job scheduler %(scheduler)s removed") % {"scheduler": done.scheduler}


def _scheduler_saved(done: Done) -> str:
    if done.detail.get("created"):
        return gettext("Job scheduler %(scheduler)s created") % {"scheduler": done.scheduler}
    return gettext("Job scheduler %(scheduler)s updated") % {"scheduler": done.scheduler}


def _scheduler_ran(done: Done) -> str | None:
    if not done.job:
        return None
    return gettext("Job scheduler %(scheduler)s ran now: job %(job)s added") % {
        "scheduler": done.scheduler,
        "job": done.job,
    }


def _saved(text: Any) -> Confirm:
    return lambda done: str(text) % {"name": _name(done.detail.get("name", ""))}


def _group(text: Any) -> Confirm:
    """A group's action: its queues counted, its jobs too when it retried them."""

    def confirm(done: Done) -> str:
        queues = len(done.detail.get("queues") or [])
        values: dict[str, object] = {
            "group": _name(done.detail.get("group", "")),
            "queues": queues,
            "jobs": ngettext("%(count)s job", "%(count)s jobs", done.count) % {"count": done.count},
        }
        return _with_skipped(text % values, done.detail)

    return confirm


def _alert(text: Any) -> Confirm:
    """An alert's silence or acknowledgement: the rule in words, its queue, the minutes."""

    def confirm(done: Done) -> str:
        rule = str(done.detail.get("rule", ""))
        values = {"rule": messages.label(rule), "queue": done.queue}
        return str(text) % {**values, "minutes": done.detail.get("minutes", "?")}

    return confirm


def _replayed(done: Done) -> str:
    detail = done.detail
    return gettext("Dead letter %(job)s replayed: job %(new)s of %(queue)s %(how)s") % {
        "job": done.job,
        "new": _name(detail.get("jobId", "?")),
        "queue": _name(detail.get("queue", "?")),
        "how": _replay_how(str(detail.get("how", "replayed"))),
    }


def _replay_how(how: str) -> str:
    """How a dead letter came back (words queues/ chooses, a machine's: translated here)."""
    words = {
        "re-added": gettext("re-added"),
        "retried": gettext("retried"),
        "replayed": gettext("replayed"),
    }
    return words.get(how, how)


def _dedup_released(done: Done) -> str:
    return gettext("Deduplication id %(id)s released") % {
        "id": _name(done.detail.get("deduplicationId", ""))
    }


_JOBS_REMOVED = _jobs(ngettext_lazy("%(count)s job removed", "%(count)s jobs removed", "count"))
_JOBS_RETRIED = _jobs(ngettext_lazy("%(count)s job retried", "%(count)s jobs retried", "count"))
_JOBS_PROMOTED = _jobs(ngettext_lazy("%(count)s job promoted", "%(count)s jobs promoted", "count"))

# Every action's confirmation, by the action's name in its result (and its audit row).
CONFIRMATIONS: dict[str, Confirm] = {
    # one job
    "retry": _retried,
    "remove": _one_job(gettext_lazy("Job %(job)s removed")),
    "promote": _one_job(gettext_lazy("Job %(job)s promoted")),
    "cancel": _one_job(gettext_lazy("Job %(job)s cancelled")),
    "update-data": _one_job(gettext_lazy("Job %(job)s: data updated")),
    "add": _one_job(gettext_lazy("Job %(job)s added")),
    "duplicate": _duplicated,
    "priority": _prioritised,
    "reschedule": _one_job(gettext_lazy("Job %(job)s rescheduled")),
    "remove-unprocessed-children": _children_removed,
    "detach-child": _one_job(gettext_lazy("Job %(job)s detached from its parent")),
    "release-dedup": _dedup_released,
    "release-dedup-orphans": _counted(
        ngettext_lazy(
            "%(count)s orphan deduplication key released",
            "%(count)s orphan deduplication keys released",
            "count",
        )
    ),
    "move-to-failed": _one_job(gettext_lazy("Job %(job)s moved to failed")),
    "move-to-wait": _one_job(gettext_lazy("Job %(job)s given back to the workers (waiting)")),
    # many jobs
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
    "clean": _cleaned,
    # one queue
    "pause": _queue(gettext_lazy("Queue %(queue)s paused")),
    "resume": _queue(gettext_lazy("Queue %(queue)s resumed")),
    "obliterate": _queue(gettext_lazy("Queue %(queue)s obliterated")),
    "empty": _counted(
        ngettext_lazy(
            "Queue %(queue)s emptied: %(count)s job removed",
            "Queue %(queue)s emptied: %(count)s jobs removed",
            "count",
        )
    ),
    "concurrency": _concurrency_set,
    "rate-limit": _rate_limit_set,
    "rate-limit-release": _rate_limit_released,
    # job schedulers
    "remove-scheduler": _scheduler_removed,
    "upsert-scheduler": _scheduler_saved,
    "run-scheduler": _scheduler_ran,
    # many queues
    "pause-all": _queues(
        ngettext_lazy("%(count)s queue paused", "%(count)s queues paused", "count")
    ),
    "resume-all": _queues(
        ngettext_lazy("%(count)s queue resumed", "%(count)s queues resumed", "count")
    ),
    "group-pause": _group(
        ngettext_lazy(
            "Group %(group)s: %(queues)s queue paused",
            "Group %(group)s: %(queues)s queues paused",
            "queues",
        )
    ),
    "group-resume": _group(
        ngettext_lazy(
            "Group %(group)s: %(queues)s queue resumed",
            "Group %(group)s: %(queues)s queues resumed",
            "queues",
        )
    ),
    "group-retry": _group(
        ngettext_lazy(
            "Group %(group)s: retrying %(jobs)s failed in %(queues)s queue",
            "Group %(group)s: retrying %(jobs)s failed in %(queues)s queues",
            "queues",
        )
    ),
    # alerts
    "silence-alert": _alert(
        gettext_lazy("Alert “%(rule)s” on %(queue)s silenced for %(minutes)s min")
    ),
    "unsilence-alert": _alert(gettext_lazy("Alert “%(rule)s” on %(queue)s unsilenced")),
    "acknowledge-alert": _alert(gettext_lazy("Alert “%(rule)s” on %(queue)s acknowledged")),
    # dead letters
    "drop-completed-dead-letters": _counted(
        ngettext_lazy(
            "%(count)s dead letter dropped: its original completed",
            "%(count)s dead letters dropped: their originals completed",
            "count",
        )
    ),
    "replay": _replayed,
    # saved searches
    "save-search": _saved(gettext_lazy("Search “%(name)s” saved")),
    "delete-saved-search": _saved(gettext_lazy("Saved search “%(name)s” deleted")),
}


def confirmation(result: ActionResult) -> str:
    """What the landing page says about ``result``, as plain text, in the page's language."""
    confirm = CONFIRMATIONS.get(result.action)
    said = confirm(Done(result)) if confirm is not None else None
    if said is None:
        return gettext("Done: %(action)s") % {"action": _name(result.action)}
    return said
