"""After an action from a page: where the person lands, and what that page confirms.

The page the action came from is reloaded, unless the action destroyed what it shows: a
removed job's page would answer 404, so removing a job lands on its queue's list at the tab it
was in; obliterating a queue lands on the overview; replaying a dead letter (which removes it)
lands on the job it became (what that page says is dashboard/pages/confirmations.py's). The
JSON answer stays the same for every client: htmx reads only django-htmx's client refresh or
client redirect header.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase
from django.urls import reverse
from django.utils.http import urlencode
from django_htmx.http import HttpResponseClientRedirect, HttpResponseClientRefresh, reswap

from dashboard.pages import notices
from dashboard.pages.confirmations import confirmation
from queues.actions.result import ActionResult
from queues.reads.keys import STATES


def destination(result: ActionResult) -> str | None:
    """Where to land when the current page no longer shows anything true; None: reload it."""
    detail = result.detail
    if result.action == "remove" and result.queue:
        url = reverse("bullpen:queue", args=[result.queue])
        state = detail.get("from")
        return f"{url}?{urlencode({'state': state})}" if state in STATES else url
    if result.action == "obliterate":
        return reverse("bullpen:overview")
    if result.action == "replay" and detail.get("queue") and detail.get("jobId"):
        return reverse("bullpen:job", args=[detail["queue"], detail["jobId"]])
    return None


def answer_accepted(response: HttpResponseBase) -> None:
    """A bulk action accepted from a page: the page stays where it is and follows it (the
    progress bar, then the confirmation, from static/bullpen/actions.js)."""
    reswap(response, "none")


def answer_page(request: HttpRequest, result: ActionResult) -> HttpResponse:
    """An htmx request succeeded: the same JSON as any client gets, the confirmation kept for
    the page landed on, and htmx told where that is."""
    body = JsonResponse(result.as_json(), status=result.status)
    url = destination(result)
    response = HttpResponseClientRefresh() if url is None else HttpResponseClientRedirect(url)
    response.content = body.content
    response["Content-Type"] = body["Content-Type"]
    response.status_code = body.status_code
    notices.add(request, response, confirmation(result))
    return response
