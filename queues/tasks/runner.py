"""Running task jobs in ``runqueueworker``: each BullMQ Tasks backend's queues get the one
handler below (unless a handler of the site's own already works that queue), which finds the
task named by the job (:mod:`queues.tasks.resolve`) and calls it with the job's arguments in
the runner's thread pool. A job naming no imported task fails for good, saying why.
"""

from __future__ import annotations

from typing import Any

from bullmq.custom_errors import UnrecoverableError
from django.utils import timezone

import queues.tasks.mapping as mapping
from queues.runner.options import QueueOptions
from queues.runner.registry import Registry
from queues.tasks.api import (
    TaskContext,
    TaskResult,
    TaskResultStatus,
    normalize_json,
    task_backends,
)
from queues.tasks.backend import BullMQBackend
from queues.tasks.resolve import resolve_task


def bullmq_backends() -> list[BullMQBackend]:
    """The site's Tasks backends that are BullMQ's."""
    return [
        backend
        for alias in task_backends.settings
        if isinstance(backend := task_backends[alias], BullMQBackend)
    ]


def register_task_queues(registry: Registry) -> list[str]:
    """Give each BullMQ backend's queues the task handler; returns the queues it was given."""
    added = []
    for backend in bullmq_backends():
        for queue in sorted(backend.queues):
            if queue not in registry:
                # The worker's options (concurrency, timeout...) from OPTIONS["worker"]; a
                # job's attempts and backoff are its own, set when it was enqueued.
                options = QueueOptions.from_mapping(backend.options.get("worker") or {})
                registry.register(queue, run_task_job, options)
                added.append(queue)
    return added


def run_task_job(payload: Any, ctx: Any) -> Any:
    task = resolve_task(ctx.name)
    if task is None:
        raise UnrecoverableError(
            f"{ctx.name!r} is not a task of an imported module: list its module in "
            'BULLPEN["WORKER"]["modules"] or runqueueworker --module'
        )
    try:
        args, kwargs = mapping.arguments_of(payload)
    except mapping.NotTaskData as error:
        raise UnrecoverableError(str(error)) from error
    if task.takes_context:
        now = timezone.now()
        result: TaskResult[Any] = TaskResult(
            task=task,
            id=ctx.job_id,
            status=TaskResultStatus.RUNNING,
            enqueued_at=None,
            started_at=now,
            last_attempted_at=now,
            finished_at=None,
            args=args,
            kwargs=kwargs,
            backend=task.backend,
            errors=[],
            worker_ids=["bullpen"] * ctx.attempt,
        )
        # What the task returns is kept as JSON (tuples become lists), as Django's backends do.
        return normalize_json(task.call(TaskContext(task_result=result), *args, **kwargs))
    return normalize_json(task.call(*args, **kwargs))
