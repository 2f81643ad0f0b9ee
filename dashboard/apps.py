from __future__ import annotations

from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "dashboard"
    label = "bullpen"
    verbose_name = "Bullpen"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.core.signals import request_started

        from dashboard.alerts.sender import start_with_requests

        # Importing the modules registers the system checks (what a host site forgot, whether
        # basic credentials are throttled, and dependency versions the fast paths were not
        # written against) and the receiver that closes a signed-out session's live sockets,
        # whichever process serves the sign-out.
        from dashboard.checks import mounting, throttle, versions  # noqa: F401
        from dashboard.live import socket_auth  # noqa: F401

        # Alerts are sent with no dashboard open: the first request starts the sender.
        request_started.connect(start_with_requests, dispatch_uid="bullpen-alerts")
