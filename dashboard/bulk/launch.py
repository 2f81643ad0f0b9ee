"""Bulk actions from the dashboard's side: starting one from a request, this process's runner,
and what the runner tells the pages (live ``bulk`` messages) and the audit log.

The runners (queues/bulk/executor.py, one per connection) start in each server process with
the process's other services (dashboard/services/lifecycle.py), and again, if stopped, with the
next action, question about one, or live page. Only the one holding a connection's lease
executes that connection's actions; the others only submit them.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext, pgettext_lazy

from dashboard.audit import writer
from dashboard.bulk.progress import Bar, bar_html, started_text
from dashboard.live import channel_groups
from dashboard.pages.confirmations import confirmation
from dashboard.services import registry
from dashboard.services.registry import Slot
from queues.actions import sweeps
from queues.actions.result import ActionResult
from queues.bulk.executor import Runner
from queues.bulk.record import CANCELLED, DONE, ActionRecord, RequestedBy
from queues.bulk.store import store_for
from queues.bulk.submit import submit
from queues.errors import BadParameter
from queues.failures.failure_groups import forget_shared
from queues.live.protocol import bulk_message
from queues.reads.keys import QueueRef
from queues.reads.store import on_redis
from queues.redis import connections

log = logging.getLogger("bullpen.actions")

Work = Coroutine[Any, Any, None]  # a runner's run, for the registry to start

RUNNERS = "bulk-actions"  # the registry's kind of slot of this process's runners


def runner_slot(connection: str) -> Slot[Runner]:
    return Slot(RUNNERS, connection)


def ensure_runner(connection: str | None = None) -> Runner | None:
    """Start this loop's runner of every Redis connection (those already running are kept);
    the one of ``connection`` (None: the default one). None without a Redis connection: bulk
    actions are recorded in Redis, so a deployment of PostgreSQL stores alone has none."""
    runners = {
        name: registry.ensure(runner_slot(name), _runner_of(name))
        for name in connections.redis_names()
    }
    if not runners:
        return None
    wanted = connection or connections.state_name()
    if wanted not in runners:  # a connection no longer configured: its runner is the default's
        wanted = connections.state_name()
    return runners[wanted]


def _runner_of(connection: str) -> Callable[[Runner | None], tuple[Runner, Work]]:
    def make(ended: Runner | None) -> tuple[Runner, Work]:
        runner = Runner(PagesAndAudit(), connection=connection)
        return runner, runner.run()

    return make


def _outside() -> contextvars.Context:
    """A context of its own for work that outlives the request starting it: a request's
    context carries the thread Django runs its database calls in, which ends with it."""
    return contextvars.Context()


def running_here() -> list[asyncio.Task[None]]:
    """This loop's runner tasks (one per connection)."""
    return registry.tasks(RUNNERS)


async def stop() -> None:
    """Stop this loop's runners (tests, shutdown): their actions go on with the next ones."""
    await registry.stop(*registry.slots(RUNNERS))


async def start(
    request: HttpRequest, kind: str, ref: QueueRef, params: dict[str, Any]
) -> ActionResult:
    """Validate, record and audit a bulk action for the runner; the answer to give at once.
    A sweep of a queue on a store without bulk runners (Postgres) is done at once instead."""
    if not on_redis([ref]):
        return await _sweep_now(kind, ref, params)
    principal = request.bullpen_principal  # type: ignore[attr-defined]
    who = RequestedBy(
        principal.username,
        principal.via,
        str(request.META.get("REMOTE_ADDR", "")),
        request.headers.get("X-Forwarded-For", ""),
    )
    # Recorded, audited and handed to the runner together, even if the client goes away
    # meanwhile (the server then cancels this request, not that).
    submitting = asyncio.get_running_loop().create_task(
        _submit(kind, ref, params, who), context=_outside()
    )
    record = await asyncio.shield(submitting)
    detail = {k: v for k, v in status_json(record).items() if k not in _RESULT_KEYS}
    # What the asking page shows at once, in its language: the bar and the toast.
    detail["html"] = bar_html(bar_of(record), can_act=True)
    detail["text"] = started_text(record.kind, detail["total"])
    return ActionResult(
        record.kind, ref.slug, count=record.count, detail=detail, status=202, audited=True
    )


_RESULT_KEYS = ("action", "queue", "count")


async def _sweep_now(kind: str, ref: QueueRef, params: dict[str, Any]) -> ActionResult:
    if kind == "retry-all":
        return await sweeps.retry_all(ref, str(params["state"]))
    if kind == "promote-all":
        return await sweeps.promote_all(ref)
    if kind == "clean":
        return await sweeps.clean(
            ref, str(params["state"]), int(params["grace_ms"]), int(params["limit"])
        )
    raise BadParameter(f"{kind} is not available yet for a queue on a PostgreSQL store")


