from __future__ import annotations

from django.apps import AppConfig


class QueuesConfig(AppConfig):
    name = "queues"
    label = "bullpen_queues"
    verbose_name = "Bullpen queues"
    default_auto_field = "django.db.models.BigAutoField"
