"""Triage: find a job by id, failure groups, workers, alerts (API routes and page fragments)."""

from __future__ import annotations

import asyncio
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.urls import reverse

from dashboard.auth.guards import api_view, mutation_view, page_view
from dashboard.auth.queue_access import EVERYTHING, QueueAccess, for_request
from dashboard.auth.queue_lookup import queue_ref
from dashboard.auth.viewer import can_act_on, kind_on_queue
from dashboard.bulk import launch
from dashboard.forms.actions import GroupActionForm
from dashboard.forms.answer import action_input, valid
from dashboard.forms.reads import FailureGroupsForm, FindForm
from queues.actions.result import ActionResult
from queues.alerts.silences import read_holds
from queues.alerts.thresholds import read_alerts
from queues.config.settings import get_config
from queues.errors import BadParameter
from queues.failures.failure_groups import (
    FailureGroup,
    GroupReport,
    failure_groups,
    shared_failure_groups,
    with_trends,
)
from queues.reads.counts import summaries
from queues.reads.dead_letters import dead_letter_ref
from queues.reads.detail import job_live_view
from queues.reads.find import find_job
from queues.reads.keys import QueueRef
from queues.reads.store import on_redis
from queues.reads.workers import ClientListRefused, by_process, list_workers


async def alerts_by_queue(access: QueueAccess = EVERYTHING) -> dict[str, list[dict[str, Any]]]:
    """The alerts firing on every queue ``access`` may view."""
    found = access.visible(await summaries(), lambda summary: summary.ref.slug)
    firing = await read_alerts(found)
    return {ref.slug: [alert.as_json() for alert in firing[ref]] for ref in firing}


async def _find(request: HttpRequest, job_id: str) -> list[QueueRef]:
    """The queues the request's principal may view holding a job with this id."""
    access = await for_request(request)
    return access.visible(await find_job(job_id), lambda ref: ref.slug)


# ---- API ------------------------------------------------------------------------------------


@api_view
async def find_api(request: HttpRequest) -> JsonResponse:
    job_id = valid(FindForm(request.GET)).cleaned_data["id"]
    matches = await _find(request, job_id)
    return JsonResponse(
        {
            "id": job_id,
            "matches": [
                {"queue": ref.slug, "url": reverse("bullpen:job", args=[ref.slug, job_id])}
                for ref in matches
            ],
        }
    )


@api_view
async def groups_api(request: HttpRequest, queue: str) -> JsonResponse:
    ref = await queue_ref(queue)
    # A caller's own budget gets a scan of its own; pages share the default one's report.
    budget = valid(FailureGroupsForm(request.GET)).cleaned_data["budget"]
    if budget is None:
        report = await shared_failure_groups(ref)
    else:
        report = await with_trends(ref, await failure_groups(ref, budget))
    return JsonResponse(report.as_json())


@api_view
async def workers_api(request: HttpRequest, queue: str) -> JsonResponse:
    ref = await queue_ref(queue)
    try:
        workers = await list_workers([ref])
    except ClientListRefused as refused:
        return JsonResponse({"workers": [], "processes": [], "listed": False, "note": str(refused)})
    return JsonResponse(
        {
            "workers": [w.as_json() for w in workers],  # connections, as before
            "processes": [p.as_json() for p in by_process(workers)],
            "listed": True,
        }
    )


@api_view
async def alerts_api(request: HttpRequest) -> JsonResponse:
    """The alerts firing, and the silenced and acknowledged ones ("silenced until …, by …")."""
    access = await for_request(request)
    holds = await read_holds()
    held = [
        {"queue": queue, "rule": rule, **hold.as_json()}
        for (queue, rule), hold in sorted(holds.items())
        if access.may_view(queue)
    ]
    return JsonResponse({"alerts": await alerts_by_queue(access), "held": held})


async def _group(ref: QueueRef, signature: str) -> FailureGroup:
    report = await failure_groups(ref)
    group = next((g for g in report.groups if g.signature == signature), None)
    if group is None:
        raise BadParameter("No failure group with that signature (it may have been retried)")
    return group


# A group's jobs are fixed when the action is asked for and acted on by a bulk action (202).


@mutation_view("retry-group")
async def retry_group(request: HttpRequest, queue: str) -> ActionResult:
    return await _group_action(request, queue, "retry-group")


@mutation_view("remove-group")
async def remove_group(request: HttpRequest, queue: str) -> ActionResult:
    return await _group_action(request, queue, "remove-group")


async def _group_action(request: HttpRequest, queue: str, kind: str) -> ActionResult:
    ref = await queue_ref(queue)
    signature = valid(GroupActionForm(action_input(request))).cleaned_data["signature"]
    group = await _group(ref, signature)
    # The group as its card names it, kept in the audit log beside the bare signature.
    label = f"{group.reason} · {group.frame}" if group.frame else group.reason
    params = {"signature": signature, "group": label[:300], "ids": group.job_ids}
    return await launch.start(request, kind, ref, params)


# ---- pages ----------------------------------------------------------------------------------


@page_view
async def find_page(request: HttpRequest) -> HttpResponse:
    job_id = valid(FindForm(request.GET)).cleaned_data["id"].strip()
    matches = await _find(request, job_id) if job_id else []
    if len(matches) == 1:
        return HttpResponseRedirect(reverse("bullpen:job", args=[matches[0].slug, job_id]))
    # Several queues hold a job of that id: each one's state tells them apart.
    jobs = await asyncio.gather(*(job_live_view(ref, job_id) for ref in matches))
    found = [(ref, job["state"]) for ref, job in zip(matches, jobs, strict=True)]
    return render(request, "bullpen/find.html", {"job_id": job_id, "matches": found})


async def groups_in_time(ref: QueueRef) -> GroupReport | None:
    """The failure groups the failed tab shows above its list, when ready within
    ``FAILURE_GROUPS_WAIT`` (a cached report answers in a round trip; a scan of 10,000 failed
    jobs takes longer: bench/triage/groups_bench.py). None: the page shows without them and
    loads them into a closed fold, which leaves its list where it showed; the scan goes on,
    and the fold's request shares it."""
    wait = float(get_config()["FAILURE_GROUPS_WAIT"])
    if not on_redis([ref]) or wait <= 0:
        return None  # (not on Redis: the fold says they need it)
    try:
        return await asyncio.wait_for(shared_failure_groups(ref), wait)
    except TimeoutError:
        return None


@page_view
async def groups_fragment(request: HttpRequest, queue: str) -> HttpResponse:
    ref = await queue_ref(queue)
    if not on_redis([ref]):
        return render(request, "bullpen/_needs_redis.html", {"feature": "groups"})
    report = await shared_failure_groups(ref)
    kind = await kind_on_queue(request, ref.slug)
    return render(
        request,
        "bullpen/_groups.html",
        {"report": report, "queue": {"slug": ref.slug}, "can_act": can_act_on(kind, ref.slug)},
    )


@page_view
async def workers_fragment(request: HttpRequest, queue: str) -> HttpResponse:
    ref = await queue_ref(queue)
    try:
        connections = await list_workers([ref])
        refused = ""
    except ClientListRefused as error:
        connections, refused = [], str(error)
    workers = by_process(connections)
    return render(
        request,
        "bullpen/_workers.html",
        {
            "refused": refused,
            "workers": workers,
            "connections": len(connections),
            "unnamed": any(not w.worker_name for w in workers),
            "dead_letters": ref == dead_letter_ref(ref.connection),
        },
    )
