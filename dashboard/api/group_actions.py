"""Actions on every queue of one overview group: pause, resume, retry the failed jobs.

The group is worked out again here from the queue list (not taken from the page), so the action
reaches the queues the group holds now. Queues hidden from the user (QUEUE_ACCESS) are not in
its groups at all; read-only queues and those the user may only view are skipped and named in
the answer;
each queue's retry runs as its own bulk action, audited like one started on its page,
and the answer comes once they are all started (the page then reloads and shows them).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from django.http import HttpRequest

from dashboard.auth.guards import mutation_view
from dashboard.auth.queue_access import for_request
from dashboard.bulk import launch
from dashboard.forms.actions import GroupOfQueuesForm
from dashboard.forms.answer import action_input, valid
from dashboard.pages.overview_page import group_member_refs
from queues.actions import queue_actions
from queues.actions.result import ActionResult
from queues.bulk.submit import AlreadyRunning
from queues.errors import QueueNotFound
from queues.reads.counts import summaries
from queues.reads.keys import QueueRef


async def _members(request: HttpRequest) -> tuple[str, list[QueueRef], list[QueueRef]]:
    """The group's key, its queues that may be acted on, and those skipped: read-only, or
    only viewable by this user."""
    found = valid(GroupOfQueuesForm(action_input(request))).cleaned_data
    access = await for_request(request)
    refs = await group_member_refs(found["group"], found["delimiter"], found["key"], access)
    if not refs:
        raise QueueNotFound(f"No queue is in the group {found['key']!r}")
    writable = [ref for ref in refs if access.may_act_on(ref.slug)]
    return found["key"], writable, [ref for ref in refs if not access.may_act_on(ref.slug)]


async def _each(
    request: HttpRequest, action: str, act: Callable[[QueueRef], Awaitable[ActionResult]]
) -> ActionResult:
    key, writable, skipped = await _members(request)
    result = await queue_actions.for_each_queue(action, act, writable)
    result.detail.update({"group": key, "skipped": [ref.slug for ref in skipped]})
    return result


@mutation_view("group-pause", queue_scoped=False)
async def pause(request: HttpRequest) -> ActionResult:
    return await _each(request, "group-pause", queue_actions.pause)


@mutation_view("group-resume", queue_scoped=False)
async def resume(request: HttpRequest) -> ActionResult:
    return await _each(request, "group-resume", queue_actions.resume)


@mutation_view("group-retry", queue_scoped=False)
async def retry_failed(request: HttpRequest) -> ActionResult:
    key, writable, skipped = await _members(request)
    with_failed = [s.ref for s in await summaries(writable) if s.counts["failed"]]
    started, running = [], []
    for ref in with_failed:
        try:
            started.append(await launch.start(request, "retry-all", ref, {"state": "failed"}))
        except AlreadyRunning:  # its failed jobs are being retried already
            running.append(ref.slug)
    return ActionResult(
        "group-retry",
        None,
        count=sum(result.count for result in started),
        detail={
            "group": key,
            "queues": [ref.slug for ref in with_failed if ref.slug not in running],
            "actions": [result.detail.get("id") for result in started],
            "skipped": [ref.slug for ref in skipped],
            "running": running,
        },
    )
