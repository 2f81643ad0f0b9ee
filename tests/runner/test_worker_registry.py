"""Registering handlers and checking their options: mistakes fail at start-up, with a message
that says how to fix them."""

from __future__ import annotations

import math
import subprocess
import sys
from typing import Any

import pytest
from django.test import override_settings

from queues.runner import (
    Limiter,
    QueueOptions,
    Registry,
    RunnerConfigError,
    TenantLimit,
    business_job_id,
)
from queues.runner.job_ids import split_job_id
from queues.runner.registry import load_handlers
from queues.runner.supervisor import WorkerRunner
from tests.support.worker_fixtures import ROOT


async def payload_only(payload: Any) -> None:
    return None


def with_context(payload: Any, ctx: Any) -> None:
    return None


def test_the_safe_defaults() -> None:
    options = QueueOptions()
    assert options.concurrency == 5
    assert options.job_options() == {
        "attempts": 5,
        "backoff": {"type": "exponential", "delay": 1000},
        "removeOnComplete": {"count": 1000},
        "removeOnFail": {"count": 5000},
    }
    worker = options.worker_options()
    assert worker["concurrency"] == 5
    assert "limiter" not in worker
    limited = options.with_changes(limiter=Limiter(max=50, duration_ms=1000))
    assert limited.worker_options()["limiter"] == {"max": 50, "duration": 1000}


@pytest.mark.parametrize(
    ("attempts", "message"),
    [
        (0, "attempts cannot be 0: BullMQ would silently treat it as 1"),
        (math.inf, "attempts cannot be infinite"),
        (-1, "attempts must be a whole number from 1 up"),
        (2.5, "attempts must be a whole number from 1 up"),
    ],
)
def test_attempts_must_be_finite_and_positive(attempts: Any, message: str) -> None:
    with pytest.raises(RunnerConfigError, match=message):
        QueueOptions(attempts=attempts)
    with pytest.raises(RunnerConfigError, match=f"Queue 'email': {message}"):
        Registry().register("email", payload_only, attempts=attempts)


@pytest.mark.parametrize(
    "bad",
    [
        {"concurrency": 0},
        {"backoff_ms": -5},
        {"lock_duration_ms": 10},
        {"limiter": "50/s"},
        {"per_tenant": 3},
        {"unknown_option": 1},
        {"timeout": 0},
        {"timeout": "30s"},
        {"timeout": True},
        {"timeout": math.inf},
    ],
)
def test_bad_options_from_settings_are_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(RunnerConfigError):
        QueueOptions.from_mapping(bad)


def test_options_from_settings() -> None:
    options = QueueOptions.from_mapping(
        {
            "concurrency": 2,
            "limiter": {"max": 10, "duration": 500},
            "per_tenant": {"max": 3, "duration": 1000, "field": "account"},
            "timeout": 2.5,
        }
    )
    assert options.timeout == 2.5
    assert QueueOptions().timeout is None  # no limit unless one is set
    assert options.limiter == Limiter(10, 500)
    assert options.per_tenant == TenantLimit(3, 1000, "account")
    with pytest.raises(RunnerConfigError):
        Limiter(max=0, duration_ms=1000)


def test_handler_signatures_are_checked() -> None:
    registry = Registry()
    assert not registry.register("a", payload_only).wants_context
    assert registry.register("b", with_context).wants_context
    assert registry.register("b2", lambda payload, ctx=None: None).wants_context
    assert registry.get("a").is_async and not registry.get("b").is_async
    with pytest.raises(RunnerConfigError, match=r"takes \(payload\) or \(payload, ctx\)"):
        registry.register("c", lambda a, b, c: None)
    with pytest.raises(RunnerConfigError, match="must take the job payload"):
        registry.register("d", lambda: None)
    with pytest.raises(RunnerConfigError, match="without ':'"):
        registry.register("a:b", payload_only)
    with pytest.raises(RunnerConfigError, match="already has handler"):
        registry.register("a", with_context)
    with pytest.raises(
        RunnerConfigError, match=r"No handler registered for queue 'z' \(registered: a, b"
    ):
        registry.get("z")


def test_handlers_named_in_settings_are_loaded() -> None:
    handlers = {
        "plain": "tests.runner.test_worker_registry.payload_only",
        "tuned": {"handler": "tests.runner.test_worker_registry.with_context", "concurrency": 9},
    }
    with override_settings(BULLPEN={"WORKER": {"handlers": handlers}}):
        registry = load_handlers(Registry())
    assert [spec.queue for spec in registry] == ["plain", "tuned"]
    assert registry.get("tuned").options.concurrency == 9
    assert registry.get("plain").path == "tests.runner.test_worker_registry.payload_only"
    with (
        override_settings(BULLPEN={"WORKER": {"handlers": {"x": "tests.nowhere.f"}}}),
        pytest.raises(RunnerConfigError, match=r"Cannot import handler 'tests\.nowhere\.f'"),
    ):
        load_handlers(Registry())
    with (
        override_settings(BULLPEN={"WORKER": {"modules": ["tests.no_such_module"]}}),
        pytest.raises(RunnerConfigError, match="Cannot import handler module"),
    ):
        load_handlers(Registry())


def test_the_runner_needs_handlers_and_leaves_the_dead_letter_queue_alone() -> None:
    with pytest.raises(RunnerConfigError, match="No job handlers registered"):
        WorkerRunner(Registry())
    registry = Registry()
    registry.register("dead-letter", payload_only)
    with pytest.raises(RunnerConfigError, match="nothing may consume it"):
        WorkerRunner(registry)


def test_business_job_ids() -> None:
    assert business_job_id("email", 42, "weekly", "2026-11-30") == "email.42.weekly.2026-11-30"
    # Node BullMQ refuses ':' in custom ids; separators inside parts cannot collide.
    tricky = business_job_id("sync", "a.b", "c:d", "50%")
    assert ":" not in tricky
    assert split_job_id(tricky) == ["sync", "a.b", "c:d", "50%"]
    assert business_job_id("x", "a.b", "c") != business_job_id("x", "a", "b.c")
    with pytest.raises(ValueError, match="at least one key"):
        business_job_id("email")


def test_the_command_reports_configuration_errors(redis_server: Any) -> None:
    result = subprocess.run(
        [sys.executable, "manage.py", "runqueueworker"],
        cwd=ROOT,
        env={
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "BULLPEN_TEST_REDIS_URL": redis_server.url,
            "BULLPEN_TEST_TASKS": "0",  # no Django tasks either
            "PATH": "/usr/bin:/bin",
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert "No job handlers registered" in result.stderr
