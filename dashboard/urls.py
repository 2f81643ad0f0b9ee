"""Bullpen's URLs. Mount with ``path("queues/", include("dashboard.urls"))`` (any prefix works).

One table of each feature's own route list; every route keeps its name under ``bullpen:``
(reverse() names are part of the contract: templates, tests and host sites use them)."""

from __future__ import annotations

from django.urls import include, path

from dashboard.api.metrics import metrics
from dashboard.pages.not_found import not_found

app_name = "bullpen"

urlpatterns = [
    path("", include("dashboard.pages.urls")),  # the pages and their fragments
    path("", include("dashboard.auth.urls")),  # sign in, sign out, the audit log
    path("", include("dashboard.audit.urls")),  # the audit log's export
    path("", include("dashboard.search.urls")),
    path(
        "", include("dashboard.saved_searches.urls")
    ),  # searches kept under a name  # search, and acting on its matches
    path("", include("dashboard.bulk.urls")),  # bulk actions: following and cancelling them
    path("", include("dashboard.schedulers.urls")),  # every queue's job schedulers
    path("api/", include("dashboard.api.urls")),  # the JSON API: reads and actions
    path("metrics", metrics, name="metrics"),
    # Last: any other path under the mount gets the dashboard's 404 (JSON under api/).
    path("<path:rest>", not_found, name="not-found"),
]
