"""Every action (a POST) goes through the same steps, in this order, each with one job:

1. ``allow_method``: POST only (405);
2. ``identify_principal``: credentials (401, 429 when locked out);
3. ``read_body``: a body that reads (400, 413);
4. ``scope_queue``: the queue's one name, hidden and unknown queues alike (404);
5. ``check_permission``: WRITE_ACCESS, then QUEUE_ACCESS's operate (403);
6. ``check_same_site``: the request comes from this site, and a session's CSRF token (403);
7. ``check_read_only``: the dashboard or the queue is not read-only (403);
8. ``check_store``: the queue's store does the action (400 for one a PostgreSQL store does not
   do yet);

then ``perform`` (the action, its errors as statuses), ``audit`` (one row for everything that
reached an authenticated principal) and ``answer`` (the JSON, and for a page's button where to
land). A check says no with a :class:`Refusal`; the first one ends the request. The order is
part of the behaviour: a hidden queue must answer 404 before anything (a permission, the
input) tells it apart from a missing one, and nobody learns about queues before signing in.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from django.http import HttpRequest, JsonResponse
from django.http.response import HttpResponseBase
from django.views.decorators.csrf import csrf_exempt

from dashboard.api import request_body
from dashboard.audit import writer
from dashboard.auth import lockout, queue_access
from dashboard.auth.access import allows, is_read_only, write_check
from dashboard.auth.answers import (
    HiddenQueue,
    View,
    json_error,
    kept_private,
    method_not_allowed,
    refusal_of,
    status_of,
)
from dashboard.auth.principal import from_request
from dashboard.auth.queue_lookup import canonical, exists, unknown_queue, url_queue
from dashboard.auth.same_origin import cross_site_reason, csrf_token_problem
from dashboard.pages import landing
from dashboard.pages.htmx import htmx
from queues.actions.result import ActionResult
from queues.errors import BullpenError, OutcomeUnknown
from queues.failures.failure_groups import forget_shared
from queues.postgres.store_actions import POSTGRES_ACTIONS
from queues.reads.keys import QueueRef
from queues.redis import connections
from queues.redis.errors import translate_redis_errors

Action = Callable[..., Coroutine[Any, Any, ActionResult]]


@dataclass
class Attempt:
    """One POST on its way to an action: what every step reads."""

    request: HttpRequest
    action: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    queue_scoped: bool = True

    @cached_property
    def segment(self) -> str:
        """The queue as the URL spells it ("" for an action on no one queue)."""
        return (url_queue(self.request, self.kwargs) or "") if self.queue_scoped else ""

    @cached_property
    def queue(self) -> str:
        """The queue's one name: every decision is made on it. An unknown prefix is left as
        it was spelled, to the action, which answers 404."""
        return (canonical(self.segment) or self.segment) if self.segment else ""

    @property
    def job_id(self) -> str | None:
        job_id = self.kwargs.get("job_id")
        return str(job_id) if job_id else None


@dataclass(frozen=True)
class Refusal:
    """A step's no (or an action's error): what is answered, and the audit row it gets."""

    message: str
    status: int
    audited: bool = True  # False: nobody to name yet, or nothing an operator needs
    audit_error: str | None = None  # the row's error when it is not ``message``
    refused: bool = False  # the row marks a refused look at a hidden queue
    about: str = ""  # the queue the row names when it is not the URL's
    response: HttpResponseBase | None = None  # an answer of its own, else ``json_error``

    def answer(self) -> HttpResponseBase:
        return self.response or json_error(self.message, self.status)


Step = Callable[[Attempt], Awaitable[Refusal | None]]


async def allow_method(attempt: Attempt) -> Refusal | None:
    if attempt.request.method == "POST":
        return None
    return Refusal("Method not allowed", 405, audited=False, response=method_not_allowed("POST"))


async def identify_principal(attempt: Attempt) -> Refusal | None:
    request = attempt.request
    principal = await from_request(request)
    if principal.locked_out:
        answer = lockout.json_answer(request)
        return Refusal("Locked out", answer.status_code, audited=False, response=answer)
    if principal.authenticated:
        return None
    message, status = refusal_of(principal)
    response = json_error(message, status)
    if htmx(request):
        # A page's button: no browser login dialog popping out of a background request; the
        # page says "Sign in to act" instead.
        del response["WWW-Authenticate"]
    return Refusal(message, status, audited=False, response=response)


async def read_body(attempt: Attempt) -> Refusal | None:
    unreadable = request_body.unreadable(attempt.request)
    return None if unreadable is None else Refusal(*unreadable)


async def scope_queue(attempt: Attempt) -> Refusal | None:
    segment, queue = attempt.segment, attempt.queue
    if queue != segment:
        # Another spelling of a queue (``bull:orders``): actions take only its own name.
        return Refusal(f"Unknown queue {segment!r}: its name in URLs is {queue!r}", 404)
    if not queue:
        return None
    access = await queue_access.for_request(attempt.request)
    if not access.may_view(queue):
        # Said as for a queue that does not exist; the audit row names it.
        message = str(unknown_queue(segment))
        return Refusal(message, 404, audit_error=writer.HIDDEN_QUEUE, refused=True)
    if access.restricted:
        # A queue that does not exist answers here, as a hidden one just did, before the
        # permission and input checks that would otherwise tell them apart.
        try:
            found = await exists(queue)
        except BullpenError as error:
            return Refusal(str(error), status_of(error), audited=False)
        if not found:
            return Refusal(str(unknown_queue(segment)), 404)
    return None


async def check_permission(attempt: Attempt) -> Refusal | None:
    if not await allows(write_check(), await from_request(attempt.request)):
        return Refusal("Forbidden: this user may not act on queues", 403)
    queue = attempt.queue
    if queue and not (await queue_access.for_request(attempt.request)).may_operate(queue):
        return Refusal(f"Forbidden: this user may only view {queue!r}", 403)
    return None


async def check_same_site(attempt: Attempt) -> Refusal | None:
    request = attempt.request
    reason = cross_site_reason(request)
    if reason is None and (await from_request(request)).via == "session":
        reason = csrf_token_problem(request)
    return None if reason is None else Refusal(reason, 403)


async def check_read_only(attempt: Attempt) -> Refusal | None:
    queue = attempt.queue
    if not is_read_only(queue or None):
        return None
    return Refusal("Read-only: actions are disabled" + (f" for {queue!r}" if queue else ""), 403)


async def check_store(attempt: Attempt) -> Refusal | None:
    queue = attempt.queue
    if not queue or attempt.action in POSTGRES_ACTIONS or not connections.postgres_set():
        return None
    try:
        ref = QueueRef.from_slug(queue)
    except BullpenError:
        return None  # the action says the queue is unknown
    if not connections.is_postgres(ref.connection):
        return None
    message = f"{attempt.action} is not available yet for {queue!r}: a queue on a PostgreSQL store"
    return Refusal(message, 400)


CHECKS: tuple[Step, ...] = (
    allow_method,
    identify_principal,
    read_body,
    scope_queue,
    check_permission,
    check_same_site,
    check_read_only,
    check_store,
)


async def perform(attempt: Attempt, act: Action, args: tuple[Any, ...]) -> ActionResult | Refusal:
    """The action itself; its errors become a refusal with their status."""
    request = attempt.request
    request.bullpen_principal = await from_request(request)  # type: ignore[attr-defined]
    try:
        async with translate_redis_errors():
            result = await act(request, *args, **attempt.kwargs)
    except BullpenError as error:
        message = str(error)
        if isinstance(error, OutcomeUnknown):
            message = error.describe(attempt.action, attempt.job_id)
        if isinstance(error, HiddenQueue):
            return Refusal(
                message,
                status_of(error),
                audit_error=writer.HIDDEN_QUEUE,
                refused=True,
                about=error.queue,
            )
        return Refusal(message, status_of(error))
    forget_shared(result.queue or attempt.queue)  # the failed tab shows what the action did
    return result


async def audit(attempt: Attempt, outcome: ActionResult | Refusal) -> None:
    """The audit row, unless the outcome needs none or the action wrote its own."""
    request = attempt.request
    if isinstance(outcome, ActionResult):
        if outcome.audited:
            return  # a background action's start, with its id
        await writer.record(
            request,
            await from_request(request),
            attempt.action,
            queue=outcome.queue or attempt.queue,
            job_ids=outcome.job_ids,
            count=outcome.count,
            status=outcome.status,
            detail=outcome.detail,
        )
    elif outcome.audited:
        await writer.record(
            request,
            await from_request(request),
            attempt.action,
            queue=outcome.about or attempt.queue,
            job_ids=[attempt.job_id] if attempt.job_id else [],
            status=outcome.status,
            error=outcome.message if outcome.audit_error is None else outcome.audit_error,
            refused=outcome.refused,
        )


def answer(attempt: Attempt, outcome: ActionResult | Refusal) -> HttpResponseBase:
    """The JSON answer; for a page's button (htmx) also where to land and what to confirm."""
    if isinstance(outcome, Refusal):
        return outcome.answer()
    request = attempt.request
    if outcome.status != 202 and htmx(request):
        # A page's button: the same JSON, plus where to land and what to confirm there.
        return landing.answer_page(request, outcome)
    response = JsonResponse(outcome.as_json(), status=outcome.status)
    if outcome.status == 202:
        # Accepted: running in the background; the answer says where to follow it.
        if outcome.detail.get("statusUrl"):
            response["Location"] = str(outcome.detail["statusUrl"])
        if htmx(request):
            landing.answer_accepted(response)
    return response


async def first_refusal(attempt: Attempt) -> Refusal | None:
    """The first check that says no, in the order of :data:`CHECKS`; None: all said yes."""
    for check in CHECKS:
        refusal = await check(attempt)
        if refusal is not None:
            return refusal
    return None


async def run(attempt: Attempt, act: Action, args: tuple[Any, ...] = ()) -> HttpResponseBase:
    """The checks in order, then the action; either way its audit row and its answer."""
    outcome = await first_refusal(attempt) or await perform(attempt, act, args)
    await audit(attempt, outcome)
    return answer(attempt, outcome)


def mutation_view(action: str, *, queue_scoped: bool = True) -> Callable[[Action], View]:
    """POST-only action through :data:`CHECKS`, then the action, audited and answered."""

    def decorate(act: Action) -> View:
        @csrf_exempt  # the checks replace Django's, so that `curl -u` works
        @functools.wraps(act)
        async def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            return await run(Attempt(request, action, kwargs, queue_scoped), act, args)

        return kept_private(wrapper)

    return decorate
