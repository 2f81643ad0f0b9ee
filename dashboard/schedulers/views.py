"""``schedulers/`` and ``api/schedulers/``: the job schedulers of every queue the user may view.

Both read through queues/schedulers/everywhere.py (two round trips per connection). Acting on a
scheduler (run now, edit, remove) goes to the queue's own scheduler routes, which check the
caller again; the page only offers them where the user may act on that queue.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from dashboard.auth.guards import api_view, page_view
from dashboard.auth.principal import from_request
from dashboard.auth.queue_access import for_request
from dashboard.auth.viewer import can_act_on, viewer_kind
from dashboard.forms.answer import valid
from dashboard.forms.schedulers import AllSchedulersForm
from queues.reads.discovery import discovered
from queues.schedulers.everywhere import Schedulers, all_schedulers
from queues.schedulers.rows import ORDERS, ordered


async def _read(request: HttpRequest) -> tuple[Schedulers, str]:
    order = valid(AllSchedulersForm(request.GET)).cleaned_data["order"]
    access = await for_request(request)
    listed = await discovered()
    refs = access.visible(sorted(listed.queues), lambda ref: ref.slug)
    found = await all_schedulers(refs)
    found.unreadable.update(listed.unreachable)
    found.rows = ordered(found.rows, order)
    return found, order


@api_view
async def all_schedulers_api(request: HttpRequest) -> JsonResponse:
    found, _order = await _read(request)
    body: dict[str, Any] = {"schedulers": found.rows}
    if found.unreadable:
        body["unreadable"] = [
            {"connection": name, "error": error} for name, error in found.unreadable.items()
        ]
    return JsonResponse(body)


@page_view
async def all_schedulers_page(request: HttpRequest) -> HttpResponse:
    found, order = await _read(request)
    kind = await viewer_kind(await from_request(request))
    access = await for_request(request)
    for row in found.rows:
        row["can_act"] = can_act_on(kind, row["queue"]) and access.may_operate(row["queue"])
        row["page_queue"] = {"slug": row["queue"]}  # what the shared edit form links to
    return render(
        request,
        "bullpen/schedulers.html",
        {
            "schedulers": found.rows,
            "unreadable": found.unreadable,
            "order": order,
            "orders": ORDERS,
            "overdue": sum(1 for row in found.rows if row["overdue"]),
        },
    )
