"""What htmx asked, as django-htmx reads it: ``request.htmx`` where the site installs
django-htmx's middleware (the standalone site does), the same details otherwise, since a host
site mounting Bullpen need only list the app."""

from __future__ import annotations

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


def htmx(request: HttpRequest) -> HtmxDetails:
    found = getattr(request, "htmx", None)
    return found if isinstance(found, HtmxDetails) else HtmxDetails(request)
