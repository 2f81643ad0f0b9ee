"""Helpers that several test modules share.

Moved here from ``tests.runner.test_demo_handlers``.
"""

from __future__ import annotations

from typing import Any

from queues.runner.context import JobContext


class AsyncRecorder(JobContext):
    """The same for an async handler."""

    def __init__(self, attempt: int = 1) -> None:  # no job: nothing to call
        self.queue, self.job_id, self.name = "q", "7", "job"
        self.attempt, self.max_attempts = attempt, 5
        self.progressed: list[Any] = []
        self.lines: list[str] = []

    async def progress(self, value: Any) -> None:
        self.progressed.append(value)

    async def log(self, line: str) -> None:
        self.lines.append(line)
