from __future__ import annotations

from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "dashboard"
    label = "bullpen"
    verbose_name = "Bullpen"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.core.signals import request_started

        # Importing the modules registers the system checks (what a host site forgot, whether
        # basic credentials are throttled, and dependency versions the fast paths were not
        # written against) and the receiver that closes a signed-out session's live sockets,
        # whichever process serves the sign-out; and what the live readers run beside them
        # (the lists a view of every queue keeps, made before the first view asks).
        from dashboard.checks import (  # noqa: F401
            access_settings,
            mounting,
            postgres_store,
            redis_reachable,
            throttle,
            versions,
            websocket,
        )
        from dashboard.live import socket_auth  # noqa: F401
        from dashboard.services.lifecycle import start_with_requests

        # Where the server's start is not hooked, alerts are still sent with no dashboard
        # open: the first request starts the services.
        request_started.connect(start_with_requests, dispatch_uid="bullpen-services")
