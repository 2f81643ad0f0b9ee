from __future__ import annotations

from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "dashboard"
    label = "bullpen"
    verbose_name = "Bullpen"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Importing the modules registers the system checks (what a host site forgot, and
        # dependency versions the fast paths were not written against) and the receiver that
        # closes a signed-out session's live sockets, whichever process serves the sign-out.
        from dashboard import checks, socket_auth, version_check  # noqa: F401
