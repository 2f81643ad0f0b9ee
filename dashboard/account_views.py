"""Signing in (basic credentials, or the host site's login) and the audit log page."""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.contrib.auth.views import redirect_to_login
from django.core.paginator import Page, Paginator
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme

from dashboard import basic_auth
from dashboard.access import allows, write_check
from dashboard.guards import REALM, page_view
from dashboard.models import AuditEntry
from dashboard.principal import from_request


def _safe_next(request: HttpRequest) -> str:
    target = request.GET.get("next") or reverse("bullpen:overview")
    if url_has_allowed_host_and_scheme(target, {request.get_host()}, request.is_secure()):
        return target
    return reverse("bullpen:overview")


async def sign_in(request: HttpRequest) -> HttpResponse:
    """Asks the browser for the basic credentials (it remembers them for the actions)."""
    principal = await from_request(request)
    if principal.authenticated:
        return HttpResponseRedirect(_safe_next(request))
    if not basic_auth.configured():
        return redirect_to_login(_safe_next(request))
    response = render(
        request,
        "bullpen/error.html",
        {"status": 401, "message": "Sign in with the dashboard's credentials to act on queues."},
        status=401,
    )
    response["WWW-Authenticate"] = REALM
    return response


@page_view
async def audit_log(request: HttpRequest) -> HttpResponse:
    principal = await from_request(request)
    if not principal.authenticated or not await allows(write_check(), principal):
        if not principal.authenticated:
            return HttpResponseRedirect(
                reverse("bullpen:sign-in") + "?next=" + request.get_full_path()
            )
        return render(
            request,
            "bullpen/error.html",
            {"status": 403, "message": "Only operators may read the audit log."},
            status=403,
        )
    entries = AuditEntry.objects.all()
    queue, user = request.GET.get("queue", ""), request.GET.get("user", "")
    if queue:
        entries = entries.filter(queue=queue)
    if user:
        entries = entries.filter(username=user)
    paginator = Paginator(entries, 100)
    number = request.GET.get("page") or 1
    page = await _page(paginator, number)
    return render(
        request,
        "bullpen/audit.html",
        {"page": page, "rows": page.object_list, "queue": queue, "user": user},
    )


async def _page(paginator: Paginator[AuditEntry], number: str | int) -> Page[AuditEntry]:
    def load() -> Page[AuditEntry]:
        page = paginator.get_page(number)
        page.object_list = list(page.object_list)
        return page

    return await sync_to_async(load)()
