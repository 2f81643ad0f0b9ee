"""Signing in and out, and the audit log (under the mount point)."""

from __future__ import annotations

from django.urls import path

from dashboard.auth import account_views

urlpatterns = [
    # No trailing slash: browsers then reuse the credentials for everything under the mount.
    path("sign-in", account_views.sign_in, name="sign-in"),
    path("sign-out", account_views.sign_out, name="sign-out"),
    path("audit/", account_views.audit_log, name="audit"),
]
