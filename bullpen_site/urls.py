from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest, HttpResponseRedirect
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView


def favicon(request: HttpRequest) -> HttpResponseRedirect:
    # Browsers ask for /favicon.ico on their own; pages name the icon with <link rel="icon">.
    # Not permanent: the static name changes with the icon's content hash.
    return HttpResponseRedirect(static("bullpen/favicon.svg"))


urlpatterns = [
    path("", RedirectView.as_view(url="/queues/", permanent=False)),
    path("favicon.ico", favicon),
    path("admin/", admin.site.urls),
    path("queues/", include("dashboard.urls")),
    # set_language, which the dashboard's language switcher posts to.
    path("i18n/", include("django.conf.urls.i18n")),
]
