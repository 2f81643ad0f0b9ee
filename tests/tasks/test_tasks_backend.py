"""Django tasks on BullMQ: enqueued through the Tasks API, run by the worker runner, read back
through the Tasks API, and checked through Node BullMQ's own reads."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from django_tasks import TaskResultStatus, task_backends
from django_tasks.exceptions import InvalidTaskError, TaskResultDoesNotExist

from queues.runner import Registry
from queues.tasks import BullMQBackend
from queues.tasks.runner import register_task_queues
from tests.support.peer import Peer
from tests.support.worker_fixtures import Runners, job_hash, wait_for
from tests.tasks import sample_tasks


def _registry() -> Registry:
    registry = Registry()
    assert register_task_queues(registry) == ["default", "tasks-urgent"]
    return registry


async def _finished(result: Any) -> None:
    async def done() -> bool:
        await result.arefresh()
        return bool(result.is_finished)

    await wait_for(f"task {result.id} to finish", done)


def test_the_configured_backend_is_bullmqs() -> None:
    assert isinstance(task_backends["default"], BullMQBackend)
    assert task_backends["default"].queues == {"default", "tasks-urgent"}
    assert list(task_backends["default"].check()) == []


async def test_a_task_is_a_job_node_reads_and_the_runner_runs(
    runners: Runners, redis_client: Any, peer: Peer
) -> None:
    result = await sample_tasks.add.aenqueue(2, 3)
    assert result.status == TaskResultStatus.READY
    assert result.enqueued_at is not None

    # Node BullMQ reads the job as any other: the task's path as its name, its arguments.
    seen = peer("inspect", "--queue", "default", "--ids", result.id)
    node_job = seen["details"][result.id]
    assert node_job["name"] == "tests.tasks.sample_tasks.add"
    assert node_job["data"] == {"args": [2, 3], "kwargs": {}}
    assert node_job["state"] == "prioritized"  # every task job carries its priority
    assert node_job["opts"]["priority"] == 101

    fetched = await sample_tasks.add.aget_result(result.id)
    assert fetched.status == TaskResultStatus.READY
    assert (fetched.args, fetched.kwargs) == ([2, 3], {})

    await runners.start(_registry(), "default")
    await _finished(result)
    assert result.status == TaskResultStatus.SUCCESSFUL
    assert result.return_value == 5
    assert result.started_at is not None and result.finished_at is not None
    assert result.attempts == 1
    assert peer("job-status", "--queue", "default", "--id", result.id)["state"] == "completed"
    assert json.loads(job_hash(redis_client, "default", result.id)["returnvalue"]) == 5


async def test_keyword_arguments_priority_context_and_async_tasks(runners: Runners) -> None:
    described = await sample_tasks.describe.aenqueue("x", tags=["a", "<b>"])
    urgent = await sample_tasks.add.using(priority=100).aenqueue(1, 1)
    context = await sample_tasks.which_attempt.aenqueue("ctx")
    shouted = await sample_tasks.shout.aenqueue("quiet")
    fetched = await sample_tasks.describe.aget_result(described.id)
    assert fetched.task.queue_name == "tasks-urgent"
    assert fetched.task.priority == 50
    assert (await sample_tasks.add.aget_result(urgent.id)).task.priority == 100

    await runners.start(_registry())
    for result in (described, urgent, context, shouted):
        await _finished(result)
        assert result.status == TaskResultStatus.SUCCESSFUL, result.errors
    assert described.return_value == {"name": "x", "tags": ["a", "<b>"], "pair": [1, 2]}
    assert urgent.return_value == 2
    assert context.return_value == {"label": "ctx", "attempt": 1, "id": context.id}
    assert shouted.return_value == "QUIET"


async def test_a_failing_task_reads_back_failed_with_its_error(runners: Runners) -> None:
    result = await sample_tasks.explode.aenqueue("this")
    await runners.start(_registry(), "default")
    await _finished(result)
    assert result.status == TaskResultStatus.FAILED
    assert [error.exception_class for error in result.errors] == [ValueError]
    assert "cannot handle this" in result.errors[0].traceback
    assert 'sample_tasks.py", line' in result.errors[0].traceback  # the task's own frame
    with pytest.raises(ValueError, match="Task failed"):
        _ = result.return_value


async def test_run_after_is_a_delay(runners: Runners, peer: Peer) -> None:
    later = timezone.now() + timedelta(minutes=10)
    result = await sample_tasks.add.using(run_after=later).aenqueue(1, 2)
    status = peer("job-status", "--queue", "default", "--id", result.id)
    assert status["state"] == "delayed"
    assert 590_000 <= status["delay"] <= 600_000
    await runners.start(_registry(), "default")
    result_now = await sample_tasks.add.aget_result(result.id)
    assert result_now.status == TaskResultStatus.READY


async def test_a_job_naming_no_task_fails_and_runs_nothing(
    runners: Runners, peer: Peer, redis_client: Any
) -> None:
    data = json.dumps({"args": ["x"], "kwargs": {}})
    named = [
        "tests.tasks.sample_tasks.not_a_task",  # a plain function of an imported module
        "os.system",  # a callable, not a task
        "tests.tasks.never_imported.run",  # a module nobody imported
    ]
    opts = json.dumps({"attempts": 3})  # refused for good: never tried again
    ids = [
        peer("add", "--queue", "default", "--name", n, "--data", data, "--opts", opts)["id"]
        for n in named
    ]
    await runners.start(_registry(), "default")

    async def all_failed() -> bool:
        return int(redis_client.zcard("bull:default:failed")) == len(ids)

    await wait_for("the jobs to fail", all_failed)
    for job_id, name in zip(ids, named, strict=True):
        fields = job_hash(redis_client, "default", job_id)
        assert fields["failedReason"] == (
            f"{name!r} is not a task of an imported module: list its module in "
            'BULLPEN["WORKER"]["modules"] or runqueueworker --module'
        )
        assert fields["atm"] == "1"


def test_sync_enqueue_and_bad_input() -> None:
    result = sample_tasks.add.enqueue(4, 5)
    assert sample_tasks.add.get_result(result.id).status == TaskResultStatus.READY
    with pytest.raises(TypeError, match="Unsupported type"):
        sample_tasks.add.enqueue(object(), 1)
    with pytest.raises(InvalidTaskError, match="not valid for backend"):
        sample_tasks.add.using(queue_name="elsewhere").enqueue(1, 1)
    with pytest.raises(TaskResultDoesNotExist):
        task_backends["default"].get_result("no-such-id")


async def test_runqueueworker_runs_the_tasks_of_a_listed_module(
    worker_processes: Any, redis_client: Any
) -> None:
    result = await sample_tasks.add.aenqueue(20, 22)
    worker = worker_processes("default", "--module", "tests.tasks.sample_tasks")
    await worker.wait_started()
    await _finished(result)
    assert result.return_value == 42
