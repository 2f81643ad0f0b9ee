"""A queue's deduplication keys: the list (the API's JSON and the queue page's section, paged
by SCAN cursor) and their release (POST)."""

from __future__ import annotations

from django import forms
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from dashboard.auth.guards import api_view, mutation_view, page_view
from dashboard.auth.queue_lookup import queue_ref
from dashboard.auth.viewer import can_act_on, kind_on_queue
from dashboard.forms.answer import action_input, valid
from dashboard.forms.fields import TextField, WholeNumberField
from queues.actions import deduplication as release_keys
from queues.actions.result import ActionResult
from queues.reads.deduplication import DEFAULT_PAGE, MAX_PAGE, dedup_page, parse_cursor
from queues.reads.keys import QueueRef

SECTION_PAGE = 50  # keys the queue page's section shows at a time
MAX_CURSOR = 40  # digits of a SCAN cursor (an unsigned 64-bit number has 20)


class DedupPageForm(forms.Form):
    """Where the scan goes on from (the previous page's ``next``) and about how many keys."""

    cursor = TextField(longest=MAX_CURSOR)
    limit = WholeNumberField(default=DEFAULT_PAGE, low=1, high=MAX_PAGE)


@api_view
async def keys_api(request: HttpRequest, queue: str) -> JsonResponse:
    found = valid(DedupPageForm(request.GET)).cleaned_data
    ref = QueueRef.from_slug(queue)
    page = await dedup_page(ref, parse_cursor(found["cursor"]), found["limit"])
    return JsonResponse({"keys": [key.as_json() for key in page.keys], "next": page.next})


@page_view
async def section(request: HttpRequest, queue: str) -> HttpResponse:
    """The queue page's section: a page of keys, each with its job, its state and time left,
    orphans flagged; *Next* loads the following page in its place."""
    found = valid(DedupPageForm(request.GET)).cleaned_data
    ref = await queue_ref(queue)
    cursor = parse_cursor(found["cursor"])
    page = await dedup_page(ref, cursor, SECTION_PAGE)
    kind = await kind_on_queue(request, ref.slug)
    context = {
        "queue": {"slug": ref.slug, "name": ref.name},
        "keys": page.keys,
        "next": page.next,
        "first": cursor == 0,
        "orphans": sum(1 for key in page.keys if key.orphan),
        "can_act": can_act_on(kind, ref.slug),
    }
    return render(request, "bullpen/_deduplication.html", context)


@mutation_view("release-dedup")
async def release(request: HttpRequest, queue: str, dedup_id: str) -> ActionResult:
    return await release_keys.release(await queue_ref(queue), dedup_id)


@mutation_view("release-dedup-orphans")
async def release_orphans(request: HttpRequest, queue: str) -> ActionResult:
    cursor = valid(DedupPageForm(action_input(request))).cleaned_data["cursor"]
    return await release_keys.release_orphans(await queue_ref(queue), parse_cursor(cursor))
