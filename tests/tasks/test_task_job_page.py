"""A task's job on Bullpen's pages: its job page says it is a Django task, with its path, its
arguments (escaped: job data is untrusted) and the status the Tasks API reads; other jobs say
nothing of the kind."""

from __future__ import annotations

import re

from django.test import AsyncClient
from django.utils import translation

from dashboard.live.render import JOB_PARTS
from queues.runner import Producer, Registry
from queues.tasks.runner import register_task_queues
from tests.support.worker_fixtures import Runners, wait_for
from tests.tasks import sample_tasks


def _task_section(html: str) -> str:
    found = re.search(r'<section [^>]*id="job-task".*?</section>', html, re.S)
    assert found is not None
    return found.group(0)


async def test_a_task_jobs_page_shows_the_task(client: AsyncClient, runners: Runners) -> None:
    result = await sample_tasks.describe.aenqueue("<b>bold</b>", tags=["x"])
    page = (await client.get(f"/queues/q/tasks-urgent/jobs/{result.id}/")).content.decode()
    section = _task_section(page)
    assert 'data-testid="task-path">tests.tasks.sample_tasks.describe</code>' in section
    assert (
        "tests.tasks.sample_tasks.describe(&quot;&lt;b&gt;bold&lt;/b&gt;&quot;, "
        "tags=[&quot;x&quot;])" in section
    )
    assert "<b>bold" not in page
    assert 'data-testid="task-status">Ready<' in section

    registry = Registry()
    register_task_queues(registry)
    await runners.start(registry, "tasks-urgent")

    async def done() -> bool:
        await result.arefresh()
        return bool(result.is_finished)

    await wait_for("the task to run", done)
    with translation.override("de"):
        german = await client.get(
            f"/queues/q/tasks-urgent/jobs/{result.id}/", headers={"accept-language": "de"}
        )
    section = _task_section(german.content.decode())
    assert 'data-testid="task-status">Erfolgreich<' in section
    assert "bullpen/_job_task_status.html" in JOB_PARTS  # live updates carry the status


async def test_other_jobs_show_no_task(client: AsyncClient) -> None:
    async with Producer(Registry()) as producer:
        plain = await producer.add("email", "send", {"args": [1], "kwargs": {}})
        dotted = await producer.add("email", "app.tasks.send", {"to": "x"})
    for job_id in (plain, dotted):
        page = (await client.get(f"/queues/q/email/jobs/{job_id}/")).content.decode()
        assert 'id="job-task"' not in page
        assert "Django task" not in page
