"""Bullpen's URLs. Mount with ``path("queues/", include("dashboard.urls"))`` (any prefix works)."""

from __future__ import annotations

from django.urls import path, register_converter

from dashboard import api, views
from dashboard.converters import NameConverter

register_converter(NameConverter, "bullpen_name")

app_name = "bullpen"

urlpatterns = [
    path("", views.overview, name="overview"),
    path("q/<bullpen_name:queue>/", views.queue_page, name="queue"),
    path("q/<bullpen_name:queue>/jobs/<bullpen_name:job_id>/", views.job_page, name="job"),
    path("api/queues/", api.queues_list, name="api-queues"),
    path("api/queues/<bullpen_name:queue>/jobs/", api.jobs_list, name="api-jobs"),
    path("api/queues/<bullpen_name:queue>/jobs/<bullpen_name:job_id>/", api.job, name="api-job"),
]