async def _submit(
    kind: str, ref: QueueRef, params: dict[str, Any], who: RequestedBy
) -> ActionRecord:
    record = await submit(kind, ref, params, who)
    try:
        await writer.record_bulk_action(record, "started")
    finally:
        runner = ensure_runner(ref.connection)
        if runner is not None:
            runner.poke()
    return record


def status_json(record: ActionRecord, *, user: bool = False) -> dict[str, Any]:
    """What the API says about an action (``user``: who asked, for those who may act)."""
    body: dict[str, Any] = {
        "id": record.id,
        "action": record.kind,
        "queue": record.ref.slug,
        "params": record.params,
        "state": record.state,
        # True once its end is audited and told to the pages: then a reload shows it all.
        "finished": record.settled,
        "count": record.count,
        "total": max(record.total, record.count),
        "refused": record.refused,
        "createdAt": record.created_ms,
        "startedAt": record.started_ms or None,
        "finishedAt": record.finished_ms or None,
        "cancelRequested": bool(record.cancel_by),
        "resumes": record.resumes,  # taken over after its server stopped
        "error": record.error,
        "text": summary(record) if record.finished else "",
        "statusUrl": reverse("bullpen:api-action", args=[record.id]),
        "cancelUrl": reverse("bullpen:cancel-action", args=[record.id]),
    }
    # Removed ids (clean: the first 1,000), refusals and unsure outcomes (lists of jobs).
    for key in ("jobIds", "results", "uncertain"):
        if record.detail.get(key):
            body[key] = record.detail[key]
    if user:
        body["user"] = record.requested_by.username
    return body


def bar_of(record: ActionRecord) -> Bar:
    """The progress bar of ``record``, its end said in the active language."""
    return Bar(
        record.id,
        record.ref.slug,
        record.kind,
        record.state,
        record.count,
        record.total,
        summary(record) if record.finished else "",
    )


async def running_bar(ref: QueueRef) -> Bar | None:
    """The bar of the bulk action running on ``ref`` now, for a page opened while it runs (its
    later progress comes live); None when none runs. One read of the connection's work list,
    and the records on it (a few at most)."""
    if not on_redis([ref]) or not connections.state_on_redis():
        return None
    store = store_for(ref.connection)
    for record in await store.load_many(await store.pending_ids()):
        if record.ref == ref and not record.finished:
            return bar_of(record)
    return None


def summary(record: ActionRecord) -> str:
    """What a finished action did, as the page confirms it ("812 jobs retried")."""
    ids = [str(i) for i in record.detail.get("jobIds") or []]
    detail = {**record.params, "results": record.detail.get("results") or {}}
    did = confirmation(ActionResult(record.kind, record.ref.slug, ids, record.count, detail))
    if record.state == DONE:
        return did
    ended = str(_ENDED.get(record.state, record.state))
    error = record.error
    if record.state == CANCELLED:  # the runner's English note, said in the page's language
        error = (
            gettext("Cancelled by %(user)s") % {"user": record.cancel_by}
            if record.cancel_by
            else ""
        )
    if error:
        return gettext("%(ended)s: %(did)s. %(error)s") % {
            "ended": ended,
            "did": did,
            "error": error,
        }
    return gettext("%(ended)s: %(did)s") % {"ended": ended, "did": did}


# How an action that did not finish its work ended, as its summary begins.
_ENDED = {
    "cancelled": pgettext_lazy("bulk action", "Cancelled"),
    "interrupted": pgettext_lazy("bulk action", "Interrupted"),
    "failed": pgettext_lazy("bulk action", "Failed"),
}


class PagesAndAudit:
    """The runner's hooks: live progress to the queue's pages, the end to the audit log."""

    async def progress(self, record: ActionRecord) -> None:
        await _publish(record, "")

    async def finished(self, record: ActionRecord) -> None:
        await writer.record_bulk_action(record, record.state)
        forget_shared(record.ref.slug)  # the failure groups show what it did
        # Said once in every language: each page's bar is rendered in its own
        # (dashboard/live/render.py).
        texts = {}
        for language, _ in settings.LANGUAGES:
            with translation.override(language):
                texts[language] = summary(record)
        await _publish(record, summary(record), texts)


async def _publish(record: ActionRecord, text: str, texts: dict[str, str] | None = None) -> None:
    slug = record.ref.slug
    message = bulk_message(
        slug,
        record.kind,
        record.count,
        max(record.total, record.count),
        action_id=record.id,
        state=record.state,
        text=text,
        texts=texts,
    )
    try:
        await channel_groups.publish(("queue", slug), message)
    except Exception as error:  # pages also ask the status URL: never stop an action for this
        log.warning("bulk action %s: cannot publish its progress: %s", record.id, error)
