"""The audit log: every action and every refusal that reached an authenticated user."""

from __future__ import annotations

from django.db import models


class AuditEntry(models.Model):
    class Result(models.TextChoices):
        OK = "ok", "done"
        REFUSED = "refused", "refused"
        FAILED = "failed", "failed"

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    username = models.CharField(max_length=150, db_index=True)
    via = models.CharField(max_length=16, help_text="basic, session")
    remote_addr = models.CharField(max_length=64, blank=True)
    action = models.CharField(max_length=40)
    queue = models.CharField(max_length=300, blank=True, db_index=True)
    # The Redis the queue is on (BULLPEN["CONNECTIONS"]; "default" with REDIS_URL alone).
    connection = models.CharField(max_length=40, blank=True, db_index=True)
    job_ids = models.JSONField(default=list, blank=True)
    count = models.PositiveIntegerField(default=0)
    result = models.CharField(max_length=8, choices=Result.choices)
    status = models.PositiveSmallIntegerField()
    error = models.TextField(blank=True)
    detail = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "audit entry"
        verbose_name_plural = "audit log"
        # The permissions a host site grants its staff: read the queues, act on them.
        permissions = [
            ("view", "Can view Bullpen queues"),
            ("operate", "Can act on Bullpen queues"),
        ]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M:%S} {self.username} {self.action} {self.queue}"


class SavedSearch(models.Model):
    """A search kept under a name, shared by the site's users: what ``search/`` runs for it."""

    name = models.CharField(max_length=100)
    q = models.TextField()
    state = models.JSONField(default=list, blank=True)  # states; empty: every state
    queues = models.JSONField(default=list, blank=True)  # names and globs; empty: every queue
    owner = models.CharField(max_length=150, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "id"]
        verbose_name = "saved search"
        verbose_name_plural = "saved searches"

    def __str__(self) -> str:
        return f"{self.name}: {self.q}"
