"""The admin's app list with Bullpen's dashboard as the first row of Bullpen's own box, so that
the admin index shows one "Bullpen" box, not a link box beside the audit log's."""

from __future__ import annotations

from typing import Any

from django import template
from django.urls import NoReverseMatch, reverse
from django.utils.translation import gettext

register = template.Library()

APP_LABEL = "bullpen"  # the audit log's app label, under which the admin lists it


@register.simple_tag
def with_dashboard_row(app_list: Any) -> list[dict[str, Any]] | None:
    """``app_list`` with the dashboard's row in Bullpen's box; None when the list has no such
    box (the user may not see the audit log) or the site does not route Bullpen."""
    try:
        url = reverse("bullpen:overview")
    except NoReverseMatch:
        return None
    apps = [dict(app) for app in app_list or []]
    for app in apps:
        if app.get("app_label") == APP_LABEL:
            row = {
                "name": gettext("Queues dashboard"),
                "object_name": "Dashboard",
                "admin_url": url,
                "view_only": True,
            }
            app["models"] = [row, *app.get("models", [])]
            return apps
    return None
