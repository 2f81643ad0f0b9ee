"""The audit log's export (its page is beside signing in: dashboard/auth/urls.py)."""

from __future__ import annotations

from django.urls import path

from dashboard.audit import export_api

urlpatterns = [
    path("api/audit/", export_api.audit_api, name="api-audit"),
]
