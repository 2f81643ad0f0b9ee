"""The job page's context: the parts the live updates re-render, and the whole page.

The live parts (state badge, actions, facts, progress, failure, return value) need only what
``queues.reads.detail.job_live_view`` reads, so the follower can re-render them without the job's
data, logs or children.
"""

from __future__ import annotations

import json
from typing import Any

from dashboard.auth.viewer import ViewerKind, can_act_on, sign_kind
from queues.config.settings import get_config
from queues.postgres.store_actions import supported
from queues.reads.dead_letters import dead_letter_ref, original_of, read_envelope
from queues.reads.deduplication import held_by
from queues.reads.jsontext import dumps
from queues.reads.keys import QueueRef
from queues.redis import connections
from queues.tasks.mapping import arguments_of, is_task_job, is_task_path, status_of


def shown(value: Any, cap: int, cut_from: int | None = None) -> dict[str, Any]:
    """A JSON value ready for the page: the tree when small enough, else its cut text.
    ``cut_from``: the value is already the first part of a text that long (Redis cut it)."""
    text = json.dumps(value, indent=2, ensure_ascii=False) if not isinstance(value, str) else value
    if cut_from is not None:
        return {"tree": None, "text": text[:cap], "size": cut_from, "cut": True}
    if len(text) > cap:
        return {"tree": None, "text": text[:cap], "size": len(text), "cut": True}
    return {"tree": value, "text": text, "size": len(text), "cut": False}


def stack_traces(job: dict[str, Any], cap: int) -> list[str]:
    traces = job.get("stacktrace")
    if isinstance(traces, list):
        return [str(frame)[:cap] for frame in traces]
    return [str(traces)[:cap]] if traces else []


def live_context(ref: QueueRef, job: dict[str, Any], *, viewer: ViewerKind) -> dict[str, Any]:
    """What the live partials of the job page need."""
    cap = int(get_config()["DETAIL_FIELD_CAP"])
    return {
        "queue": {
            "slug": ref.slug,
            "name": ref.name,
            "prefix": ref.prefix,
            # Named on the page when there are several Redis connections.
            "connection": ref.connection if connections.several() else "",
        },
        "job": job,
        "viewer": viewer,
        "can_act": can_act_on(viewer, ref.slug),
        # The buttons of actions the queue's store does not do are left out.
        "supports": supported(ref),
        "is_dead_letter": ref == dead_letter_ref(ref.connection),
        "returnvalue": shown(
            job.get("returnvalue"), cap, job.get("truncated", {}).get("returnvalue")
        ),
        "stacktrace": stack_traces(job, cap),
        # A task job's status as the Tasks API reads it. Its section is on task jobs' pages
        # only (live reads of a job leave its data out, so the page decides once); live
        # updates carry the status of jobs named like a task, for pages that show it.
        "task_status": (
            status_of(str(job.get("state") or "")) if is_task_path(job.get("name")) else ""
        ),
    }


TASK_ARGUMENT_CHARS = 200  # of one argument, in the task's call as the page shows it


def task_view(job: dict[str, Any]) -> dict[str, Any] | None:
    """A Django task's job (queues/tasks/): its path and the call its arguments make; None for
    any other job."""
    name, data = job.get("name"), job.get("data")
    if not is_task_job(name, data):
        return None
    args, kwargs = arguments_of(data)

    def shown_value(value: Any) -> str:
        text = dumps(value).decode()
        return text if len(text) <= TASK_ARGUMENT_CHARS else text[: TASK_ARGUMENT_CHARS - 1] + "…"

    arguments = [shown_value(a) for a in args]
    arguments += [f"{key}={shown_value(value)}" for key, value in kwargs.items()]
    return {"path": name, "call": f"{name}({', '.join(arguments)})"}


def in_a_flow(job: dict[str, Any]) -> bool:
    children = job.get("children") or {}
    return bool(job.get("parentRef") or any(children.values()))


def page_context(ref: QueueRef, job: dict[str, Any], *, viewer: ViewerKind) -> dict[str, Any]:
    """The whole job page: the live parts plus data, options, logs and flow."""
    cap = int(get_config()["DETAIL_FIELD_CAP"])
    spec: dict[str, Any] = {
        "watch": "job",
        "queue": ref.slug,
        "id": job["id"],
        "viewer": sign_kind(viewer),
    }
    if in_a_flow(job):
        spec["flow"] = True  # the page shows the flow's tree: its jobs' states are followed
    return {
        **live_context(ref, job, viewer=viewer),
        "live_spec": json.dumps(spec),
        "data": shown(job["data"], cap, job.get("truncated", {}).get("data")),
        "task": task_view(job),
        "opts": shown(job["opts"], cap, job.get("truncated", {}).get("opts")),
        # "Copy as JSON" holds the job in the page; a huge or cut one is downloaded instead.
        "copy_json": (
            job
            if not job["truncated"] and len(json.dumps(job, ensure_ascii=False)) <= cap
            else None
        ),
    }


def _stack_text(stack: Any) -> str:
    """The runner writes one string; another writer may have kept BullMQ's list of traces."""
    if isinstance(stack, list):
        return "\n\n".join(str(trace) for trace in stack)
    if stack is None or isinstance(stack, str):
        return stack or ""
    return json.dumps(stack, ensure_ascii=False)


async def dead_letter_context(ref: QueueRef, job: dict[str, Any]) -> dict[str, Any] | None:
    """The job page's "Dead letter" section: what the envelope says, and whether the original
    queue and job are still there. None for jobs of other queues."""
    if ref != dead_letter_ref(ref.connection):
        return None
    envelope = read_envelope(job.get("data"))
    if envelope is None:
        return {"envelope": None}
    opts = envelope.get("opts")
    allowed = opts.get("attempts") if isinstance(opts, dict) else None
    cap = int(get_config()["DETAIL_FIELD_CAP"])
    return {
        "envelope": envelope,
        "original": await original_of(envelope, ref.connection),
        "stacktrace": _stack_text(envelope.get("stacktrace"))[:cap],
        "attempts_allowed": allowed if isinstance(allowed, int) and allowed > 0 else None,
    }


async def dedup_hold(ref: QueueRef, job: dict[str, Any]) -> dict[str, Any] | None:
    """The deduplication id the job was added with, whether it still holds its key (another
    job may have taken it since, or it was released) and the key's time left (None: it is
    held until the job finishes)."""
    dedup_id = job.get("deduplicationId")
    if not dedup_id:
        return None
    holder, ttl_ms = await held_by(ref, str(dedup_id))
    return {"id": dedup_id, "holds": holder == job["id"], "holder": holder, "ttl_ms": ttl_ms}
