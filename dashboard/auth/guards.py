"""Decorators every view goes through: access checks, read-only, cross-site defence, audit,
and queue-layer errors as HTTP statuses."""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import BadRequest, SuspiciousOperation
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.utils.cache import patch_cache_control
from django.utils.translation import gettext, gettext_noop
from django.views.decorators.csrf import csrf_exempt

from dashboard.api import request_body
from dashboard.audit import writer
from dashboard.auth import lockout, queue_access
from dashboard.auth.access import (
    allows,
    anyone,
    is_read_only,
    read_check,
    reads_are_open,
    write_check,
)
from dashboard.auth.principal import Principal, from_request
from dashboard.auth.same_origin import cross_site_reason, csrf_token_problem
from dashboard.pages import landing, notices
from dashboard.pages.queue_names import canonical, canonical_url
from queues.actions.result import ActionResult
from queues.errors import (
    ActionNotFound,
    BadParameter,
    BullpenError,
    Conflict,
    JobNotFound,
    OutcomeUnknown,
    QueueDataError,
    QueueNotFound,
    RedisUnavailable,
)
from queues.failures.failure_groups import forget_shared
from queues.reads.discovery import known
from queues.reads.keys import QueueRef
from queues.redis.errors import translate_redis_errors


class NotAllowed(BullpenError):
    """This user may view the queue but not act on it (QUEUE_ACCESS): 403."""


class HiddenQueue(QueueNotFound):
    """The action reached a queue this user may not view: answered with ``message``, as if it
    did not exist (404), and audited as a refusal naming ``queue``."""

    def __init__(self, message: str, queue: str) -> None:
        super().__init__(message)
        self.queue = queue


View = Callable[..., Coroutine[Any, Any, HttpResponseBase]]
Action = Callable[..., Coroutine[Any, Any, ActionResult]]

STATUS_OF: dict[type[BullpenError], int] = {
    BadParameter: 400,
    NotAllowed: 403,
    QueueNotFound: 404,
    JobNotFound: 404,
    ActionNotFound: 404,
    Conflict: 409,
    QueueDataError: 422,
    RedisUnavailable: 503,
}
REALM = 'Basic realm="Bullpen", charset="UTF-8"'


def status_of(error: BullpenError) -> int:
    return next((code for kind, code in STATUS_OF.items() if isinstance(error, kind)), 500)


def json_error(message: str, status: int) -> JsonResponse:
    response = JsonResponse({"error": message}, status=status)
    if status == 401:
        response["WWW-Authenticate"] = REALM
    return response


def _method_not_allowed(allowed: str) -> JsonResponse:
    response = json_error("Method not allowed", 405)
    response["Allow"] = allowed
    return response


def _refusal(principal: Principal) -> tuple[str, int]:
    """Why a request is refused, in English (the API's words; pages translate them)."""
    if principal.bad_credentials:
        return gettext_noop("Wrong username or password"), 401
    if not principal.authenticated:
        return gettext_noop("Authentication required"), 401
    return gettext_noop("Forbidden: this user may not do that"), 403


def unknown_queue(segment: str) -> QueueNotFound:
    """What a hidden queue answers: exactly what a queue that does not exist answers."""
    return QueueNotFound(f"Unknown queue {segment!r}")


def url_queue(request: HttpRequest, kwargs: dict[str, Any]) -> str | None:
    """The queue segment of the URL that was asked: the resolved URL's own arguments, which
    hold it however the view is called (a view that hands on to another passes it on as it
    likes); the view's keyword when no URL was resolved (a view called directly)."""
    match = request.resolver_match
    segment = match.kwargs.get("queue") if match is not None else None
    if segment is None:
        segment = kwargs.get("queue")
    return segment if isinstance(segment, str) else None


async def hidden_queue(request: HttpRequest, kwargs: dict[str, Any]) -> str | None:
    """The queue's one name when the URL names a queue this request's principal may not
    view (QUEUE_ACCESS), or one that does not exist; the refusal of a hidden one is audited
    for an authenticated principal."""
    segment = url_queue(request, kwargs)
    if segment is None or not queue_access.restricted():
        return None
    queue = canonical(segment) or segment
    if (await queue_access.for_request(request)).may_view(queue):
        # A queue that does not exist is answered here too, before the view checks its
        # input: were a missing queue's bad input answered 400 and a hidden one's 404, the
        # answers would tell them apart.
        return None if await _exists(queue) else queue
    principal = await from_request(request)
    if principal.authenticated:
        await _audit_hidden(request, principal, "view", queue)
    return queue


