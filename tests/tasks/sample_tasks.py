"""Django tasks the tests enqueue; ``runqueueworker --module tests.tasks.sample_tasks`` runs
them."""

from __future__ import annotations

from typing import Any

from django_tasks import TaskContext, task


@task()
def add(a: int, b: int) -> int:
    return a + b


@task(queue_name="tasks-urgent", priority=50)
def describe(name: str, *, tags: list[str]) -> dict[str, Any]:
    return {"name": name, "tags": tags, "pair": (1, 2)}


@task()
def explode(text: str) -> None:
    raise ValueError(f"cannot handle {text}")


@task(takes_context=True)
def which_attempt(context: TaskContext, label: str) -> dict[str, Any]:
    return {"label": label, "attempt": context.attempt, "id": context.task_result.id}


@task()
async def shout(text: str) -> str:
    return text.upper()


def not_a_task(text: str) -> str:
    """A plain function in a listed module: a job naming it must not run it."""
    raise AssertionError("a job ran a function that is not a task")
