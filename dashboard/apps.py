from __future__ import annotations

from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "dashboard"
    label = "bullpen"
    verbose_name = "Bullpen"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Importing the module registers the system checks (what a host site forgot).
        from dashboard import checks  # noqa: F401