async def _exists(queue: str) -> bool:
    try:
        ref = QueueRef.from_slug(queue)
    except QueueNotFound:
        return False
    async with translate_redis_errors():
        return await known(ref)


async def _audit_hidden(
    request: HttpRequest, principal: Principal, action: str, queue: str
) -> None:
    """A refused look at (or action on) a hidden queue: 404 to the user, a row for operators."""
    match = request.resolver_match
    job_id = str(match.kwargs.get("job_id") or "") if match else ""
    await writer.record(
        request,
        principal,
        action,
        queue=queue,
        job_ids=[job_id] if job_id else [],
        status=404,
        error=writer.HIDDEN_QUEUE,
        refused=True,
        detail={"path": request.path[:300]},
    )


def kept_private(view: View) -> View:
    """Once reads need credentials, an answer is for its reader alone: ``no-store`` keeps it
    out of shared caches and of the browser's, where the next person at the machine (after
    *Sign out*) or a proxy would find it."""

    @functools.wraps(view)
    async def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        response = await view(request, *args, **kwargs)
        if not reads_are_open():
            patch_cache_control(response, no_store=True)
        return response

    return wrapper


def api_view(view: View) -> View:
    """GET-only JSON view: read check, then errors as ``{"error": ...}`` with their status."""

    @functools.wraps(view)
    async def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if request.method not in ("GET", "HEAD"):
            return _method_not_allowed("GET, HEAD")
        check = read_check()
        if check is not anyone or queue_access.restricted():
            # Open reads need nobody's credentials: none are checked (and hashed) for them,
            # unless what they may read depends on who they are.
            principal = await from_request(request)
            if principal.locked_out:
                return lockout.json_answer(request)
            if not await allows(check, principal):
                return json_error(*_refusal(principal))
        # Another spelling goes to the queue's one name whether or not it may be viewed: the
        # name alone tells nothing, and a hidden queue then answers as a missing one does.
        moved = canonical_url(request)
        if moved is not None:
            return HttpResponseRedirect(moved)
        try:
            if await hidden_queue(request, kwargs) is not None:
                raise unknown_queue(str(url_queue(request, kwargs)))
            async with translate_redis_errors():
                return await view(request, *args, **kwargs)
        except BullpenError as error:
            return json_error(str(error), status_of(error))
        except (SuspiciousOperation, BadRequest) as error:
            return json_error(*request_body.refusal(error))

    return kept_private(wrapper)


def page_view(view: View) -> View:
    """GET-only HTML view: read check (anonymous users go to the site's login), then errors
    rendered on the error page."""

    @functools.wraps(view)
    async def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if request.method not in ("GET", "HEAD"):
            response = HttpResponse("Method not allowed", status=405, content_type="text/plain")
            response["Allow"] = "GET, HEAD"
            return response
        principal = await from_request(request)
        if principal.locked_out:
            return lockout.page_answer(request)
        if not await allows(read_check(), principal):
            message, status = _refusal(principal)
            if status == 401 and not principal.bad_credentials:
                return redirect_to_login(request.get_full_path())
            response = render(
                request,
                "bullpen/error.html",
                {"message": gettext(message), "status": status},
                status=status,
            )
            if status == 401:
                response["WWW-Authenticate"] = REALM
            notices.finish(request, response)
            return response
        moved = canonical_url(request)
        if moved is not None:
            return HttpResponseRedirect(moved)
        request.bullpen_principal = principal  # type: ignore[attr-defined]
        page: HttpResponseBase
        try:
            if await hidden_queue(request, kwargs) is not None:
                raise unknown_queue(str(url_queue(request, kwargs)))
            async with translate_redis_errors():
                page = await view(request, *args, **kwargs)
        except BullpenError as error:
            status = status_of(error)
            page = render(
                request,
                "bullpen/error.html",
                {"message": str(error), "status": status},
                status=status,
            )
        notices.finish(request, page)
        return page

    return kept_private(wrapper)


