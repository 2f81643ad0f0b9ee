"""The MCP server's action tools, there only with ``BULLPEN["MCP"]["ACTIONS"]``: retry a job,
retry a failure group, pause and resume a queue. Destructive actions (clean, obliterate,
empty, remove) are never tools.

Each goes through the checks an HTTP action does, in the same order (a hidden queue is
unknown before anything else tells it apart; then QUEUE_ACCESS's operate; then read-only),
acts through queues/actions/, and is audited, refusals included, under the MCP identity.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from mcp.server.mcpserver.exceptions import ToolError

from dashboard.audit import writer
from dashboard.auth.access import is_read_only
from dashboard.auth.answers import status_of
from dashboard.auth.queue_lookup import canonical, exists
from dashboard.mcp.identity import mcp_access
from queues.actions import job_actions, queue_actions
from queues.actions.result import ActionResult
from queues.errors import BadParameter, BullpenError, OutcomeUnknown
from queues.failures.failure_groups import failure_groups, forget_shared
from queues.reads.keys import QueueRef
from queues.redis.errors import translate_redis_errors

Act = Callable[[QueueRef], Awaitable[ActionResult]]


async def _act(tool: str, action: str, queue: str, act: Act, job_id: str = "") -> ActionResult:
    principal, access = await mcp_access()
    slug = canonical(queue) or queue
    ids = [job_id] if job_id else []

    async def refuse(message: str, status: int, audit_error: str = "") -> ToolError:
        await writer.record_tool(
            principal,
            action,
            queue=slug,
            job_ids=ids,
            status=status,
            error=audit_error or message,
            detail={"tool": tool},
        )
        return ToolError(message)

    if canonical(queue) is None or not access.may_view(slug) or not await exists(slug):
        hidden = canonical(queue) is not None and not access.may_view(slug)
        raise await refuse(f"Unknown queue {queue!r}", 404, writer.HIDDEN_QUEUE if hidden else "")
    if not access.may_operate(slug):
        raise await refuse(f"Forbidden: {principal.username!r} may only view {slug!r}", 403)
    if is_read_only(slug):
        raise await refuse(f"Read-only: actions are disabled for {slug!r}", 403)
    try:
        async with translate_redis_errors():
            result = await act(QueueRef.from_slug(slug))
    except BullpenError as error:
        message = error.describe(action, job_id) if isinstance(error, OutcomeUnknown) else None
        raise await refuse(message or str(error), status_of(error)) from error
    forget_shared(slug)  # failure groups show what the action did
    await writer.record_tool(
        principal,
        action,
        queue=slug,
        job_ids=result.job_ids,
        count=result.count,
        status=result.status,
        detail={"tool": tool, **{k: v for k, v in result.detail.items() if k != "results"}},
    )
    return result


async def retry_job(queue: str, job_id: str) -> str:
    """Retry one failed (or completed) job."""

    async def act(ref: QueueRef) -> ActionResult:
        return await job_actions.retry_job(ref, job_id)

    await _act("retry_job", "retry", queue, act, job_id)
    return f"Job {job_id} of {queue} retried: it waits for a worker again."


async def retry_failure_group(queue: str, signature: str) -> str:
    """Retry every failed job of one failure group (its signature from ``failure_groups``)."""

    async def act(ref: QueueRef) -> ActionResult:
        report = await failure_groups(ref)
        group = next((g for g in report.groups if g.signature == signature), None)
        if group is None:
            raise BadParameter("No failure group with that signature (it may have been retried)")
        result = await job_actions.each_job(ref, group.job_ids, "retry", job_actions.retry_job)
        label = f"{group.reason} · {group.frame}" if group.frame else group.reason
        result.detail.update({"signature": signature, "group": label[:300]})
        return result

    result = await _act("retry_failure_group", "retry-group", queue, act)
    refused = result.detail.get("results") or {}
    tail = f"; {len(refused)} could not be: {refused}" if refused else ""
    return f"{result.count} job(s) of {queue} retried{tail}."


async def pause_queue(queue: str, reason: str = "") -> str:
    """Pause a queue: workers take no new job until it is resumed; ``reason`` is shown."""

    async def act(ref: QueueRef) -> ActionResult:
        return await queue_actions.pause(ref, reason[:500])

    await _act("pause_queue", "pause", queue, act)
    return f"Queue {queue} paused."


async def resume_queue(queue: str) -> str:
    """Resume a paused queue."""

    async def act(ref: QueueRef) -> ActionResult:
        return await queue_actions.resume(ref)

    await _act("resume_queue", "resume", queue, act)
    return f"Queue {queue} resumed."
