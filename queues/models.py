"""What Bullpen keeps of its own in the Django database for the queue layer."""

from __future__ import annotations

from django.db import models


class StorePauseReason(models.Model):
    """Why a queue of a PostgreSQL store was paused, as the person who paused it said: BullMQ's
    schema has no place for it and Bullpen never writes into it, and the database is there in
    every deployment, with or without a Redis (queues/reads/pause_reasons.py)."""

    connection = models.CharField(max_length=40)
    queue = models.CharField(max_length=1024)
    reason = models.CharField(max_length=500)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["connection", "queue"], name="one_reason_a_queue")
        ]

    def __str__(self) -> str:
        return f"{self.queue}@{self.connection}: {self.reason}"
