"""The live renderer's message shapes, rendered with the pages' own partials."""

from __future__ import annotations

from django.utils import translation

from dashboard.live import render as live_render
from queues.live.protocol import ProgressMessage, bulk_message


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


def test_a_bulk_message_carries_its_bar_in_the_sockets_language() -> None:
    message = bulk_message(
        "mail<b>",
        "retry-all",
        1234,
        5000,
        action_id="a1",
        state="running",
    )
    with translation.override("de"):
        operator = live_render.render(message, "operator")
    assert (operator["done"], operator["total"], operator["state"]) == (1234, 5000, "running")
    assert "Alle erneut versuchen: 1.234 von 5.000" in operator["html"]
    assert 'value="25"' in operator["html"] and 'data-queue="mail&lt;b&gt;"' in operator["html"]
    assert ">Abbrechen</button>" in operator["html"]
    # A reader's bar has no Cancel; operators and readers are two renderings, not one per page.
    reader = live_render.render(message, "reader")
    assert "bulk-cancel" not in reader["html"]
    assert live_render.variant(message, "operator") != live_render.variant(message, "reader")


def test_a_finished_bulk_message_says_its_end_in_the_sockets_language() -> None:
    texts = {"en": "5 jobs retried", "de": "5 Jobs erneut versucht"}
    message = bulk_message(
        "mail", "retry-all", 5, 5, action_id="a1", state="done", text=texts["en"], texts=texts
    )
    with translation.override("de"):
        german = live_render.render(message, "operator")
    with translation.override("fr"):  # a language the runner did not say it in: its default
        french = live_render.render(message, "operator")
    assert german["text"] == "5 Jobs erneut versucht" and "texts" not in german
    assert ">5 Jobs erneut versucht</span>" in german["html"]
    assert "bulk-cancel" not in german["html"]  # nothing left to cancel
    assert french["text"] == "5 jobs retried"
