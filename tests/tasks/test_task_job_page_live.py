"""In Chromium: a task's job page shows the task, and its status follows the job live when the
runner runs it (the same template renders the page and the live update)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import Browser, expect

from queues.runner import Registry
from queues.tasks.runner import register_task_queues
from tests.support.live_reads import server_watches
from tests.support.servers.live_server import LiveServer
from tests.support.worker_fixtures import Runners
from tests.tasks import sample_tasks

pytestmark = pytest.mark.browser


async def test_the_task_status_follows_the_job(
    bullpen_server: LiveServer, browser: Browser, runners: Runners, redis_client: Any
) -> None:
    result = await sample_tasks.add.aenqueue(20, 22)
    context = await browser.new_context()
    page = await context.new_page()
    await page.goto(f"{bullpen_server.url}/queues/q/default/jobs/{result.id}/")
    task = page.get_by_test_id("task")
    await expect(task.get_by_test_id("task-path")).to_have_text("tests.tasks.sample_tasks.add")
    await expect(task.get_by_test_id("task-call")).to_have_text(
        "tests.tasks.sample_tasks.add(20, 22)"
    )
    await expect(task.get_by_test_id("task-status")).to_have_text("Ready")
    await expect(page.locator("#live-status")).to_have_text("live")
    await page.evaluate("window.bullpenNoReload = true")
    await server_watches(redis_client, job=result.id)

    registry = Registry()
    register_task_queues(registry)
    await runners.start(registry, "default")
    await expect(task.get_by_test_id("task-status")).to_have_text("Successful", timeout=20000)
    await expect(page.get_by_test_id("returnvalue")).to_contain_text("42")
    assert await page.evaluate("window.bullpenNoReload") is True  # updated, not reloaded
