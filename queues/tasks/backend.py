"""``queues.tasks.BullMQBackend``: Django's Tasks API (``django.tasks`` / ``django-tasks``) on
BullMQ, so that a ``@task`` function is a BullMQ job that ``runqueueworker`` runs and Bullpen
shows like any other::

    TASKS = {
        "default": {
            "BACKEND": "queues.tasks.BullMQBackend",
            "QUEUES": ["default", "emails"],  # the BullMQ queues tasks may name
            "OPTIONS": {"job_options": {"attempts": 3}},
        }
    }

``OPTIONS``: ``connection`` (a ``BULLPEN["CONNECTIONS"]`` name; default: the first),
``prefix`` (default: Bullpen's first), ``job_options`` (BullMQ options of every task job:
attempts, backoff, removeOnComplete...) and ``timeout`` (seconds a call waits for Redis, 10).
How a task maps onto a job: :mod:`queues.tasks.mapping`. The result id is the job's id.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bullmq import Job
from django.core import checks
from django.utils import timezone
from django.utils.crypto import get_random_string

import queues.tasks.mapping as mapping
from queues.config.settings import default_prefix
from queues.reads.keys import QueueRef
from queues.redis import connections
from queues.tasks.api import (
    BaseTaskBackend,
    InvalidTaskError,
    Task,
    TaskError,
    TaskResult,
    TaskResultDoesNotExist,
    TaskResultStatus,
    task_enqueued,
)
from queues.tasks.loop import TASKS_LOOP
from queues.tasks.resolve import resolve_task

DEFAULT_TIMEOUT = 10.0


class BullMQBackend(BaseTaskBackend):  # type: ignore[misc]
    supports_defer = True
    supports_async_task = True
    supports_get_result = True
    supports_priority = True

    def __init__(self, alias: str, params: dict[str, Any]) -> None:
        super().__init__(alias, params)
        options = self.options
        self.connection: str | None = options.get("connection")
        self.prefix: str | None = options.get("prefix")
        self.job_options: dict[str, Any] = dict(options.get("job_options") or {})
        self.timeout = float(options.get("timeout", DEFAULT_TIMEOUT))

    def validate_task(self, task: Task[Any, Any]) -> None:
        super().validate_task(task)
        if not task.queue_name or ":" in task.queue_name:
            raise InvalidTaskError(f"Queue {task.queue_name!r}: BullMQ refuses ':' in names")

    def ref(self, queue: str) -> QueueRef:
        connection = self.connection or connections.default_name()
        return QueueRef(self.prefix or default_prefix(), queue, connection)

    # ---- enqueue ------------------------------------------------------------------------

    def _new_result(self, task: Task[Any, Any], args: Any, kwargs: Any) -> TaskResult[Any]:
        self.validate_task(task)
        return TaskResult(
            task=task,
            id=get_random_string(32),
            status=TaskResultStatus.READY,
            enqueued_at=None,
            started_at=None,
            last_attempted_at=None,
            finished_at=None,
            args=args,  # made JSON (or refused: TypeError) by TaskResult itself
            kwargs=kwargs,
            backend=self.alias,
            errors=[],
            worker_ids=[],
        )

    async def _add(self, result: TaskResult[Any]) -> None:
        task = result.task
        now = timezone.now()
        opts: dict[str, Any] = {
            "attempts": 1,
            **self.job_options,
            "jobId": result.id,
            "priority": mapping.bullmq_priority(task.priority),
        }
        delay = mapping.delay_ms(task.run_after, now)
        if delay:
            opts["delay"] = delay
        queue = TASKS_LOOP.queue(self.ref(task.queue_name))
        await queue.add(task.module_path, mapping.job_data(result.args, result.kwargs), opts)
        object.__setattr__(result, "enqueued_at", now)

    def enqueue(self, task: Task[Any, Any], args: Any, kwargs: Any) -> TaskResult[Any]:
        result = self._new_result(task, args, kwargs)
        TASKS_LOOP.run(self._add(result), self.timeout)
        task_enqueued.send(type(self), task_result=result)
        return result

    async def aenqueue(self, task: Task[Any, Any], args: Any, kwargs: Any) -> TaskResult[Any]:
        result = self._new_result(task, args, kwargs)
        await TASKS_LOOP.arun(self._add(result), self.timeout)
        task_enqueued.send(type(self), task_result=result)
        return result

    # ---- results ------------------------------------------------------------------------

    async def _read(self, result_id: str) -> TaskResult[Any]:
        client = TASKS_LOOP.client(self.connection)
        queues = sorted(self.queues)
        async with client.pipeline(transaction=False) as pipe:
            for name in queues:
                pipe.exists(self.ref(name).job_key(result_id))
            found = await pipe.execute()
        name = next((q for q, there in zip(queues, found, strict=True) if there), None)
        if name is None:
            raise TaskResultDoesNotExist(result_id)
        queue = TASKS_LOOP.queue(self.ref(name))
        # The state first: a job read after it is finished holds its outcome, while one read
        # before could be finished by the time its state is.
        state = await queue.getJobState(result_id)
        job = await Job.fromId(queue, result_id)
        if job is None or state == "unknown":
            raise TaskResultDoesNotExist(result_id)
        return self._result_of(job, name, str(state))

    def _result_of(self, job: Job, queue: str, state: str) -> TaskResult[Any]:
        task = resolve_task(str(job.name))
        if task is None:
            raise TaskResultDoesNotExist(
                f"Job {job.id} is not a task of a module this process imported ({job.name!r})"
            )
        try:
            args, kwargs = mapping.arguments_of(job.data)
        except mapping.NotTaskData as error:
            raise TaskResultDoesNotExist(f"Job {job.id}: {error}") from error
        status = mapping.status_of(state)
        errors = [
            TaskError(exception_class_path=mapping.exception_path(text), traceback=text)
            for text in job.stacktrace or []
            if isinstance(text, str)
        ]
        if status == "FAILED" and not errors:
            reason = str(job.failedReason or "failed")
            errors = [TaskError(exception_class_path="builtins.Exception", traceback=reason)]
        attempts = max(int(job.attemptsStarted or 0), int(job.attemptsMade or 0))
        started = mapping.moment(job.processedOn)
        finished = mapping.moment(job.finishedOn) if status in ("SUCCESSFUL", "FAILED") else None
        result: TaskResult[Any] = TaskResult(
            task=task.using(
                queue_name=queue,
                priority=mapping.task_priority(job.opts.get("priority")),
            ),
            id=str(job.id),
            status=TaskResultStatus[status],
            enqueued_at=mapping.moment(job.timestamp),
            started_at=started,
            last_attempted_at=started,
            finished_at=finished,
            args=args,
            kwargs=kwargs,
            backend=self.alias,
            errors=errors,
            worker_ids=[str(getattr(job, "processedBy", None) or "bullpen")] * attempts,
        )
        if status == "SUCCESSFUL":
            object.__setattr__(result, "_return_value", job.returnvalue)
        return result

    def get_result(self, result_id: str) -> TaskResult[Any]:
        return TASKS_LOOP.run(self._read(str(result_id)), self.timeout)

    async def aget_result(self, result_id: str) -> TaskResult[Any]:
        return await TASKS_LOOP.arun(self._read(str(result_id)), self.timeout)

    # ---- checks -------------------------------------------------------------------------

    def check(self, **kwargs: Any) -> Iterable[checks.CheckMessage]:  # type: ignore[override]
        yield from super().check(**kwargs)
        if not self.queues:
            yield checks.Error(
                f"TASKS[{self.alias!r}]['QUEUES'] is empty: name the BullMQ queues tasks use",
                hint="A result is found by its id in these queues, and the runner works them.",
                id="bullpen.E040",
            )
        bad = sorted(q for q in self.queues if not q or ":" in q)
        if bad:
            yield checks.Error(
                f"TASKS[{self.alias!r}]['QUEUES'] names {bad}: BullMQ refuses ':' in names",
                id="bullpen.E041",
            )