def mutation_view(action: str, *, queue_scoped: bool = True) -> Callable[[Action], View]:
    """POST-only action: credentials (401), write permission (403), same-site origin and,
    for session users, Django's CSRF token (403), read-only (403); then the action, its
    errors as statuses, and an audit row for everything that reached an authenticated user.
    """

    def decorate(act: Action) -> View:
        @csrf_exempt  # the checks below replace Django's, so that `curl -u` works
        @functools.wraps(act)
        async def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            if request.method != "POST":
                return _method_not_allowed("POST")
            principal = await from_request(request)
            if principal.locked_out:
                return lockout.json_answer(request)
            if not principal.authenticated:
                response = json_error(*_refusal(principal))
                if request.headers.get("HX-Request"):
                    # A page's button: no browser login dialog popping out of a background
                    # request; the page says "Sign in to act" instead.
                    del response["WWW-Authenticate"]
                return response
            segment = (url_queue(request, kwargs) or "") if queue_scoped else ""
            # Every decision below is made on the queue's one name; an unknown prefix is left
            # to the action, which answers 404.
            queue = (canonical(segment) or segment) if segment else ""
            job_id = kwargs.get("job_id")

            async def done(
                status: int,
                error: str = "",
                result: ActionResult | None = None,
                refused: bool = False,
                about: str = "",
            ) -> None:
                await writer.record(
                    request,
                    principal,
                    action,
                    queue=result.queue or queue if result else (about or queue),
                    job_ids=result.job_ids if result else ([str(job_id)] if job_id else []),
                    count=result.count if result else 0,
                    status=status,
                    error=error,
                    detail=result.detail if result else None,
                    refused=refused,
                )

            unreadable = request_body.unreadable(request)
            if unreadable is not None:
                await done(unreadable[1], unreadable[0])
                return json_error(*unreadable)
            if queue != segment:
                # Another spelling of a queue (``bull:orders``): actions take only its own name.
                message = f"Unknown queue {segment!r}: its name in URLs is {queue!r}"
                await done(404, message)
                return json_error(message, 404)
            access = await queue_access.for_request(request)
            if queue and not access.may_view(queue):
                # Said as for a queue that does not exist; the audit row names it.
                message = str(unknown_queue(segment))
                await done(404, writer.HIDDEN_QUEUE, refused=True)
                return json_error(message, 404)
            if queue and access.restricted:
                # A queue that does not exist answers here, as a hidden one just did, before
                # the permission and input checks that would otherwise tell them apart.
                try:
                    exists = await _exists(queue)
                except BullpenError as error:
                    return json_error(str(error), status_of(error))
                if not exists:
                    message = str(unknown_queue(segment))
                    await done(404, message)
                    return json_error(message, 404)
            refusal: str | None = None
            if not await allows(write_check(), principal):
                refusal = "Forbidden: this user may not act on queues"
            elif queue and not access.may_operate(queue):
                refusal = f"Forbidden: this user may only view {queue!r}"
            else:
                refusal = cross_site_reason(request)
                if refusal is None and principal.via == "session":
                    refusal = csrf_token_problem(request)
                if refusal is None and is_read_only(queue or None):
                    refusal = "Read-only: actions are disabled" + (
                        f" for {queue!r}" if queue else ""
                    )
            if refusal is not None:
                await done(403, refusal)
                return json_error(refusal, 403)
            request.bullpen_principal = principal  # type: ignore[attr-defined]
            try:
                async with translate_redis_errors():
                    result = await act(request, *args, **kwargs)
            except BullpenError as error:
                status = status_of(error)
                message = str(error)
                if isinstance(error, OutcomeUnknown):
                    message = error.describe(action, str(job_id) if job_id else None)
                if isinstance(error, HiddenQueue):
                    await done(404, writer.HIDDEN_QUEUE, refused=True, about=error.queue)
                else:
                    await done(status, message)
                return json_error(message, status)
            forget_shared(result.queue or queue)  # the failed tab shows what the action did
            if not result.audited:
                await done(result.status, result=result)
            response = JsonResponse(result.as_json(), status=result.status)
            if result.status == 202:
                # Accepted: running in the background; the answer says where to follow it.
                if result.detail.get("statusUrl"):
                    response["Location"] = str(result.detail["statusUrl"])
                if request.headers.get("HX-Request"):
                    landing.answer_accepted(response)
            elif request.headers.get("HX-Request"):
                # A page's button: the same JSON, plus where to land and what to confirm there.
                landing.answer_page(request, response, result)
            return response

        return kept_private(wrapper)

    return decorate
