from __future__ import annotations

from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView

urlpatterns = [
    path("", RedirectView.as_view(url="/queues/", permanent=False)),
    path("admin/", admin.site.urls),
    path("queues/", include("dashboard.urls")),
]
