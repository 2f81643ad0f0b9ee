"""The live renderer's message shapes, rendered with the pages' own partials."""

from __future__ import annotations

from dashboard.live import render as live_render
from queues.live.protocol import ProgressMessage


def test_progress_sends_each_distinct_cell_once() -> None:
    message: ProgressMessage = {
        "type": "progress",
        "queue": "img",
        "scope": "queue",
        "updates": [
            {"id": "1", "progress": 50, "at": 10},
            {"id": "2", "progress": 50, "at": 11},
            {"id": "3", "progress": {"pct": 75, "step": "<b>"}, "at": 12},
        ],
    }
    rendered = live_render.render(message, "anonymous")
    cells = rendered["cells"]
    assert len(cells) == 2
    assert [u["cell"] for u in rendered["updates"]] == [0, 0, 1]
    assert [u["id"] for u in rendered["updates"]] == ["1", "2", "3"]
    assert 'value="50"' in cells[0]
    assert "<b>" not in cells[1]  # whatever a worker reports is escaped


def test_job_scope_progress_renders_the_job_pages_box() -> None:
    message: ProgressMessage = {
        "type": "progress",
        "queue": "img",
        "scope": "job",
        "updates": [{"id": "7", "progress": 30, "at": 10}],
    }
    rendered = live_render.render(message, "anonymous")
    assert 'id="job-progress"' in rendered["cells"][0]
