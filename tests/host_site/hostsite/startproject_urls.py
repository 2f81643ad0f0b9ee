"""The URLs of a fresh ``startproject`` that mounts Bullpen as docs/mounting.md says: the admin
and Bullpen, no login page of the site's own (the settings point LOGIN_URL at the admin's)."""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("ops/queues/", include("dashboard.urls")),
]
