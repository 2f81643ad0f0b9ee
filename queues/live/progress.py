"""Progress of jobs, from the events themselves (no Redis read): to a watched queue's page and
to each watched job's page."""

from __future__ import annotations

from typing import Any

from queues.config.redact_setting import configured_rules
from queues.live import protocol as live_protocol
from queues.live.events import QueueEvent
from queues.live.outbox import Outbox
from queues.live.protocol import ProgressUpdate
from queues.live.watching import Watching
from queues.reads.keys import QueueRef
from queues.reads.redaction import redact_job


class ProgressUpdates:
    def __init__(self, outbox: Outbox, watching: Watching) -> None:
        self.outbox = outbox
        self.watching = watching
        # Queue → job id → (its latest progress, when the event was written in ms).
        self.pending: dict[QueueRef, dict[str, tuple[Any, int]]] = {}

    def take(self, ref: QueueRef, event: QueueEvent) -> None:
        if event.job_id:
            progress = event.progress()
            rules = configured_rules()
            if rules is not None and "progress" in rules.roots:
                # Progress comes straight from the event stream, not from a decoded job.
                shown = {"progress": progress}
                redact_job(shown, rules)
                progress = shown["progress"]
            self.pending.setdefault(ref, {})[event.job_id] = (progress, event.at_ms)

    def flush(self) -> None:
        pending, self.pending = self.pending, {}
        for ref, jobs in pending.items():
            updates: list[ProgressUpdate] = [
                {"id": job_id, "progress": value, "at": at} for job_id, (value, at) in jobs.items()
            ]
            if ref.slug in self.watching.queues:
                self.outbox.emit(
                    ("queue", ref.slug), live_protocol.progress_message(ref.slug, updates, "queue")
                )
            for update in updates:
                if (ref.slug, update["id"]) in self.watching.jobs:
                    self.outbox.emit(
                        ("job", ref.slug, update["id"]),
                        live_protocol.progress_message(ref.slug, [update], "job"),
                    )
