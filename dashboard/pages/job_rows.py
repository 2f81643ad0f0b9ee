"""Job rows outside a page load, rendered by the queue page's own row partial.

A row streamed into a page (a search result) then has exactly the cells, links and checkbox of
the same job's row in the list, for the same viewer.
"""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string

from dashboard.auth.viewer import ViewerKind, can_act_on
from queues.reads.keys import QueueRef


def row_html(ref: QueueRef, state: str, job: dict[str, Any], *, viewer: ViewerKind) -> str:
    """``job`` (a row as ``queues.reads.listing`` reads it) as the queue page's ``<tr>``."""
    return render_to_string(
        "bullpen/_job_row.html",
        {
            "job": job,
            "queue": {"slug": ref.slug, "state": state},
            "selectable": can_act_on(viewer, ref.slug),
        },
    )
