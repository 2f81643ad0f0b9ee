"""Saved searches' API."""

from __future__ import annotations

from django.urls import path

from dashboard.saved_searches import views

urlpatterns = [
    path("api/saved-searches/", views.saved_searches, name="api-saved-searches"),
    path(
        "api/saved-searches/<int:search_id>/delete/",
        views.delete,
        name="delete-saved-search",
    ),
]
