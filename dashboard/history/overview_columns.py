"""The overview's optional history columns: each listed queue's p95 wait over the last hour
and how long its oldest waiting job has waited. Read only when a column is asked for, for the
queues of the page shown."""

from __future__ import annotations

import time
from typing import Any

from dashboard.history.scales import duration_text
from queues.history.read import oldest_waiting_ms, read_totals
from queues.reads.keys import QueueRef

# The range the p95 wait column covers.
WAIT_RANGE = "1h"


def _figure(value: float | None) -> dict[str, Any]:
    return {"value": value, "text": duration_text(value)}


async def add_history_columns(queues: list[dict[str, Any]], columns: tuple[str, ...]) -> None:
    """Sets ``queue["history"]`` on each queue dict for the ``columns`` asked for."""
    if not columns or not queues:
        return
    refs = [QueueRef(q["prefix"], q["name"], q["connection"]) for q in queues]
    now_ms = int(time.time() * 1000)
    oldest = await oldest_waiting_ms(refs, now_ms) if "oldest" in columns else {}
    totals = await read_totals(refs, WAIT_RANGE, now_ms) if "wait_p95" in columns else {}
    for queue, ref in zip(queues, refs, strict=True):
        found = totals.get(ref)
        wait = None if found is None else found.wait_ms.p95
        queue["history"] = {"wait_p95": _figure(wait), "oldest": _figure(oldest.get(ref))}
