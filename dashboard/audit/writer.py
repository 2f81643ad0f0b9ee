"""Writing the audit log: requests, failed sign-ins, bulk actions (their start and their end),
and the alert notices sent to people."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from asgiref.sync import sync_to_async
from django.db import close_old_connections
from django.http import HttpRequest

from dashboard.auth.identity import Principal
from dashboard.models import AuditEntry
from queues.alerts.state import Notice
from queues.bulk.record import CANCELLED, DONE, FAILED, INTERRUPTED, ActionRecord
from queues.redis import connections

_MAX_IDS = 1000


async def record(
    request: HttpRequest,
    principal: Principal,
    action: str,
    *,
    queue: str = "",
    job_ids: list[str] | None = None,
    count: int = 0,
    status: int,
    error: str = "",
    detail: dict[str, Any] | None = None,
    refused: bool = False,
) -> None:
    """One row; ``refused``: a refusal whatever its status (a hidden queue answers 404)."""
    ids = list(job_ids or [])
    extra = dict(detail or {})
    if len(ids) > _MAX_IDS:
        extra["jobIdsOmitted"] = len(ids) - _MAX_IDS
        ids = ids[:_MAX_IDS]
    _add_forwarded_for(request, extra)
    if refused:
        result = AuditEntry.Result.REFUSED
    elif status < 300:
        result = AuditEntry.Result.OK
    elif status in (401, 403, 405, 409, 429):
        result = AuditEntry.Result.REFUSED
    else:
        result = AuditEntry.Result.FAILED
    await AuditEntry.objects.acreate(
        username=principal.username[:150],
        via=principal.via,
        remote_addr=_remote_addr(request),
        action=action,
        queue=queue[:300],
        connection=connection_of(queue),
        job_ids=ids,
        count=count,
        result=result,
        status=status,
        error=error[:2000],
        detail=extra,
    )


async def record_tool(
    principal: Principal,
    action: str,
    *,
    queue: str,
    job_ids: list[str] | None = None,
    count: int = 0,
    status: int,
    error: str = "",
    detail: dict[str, Any] | None = None,
) -> None:
    """One row for an MCP tool's action (no HTTP request behind it): ``via`` is the
    principal's (``mcp``), and what asked is named in ``detail.tool``."""
    ids = list(job_ids or [])[:_MAX_IDS]
    if status < 300:
        result = AuditEntry.Result.OK
    elif status in (401, 403, 404, 405, 409, 429):
        result = AuditEntry.Result.REFUSED
    else:
        result = AuditEntry.Result.FAILED
    await AuditEntry.objects.acreate(
        username=principal.username[:150],
        via=principal.via,
        remote_addr="",
        action=action,
        queue=queue[:300],
        connection=connection_of(queue),
        job_ids=ids,
        count=count,
        result=result,
        status=status,
        error=error[:2000],
        detail=dict(detail or {}),
    )


def connection_of(slug: str) -> str:
    """The connection a queue slug names (its default when it names none); "" for no queue."""
    return connections.split_slug(slug)[0] if slug else ""


# Why a look at a queue hidden from its user (QUEUE_ACCESS) was refused; the user is told 404.
HIDDEN_QUEUE = "Hidden queue: QUEUE_ACCESS does not let this user view it"


async def record_refused_watch(scope: dict[str, Any], principal: Principal, queue: str) -> None:
    """A websocket's watch of a queue hidden from its user (QUEUE_ACCESS): refused, as a
    refused page view is, though no HTTP request carries it."""
    client = scope.get("client") or ("",)
    await AuditEntry.objects.acreate(
        username=principal.username[:150],
        via=principal.via,
        remote_addr=str(client[0] or "")[:64],
        action="watch",
        queue=queue[:300],
        connection=connection_of(queue),
        result=AuditEntry.Result.REFUSED,
        status=404,
        error=HIDDEN_QUEUE,
        detail={"path": str(scope.get("path", ""))[:300]},
    )


SIGN_IN_FAILED = "sign-in-failed"


def record_sign_in_failure(request: HttpRequest, username: str, *, status: int) -> None:
    """Wrong basic credentials (401), or the failure that locked their client out (429).

    Synchronous: it runs in the thread that checked the password, within the request.
    """
    extra: dict[str, Any] = {"path": request.path[:300]}
    _add_forwarded_for(request, extra)
    if status == 429:
        extra["lockedOut"] = True
    AuditEntry.objects.create(
        username=username[:150],
        via="basic",
        remote_addr=_remote_addr(request),
        action=SIGN_IN_FAILED,
        result=AuditEntry.Result.REFUSED,
        status=status,
        error="Too many failed sign-ins: locked out" if status == 429 else "Wrong credentials",
        detail=extra,
    )


