"""The MCP tools' answers: short plain text an assistant reads (counts, the top failure
groups, a job's reason and last stack frame), built from the same JSON the API answers. Pure.

Text, not markup: nothing here is rendered by a browser. Job fields arrive redacted
(``BULLPEN["REDACT"]``) and are cut to a few hundred characters.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from queues.failures.failure_groups import frame_of
from queues.tasks.mapping import is_task_job

FIELD_CHARS = 400  # of data, a return value or a reason
STATES_SHOWN = ("waiting", "active", "failed", "delayed", "prioritized", "completed")


def cut(text: str, most: int = FIELD_CHARS) -> str:
    text = " ".join(text.split()) if "\n" in text else text
    return text if len(text) <= most else text[: most - 1] + "…"


def as_json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def when(ms: Any) -> str:
    try:
        value = int(ms or 0)
    except (TypeError, ValueError):
        return "-"
    if value <= 0:
        return "-"
    return datetime.fromtimestamp(value / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def counts_line(counts: Mapping[str, Any]) -> str:
    shown = [f"{state} {int(counts.get(state) or 0)}" for state in STATES_SHOWN]
    return ", ".join(shown)


def queues_text(body: Mapping[str, Any]) -> str:
    queues = body.get("queues") or []
    lines = [f"{len(queues)} queue(s) of {body.get('matching', len(queues))} matching:"]
    for queue in queues:
        flags = [word for word, on in (("paused", queue.get("paused")),) if on]
        if queue.get("readOnly"):
            flags.append("read-only")
        tail = f" [{', '.join(flags)}]" if flags else ""
        lines.append(f"- {queue['name']}: {counts_line(queue.get('counts') or {})}{tail}")
    return "\n".join(lines)


def last_frame(stacktrace: Any) -> str:
    if not isinstance(stacktrace, list) or not stacktrace:
        return ""
    return frame_of([str(stacktrace[-1])])


def job_text(queue: str, job: Mapping[str, Any]) -> str:
    opts = job["opts"] if isinstance(job.get("opts"), dict) else {}
    attempts = f"{job.get('attemptsMade', 0)} of {opts.get('attempts', 1)}"
    lines = [
        f"Job {job.get('id')} in {queue}: {job.get('name')} — {job.get('state')}",
        f"attempts {attempts}; added {when(job.get('timestamp'))}, "
        f"started {when(job.get('processedOn'))}, finished {when(job.get('finishedOn'))}",
    ]
    if is_task_job(job.get("name"), job.get("data")):
        lines.append(f"Django task {job.get('name')}")
    lines.append(f"data: {cut(as_json(job.get('data')))}")
    if job.get("returnvalue") is not None:
        lines.append(f"return value: {cut(as_json(job.get('returnvalue')))}")
    if job.get("failedReason"):
        lines.append(f"failed reason: {cut(str(job['failedReason']))}")
    frame = last_frame(job.get("stacktrace"))
    if frame:
        lines.append(f"last stack frame: {cut(frame)}")
    if job.get("redacted"):
        lines.append("redacted: " + ", ".join(map(str, job["redacted"])))
    return "\n".join(lines)


def groups_text(queue: str, body: Mapping[str, Any], most: int) -> str:
    groups: Sequence[Mapping[str, Any]] = body.get("groups") or []
    lines = [
        f"{queue}: {body.get('totalFailed', 0)} failed jobs, {body.get('scanned', 0)} read, "
        f"{len(groups)} failure group(s)" + ("" if body.get("complete", True) else " (partial)")
    ]
    for group in groups[:most]:
        frame = f" at {cut(str(group['frame']), 160)}" if group.get("frame") else ""
        lines.append(
            f"- {group.get('count')} x {cut(str(group.get('reason')), 200)}{frame} "
            f"(last {when(group.get('lastSeen'))}, e.g. job {group.get('exampleId')}; "
            f"signature {group.get('signature')})"
        )
    if len(groups) > most:
        lines.append(f"… {len(groups) - most} more group(s)")
    return "\n".join(lines)


def _ms(value: Any) -> str:
    return "-" if value is None else f"{float(value):.0f} ms"


def history_text(queue: str, range_name: str, totals: Mapping[str, Any]) -> str:
    rate = totals.get("failure_rate")
    wait, run = totals.get("wait_ms") or {}, totals.get("run_ms") or {}
    return "\n".join(
        [
            f"{queue}, last {range_name}: {totals.get('completed', 0)} completed, "
            f"{totals.get('failed', 0)} failed"
            + ("" if rate is None else f" ({float(rate) * 100:.1f} % failure rate)")
            + f", {totals.get('retried', 0)} retried, {totals.get('stalled', 0)} stalled",
            f"wait p50 {_ms(wait.get('p50'))}, p95 {_ms(wait.get('p95'))}; "
            f"run p50 {_ms(run.get('p50'))}, p95 {_ms(run.get('p95'))}",
        ]
    )


def search_text(matches: Iterable[Mapping[str, Any]], summary: Mapping[str, Any]) -> str:
    found = list(matches)
    head = (
        f"{len(found)} match(es); {summary.get('scanned', 0)} jobs read in "
        f"{summary.get('queues', 0)} queue(s)"
    )
    if summary.get("truncated"):
        head += " (budget reached: not every job was read)"
    lines = [head]
    for match in found:
        lines.append(
            f"- {match['queue']} job {match['id']} ({match.get('state')}) {match.get('name')}: "
            f"{match.get('in')}: {cut(str(match.get('text', '')), 160)}"
        )
    return "\n".join(lines)
