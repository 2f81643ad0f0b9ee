"""Following and cancelling bulk actions: ``api/actions/`` (the newest), ``api/actions/<id>/``
(one, while it runs and after), ``api/actions/<id>/cancel/`` (POST, like every action)."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from dashboard.auth.access import allows, write_check
from dashboard.auth.guards import HiddenQueue, NotAllowed, api_view, mutation_view
from dashboard.auth.principal import from_request
from dashboard.auth.queue_access import for_request
from dashboard.auth.viewer import can_act_on, kind_on_queue
from dashboard.bulk.launch import bar_of, ensure_runner, status_json
from dashboard.bulk.progress import bar_html
from dashboard.forms.answer import valid
from dashboard.forms.reads import MAX_LISTED, ActionsListForm
from queues.actions.result import ActionResult
from queues.bulk.recent_actions import recent_everywhere
from queues.bulk.store import store_of
from queues.errors import ActionNotFound, Conflict
from queues.redis.errors import translate_redis_errors


async def _may_act(request: HttpRequest) -> bool:
    """Who asked for an action is shown to those who may read the audit log."""
    return await allows(write_check(), await from_request(request))


@api_view
async def actions_list(request: HttpRequest) -> JsonResponse:
    # Asking about actions also starts this process's runner: after a restart, the actions a
    # stopped process left resume as soon as anyone looks.
    ensure_runner()
    found = valid(ActionsListForm(request.GET)).cleaned_data
    limit, queue = found["limit"], found["queue"]
    access = await for_request(request)
    narrowed = bool(queue) or access.restricted
    records = await recent_everywhere(MAX_LISTED if narrowed else limit)
    user = await _may_act(request)
    listed = [
        status_json(r, user=user)
        for r in records
        if (not queue or r.ref.slug == queue) and access.may_view(r.ref.slug)
    ]
    return JsonResponse({"actions": listed[:limit]})


@api_view
async def action_status(request: HttpRequest, action_id: str) -> JsonResponse:
    ensure_runner()
    async with translate_redis_errors():
        record = await store_of(action_id).load(action_id)
    if record is None or not (await for_request(request)).may_view(record.ref.slug):
        raise ActionNotFound(f"No action {action_id!r}")
    body = status_json(record, user=await _may_act(request))
    # The bar as the asking page shows it, in its language; Cancel for who may act on it.
    slug = record.ref.slug
    may_cancel = can_act_on(await kind_on_queue(request, slug), slug)
    body["html"] = bar_html(bar_of(record), can_act=may_cancel)
    return JsonResponse(body)


@mutation_view("cancel", queue_scoped=False)
async def cancel_action(request: HttpRequest, action_id: str) -> ActionResult:
    """Ask the runner to stop at its next batch; the jobs already moved stay moved."""
    store = store_of(action_id)
    principal = request.bullpen_principal  # type: ignore[attr-defined]
    async with translate_redis_errors():
        asked = await store.load(action_id)
    access = await for_request(request)
    if asked is not None and not access.may_view(asked.ref.slug):
        raise HiddenQueue(f"No action {action_id!r}", asked.ref.slug)
    if asked is not None and not access.may_operate(asked.ref.slug):
        raise NotAllowed(f"Forbidden: this user may only view {asked.ref.slug!r}")
    async with translate_redis_errors():
        outcome = await store.request_cancel(action_id, principal.username)
        record = await store.load(action_id)
    if outcome == 0 or record is None:
        raise ActionNotFound(f"No action {action_id!r}")
    if outcome < 0:
        raise Conflict(f"Action {action_id} has already ended ({record.state})")
    runner = ensure_runner(store.connection)
    if runner is not None:
        runner.poke()
    body = status_json(record)
    return ActionResult(
        "cancel",
        body["queue"],
        count=record.count,
        detail={
            "id": record.id,
            "kind": record.kind,
            "state": record.state,
            "cancelRequested": True,
            "statusUrl": body["statusUrl"],
        },
        status=202,
    )
