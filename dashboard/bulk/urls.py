"""Bulk actions running in the background, and the question asked before cleaning."""

from __future__ import annotations

from django.urls import path

from dashboard.bulk import api, clean_question
from dashboard.pages.converters import ACTION_ID, QUEUE

urlpatterns = [
    path("api/actions/", api.actions_list, name="api-actions"),
    path(f"api/actions/{ACTION_ID}/", api.action_status, name="api-action"),
    path(f"api/actions/{ACTION_ID}/cancel/", api.cancel_action, name="cancel-action"),
    path(f"q/{QUEUE}/clean/", clean_question.clean_confirm, name="clean-question"),
]
