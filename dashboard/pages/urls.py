"""The HTML pages and the fragments they load (under the mount point)."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, include, path

from dashboard.alerts import section as alert_section
from dashboard.api import worker_runner_views
from dashboard.deduplication import views as deduplication
from dashboard.health import views as health
from dashboard.history import views as history_pages
from dashboard.hygiene import views as hygiene
from dashboard.pages import charts, flow_views, triage, views
from dashboard.pages import switcher as go
from dashboard.pages.converters import JOB_ID, QUEUE

# q/<queue>/jobs/<job_id>/
job_pages: list[URLPattern | URLResolver] = [
    path("", views.job_page, name="job"),
    path("edit-data/", views.edit_data_form, name="edit-data-form"),
    path("flow/", flow_views.flow_fragment, name="flow-tree"),
]

# q/<queue>/
queue_pages: list[URLPattern | URLResolver] = [
    path("", views.queue_page, name="queue"),
    path("groups/", triage.groups_fragment, name="groups"),
    path("alerts/", alert_section.alerts_fragment, name="alerts"),
    path("workers/", triage.workers_fragment, name="workers"),
    path("throughput/", charts.throughput_fragment, name="throughput"),
    path("history/", history_pages.history_page, name="history"),
    path("history/section/", history_pages.history_section, name="history-section"),
    path("schedulers/", worker_runner_views.schedulers_fragment, name="schedulers"),
    path("deduplication/", deduplication.section, name="deduplication"),
    path("hygiene/", hygiene.section, name="hygiene"),
    path(f"jobs/{JOB_ID}/", include(job_pages)),
]

urlpatterns = [
    path("", views.overview, name="overview"),
    path("rows/", views.overview_rows, name="overview-rows"),
    path("find/", triage.find_page, name="find"),
    path("go/", go.go_to_queue, name="go"),
    path("go/suggestions/", go.suggestions, name="go-suggestions"),
    path(f"q/{QUEUE}/", include(queue_pages)),
    path("redis/", health.panel, name="redis-health"),
]