def _remote_addr(request: HttpRequest) -> str:
    return str(request.META.get("REMOTE_ADDR", ""))[:64]


def _add_forwarded_for(request: HttpRequest, extra: dict[str, Any]) -> None:
    forwarded = request.headers.get("X-Forwarded-For")
    if forwarded:
        extra["forwardedFor"] = forwarded[:200]


# A bulk action's rows: (status, result) by phase, the start or how it ended.
_PHASES: dict[str, tuple[int, str]] = {
    "started": (202, AuditEntry.Result.OK),
    DONE: (200, AuditEntry.Result.OK),
    CANCELLED: (200, AuditEntry.Result.OK),
    INTERRUPTED: (500, AuditEntry.Result.FAILED),
    FAILED: (500, AuditEntry.Result.FAILED),
}


async def record_bulk_action(record: ActionRecord, phase: str) -> None:
    """The start (``phase="started"``) or the end (its final state) of a bulk action,
    written once each, even when a runner that crashed after writing it writes it again.

    It runs outside any request, in a thread of its own: Django's thread for a request's
    database calls is busy with (or gone with) that request.
    """
    await sync_to_async(_write_bulk_action, thread_sensitive=False)(record, phase)


def _write_bulk_action(record: ActionRecord, phase: str) -> None:
    close_old_connections()  # this thread's connection obeys CONN_MAX_AGE like a request's
    try:
        _write_once(record, phase)
    finally:
        close_old_connections()


def _write_once(record: ActionRecord, phase: str) -> None:
    if AuditEntry.objects.filter(detail__actionId=record.id, detail__phase=phase).exists():
        return
    status, result = _PHASES.get(phase, (500, AuditEntry.Result.FAILED))
    started = phase == "started"
    extra: dict[str, Any] = {
        "actionId": record.id,
        "phase": phase,
        **record.params,
        "total": record.total,
    }
    if not started:
        extra["refused"] = record.refused
        for key in ("results", "uncertain"):
            if record.detail.get(key):
                extra[key] = record.detail[key]
        if record.resumes:
            extra["resumes"] = record.resumes
    if record.requested_by.forwarded_for:
        extra["forwardedFor"] = record.requested_by.forwarded_for[:200]
    ids = [] if started else [str(i) for i in record.detail.get("jobIds") or []][:_MAX_IDS]
    AuditEntry.objects.create(
        username=record.requested_by.username[:150],
        via=record.requested_by.via[:16],
        remote_addr=record.requested_by.remote_addr[:64],
        action=record.kind,
        queue=record.ref.slug[:300],
        connection=record.ref.connection,
        job_ids=ids,
        count=0 if started else record.count,
        result=result,
        status=status,
        error="" if started else record.error[:2000],
        detail=extra,
    )


# Who an alert notice's row names: nobody asked for it, Bullpen sent it.
ALERT_SENDER = "bullpen-alerts"
# One alert row written at a time: a pass tells several notices at once, each in a thread of
# its own, and SQLite refuses a second writer ("table is locked") rather than wait for it.
_alert_rows = threading.Lock()


async def record_alert(
    notice: Notice, delivered: list[str], failed: dict[str, str], kept: Sequence[str] = ()
) -> None:
    """One row per round of a notice (firing or resolved): whom it reached, what failed, and
    which of those it is kept for, to be tried again."""
    await sync_to_async(_write_alert, thread_sensitive=False)(notice, delivered, failed, kept)


def _write_alert(
    notice: Notice, delivered: list[str], failed: dict[str, str], kept: Sequence[str]
) -> None:
    with _alert_rows:
        close_old_connections()  # as for bulk actions: a thread of its own, no request
        try:
            AuditEntry.objects.create(
                username=ALERT_SENDER,
                via="alerts",
                action="alert",
                queue=notice.queue[:300],
                connection=connection_of(notice.queue),
                result=AuditEntry.Result.FAILED if failed else AuditEntry.Result.OK,
                status=502 if failed else 200,
                error="; ".join(f"{target}: {error}" for target, error in failed.items())[:2000],
                detail={
                    "phase": notice.status,
                    "id": notice.id,
                    **notice.alert.as_json(),
                    "delivered": delivered,
                    "failed": sorted(failed),
                    "tryAgain": sorted(kept),
                },
            )
        finally:
            close_old_connections()
