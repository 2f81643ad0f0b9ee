"""The schedulers of every queue: the page and its API (each queue's own schedulers keep their
routes under ``q/<queue>/`` and ``api/queues/<queue>/``)."""

from __future__ import annotations

from django.urls import path

from dashboard.schedulers import views

urlpatterns = [
    path("schedulers/", views.all_schedulers_page, name="all-schedulers"),
    path("api/schedulers/", views.all_schedulers_api, name="api-all-schedulers"),
]
