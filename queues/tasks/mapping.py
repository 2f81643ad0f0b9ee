"""How a Django task and its result map onto a BullMQ job. Pure: no Redis, no settings.

- the job's name is the task's dotted path, its data ``{"args": [...], "kwargs": {...}}``;
- a task's priority (-100 lowest … 100 highest) becomes BullMQ's (1 highest … 201 lowest), so
  that every task job of a queue is ordered by it (BullMQ's 0, "no priority", would put default
  tasks ahead of urgent ones);
- ``run_after`` becomes a delay from now;
- the job's state becomes the result's status: finished jobs are ``SUCCESSFUL`` or
  ``FAILED``, the running one ``RUNNING``, any other (waiting, delayed, prioritized, or back
  for another attempt) ``READY``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

# Django's bounds on a task's priority (django.tasks.base.TASK_MIN/MAX_PRIORITY).
TASK_MAX_PRIORITY = 100

STATUS_OF_STATE = {
    "completed": "SUCCESSFUL",
    "failed": "FAILED",
    "active": "RUNNING",
}

# The last line of a Python traceback: "ValueError: text" or "package.module.Error: text".
_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*)(?::|$)")


class NotTaskData(ValueError):
    """A job's data is not a task's arguments."""


def bullmq_priority(task_priority: int) -> int:
    return TASK_MAX_PRIORITY + 1 - int(task_priority)


def task_priority(bullmq_priority: int | None) -> int:
    """The task's priority back from the job's (0 or none: the default, 0)."""
    if not bullmq_priority:
        return 0
    return TASK_MAX_PRIORITY + 1 - int(bullmq_priority)


def delay_ms(run_after: datetime | None, now: datetime) -> int:
    if run_after is None:
        return 0
    return max(0, round((run_after - now).total_seconds() * 1000))


def job_data(args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    return {"args": list(args), "kwargs": dict(kwargs)}


def arguments_of(data: Any) -> tuple[list[Any], dict[str, Any]]:
    """A task job's arguments; anything else is refused (the data is not trusted)."""
    if not isinstance(data, dict) or set(data) != {"args", "kwargs"}:
        raise NotTaskData('A task job\'s data is {"args": [...], "kwargs": {...}}')
    args, kwargs = data["args"], data["kwargs"]
    if not isinstance(args, list) or not isinstance(kwargs, dict):
        raise NotTaskData('A task job\'s data is {"args": [...], "kwargs": {...}}')
    if not all(isinstance(key, str) for key in kwargs):
        raise NotTaskData("A task job's keyword arguments are named by text")
    return args, kwargs


def is_task_path(name: Any) -> bool:
    """Whether a job's name could be a task's: a dotted path of identifiers."""
    if not isinstance(name, str) or "." not in name:
        return False
    return all(part.isidentifier() for part in name.split("."))


def is_task_job(name: Any, data: Any) -> bool:
    """Whether a job looks like a task's: a dotted path as its name, arguments as its data."""
    if not is_task_path(name):
        return False
    try:
        arguments_of(data)
    except NotTaskData:
        return False
    return True


def status_of(state: str) -> str:
    return STATUS_OF_STATE.get(state, "READY")


def exception_path(traceback_text: str) -> str:
    """The dotted path of the exception a formatted traceback ends with (builtins unqualified
    in tracebacks, so qualified here); ``builtins.Exception`` when it cannot be told."""
    lines = [line for line in traceback_text.strip().splitlines() if line.strip()]
    if not lines:
        return "builtins.Exception"
    found = _EXCEPTION_LINE.match(lines[-1].strip())
    if found is None:
        return "builtins.Exception"
    name = found.group(1)
    return name if "." in name else f"builtins.{name}"


def moment(ms: Any) -> datetime | None:
    """A job's timestamp (ms since the epoch; 0 or none: not yet) as an aware datetime."""
    try:
        value = int(ms or 0)
    except (TypeError, ValueError):
        return None
    return datetime.fromtimestamp(value / 1000, tz=UTC) if value > 0 else None
