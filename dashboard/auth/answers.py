"""How a refused or failed request is answered: queue-layer errors as HTTP statuses, JSON error
bodies, the reason a principal is refused, and ``no-store`` once reads need credentials."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Coroutine
from typing import Any

from django.http import HttpRequest, JsonResponse
from django.http.response import HttpResponseBase
from django.utils.cache import patch_cache_control
from django.utils.translation import gettext_noop

from dashboard.auth.access import reads_are_open
from dashboard.auth.principal import Principal
from queues.errors import (
    ActionNotFound,
    BadParameter,
    BullpenError,
    Conflict,
    JobNotFound,
    QueueDataError,
    QueueNotFound,
    RedisUnavailable,
)
from queues.search.query.errors import QuerySyntaxError


class NotAllowed(BullpenError):
    """This user may view the queue but not act on it (QUEUE_ACCESS): 403."""


class HiddenQueue(QueueNotFound):
    """The action reached a queue this user may not view: answered with ``message``, as if it
    did not exist (404), and audited as a refusal naming ``queue``."""

    def __init__(self, message: str, queue: str) -> None:
        super().__init__(message)
        self.queue = queue


View = Callable[..., Coroutine[Any, Any, HttpResponseBase]]

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


def error_answer(error: BullpenError) -> JsonResponse:
    """``error`` as its status and JSON body; a query that cannot be read also says where
    (``position``, the character from 1) and what was ``expected`` there."""
    response = json_error(str(error), status_of(error))
    if isinstance(error, QuerySyntaxError):
        body = {"error": str(error), "position": error.position + 1, "expected": error.expected}
        response.content = json.dumps(body).encode()
    return response


def method_not_allowed(allowed: str) -> JsonResponse:
    response = json_error("Method not allowed", 405)
    response["Allow"] = allowed
    return response


def refusal_of(principal: Principal) -> tuple[str, int]:
    """Why a request is refused, in English (the API's words; pages translate them)."""
    if principal.bad_credentials:
        return gettext_noop("Wrong username or password"), 401
    if not principal.authenticated:
        return gettext_noop("Authentication required"), 401
    return gettext_noop("Forbidden: this user may not do that"), 403


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
