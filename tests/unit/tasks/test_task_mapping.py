"""How a Django task maps onto a BullMQ job and back, which job names resolve to a task, and
what the backend's checks say of its settings."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.test import override_settings
from django_tasks import task_backends

from queues.tasks import mapping
from queues.tasks.resolve import resolve_task
from tests.tasks import sample_tasks


def test_priorities_keep_their_order_and_come_back() -> None:
    assert mapping.bullmq_priority(100) == 1  # BullMQ's highest
    assert mapping.bullmq_priority(0) == 101
    assert mapping.bullmq_priority(-100) == 201
    for priority in (-100, -1, 0, 7, 100):
        assert mapping.task_priority(mapping.bullmq_priority(priority)) == priority
    assert mapping.task_priority(None) == 0
    assert mapping.task_priority(0) == 0


def test_run_after_is_a_delay_from_now() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert mapping.delay_ms(None, now) == 0
    assert mapping.delay_ms(now + timedelta(seconds=1.5), now) == 1500
    assert mapping.delay_ms(now - timedelta(hours=1), now) == 0  # past: at once


def test_states_become_statuses() -> None:
    assert mapping.status_of("completed") == "SUCCESSFUL"
    assert mapping.status_of("failed") == "FAILED"
    assert mapping.status_of("active") == "RUNNING"
    for state in ("waiting", "prioritized", "delayed", "paused", "waiting-children"):
        assert mapping.status_of(state) == "READY"


def test_exception_paths_from_tracebacks() -> None:
    builtin = 'Traceback (most recent call last):\n  File "x.py", line 1\nValueError: no\n'
    assert mapping.exception_path(builtin) == "builtins.ValueError"
    qualified = "Traceback ...\nmyapp.errors.Boom: it: broke\n\n"
    assert mapping.exception_path(qualified) == "myapp.errors.Boom"
    assert mapping.exception_path("KeyboardInterrupt") == "builtins.KeyboardInterrupt"
    assert mapping.exception_path("") == "builtins.Exception"
    assert mapping.exception_path("<not a traceback>") == "builtins.Exception"


def test_only_arguments_shaped_data_is_a_tasks() -> None:
    assert mapping.arguments_of({"args": [1], "kwargs": {"a": 2}}) == ([1], {"a": 2})
    for bad in (None, [], {"args": [1]}, {"args": {}, "kwargs": {}}, {"args": [], "kwargs": []}):
        with pytest.raises(mapping.NotTaskData):
            mapping.arguments_of(bad)
    with pytest.raises(mapping.NotTaskData):
        mapping.arguments_of({"args": [], "kwargs": {"a": 1}, "more": 1})
    assert mapping.is_task_job("app.tasks.send", {"args": [], "kwargs": {}})
    assert not mapping.is_task_job("send", {"args": [], "kwargs": {}})
    assert not mapping.is_task_job("app.tasks.send", {"to": "x"})
    assert not mapping.is_task_job("app.<b>.send", {"args": [], "kwargs": {}})
    assert mapping.is_task_path("app.tasks.send") and not mapping.is_task_path("send")
    assert not mapping.is_task_path(None) and not mapping.is_task_path("app..send")


def test_moments() -> None:
    assert mapping.moment(0) is None
    assert mapping.moment(None) is None
    assert mapping.moment("x") is None
    assert mapping.moment(1_000) == datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC)


def test_only_tasks_of_imported_modules_resolve() -> None:
    assert resolve_task("tests.tasks.sample_tasks.add") is sample_tasks.add
    assert resolve_task("tests.tasks.sample_tasks.not_a_task") is None  # a plain function
    assert resolve_task("os.system") is None
    assert resolve_task("tests.tasks.never_imported.run") is None
    assert resolve_task("add") is None
    assert resolve_task("tests.tasks.sample_tasks.__class__") is None


def test_the_backends_checks() -> None:
    backend = "queues.tasks.BullMQBackend"
    with override_settings(TASKS={"default": {"BACKEND": backend, "QUEUES": []}}):
        assert [m.id for m in task_backends["default"].check()] == ["bullpen.E040"]
    with override_settings(TASKS={"default": {"BACKEND": backend, "QUEUES": ["a:b", "ok"]}}):
        (found,) = task_backends["default"].check()
        assert found.id == "bullpen.E041" and "['a:b']" in found.msg
    assert list(task_backends["default"].check()) == []
