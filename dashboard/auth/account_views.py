"""Signing in and out (basic credentials, or the host site's login) and the audit log page."""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth import alogout
from django.contrib.auth.views import redirect_to_login
from django.core.paginator import Page, Paginator
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render, resolve_url
from django.urls import NoReverseMatch, reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext
from django.views.decorators.csrf import csrf_protect

from dashboard.audit.visible import visible_entries
from dashboard.auth import basic_auth
from dashboard.auth.access import allows, write_check
from dashboard.auth.guards import REALM, page_view
from dashboard.auth.principal import from_request
from dashboard.forms.answer import valid
from dashboard.forms.reads import AuditForm
from dashboard.models import AuditEntry
from dashboard.pages import notices


def _safe_next(request: HttpRequest) -> str:
    target = request.POST.get("next") or request.GET.get("next") or reverse("bullpen:overview")
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
        {
            "status": 401,
            "message": gettext("Sign in with the dashboard's credentials to act on queues."),
        },
        status=401,
    )
    response["WWW-Authenticate"] = REALM
    return response


def logout_url() -> str:
    """Where the Sign out button of a session user posts: ``settings.LOGOUT_URL`` (a path or
    a URL name) when the site sets it, else the URL named ``logout`` (``django.contrib.auth.urls``),
    else the admin's, else Bullpen's own sign-out route."""
    configured = getattr(settings, "LOGOUT_URL", None)
    if configured:
        return resolve_url(configured)
    for name in ("logout", "admin:logout"):
        try:
            return reverse(name)
        except NoReverseMatch:
            continue
    return reverse("bullpen:sign-out")


@csrf_protect
async def sign_out(request: HttpRequest) -> HttpResponse:
    """GET: forget basic credentials. The page's script asks this URL with wrong credentials;
    a browser that retries with them after the 401 below remembers them for this realm in
    place of the right ones, and its later requests are anonymous. Asked without those (a
    visit without the script), the 401 makes the browser drop the credentials it sent.

    POST: sign a session user out (when the site has no logout view of its own).
    """
    if request.method == "POST":
        if hasattr(request, "session"):  # a site without sessions has nobody to sign out
            await alogout(request)
        return HttpResponseRedirect(_safe_next(request))
    if request.method not in ("GET", "HEAD"):
        response = HttpResponse("Method not allowed", status=405, content_type="text/plain")
        response["Allow"] = "GET, HEAD, POST"
        return response
    principal = await from_request(request)
    response = render(
        request,
        "bullpen/error.html",
        {
            "status": 401,
            "message": gettext(
                "Signed out. A browser may keep basic credentials until it is closed."
            ),
        },
        status=401,
    )
    if basic_auth.configured() and not principal.bad_credentials:
        # No credentials, or the right ones: challenge, so the browser tries (or drops) them.
        # (A site without basic-auth users never makes its visitors' browsers ask for any.)
        response["WWW-Authenticate"] = REALM
    notices.finish(request, response)
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
            {"status": 403, "message": gettext("Only operators may read the audit log.")},
            status=403,
        )
    entries = await visible_entries(request)
    found = valid(AuditForm(request.GET)).cleaned_data
    queue, user = found["queue"], found["user"]
    if queue:
        entries = entries.filter(queue=queue)
    if user:
        entries = entries.filter(username=user)
    paginator = Paginator(entries, 100)
    page = await _page(paginator, found["page"])
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
